//! The embedded store against the vector contract, and its durability.

use codectx_vector::embedded::EmbeddedVectorStore;
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
