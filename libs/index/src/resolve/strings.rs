//! String nodes: messages passed to error constructors, panics, raises and throws, kept
//! (redacted) so exact lookup finds where a message comes from, contained by the symbol
//! that raises them.

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, node_id};

use super::FileOut;
use super::scope::Index;

pub(super) fn nodes(graph_id: &str, index: &Index<'_>, out: &mut FileOut<'_>) {
    let (file, path) = (out.file, out.path);
    for error in &file.errors {
        let id = node_id(
            graph_id,
            NodeKind::ErrorMessage,
            path,
            &error.message,
            &error.line.to_string(),
        );
        out.nodes.push(Node {
            id: id.clone(),
            kind: NodeKind::ErrorMessage,
            name: error.message.clone(),
            qualified_name: error.message.clone(),
            language: file.language.clone(),
            path: path.to_owned(),
            start_line: error.line,
            end_line: error.line,
            signature: String::new(),
            // Where it is raised: what an agent looking up a message wants next.
            summary: file
                .symbols
                .get(error.enclosing.max(0) as usize)
                .filter(|_| error.enclosing >= 0)
                .map(|s| format!("raised in {}", s.qualified_name))
                .unwrap_or_default(),
            fingerprint: String::new(),
            test: false,
        });
        let from = out.symbol_or_file(index, error.enclosing);
        out.edge(
            from,
            id,
            EdgeKind::Contains,
            error.line,
            Confidence::Resolved,
        );
    }
}
