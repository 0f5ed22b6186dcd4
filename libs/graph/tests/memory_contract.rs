//! Agent memory contract on SQLite, Neo4j 5.26 and HugeGraph 1.5 (same assertions).

use codectx_graph::hugegraph::HugeGraphStore;
use codectx_graph::memory::{EntityInput, FactInput, MemoryStore, entity_id};
use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::sqlite::SqliteGraphStore;

fn input(name: &str, entity_type: &str, aliases: &[&str], facts: &[(&str, &str)]) -> EntityInput {
    EntityInput {
        name: name.into(),
        entity_type: entity_type.into(),
        aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        facts: facts.iter().map(|(p, o)| FactInput::new(p, o)).collect(),
    }
}

async fn contract(store: &dyn MemoryStore) {
    let tenant = codectx_core::ids::mint("org");
    let namespace = format!("{tenant}|{}", codectx_core::ids::mint("gph"));
    let other_tenant = codectx_core::ids::mint("org");
    let other_namespace = format!("{other_tenant}|{}", codectx_core::ids::mint("gph"));
    let version_before = store.memory_version(&tenant, &namespace).await.unwrap();

    let stored = store
        .remember(
            &tenant,
            &namespace,
            &[input(
                "Payments service",
                "service",
                &["payments"],
                &[("owned_by", "Team Ledger")],
            )],
            "test",
            100,
        )
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    let payments = stored[0].clone();
    assert_eq!(payments.id, entity_id(&namespace, "Payments service"));
    assert_eq!(
        (payments.entity_type.as_str(), payments.aliases.clone()),
        ("service", vec!["payments".to_owned()])
    );
    assert_ne!(
        store.memory_version(&tenant, &namespace).await.unwrap(),
        version_before
    );

    // The fact's object became an entity; facts are current.
    let (facts, truncated) = store
        .memory_facts(
            &tenant,
            &namespace,
            std::slice::from_ref(&payments.id),
            1,
            80,
        )
        .await
        .unwrap();
    assert!(!truncated);
    assert_eq!(facts.len(), 1);
    assert_eq!(
        (
            facts[0].subject.as_str(),
            facts[0].predicate.as_str(),
            facts[0].object.as_str()
        ),
        ("Payments service", "owned_by", "Team Ledger")
    );
    assert_eq!(facts[0].valid_to, None);

    // Remembering by alias updates the same entity; a second hop is reachable.
    let again = store
        .remember(
            &tenant,
            &namespace,
            &[input("payments", "", &["pay"], &[])],
            "test",
            110,
        )
        .await
        .unwrap();
    assert_eq!(again[0].id, payments.id);
    assert_eq!(
        again[0].aliases,
        vec!["payments".to_owned(), "pay".to_owned()]
    );
    assert_eq!(again[0].entity_type, "service");
    store
        .remember(
            &tenant,
            &namespace,
            &[input(
                "Team Ledger",
                "team",
                &[],
                &[("located_in", "Berlin")],
            )],
            "test",
            120,
        )
        .await
        .unwrap();
    let (two_hops, _) = store
        .memory_facts(
            &tenant,
            &namespace,
            std::slice::from_ref(&payments.id),
            2,
            80,
        )
        .await
        .unwrap();
    let mut seen: Vec<(String, u32)> = two_hops
        .iter()
        .map(|f| (f.predicate.clone(), f.hop))
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![("located_in".to_owned(), 2), ("owned_by".to_owned(), 1)]
    );
    let (one, truncated) = store
        .memory_facts(
            &tenant,
            &namespace,
            std::slice::from_ref(&payments.id),
            2,
            1,
        )
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert!(truncated);

    // A new object for the same predicate supersedes the old fact.
    store
        .remember(
            &tenant,
            &namespace,
            &[input(
                "Payments service",
                "service",
                &[],
                &[("owned_by", "Team Core")],
            )],
            "test",
            130,
        )
        .await
        .unwrap();
    let (current, _) = store
        .memory_facts(
            &tenant,
            &namespace,
            std::slice::from_ref(&payments.id),
            1,
            80,
        )
        .await
        .unwrap();
    let owners: Vec<&str> = current
        .iter()
        .filter(|f| f.predicate == "owned_by")
        .map(|f| f.object.as_str())
        .collect();
    assert_eq!(owners, vec!["Team Core"]);

    // Another tenant with the same names sees nothing of this one, and vice versa.
    assert!(
        store
            .memory_entities(
                &other_tenant,
                &other_namespace,
                std::slice::from_ref(&payments.id)
            )
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .memory_entities(
                &other_tenant,
                &namespace,
                std::slice::from_ref(&payments.id)
            )
            .await
            .unwrap()
            .is_empty()
    );
    let theirs = store
        .remember(
            &other_tenant,
            &other_namespace,
            &[input("Payments service", "service", &[], &[])],
            "test",
            140,
        )
        .await
        .unwrap();
    assert_ne!(theirs[0].id, payments.id);
    assert_eq!(
        store
            .memory_corpus(&other_tenant, &other_namespace)
            .await
            .unwrap()
            .len(),
        1
    );
    // The corpus lists remembered entities only, each with its current facts' text:
    // values (Berlin, Team Core) are not entries, and the superseded owner is found by
    // nothing.
    let corpus = store.memory_corpus(&tenant, &namespace).await.unwrap();
    let mut documents: Vec<(&str, Vec<String>, Vec<String>)> = corpus
        .iter()
        .map(|d| {
            let mut facts = d.facts.clone();
            facts.sort();
            (d.entity.name.as_str(), facts, d.predicates.clone())
        })
        .collect();
    documents.sort();
    let text = |facts: &[&str], predicates: &[&str]| {
        (
            facts.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>(),
            predicates
                .iter()
                .map(|p| (*p).to_owned())
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        documents
            .iter()
            .map(|(name, facts, predicates)| (*name, (facts.clone(), predicates.clone())))
            .collect::<Vec<_>>(),
        vec![
            ("Payments service", text(&["Team Core"], &["owned by"])),
            ("Team Ledger", text(&["Berlin"], &["located in"])),
        ]
    );

    // A fact about another entity: stated while remembering its object.
    store
        .remember(
            &tenant,
            &namespace,
            &[EntityInput {
                name: "InvoiceService".into(),
                entity_type: "service".into(),
                aliases: vec![],
                facts: vec![FactInput {
                    predicate: "writes_to".into(),
                    object: String::new(),
                    subject: "OrdersDB".into(),
                }],
            }],
            "test",
            135,
        )
        .await
        .unwrap();
    let (about, _) = store
        .memory_facts(
            &tenant,
            &namespace,
            &[entity_id(&namespace, "InvoiceService")],
            1,
            80,
        )
        .await
        .unwrap();
    assert_eq!(
        about
            .iter()
            .map(|f| (f.subject.as_str(), f.predicate.as_str(), f.object.as_str()))
            .collect::<Vec<_>>(),
        vec![("OrdersDB", "writes_to", "InvoiceService")]
    );
    let corpus = store.memory_corpus(&tenant, &namespace).await.unwrap();
    let facts_of = |name: &str| {
        corpus
            .iter()
            .find(|d| d.entity.name == name)
            .map(|d| (d.facts.clone(), d.predicates.clone()))
            .unwrap_or_default()
    };
    // The names a fact connects, and its predicate apart (a verb alone is no match).
    assert_eq!(
        facts_of("OrdersDB"),
        (
            vec!["InvoiceService".to_owned()],
            vec!["writes to".to_owned()]
        )
    );
    assert_eq!(
        facts_of("InvoiceService"),
        (vec!["OrdersDB".to_owned()], vec!["writes to".to_owned()])
    );

    // Forget by alias: the entity, its aliases and its facts go.
    let version = store.memory_version(&tenant, &namespace).await.unwrap();
    let (forgotten, facts_removed) = store
        .forget(&tenant, &namespace, "pay")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(forgotten, payments.id);
    assert!(facts_removed >= 1);
    assert!(
        store
            .memory_entities(&tenant, &namespace, std::slice::from_ref(&payments.id))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .forget(&tenant, &namespace, "payments")
            .await
            .unwrap()
            .is_none()
    );
    assert_ne!(
        store.memory_version(&tenant, &namespace).await.unwrap(),
        version
    );
    let (left, _) = store
        .memory_facts(
            &tenant,
            &namespace,
            &[entity_id(&namespace, "Team Core")],
            1,
            80,
        )
        .await
        .unwrap();
    assert!(
        left.is_empty(),
        "facts of a forgotten entity go with it: {left:?}"
    );
    // The value only its facts held went with it; values others hold stay.
    assert!(
        store
            .memory_entities(&tenant, &namespace, &[entity_id(&namespace, "Team Core")])
            .await
            .unwrap()
            .is_empty(),
        "an orphaned value is deleted"
    );
    assert_eq!(
        store
            .memory_entities(&tenant, &namespace, &[entity_id(&namespace, "Berlin")])
            .await
            .unwrap()
            .len(),
        1
    );
    let corpus = store.memory_corpus(&tenant, &namespace).await.unwrap();
    assert!(
        corpus.iter().all(|d| d.entity.name != "Payments service"
            && d.facts
                .iter()
                .all(|f| !f.contains("Payments service") && !f.contains("Team Core"))),
        "nothing of a forgotten entity is findable: {corpus:?}"
    );
    // The other tenant's entity of the same name is untouched.
    assert_eq!(
        store
            .memory_entities(&other_tenant, &other_namespace, &[theirs[0].id.clone()])
            .await
            .unwrap()
            .len(),
        1
    );

    // The value type is reserved: a remembered entity is always an entry.
    assert!(
        store
            .remember(
                &tenant,
                &namespace,
                &[input("x", codectx_graph::memory::VALUE_TYPE, &[], &[])],
                "test",
                150
            )
            .await
            .is_err()
    );
    // Bad input is refused.
    assert!(
        store
            .remember(
                &tenant,
                &namespace,
                &[input("x", "t", &[], &[("Not Snake", "y")])],
                "test",
                150
            )
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_memory_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    contract(&SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_memory_caps_a_namespace_at_5000_entities() {
    let dir = tempfile::tempdir().unwrap();
    caps_a_namespace_at_5000_entities(
        &SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_memory_caps_a_namespace_at_5000_entities() {
    caps_a_namespace_at_5000_entities(&hugegraph().await).await;
}

async fn caps_a_namespace_at_5000_entities(store: &dyn MemoryStore) {
    let inputs: Vec<EntityInput> = (0..5_000)
        .map(|i| input(&format!("entity {i}"), "thing", &[], &[]))
        .collect();
    store
        .remember("org_a", "org_a|g", &inputs, "test", 1)
        .await
        .unwrap();
    let error = store
        .remember(
            "org_a",
            "org_a|g",
            &[input("one more", "thing", &[], &[])],
            "test",
            2,
        )
        .await
        .unwrap_err();
    assert_eq!(error.limit(), Some(5_000));
    // Updating an existing entity is still allowed.
    assert!(
        store
            .remember(
                "org_a",
                "org_a|g",
                &[input("entity 7", "thing", &["seven"], &[])],
                "test",
                3
            )
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_memory_meets_the_contract() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_NEO4J_URI is not set: run the tests with `make test`, which starts Neo4j 5.26")
    });
    contract(&Neo4jGraphStore::connect(&uri, "neo4j", "").await.unwrap()).await;
}

async fn hugegraph() -> HugeGraphStore {
    let uri = std::env::var("CODECTX_TEST_HUGEGRAPH_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_HUGEGRAPH_URI is not set: run the tests with `make test`, which starts HugeGraph 1.5")
    });
    let password = std::env::var("CODECTX_TEST_HUGEGRAPH_PASSWORD")
        .expect("CODECTX_TEST_HUGEGRAPH_PASSWORD is set with CODECTX_TEST_HUGEGRAPH_URI");
    HugeGraphStore::connect(&uri, "admin", &password)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to HugeGraph at {uri}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_memory_meets_the_contract() {
    contract(&hugegraph().await).await;
}
