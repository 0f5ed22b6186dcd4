//! Java golden test over tests/fixtures/java: overloads, constructors, nested classes,
//! implicit `this`, typed fields and locals, implements, throw messages, @Test methods.

mod common;

use codectx_graph::Confidence::{Dispatch, Resolved, Unresolved};
use codectx_graph::{Direction, EdgeKind, GraphStore};
use common::index_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_symbols_calls_implements_tests() {
    let g = index_fixture("java").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    let expected: Vec<(&str, &str, u32, u32)> = vec![
        ("com.shop.Inventory", "interface", 7, 9),
        ("com.shop.Inventory.count", "method", 8, 8),
        ("com.shop.Store", "class", 9, 45),
        ("com.shop.Store.Auditor", "class", 40, 44),
        ("com.shop.Store.Auditor.record", "method", 41, 43),
        ("com.shop.Store.Store", "method", 13, 15),
        // Overloads share a qualified name and differ in signature (and id).
        ("com.shop.Store.add", "method", 18, 20),
        ("com.shop.Store.add", "method", 23, 29),
        ("com.shop.Store.count", "method", 31, 34),
        ("com.shop.Store.reset", "method", 36, 38),
        ("com.shop.StoreTest", "class", 5, 18),
        ("com.shop.StoreTest.addsItems", "method", 6, 11),
        ("com.shop.StoreTest.assertCount", "method", 13, 17),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n.to_owned(), k.to_owned(), s, e))
        .collect();
    assert_eq!(g.symbols().await, expected);

    let overloads = g
        .store
        .nodes_by_qualified_name(&g.graph, "com.shop.Store.add", 10)
        .await
        .unwrap();
    let signatures: Vec<&str> = overloads.iter().map(|n| n.signature.as_str()).collect();
    assert_eq!(
        signatures,
        vec![
            "public void add(String item)",
            "public void add(String item, int amount)"
        ]
    );
    assert_eq!(overloads[0].summary, "Adds one item.");
    assert_ne!(overloads[0].id, overloads[1].id);
    // The one-argument overload calls the two-argument one (chosen by argument count).
    let calls = g
        .store
        .edges(
            &g.graph,
            &overloads[0].id,
            &[EdgeKind::Calls],
            Direction::Outgoing,
            10,
        )
        .await
        .unwrap();
    assert_eq!(calls.hits.len(), 1);
    assert_eq!(calls.hits[0].node.id, overloads[1].id);
    assert_eq!(
        (calls.hits[0].line, calls.hits[0].confidence),
        (19, Resolved)
    );
    // Field types (Map, Auditor via this.auditor) and implicit `this` calls.
    let calls = g
        .store
        .edges(
            &g.graph,
            &overloads[1].id,
            &[EdgeKind::Calls],
            Direction::Outgoing,
            10,
        )
        .await
        .unwrap();
    let calls: Vec<(String, u32, codectx_graph::Confidence)> = calls
        .hits
        .into_iter()
        .map(|h| (h.node.qualified_name, h.line, h.confidence))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("IllegalArgumentException".to_owned(), 25, Unresolved),
            ("java.util.Map.merge".to_owned(), 27, Unresolved),
            ("com.shop.Store.Auditor.record".to_owned(), 28, Resolved),
        ]
    );
    assert_eq!(
        g.callees("com.shop.Store.Store").await,
        vec![("com.shop.Store.reset".to_owned(), 14, Resolved)]
    );
    // Declared local and parameter types.
    assert_eq!(
        g.callees("com.shop.StoreTest.addsItems").await,
        vec![
            ("com.shop.Store".to_owned(), 8, Resolved),
            ("com.shop.Store.add".to_owned(), 9, Resolved),
            ("com.shop.StoreTest.assertCount".to_owned(), 10, Resolved),
        ]
    );
    assert_eq!(
        g.callees("com.shop.StoreTest.assertCount").await,
        vec![
            ("com.shop.Inventory.count".to_owned(), 14, Resolved),
            // Store implements Inventory: the call dispatches to its count too.
            ("com.shop.Store.count".to_owned(), 14, Dispatch),
            ("AssertionError".to_owned(), 15, Unresolved)
        ]
    );

    assert_eq!(
        g.implementors("com.shop.Inventory").await,
        vec!["com.shop.Store"]
    );
    assert!(g.symbol("com.shop.StoreTest.addsItems").await.test);
    assert!(!g.symbol("com.shop.StoreTest.assertCount").await.test);
    assert_eq!(
        g.tests_of("com.shop.Store").await,
        vec!["com.shop.StoreTest.addsItems"]
    );
    assert_eq!(
        g.errors_in("src/main/java/com/shop/Store.java").await,
        vec![("amount must not be negative".to_owned(), 25)]
    );
    assert_eq!(g.lookup("Store.count").await, vec!["com.shop.Store.count"]);
    assert_eq!(
        g.lookup("Auditor.record").await,
        vec!["com.shop.Store.Auditor.record"]
    );
}
