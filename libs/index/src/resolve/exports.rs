//! Alias nodes and EXPORTS edges: a re-export (Rust `pub use`, an import in a Python
//! package's `__init__`, JS/TS `export { x } from` and `export * from`) gives its target a public path (`itertools::traits::IteratorIndex`
//! for `itertools::iter_index::IteratorIndex`). The alias node holds that path and
//! EXPORTS the definition, so a lookup by the public path answers with the definition,
//! and the definition's context lists the paths it is exported as. Chains of re-exports
//! resolve to the definition (`scope::Index::qualified`). A Go type alias is a symbol of
//! kind `alias` that EXPORTS the type it names.

use codectx_graph::{Confidence, EdgeKind, Node, NodeKind, node_id};

use rustc_hash::FxHashSet as HashSet;

use super::scope::Index;
use super::{FileOut, Repo, SymbolRef, separator};
use crate::facts::STAR_IMPORT;
use crate::lang::clean_type;

/// Type aliases defined as symbols (Go `type FileInfo = fs.FileInfo`): the alias EXPORTS
/// the type it stands for (an external node when the repository does not define it).
pub(super) fn type_aliases(index: &Index<'_>, out: &mut FileOut<'_>, repo: &mut Repo<'_>) {
    let (file, file_index) = (out.file, out.file_index);
    for (symbol_index, symbol) in file.symbols.iter().enumerate() {
        if symbol.kind != "alias" {
            continue;
        }
        let Some(written) = symbol.bases.first() else {
            continue;
        };
        let found = SymbolRef {
            file: file_index,
            index: symbol_index,
        };
        let (to, confidence) = match index.alias_target(found) {
            Some(target) => (index.id(target).to_owned(), Confidence::Resolved),
            None => {
                let clean = clean_type(written);
                if clean.is_empty() {
                    continue;
                }
                let written = index.expand_alias(file_index, &clean).unwrap_or(clean);
                (
                    repo.external(&written, NodeKind::External, &mut out.sink),
                    Confidence::Unresolved,
                )
            }
        };
        let id = index.ids[file_index][symbol_index].clone();
        out.edge(id, to, EdgeKind::Exports, symbol.start_line, confidence);
    }
}

/// Most aliases one `export * from` gives (a generated barrel can hold thousands).
const MAX_STAR_ALIASES: usize = 500;

pub(super) fn aliases(graph_id: &str, index: &Index<'_>, out: &mut FileOut<'_>) {
    let file = out.file;
    let mut made: HashSet<String> = HashSet::default();
    for import in file.imports.iter().filter(|i| !i.exported_as.is_empty()) {
        if import.alias == STAR_IMPORT {
            // Every top-level symbol of the module, under the re-exporting module's path.
            let sep = separator(&file.language);
            let mut targets = Vec::new();
            star_targets(index, &import.module, 0, &mut targets);
            for found in targets.into_iter().take(MAX_STAR_ALIASES) {
                let target = index.symbol(found);
                let exported_as = format!("{}{sep}{}", import.exported_as, target.name);
                alias(
                    graph_id,
                    index,
                    out,
                    found,
                    &exported_as,
                    &target.name,
                    import.line,
                    &mut made,
                );
            }
            continue;
        }
        let Some(found) = index.qualified(&import.target, |_| true) else {
            continue;
        };
        alias(
            graph_id,
            index,
            out,
            found,
            &import.exported_as,
            &import.alias,
            import.line,
            &mut made,
        );
    }
}

/// The top-level, non-test symbols of `module`, through its own `export * from` (three
/// levels at most).
fn star_targets(index: &Index<'_>, module: &str, depth: u32, out: &mut Vec<SymbolRef>) {
    let Some(files) = index.modules.get(module) else {
        return;
    };
    for &file in files {
        for (symbol_index, symbol) in index.files[file].symbols.iter().enumerate() {
            if symbol.parent < 0 && !symbol.test {
                out.push(SymbolRef {
                    file,
                    index: symbol_index,
                });
            }
        }
        if depth < 3 {
            for star in &index.star_exports[file] {
                if *star != module {
                    star_targets(index, star, depth + 1, out);
                }
            }
        }
    }
}

/// One alias node: `exported_as` EXPORTS the definition `found` (not when the public
/// path is the definition's own, nor twice in a file).
#[allow(clippy::too_many_arguments)]
fn alias(
    graph_id: &str,
    index: &Index<'_>,
    out: &mut FileOut<'_>,
    found: SymbolRef,
    exported_as: &str,
    name: &str,
    line: u32,
    made: &mut HashSet<String>,
) {
    let target = index.symbol(found);
    if target.qualified_name == exported_as || !made.insert(exported_as.to_owned()) {
        return;
    }
    let (file, path) = (out.file, out.path);
    let id = node_id(graph_id, NodeKind::Alias, path, exported_as, "");
    out.nodes.push(Node {
        id: id.clone(),
        kind: NodeKind::Alias,
        name: name.to_owned(),
        qualified_name: exported_as.to_owned(),
        language: file.language.clone(),
        path: path.to_owned(),
        start_line: line,
        end_line: line,
        signature: format!("re-exports {}", target.qualified_name),
        summary: String::new(),
        doc: String::new(),
        fingerprint: String::new(),
        test: false,
    });
    out.edge(
        id,
        index.id(found).to_owned(),
        EdgeKind::Exports,
        line,
        Confidence::Resolved,
    );
}
