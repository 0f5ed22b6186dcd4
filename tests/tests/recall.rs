//! Hybrid memory recall through context-assembler on the whole stack with the real model:
//! remember (graph + vector), recall by alias (lexical leg) and by paraphrase (dense leg),
//! facts, forget, and tenants that never meet.

use std::time::Duration;

use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_errors::ErrorKind;
use codectx_proto::assembler::v1 as pb;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tenant::TenantContext;
use codectx_tests::{TestStack, authorize, create_tenant, create_tenant_on_public};
use serde_json::Value;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

fn parse(answer: &pb::ContextAnswer) -> Value {
    let value: Value = serde_json::from_str(&answer.json).unwrap();
    assert_eq!(answer.tokens as usize, answer.json.len().div_ceil(4));
    value
}

fn remember(
    name: &str,
    kind: &str,
    aliases: &[&str],
    facts: &[(&str, &str)],
) -> pb::RememberRequest {
    pb::RememberRequest {
        entity: name.into(),
        r#type: kind.into(),
        aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        facts: facts
            .iter()
            .map(|(p, o)| pb::FactInput {
                predicate: (*p).into(),
                object: (*o).into(),
                subject: String::new(),
            })
            .collect(),
        source_client: "test".into(),
    }
}

fn recall(query: &str) -> pb::RecallRequest {
    pb::RecallRequest {
        query: query.into(),
        max_entries: 0,
        hops: 0,
    }
}

fn entry<'a>(answer: &'a Value, name: &str) -> Option<&'a Value> {
    answer["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
}

