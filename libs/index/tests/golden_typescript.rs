//! TypeScript golden test over tests/fixtures/typescript: classes, interfaces,
//! `implements`, arrow functions bound to names and class fields, `this.field` through
//! typed fields, typed parameters, imports across modules, TSX, throw messages, and
//! vitest `describe`/`it` cases.

mod common;

use codectx_graph::Confidence::{Resolved, Unresolved};
use common::index_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_symbols_calls_implements_tests() {
    let g = index_fixture("typescript").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    let expected: Vec<(&str, &str, u32, u32)> = vec![
        ("src/app.empty", "function", 8, 10),
        ("src/app.total", "function", 4, 6),
        ("src/cart.Cart", "class", 3, 20),
        ("src/cart.Cart.add", "method", 7, 10),
        // An arrow function assigned to a class field is a method spanning the field.
        ("src/cart.Cart.summary", "method", 17, 19),
        ("src/cart.Cart.total", "method", 12, 14),
        ("src/cart.checkout", "function", 22, 26),
        ("src/pricing.FlatPricer", "class", 6, 15),
        ("src/pricing.FlatPricer.constructor", "method", 7, 7),
        ("src/pricing.FlatPricer.price", "method", 9, 14),
        ("src/pricing.Pricer", "interface", 2, 4),
        ("src/pricing.Pricer.price", "method", 3, 3),
        // `export const round = (..) => ..` is a function spanning the declaration.
        ("src/pricing.round", "function", 18, 18),
        ("src/widget.Price", "function", 3, 5),
        ("test/cart.test.Cart > totals items", "function", 6, 10),
        ("test/cart.test.checks out", "function", 13, 15),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n.to_owned(), k.to_owned(), s, e))
        .collect();
    assert_eq!(g.symbols().await, expected);
    assert_eq!(
        g.symbol("src/pricing.round").await.summary,
        "Rounds to cents."
    );
    assert_eq!(
        g.symbol("src/cart.Cart.summary").await.summary,
        "Totals with an arrow-function field."
    );

    assert_eq!(
        g.callees("src/cart.Cart.total").await,
        vec![
            ("Array.reduce".to_owned(), 13, Unresolved),
            ("src/pricing.FlatPricer.price".to_owned(), 13, Resolved),
            ("src/pricing.round".to_owned(), 13, Resolved),
        ]
    );
    assert_eq!(
        g.callees("src/cart.Cart.summary").await,
        vec![("src/cart.Cart.total".to_owned(), 18, Resolved)]
    );
    assert_eq!(
        g.callees("src/cart.checkout").await,
        vec![
            ("src/cart.Cart".to_owned(), 23, Resolved),
            ("src/cart.Cart.add".to_owned(), 24, Resolved),
            ("src/cart.Cart.total".to_owned(), 25, Resolved),
            ("src/pricing.FlatPricer.price".to_owned(), 25, Resolved),
        ]
    );
    assert_eq!(
        g.callees("src/widget.Price").await,
        vec![("src/pricing.round".to_owned(), 4, Resolved)]
    );

    assert_eq!(
        g.implementors("src/pricing.Pricer").await,
        vec!["src/pricing.FlatPricer"]
    );
    assert_eq!(
        g.tests_of("src/cart.Cart.total").await,
        vec!["test/cart.test.Cart > totals items"]
    );
    assert_eq!(
        g.tests_of("src/cart.checkout").await,
        vec!["test/cart.test.checks out"]
    );
    assert_eq!(
        g.tests_of("src/pricing.FlatPricer").await,
        vec!["test/cart.test.checks out"]
    );
    assert_eq!(
        g.errors_in("src/pricing.ts").await,
        vec![("sku is required".to_owned(), 11)]
    );
    assert_eq!(g.lookup("Cart.total").await, vec!["src/cart.Cart.total"]);
    assert_eq!(g.lookup("round").await, vec!["src/pricing.round"]);
    // Re-exports: `export { Cart, checkout as buy } from './cart'` in src/index.ts.
    assert_eq!(g.lookup("src.Cart").await, vec!["src/cart.Cart"]);
    assert_eq!(g.lookup("src.buy").await, vec!["src/cart.checkout"]);
    // `export * from './pricing'`: every top-level symbol of the target module gets the
    // barrel's path, and imports through the barrel resolve to the definitions.
    assert_eq!(g.lookup("src.round").await, vec!["src/pricing.round"]);
    assert_eq!(
        g.lookup("src.FlatPricer").await,
        vec!["src/pricing.FlatPricer"]
    );
    assert_eq!(
        g.callees("src/app.total").await,
        vec![("src/pricing.round".to_owned(), 5, Resolved)]
    );
    // `new Cart()` through the barrel's `export { Cart } from './cart'`.
    assert_eq!(
        g.callees("src/app.empty").await,
        vec![("src/cart.Cart".to_owned(), 9, Resolved)]
    );
    assert_eq!(g.exporters("src/pricing.round").await, vec!["src.round"]);
}
