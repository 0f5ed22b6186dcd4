//! Milvus (milvus-lite 3.2, started by `make test`) against the vector contract, in the
//! literal filter mode milvus-lite needs, and the literal mode's strictness.

use codectx_vector::{CollectionKey, VectorScope, VectorStore, contract};
use codectx_vector_milvus::{FilterMode, MilvusVectorStore};

async fn store() -> MilvusVectorStore {
    let uri = std::env::var("CODECTX_TEST_MILVUS_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MILVUS_URI is not set: run the tests with `make test` (deploy/local/milvus.sh starts milvus-lite)")
    });
    MilvusVectorStore::connect(&uri, "", FilterMode::Literal)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to Milvus at {uri}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn milvus_meets_the_contract() {
    contract::run(&store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn literal_mode_refuses_values_outside_minted_formats() {
    let store = store().await;
    let model = CollectionKey {
        model_hash: "ab".into(),
        dimension: 2,
    };
    let injected = VectorScope {
        tenant_id: "org_x\" or tenant_id != \"".into(),
        namespace: "ns".into(),
    };
    let error = store
        .nearest(&injected, &model, &[1.0, 0.0], 5)
        .await
        .unwrap_err();
    assert!(
        error.message().contains("minted id format"),
        "{}",
        error.message()
    );
    let scope = VectorScope {
        tenant_id: codectx_core::ids::mint("org"),
        namespace: format!(
            "{}|{}",
            codectx_core::ids::mint("org"),
            codectx_core::ids::mint("gph")
        ),
    };
    let error = store
        .delete(&scope, &["e1\" or 1 == 1 or \"".into()])
        .await
        .unwrap_err();
    assert!(
        error.message().contains("minted id format"),
        "{}",
        error.message()
    );
}
