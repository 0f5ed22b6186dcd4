//! The symbol table resolution reads: symbols by qualified and short name, methods by
//! owner type, typed bindings per scope, imports per file, Rust impls. Scope rules (nested
//! scopes, aliases, Rust paths, type names) live here; each edge family's rules live in
//! its own module.

use rustc_hash::FxHashMap as HashMap;

use codectx_graph::{NodeKind, node_id};

use super::calls::result_type;

use super::{SymbolRef, is_type, separator};
use crate::facts::{FileFacts, STAR_IMPORT, SymbolFact};
use crate::lang::clean_type;

/// Symbols by a key (a qualified or a plain name), every list in one allocation: the
/// table is built on every run over every file, and most keys have one symbol, so a
/// vector per key cost more to build and free than the lookups it served.
pub(super) struct ByKey<'a> {
    /// Key -> (start, end) in `refs`.
    slots: HashMap<&'a str, (u32, u32)>,
    refs: Vec<SymbolRef>,
}

impl<'a> ByKey<'a> {
    /// From (key, symbol) pairs; each key's symbols keep the pairs' order.
    fn build(pairs: &[(&'a str, SymbolRef)]) -> Self {
        let mut slots: HashMap<&'a str, (u32, u32)> = HashMap::default();
        slots.reserve(pairs.len());
        for (key, _) in pairs {
            slots.entry(key).or_insert((0, 0)).1 += 1;
        }
        let mut next = 0u32;
        for slot in slots.values_mut() {
            let count = slot.1;
            *slot = (next, next);
            next += count;
        }
        let mut refs = vec![SymbolRef { file: 0, index: 0 }; pairs.len()];
        for (key, reference) in pairs {
            let slot = slots.get_mut(key).expect("counted above");
            refs[slot.1 as usize] = *reference;
            slot.1 += 1;
        }
        Self { slots, refs }
    }

    pub(super) fn get(&self, key: &str) -> Option<&[SymbolRef]> {
        let (start, end) = *self.slots.get(key)?;
        Some(&self.refs[start as usize..end as usize])
    }
}

/// `name.rsplit_once("::")`, without building a substring searcher for a name that has
/// no colon (every Python, Go or JavaScript name: this runs for each name resolved).
fn rsplit_path(name: &str) -> Option<(&str, &str)> {
    if name.contains(':') {
        name.rsplit_once("::")
    } else {
        None
    }
}

/// `text.split_once(sep)` for a language's separator (`.` or `::`), by a byte search
/// where one will do.
fn split_once_sep<'t>(text: &'t str, sep: &str) -> Option<(&'t str, &'t str)> {
    match sep.as_bytes() {
        [byte] => text.split_once(char::from(*byte)),
        [first, ..] if !text.as_bytes().contains(first) => None,
        _ => text.split_once(sep),
    }
}

pub(super) struct Index<'a> {
    pub(super) files: &'a [FileFacts],
    pub(super) ids: Vec<Vec<String>>,
    pub(super) by_qualified: ByKey<'a>,
    pub(super) by_name: ByKey<'a>,
    /// owner type qualified name → its methods.
    pub(super) methods: HashMap<String, Vec<SymbolRef>>,
    /// (file, scope) → bindings (variable, type text).
    pub(super) bindings: HashMap<(usize, i32), Vec<(&'a str, &'a str)>>,
    /// file → alias → target.
    pub(super) imports: Vec<HashMap<&'a str, &'a str>>,
    /// file → the modules it re-exports whole (`export * from './m'`).
    pub(super) star_exports: Vec<Vec<&'a str>>,
    /// Rust impls: type qualified → trait names as written, with the file they are in.
    pub(super) impl_traits: HashMap<String, Vec<(usize, &'a str)>>,
    /// Module path → the files that make it (a Python package's `__init__`, a JS index).
    pub(super) modules: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Index<'a> {
    /// The table over `files`; `known` holds symbol ids an earlier run computed for some
    /// of them (by path), used when they still count the file's symbols.
    pub(super) fn new(
        graph_id: &'a str,
        files: &'a [FileFacts],
        mut known: std::collections::HashMap<String, Vec<String>>,
    ) -> Self {
        let symbols: usize = files.iter().map(|f| f.symbols.len()).sum();
        let mut qualified_pairs: Vec<(&'a str, SymbolRef)> = Vec::with_capacity(symbols);
        let mut name_pairs: Vec<(&'a str, SymbolRef)> = Vec::with_capacity(symbols);
        let mut index = Index {
            files,
            ids: Vec::with_capacity(files.len()),
            by_qualified: ByKey::build(&[]),
            by_name: ByKey::build(&[]),
            methods: HashMap::default(),
            bindings: HashMap::default(),
            imports: Vec::with_capacity(files.len()),
            star_exports: Vec::with_capacity(files.len()),
            impl_traits: HashMap::default(),
            modules: HashMap::default(),
        };
        for (file_index, file) in files.iter().enumerate() {
            // Hashing every symbol's id was a third of this table on a one-file re-index.
            let ids = match known.remove(&file.path) {
                Some(ids) if ids.len() == file.symbols.len() => ids,
                _ => file
                    .symbols
                    .iter()
                    .map(|symbol| {
                        node_id(
                            graph_id,
                            NodeKind::parse(&symbol.kind).unwrap_or(NodeKind::Function),
                            &file.path,
                            &symbol.qualified_name,
                            &symbol.discriminator,
                        )
                    })
                    .collect(),
            };
            for (symbol_index, symbol) in file.symbols.iter().enumerate() {
                let reference = SymbolRef {
                    file: file_index,
                    index: symbol_index,
                };
                qualified_pairs.push((symbol.qualified_name.as_str(), reference));
                name_pairs.push((symbol.name.as_str(), reference));
            }
            index.ids.push(ids);
            for binding in &file.bindings {
                index
                    .bindings
                    .entry((file_index, binding.scope))
                    .or_default()
                    .push((binding.variable.as_str(), binding.type_name.as_str()));
            }
            if !file.module.is_empty() {
                index
                    .modules
                    .entry(file.module.as_str())
                    .or_default()
                    .push(file_index);
            }
            index.imports.push(
                file.imports
                    .iter()
                    .filter(|i| i.alias != STAR_IMPORT)
                    .map(|i| (i.alias.as_str(), i.target.as_str()))
                    .collect(),
            );
            index.star_exports.push(
                file.imports
                    .iter()
                    .filter(|i| i.alias == STAR_IMPORT)
                    .map(|i| i.module.as_str())
                    .collect(),
            );
        }
        index.by_qualified = ByKey::build(&qualified_pairs);
        index.by_name = ByKey::build(&name_pairs);
        // Methods attach to their type; an impl in another module than its type (Rust) is
        // attached through type resolution from the impl's file.
        for (file_index, file) in files.iter().enumerate() {
            for (symbol_index, symbol) in file.symbols.iter().enumerate() {
                if symbol.owner_type.is_empty() || symbol.kind != "method" {
                    continue;
                }
                let key = if index
                    .qualified(&symbol.owner_type, |s| is_type(&s.kind))
                    .is_some()
                {
                    symbol.owner_type.clone()
                } else {
                    let sep = separator(&file.language);
                    let last = symbol
                        .owner_type
                        .rsplit(sep)
                        .next()
                        .unwrap_or(&symbol.owner_type);
                    index
                        .resolve_type(file_index, -1, last)
                        .map(|t| index.symbol(t).qualified_name.clone())
                        .unwrap_or_else(|| symbol.owner_type.clone())
                };
                index.methods.entry(key).or_default().push(SymbolRef {
                    file: file_index,
                    index: symbol_index,
                });
            }
        }
        for (file_index, file) in files.iter().enumerate() {
            for implementation in &file.impls {
                if let Some(type_ref) =
                    index.resolve_type(file_index, -1, &implementation.type_name)
                {
                    let qualified = index.symbol(type_ref).qualified_name.clone();
                    index
                        .impl_traits
                        .entry(qualified)
                        .or_default()
                        .push((file_index, implementation.trait_name.as_str()));
                }
            }
        }
        index
    }

    pub(super) fn symbol(&self, r: SymbolRef) -> &'a SymbolFact {
        &self.files[r.file].symbols[r.index]
    }

    pub(super) fn id(&self, r: SymbolRef) -> &str {
        &self.ids[r.file][r.index]
    }

    pub(super) fn sep(&self, file: usize) -> &'static str {
        separator(&self.files[file].language)
    }

    /// The symbol of qualified name `name` that passes `filter`; a public path through
    /// re-exports (`click.command` for `click.decorators.command`, imported by the
    /// package's `__init__`; `crate::a::Trait` through `pub use`) reaches the definition.
    pub(super) fn qualified(
        &self,
        name: &str,
        filter: impl Fn(&SymbolFact) -> bool,
    ) -> Option<SymbolRef> {
        self.qualified_through(name, &filter, 0)
    }

    fn qualified_through(
        &self,
        name: &str,
        filter: &dyn Fn(&SymbolFact) -> bool,
        depth: u32,
    ) -> Option<SymbolRef> {
        if let Some(found) = self
            .by_qualified
            .get(name)
            .and_then(|refs| refs.iter().copied().find(|r| filter(self.symbol(*r))))
        {
            return Some(found);
        }
        if depth >= 3 {
            return None;
        }
        let (module, last, sep) = match rsplit_path(name) {
            Some((module, last)) => (module, last, "::"),
            None => {
                let (module, last) = name.rsplit_once('.')?;
                (module, last, ".")
            }
        };
        let files = self.modules.get(module)?;
        for &file in files {
            if let Some(target) = self.imports[file].get(last)
                && *target != name
                && let Some(found) = self.qualified_through(target, filter, depth + 1)
            {
                return Some(found);
            }
        }
        // `export * from './m'` in the module's file: the name may be m's.
        for &file in files {
            for star in &self.star_exports[file] {
                if *star != module
                    && let Some(found) =
                        self.qualified_through(&format!("{star}{sep}{last}"), filter, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// Expands a leading import alias (`http.Server` → `net/http.Server`).
    pub(super) fn expand_alias(&self, file: usize, text: &str) -> Option<String> {
        let sep = self.sep(file);
        let (head, rest) = match split_once_sep(text, sep) {
            Some((head, rest)) => (head, Some(rest)),
            None => (text, None),
        };
        let target = self.imports[file].get(head)?;
        Some(match rest {
            Some(rest) => format!("{target}{sep}{rest}"),
            None => (*target).to_owned(),
        })
    }

    /// Rust `crate::`, `self::`, `super::` prefixes relative to the file's module.
    pub(super) fn rust_path(&self, file: usize, text: &str) -> Option<String> {
        let module = &self.files[file].module;
        if let Some(rest) = text.strip_prefix("crate::") {
            let crate_name = module.split("::").next().unwrap_or(module);
            return Some(format!("{crate_name}::{rest}"));
        }
        if let Some(rest) = text.strip_prefix("self::") {
            return Some(format!("{module}::{rest}"));
        }
        if let Some(rest) = text.strip_prefix("super::") {
            let parent = module.rsplit_once("::").map(|(p, _)| p).unwrap_or(module);
            return Some(format!("{parent}::{rest}"));
        }
        None
    }

    /// The type symbol a type expression names, seen from `scope` in `file`.
    pub(super) fn resolve_type(&self, file: usize, scope: i32, text: &str) -> Option<SymbolRef> {
        let mut text = clean_type(text);
        if self.files[file].language == "python" {
            // `Optional[Foo]` and string annotations.
            text = text.trim_matches(|c| c == '"' || c == '\'').to_owned();
        }
        if text.is_empty() {
            return None;
        }
        let sep = self.sep(file);
        let module = &self.files[file].module;
        let mut candidates = Vec::new();
        if let Some(path) = self.rust_path(file, &text) {
            candidates.push(path);
        }
        if let Some(expanded) = self.expand_alias(file, &text) {
            candidates.push(expanded);
        }
        // Nested types: enclosing symbols' qualified names first.
        let mut parent = scope;
        while parent >= 0 {
            let symbol = &self.files[file].symbols[parent as usize];
            candidates.push(format!("{}{sep}{text}", symbol.qualified_name));
            parent = symbol.parent;
        }
        if !module.is_empty() {
            candidates.push(format!("{module}{sep}{text}"));
        }
        candidates.push(text.clone());
        for candidate in &candidates {
            if let Some(found) = self.qualified(candidate, |s| is_type(&s.kind)) {
                return Some(self.through_alias(found));
            }
        }
        // Same package in Go spans files with the same module; other languages by unique name.
        let last = text.rsplit(sep).next().unwrap_or(&text);
        let types: Vec<SymbolRef> = self
            .by_name
            .get(last)
            .map(|refs| {
                refs.iter()
                    .copied()
                    .filter(|r| is_type(&self.symbol(*r).kind))
                    .collect()
            })
            .unwrap_or_default();
        if types.len() == 1 {
            Some(self.through_alias(types[0]))
        } else {
            None
        }
    }

    /// The definition a type alias stands for (`type FileInfo = fs.FileInfo` in Go), when
    /// the repository defines it; any other symbol, or an alias of an outside type, is
    /// itself.
    pub(super) fn through_alias(&self, found: SymbolRef) -> SymbolRef {
        let mut current = found;
        for _ in 0..3 {
            if self.symbol(current).kind != "alias" {
                break;
            }
            match self.alias_target(current) {
                Some(target) => current = target,
                None => break,
            }
        }
        current
    }

    /// The symbol a type alias names as its target, without following further aliases.
    pub(super) fn alias_target(&self, found: SymbolRef) -> Option<SymbolRef> {
        let symbol = self.symbol(found);
        let text = symbol.bases.first()?;
        let text = clean_type(text);
        let sep = self.sep(found.file);
        let module = &self.files[found.file].module;
        let mut candidates = Vec::new();
        if let Some(expanded) = self.expand_alias(found.file, &text) {
            candidates.push(expanded);
        }
        if !module.is_empty() {
            candidates.push(format!("{module}{sep}{text}"));
        }
        candidates
            .iter()
            .find_map(|c| self.qualified(c, |s| is_type(&s.kind)))
            .filter(|t| *t != found)
    }

    pub(super) fn binding(&self, file: usize, scope: i32, variable: &str) -> Option<&'a str> {
        let mut current = scope;
        loop {
            if let Some(found) = self
                .bindings
                .get(&(file, current))
                .and_then(|b| b.iter().rev().find(|(v, _)| *v == variable))
            {
                return Some(found.1);
            }
            if current < 0 {
                return None;
            }
            current = self.files[file].symbols[current as usize].parent;
        }
    }

    /// The type a binding denotes; `call:F` bindings take F's declared result type.
    pub(super) fn binding_type(
        &self,
        file: usize,
        scope: i32,
        type_text: &str,
    ) -> Option<SymbolRef> {
        match type_text.strip_prefix("call:") {
            Some(function) => {
                let target = self.resolve_plain(file, scope, function, 0)?;
                let symbol = self.symbol(target);
                let result = result_type(&symbol.signature)?;
                self.resolve_type(target.file, symbol.parent, &result)
            }
            None => self.resolve_type(file, scope, type_text),
        }
    }

    /// The enclosing type of a scope (the class or receiver type of a method).
    pub(super) fn enclosing_type(&self, file: usize, scope: i32) -> Option<SymbolRef> {
        let mut current = scope;
        while current >= 0 {
            let symbol = &self.files[file].symbols[current as usize];
            if !symbol.owner_type.is_empty()
                && let Some(found) = self.qualified(&symbol.owner_type, |s| is_type(&s.kind))
            {
                return Some(found);
            }
            if is_type(&symbol.kind) {
                return Some(SymbolRef {
                    file,
                    index: current as usize,
                });
            }
            current = symbol.parent;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_splits_answer_as_the_substring_searches() {
        let names = [
            "",
            ".",
            "::",
            ":",
            "a",
            "a.b",
            "a.b.c",
            "a::b",
            "a::b::c",
            "a:b",
            "a:::b",
            "a::b:c",
            "a::",
            "::a",
            "a.b::c",
            "a::b.c",
            "é.ü::ß",
            "x:y.z",
        ];
        for name in names {
            assert_eq!(rsplit_path(name), name.rsplit_once("::"), "{name:?}");
            for sep in [".", "::"] {
                assert_eq!(
                    split_once_sep(name, sep),
                    name.split_once(sep),
                    "{name:?} {sep:?}"
                );
            }
        }
    }
}
