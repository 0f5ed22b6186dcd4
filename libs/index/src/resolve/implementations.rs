//! IMPLEMENTS edges: declared bases (extends, implements, Python base classes), Rust
//! `impl Trait for Type`, and Go structural typing.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use codectx_graph::{Confidence, Edge, EdgeKind, NodeKind, OwnerGraph, owner_hash};

use super::scope::Index;
use super::{FileOut, Repo, SymbolRef};
use crate::facts::FileFacts;
use crate::lang::clean_type;

/// Declared implementations of one file: base classes, extended and implemented types
/// (`extends`, `implements`, Python bases, Go embedded interfaces as written) and Rust
/// `impl Trait for Type`. Unresolved bases point at external nodes.
pub(super) fn declared(index: &Index<'_>, out: &mut FileOut<'_>, repo: &mut Repo<'_>) {
    let (file, file_index) = (out.file, out.file_index);
    // An alias's `bases` hold the type it stands for (EXPORTS, in exports.rs).
    for (symbol_index, symbol) in file.symbols.iter().enumerate() {
        if symbol.kind == "alias" {
            continue;
        }
        let id = index.ids[file_index][symbol_index].clone();
        for base in &symbol.bases {
            let base_clean = clean_type(base);
            if base_clean.is_empty() || matches!(base_clean.as_str(), "object" | "Object") {
                continue;
            }
            let (to, confidence) = match index.resolve_type(file_index, symbol.parent, base) {
                Some(found) => (index.id(found).to_owned(), Confidence::Resolved),
                None => {
                    let written = index
                        .expand_alias(file_index, &base_clean)
                        .unwrap_or(base_clean);
                    (
                        repo.external(&written, NodeKind::External, &mut out.sink),
                        Confidence::Unresolved,
                    )
                }
            };
            out.edge(
                id.clone(),
                to,
                EdgeKind::Implements,
                symbol.start_line,
                confidence,
            );
        }
    }
    for implementation in &file.impls {
        let Some(type_ref) = index.resolve_type(file_index, -1, &implementation.type_name) else {
            // A trait of the repository implemented for a type outside it
            // (`impl IteratorIndex<I> for RangeFull`): the external type implements it.
            if let Some(found) = index.resolve_type(file_index, -1, &implementation.trait_name) {
                let written = clean_type(&implementation.type_name);
                if !written.is_empty() && written.chars().next().is_some_and(char::is_uppercase) {
                    let from = repo.external(&written, NodeKind::External, &mut out.sink);
                    out.edge(
                        from,
                        index.id(found).to_owned(),
                        EdgeKind::Implements,
                        implementation.line,
                        Confidence::Resolved,
                    );
                }
            }
            continue;
        };
        let (to, confidence) = match index.resolve_type(file_index, -1, &implementation.trait_name)
        {
            Some(found) => (index.id(found).to_owned(), Confidence::Resolved),
            None => {
                let clean = clean_type(&implementation.trait_name);
                let written = index
                    .rust_path(file_index, &clean)
                    .or_else(|| index.expand_alias(file_index, &clean))
                    .unwrap_or(clean);
                (
                    repo.external(&written, NodeKind::External, &mut out.sink),
                    Confidence::Unresolved,
                )
            }
        };
        out.edge(
            index.id(type_ref).to_owned(),
            to,
            EdgeKind::Implements,
            implementation.line,
            confidence,
        );
    }
}

