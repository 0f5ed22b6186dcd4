//! Markdown sections (DocSection nodes) and MENTIONS edges: a code span in a section that
//! names exactly one symbol by a suffix of its qualified name mentions it.

use rustc_hash::FxHashMap as HashMap;

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, lookup_key, node_id};

use super::scope::Index;
use super::{BuildScope, FileOut, SymbolRef};
use crate::facts::FileFacts;

/// Qualified-name suffixes → symbols; built only when a file to build has sections.
pub(super) struct Mentions {
    suffixes: HashMap<String, Vec<SymbolRef>>,
}

impl Mentions {
    pub(super) fn new(files: &[FileFacts], scope: &BuildScope) -> Self {
        let mut suffixes: HashMap<String, Vec<SymbolRef>> = HashMap::default();
        let has_docs = files
            .iter()
            .any(|f| !f.sections.is_empty() && scope.builds(&f.path));
        if has_docs {
            for (file_index, file) in files.iter().enumerate() {
                for (symbol_index, symbol) in file.symbols.iter().enumerate() {
                    let key = lookup_key(&symbol.qualified_name);
                    let parts: Vec<&str> = key.split('.').collect();
                    for start in 0..parts.len() {
                        suffixes
                            .entry(parts[start..].join("."))
                            .or_default()
                            .push(SymbolRef {
                                file: file_index,
                                index: symbol_index,
                            });
                    }
                }
            }
        }
        Self { suffixes }
    }

    pub(super) fn sections(&self, graph_id: &str, index: &Index<'_>, out: &mut FileOut<'_>) {
        let (file, path) = (out.file, out.path);
        for section in &file.sections {
            let qualified = format!("{path}#{}", section.heading);
            let id = node_id(
                graph_id,
                NodeKind::DocSection,
                path,
                &qualified,
                &section.start_line.to_string(),
            );
            out.nodes.push(Node {
                id: id.clone(),
                kind: NodeKind::DocSection,
                name: section.heading.clone(),
                qualified_name: qualified,
                language: "markdown".into(),
                path: path.to_owned(),
                start_line: section.start_line,
                end_line: section.end_line,
                signature: String::new(),
                summary: String::new(),
                doc: String::new(),
                fingerprint: section.fingerprint.clone(),
                test: false,
            });
            let file_id = out.file_id.clone();
            out.edge(
                file_id,
                id.clone(),
                EdgeKind::Contains,
                0,
                Confidence::Resolved,
            );
            for mention in &section.mentions {
                let key = lookup_key(mention.trim_end_matches("()"));
                if let Some(found) = self.suffixes.get(&key)
                    && found.len() == 1
                {
                    out.edge(
                        id.clone(),
                        index.id(found[0]).to_owned(),
                        EdgeKind::Mentions,
                        section.start_line,
                        Confidence::Resolved,
                    );
                }
            }
        }
    }
}
