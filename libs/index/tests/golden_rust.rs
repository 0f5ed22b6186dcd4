//! Rust golden test over tests/fixtures/rust: crate-named module paths, traits with
//! default methods, trait impls in another module than the type, generic impls, macro
//! arguments, panic!/bail! messages and #[test] functions.

mod common;

use codectx_graph::Confidence::{Resolved, Unresolved};
use common::index_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_symbols_calls_implements_tests() {
    let g = index_fixture("rust").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    let expected: Vec<(&str, &str, u32, u32)> = vec![
        ("mini_web::Handler", "interface", 8, 14),
        ("mini_web::Handler::handle", "method", 9, 9),
        ("mini_web::Handler::name", "method", 11, 13),
        ("mini_web::VERSION", "constant", 40, 40),
        ("mini_web::Wrapper", "type", 17, 19),
        // The generic impl's method, generic arguments dropped.
        ("mini_web::Wrapper::get", "method", 22, 24),
        ("mini_web::app", "function", 34, 38),
        ("mini_web::routing::Router", "type", 4, 6),
        ("mini_web::routing::Router::dispatch", "method", 22, 27),
        // `impl Handler for Router` in lib.rs names the type where it is defined.
        ("mini_web::routing::Router::handle", "method", 28, 30),
        ("mini_web::routing::Router::new", "method", 9, 11),
        ("mini_web::routing::Router::route", "method", 14, 20),
        ("mini_web::tests::app_routes_root", "function", 47, 50),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n.to_owned(), k.to_owned(), s, e))
        .collect();
    assert_eq!(g.symbols().await, expected);

    let route = g.symbol("mini_web::routing::Router::route").await;
    assert_eq!(
        route.signature,
        "pub fn route(&self, path: &str, target: &str) -> &Self"
    );
    assert_eq!(route.summary, "Adds a route.");

    // `let router = Router::new()` types `router`; `self.dispatch` goes to the impl type.
    assert_eq!(
        g.callees("mini_web::app").await,
        vec![
            ("mini_web::routing::Router::new".to_owned(), 35, Resolved),
            ("mini_web::routing::Router::route".to_owned(), 36, Resolved),
        ]
    );
    assert_eq!(
        g.callees("mini_web::routing::Router::handle").await,
        vec![(
            "mini_web::routing::Router::dispatch".to_owned(),
            29,
            Resolved
        )]
    );
    // A field of a known external type is not matched by name to an unrelated `get`.
    assert_eq!(
        g.callees("mini_web::routing::Router::dispatch").await,
        vec![
            ("std::collections::HashMap::get".to_owned(), 23, Unresolved),
            ("target::clone".to_owned(), 24, Unresolved)
        ]
    );
    // Calls inside assert_eq! are recovered from the macro's tokens.
    assert_eq!(
        g.callees("mini_web::tests::app_routes_root").await,
        vec![
            ("mini_web::app".to_owned(), 48, Resolved),
            ("mini_web::routing::Router::handle".to_owned(), 49, Resolved),
        ]
    );

    assert_eq!(
        g.implementors("mini_web::Handler").await,
        vec!["mini_web::routing::Router"]
    );
    assert_eq!(
        g.tests_of("mini_web::app").await,
        vec!["mini_web::tests::app_routes_root"]
    );
    assert_eq!(
        g.tests_of("mini_web::routing::Router::handle").await,
        vec!["mini_web::tests::app_routes_root"]
    );
    assert_eq!(
        g.errors_in("src/routing/mod.rs").await,
        vec![
            ("route path must not be empty".to_owned(), 16),
            ("no route for path".to_owned(), 25)
        ]
    );

    for selector in [
        "Router::route",
        "routing::Router::route",
        "mini_web::routing::Router::route",
        "Router.route",
    ] {
        assert_eq!(
            g.lookup(selector).await,
            vec!["mini_web::routing::Router::route"],
            "{selector}"
        );
    }
}