/// Go structural typing: a named type implements an interface when its method set holds
/// every method the interface requires (including embedded interfaces). Names only;
/// signatures are not compared (documented in docs/indexing.md).
pub(super) fn go_implements(index: &Index<'_>, files: &[FileFacts], owners: &mut [OwnerGraph]) {
    if !files.iter().any(|f| f.language == "go") {
        return;
    }
    // Method sets: a type's own methods plus those its embedded fields promote.
    let mut type_methods: HashMap<&str, HashSet<String>> = HashMap::default();
    for (file_index, file) in files.iter().enumerate() {
        if file.language != "go" {
            continue;
        }
        for (symbol_index, symbol) in file.symbols.iter().enumerate() {
            if symbol.kind != "type" {
                continue;
            }
            let names = method_set(
                index,
                SymbolRef {
                    file: file_index,
                    index: symbol_index,
                },
                0,
            );
            if !names.is_empty() {
                type_methods.insert(symbol.qualified_name.as_str(), names);
            }
        }
    }
    let mut method_to_types: HashMap<&str, Vec<&str>> = HashMap::default();
    for (owner_type, names) in &type_methods {
        for name in names {
            method_to_types
                .entry(name.as_str())
                .or_default()
                .push(owner_type);
        }
    }
    for types in method_to_types.values_mut() {
        types.sort_unstable();
    }
    let owner_of: HashMap<String, usize> = owners
        .iter()
        .enumerate()
        .map(|(i, o)| (o.owner.clone(), i))
        .collect();
    for (file_index, file) in files.iter().enumerate() {
        if file.language != "go" {
            continue;
        }
        for (symbol_index, symbol) in file.symbols.iter().enumerate() {
            if symbol.kind != "interface" {
                continue;
            }
            let required = interface_methods(
                index,
                SymbolRef {
                    file: file_index,
                    index: symbol_index,
                },
                0,
            );
            if required.is_empty() {
                continue;
            }
            let rarest = required
                .iter()
                .min_by_key(|m| method_to_types.get(m.as_str()).map_or(0, Vec::len))
                .expect("non-empty");
            let Some(candidates) = method_to_types.get(rarest.as_str()) else {
                continue;
            };
            let interface_id = index.ids[file_index][symbol_index].clone();
            for candidate in candidates {
                let methods = &type_methods[candidate];
                if !required.iter().all(|m| methods.contains(m)) {
                    continue;
                }
                let Some(type_ref) = index.qualified(candidate, |s| s.kind == "type") else {
                    continue;
                };
                let type_file = &files[type_ref.file];
                let Some(&owner) = owner_of.get(&type_file.path) else {
                    continue;
                };
                let edge = Edge {
                    from: index.id(type_ref).to_owned(),
                    to: interface_id.clone(),
                    kind: EdgeKind::Implements,
                    line: index.symbol(type_ref).start_line,
                    confidence: Confidence::Resolved,
                };
                let target = &mut owners[owner];
                if !target.edges.contains(&edge) {
                    target.edges.push(edge);
                }
            }
        }
    }
    for owner in owners.iter_mut() {
        owner.edges.sort_by(|a, b| {
            (&a.from, &a.to, a.kind, a.line).cmp(&(&b.from, &b.to, b.kind, b.line))
        });
        owner.hash = owner_hash(&owner.nodes, &owner.edges);
    }
}

/// Names of a Go type's methods: its own and, through embedded fields (to depth 4),
/// the methods of embedded types and the required methods of embedded interfaces.
pub(super) fn method_set(index: &Index<'_>, type_ref: SymbolRef, depth: u32) -> HashSet<String> {
    let symbol = index.symbol(type_ref);
    let mut names: HashSet<String> = index
        .methods
        .get(&symbol.qualified_name)
        .map(|methods| {
            methods
                .iter()
                .map(|m| index.symbol(*m).name.clone())
                .collect()
        })
        .unwrap_or_default();
    if depth < 4 {
        for embedded in &symbol.embedded {
            let Some(found) = index.resolve_type(type_ref.file, -1, embedded) else {
                continue;
            };
            match index.symbol(found).kind.as_str() {
                "interface" => names.extend(interface_methods(index, found, depth + 1)),
                "type" => names.extend(method_set(index, found, depth + 1)),
                _ => {}
            }
        }
    }
    names
}

pub(super) fn interface_methods(
    index: &Index<'_>,
    interface: SymbolRef,
    depth: u32,
) -> BTreeSet<String> {
    let symbol = index.symbol(interface);
    let mut methods: BTreeSet<String> = symbol.required_methods.iter().cloned().collect();
    if depth < 4 {
        for embedded in &symbol.embedded {
            if let Some(found) = index.resolve_type(interface.file, -1, embedded)
                && index.symbol(found).kind == "interface"
            {
                methods.extend(interface_methods(index, found, depth + 1));
            }
        }
    }
    methods
}
