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
