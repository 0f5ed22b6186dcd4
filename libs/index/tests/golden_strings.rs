//! String literals in Go, Python, JavaScript and Rust (tests/fixtures/strings): every part
//! of 8+ characters between interpolations and placeholders is a `string` node (raised
//! messages stay `error_message`), contained by its symbol or described by its top-level
//! statement, its signature the source line; docstrings, imports, `require` specifiers,
//! struct tags and attributes are not indexed.

mod common;

use codectx_graph::{GraphStore, Node, NodeKind};
use common::{fixture, index_path};

async fn strings(g: &common::Indexed, path: &str) -> Vec<Node> {
    g.store
        .nodes_in_path(&g.graph, path)
        .await
        .unwrap()
        .into_iter()
        .filter(|n| matches!(n.kind, NodeKind::StringLiteral | NodeKind::ErrorMessage))
        .collect()
}

fn texts(nodes: &[Node]) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = nodes
        .iter()
        .map(|n| (n.kind.as_str(), n.name.as_str()))
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_panics_formats_and_tags() {
    let g = index_path(&fixture("strings/go"), "strings-go").await;
    let found = strings(&g, "tree.go").await;
    assert_eq!(
        texts(&found),
        vec![
            (
                "error_message",
                "handlers are already registered for path '"
            ),
            ("string", "adding route"),
            ("string", "to the tree\\n"),
        ]
    );
    let panic = found
        .iter()
        .find(|n| n.kind == NodeKind::ErrorMessage)
        .unwrap();
    assert_eq!(panic.summary, "raised in example.com/strs.addRoute");
    assert!(
        panic.signature.starts_with("panic(\"handlers are already"),
        "{}",
        panic.signature
    );
    let format = found.iter().find(|n| n.name == "adding route").unwrap();
    assert_eq!(format.summary, "in example.com/strs.addRoute");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_fstrings_percent_formats_and_docstrings() {
    let g = index_path(&fixture("strings/py"), "strings-py").await;
    assert_eq!(
        texts(&strings(&g, "app.py").await),
        vec![
            ("string", "hello from the application module"),
            ("string", "no template named"),
            ("string", "rendered"),
            ("string", "templates for"),
            ("string", "was found"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_concatenations_templates_and_top_level_statements() {
    let g = index_path(&fixture("strings/js"), "strings-js").await;
    let found = strings(&g, "lib.js").await;
    assert_eq!(
        texts(&found),
        vec![
            ("error_message", "Most middleware (like"),
            ("string", "bodyParser"),
            ("string", "cookieParser"),
            ("string", "has signed in from a new device"),
            (
                "string",
                "is no longer bundled with Express and must be installed separately"
            ),
        ]
    );
    // Outside any symbol: the top-level statement says where.
    let tail = found
        .iter()
        .find(|n| n.name.starts_with("is no longer"))
        .unwrap();
    assert_eq!(
        tail.summary,
        "in the top-level statement `removed.forEach(function (name) {`"
    );
    let template = found
        .iter()
        .find(|n| n.name.starts_with("has signed"))
        .unwrap();
    assert_eq!(template.summary, "in lib.describe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_format_strings_and_attributes() {
    let g = index_path(&fixture("strings/rs"), "strings-rs").await;
    let found = strings(&g, "src/lib.rs").await;
    let names: Vec<&str> = found.iter().map(|n| n.name.as_str()).collect();
    assert!(
        names.contains(&"capacity must be positive, got"),
        "{names:?}"
    );
    assert!(names.contains(&"instead of zero"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("strict-capacity")),
        "{names:?}"
    );
}
