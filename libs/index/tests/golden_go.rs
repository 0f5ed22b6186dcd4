//! Go golden test over tests/fixtures/go: exact symbols, qualified names, line ranges, and
//! calls, implements (implicit interfaces), tested-by and error edges.

mod common;

use codectx_graph::Confidence::{Resolved, Unresolved};
use codectx_graph::GraphStore;
use common::index_fixture;

const SERVER: &str = "example.com/shop/server";
const STORE: &str = "example.com/shop/store";

fn q(package: &str, name: &str) -> String {
    format!("{package}.{name}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_symbols_calls_implements_tests() {
    let g = index_fixture("go").await;
    assert!(g.report.skipped.is_empty(), "{:?}", g.report.skipped);
    assert_eq!(g.report.files, 6, "go.mod, README.md and four Go files");

    let symbols: Vec<(String, String, u32, u32)> = g.symbols().await;
    let expected: Vec<(String, &str, u32, u32)> = vec![
        (q(SERVER, "(*Server).Serve"), "method", 26, 35),
        (q(SERVER, "(*Server).render"), "method", 37, 39),
        (q(SERVER, "Handler"), "interface", 11, 13),
        // An interface's method is a symbol (calls through the interface resolve to it).
        (q(SERVER, "Handler.Serve"), "method", 12, 12),
        (q(SERVER, "NewServer"), "function", 21, 23),
        (q(SERVER, "Run"), "function", 51, 56),
        (q(SERVER, "Server"), "type", 16, 18),
        (q(SERVER, "Server.Name"), "method", 42, 44),
        (q(SERVER, "TestFormat"), "function", 12, 16),
        (q(SERVER, "TestServe"), "function", 5, 10),
        (q(SERVER, "format"), "function", 46, 48),
        (q(STORE, "(*DB).Get"), "method", 17, 22),
        (q(STORE, "(*DB).Serve"), "method", 25, 27),
        (q(STORE, "Cached"), "type", 30, 32),
        (q(STORE, "DB"), "type", 7, 9),
        (q(STORE, "MaxItems"), "constant", 4, 4),
        (q(STORE, "Open"), "function", 12, 14),
        (format!("{STORE}_test.TestOpen"), "function", 10, 14),
    ];
    let expected: Vec<(String, String, u32, u32)> = expected
        .into_iter()
        .map(|(n, k, s, e)| (n, k.to_owned(), s, e))
        .collect();
    assert_eq!(symbols, expected);

    // Signature and summary of a pointer-receiver method.
    let serve = g.symbol(&q(SERVER, "(*Server).Serve")).await;
    assert_eq!(
        serve.signature,
        "func (s *Server) Serve(path string) (string, error)"
    );
    assert_eq!(serve.summary, "Serve handles a path on a pointer receiver.");
    assert!(!serve.fingerprint.is_empty());

    // Calls through the receiver's field (s.db.Get), the receiver (s.render), imports
    // (errors.New, fmt.Errorf: outside the repository, kept as unresolved).
    assert_eq!(
        g.callees(&q(SERVER, "(*Server).Serve")).await,
        vec![
            ("errors.New".to_owned(), 28, Unresolved),
            (q(STORE, "(*DB).Get"), 30, Resolved),
            ("fmt.Errorf".to_owned(), 32, Unresolved),
            (q(SERVER, "(*Server).render"), 34, Resolved),
        ]
    );
    // A constructor's declared result type types the variable (srv := NewServer(db)).
    assert_eq!(
        g.callees(&q(SERVER, "Run")).await,
        vec![
            (q(STORE, "Open"), 52, Resolved),
            (q(SERVER, "NewServer"), 53, Resolved),
            (q(SERVER, "(*Server).Serve"), 54, Resolved),
            (q(SERVER, "Server.Name"), 55, Resolved),
            ("fmt.Println".to_owned(), 55, Unresolved),
        ]
    );
    assert_eq!(
        g.callers(&q(SERVER, "format")).await,
        vec![
            (q(SERVER, "TestFormat"), 13, Resolved),
            (q(SERVER, "(*Server).render"), 38, Resolved)
        ]
    );
    // A method on a typed parameter of an external type names the type.
    let test_calls = g.callees(&q(SERVER, "TestServe")).await;
    assert!(
        test_calls.contains(&("testing.T.Fatal".to_owned(), 8, Unresolved)),
        "{test_calls:?}"
    );

    // Implicit interface satisfaction: *Server and *DB have Serve; Cached embeds *DB.
    assert_eq!(
        g.implementors(&q(SERVER, "Handler")).await,
        vec![q(SERVER, "Server"), q(STORE, "Cached"), q(STORE, "DB")]
    );
    assert_eq!(
        g.implements(&q(STORE, "DB")).await,
        vec![q(SERVER, "Handler")]
    );
    // Through an embedded field's promoted methods.
    assert_eq!(
        g.implements(&q(STORE, "Cached")).await,
        vec![q(SERVER, "Handler")]
    );

    // Tests cover what they call.
    assert_eq!(
        g.tests_of(&q(SERVER, "NewServer")).await,
        vec![q(SERVER, "TestServe")]
    );
    assert_eq!(
        g.tests_of(&q(SERVER, "(*Server).Serve")).await,
        vec![q(SERVER, "TestServe")]
    );
    assert_eq!(
        g.tests_of(&q(SERVER, "format")).await,
        vec![q(SERVER, "TestFormat")]
    );
    assert!(g.tests_of(&q(SERVER, "Run")).await.is_empty());
    // Through a dot import (`import . "example.com/shop/store"`).
    assert_eq!(
        g.tests_of(&q(STORE, "Open")).await,
        vec!["example.com/shop/store_test.TestOpen".to_owned()]
    );

    // Error messages with their location.
    assert_eq!(
        g.errors_in("server/server.go").await,
        vec![
            ("empty path".to_owned(), 28),
            ("lookup %s: %w".to_owned(), 32)
        ]
    );
    assert_eq!(
        g.errors_in("store/store.go").await,
        vec![("store is over capacity".to_owned(), 19)]
    );

    // Selectors in Go's own forms.
    for selector in [
        "Serve",
        "Server.Serve",
        "(*Server).Serve",
        "server.(*Server).Serve",
    ] {
        let found = g.lookup(selector).await;
        assert!(
            found.contains(&q(SERVER, "(*Server).Serve")),
            "{selector}: {found:?}"
        );
    }
    assert_eq!(
        g.lookup("server.Server.Serve").await,
        vec![q(SERVER, "(*Server).Serve")]
    );

    // The README mentions Server.Serve and store.Open.
    let readme = g.store.nodes_in_path(&g.graph, "README.md").await.unwrap();
    let serving = readme
        .iter()
        .find(|n| n.name == "Serving")
        .expect("section");
    assert_eq!((serving.start_line, serving.end_line), (5, 7));
    let page = g
        .store
        .edges(
            &g.graph,
            &serving.id,
            &[codectx_graph::EdgeKind::Mentions],
            codectx_graph::Direction::Outgoing,
            10,
        )
        .await
        .unwrap();
    let mut mentioned: Vec<String> = page
        .hits
        .into_iter()
        .map(|h| h.node.qualified_name)
        .collect();
    mentioned.sort();
    assert_eq!(
        mentioned,
        vec![q(SERVER, "(*Server).Serve"), q(STORE, "Open")]
    );
}
