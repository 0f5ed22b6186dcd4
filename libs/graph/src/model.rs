//! The code graph's vocabulary: node and edge kinds, records, and how a selector matches
//! a qualified name.

use serde::{Deserialize, Serialize};

/// A node as the server backends (Neo4j, HugeGraph) return it: kinds as text, lines as
/// signed integers, and (HugeGraph) the graph it belongs to, checked before it is used.
#[derive(Debug, Deserialize)]
pub(crate) struct NodeRow {
    #[serde(alias = "nid")]
    pub id: String,
    #[serde(default)]
    pub graph_id: String,
    pub kind: String,
    pub name: String,
    pub qualified_name: String,
    pub language: String,
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub signature: String,
    pub summary: String,
    pub fingerprint: String,
    pub test: bool,
    #[serde(default)]
    pub doc: String,
}

impl NodeRow {
    pub(crate) fn into_node(self) -> Node {
        Node {
            id: self.id,
            kind: NodeKind::parse(&self.kind).unwrap_or(NodeKind::External),
            name: self.name,
            qualified_name: self.qualified_name,
            language: self.language,
            path: self.path,
            start_line: self.start_line.max(0) as u32,
            end_line: self.end_line.max(0) as u32,
            signature: self.signature,
            summary: self.summary,
            fingerprint: self.fingerprint,
            test: self.test,
            doc: self.doc,
        }
    }
}

/// A file outline's order: by start line, widest first (whatever a symbol contains
/// follows it), then by qualified name and id, so ties never depend on minted ids alone.
pub(crate) fn outline_key(n: &Node) -> (u32, std::cmp::Reverse<u32>, &str, &str) {
    (
        n.start_line,
        std::cmp::Reverse(n.end_line),
        &n.qualified_name,
        &n.id,
    )
}

/// What a node is. Stored as its `as_str()` text in every backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Repository,
    Package,
    File,
    Function,
    Method,
    Type,
    Interface,
    Class,
    Constant,
    /// A package- or module-level variable (`var x = ...` in Go, a lower-case module
    /// assignment in Python, a top-level `let`/`var`/`const` in JavaScript).
    Variable,
    DocSection,
    Module,
    /// A string literal passed to an error constructor, panic, raise or throw.
    ErrorMessage,
    /// Any other string literal of 8+ characters (a part between interpolations).
    StringLiteral,
    /// A call target outside the indexed code (or not found in it), kept by name.
    External,
    /// A public path a re-export gives a symbol (Rust `pub use`, a Python package's
    /// `__init__` import); it EXPORTS the definition.
    Alias,
}

impl NodeKind {
    pub const ALL: [NodeKind; 16] = [
        NodeKind::Repository,
        NodeKind::Package,
        NodeKind::File,
        NodeKind::Function,
        NodeKind::Method,
        NodeKind::Type,
        NodeKind::Interface,
        NodeKind::Class,
        NodeKind::Constant,
        NodeKind::Variable,
        NodeKind::DocSection,
        NodeKind::Module,
        NodeKind::ErrorMessage,
        NodeKind::StringLiteral,
        NodeKind::External,
        NodeKind::Alias,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Repository => "repository",
            NodeKind::Package => "package",
            NodeKind::File => "file",
            NodeKind::Function => "function",
            NodeKind::Method => "method",
            NodeKind::Type => "type",
            NodeKind::Interface => "interface",
            NodeKind::Class => "class",
            NodeKind::Constant => "constant",
            NodeKind::Variable => "variable",
            NodeKind::DocSection => "doc_section",
            NodeKind::Module => "module",
            NodeKind::ErrorMessage => "error_message",
            NodeKind::StringLiteral => "string",
            NodeKind::External => "external",
            NodeKind::Alias => "alias",
        }
    }

    pub fn parse(text: &str) -> Option<NodeKind> {
        NodeKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Symbols: what agents ask about by name.
    pub fn is_symbol(self) -> bool {
        matches!(
            self,
            NodeKind::Function
                | NodeKind::Method
                | NodeKind::Type
                | NodeKind::Interface
                | NodeKind::Class
                | NodeKind::Constant
                | NodeKind::Variable
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeKind {
    Contains,
    Imports,
    Calls,
    Implements,
    TestedBy,
    Mentions,
    Requires,
    /// A symbol reads, writes or names another without calling it: a package-level
    /// variable or constant, a type in a signature or a composite literal.
    References,
    /// An alias (a re-export's public path) stands for its definition.
    Exports,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 9] = [
        EdgeKind::Contains,
        EdgeKind::Imports,
        EdgeKind::Calls,
        EdgeKind::Implements,
        EdgeKind::TestedBy,
        EdgeKind::Mentions,
        EdgeKind::Requires,
        EdgeKind::References,
        EdgeKind::Exports,
    ];

    /// Also the Neo4j relationship type.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "CONTAINS",
            EdgeKind::Imports => "IMPORTS",
            EdgeKind::Calls => "CALLS",
            EdgeKind::Implements => "IMPLEMENTS",
            EdgeKind::TestedBy => "TESTED_BY",
            EdgeKind::Mentions => "MENTIONS",
            EdgeKind::Requires => "REQUIRES",
            EdgeKind::References => "REFERENCES",
            EdgeKind::Exports => "EXPORTS",
        }
    }

    pub fn parse(text: &str) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// How sure the indexer is that an edge is real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Resolved through scope, imports, receivers or type hints.
    Resolved,
    /// A call on an interface, trait or base-class method, to one implementation of it
    /// (the receiver's dynamic type decides which at run time).
    Dispatch,
    /// The only symbol of that name in the graph; no scope evidence.
    NameMatch,
    /// No target found; the edge points at an `external` node named as written.
    Unresolved,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Resolved => "resolved",
            Confidence::Dispatch => "dispatch",
            Confidence::NameMatch => "name_match",
            Confidence::Unresolved => "unresolved",
        }
    }

    pub fn parse(text: &str) -> Option<Confidence> {
        [
            Confidence::Resolved,
            Confidence::Dispatch,
            Confidence::NameMatch,
            Confidence::Unresolved,
        ]
        .into_iter()
        .find(|c| c.as_str() == text)
    }
}

