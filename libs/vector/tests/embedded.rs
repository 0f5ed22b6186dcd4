//! The embedded store against the vector contract, and its durability.

use codectx_vector::embedded::{EXACT_UP_TO, EmbeddedVectorStore, Options, Probe};
use codectx_vector::{CollectionKey, VectorScope, VectorStore, contract, prepare};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedVectorStore::open(&dir.path().join("vectors.db")).unwrap();
    contract::run(&store).await;
}

/// One tenant's scope and a model's collection of `dimension`.
fn scope_and_model(model_hash: &str, dimension: u32) -> (VectorScope, CollectionKey) {
    (
        VectorScope {
            tenant_id: "org_a".into(),
            namespace: "org_a|gph_a".into(),
        },
        CollectionKey {
            model_hash: model_hash.into(),
            dimension,
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    let (scope, model) = scope_and_model("ab", 2);
    {
        let store = EmbeddedVectorStore::open(&path).unwrap();
        store
            .upsert(
                &scope,
                &model,
                &[("kept".into(), prepare(&[1.0, 0.0], &model).unwrap())],
            )
            .await
            .unwrap();
        store
            .upsert(
                &scope,
                &model,
                &[("gone".into(), prepare(&[0.0, 1.0], &model).unwrap())],
            )
            .await
            .unwrap();
        store.delete(&scope, &["gone".into()]).await.unwrap();
        // Dropped without any shutdown step, as a crash would.
    }
    let reopened = EmbeddedVectorStore::open(&path).unwrap();
    let hits = reopened
        .nearest(&scope, &model, &prepare(&[1.0, 0.0], &model).unwrap(), 10)
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.entity_id.as_str())
            .collect::<Vec<_>>(),
        vec!["kept"]
    );
}

