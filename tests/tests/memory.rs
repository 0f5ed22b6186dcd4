//! Agent memory through graph-hydrator and the lexical ranker's memory scope: remember,
//! hydrate, facts, lexical recall by name and alias, forget; tenants never meet.

use codectx::stack::ServiceKind;
use codectx_clients::{GraphClient, LexicalClient, PeerConfig};
use codectx_proto::graph::v1 as pb;
use codectx_proto::lexical::v1::{RankRequest, ScopeKind};
use codectx_tests::{TestStack, authorize, create_tenant, create_tenant_on_public};
use tonic::Code;

fn entity(
    name: &str,
    kind: &str,
    aliases: &[&str],
    facts: &[(&str, &str)],
) -> pb::MemoryEntityInput {
    pb::MemoryEntityInput {
        name: name.into(),
        r#type: kind.into(),
        aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        facts: facts
            .iter()
            .map(|(p, o)| pb::MemoryFactInput {
                predicate: (*p).into(),
                object: (*o).into(),
                subject: String::new(),
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remember_recall_forget_within_a_namespace() {
    let stack = TestStack::start().await.unwrap();
    let graph = GraphClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::GraphHydrator),
    ))
    .unwrap();
    let lexical = LexicalClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::LexicalRanker),
    ))
    .unwrap();
    let a = create_tenant(&stack, "tenant-a", "same/name")
        .await
        .unwrap();
    // B reads the same graph (shared publicly): memory and vectors stay apart anyway.
    let b = create_tenant_on_public(&stack, "tenant-b", "same/name", &a.repository.id)
        .await
        .unwrap();
    let context_a = stack
        .stack
        .verifier
        .verify(
            &authorize(&stack, &a.api_key, "same/name")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();
    let context_b = stack
        .stack
        .verifier
        .verify(
            &authorize(&stack, &b.api_key, "same/name")
                .await
                .unwrap()
                .signed_context,
        )
        .unwrap();

    let stored = graph
        .upsert_memory_entities(
            &context_a,
            pb::UpsertMemoryEntitiesRequest {
                entities: vec![entity(
                    "Payments service",
                    "service",
                    &["billing engine"],
                    &[("owned_by", "Team Ledger")],
                )],
                source_client: "test".into(),
            },
        )
        .await
        .unwrap();
    let id = stored.entities[0].id.clone();
    // B has an entity of the same name: a different id.
    let theirs = graph
        .upsert_memory_entities(
            &context_b,
            pb::UpsertMemoryEntitiesRequest {
                entities: vec![entity("Payments service", "service", &[], &[])],
                source_client: "test".into(),
            },
        )
        .await
        .unwrap();
    assert_ne!(theirs.entities[0].id, id);

    // Lexical recall by alias, in A's namespace only.
    let rank = |query: &str| RankRequest {
        scope: ScopeKind::Memory as i32,
        query: query.into(),
        limit: 10,
        kinds: vec![],
        production_only: false,
        corpus_version: String::new(),
    };
    let found = lexical
        .rank(&context_a, rank("billing engine"))
        .await
        .unwrap();
    assert_eq!(found.candidates[0].entity_id, id);
    assert!(found.candidates[0].exact);
    let found = lexical.rank(&context_a, rank("payments")).await.unwrap();
    assert_eq!(found.candidates[0].entity_id, id);
    let in_b = lexical
        .rank(&context_b, rank("billing engine"))
        .await
        .unwrap();
    assert!(in_b.candidates.iter().all(|c| c.entity_id != id));

    // Hydration drops ids that are not A's; facts are A's.
    let hydrated = graph
        .hydrate_memory_entities(
            &context_a,
            pb::HydrateMemoryEntitiesRequest {
                ids: vec![id.clone(), theirs.entities[0].id.clone()],
            },
        )
        .await
        .unwrap();
    assert_eq!(hydrated.entities.len(), 1);
    assert_eq!(hydrated.missing, vec![theirs.entities[0].id.clone()]);
    let facts = graph
        .expand_facts(
            &context_a,
            pb::ExpandFactsRequest {
                ids: vec![id.clone()],
                hops: 2,
                fact_limit: 80,
            },
        )
        .await
        .unwrap();
    assert_eq!(facts.facts[0].fact.as_ref().unwrap().object, "Team Ledger");

    // Forget: gone from hydration and from recall (the corpus version changed).
    let forgotten = graph
        .forget_memory_entity(
            &context_a,
            pb::ForgetMemoryEntityRequest {
                name: "billing engine".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(forgotten.entity_id, id);
    let hydrated = graph
        .hydrate_memory_entities(
            &context_a,
            pb::HydrateMemoryEntitiesRequest {
                ids: vec![id.clone()],
            },
        )
        .await
        .unwrap();
    assert!(hydrated.entities.is_empty());
    let found = lexical
        .rank(&context_a, rank("billing engine"))
        .await
        .unwrap();
    assert!(found.candidates.iter().all(|c| c.entity_id != id));
    // B's entity is untouched.
    let hydrated = graph
        .hydrate_memory_entities(
            &context_b,
            pb::HydrateMemoryEntitiesRequest {
                ids: vec![theirs.entities[0].id.clone()],
            },
        )
        .await
        .unwrap();
    assert_eq!(hydrated.entities.len(), 1);

    // Bad input names what to change.
    let bad = graph
        .upsert_memory_entities(
            &context_a,
            pb::UpsertMemoryEntitiesRequest {
                entities: vec![entity("x", "t", &[], &[("Not Snake", "y")])],
                source_client: String::new(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(bad.to_status().code(), Code::InvalidArgument);
    assert!(
        bad.message().contains("lower_snake_case"),
        "{}",
        bad.message()
    );
    stack.stack.stop().await.unwrap();
}
