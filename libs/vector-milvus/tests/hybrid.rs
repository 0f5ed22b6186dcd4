//! Milvus native hybrid search (BM25 function + dense, RRF k = 60 on the server) on a real
//! milvus-lite 3.2 (started by `make test`): the tenant filter on both legs, entities
//! without vectors, alias reconciliation by stable id, deletion, a model change (a new
//! versioned collection) and the rollback (dropping the hybrid collection leaves the
//! dense one answering).

use codectx_core::ids::mint;
use codectx_vector::{CollectionKey, VectorScope, VectorStore};
use codectx_vector_milvus::{FilterMode, HybridRecord, MilvusVectorStore, hybrid_name};

async fn store() -> MilvusVectorStore {
    let uri = std::env::var("CODECTX_TEST_MILVUS_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MILVUS_URI is not set: run the tests with `make test` (deploy/local/milvus.sh starts milvus-lite)")
    });
    MilvusVectorStore::connect(&uri, "", FilterMode::Literal)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to Milvus at {uri}: {e}"))
}

fn scope() -> VectorScope {
    VectorScope {
        tenant_id: mint("org"),
        namespace: format!("{}|{}", mint("org"), mint("gph")),
    }
}

/// A model of its own per test (a fresh collection), 4 dimensions.
fn model() -> CollectionKey {
    let hash = mint("m").trim_start_matches("m_").to_owned();
    CollectionKey {
        model_hash: hash[..16].to_owned(),
        dimension: 4,
    }
}

fn record(id: &str, text: &str, vector: Option<[f32; 4]>) -> HybridRecord {
    HybridRecord {
        entity_id: id.into(),
        text: text.into(),
        vector: vector.map(|v| v.to_vec()),
    }
}

