//! Indexes a fixture repository into a temporary SQLite graph and answers the questions
//! the golden tests ask.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use codectx_graph::query::{self, Directions, ExpandOptions};
use codectx_graph::sqlite::SqliteGraphStore;
use codectx_graph::{Confidence, Direction, EdgeKind, GraphStore, Node, NodeKind};
use codectx_index::{IndexOptions, IndexReport, index};

pub struct Indexed {
    pub store: SqliteGraphStore,
    pub graph: String,
    pub report: IndexReport,
    pub dir: tempfile::TempDir,
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

pub async fn index_fixture(name: &str) -> Indexed {
    index_path(&fixture(name), name).await
}

pub async fn index_path(root: &Path, name: &str) -> Indexed {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap();
    let report = index(
        &store,
        &IndexOptions {
            root: root.to_path_buf(),
            owner: codectx_core::ids::derive(
                codectx_core::ids::prefix::ORGANISATION,
                "index-tests",
            ),
            name: name.into(),
            cache: dir.path().join("cache.db"),
            max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
            progress: false,
            threads: 2,
        },
    )
    .await
    .unwrap();
    Indexed {
        graph: report.graph_id.clone(),
        store,
        report,
        dir,
    }
}

impl Indexed {
    /// The one symbol with this exact qualified name (panics otherwise, listing what exists).
    pub async fn symbol(&self, qualified: &str) -> Node {
        let found = self
            .store
            .nodes_by_qualified_name(&self.graph, qualified, 10)
            .await
            .unwrap();
        let symbols: Vec<Node> = found.into_iter().filter(|n| n.kind.is_symbol()).collect();
        if symbols.len() != 1 {
            let all = self
                .store
                .nodes_of_kinds(&self.graph, &query::SYMBOL_KINDS)
                .await
                .unwrap();
            let mut names: Vec<String> = all
                .iter()
                .map(|n| format!("{} [{}]", n.qualified_name, n.kind.as_str()))
                .collect();
            names.sort();
            panic!(
                "expected one symbol {qualified:?}, found {}; symbols are:\n{}",
                symbols.len(),
                names.join("\n")
            );
        }
        symbols.into_iter().next().unwrap()
    }

    pub async fn symbols(&self) -> Vec<(String, String, u32, u32)> {
        let mut all: Vec<(String, String, u32, u32)> = self
            .store
            .nodes_of_kinds(&self.graph, &query::SYMBOL_KINDS)
            .await
            .unwrap()
            .into_iter()
            .map(|n| {
                (
                    n.qualified_name,
                    n.kind.as_str().to_owned(),
                    n.start_line,
                    n.end_line,
                )
            })
            .collect();
        all.sort();
        all
    }

    async fn edges(
        &self,
        qualified: &str,
        kind: EdgeKind,
        direction: Direction,
    ) -> Vec<(String, u32, Confidence)> {
        let node = self.symbol(qualified).await;
        let page = self
            .store
            .edges(&self.graph, &node.id, &[kind], direction, 200)
            .await
            .unwrap();
        let mut out: Vec<(String, u32, Confidence)> = page
            .hits
            .into_iter()
            .map(|h| (h.node.qualified_name, h.line, h.confidence))
            .collect();
        out.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        out
    }

    /// What `qualified` calls: (target, line, confidence), by line.
    pub async fn callees(&self, qualified: &str) -> Vec<(String, u32, Confidence)> {
        self.edges(qualified, EdgeKind::Calls, Direction::Outgoing)
            .await
    }

    pub async fn callers(&self, qualified: &str) -> Vec<(String, u32, Confidence)> {
        self.edges(qualified, EdgeKind::Calls, Direction::Incoming)
            .await
    }

    /// What `qualified` refers to without calling (targets' qualified names, sorted).
    pub async fn references(&self, qualified: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .edges(qualified, EdgeKind::References, Direction::Outgoing)
            .await
            .into_iter()
            .map(|e| e.0)
            .collect();
        out.sort();
        out
    }

    /// The public paths re-exports give `qualified` (alias nodes exporting it, sorted).
    pub async fn exporters(&self, qualified: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .edges(qualified, EdgeKind::Exports, Direction::Incoming)
            .await
            .into_iter()
            .map(|e| e.0)
            .collect();
        out.sort();
        out
    }

    /// What `qualified` implements (names only).
    pub async fn implements(&self, qualified: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .edges(qualified, EdgeKind::Implements, Direction::Outgoing)
            .await
            .into_iter()
            .map(|e| e.0)
            .collect();
        out.sort();
        out
    }

    pub async fn implementors(&self, qualified: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .edges(qualified, EdgeKind::Implements, Direction::Incoming)
            .await
            .into_iter()
            .map(|e| e.0)
            .collect();
        out.sort();
        out
    }

    pub async fn tests_of(&self, qualified: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .edges(qualified, EdgeKind::TestedBy, Direction::Outgoing)
            .await
            .into_iter()
            .map(|e| e.0)
            .collect();
        out.sort();
        out
    }

    pub async fn lookup(&self, selector: &str) -> Vec<String> {
        query::lookup(&self.store, &self.graph, selector, &[], 20)
            .await
            .unwrap()
            .matches
            .into_iter()
            .map(|n| n.qualified_name)
            .collect()
    }

    pub async fn errors_in(&self, path: &str) -> Vec<(String, u32)> {
        self.store
            .nodes_in_path(&self.graph, path)
            .await
            .unwrap()
            .into_iter()
            .filter(|n| n.kind == NodeKind::ErrorMessage)
            .map(|n| (n.name, n.start_line))
            .collect()
    }

    /// Plain string literals (8+ characters) written in `path`: (text, line).
    pub async fn strings_in(&self, path: &str) -> Vec<(String, u32)> {
        self.store
            .nodes_in_path(&self.graph, path)
            .await
            .unwrap()
            .into_iter()
            .filter(|n| n.kind == NodeKind::StringLiteral)
            .map(|n| (n.name, n.start_line))
            .collect()
    }

    pub async fn expand_out(&self, qualified: &str, kinds: Vec<EdgeKind>) -> Vec<String> {
        let node = self.symbol(qualified).await;
        let (expansions, _) = query::expand(
            &self.store,
            &self.graph,
            &[node.id],
            &ExpandOptions {
                kinds,
                directions: Directions::Outgoing,
                depth: 1,
                limit_per_direction: 100,
            },
        )
        .await
        .unwrap();
        expansions[0]
            .neighbors
            .iter()
            .map(|n| n.node.qualified_name.clone())
            .collect()
    }
}

/// Every node and outgoing edge of a graph as sorted text lines (for equality checks
/// across backends and runs).
pub async fn snapshot(store: &dyn GraphStore, graph: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for node in store.nodes_of_kinds(graph, &NodeKind::ALL).await.unwrap() {
        lines.push(format!(
            "node {} {} {} {}-{} {} {}",
            node.kind.as_str(),
            node.qualified_name,
            node.path,
            node.start_line,
            node.end_line,
            node.fingerprint,
            node.signature
        ));
        let page = store
            .edges(graph, &node.id, &EdgeKind::ALL, Direction::Outgoing, 10_000)
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
    lines.sort();
    lines
}

/// Copies a directory tree (fixtures into a scratch checkout).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
