//! Public paths that are not where a symbol is defined: Go type aliases
//! (tests/fixtures/reexports/go). JS/TS re-exports are in golden_typescript.rs, Python
//! `__init__` and Rust `pub use` in golden_references.rs and golden_rust.rs.

mod common;

use common::{fixture, index_path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_type_aliases_answer_with_the_definition() {
    let g = index_path(&fixture("reexports/go"), "reexports-go").await;
    let fs = |name: &str| format!("example.com/alias/fs.{name}");
    let os = |name: &str| format!("example.com/alias/os.{name}");
    // `type FileInfo = fs.FileInfo`: asked by its public path, the answer is the
    // definition, which lists the paths it is exported as.
    assert_eq!(g.lookup(&os("FileInfo")).await, vec![fs("FileInfo")]);
    assert_eq!(g.lookup("os.FileInfo").await, vec![fs("FileInfo")]);
    assert_eq!(g.exporters(&fs("FileInfo")).await, vec![os("FileInfo")]);
    // Grouped aliases too.
    assert_eq!(g.lookup(&os("FileMode")).await, vec![fs("FileMode")]);
    assert_eq!(g.exporters(&fs("FileMode")).await, vec![os("FileMode")]);
    // An alias of a type outside the repository answers with the alias itself.
    assert_eq!(g.lookup(&os("Duration")).await, vec![os("Duration")]);
    // A defined type (`type Info fs.FileInfo`) is a type of its own.
    assert_eq!(g.lookup(&os("Info")).await, vec![os("Info")]);
    assert!(
        g.exporters(&fs("FileInfo"))
            .await
            .iter()
            .all(|e| e != &os("Info"))
    );
    // Uses through the alias reach the definition: the parameter type, and a method
    // called on it.
    let describe = "example.com/alias/app.Describe";
    assert_eq!(g.references(describe).await, vec![fs("FileInfo")]);
    assert_eq!(
        g.callees(describe)
            .await
            .into_iter()
            .map(|c| c.0)
            .collect::<Vec<_>>(),
        vec![fs("FileInfo.Name")]
    );
    assert_eq!(g.references(&os("Stat")).await, vec![fs("FileInfo")]);
}
