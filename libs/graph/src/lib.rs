//! The code graph store: one trait for the indexer's writes and graph-hydrator's reads,
//! with three backends under one contract test suite: embedded SQLite (the default, one
//! file in the data directory), Neo4j 5.26 (fixed Cypher templates, every value a
//! parameter, every root bound to `graph_id`) and HugeGraph 1.5 (fixed Gremlin templates
//! over its REST API, every value a binding).
//!
//! Writes are grouped by *owner*: a file path (its nodes and the edges its code produces)
//! or `""` for repository-level nodes. Re-indexing replaces whole owners, which is what
//! makes incremental indexing cheap and exact.

pub mod hugegraph;
mod hugegraph_memory;
pub mod memory;
pub mod model;
pub mod neo4j;
mod neo4j_memory;
pub mod notes;
pub mod query;
pub mod sqlite;
mod sqlite_connections;
mod sqlite_edge_rows;
mod sqlite_memory;
mod sqlite_reader_cache;

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use codectx_errors::Error;

pub use model::{
    Confidence, Direction, Edge, EdgeKind, Neighbor, Node, NodeKind, OwnerGraph, RepositoryInfo,
    lookup_key, node_id, selector_matches,
};

/// One edge from a root, with the node at its other end.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeHit {
    pub node: Node,
    pub kind: EdgeKind,
    pub line: u32,
    pub confidence: Confidence,
}

/// A page of edges from one root and how many there are in all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EdgePage {
    pub hits: Vec<EdgeHit>,
    pub total: usize,
    /// The hits' nodes hold only what ranking reads (id, kind, name, path, lines, test):
    /// the caller fetches the full nodes it keeps (`GraphStore::edge_window`).
    pub light: bool,
}

/// One page of edges a caller wants ([`GraphStore::edge_pages`]): what
/// [`GraphStore::edge_window`] takes with `keep: Some(..)`, and [`GraphStore::edges`]
/// with `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRequest {
    pub root: String,
    pub kinds: Vec<EdgeKind>,
    pub direction: Direction,
    pub limit: usize,
    pub keep: Option<usize>,
}

/// One expansion window to rank ([`GraphStore::ranked_windows`]): the edges of
/// `edges.root` (at most `edges.limit`, the window), of which the best `edges.keep`
/// distinct neighbours are kept by their relevance to the root.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRequest {
    /// The window; `keep: None` keeps every distinct neighbour of it.
    pub edges: EdgeRequest,
    /// The root's path and plain name: what the ranking compares neighbours with.
    pub root_path: String,
    pub root_name: String,
    /// Whether the answer lists every distinct neighbour of the window
    /// ([`RankedWindow::seen`]; an expansion to depth 2 skips them there).
    pub seen: bool,
}

/// A window ranked ([`GraphStore::ranked_windows`]): what [`query::rank_window`] makes
/// of the window's page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankedWindow {
    /// The best distinct neighbours, best first (the first edge of each in the page's
    /// order; equal ranks keep that order), at most `keep`.
    pub kept: Vec<EdgeHit>,
    /// Distinct neighbours in the window, the root not counted.
    pub distinct: usize,
    /// Edges in the window (at most its limit).
    pub window: usize,
    /// Edges of the root in all.
    pub total: usize,
    /// The kept nodes hold only what ranking reads ([`EdgePage::light`]).
    pub light: bool,
    /// Every distinct neighbour's id when the request asked for them; else empty.
    pub seen: HashSet<String>,
}

/// Fewest edges from a root before a backend reads an expansion's window light
/// ([`EdgePage::light`]): below it, full rows cost less than a second query for the kept
/// nodes.
pub(crate) const LIGHT_WINDOW: usize = 100;

/// One page of the nodes of some kinds (`GraphStore::nodes_of_kinds_page`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodesPage {
    pub nodes: Vec<Node>,
    /// Where the next page starts; `None` on the last page. Opaque: each backend writes
    /// its own (the last id for SQLite and Neo4j, the kind and the server's page token
    /// for HugeGraph), and only the same backend reads it back.
    pub next: Option<String>,
}

/// Nodes one page of the lexical corpus holds when the caller does not choose.
pub const NODES_PAGE: usize = 2_000;

/// One language of a graph (`GraphStore::language_counts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageCount {
    pub language: String,
    pub files: u64,
    pub symbols: u64,
    pub tests: u64,
}

