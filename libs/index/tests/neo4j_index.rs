//! The indexer writes the same graph to Neo4j 5.26 as to SQLite: same nodes, same edges,
//! same answers. Needs CODECTX_TEST_NEO4J_URI (set by `make test`).

mod common;

use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::query::{self, SYMBOL_KINDS};
use codectx_graph::{Direction, EdgeKind, GraphStore, NodeKind};
use codectx_index::{IndexOptions, index};

async fn snapshot(store: &dyn GraphStore, graph: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for node in store.nodes_of_kinds(graph, &NodeKind::ALL).await.unwrap() {
        lines.push(format!(
            "node {} {} {} {}-{} {}",
            node.kind.as_str(),
            node.qualified_name,
            node.path,
            node.start_line,
            node.end_line,
            node.fingerprint
        ));
        for direction in [Direction::Outgoing] {
            let page = store
                .edges(graph, &node.id, &EdgeKind::ALL, direction, 10_000)
                .await
                .unwrap();
            for hit in page.hits {
                lines.push(format!(
                    "edge {} -{}-> {} line {} {}",
                    node.qualified_name,
                    hit.kind.as_str(),
                    hit.node.qualified_name,
                    hit.line,
                    hit.confidence.as_str()
                ));
            }
        }
    }
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_holds_the_same_graph_as_sqlite() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI")
        .unwrap_or_else(|_| panic!("CODECTX_TEST_NEO4J_URI is not set: run the tests with `make test`, which starts Neo4j 5.26"));
    let neo4j = Neo4jGraphStore::connect(&uri, "neo4j", "").await.unwrap();
    for fixture in ["go", "python", "typescript"] {
        // A distinct name per run keeps this graph apart from other tests' graphs.
        let name = format!("{fixture}-{}", codectx_core::ids::mint("run"));
        let sqlite = common::index_path(&common::fixture(fixture), &name).await;
        let data = tempfile::tempdir().unwrap();
        let report = index(
            &neo4j,
            &IndexOptions {
                root: common::fixture(fixture),
                owner: codectx_core::ids::derive(
                    codectx_core::ids::prefix::ORGANISATION,
                    "index-tests",
                ),
                name: name.clone(),
                cache: data.path().join("cache.db"),
                max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
                progress: false,
                threads: 2,
            },
        )
        .await
        .unwrap();
        assert_eq!(report.graph_id, sqlite.graph);
        let expected = snapshot(&sqlite.store, &sqlite.graph).await;
        let actual = snapshot(&neo4j, &report.graph_id).await;
        assert!(expected.len() > 50, "{fixture}: {}", expected.len());
        assert_eq!(actual, expected, "{fixture}");
        let found = query::lookup(&neo4j, &report.graph_id, "Cart.total", &SYMBOL_KINDS, 10)
            .await
            .unwrap();
        if fixture == "typescript" {
            assert_eq!(found.matches.len(), 1);
        }
        // Re-indexing unchanged files writes nothing.
        let again = index(
            &neo4j,
            &IndexOptions {
                root: common::fixture(fixture),
                owner: codectx_core::ids::derive(
                    codectx_core::ids::prefix::ORGANISATION,
                    "index-tests",
                ),
                name: name.clone(),
                cache: data.path().join("cache.db"),
                max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
                progress: false,
                threads: 2,
            },
        )
        .await
        .unwrap();
        assert_eq!(again.owners_written, 0);
        neo4j.delete_graph(&report.graph_id).await.unwrap();
    }
}
