//! Alias nodes and EXPORTS edges: a re-export (Rust `pub use`, an import in a Python
//! package's `__init__`) gives its target a public path (`itertools::traits::IteratorIndex`
//! for `itertools::iter_index::IteratorIndex`). The alias node holds that path and
//! EXPORTS the definition, so a lookup by the public path answers with the definition,
//! and the definition's context lists the paths it is exported as. Chains of re-exports
//! resolve to the definition (`scope::Index::qualified`).

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, node_id};

use super::FileOut;
use super::scope::Index;

pub(super) fn aliases(graph_id: &str, index: &Index<'_>, out: &mut FileOut<'_>) {
    let (file, path) = (out.file, out.path);
    for import in file.imports.iter().filter(|i| !i.exported_as.is_empty()) {
        let Some(found) = index.qualified(&import.target, |_| true) else {
            continue;
        };
        let target = index.symbol(found);
        if target.qualified_name == import.exported_as {
            continue;
        }
        let id = node_id(graph_id, NodeKind::Alias, path, &import.exported_as, "");
        out.nodes.push(Node {
            id: id.clone(),
            kind: NodeKind::Alias,
            name: import.alias.clone(),
            qualified_name: import.exported_as.clone(),
            language: file.language.clone(),
            path: path.to_owned(),
            start_line: import.line,
            end_line: import.line,
            signature: format!("re-exports {}", target.qualified_name),
            summary: String::new(),
            fingerprint: String::new(),
            test: false,
        });
        out.edge(
            id,
            index.id(found).to_owned(),
            EdgeKind::Exports,
            import.line,
            Confidence::Resolved,
        );
    }
}
