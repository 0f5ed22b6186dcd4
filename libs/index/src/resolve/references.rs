//! REFERENCES edges: a symbol names another without calling it (a package-level variable
//! or constant read or written, a type in a signature or a literal, a function passed as
//! a value, `self.prop`). Rules, in order:
//!
//! - a bare name resolves through the enclosing scopes, the module (the package in Go),
//!   the file's imports and Go dot imports, then as a type name; any symbol kind but a
//!   method (a method needs a receiver);
//! - `alias.Name` where `alias` is an import resolves in the imported module; any other
//!   receiver (`self.x`, a typed local, a field) resolves like a call on it, and only
//!   when that is `resolved` (never `name_match`);
//! - a use that is already a CALLS edge between the same two symbols adds nothing.
//!
//! A test's references also mark what it covers (TESTED_BY).

use rustc_hash::FxHashSet as HashSet;

use codectx_graph::{Confidence, EdgeKind};

use super::scope::Index;
use super::tested_by::Tested;
use super::{FileOut, SymbolRef, Target, is_test_symbol};
use crate::facts::{CallFact, ReferenceFact};

impl Index<'_> {
    /// A bare name in scope: nested symbols, the module, imports, dot imports.
    fn resolve_name(&self, file: usize, scope: i32, name: &str) -> Option<SymbolRef> {
        let sep = self.sep(file);
        let facts = &self.files[file];
        let not_method = |s: &crate::facts::SymbolFact| s.kind != "method";
        // An import binds the name in the file (a stub or another file of the same module
        // may define one of the same name).
        if let Some(target) = self.imports[file].get(name)
            && let Some(found) = self.qualified(target, |_| true)
        {
            return Some(found);
        }
        let mut parent = scope;
        while parent >= 0 {
            let symbol = &facts.symbols[parent as usize];
            if let Some(found) =
                self.qualified(&format!("{}{sep}{name}", symbol.qualified_name), not_method)
            {
                return Some(found);
            }
            parent = symbol.parent;
        }
        if !facts.module.is_empty()
            && let Some(found) = self.qualified(&format!("{}{sep}{name}", facts.module), not_method)
        {
            return Some(found);
        }
        for import in facts.imports.iter().filter(|i| i.alias == ".") {
            if let Some(found) =
                self.qualified(&format!("{}{sep}{name}", import.target), not_method)
            {
                return Some(found);
            }
        }
        self.resolve_type(file, scope, name)
    }

    /// What a reference names, if the graph holds it.
    fn resolve_reference(&self, file: usize, reference: &ReferenceFact) -> Option<SymbolRef> {
        self.resolve_reference_as_written(file, reference)
            .map(|found| self.through_alias(found))
    }

    fn resolve_reference_as_written(
        &self,
        file: usize,
        reference: &ReferenceFact,
    ) -> Option<SymbolRef> {
        if reference.receiver.is_empty() {
            return self.resolve_name(file, reference.from, &reference.name);
        }
        let sep = self.sep(file);
        if let Some(module) = self.imports[file].get(reference.receiver.as_str())
            && let Some(found) =
                self.qualified(&format!("{module}{sep}{}", reference.name), |_| true)
        {
            return Some(found);
        }
        let call = CallFact {
            caller: reference.from,
            name: reference.name.clone(),
            receiver: reference.receiver.clone(),
            line: reference.line,
            arguments: 0,
        };
        match self.resolve_call(file, &call) {
            (Target::Symbol(found), Confidence::Resolved) => Some(found),
            _ => None,
        }
    }
}

pub(super) fn edges(index: &Index<'_>, out: &mut FileOut<'_>, tested: &mut Tested) {
    let (file, file_index) = (out.file, out.file_index);
    let calls: HashSet<(String, String)> = out
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls)
        .map(|e| (e.from.clone(), e.to.clone()))
        .collect();
    let mut added: HashSet<(String, String)> = HashSet::default();
    for reference in &file.references {
        if reference.from < 0 {
            continue;
        }
        let Some(found) = index.resolve_reference(file_index, reference) else {
            continue;
        };
        let from = index.ids[file_index][reference.from as usize].clone();
        let to = index.id(found).to_owned();
        if from == to {
            continue;
        }
        if is_test_symbol(file, reference.from) && !index.symbol(found).test {
            tested.note(&to, &from, reference.line);
        }
        if calls.contains(&(from.clone(), to.clone())) || !added.insert((from.clone(), to.clone()))
        {
            continue;
        }
        out.edge(
            from,
            to,
            EdgeKind::References,
            reference.line,
            Confidence::Resolved,
        );
    }
}
