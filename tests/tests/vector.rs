//! vector-gateway end to end: scope from the context only, cross-tenant isolation with
//! identical ids, scopes required, caps.

use codectx::stack::ServiceKind;
use codectx_clients::{PeerConfig, VectorClient};
use codectx_proto::embedding::v1::ModelIdentity;
use codectx_proto::vector::v1::{DeleteRequest, NearestRequest, UpsertRequest, VectorRecord};
use codectx_tests::{TestStack, authorize, create_tenant, create_tenant_on_public};
use tonic::Code;

fn model() -> Option<ModelIdentity> {
    Some(ModelIdentity {
        name: "test".into(),
        content_hash: "00ff".into(),
        dimension: 4,
    })
}

fn record(id: &str, values: [f32; 4]) -> VectorRecord {
    VectorRecord {
        entity_id: id.into(),
        values: values.to_vec(),
        text: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_never_see_each_others_vectors() {
    let stack = TestStack::start().await.unwrap();
    let vectors = VectorClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::VectorGateway),
    ))
    .unwrap();
    let a = create_tenant(&stack, "tenant-a", "shared-name")
        .await
        .unwrap();
    // B reads the same graph (shared publicly): memory and vectors stay apart anyway.
    let b = create_tenant_on_public(&stack, "tenant-b", "shared-name", &a.repository.id)
        .await
        .unwrap();
    let context_a = stack
        .stack
        .verifier
        .verify(
            &authorize(&stack, &a.api_key, "shared-name")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();
    let context_b = stack
        .stack
        .verifier
        .verify(
            &authorize(&stack, &b.api_key, "shared-name")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();

    // Identical ids and names in both tenants.
    vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model(),
                records: vec![record("entity", [1.0, 0.0, 0.0, 0.0])],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    vectors
        .upsert(
            &context_b,
            UpsertRequest {
                model: model(),
                records: vec![record("entity", [0.0, 1.0, 0.0, 0.0])],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let query = NearestRequest {
        model: model(),
        query: vec![1.0, 0.0, 0.0, 0.0],
        limit: 10,
        ..Default::default()
    };
    let hits_a = vectors
        .nearest(&context_a, query.clone())
        .await
        .unwrap()
        .hits;
    assert_eq!(hits_a.len(), 1);
    assert!((hits_a[0].score - 1.0).abs() < 1e-4);
    let hits_b = vectors
        .nearest(&context_b, query.clone())
        .await
        .unwrap()
        .hits;
    assert_eq!(hits_b.len(), 1);
    assert!(
        hits_b[0].score.abs() < 1e-4,
        "B sees its own orthogonal vector, never A's"
    );
    // Deleting in B leaves A's.
    vectors
        .delete(
            &context_b,
            DeleteRequest {
                entity_ids: vec!["entity".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        vectors
            .nearest(&context_b, query.clone())
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    assert_eq!(
        vectors
            .nearest(&context_a, query.clone())
            .await
            .unwrap()
            .hits
            .len(),
        1
    );

    // Code vectors live in the context's graph: shared by every tenant that reads that
    // graph (B reads A's, shared publicly), never in anyone's memory, never in another
    // graph (C indexed its own).
    let c = create_tenant(&stack, "tenant-c", "shared-name")
        .await
        .unwrap();
    let context_c = stack
        .stack
        .verifier
        .verify(
            &authorize(&stack, &c.api_key, "shared-name")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();
    let code = |request: NearestRequest| NearestRequest {
        scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
        ..request
    };
    vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model(),
                records: vec![record(
                    "cv_0123456789abcdef0123456789abcdef",
                    [1.0, 0.0, 0.0, 0.0],
                )],
                scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
            },
        )
        .await
        .unwrap();
    let in_code = vectors
        .nearest(&context_a, code(query.clone()))
        .await
        .unwrap()
        .hits;
    assert_eq!(
        in_code
            .iter()
            .map(|h| h.entity_id.as_str())
            .collect::<Vec<_>>(),
        ["cv_0123456789abcdef0123456789abcdef"]
    );
    assert!(
        vectors
            .nearest(&context_a, query.clone())
            .await
            .unwrap()
            .hits
            .iter()
            .all(|h| h.entity_id == "entity"),
        "memory never sees code vectors"
    );
    assert_eq!(
        vectors
            .nearest(&context_b, code(query.clone()))
            .await
            .unwrap()
            .hits
            .len(),
        1,
        "the same graph, the same code vectors"
    );
    assert!(
        vectors
            .nearest(&context_c, code(query.clone()))
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    let listed = vectors
        .list_ids(
            &context_a,
            codectx_proto::vector::v1::ListIdsRequest {
                model: model(),
                scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
                prefix: "cv_".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.entity_ids, ["cv_0123456789abcdef0123456789abcdef"]);
    // Depth: 10 unless asked, at most 30 when a caller reads deeper to filter.
    let many: Vec<VectorRecord> = (0..40)
        .map(|i| record(&format!("cv_{i:032x}"), [1.0, i as f32 / 40.0, 0.0, 0.0]))
        .collect();
    vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model(),
                records: many,
                scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
            },
        )
        .await
        .unwrap();
    for (asked, got) in [(0, 10), (10, 10), (25, 25), (100, 30)] {
        let hits = vectors
            .nearest(
                &context_a,
                code(NearestRequest {
                    limit: asked,
                    ..query.clone()
                }),
            )
            .await
            .unwrap()
            .hits;
        assert_eq!(hits.len(), got, "asked for {asked}");
    }
    vectors
        .delete(
            &context_a,
            DeleteRequest {
                entity_ids: (0..40).map(|i| format!("cv_{i:032x}")).collect(),
                scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
            },
        )
        .await
        .unwrap();
    let listed_c = vectors
        .list_ids(
            &context_c,
            codectx_proto::vector::v1::ListIdsRequest {
                model: model(),
                scope: codectx_proto::vector::v1::VectorScopeKind::Code as i32,
                prefix: String::new(),
            },
        )
        .await
        .unwrap();
    assert!(listed_c.entity_ids.is_empty());

    // Bad input is rejected with what to change.
    let zero = vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model(),
                records: vec![record("z", [0.0; 4])],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(zero.message().contains("all-zero"), "{}", zero.message());
    let wrong = vectors
        .nearest(
            &context_a,
            NearestRequest {
                query: vec![1.0, 0.0],
                ..query.clone()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(wrong.to_status().code(), Code::InvalidArgument);
    let too_many = vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model(),
                records: (0..257)
                    .map(|i| record(&i.to_string(), [1.0, 0.0, 0.0, 0.0]))
                    .collect(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(too_many.limit(), Some(256));
    stack.stack.stop().await.unwrap();
}

fn text_record(id: &str, text: &str, values: [f32; 4]) -> VectorRecord {
    VectorRecord {
        entity_id: id.into(),
        values: values.to_vec(),
        text: text.into(),
    }
}

/// Native hybrid search through vector-gateway on a real milvus-lite (ADR 0015): the
/// records' text and vectors both rank, the graph scope bounds both legs, a symbol
/// without text is not listed as stored (so the assembler's plan backfills it with its
/// text), and a gateway without the switch answers UNIMPLEMENTED naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_hybrid_ranks_text_and_vectors_within_the_graph() {
    use codectx_proto::vector::v1::{HybridRequest, ListIdsRequest, VectorScopeKind};
    let uri = std::env::var("CODECTX_TEST_MILVUS_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MILVUS_URI is not set: run the tests with `make test` (deploy/local/milvus.sh starts milvus-lite)")
    });
    let data = tempfile::tempdir().unwrap();
    let stack = codectx_tests::TestStack {
        stack: codectx::stack::Stack::start(codectx::stack::StackOptions {
            vectors: codectx::stack::VectorBackend::Milvus {
                uri,
                literal_filters: true,
                native_hybrid: true,
            },
            ..codectx::stack::StackOptions::ephemeral(data.path().to_path_buf())
        })
        .await
        .unwrap(),
        data,
    };
    let vectors = VectorClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::VectorGateway),
    ))
    .unwrap();
    let context = |key: String| {
        let stack = &stack;
        async move {
            stack
                .stack
                .verifier
                .verify(
                    &authorize(stack, &key, "native")
                        .await
                        .unwrap()
                        .signed_context,
                )
                .unwrap()
        }
    };
    let a = create_tenant(&stack, "native-a", "native").await.unwrap();
    let c = create_tenant(&stack, "native-c", "native").await.unwrap();
    let (context_a, context_c) = (context(a.api_key).await, context(c.api_key).await);
    // A distinct model per run: a fresh collection in a milvus-lite other tests share.
    let model = Some(ModelIdentity {
        name: "test".into(),
        content_hash: codectx_core::ids::mint("m")[2..18].to_owned(),
        dimension: 4,
    });
    let (verify, parse, bare) = (
        "cv_000000000000000000000000000000a1",
        "cv_000000000000000000000000000000a2",
        "cv_000000000000000000000000000000a3",
    );
    vectors
        .upsert(
            &context_a,
            UpsertRequest {
                model: model.clone(),
                records: vec![
                    text_record(
                        verify,
                        "function verify tenant context signature",
                        [1.0, 0.0, 0.0, 0.0],
                    ),
                    text_record(parse, "function parse config file", [0.0, 1.0, 0.0, 0.0]),
                    record(bare, [0.0, 0.0, 1.0, 0.0]),
                ],
                scope: VectorScopeKind::Code as i32,
            },
        )
        .await
        .unwrap();
    let search = |text: &str, query: Vec<f32>| HybridRequest {
        model: model.clone(),
        query,
        text: text.into(),
        limit: 5,
        scope: VectorScopeKind::Code as i32,
    };
    let ids = |hits: Vec<codectx_proto::vector::v1::VectorHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.entity_id).collect()
    };
    let both = ids(vectors
        .hybrid(
            &context_a,
            search("verify signature", vec![1.0, 0.0, 0.0, 0.0]),
        )
        .await
        .unwrap()
        .hits);
    assert_eq!(both.first().map(String::as_str), Some(verify), "{both:?}");
    let words = ids(vectors
        .hybrid(&context_a, search("parse config", Vec::new()))
        .await
        .unwrap()
        .hits);
    assert_eq!(words, [parse]);
    // Another graph sees none of A's symbols, by words or by vector.
    assert!(
        vectors
            .hybrid(
                &context_c,
                search("verify signature", vec![1.0, 0.0, 0.0, 0.0])
            )
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    // Stored means stored in both collections: the symbol without text is listed as
    // missing, so the plan writes it again with its text (the backfill).
    let listed = vectors
        .list_ids(
            &context_a,
            ListIdsRequest {
                model: model.clone(),
                scope: VectorScopeKind::Code as i32,
                prefix: "cv_".into(),
            },
        )
        .await
        .unwrap()
        .entity_ids;
    let mut listed = listed;
    listed.sort();
    assert_eq!(listed, [verify, parse]);

    // The embedded store has no native hybrid: the error names the switch.
    let embedded = TestStack::start().await.unwrap();
    let b = create_tenant(&embedded, "native-b", "native")
        .await
        .unwrap();
    let context_b = embedded
        .stack
        .verifier
        .verify(
            &authorize(&embedded, &b.api_key, "native")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();
    let error = VectorClient::connect(&PeerConfig::single(
        embedded.endpoint(ServiceKind::VectorGateway),
    ))
    .unwrap()
    .hybrid(&context_b, search("verify", Vec::new()))
    .await
    .unwrap_err();
    assert_eq!(error.kind(), codectx_errors::ErrorKind::Unimplemented);
    assert!(
        error.message().contains("milvus_native_hybrid"),
        "{}",
        error.message()
    );
}
