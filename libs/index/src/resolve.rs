//! Turns every file's facts into graph nodes and edges: qualified names become ids, calls
//! are resolved across files through scope, imports, receivers and type hints, and what
//! cannot be resolved is kept as an `external` target with confidence `unresolved`
//! (never dropped, never guessed). Implements, tested-by and mentions edges are derived
//! here too.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use codectx_graph::query::{file_subject, is_test_path};
use codectx_graph::{
    Confidence, Edge, EdgeKind, Node, NodeKind, OwnerGraph, lookup_key, node_id, owner_hash,
};

use crate::facts::{FileFacts, SymbolFact};
use crate::lang::clean_type;

/// The repository-level owner.
pub const REPOSITORY_OWNER: &str = "";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SymbolRef {
    file: usize,
    index: usize,
}

enum Target {
    Symbol(SymbolRef),
    External(String),
}

fn separator(language: &str) -> &'static str {
    if language == "rust" { "::" } else { "." }
}

fn is_callable(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "class" | "type")
}

fn is_type(kind: &str) -> bool {
    matches!(kind, "type" | "class" | "interface")
}

struct Index<'a> {
    files: &'a [FileFacts],
    ids: Vec<Vec<String>>,
    by_qualified: HashMap<&'a str, Vec<SymbolRef>>,
    by_name: HashMap<&'a str, Vec<SymbolRef>>,
    /// owner type qualified name → its methods.
    methods: HashMap<String, Vec<SymbolRef>>,
    /// (file, scope) → bindings (variable, type text).
    bindings: HashMap<(usize, i32), Vec<(&'a str, &'a str)>>,
    /// file → alias → target.
    imports: Vec<HashMap<&'a str, &'a str>>,
    /// Rust impls: type qualified → trait names as written, with the file they are in.
    impl_traits: HashMap<String, Vec<(usize, &'a str)>>,
}

impl<'a> Index<'a> {
    fn new(graph_id: &'a str, files: &'a [FileFacts]) -> Self {
        let mut index = Index {
            files,
            ids: Vec::with_capacity(files.len()),
            by_qualified: HashMap::default(),
            by_name: HashMap::default(),
            methods: HashMap::default(),
            bindings: HashMap::default(),
            imports: Vec::with_capacity(files.len()),
            impl_traits: HashMap::default(),
        };
        for (file_index, file) in files.iter().enumerate() {
            let mut ids = Vec::with_capacity(file.symbols.len());
            for (symbol_index, symbol) in file.symbols.iter().enumerate() {
                let kind = NodeKind::parse(&symbol.kind).unwrap_or(NodeKind::Function);
                ids.push(node_id(
                    graph_id,
                    kind,
                    &file.path,
                    &symbol.qualified_name,
                    &symbol.discriminator,
                ));
                let reference = SymbolRef {
                    file: file_index,
                    index: symbol_index,
                };
                index
                    .by_qualified
                    .entry(symbol.qualified_name.as_str())
                    .or_default()
                    .push(reference);
                index
                    .by_name
                    .entry(symbol.name.as_str())
                    .or_default()
                    .push(reference);
            }
            index.ids.push(ids);
            for binding in &file.bindings {
                index
                    .bindings
                    .entry((file_index, binding.scope))
                    .or_default()
                    .push((binding.variable.as_str(), binding.type_name.as_str()));
            }
            index.imports.push(
                file.imports
                    .iter()
                    .map(|i| (i.alias.as_str(), i.target.as_str()))
                    .collect(),
            );
        }
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

    fn symbol(&self, r: SymbolRef) -> &'a SymbolFact {
        &self.files[r.file].symbols[r.index]
    }

    fn id(&self, r: SymbolRef) -> &str {
        &self.ids[r.file][r.index]
    }

