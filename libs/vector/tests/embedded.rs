//! The embedded store against the vector contract, and its durability.

use codectx_vector::embedded::EmbeddedVectorStore;
use codectx_vector::{CollectionKey, VectorScope, VectorStore, contract, prepare};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedVectorStore::open(&dir.path().join("vectors.db")).unwrap();
    contract::run(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    let scope = VectorScope {
        tenant_id: "org_a".into(),
        namespace: "org_a|gph_a".into(),
    };
    let model = CollectionKey {
        model_hash: "ab".into(),
        dimension: 2,
    };
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