async fn context(stack: &TestStack, api_key: &str, repository: &str) -> TenantContext {
    stack
        .stack
        .verifier
        .verify(
            &authorize(stack, api_key, repository)
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_recall_remember_and_forget() {
    assert!(
        std::env::var_os("CODECTX_TEST_MODEL_DIR").is_some(),
        "CODECTX_TEST_MODEL_DIR is not set: run the tests with `make test`"
    );
    let stack = TestStack::start().await.unwrap();
    let mut health = HealthClient::new(stack.channel(ServiceKind::Embedding).await);
    let mut serving = false;
    for _ in 0..100 {
        let status = health
            .check(HealthCheckRequest {
                service: "codectx.embedding.v1.EmbeddingService".into(),
            })
            .await
            .map(|r| r.into_inner().status());
        if status.ok() == Some(ServingStatus::Serving) {
            serving = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(serving, "the model should load within 10 s");

    let assembler = AssemblerClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let a = create_tenant(&stack, "tenant-a", "same/name")
        .await
        .unwrap();
    // B reads the same graph (shared publicly): memory and vectors stay apart anyway.
    let b = create_tenant_on_public(&stack, "tenant-b", "same/name", &a.repository.id)
        .await
        .unwrap();
    let context_a = context(&stack, &a.api_key, "same/name").await;
    let context_b = context(&stack, &b.api_key, "same/name").await;

    for request in [
        remember(
            "Payments service",
            "service",
            &["billing engine"],
            &[("owned_by", "Team Ledger"), ("deploys_to", "eu-west-1")],
        ),
        remember(
            "PostgreSQL primary",
            "database",
            &["main relational database"],
            &[("runs_on", "db-01")],
        ),
        remember(
            "Alice Chen",
            "person",
            &["on-call lead"],
            &[("leads", "Team Ledger")],
        ),
    ] {
        let answer = assembler.remember(&context_a, request).await.unwrap();
        assert_eq!(answer.status(), AnswerStatus::Ok);
        let value = parse(&answer);
        assert_eq!(value["embedding"], "stored", "{value}");
    }

    // By alias: the exact leg finds it, with its facts and the notice.
    let answer = assembler
        .recall(&context_a, recall("billing engine"))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    assert_eq!(value["entries"][0]["name"], "Payments service");
    let found_by = value["entries"][0]["found_by"].as_array().unwrap();
    assert!(found_by.iter().any(|l| l == "exact"), "{value}");
    assert!(
        value["notice"]
            .as_str()
            .unwrap()
            .contains("notes to verify")
    );
    let facts = value["facts"].as_array().unwrap();
    assert!(
        facts
            .iter()
            .any(|f| f["predicate"] == "owned_by" && f["object"] == "Team Ledger"),
        "{value}"
    );
    assert_eq!(value["provenance"]["degraded"], serde_json::json!([]));

    // By paraphrase, with no word in common: only the dense leg can find it.
    let answer = assembler
        .recall(&context_a, recall("the postgres server holding our tables"))
        .await
        .unwrap();
    let value = parse(&answer);
    assert_eq!(value["entries"][0]["name"], "PostgreSQL primary", "{value}");
    let found = entry(&value, "PostgreSQL primary").unwrap();
    assert!(
        found["found_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "vector"),
        "{value}"
    );

    // Caps are enforced at the edge.
    let error = assembler
        .recall(&context_a, recall(&"x".repeat(4097)))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::LimitExceeded, "{error:?}");
    assert_eq!(error.limit(), Some(4096));
    let error = assembler
        .remember(&context_a, remember("No type", "", &[], &[]))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidArgument);
    assert_eq!(error.field(), "type");

    // Another tenant on a repository of the same name sees none of it, by either leg.
    let answer = assembler
        .recall(&context_b, recall("billing engine"))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);
    let answer = assembler
        .recall(&context_b, recall("the postgres server holding our tables"))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound, "{}", answer.json);

    // A fact's value answers with its subject entity and that fact, never as an entry of
    // its own.
    let answer = assembler
        .recall(&context_a, recall("eu-west-1"))
        .await
        .unwrap();
    let value = parse(&answer);
    assert_eq!(value["entries"][0]["name"], "Payments service", "{value}");
    assert!(
        value["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["name"] != "eu-west-1"),
        "{value}"
    );

    // Superseded: the old value is findable by nothing, the new one finds its subject.
    let answer = assembler
        .remember(
            &context_a,
            remember(
                "Payments service",
                "service",
                &[],
                &[("deploys_to", "ap-south-1")],
            ),
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let answer = assembler
        .recall(&context_a, recall("eu-west-1"))
        .await
        .unwrap();
    assert!(
        !answer.json.contains("eu-west-1"),
        "a superseded value was returned: {}",
        answer.json
    );
    let answer = assembler
        .recall(&context_a, recall("ap-south-1"))
        .await
        .unwrap();
    let value = parse(&answer);
    assert_eq!(value["entries"][0]["name"], "Payments service", "{value}");

    // Forget: gone from both legs; forgetting again is not found.
    let answer = assembler
        .forget(
            &context_a,
            pb::ForgetRequest {
                entity: "main relational database".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    assert_eq!(value["vectors"], "deleted");
    assert_eq!(value["facts_removed"], 1);
    let answer = assembler
        .recall(&context_a, recall("the postgres server holding our tables"))
        .await
        .unwrap();
    let value = parse(&answer);
    assert!(entry(&value, "PostgreSQL primary").is_none(), "{value}");
    let answer = assembler
        .forget(
            &context_a,
            pb::ForgetRequest {
                entity: "PostgreSQL primary".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);

    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_dense_leg_recall_falls_back_to_lexical() {
    // No model: the embedding service stays NOT_SERVING and every embed call fails.
    let data = tempfile::tempdir().unwrap();
    let mut options = codectx::stack::StackOptions::ephemeral(data.path().to_path_buf());
    options.model_directory = None;
    let stack = TestStack {
        stack: codectx::stack::Stack::start(options).await.unwrap(),
        data,
    };
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let a = create_tenant(&stack, "tenant-a", "repo").await.unwrap();
    let context_a = context(&stack, &a.api_key, "repo").await;

    let answer = assembler
        .remember(
            &context_a,
            remember("Payments service", "service", &["billing engine"], &[]),
        )
        .await
        .unwrap();
    let value = parse(&answer);
    assert_eq!(value["embedding"], "pending", "{value}");

    let answer = assembler
        .recall(&context_a, recall("payments"))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    assert_eq!(value["entries"][0]["name"], "Payments service");
    let degraded = value["provenance"]["degraded"].as_array().unwrap();
    assert_eq!(degraded.len(), 1, "{value}");
    assert!(
        degraded[0].as_str().unwrap().starts_with("vector:"),
        "{value}"
    );
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_context_carries_the_agents_notes_within_its_budget() {
    // The Go fixture's code has nothing about releases: the notes are the answer.
    let f = codectx_tests::start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let context_a = f.context.clone();
    // Distinct predicates: a new object for the same predicate would supersede the old.
    let pairs: Vec<(String, String)> = (0..30)
        .map(|i| {
            (
                format!("step_{i}"),
                format!("release checklist step number {i} with a long description"),
            )
        })
        .collect();
    let facts: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(p, o)| (p.as_str(), o.as_str()))
        .collect();
    assembler
        .remember(
            &context_a,
            remember("ReleaseTrain", "process", &["weekly release"], &facts),
        )
        .await
        .unwrap();

    let answer = assembler
        .minimal_context(
            &context_a,
            pb::MinimalContextRequest {
                task: "prepare the weekly release".into(),
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok, "{}", answer.json);
    let value = parse(&answer);
    assert_eq!(value["memory"]["entries"][0]["name"], "ReleaseTrain");
    assert!(
        value["memory"]["notice"]
            .as_str()
            .unwrap()
            .contains("written by agents")
    );

    // A small budget sheds the facts first and says so; the entry stays.
    let small = assembler
        .minimal_context(
            &context_a,
            pb::MinimalContextRequest {
                task: "prepare the weekly release".into(),
                max_tokens: 256,
            },
        )
        .await
        .unwrap();
    assert_eq!(small.status(), AnswerStatus::Ok, "{}", small.json);
    assert!(small.tokens <= 256, "{}", small.tokens);
    let value = parse(&small);
    assert_eq!(value["memory"]["entries"][0]["name"], "ReleaseTrain");
    assert!(
        value["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["what"] == "memory facts" && o["count"].as_u64().unwrap() > 0),
        "{value}"
    );
    f.stack.stack.stop().await.unwrap();
}
