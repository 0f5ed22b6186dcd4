//! Code retrieval through Milvus's native hybrid search (ADR 0015), end to end on a real
//! milvus-lite: the `native` legs rank a plain-language query's symbols from the hybrid
//! collection the vector plan backfilled, and a query about something the code does not
//! have still answers `not_found` (judged by the in-house signals).

use codectx::stack::{ServiceKind, VectorBackend};
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_context_assembler::RetrievalLegs;
use codectx_proto::assembler::v1 as pb;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tests::start_indexed_on;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_legs_rank_from_the_hybrid_collection_and_keep_not_found() {
    let uri = std::env::var("CODECTX_TEST_MILVUS_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MILVUS_URI is not set: run the tests with `make test` (deploy/local/milvus.sh starts milvus-lite)")
    });
    let f = start_indexed_on(
        "go",
        "shop",
        |_| {},
        |options| codectx::stack::StackOptions {
            retrieval: RetrievalLegs::Native,
            vectors: VectorBackend::Milvus {
                uri,
                literal_filters: true,
                native_hybrid: true,
            },
            ..options
        },
    )
    .await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let search = |query: &str| pb::SearchRequest {
        query: query.into(),
        ..Default::default()
    };
    let answer = assembler
        .search(
            &f.context,
            search("in-memory store that finds an item by key"),
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok, "{}", answer.json);
    let value: serde_json::Value = serde_json::from_str(&answer.json).unwrap();
    let names: Vec<&str> = value["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["qualified_name"].as_str())
        .collect();
    // The store's type and its lookup lead; every entry came from Milvus's list.
    assert!(
        names[..2].contains(&"example.com/shop/store.DB")
            && names[..3].contains(&"example.com/shop/store.(*DB).Get"),
        "{names:?}"
    );
    assert!(
        value["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["found_by"] == serde_json::json!(["vector"])),
        "{}",
        answer.json
    );
    assert!(
        !answer.json.contains("code vectors"),
        "the plan backfilled the hybrid collection: {}",
        answer.json
    );
    let nothing = assembler
        .search(
            &f.context,
            search("kubernetes ingress certificate rotation webhook"),
        )
        .await
        .unwrap();
    assert_eq!(nothing.status(), AnswerStatus::NotFound, "{}", nothing.json);
}
