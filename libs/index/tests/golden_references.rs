//! References that are not calls, and module-level variables, in Go, Python, JavaScript
//! and Rust (tests/fixtures/references): package variables and constants read, types in
//! signatures and literals, functions passed as values, `self` properties, names reached
//! through a package's re-exports; locals that shadow a package name, struct field keys
//! and builtin container methods on untyped receivers are not references.

mod common;

use codectx_graph::Confidence;
use common::{fixture, index_path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_package_variables_constants_and_types() {
    let g = index_path(&fixture("references/go"), "refs-go").await;
    let store = |name: &str| format!("example.com/refs/store.{name}");
    assert_eq!(
        g.symbol(&store("ErrMissing")).await.kind.as_str(),
        "variable"
    );
    assert_eq!(
        g.symbol(&store("defaultLimit")).await.kind.as_str(),
        "variable"
    );
    assert_eq!(g.symbol(&store("MaxKeys")).await.kind.as_str(), "constant");
    // A type in the signature and a literal, a package variable and a sentinel error;
    // `Name:` in the literal is a field key, not a reference.
    assert_eq!(
        g.references(&store("Lookup")).await,
        vec![store("ErrMissing"), store("Item"), store("defaultLimit")]
    );
    // A local of the same name shadows the package variable.
    assert!(g.references(&store("Shadowed")).await.is_empty());
    // A test covers what raises the message it asserts on.
    assert_eq!(
        g.tests_of(&store("ErrMissing")).await,
        vec![store("TestLookupMissing")]
    );
    // A variable's initializer refers to what it reads.
    assert_eq!(
        g.references(&store("defaultLimit")).await,
        vec![store("MaxKeys")]
    );
    // Across packages through the import; the call stays a call.
    assert_eq!(
        g.references("example.com/refs/app.Find").await,
        vec![store("ErrMissing")]
    );
    assert_eq!(
        g.callees("example.com/refs/app.Find")
            .await
            .into_iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        vec![store("Lookup")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_module_variables_properties_and_reexports() {
    let g = index_path(&fixture("references/python"), "refs-python").await;
    assert_eq!(
        g.symbol("pkg.impl.registry").await.kind.as_str(),
        "variable"
    );
    assert_eq!(g.symbol("pkg.impl.TIMEOUT").await.kind.as_str(), "constant");
    assert_eq!(
        g.references("pkg.impl.Config.limit").await,
        vec!["pkg.impl.TIMEOUT"]
    );
    // `registry.items()`: a builtin method on a dict, not the one `items` method of the
    // repository (no name_match edge to Config.items).
    assert_eq!(
        g.references("pkg.impl.Config.items").await,
        vec!["pkg.impl.registry"]
    );
    assert!(
        g.callees("pkg.impl.Config.items")
            .await
            .iter()
            .all(|c| c.0 != "pkg.impl.Config.items")
    );
    // The annotation's class, the module variable written, the property read through
    // the typed parameter; the local `timeout` is not a reference.
    assert_eq!(
        g.references("pkg.impl.helper").await,
        vec![
            "pkg.impl.Config",
            "pkg.impl.Config.limit",
            "pkg.impl.registry"
        ]
    );
    assert!(g.references("pkg.impl.shadow").await.is_empty());
    // Forward references in string annotations.
    assert_eq!(
        g.references("pkg.impl.clone").await,
        vec!["pkg.impl.Config"]
    );
    // `pkg.helper` and `pkg.Config` reach the definitions through `pkg/__init__.py`.
    let callees: Vec<(String, Confidence)> = g
        .callees("main.run")
        .await
        .into_iter()
        .map(|c| (c.0, c.2))
        .collect();
    assert!(
        callees.contains(&("pkg.impl.helper".into(), Confidence::Resolved)),
        "{callees:?}"
    );
    assert!(
        callees.contains(&("pkg.impl.Config".into(), Confidence::Resolved)),
        "{callees:?}"
    );
    assert!(
        callees.iter().all(|c| c.0 != "pkg.impl.Config.items"),
        "{callees:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_module_bindings_and_functions_as_values() {
    let g = index_path(&fixture("references/js"), "refs-js").await;
    assert_eq!(g.symbol("lib/util.cache").await.kind.as_str(), "variable");
    assert_eq!(g.symbol("lib/util.LIMIT").await.kind.as_str(), "constant");
    assert_eq!(
        g.references("lib/util.remember").await,
        vec!["lib/util.LIMIT", "lib/util.cache"]
    );
    assert!(g.references("lib/util.forget").await.is_empty());
    assert_eq!(
        g.references("lib/util.each").await,
        vec!["lib/util.remember"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_constants_and_types() {
    let g = index_path(&fixture("references/rust"), "refs-rust").await;
    assert_eq!(
        g.references("refs::Table::has_room").await,
        vec!["refs::CAPACITY"]
    );
    assert_eq!(
        g.references("refs::Table::new").await,
        vec!["refs::CAPACITY", "refs::Table"]
    );
    assert_eq!(g.references("refs::copy").await, vec!["refs::Table"]);
    // `pub use` in an inline module: the public path finds the definition.
    assert_eq!(
        g.lookup("refs::traits::Position").await,
        vec!["refs::inner::Position"]
    );
    assert_eq!(
        g.lookup("traits::Position").await,
        vec!["refs::inner::Position"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_through_interfaces_and_base_classes_dispatch() {
    // Go: a call on an interface method reaches every implementation (structural).
    let g = index_path(&fixture("references/go"), "refs-go-dispatch").await;
    let mut callees: Vec<(String, Confidence)> = g
        .callees("example.com/refs/store.Save")
        .await
        .into_iter()
        .map(|c| (c.0, c.2))
        .collect();
    callees.sort();
    assert_eq!(
        callees,
        vec![
            (
                "example.com/refs/store.(*memory).Put".into(),
                Confidence::Dispatch
            ),
            (
                "example.com/refs/store.Backend.Put".into(),
                Confidence::Resolved
            ),
            (
                "example.com/refs/store.disk.Put".into(),
                Confidence::Dispatch
            ),
        ]
    );
    // Python: `self.step()` in a base class also reaches the subclass's override.
    let g = index_path(&fixture("references/python"), "refs-python-dispatch").await;
    let mut callees: Vec<(String, Confidence)> = g
        .callees("pkg.impl.Job.run")
        .await
        .into_iter()
        .map(|c| (c.0, c.2))
        .collect();
    callees.sort();
    assert_eq!(
        callees,
        vec![
            ("pkg.impl.FastJob.step".into(), Confidence::Dispatch),
            ("pkg.impl.Job.step".into(), Confidence::Resolved),
        ]
    );
}
