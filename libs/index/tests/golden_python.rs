//! Python golden test over tests/fixtures/python: modules from packages, nested classes,
//! decorators, self/super()/constructor/type-hint resolution, relative imports, raise
//! messages, unittest and pytest tests.

mod common;

use codectx_graph::Confidence::{Dispatch, Resolved, Unresolved};
use common::index_fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_symbols_calls_implements_tests() {
    let g = index_fixture("python").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    let expected: Vec<(&str, &str, u32, u32)> = vec![
        ("shop.cart.Cart", "class", 7, 18),
        ("shop.cart.Cart.__init__", "method", 8, 10),
        ("shop.cart.Cart.add", "method", 12, 15),
        ("shop.cart.Cart.cost", "method", 17, 18),
        ("shop.cart.Pricing", "class", 21, 23),
        ("shop.cart.Pricing.price_of", "method", 22, 23),
        ("shop.cart.checkout", "function", 26, 30),
        ("shop.models.Discounted", "class", 31, 34),
        ("shop.models.Discounted.total", "method", 32, 34),
        ("shop.models.Item", "class", 8, 28),
        ("shop.models.Item.Meta", "class", 24, 28),
        ("shop.models.Item.Meta.describe", "method", 27, 28),
        ("shop.models.Item.__init__", "method", 11, 13),
        // Decorated definitions start at their first decorator.
        ("shop.models.Item.label", "method", 15, 18),
        ("shop.models.Item.total", "method", 20, 22),
        ("shop.models.MAX_ITEMS", "constant", 5, 5),
        ("shop.models.format_label", "function", 37, 40),
        // tests/ has no __init__.py: the module is the file's own name.
        ("test_cart.CartTest", "class", 7, 14),
        ("test_cart.CartTest.helper", "method", 13, 14),
        ("test_cart.CartTest.test_add", "method", 8, 11),
        ("test_cart.test_checkout", "function", 17, 18),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n.to_owned(), k.to_owned(), s, e))
        .collect();
    assert_eq!(g.symbols().await, expected);

    let label = g.symbol("shop.models.Item.label").await;
    assert_eq!(label.signature, "@property def label(self) -> str");
    assert_eq!(label.summary, "The display label.");
    assert_eq!(
        g.symbol("shop.models.Item").await.summary,
        "An item for sale."
    );

    // self.attr typed in __init__, Optional[...] hints, relative `from . import models`.
    assert_eq!(
        g.callees("shop.cart.Cart.cost").await,
        vec![
            ("shop.cart.Pricing.price_of".to_owned(), 18, Resolved),
            // Discounted(Item) overrides total: the call dispatches to it too.
            ("shop.models.Discounted.total".to_owned(), 18, Dispatch),
            ("shop.models.Item.total".to_owned(), 18, Resolved)
        ]
    );
    assert_eq!(
        g.callees("shop.cart.Pricing.price_of").await,
        vec![("shop.models.format_label".to_owned(), 23, Resolved)]
    );
    // Constructor calls reach the class; typed parameters type the receiver.
    assert_eq!(
        g.callees("shop.cart.checkout").await,
        vec![
            ("shop.models.Item".to_owned(), 27, Resolved),
            ("shop.cart.Cart.add".to_owned(), 29, Resolved),
            ("shop.cart.Cart.cost".to_owned(), 30, Resolved),
        ]
    );
    assert_eq!(
        g.callees("shop.cart.Cart.__init__").await,
        vec![("shop.cart.Pricing".to_owned(), 10, Resolved)]
    );
    // super() goes to the base class; a decorated method calls a module function.
    assert_eq!(
        g.callees("shop.models.Discounted.total").await,
        vec![("shop.models.Item.total".to_owned(), 33, Resolved)]
    );
    assert_eq!(
        g.callees("shop.models.Item.label").await,
        vec![("shop.models.format_label".to_owned(), 18, Resolved)]
    );
    // Builtins and methods of untyped values stay unresolved, named as written.
    assert_eq!(
        g.callees("shop.cart.Cart.add").await,
        vec![
            ("OverflowError".to_owned(), 14, Unresolved),
            ("self.items.append".to_owned(), 15, Unresolved)
        ]
    );

    // Base classes.
    assert_eq!(
        g.implements("shop.models.Discounted").await,
        vec!["shop.models.Item"]
    );
    assert_eq!(
        g.implementors("shop.models.Item").await,
        vec!["shop.models.Discounted"]
    );
    assert_eq!(
        g.implements("test_cart.CartTest").await,
        vec!["unittest.TestCase"]
    );

    // unittest methods and pytest functions are tests; helpers are not.
    assert_eq!(
        g.tests_of("shop.cart.Cart.add").await,
        vec!["test_cart.CartTest.test_add"]
    );
    assert_eq!(
        g.tests_of("shop.cart.checkout").await,
        vec!["test_cart.test_checkout"]
    );
    assert_eq!(
        g.tests_of("shop.models.Item").await,
        vec!["test_cart.CartTest.test_add"]
    );
    assert!(!g.symbol("test_cart.CartTest.helper").await.test);
    assert!(g.symbol("test_cart.CartTest.test_add").await.test);

    assert_eq!(
        g.errors_in("shop/models.py").await,
        vec![("name must not be empty".to_owned(), 39)]
    );
    assert_eq!(
        g.errors_in("shop/cart.py").await,
        vec![("cart is full".to_owned(), 14)]
    );

    for selector in ["Item.total", "models.Item.total", "shop.models.Item.total"] {
        assert_eq!(
            g.lookup(selector).await,
            vec!["shop.models.Item.total"],
            "{selector}"
        );
    }
    assert_eq!(
        g.lookup("total").await,
        vec!["shop.models.Item.total", "shop.models.Discounted.total"]
    );
    assert_eq!(
        g.lookup("Meta.describe").await,
        vec!["shop.models.Item.Meta.describe"]
    );
}

/// A function whose calls of two base methods both dispatch to one override gets one
/// dispatch edge to it, at the first of those calls, whatever order the graph's ids put
/// the base methods in (ids differ from graph to graph).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispatch_edge_is_at_the_first_call_that_reaches_the_override() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("shapes.py"),
        "class A:\n    def run(self):\n        return 1\n\n\n\
         class B:\n    def run(self):\n        return 2\n\n\n\
         class C(A, B):\n    def run(self):\n        return 3\n\n\n\
         def use(a: A, b: B):\n    b.run()\n    a.run()\n",
    )
    .unwrap();
    for name in ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"] {
        let g = common::index_path(repo.path(), name).await;
        assert_eq!(
            g.callees("shapes.use").await,
            vec![
                ("shapes.B.run".to_owned(), 17, Resolved),
                ("shapes.C.run".to_owned(), 17, Dispatch),
                ("shapes.A.run".to_owned(), 18, Resolved),
            ],
            "graph {name}"
        );
    }
}
