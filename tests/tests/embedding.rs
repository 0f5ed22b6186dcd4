//! embedding end to end: the real ONNX Runtime and model (from `make models`), health
//! NOT_SERVING until loaded, then model identity, embeddings and the query cache; and a
//! service without a model says why and stays NOT_SERVING.

use std::time::Duration;

use codectx::stack::{ServiceKind, Stack, StackOptions};
use codectx_clients::{EmbeddingClient, PeerConfig};
use codectx_proto::embedding::v1::{EmbedPurpose, EmbedRequest, GetModelInfoRequest};
use codectx_tests::{TestStack, authorize};
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

async fn serving(stack: &TestStack) -> ServingStatus {
    let mut health = HealthClient::new(stack.channel(ServiceKind::Embedding).await);
    health
        .check(HealthCheckRequest {
            service: "codectx.embedding.v1.EmbeddingService".into(),
        })
        .await
        .map(|r| r.into_inner().status())
        .unwrap_or(ServingStatus::Unknown)
}

async fn start(model_directory: Option<std::path::PathBuf>) -> TestStack {
    let data = tempfile::tempdir().unwrap();
    let mut options = StackOptions::ephemeral(data.path().to_path_buf());
    options.services = vec![ServiceKind::Embedding];
    options.model_directory = model_directory;
    let stack = Stack::start(options).await.unwrap();
    TestStack { stack, data }
}

/// A stack with the embedding service on the real model, once it serves: the caller's
/// verified context and a client.
async fn serving_model() -> (TestStack, codectx_tenant::TenantContext, EmbeddingClient) {
    let directory = std::env::var("CODECTX_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MODEL_DIR is not set: run the tests with `make test`")
    });
    let stack = start(Some(directory.into())).await;
    let mut status = ServingStatus::Unknown;
    for _ in 0..100 {
        status = serving(&stack).await;
        if status == ServingStatus::Serving {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        status,
        ServingStatus::Serving,
        "the model should load within 10 s"
    );
    let context = stack
        .stack
        .verifier
        .verify(&authorize_dev_on_nothing(&stack).await)
        .unwrap();
    let client =
        EmbeddingClient::connect(&PeerConfig::single(stack.endpoint(ServiceKind::Embedding)))
            .unwrap();
    (stack, context, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeds_with_the_real_model() {
    let (stack, context, client) = serving_model().await;
    let model = client
        .get_model_info(&context, GetModelInfoRequest {})
        .await
        .unwrap();
    assert_eq!(model.dimension, 384);
    assert_eq!(model.name, "all-MiniLM-L6-v2-int8");
    let texts: Vec<String> = vec!["router".into(), "http request routing".into()];
    let entities = client
        .embed(
            &context,
            EmbedRequest {
                texts: texts.clone(),
                purpose: EmbedPurpose::Entity as i32,
            },
        )
        .await
        .unwrap();
    assert_eq!(entities.embeddings.len(), 2);
    assert_eq!(entities.embeddings[0].values.len(), 384);
    // Concurrent queries are batched and cached; answers do not depend on either.
    let mut handles = Vec::new();
    for _ in 0..8 {
        let client = client.clone();
        let context = context.clone();
        handles.push(tokio::spawn(async move {
            client
                .embed(
                    &context,
                    EmbedRequest {
                        texts: vec!["router".into()],
                        purpose: EmbedPurpose::Query as i32,
                    },
                )
                .await
                .unwrap()
        }));
    }
    for handle in handles {
        let answer = handle.await.unwrap();
        let dot: f32 = answer.embeddings[0]
            .values
            .iter()
            .zip(&entities.embeddings[0].values)
            .map(|(a, b)| a * b)
            .sum();
        assert!(dot > 0.9999, "{dot}");
    }
    // Caps.
    let too_many = client
        .embed(
            &context,
            EmbedRequest {
                texts: vec!["x".into(); 65],
                purpose: 1,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(too_many.limit(), Some(64));
    stack.stack.stop().await.unwrap();
}

/// A query does not wait behind bulk embeddings (a code-vector build sends batches of 64
/// texts back to back): it is answered between a few texts of them. Four bulk requests
/// of 64 texts are queued first; a query sent after them comes back before the last of
/// them (in arrival order it would come last).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_is_answered_before_bulk_work_queued_earlier() {
    let (stack, context, client) = serving_model().await;
    let finished = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut bulk = Vec::new();
    for request in 0..4 {
        let (client, context, finished) = (client.clone(), context.clone(), finished.clone());
        bulk.push(tokio::spawn(async move {
            let texts: Vec<String> = (0..64)
                .map(|n| {
                    format!(
                        "method {n} of handler {request} parses the request header and routes it"
                    )
                })
                .collect();
            client
                .embed(
                    &context,
                    EmbedRequest {
                        texts,
                        purpose: EmbedPurpose::Entity as i32,
                    },
                )
                .await
                .unwrap();
            finished.lock().unwrap().push(format!("bulk {request}"));
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    client
        .embed(
            &context,
            EmbedRequest {
                texts: vec!["where are request headers parsed".into()],
                purpose: EmbedPurpose::Query as i32,
            },
        )
        .await
        .unwrap();
    finished.lock().unwrap().push("query".into());
    for handle in bulk {
        handle.await.unwrap();
    }
    let order = finished.lock().unwrap().clone();
    assert_ne!(order.last().map(String::as_str), Some("query"), "{order:?}");
    assert!(
        order.iter().position(|o| o == "query") < Some(3),
        "the query waited for most bulk requests: {order:?}"
    );
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_it_says_why_and_stays_not_serving() {
    let empty = tempfile::tempdir().unwrap();
    let stack = start(Some(empty.path().to_path_buf())).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(serving(&stack).await, ServingStatus::NotServing);
    let context = stack
        .stack
        .verifier
        .verify(&authorize_dev_on_nothing(&stack).await)
        .unwrap();
    let client =
        EmbeddingClient::connect(&PeerConfig::single(stack.endpoint(ServiceKind::Embedding)))
            .unwrap();
    let error = client
        .embed(
            &context,
            EmbedRequest {
                texts: vec!["x".into()],
                purpose: 1,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.to_status().code(), Code::Unavailable);
    assert!(
        error.message().contains("not available") || error.message().contains("loading"),
        "{}",
        error.message()
    );
    stack.stack.stop().await.unwrap();
}

/// A context for the development subject on a fresh repository entry.
async fn authorize_dev_on_nothing(stack: &TestStack) -> Vec<u8> {
    let (repository, _) = codectx_tests::add_repository(
        stack,
        &stack.stack.dev.organisation.id,
        &stack.stack.dev.subject.id,
        "empty",
    )
    .await
    .unwrap();
    authorize(stack, stack.admin_key(), &repository.id)
        .await
        .unwrap()
        .signed_context
}