/// xorshift: deterministic pseudo-random vectors without a dependency.
struct Random(u64);
impl Random {
    fn unit(&mut self, dimension: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dimension)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

/// Best `limit` ids of `live` by exact dot product (earlier insertion first on ties).
fn brute_force(live: &[(String, Vec<f32>)], query: &[f32], limit: usize) -> Vec<String> {
    let mut scored: Vec<(f32, usize)> = live
        .iter()
        .enumerate()
        .map(|(at, (_, v))| (v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>(), at))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, at)| live[at].0.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_read_the_floats_of_the_vector_as_it_is_now() {
    // Codes in memory, floats read back by offset: after replacements, deletions (which
    // move rows) and a reopen, every search still answers what a full float scan of the
    // live vectors answers, and a second store opened on the same file meanwhile (another
    // process) disturbs neither.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    let (scope, model) = scope_and_model("cd", 48);
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut live: Vec<(String, Vec<f32>)> = (0..600)
        .map(|n| (format!("v{n:04}"), random.unit(48)))
        .collect();
    let store = EmbeddedVectorStore::open(&path).unwrap();
    store.upsert(&scope, &model, &live).await.unwrap();
    // Replace every seventh vector and delete every eleventh.
    for n in (0..600).step_by(7) {
        live[n].1 = random.unit(48);
        store
            .upsert(&scope, &model, &[live[n].clone()])
            .await
            .unwrap();
    }
    let gone: Vec<String> = (0..600).step_by(11).map(|n| format!("v{n:04}")).collect();
    store.delete(&scope, &gone).await.unwrap();
    live.retain(|(id, _)| !gone.contains(id));
    let other = EmbeddedVectorStore::open(&path).unwrap();
    other
        .upsert(&scope, &model, &[("late".into(), random.unit(48))])
        .await
        .unwrap();
    let reopened = EmbeddedVectorStore::open(&path).unwrap();
    for query in 0..25 {
        let q = if query % 5 == 0 {
            live[query * 3].1.clone()
        } else {
            random.unit(48)
        };
        for limit in [1, 10, 30] {
            let expected = brute_force(&live, &q, limit);
            let got: Vec<String> = store
                .nearest(&scope, &model, &q, limit)
                .await
                .unwrap()
                .into_iter()
                .map(|h| h.entity_id)
                .collect();
            // Ties aside (random unit vectors have none), the ids in order.
            assert_eq!(got, expected, "query {query}, limit {limit}");
            let hits = reopened.nearest(&scope, &model, &q, limit).await.unwrap();
            let mut with_late = live.clone();
            with_late.push(("late".into(), Vec::new()));
            assert!(
                hits.iter()
                    .all(|h| with_late.iter().any(|(id, _)| *id == h.entity_id)),
                "reopened store answered a deleted vector"
            );
        }
    }
}

/// `count` unit vectors of `dimension` around `centres` pseudo-random centres (a spread
/// like an embedding model's: clusters, not uniform noise).
fn clustered(random: &mut Random, dimension: usize, centres: usize, count: usize) -> Vec<Vec<f32>> {
    let centres: Vec<Vec<f32>> = (0..centres).map(|_| random.unit(dimension)).collect();
    (0..count)
        .map(|n| {
            let noise = random.unit(dimension);
            let mixed: Vec<f32> = centres[(n * 7919) % centres.len()]
                .iter()
                .zip(&noise)
                .map(|(c, e)| c + 0.45 * e)
                .collect();
            let norm = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
            mixed.into_iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// Share of the exact answers' ids the store's own answers hold, over `queries`.
fn recall(
    store: &EmbeddedVectorStore,
    scope: &VectorScope,
    model: &CollectionKey,
    queries: &[Vec<f32>],
    limit: usize,
) -> f64 {
    let (mut found, mut wanted) = (0, 0);
    for query in queries {
        let index = store
            .search(scope, model, query, limit, Probe::Index)
            .unwrap();
        let exact = store
            .search(scope, model, query, limit, Probe::Every)
            .unwrap();
        assert!(
            index.rows_read < exact.rows_read / 4,
            "{} of {} rows read",
            index.rows_read,
            exact.rows_read
        );
        found += exact
            .hits
            .iter()
            .filter(|h| index.hits.iter().any(|i| i.entity_id == h.entity_id))
            .count();
        wanted += exact.hits.len();
    }
    found as f64 / wanted as f64
}

/// The store's answers to `queries` are a float scan's of `live`.
async fn answers_exactly(
    store: &EmbeddedVectorStore,
    scope: &VectorScope,
    model: &CollectionKey,
    live: &[(String, Vec<f32>)],
    queries: &[Vec<f32>],
) {
    for query in queries {
        let got: Vec<String> = store
            .nearest(scope, model, query, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.entity_id)
            .collect();
        assert_eq!(got, brute_force(live, query, 10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_past_the_exact_limit_searches_its_nearest_lists() {
    // ADR 0018: past EXACT_UP_TO rows a scope is grouped into lists by learned centroids
    // and a search reads the lists nearest the query. Every stored vector still finds
    // itself (its own list is read first), through replacements that move rows between
    // lists, deletions and a reopen; the exact probe answers what a full float scan
    // answers; recall against it stays far above the share of rows read on clustered
    // data; a scope that shrinks to half the limit is scanned whole again.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    let dimension = 32;
    let (scope, model) = scope_and_model("ef", dimension as u32);
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let count = EXACT_UP_TO + 3_616;
    let mut live: Vec<(String, Vec<f32>)> = clustered(&mut random, dimension, 200, count)
        .into_iter()
        .enumerate()
        .map(|(n, v)| (format!("cv_{n:08x}"), v))
        .collect();
    let options = Options {
        probe_share: 1.0 / 16.0,
    };
    let store = EmbeddedVectorStore::open_with(&path, options).unwrap();
    for batch in live.chunks(5_000) {
        store.upsert(&scope, &model, batch).await.unwrap();
    }
    let lists = |store: &EmbeddedVectorStore| store.scopes().unwrap()[0].lists;
    assert_eq!(lists(&store), 141, "sqrt(20,000) lists");
    let finds_itself = |store: &EmbeddedVectorStore, live: &[(String, Vec<f32>)]| {
        for (id, vector) in live.iter().step_by(37) {
            let found = store
                .search(&scope, &model, vector, 1, Probe::Index)
                .unwrap();
            assert_eq!(found.hits[0].entity_id, *id);
        }
    };
    finds_itself(&store, &live);
    let queries = clustered(&mut Random(5), dimension, 200, 100);
    // Lists unrelated to similarity would find about the share of rows read (1/16);
    // the real model's recall is measured by `codectx bench recall` (docs/BENCHMARKS.md).
    let before = recall(&store, &scope, &model, &queries, 10);
    assert!(before >= 0.8, "recall@10 {before}");
    // The exact probe is the definition.
    for query in queries.iter().take(10) {
        let exact: Vec<String> = store
            .search(&scope, &model, query, 30, Probe::Every)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.entity_id)
            .collect();
        assert_eq!(exact, brute_force(&live, query, 30));
    }
    // Replacements (to another cluster, so most change lists) and deletions.
    let fresh = clustered(&mut Random(11), dimension, 50, 1_000);
    for (n, vector) in (0..count).step_by(count / 1_000).zip(fresh) {
        live[n].1 = vector;
    }
    let replaced: Vec<(String, Vec<f32>)> = (0..count)
        .step_by(count / 1_000)
        .take(1_000)
        .map(|n| live[n].clone())
        .collect();
    store.upsert(&scope, &model, &replaced).await.unwrap();
    let gone: Vec<String> = (3..count).step_by(19).map(|n| live[n].0.clone()).collect();
    store.delete(&scope, &gone).await.unwrap();
    live.retain(|(id, _)| !gone.contains(id));
    finds_itself(&store, &live);
    let mut listed = 0;
    for digit in "0123456789abcdef".chars() {
        listed += store
            .ids(&scope, &model, &format!("cv_0000{digit}"))
            .await
            .unwrap()
            .len();
    }
    assert_eq!(listed, live.len());
    for query in queries.iter().take(20) {
        let hits = store.nearest(&scope, &model, query, 30).await.unwrap();
        assert!(hits.iter().all(|h| !gone.contains(&h.entity_id)));
    }
    drop(store);
    // Opened with the default options, the same file is searched exactly.
    let exact = EmbeddedVectorStore::open(&path).unwrap();
    assert_eq!(lists(&exact), 1);
    answers_exactly(&exact, &scope, &model, &live, &queries[..10]).await;
    drop(exact);
    let reopened = EmbeddedVectorStore::open_with(&path, options).unwrap();
    assert_eq!(reopened.scopes().unwrap()[0].rows, live.len());
    // A reopen with lists learns them again from the file.
    assert!(lists(&reopened) > 1);
    finds_itself(&reopened, &live);
    let after = recall(&reopened, &scope, &model, &queries, 10);
    assert!(after >= 0.8, "recall@10 after a reopen {after}");
    // Shrunk to half the limit: one list, scanned whole.
    let keep = EXACT_UP_TO / 2;
    let shed: Vec<String> = live[keep..].iter().map(|(id, _)| id.clone()).collect();
    reopened.delete(&scope, &shed).await.unwrap();
    live.truncate(keep);
    assert_eq!(lists(&reopened), 1);
    answers_exactly(&reopened, &scope, &model, &live, &queries[..10]).await;
}

#[test]
fn a_probe_share_outside_zero_to_one_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    for share in [0.0, -0.5, 1.5, f64::NAN] {
        let refused = EmbeddedVectorStore::open_with(&path, Options { probe_share: share })
            .err()
            .unwrap_or_else(|| panic!("{share} was accepted"));
        assert!(refused.to_string().contains("(0, 1]"), "{refused}");
    }
    for share in [1.0, 0.25] {
        EmbeddedVectorStore::open_with(&path, Options { probe_share: share }).unwrap();
    }
}