/// Direction of an expansion relative to its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// root -> neighbour (callees, what it contains, what it implements).
    Outgoing,
    /// neighbour -> root (callers, container, implementors).
    Incoming,
}

/// One node: metadata only, never source text (DESIGN.md section 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    /// In the language's own convention (`net/http.(*Server).Serve`, `json.encoder.JSONEncoder.encode`,
    /// `axum::routing::Router::route`).
    pub qualified_name: String,
    pub language: String,
    /// Repository-relative path, `/`-separated; empty for repository-level nodes.
    pub path: String,
    /// 1-based, inclusive; 0 when not applicable.
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    /// First doc-comment line, redacted.
    pub summary: String,
    /// The doc comment's prose on one line, redacted, at most 600 characters: matched by
    /// retrieval (BM25's doc field, the dense leg's text), never shown in answers.
    #[serde(default)]
    pub doc: String,
    /// Content hash of the node's span (symbols) or file (files).
    pub fingerprint: String,
    /// A test function or method by its language's conventions.
    pub test: bool,
}

/// A directed edge. `owner` groups it with the nodes of the file whose code produced it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// Call-site (or reference) line; 0 when not applicable.
    pub line: u32,
    pub confidence: Confidence,
}

/// Everything one owner (a file path, or "" for repository-level nodes) contributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerGraph {
    pub owner: String,
    /// Hash of the owner's nodes and edges; unchanged hash, nothing to write.
    pub hash: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// A graph's repository record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositoryInfo {
    pub graph_id: String,
    pub name: String,
    /// Absolute path of the checkout that was indexed (snippets are read from it).
    pub root: String,
    /// Git commit of the checkout, if it is one.
    pub commit: String,
    /// Unix seconds.
    pub indexed_at: i64,
    /// Changes whenever the graph's content changes; the lexical corpus version.
    pub version: String,
    /// The repository's policy (`.codectx.yaml`) the graph was indexed under, normalized
    /// JSON (its annotations are applied when answers are read), and its fingerprint.
    #[serde(default)]
    pub policy: String,
    #[serde(default)]
    pub policy_fingerprint: String,
    /// Unix seconds since when the checkout holds changes the graph does not (a watcher
    /// saw them; the next index run covers them); 0 when it holds none known.
    #[serde(default)]
    pub dirty_since: i64,
}

/// An edge seen from one root during expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    pub root: String,
    pub node: Node,
    pub kind: EdgeKind,
    pub direction: Direction,
    pub depth: u32,
    pub line: u32,
    pub confidence: Confidence,
    /// The node this hop came from (the root at depth 1).
    pub via: String,
}

/// Content hash of lines `start..=end` (1-based) of `text`, as stored in `fingerprint`.
/// The indexer and `read_snippet` both use this, so a snippet verifies exactly when the
/// span's bytes are unchanged. None when the file is shorter than `end`.
pub fn span_fingerprint(text: &str, start: u32, end: u32) -> Option<String> {
    let span = span_text(text, start, end)?;
    Some(content_hash(span.as_bytes()))
}