    fn sep(&self, file: usize) -> &'static str {
        separator(&self.files[file].language)
    }

    fn qualified(&self, name: &str, filter: impl Fn(&SymbolFact) -> bool) -> Option<SymbolRef> {
        self.by_qualified
            .get(name)?
            .iter()
            .copied()
            .find(|r| filter(self.symbol(*r)))
    }

    /// Expands a leading import alias (`http.Server` → `net/http.Server`).
    fn expand_alias(&self, file: usize, text: &str) -> Option<String> {
        let sep = self.sep(file);
        let (head, rest) = match text.split_once(sep) {
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
    fn rust_path(&self, file: usize, text: &str) -> Option<String> {
        let module = &self.files[file].module;
        let crate_name = module.split("::").next().unwrap_or(module);
        if let Some(rest) = text.strip_prefix("crate::") {
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
    fn resolve_type(&self, file: usize, scope: i32, text: &str) -> Option<SymbolRef> {
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
                return Some(found);
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
            Some(types[0])
        } else {
            None
        }
    }

    /// Methods named `name` of a type, searching its bases (and Rust trait impls) up to
    /// three levels.
    fn method_of(
        &self,
        type_ref: SymbolRef,
        name: &str,
        arguments: u32,
        depth: u32,
    ) -> Option<SymbolRef> {
        let type_symbol = self.symbol(type_ref);
        if let Some(methods) = self.methods.get(type_symbol.qualified_name.as_str()) {
            let named: Vec<SymbolRef> = methods
                .iter()
                .copied()
                .filter(|m| self.symbol(*m).name == name)
                .collect();
            if let Some(found) = pick_overload(self, &named, arguments) {
                return Some(found);
            }
        }
        if depth >= 3 {
            return None;
        }
        for base in &type_symbol.bases {
            if let Some(base_ref) = self.resolve_type(type_ref.file, type_symbol.parent, base)
                && base_ref != type_ref
                && let Some(found) = self.method_of(base_ref, name, arguments, depth + 1)
            {
                return Some(found);
            }
        }
        if let Some(traits) = self.impl_traits.get(type_symbol.qualified_name.as_str()) {
            for (file, trait_name) in traits {
                if let Some(trait_ref) = self.resolve_type(*file, -1, trait_name)
                    && let Some(found) = self.method_of(trait_ref, name, arguments, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }

    fn binding(&self, file: usize, scope: i32, variable: &str) -> Option<&'a str> {
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
    fn binding_type(&self, file: usize, scope: i32, type_text: &str) -> Option<SymbolRef> {
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
    fn enclosing_type(&self, file: usize, scope: i32) -> Option<SymbolRef> {
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

    /// `this.name()` inside a method whose owner is not a type: a JavaScript object's
    /// methods defined by assignment (`res.json = function () { this.send() }`) share the
    /// owner, so the sibling `res.send` is the target.
    fn sibling_method(&self, file: usize, scope: i32, name: &str) -> Option<SymbolRef> {
        let mut current = scope;
        while current >= 0 {
            let symbol = &self.files[file].symbols[current as usize];
            if !symbol.owner_type.is_empty() {
                let sep = self.sep(file);
                return self.qualified(&format!("{}{sep}{name}", symbol.owner_type), |s| {
                    is_callable(&s.kind)
                });
            }
            current = symbol.parent;
        }
        None
    }

    /// A plain (receiver-less) name: nested scopes, the module, imports.
    fn resolve_plain(
        &self,
        file: usize,
        scope: i32,
        name: &str,
        arguments: u32,
    ) -> Option<SymbolRef> {
        let sep = self.sep(file);
        let facts = &self.files[file];
        // Rust/Python paths written out in full (`crate::a::f`, `a::b::f`).
        if name.contains(sep) {
            if let Some(path) = self.rust_path(file, name)
                && let Some(found) = self.qualified(&path, |s| is_callable(&s.kind))
            {
                return Some(found);
            }
            if let Some(expanded) = self.expand_alias(file, name)
                && let Some(found) = self.qualified(&expanded, |s| is_callable(&s.kind))
            {
                return Some(found);
            }
            let (head, tail) = name.rsplit_once(sep)?;
            if let Some(type_ref) = self.resolve_type(file, scope, head) {
                return self.method_of(type_ref, tail, arguments, 0).or_else(|| {
                    self.qualified(
                        &format!("{}{sep}{tail}", self.symbol(type_ref).qualified_name),
                        |s| is_callable(&s.kind),
                    )
                });
            }
            if !facts.module.is_empty()
                && let Some(found) = self.qualified(&format!("{}{sep}{name}", facts.module), |s| {
                    is_callable(&s.kind)
                })
            {
                return Some(found);
            }
            return None;
        }
        // Java and TS/JS methods call siblings without `this`.
        if matches!(facts.language.as_str(), "java")
            && let Some(type_ref) = self.enclosing_type(file, scope)
            && let Some(found) = self.method_of(type_ref, name, arguments, 0)
        {
            return Some(found);
        }
        let mut parent = scope;
        while parent >= 0 {
            let symbol = &facts.symbols[parent as usize];
            if let Some(found) = self
                .qualified(&format!("{}{sep}{name}", symbol.qualified_name), |s| {
                    is_callable(&s.kind) && s.kind != "method"
                })
            {
                return Some(found);
            }
            parent = symbol.parent;
        }
        if !facts.module.is_empty()
            && let Some(found) = self.qualified(&format!("{}{sep}{name}", facts.module), |s| {
                is_callable(&s.kind) && s.kind != "method"
            })
        {
            return Some(found);
        }
        if let Some(target) = self.imports[file].get(name)
            && let Some(found) = self.qualified(target, |s| is_callable(&s.kind))
        {
            return Some(found);
        }
        // Go dot imports put another package's names in scope.
        for import in facts.imports.iter().filter(|i| i.alias == ".") {
            if let Some(found) = self.qualified(&format!("{}{sep}{name}", import.target), |s| {
                is_callable(&s.kind) && s.kind != "method"
            }) {
                return Some(found);
            }
        }
        if facts.module.is_empty()
            && let Some(found) =
                self.qualified(name, |s| is_callable(&s.kind) && s.kind != "method")
        {
            return Some(found);
        }
        None
    }

    /// How an unresolved call target is named: the receiver's type when known, the
    /// module an alias stands for, or the text as written.
    fn external_name(&self, file: usize, scope: i32, receiver: &str, name: &str) -> String {
        let sep = self.sep(file);
        match receiver {
            "" => name.to_owned(),
            "?" => name.to_owned(),
            "self" | "this" | "cls" => format!("{receiver}{sep}{name}"),
            _ => match self.expand_alias(file, receiver) {
                Some(expanded) => format!("{expanded}{sep}{name}"),
                // A variable of a known but external type: name the type, not the variable.
                None => {
                    let field_type = receiver
                        .strip_prefix("self.")
                        .or_else(|| receiver.strip_prefix("this."))
                        .and_then(|field| {
                            let class = self.enclosing_type(file, scope)?;
                            self.binding(class.file, class.index as i32, field)
                                .map(|t| (class.file, t))
                        });
                    let typed = self
                        .binding(file, scope, receiver)
                        .map(|t| (file, t))
                        .or(field_type);
                    match typed.filter(|(_, t)| !t.starts_with("call:")) {
                        Some((type_file, type_text)) => {
                            let clean = clean_type(type_text);
                            let clean = self.expand_alias(type_file, &clean).unwrap_or(clean);
                            format!("{clean}{sep}{name}")
                        }
                        None => format!("{receiver}{sep}{name}"),
                    }
                }
            },
        }
    }

    fn resolve_call(&self, file: usize, call: &crate::facts::CallFact) -> (Target, Confidence) {
        let scope = call.caller;
        let name = call.name.as_str();
        let receiver = call.receiver.as_str();
        let sep = self.sep(file);
        let resolved = match receiver {
            "" => self.resolve_plain(file, scope, name, call.arguments),
            "self" | "this" | "cls" => self
                .enclosing_type(file, scope)
                .and_then(|t| self.method_of(t, name, call.arguments, 0))
                .or_else(|| self.sibling_method(file, scope, name)),
            "super()" | "super" => self.enclosing_type(file, scope).and_then(|t| {
                let symbol = self.symbol(t);
                symbol.bases.iter().find_map(|base| {
                    self.resolve_type(t.file, symbol.parent, base)
                        .and_then(|b| self.method_of(b, name, call.arguments, 0))
                })
            }),
            _ => {
                let variable_type = self
                    .binding(file, scope, receiver)
                    .and_then(|type_text| self.binding_type(file, scope, type_text));
                variable_type
                    .and_then(|t| self.method_of(t, name, call.arguments, 0))
                    .or_else(|| {
                        // `self.field.method()` with a field binding recorded on the class.
                        let field = receiver
                            .strip_prefix("self.")
                            .or_else(|| receiver.strip_prefix("this."))?;
                        let class = self.enclosing_type(file, scope)?;
                        let type_text = self.binding(class.file, class.index as i32, field)?;
                        let field_type =
                            self.binding_type(class.file, class.index as i32, type_text)?;
                        self.method_of(field_type, name, call.arguments, 0)
                    })
                    .or_else(|| {
                        // A module or package alias: `fmt.Println`, `os.path.join`.
                        let expanded = self.expand_alias(file, receiver)?;
                        self.qualified(&format!("{expanded}{sep}{name}"), |s| is_callable(&s.kind))
                    })
                    .or_else(|| {
                        // A type: static calls and `Type::method`.
                        let type_ref = self.resolve_type(file, scope, receiver)?;
                        self.method_of(type_ref, name, call.arguments, 0)
                    })
            }
        };
        if let Some(found) = resolved {
            return (Target::Symbol(found), Confidence::Resolved);
        }
        // Name match: the only callable of that name in the whole graph, and only when
        // nothing says the receiver is something else (a known but external type, a
        // module alias).
        let plain = name.rsplit(sep).next().unwrap_or(name);
        let receiver_typed = !receiver.is_empty()
            && (self.binding(file, scope, receiver).is_some()
                || receiver
                    .strip_prefix("self.")
                    .or_else(|| receiver.strip_prefix("this."))
                    .is_some_and(|field| {
                        self.enclosing_type(file, scope).is_some_and(|class| {
                            self.binding(class.file, class.index as i32, field)
                                .is_some()
                        })
                    }));
        if receiver_typed {
            return (
                Target::External(self.external_name(file, scope, receiver, name)),
                Confidence::Unresolved,
            );
        }
        if let Some(candidates) = self.by_name.get(plain) {
            let callable: Vec<SymbolRef> = candidates
                .iter()
                .copied()
                .filter(|r| is_callable(&self.symbol(*r).kind) && !self.symbol(*r).test)
                .collect();
            let receiver_is_module =
                !receiver.is_empty() && self.expand_alias(file, receiver).is_some();
            if callable.len() == 1 && !receiver_is_module {
                return (Target::Symbol(callable[0]), Confidence::NameMatch);
            }
        }
        let written = self.external_name(file, scope, receiver, name);
        (Target::External(written), Confidence::Unresolved)
    }
}

/// Among same-named methods, the one whose parameter count fits (Java overloads);
/// the first when several or none fit.
fn pick_overload(index: &Index<'_>, candidates: &[SymbolRef], arguments: u32) -> Option<SymbolRef> {
    match candidates.len() {
        0 => None,
        1 => Some(candidates[0]),
        _ => candidates
            .iter()
            .copied()
            .find(|c| parameter_count(&index.symbol(*c).signature) == Some(arguments))
            .or(Some(candidates[0])),
    }
}

/// Parameters in a signature's first parenthesised list.
fn parameter_count(signature: &str) -> Option<u32> {
    let open = signature.find('(')?;
    let mut depth = 0;
    let mut count = 0;
    let mut any = false;
    for ch in signature[open..].chars() {
        match ch {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(if any { count + 1 } else { 0 });
                }
            }
            ',' if depth == 1 => count += 1,
            c if depth == 1 && !c.is_whitespace() => any = true,
            _ => {}
        }
    }
    None
}

/// The declared result type of a function signature (`func F(a int) *T` → `*T`,
/// `fn f() -> T` → `T`, `def f() -> T` → `T`).
fn result_type(signature: &str) -> Option<String> {
    if let Some((_, result)) = signature.rsplit_once("->") {
        return Some(result.trim().trim_end_matches(':').to_owned());
    }
    let open = signature.find('(')?;
    let mut depth = 0;
    for (offset, ch) in signature[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let rest = signature[open + offset + 1..].trim();
                    let rest = rest
                        .trim_start_matches('(')
                        .split([',', ')'])
                        .next()
                        .unwrap_or("")
                        .trim();
                    return (!rest.is_empty()).then(|| rest.to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// Output of resolution: one owner graph per file plus the repository owner.
/// Which files to build owners for. Owners of other files are left as stored; their
/// external and module references (from the last run, cached) keep the repository owner
/// complete.
#[derive(Debug, Default)]
pub struct BuildScope {
    /// None: every file.
    pub affected: Option<std::collections::HashSet<String>>,
    /// Per file: the external and module nodes its owner points at.
    pub cached_externals: std::collections::HashMap<String, Vec<(NodeKind, String)>>,
}

impl BuildScope {
    fn builds(&self, path: &str) -> bool {
        self.affected.as_ref().is_none_or(|a| a.contains(path))
    }
}

/// Owners built, and the external references of each built file (to cache).
#[derive(Debug, Default)]
pub struct Build {
    pub owners: Vec<OwnerGraph>,
    pub externals: BTreeMap<String, Vec<(NodeKind, String)>>,
}

pub fn build(
    graph_id: &str,
    repository_name: &str,
    files: &[FileFacts],
    scope: &BuildScope,
) -> Build {
    let started = std::time::Instant::now();
    let index = Index::new(graph_id, files);
    tracing::debug!(elapsed = ?started.elapsed(), "symbol index built");
    let mut built_externals: BTreeMap<String, Vec<(NodeKind, String)>> = BTreeMap::new();
    let mut kept_externals: HashSet<&(NodeKind, String)> = HashSet::default();
    let mut owners: BTreeMap<String, (Vec<Node>, HashSet<Edge>)> = BTreeMap::new();
    let mut repo_nodes: BTreeMap<String, Node> = BTreeMap::new();
    let mut repo_edges: HashSet<Edge> = HashSet::default();

    let repository = Node {
        id: node_id(graph_id, NodeKind::Repository, "", repository_name, ""),
        kind: NodeKind::Repository,
        name: repository_name.to_owned(),
        qualified_name: repository_name.to_owned(),
        language: String::new(),
        path: String::new(),
        start_line: 0,
        end_line: 0,
        signature: String::new(),
        summary: String::new(),
        fingerprint: String::new(),
        test: false,
    };
    let repository_id = repository.id.clone();
    repo_nodes.insert(repository.id.clone(), repository);

    let external = |name: &str,
                    kind: NodeKind,
                    repo_nodes: &mut BTreeMap<String, Node>,
                    sink: &mut Vec<(NodeKind, String)>|
     -> String {
        sink.push((kind, name.to_owned()));
        let id = node_id(graph_id, kind, "", name, "");
        repo_nodes.entry(id.clone()).or_insert_with(|| Node {
            id: id.clone(),
            kind,
            name: name
                .rsplit(['.', ':', '/'])
                .next()
                .unwrap_or(name)
                .to_owned(),
            qualified_name: name.to_owned(),
            language: String::new(),
            path: String::new(),
            start_line: 0,
            end_line: 0,
            signature: String::new(),
            summary: String::new(),
            fingerprint: String::new(),
            test: false,
        });
        id
    };

    let packages: BTreeSet<(&str, &str)> = files
        .iter()
        .filter(|f| !f.package.is_empty())
        .map(|f| (f.package.as_str(), f.language.as_str()))
        .collect();
    let package_modules: HashSet<&str> = packages.iter().map(|(p, _)| *p).collect();
    for (package, language) in &packages {
        let id = node_id(graph_id, NodeKind::Package, "", package, "");
        repo_nodes.insert(
            id.clone(),
            Node {
                id: id.clone(),
                kind: NodeKind::Package,
                name: package
                    .rsplit(['.', ':', '/'])
                    .next()
                    .unwrap_or(package)
                    .to_owned(),
                qualified_name: (*package).to_owned(),
                language: (*language).to_owned(),
                path: String::new(),
                start_line: 0,
                end_line: 0,
                signature: String::new(),
                summary: String::new(),
                fingerprint: String::new(),
                test: false,
            },
        );
        repo_edges.insert(Edge {
            from: repository_id.clone(),
            to: id,
            kind: EdgeKind::Contains,
            line: 0,
            confidence: Confidence::Resolved,
        });
    }

    // Suffix index for doc mentions, built only when there are docs.
    let has_docs = files
        .iter()
        .any(|f| !f.sections.is_empty() && scope.builds(&f.path));
    let mut suffixes: HashMap<String, Vec<SymbolRef>> = HashMap::default();
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

    let counterparts = Counterparts::new(files);

    for (file_index, file) in files.iter().enumerate() {
        let path = file.path.as_str();
        let mut nodes = Vec::new();
        let mut edges: HashSet<Edge> = HashSet::default();
        let file_node = Node {
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
        };
        let file_id = file_node.id.clone();
        nodes.push(file_node);
        let container = if file.package.is_empty() {
            repository_id.clone()
        } else {
            node_id(graph_id, NodeKind::Package, "", &file.package, "")
        };
        repo_edges.insert(Edge {
            from: container,
            to: file_id.clone(),
            kind: EdgeKind::Contains,
            line: 0,
            confidence: Confidence::Resolved,
        });

        // Manifest dependencies belong to the repository.
        for dependency in &file.dependencies {
            let module = external(
                &dependency.name,
                NodeKind::Module,
                &mut repo_nodes,
                &mut Vec::new(),
            );
            if let Some(node) = repo_nodes.get_mut(&module)
                && node.signature.is_empty()
            {
                // Versions may be URLs with credentials (git+https://user:token@...).
                node.signature = crate::redact::text(
                    format!(
                        "{} {} ({})",
                        dependency.name, dependency.version, dependency.ecosystem
                    )
                    .trim(),
                )
                .into_owned();
                node.path = String::new();
            }
            repo_edges.insert(Edge {
                from: repository_id.clone(),
                to: module,
                kind: EdgeKind::Requires,
                line: 0,
                confidence: Confidence::Resolved,
            });
        }

        let mut sink: Vec<(NodeKind, String)> = Vec::new();
        if !scope.builds(path) {
            // Kept owners still point at their externals: keep those nodes (each once).
            for entry in scope.cached_externals.get(path).into_iter().flatten() {
                if kept_externals.insert(entry) {
                    external(&entry.1, entry.0, &mut repo_nodes, &mut sink);
                }
            }
            continue;
        }

        for (symbol_index, symbol) in file.symbols.iter().enumerate() {
            let kind = NodeKind::parse(&symbol.kind).unwrap_or(NodeKind::Function);
            let id = index.ids[file_index][symbol_index].clone();
            nodes.push(Node {
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
                fingerprint: symbol.fingerprint.clone(),
                test: symbol.test,
            });
            let parent = if symbol.parent >= 0 {
                index.ids[file_index][symbol.parent as usize].clone()
            } else {
                file_id.clone()
            };
            edges.insert(Edge {
                from: parent,
                to: id.clone(),
                kind: EdgeKind::Contains,
                line: 0,
                confidence: Confidence::Resolved,
            });
            // Declared bases: extends, implements, Python base classes.
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
                            external(&written, NodeKind::External, &mut repo_nodes, &mut sink),
                            Confidence::Unresolved,
                        )
                    }
                };
                edges.insert(Edge {
                    from: id.clone(),
                    to,
                    kind: EdgeKind::Implements,
                    line: symbol.start_line,
                    confidence,
                });
            }
        }

        for implementation in &file.impls {
            let Some(type_ref) = index.resolve_type(file_index, -1, &implementation.type_name)
            else {
                continue;
            };
            let (to, confidence) =
                match index.resolve_type(file_index, -1, &implementation.trait_name) {
                    Some(found) => (index.id(found).to_owned(), Confidence::Resolved),
                    None => {
                        let clean = clean_type(&implementation.trait_name);
                        let written = index
                            .rust_path(file_index, &clean)
                            .or_else(|| index.expand_alias(file_index, &clean))
                            .unwrap_or(clean);
                        (
                            external(&written, NodeKind::External, &mut repo_nodes, &mut sink),
                            Confidence::Unresolved,
                        )
                    }
                };
            edges.insert(Edge {
                from: index.id(type_ref).to_owned(),
                to,
                kind: EdgeKind::Implements,
                line: implementation.line,
                confidence,
            });
        }

        // Calls and, for tests, tested-by.
        let mut tested: HashMap<(String, String), u32> = HashMap::default();
        for call in &file.calls {
            let from = if call.caller >= 0 {
                index.ids[file_index][call.caller as usize].clone()
            } else {
                file_id.clone()
            };
            let (target, confidence) = index.resolve_call(file_index, call);
            let to = match target {
                Target::Symbol(found) => {
                    let caller_is_test =
                        call.caller >= 0 && file.symbols[call.caller as usize].test;
                    if caller_is_test
                        && !index.symbol(found).test
                        && confidence != Confidence::Unresolved
                    {
                        let entry = tested
                            .entry((index.id(found).to_owned(), from.clone()))
                            .or_insert(call.line);
                        *entry = (*entry).min(call.line);
                    }
                    index.id(found).to_owned()
                }
                Target::External(name) => {
                    external(&name, NodeKind::External, &mut repo_nodes, &mut sink)
                }
            };
            if to != from {
                edges.insert(Edge {
                    from,
                    to,
                    kind: EdgeKind::Calls,
                    line: call.line,
                    confidence,
                });
            }
        }
        for reference in &file.references {
            if reference.from < 0 || !file.symbols[reference.from as usize].test {
                continue;
            }
            let found = index
                .resolve_plain(file_index, reference.from, &reference.name, 0)
                .or_else(|| index.resolve_type(file_index, reference.from, &reference.name));
            if let Some(found) = found
                && !index.symbol(found).test
            {
                let from = index.ids[file_index][reference.from as usize].clone();
                let entry = tested
                    .entry((index.id(found).to_owned(), from))
                    .or_insert(reference.line);
                *entry = (*entry).min(reference.line);
            }
        }
        // Naming conventions reach what indirection hides (`self.module.merge(...)` in
        // test_heapq.py's `test_merge` covers heapq.merge): a test named after a symbol of
        // its file's counterpart covers that symbol, with confidence name_match.
        let mut by_convention: HashMap<(String, String), u32> = HashMap::default();
        for (test_index, test) in file.symbols.iter().enumerate().filter(|(_, s)| s.test) {
            let targets = counterparts.of(file_index).iter().flat_map(|&other| {
                files[other]
                    .symbols
                    .iter()
                    .enumerate()
                    .map(move |(index, symbol)| (other, index, symbol))
            });
            let targets: Vec<(usize, usize, &SymbolFact)> = targets
                .filter(|(_, _, symbol)| !symbol.test && symbol.kind != "constant")
                .collect();
            for name in convention_names(&test.name) {
                let matched: Vec<String> = targets
                    .iter()
                    .filter(|(_, _, symbol)| symbol.name == name)
                    .map(|(other, symbol_index, _)| index_id(&index, *other, *symbol_index))
                    .collect();
                if matched.is_empty() {
                    continue;
                }
                let from = index.ids[file_index][test_index].clone();
                for symbol in matched {
                    if !tested.contains_key(&(symbol.clone(), from.clone())) {
                        by_convention.insert((symbol, from.clone()), test.start_line);
                    }
                }
                break;
            }
        }
        for ((symbol, test), line) in tested {
            edges.insert(Edge {
                from: symbol,
                to: test,
                kind: EdgeKind::TestedBy,
                line,
                confidence: Confidence::Resolved,
            });
        }
        for ((symbol, test), line) in by_convention {
            edges.insert(Edge {
                from: symbol,
                to: test,
                kind: EdgeKind::TestedBy,
                line,
                confidence: Confidence::NameMatch,
            });
        }

        // Imports: in-repo packages, or modules by name.
        let mut imported = HashSet::default();
        for import in &file.imports {
            let module = if import.module.is_empty() {
                import.target.as_str()
            } else {
                import.module.as_str()
            };
            if !imported.insert(module) {
                continue;
            }
            let to = if package_modules.contains(module) {
                node_id(graph_id, NodeKind::Package, "", module, "")
            } else {
                external(module, NodeKind::Module, &mut repo_nodes, &mut sink)
            };
            edges.insert(Edge {
                from: file_id.clone(),
                to,
                kind: EdgeKind::Imports,
                line: import.line,
                confidence: Confidence::Resolved,
            });
        }

        // Error messages.
        for error in &file.errors {
            let id = node_id(
                graph_id,
                NodeKind::ErrorMessage,
                path,
                &error.message,
                &error.line.to_string(),
            );
            nodes.push(Node {
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
            let from = if error.enclosing >= 0 {
                index.ids[file_index][error.enclosing as usize].clone()
            } else {
                file_id.clone()
            };
            edges.insert(Edge {
                from,
                to: id,
                kind: EdgeKind::Contains,
                line: error.line,
                confidence: Confidence::Resolved,
            });
        }

        // Markdown sections and what they mention.
        for section in &file.sections {
            let qualified = format!("{path}#{}", section.heading);
            let id = node_id(
                graph_id,
                NodeKind::DocSection,
                path,
                &qualified,
                &section.start_line.to_string(),
            );
            nodes.push(Node {
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
                fingerprint: section.fingerprint.clone(),
                test: false,
            });
            edges.insert(Edge {
                from: file_id.clone(),
                to: id.clone(),
                kind: EdgeKind::Contains,
                line: 0,
                confidence: Confidence::Resolved,
            });
            for mention in &section.mentions {
                let key = lookup_key(mention.trim_end_matches("()"));
                if let Some(found) = suffixes.get(&key)
                    && found.len() == 1
                {
                    edges.insert(Edge {
                        from: id.clone(),
                        to: index.id(found[0]).to_owned(),
                        kind: EdgeKind::Mentions,
                        line: section.start_line,
                        confidence: Confidence::Resolved,
                    });
                }
            }
        }

        sink.sort();
        sink.dedup();
        built_externals.insert(path.to_owned(), sink);
        owners.insert(path.to_owned(), (nodes, edges));
    }

    let mut out: Vec<OwnerGraph> = Vec::with_capacity(owners.len() + 1);
    let repo_nodes: Vec<Node> = repo_nodes.into_values().collect();
    let _ = &built_externals;
    let mut repo_edges: Vec<Edge> = repo_edges.into_iter().collect();
    repo_edges.sort_by(|a, b| (&a.from, &a.to, a.kind).cmp(&(&b.from, &b.to, b.kind)));
    out.push(OwnerGraph {
        owner: REPOSITORY_OWNER.to_owned(),
        hash: owner_hash(&repo_nodes, &repo_edges),
        nodes: repo_nodes,
        edges: repo_edges,
    });
    for (owner, (nodes, edges)) in owners {
        let mut edges: Vec<Edge> = edges.into_iter().collect();
        edges.sort_by(|a, b| {
            (&a.from, &a.to, a.kind, a.line).cmp(&(&b.from, &b.to, b.kind, b.line))
        });
        out.push(OwnerGraph {
            hash: owner_hash(&nodes, &edges),
            owner,
            nodes,
            edges,
        });
    }
    tracing::debug!(elapsed = ?started.elapsed(), "owners built");
    go_implements(&index, files, &mut out);
    tracing::debug!(elapsed = ?started.elapsed(), "implicit interfaces resolved");
    Build {
        owners: out,
        externals: built_externals,
    }
}

/// Go structural typing: a named type implements an interface when its method set holds
/// every method the interface requires (including embedded interfaces). Names only;
/// signatures are not compared (documented in docs/indexing.md).
fn go_implements(index: &Index<'_>, files: &[FileFacts], owners: &mut [OwnerGraph]) {
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
fn method_set(index: &Index<'_>, type_ref: SymbolRef, depth: u32) -> HashSet<String> {
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

fn interface_methods(index: &Index<'_>, interface: SymbolRef, depth: u32) -> BTreeSet<String> {
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

fn index_id(index: &Index<'_>, file: usize, symbol: usize) -> String {
    index.ids[file][symbol].clone()
}

/// Test files and the files they are named after: `test/test_heapq.py` and `heapq.py`,
/// `strings_test.go` and `strings.go`, `FooTest.java` and `Foo.java`. A counterpart in
/// the test's own directory wins; otherwise the one non-test file of that name and
/// language in the repository, if there is exactly one.
pub(crate) struct Counterparts {
    of: Vec<Vec<usize>>,
}

impl Counterparts {
    pub(crate) fn new(files: &[FileFacts]) -> Self {
        let mut by_subject: HashMap<(String, &str), Vec<usize>> = HashMap::default();
        for (index, file) in files.iter().enumerate() {
            if !is_test_file(file) {
                by_subject
                    .entry((file_subject(&file.path), file.language.as_str()))
                    .or_default()
                    .push(index);
            }
        }
        let of = files
            .iter()
            .map(|file| {
                if !is_test_file(file) {
                    return Vec::new();
                }
                let Some(candidates) =
                    by_subject.get(&(file_subject(&file.path), file.language.as_str()))
                else {
                    return Vec::new();
                };
                let directory =
                    |path: &str| path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
                let here = directory(&file.path);
                let local: Vec<usize> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| directory(&files[c].path) == here)
                    .collect();
                if !local.is_empty() {
                    local
                } else if candidates.len() == 1 {
                    candidates.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        Counterparts { of }
    }

    fn of(&self, file: usize) -> &[usize] {
        &self.of[file]
    }
}

/// A file holding tests: by its path's conventions, or because it defines a test.
pub(crate) fn is_test_file(file: &FileFacts) -> bool {
    is_test_path(&file.path) || file.symbols.iter().any(|s| s.test)
}

/// Names a test's name refers to, longest first: `test_merge_stability` ->
/// `merge_stability`, `merge`; `TestReadFileLarge` -> `ReadFileLarge`, `ReadFile`, `Read`;
/// `testParse` -> `parse`, `Parse`.
pub(crate) fn convention_names(test: &str) -> Vec<String> {
    let rest = test
        .strip_prefix("test_")
        .or_else(|| test.strip_prefix("Test_"))
        .or_else(|| test.strip_prefix("Test"))
        .or_else(|| test.strip_prefix("test"))
        .unwrap_or("");
    if rest.is_empty() {
        return Vec::new();
    }
    // Cut points: before '_' and before an upper-case letter that follows a lower-case one.
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    let mut cuts: Vec<usize> = Vec::new();
    for window in chars.windows(2) {
        let ((_, a), (at, b)) = (window[0], window[1]);
        if b == '_' || (a.is_lowercase() && b.is_uppercase()) {
            cuts.push(at);
        }
    }
    cuts.push(rest.len());
    let mut names: Vec<String> = Vec::new();
    for &cut in cuts.iter().rev() {
        let name = rest[..cut].trim_end_matches('_');
        if name.is_empty() {
            continue;
        }
        for candidate in [name.to_owned(), lower_first(name), upper_first(name)] {
            if !names.contains(&candidate) {
                names.push(candidate);
            }
        }
    }
    names
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_names_point_at_what_they_test() {
        assert_eq!(
            convention_names("test_merge_stability"),
            vec!["merge_stability", "Merge_stability", "merge", "Merge"]
        );
        assert_eq!(
            convention_names("TestReadFileLarge"),
            vec![
                "ReadFileLarge",
                "readFileLarge",
                "ReadFile",
                "readFile",
                "Read",
                "read"
            ]
        );
        assert_eq!(convention_names("testParse"), vec!["Parse", "parse"]);
        assert!(convention_names("test").is_empty());
        assert!(convention_names("helper").is_empty());
    }

    #[test]
    fn counterparts_prefer_the_same_directory_then_a_unique_file() {
        let file = |path: &str| FileFacts {
            path: path.into(),
            language: if path.ends_with(".go") {
                "go"
            } else {
                "python"
            }
            .into(),
            ..Default::default()
        };
        let files = vec![
            file("heapq.py"),
            file("test/test_heapq.py"),
            file("a/util.py"),
            file("b/util.py"),
            file("test/test_util.py"),
            file("strings/strings.go"),
            file("strings/strings_test.go"),
            file("other/strings.go"),
        ];
        let counterparts = Counterparts::new(&files);
        assert_eq!(counterparts.of(1), &[0]);
        // Two util.py elsewhere: no guess.
        assert!(counterparts.of(4).is_empty());
        // The same directory wins over other files of that name.
        assert_eq!(counterparts.of(6), &[5]);
        assert!(counterparts.of(0).is_empty());
    }

    use super::*;

    #[test]
    fn result_types() {
        assert_eq!(
            result_type("func NewServer(addr string) *Server").as_deref(),
            Some("*Server")
        );
        assert_eq!(
            result_type("func Open(name string) (*File, error)").as_deref(),
            Some("*File")
        );
        assert_eq!(result_type("fn new() -> Self").as_deref(), Some("Self"));
        assert_eq!(result_type("def make(x) -> Foo").as_deref(), Some("Foo"));
        assert_eq!(result_type("func Run()"), None);
    }

    #[test]
    fn parameter_counts() {
        assert_eq!(parameter_count("void f()"), Some(0));
        assert_eq!(parameter_count("void f(int a)"), Some(1));
        assert_eq!(
            parameter_count("void f(Map<String, Integer> m, int b)"),
            Some(2)
        );
    }
}