fn ids(hits: &[codectx_vector::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.entity_id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_legs_fuse_within_the_scope_only() {
    let store = store().await;
    let model = model();
    let (a, b) = (scope(), scope());
    let verify = mint("cv");
    let parse = mint("cv");
    let pending = mint("cv");
    store
        .hybrid_upsert(
            &a,
            &model,
            &[
                record(
                    &verify,
                    "function verify signature tenant context expired",
                    Some([1.0, 0.0, 0.0, 0.0]),
                ),
                record(
                    &parse,
                    "function parse config file",
                    Some([0.0, 1.0, 0.0, 0.0]),
                ),
                // Backfilled before its vector exists: found by its words only.
                record(&pending, "function refresh expired signing keys", None),
            ],
        )
        .await
        .unwrap();
    // Another tenant's entity with the very same words and vector.
    let foreign = mint("cv");
    store
        .hybrid_upsert(
            &b,
            &model,
            &[record(
                &foreign,
                "function verify signature tenant context expired",
                Some([1.0, 0.0, 0.0, 0.0]),
            )],
        )
        .await
        .unwrap();

    let hits = store
        .hybrid_search(
            &a,
            &model,
            "verify expired signature",
            Some(&[1.0, 0.0, 0.0, 0.0]),
            5,
        )
        .await
        .unwrap();
    // Found by both legs, so first; the pending entity by its words; never B's.
    assert_eq!(
        hits.first().map(|h| h.entity_id.as_str()),
        Some(verify.as_str())
    );
    assert!(ids(&hits).contains(&pending.as_str()), "{hits:?}");
    assert!(!ids(&hits).contains(&foreign.as_str()), "{hits:?}");
    assert!(
        hits.iter()
            .all(|h| h.tenant_id == a.tenant_id && h.namespace == a.namespace)
    );

    // The dense leg alone never answers an entity without a vector.
    let dense_only = store
        .hybrid_search(&a, &model, "", Some(&[0.0, 0.0, 0.0, 1.0]), 5)
        .await
        .unwrap();
    assert!(
        !ids(&dense_only).contains(&pending.as_str()),
        "{dense_only:?}"
    );
    // The text leg alone, in B's scope, answers only B's entity.
    let in_b = store
        .hybrid_search(&b, &model, "verify signature", None, 5)
        .await
        .unwrap();
    assert_eq!(ids(&in_b), vec![foreign.as_str()]);
    store.drop_hybrid(&model).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upsert_replaces_the_text_and_a_delete_removes_the_entity() {
    let store = store().await;
    let model = model();
    let scope = scope();
    let entity = mint("ent");
    store
        .hybrid_upsert(
            &scope,
            &model,
            &[record(
                &entity,
                "payments ledger service",
                Some([0.0, 0.0, 1.0, 0.0]),
            )],
        )
        .await
        .unwrap();
    // An alias added (or two entities merged into this id): the same stable id, new text.
    store
        .hybrid_upsert(
            &scope,
            &model,
            &[record(
                &entity,
                "billing engine service",
                Some([0.0, 0.0, 1.0, 0.0]),
            )],
        )
        .await
        .unwrap();
    assert_eq!(
        store.hybrid_ids(&scope, &model, "").await.unwrap(),
        vec![entity.clone()]
    );
    let by_new = store
        .hybrid_search(&scope, &model, "billing", None, 5)
        .await
        .unwrap();
    assert_eq!(ids(&by_new), vec![entity.as_str()]);
    let by_old = store
        .hybrid_search(&scope, &model, "ledger", None, 5)
        .await
        .unwrap();
    assert!(by_old.is_empty(), "{by_old:?}");

    // The vector store's delete reaches the hybrid collection: neither leg finds it.
    store
        .delete(&scope, std::slice::from_ref(&entity))
        .await
        .unwrap();
    assert!(
        store
            .hybrid_search(
                &scope,
                &model,
                "billing engine",
                Some(&[0.0, 0.0, 1.0, 0.0]),
                5
            )
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .hybrid_ids(&scope, &model, "")
            .await
            .unwrap()
            .is_empty()
    );
    store.drop_hybrid(&model).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_change_is_a_new_collection_and_dropping_it_rolls_back() {
    let store = store().await;
    let (old, new) = (model(), model());
    let scope = scope();
    let entity = mint("cv");
    // The dense collection of the old model, as the in-house fusion reads it.
    store
        .upsert(&scope, &old, &[(entity.clone(), vec![1.0, 0.0, 0.0, 0.0])])
        .await
        .unwrap();
    store
        .hybrid_upsert(
            &scope,
            &old,
            &[record(
                &entity,
                "render template cache",
                Some([1.0, 0.0, 0.0, 0.0]),
            )],
        )
        .await
        .unwrap();
    assert_ne!(hybrid_name(&old), hybrid_name(&new));
    // The new model's collection holds nothing until it is backfilled.
    assert!(
        store
            .hybrid_search(&scope, &new, "render template", None, 5)
            .await
            .unwrap()
            .is_empty()
    );
    store
        .hybrid_upsert(
            &scope,
            &new,
            &[record(
                &entity,
                "render template cache",
                Some([0.0, 1.0, 0.0, 0.0]),
            )],
        )
        .await
        .unwrap();
    let found = store
        .hybrid_search(&scope, &new, "template", Some(&[0.0, 1.0, 0.0, 0.0]), 5)
        .await
        .unwrap();
    assert_eq!(ids(&found), vec![entity.as_str()]);

    // Rollback: the hybrid collections go; the dense one still answers.
    assert!(store.drop_hybrid(&old).await.unwrap());
    assert!(store.drop_hybrid(&new).await.unwrap());
    assert!(!store.drop_hybrid(&new).await.unwrap());
    assert!(
        store
            .hybrid_search(&scope, &old, "template", None, 5)
            .await
            .unwrap()
            .is_empty()
    );
    let dense = store
        .nearest(&scope, &old, &[1.0, 0.0, 0.0, 0.0], 5)
        .await
        .unwrap();
    assert_eq!(
        dense.first().map(|h| h.entity_id.as_str()),
        Some(entity.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_outside_minted_formats_never_reach_a_filter() {
    let store = store().await;
    let model = model();
    let injected = VectorScope {
        tenant_id: "org_x\" or tenant_id != \"".into(),
        namespace: "ns".into(),
    };
    let error = store
        .hybrid_search(&injected, &model, "anything", None, 5)
        .await
        .unwrap_err();
    assert!(
        error.message().contains("minted id format"),
        "{}",
        error.message()
    );
    let error = store
        .hybrid_upsert(&injected, &model, &[record("cv_00", "text", None)])
        .await
        .unwrap_err();
    assert!(
        error.message().contains("minted id format"),
        "{}",
        error.message()
    );
}