/// Lines `start..=end` (1-based) of `text`, with their line endings.
pub fn span_text(text: &str, start: u32, end: u32) -> Option<&str> {
    if start == 0 || end < start {
        return None;
    }
    let mut offset = 0usize;
    let mut line = 1u32;
    let mut begin = None;
    for (index, byte) in text.bytes().enumerate() {
        if line == start && begin.is_none() {
            begin = Some(offset);
        }
        if byte == b'\n' {
            if line == end {
                return Some(&text[begin?..=index]);
            }
            line += 1;
            offset = index + 1;
        }
    }
    if line == start && begin.is_none() && offset < text.len() {
        begin = Some(offset);
    }
    // The last line may have no newline.
    if line == end && offset < text.len() {
        return Some(&text[begin?..]);
    }
    None
}

/// sha256 of bytes, hex, 16 bytes.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(bytes)[..16])
}

/// The deterministic id of a node of `graph_id`.
pub fn node_id(
    graph_id: &str,
    kind: NodeKind,
    path: &str,
    qualified_name: &str,
    discriminator: &str,
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in [graph_id, kind.as_str(), path, qualified_name, discriminator] {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    format!("n_{}", hex::encode(&hasher.finalize()[..12]))
}

/// The normalized form selectors are matched against: separators (`::`, `/`, `.`, `#`,
/// `:`) become `.`, Go pointer receivers `(*T)` become `T`, generic arguments are dropped.
pub fn lookup_key(qualified_name: &str) -> String {
    let mut text = String::with_capacity(qualified_name.len());
    let mut depth = 0usize;
    for ch in qualified_name.chars() {
        match ch {
            '<' | '[' => depth += 1,
            '>' | ']' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            '(' | ')' | '*' | '&' | ' ' => {}
            ':' | '/' | '#' | '\\' => text.push('.'),
            _ => text.push(ch),
        }
    }
    let mut out = String::with_capacity(text.len());
    for part in text.split('.').filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(part);
    }
    out
}

/// True when `selector` names `node`: its qualified name, its plain name, or a trailing
/// part of its qualified name at a separator boundary, in any of the languages'
/// separators.
pub fn selector_matches(selector_key: &str, node_key: &str) -> bool {
    node_key == selector_key
        || (node_key.len() > selector_key.len()
            && node_key.ends_with(selector_key)
            && node_key.as_bytes()[node_key.len() - selector_key.len() - 1] == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_keys_unify_separators() {
        assert_eq!(
            lookup_key("net/http.(*Server).Serve"),
            "net.http.Server.Serve"
        );
        assert_eq!(
            lookup_key("axum::routing::Router::route"),
            "axum.routing.Router.route"
        );
        assert_eq!(
            lookup_key("werkzeug.routing.map.Map.bind"),
            "werkzeug.routing.map.Map.bind"
        );
        assert_eq!(lookup_key("crate::Wrapper<T>::get"), "crate.Wrapper.get");
        assert_eq!(lookup_key("(*Engine).ServeHTTP"), "Engine.ServeHTTP");
    }

    #[test]
    fn selectors_match_trailing_parts_only_at_boundaries() {
        let node = lookup_key("github.com/gin-gonic/gin.(*Engine).ServeHTTP");
        for selector in [
            "ServeHTTP",
            "Engine.ServeHTTP",
            "(*Engine).ServeHTTP",
            "gin.(*Engine).ServeHTTP",
        ] {
            assert!(selector_matches(&lookup_key(selector), &node), "{selector}");
        }
        assert!(!selector_matches(&lookup_key("HTTP"), &node));
        assert!(!selector_matches(&lookup_key("ngine.ServeHTTP"), &node));
    }

    #[test]
    fn spans_and_fingerprints() {
        let text = "a\nbb\nccc\n";
        assert_eq!(span_text(text, 1, 1), Some("a\n"));
        assert_eq!(span_text(text, 2, 3), Some("bb\nccc\n"));
        assert_eq!(span_text(text, 3, 4), None);
        assert_eq!(span_text("x\ny", 2, 2), Some("y"));
        assert_eq!(span_text("x\ny", 1, 2), Some("x\ny"));
        assert_ne!(span_fingerprint(text, 1, 1), span_fingerprint(text, 2, 2));
        assert_eq!(
            span_fingerprint(text, 2, 3),
            span_fingerprint("zz\nbb\nccc\n", 2, 3)
        );
    }

    #[test]
    fn ids_are_deterministic_and_scoped_by_graph() {
        let a = node_id("g1", NodeKind::Function, "a.go", "p.F", "");
        assert_eq!(a, node_id("g1", NodeKind::Function, "a.go", "p.F", ""));
        assert_ne!(a, node_id("g2", NodeKind::Function, "a.go", "p.F", ""));
        assert_ne!(a, node_id("g1", NodeKind::Function, "a.go", "p.F", "(int)"));
    }
}
