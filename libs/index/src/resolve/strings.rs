//! String nodes: messages passed to error constructors, panics, raises and throws
//! (`error_message`) and every other literal of 8+ characters (`string`), kept (redacted)
//! so exact lookup finds where a message comes from, contained by the symbol that raises
//! or writes them. The signature is the source line (how the message is built); the
//! summary names the symbol, or the top-level statement outside any symbol.

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, node_id};

use super::FileOut;
use super::scope::Index;

pub(super) fn nodes(graph_id: &str, index: &Index<'_>, out: &mut FileOut<'_>) {
    let (file, path) = (out.file, out.path);
    for error in &file.errors {
        let kind = if error.raised {
            NodeKind::ErrorMessage
        } else {
            NodeKind::StringLiteral
        };
        let id = node_id(
            graph_id,
            kind,
            path,
            &error.message,
            &error.line.to_string(),
        );
        out.nodes.push(Node {
            id: id.clone(),
            kind,
            name: error.message.clone(),
            qualified_name: error.message.clone(),
            language: file.language.clone(),
            path: path.to_owned(),
            start_line: error.line,
            end_line: error.line,
            signature: error.context.clone(),
            // Where it is raised: what an agent looking up a message wants next.
            summary: match file.symbols.get(error.enclosing.max(0) as usize) {
                Some(s) if error.enclosing >= 0 => format!(
                    "{} {}",
                    if error.raised { "raised in" } else { "in" },
                    s.qualified_name
                ),
                _ if !error.statement.is_empty() => {
                    format!("in the top-level statement `{}`", error.statement)
                }
                _ => String::new(),
            },
            fingerprint: String::new(),
            test: false,
            doc: String::new(),
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