/// The storage contract. Every read is rooted at a `graph_id`.
#[async_trait]
pub trait GraphStore: Send + Sync + std::fmt::Debug + 'static {
    /// `sqlite`, `neo4j` or `hugegraph`, for logs.
    fn backend(&self) -> &'static str;

    async fn put_repository(&self, repository: &RepositoryInfo) -> Result<(), Error>;
    async fn repository(&self, graph_id: &str) -> Result<Option<RepositoryInfo>, Error>;
    async fn repositories(&self) -> Result<Vec<RepositoryInfo>, Error>;
    /// Notes that the checkout changed at `since` (Unix seconds) and the graph does not
    /// hold it yet, unless an earlier change is already noted.
    async fn mark_dirty(&self, graph_id: &str, since: i64) -> Result<(), Error>;
    /// Removes a graph and everything in it.
    async fn delete_graph(&self, graph_id: &str) -> Result<(), Error>;

    /// The stored hash of every owner of the graph.
    async fn owner_hashes(&self, graph_id: &str) -> Result<HashMap<String, String>, Error>;
    /// Atomically (per backend transaction) removes the `removed` owners and replaces the
    /// nodes and edges of each owner in `owners`.
    async fn replace_owners(
        &self,
        graph_id: &str,
        removed: &[String],
        owners: Vec<OwnerGraph>,
    ) -> Result<(), Error>;

    /// Nodes whose plain name is `name`, at most `limit`.
    async fn nodes_by_name(
        &self,
        graph_id: &str,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error>;
    /// Nodes whose qualified name is exactly `qualified_name`, at most `limit`.
    async fn nodes_by_qualified_name(
        &self,
        graph_id: &str,
        qualified_name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error>;
    /// The nodes of these ids that exist in the graph, in no particular order.
    async fn nodes(&self, graph_id: &str, ids: &[String]) -> Result<Vec<Node>, Error>;
    /// Nodes whose `path` is `path` (a file and everything in it), by start line.
    async fn nodes_in_path(&self, graph_id: &str, path: &str) -> Result<Vec<Node>, Error>;
    /// Edges of the given kinds from (`Outgoing`) or to (`Incoming`) `root`, ordered by
    /// kind, path, line, the other end's start line and qualified name (its id last: ids
    /// hash the minted graph id, so an order they decide would differ between two indexes
    /// of the same code), at most `limit`, with the total count.
    async fn edges(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<EdgePage, Error>;
    /// [`edges`](Self::edges) for a caller that ranks up to `limit` edges and keeps at most
    /// `keep` of them: when there are more than `keep`, a backend may answer a `light`
    /// page, whose nodes carry only what ranking reads (a hub's window of hundreds of
    /// callers costs no signatures, summaries or docs).
    async fn edge_window(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
        keep: usize,
    ) -> Result<EdgePage, Error> {
        let _ = keep;
        self.edges(graph_id, root, kinds, direction, limit).await
    }
    /// Several pages at once, one per request in their order (the windows of every
    /// relation of a symbol, and of every expansion of a batch, in one store call).
    async fn edge_pages(
        &self,
        graph_id: &str,
        requests: &[EdgeRequest],
    ) -> Result<Vec<EdgePage>, Error> {
        let mut pages = Vec::with_capacity(requests.len());
        for r in requests {
            pages.push(match r.keep {
                Some(keep) => {
                    self.edge_window(graph_id, &r.root, &r.kinds, r.direction, r.limit, keep)
                        .await?
                }
                None => {
                    self.edges(graph_id, &r.root, &r.kinds, r.direction, r.limit)
                        .await?
                }
            });
        }
        Ok(pages)
    }
    /// Each window ranked, one per request in their order: [`query::rank_window`] of its
    /// page from [`edge_pages`](Self::edge_pages). A backend may rank inside the store
    /// (SQLite ranks a hub's window from its rows and builds only the kept nodes); the
    /// answer must be the same.
    async fn ranked_windows(
        &self,
        graph_id: &str,
        requests: &[WindowRequest],
    ) -> Result<Vec<RankedWindow>, Error> {
        let edges: Vec<EdgeRequest> = requests.iter().map(|r| r.edges.clone()).collect();
        let pages = self.edge_pages(graph_id, &edges).await?;
        if pages.len() != requests.len() {
            return Err(Error::internal(format!(
                "graph store answered {} of {} edge pages",
                pages.len(),
                requests.len()
            )));
        }
        Ok(requests
            .iter()
            .zip(pages)
            .map(|(request, page)| query::rank_window(request, page))
            .collect())
    }
    /// [`edges`](Self::edges) from each of `roots`, one page per root in their order (an
    /// expansion's second step reads its whole frontier at once).
    async fn edges_each(
        &self,
        graph_id: &str,
        roots: &[String],
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<EdgePage>, Error> {
        let mut pages = Vec::with_capacity(roots.len());
        for root in roots {
            pages.push(self.edges(graph_id, root, kinds, direction, limit).await?);
        }
        Ok(pages)
    }
    /// Every node of these kinds (the lexical corpus), by id: every page of
    /// [`GraphStore::nodes_of_kinds_page`].
    async fn nodes_of_kinds(&self, graph_id: &str, kinds: &[NodeKind]) -> Result<Vec<Node>, Error> {
        let mut nodes = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = self
                .nodes_of_kinds_page(graph_id, kinds, &cursor, NODES_PAGE)
                .await?;
            nodes.extend(page.nodes);
            match page.next {
                Some(next) => cursor = next,
                None => break,
            }
        }
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        nodes.dedup_by(|a, b| a.id == b.id);
        Ok(nodes)
    }
    /// One page of the nodes of these kinds: at most `limit` (at least one), starting
    /// where `cursor` says (`""`: the first page). Every node comes at least once across
    /// the pages of one walk, in the backend's own order; a reader keeps the first of a
    /// repeated id (HugeGraph's paged index reads can repeat a vertex whose index entry
    /// was written twice; SQLite and Neo4j never repeat). A large graph's corpus is read
    /// this way so that no single backend request holds all of it.
    async fn nodes_of_kinds_page(
        &self,
        graph_id: &str,
        kinds: &[NodeKind],
        cursor: &str,
        limit: usize,
    ) -> Result<NodesPage, Error>;
    /// What each language of the graph holds: files, symbols and tests, by language.
    async fn language_counts(&self, graph_id: &str) -> Result<Vec<LanguageCount>, Error>;
    /// Every edge of `kind` from one of `sources` (node ids of this graph; at most a
    /// corpus page of them) to a node of `to_kinds`, as (source id, target name), by
    /// source id, then line, then target name (then target id): what each function calls
    /// and what each type holds, for the dense leg's text (metadata only). Names on one
    /// line go by name, never by id: ids hash the graph's minted id, and a symbol's text
    /// (so its vector) must depend on its code alone. An id of another graph names
    /// nothing.
    async fn neighbour_names(
        &self,
        graph_id: &str,
        kind: EdgeKind,
        sources: &[String],
        to_kinds: &[NodeKind],
    ) -> Result<Vec<(String, String)>, Error>;
}

/// A backend that holds both the code graph and agent memory (every backend does).
pub trait Store: GraphStore + memory::MemoryStore {}

impl<T: GraphStore + memory::MemoryStore> Store for T {}

/// Hash of an owner's content, independent of order: a line per node and per edge
/// (fields joined by U+0001), each group sorted, each line followed by a zero byte.
/// The lines are written into one buffer and sorted as slices of it (an index run
/// hashes every owner, 840k lines for the Python standard library).
pub fn owner_hash(nodes: &[Node], edges: &[Edge]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write as _;
    const SEPARATOR: char = '\u{1}';
    let mut text = String::new();
    let mut node_lines: Vec<std::ops::Range<usize>> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let start = text.len();
        for field in [
            n.id.as_str(),
            n.kind.as_str(),
            &n.name,
            &n.qualified_name,
            &n.language,
            &n.path,
        ] {
            text.push_str(field);
            text.push(SEPARATOR);
        }
        let _ = write!(text, "{}{SEPARATOR}{}{SEPARATOR}", n.start_line, n.end_line);
        for field in [&n.signature, &n.summary, &n.fingerprint] {
            text.push_str(field);
            text.push(SEPARATOR);
        }
        text.push_str(if n.test { "true" } else { "false" });
        text.push(SEPARATOR);
        text.push_str(&n.doc);
        node_lines.push(start..text.len());
    }
    let mut edge_lines: Vec<std::ops::Range<usize>> = Vec::with_capacity(edges.len());
    for e in edges {
        let start = text.len();
        let _ = write!(
            text,
            "{}{SEPARATOR}{}{SEPARATOR}{}{SEPARATOR}{}{SEPARATOR}{}",
            e.from,
            e.to,
            e.kind.as_str(),
            e.line,
            e.confidence.as_str()
        );
        edge_lines.push(start..text.len());
    }
    let line = |range: &std::ops::Range<usize>| &text.as_bytes()[range.clone()];
    node_lines.sort_unstable_by(|a, b| line(a).cmp(line(b)));
    edge_lines.sort_unstable_by(|a, b| line(a).cmp(line(b)));
    let mut hasher = Sha256::new();
    for range in node_lines.iter().chain(edge_lines.iter()) {
        hasher.update(line(range));
        hasher.update([0u8]);
    }
    hex::encode(&hasher.finalize()[..16])
}

#[cfg(test)]
mod owner_hash_tests {
    use super::*;

    /// The hash as first defined (a formatted string per line, sorted): stored hashes
    /// must not change with the implementation, or every owner of every graph would be
    /// rewritten on the next run.
    fn as_first_defined(nodes: &[Node], edges: &[Edge]) -> String {
        use sha2::{Digest, Sha256};
        let mut lines: Vec<String> = nodes
            .iter()
            .map(|n| {
                format!(
                    "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}",
                    n.id,
                    n.kind.as_str(),
                    n.name,
                    n.qualified_name,
                    n.language,
                    n.path,
                    n.start_line,
                    n.end_line,
                    n.signature,
                    n.summary,
                    n.fingerprint,
                    n.test,
                    n.doc
                )
            })
            .collect();
        lines.sort();
        let mut edge_lines: Vec<String> = edges
            .iter()
            .map(|e| {
                format!(
                    "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}",
                    e.from,
                    e.to,
                    e.kind.as_str(),
                    e.line,
                    e.confidence.as_str()
                )
            })
            .collect();
        edge_lines.sort();
        let mut hasher = Sha256::new();
        for line in lines.iter().chain(edge_lines.iter()) {
            hasher.update(line.as_bytes());
            hasher.update([0u8]);
        }
        hex::encode(&hasher.finalize()[..16])
    }

    fn node(id: &str, name: &str, line: u32, test: bool, doc: &str) -> Node {
        Node {
            id: id.into(),
            kind: NodeKind::Function,
            name: name.into(),
            qualified_name: format!("pkg.{name}"),
            language: "go".into(),
            path: "pkg/a.go".into(),
            start_line: line,
            end_line: line + 10,
            signature: format!("func {name}(x int) error"),
            summary: "Does — things, ünïcode".into(),
            doc: doc.into(),
            fingerprint: format!("fp{line}"),
            test,
        }
    }

    #[test]
    fn the_hash_is_the_one_first_defined_whatever_the_order() {
        let nodes = vec![
            node("n_b", "B", 20, false, ""),
            node("n_a", "A", 3, true, "line one\u{1}with a separator"),
            node("n_a", "A", 3, true, "line one"),
            node("n_c", "", 0, false, "x"),
        ];
        let edge = |from: &str, to: &str, kind, line, confidence| Edge {
            from: from.into(),
            to: to.into(),
            kind,
            line,
            confidence,
        };
        let edges = vec![
            edge("n_b", "n_a", EdgeKind::Calls, 21, Confidence::Resolved),
            edge("n_a", "n_b", EdgeKind::References, 4, Confidence::Dispatch),
            edge("n_a", "n_b", EdgeKind::Calls, 4, Confidence::Resolved),
            edge("n_b", "n_a", EdgeKind::Calls, 21, Confidence::Resolved),
        ];
        let hash = owner_hash(&nodes, &edges);
        assert_eq!(hash, as_first_defined(&nodes, &edges));
        let (mut reversed_nodes, mut reversed_edges) = (nodes.clone(), edges.clone());
        reversed_nodes.reverse();
        reversed_edges.reverse();
        assert_eq!(owner_hash(&reversed_nodes, &reversed_edges), hash);
        // Any field changes it.
        let mut moved = nodes.clone();
        moved[0].start_line += 1;
        assert_ne!(owner_hash(&moved, &edges), hash);
        assert_eq!(owner_hash(&[], &[]), as_first_defined(&[], &[]));
    }
}
