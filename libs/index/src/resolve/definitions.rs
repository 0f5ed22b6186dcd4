//! Symbol nodes and CONTAINS edges: the file node (in its package, or the repository),
//! then every symbol of the file under its parent symbol or the file.

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, node_id};

use super::scope::Index;
use super::{FileOut, Repo};

/// The file's node, contained by its package (or the repository).
pub(super) fn file_node(
    graph_id: &str,
    repository_id: &str,
    out: &mut FileOut<'_>,
    repo: &mut Repo<'_>,
) {
    let (file, path) = (out.file, out.path);
    let node = Node {
        id: node_id(graph_id, NodeKind::File, path, path, ""),
        kind: NodeKind::File,
        name: crate::layout::file_name(path).to_owned(),
        qualified_name: path.to_owned(),
        language: file.language.clone(),
        path: path.to_owned(),
        start_line: 1,
        end_line: file.lines.max(1),
        signature: String::new(),
        summary: if file.skipped.is_empty() {
            String::new()
        } else {
            format!("not parsed: {}", file.skipped)
        },
        fingerprint: file.content_hash.clone(),
        test: false,
        doc: String::new(),
    };
    out.file_id = node.id.clone();
    out.nodes.push(node);
    let container = if file.package.is_empty() {
        repository_id.to_owned()
    } else {
        node_id(graph_id, NodeKind::Package, "", &file.package, "")
    };
    repo.edges.insert(codectx_graph::Edge {
        from: container,
        to: out.file_id.clone(),
        kind: EdgeKind::Contains,
        line: 0,
        confidence: Confidence::Resolved,
    });
}

/// Every symbol of the file, contained by its parent symbol or the file.
pub(super) fn symbols(index: &Index<'_>, out: &mut FileOut<'_>) {
    let (file, path) = (out.file, out.path);
    for (symbol_index, symbol) in file.symbols.iter().enumerate() {
        let kind = NodeKind::parse(&symbol.kind).unwrap_or(NodeKind::Function);
        let id = index.ids[out.file_index][symbol_index].clone();
        out.nodes.push(Node {
            id: id.clone(),
            kind,
            name: symbol.name.clone(),
            qualified_name: symbol.qualified_name.clone(),
            language: file.language.clone(),
            path: path.to_owned(),
            start_line: symbol.start_line,
            end_line: symbol.end_line,
            signature: symbol.signature.clone(),
            summary: symbol.summary.clone(),
            doc: symbol.doc.clone(),
            fingerprint: symbol.fingerprint.clone(),
            test: symbol.test,
        });
        let parent = out.symbol_or_file(index, symbol.parent);
        out.edge(parent, id, EdgeKind::Contains, 0, Confidence::Resolved);
    }
}
