//! CALLS edges: a call site resolved through nested scopes, imports, receivers (the
//! method's own, typed bindings, fields), sibling methods of JavaScript objects, and, last,
//! a unique name in the repository (`name_match`). What stays unresolved points at an
//! `external` node named as written.

use codectx_graph::{Confidence, EdgeKind, NodeKind};

use super::scope::Index;
use super::tested_by::Tested;
use super::{FileOut, Repo, SymbolRef, Target, is_callable, is_test_symbol, is_type};
use crate::lang::clean_type;

/// CALLS edges of one file; a test's resolved call of a non-test symbol is also noted in
/// `tested`.
pub(super) fn edges(
    index: &Index<'_>,
    out: &mut FileOut<'_>,
    repo: &mut Repo<'_>,
    tested: &mut Tested,
) {
    let file = out.file;
    for call in &file.calls {
        let from = out.symbol_or_file(index, call.caller);
        let (target, confidence) = index.resolve_call(out.file_index, call);
        let to = match target {
            Target::Symbol(found) => {
                if is_test_symbol(file, call.caller)
                    && !index.symbol(found).test
                    && confidence != Confidence::Unresolved
                {
                    tested.note(index.id(found), &from, call.line);
                }
                index.id(found).to_owned()
            }
            Target::External(name) => repo.external(&name, NodeKind::External, &mut out.sink),
        };
        if to != from {
            out.edge(from, to, EdgeKind::Calls, call.line, confidence);
        }
    }
}

impl<'a> Index<'a> {
    /// Methods named `name` of a type, searching its bases (and Rust trait impls) up to
    /// three levels.
    pub(super) fn method_of(
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

    /// `this.name()` inside a method whose owner is not a type: a JavaScript object's
    /// methods defined by assignment (`res.json = function () { this.send() }`) share the
    /// owner, so the sibling `res.send` is the target.
    pub(super) fn sibling_method(&self, file: usize, scope: i32, name: &str) -> Option<SymbolRef> {
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
    pub(super) fn resolve_plain(
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
        // Java (and the languages whose spec says so: C++, C#, Kotlin, ...) call their
        // type's methods without `this`.
        if (facts.language == "java" || crate::lang::Tagged::implicit_self(&facts.language))
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
        // Go dot imports put another package's names in scope, as every import does in
        // the languages whose spec says so (C# `using`, Dart, Swift, Elixir `import`).
        let opens_scope = crate::lang::Tagged::imports_open_scope(&facts.language);
        for import in facts
            .imports
            .iter()
            .filter(|i| i.alias == "." || opens_scope)
        {
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
    pub(super) fn external_name(
        &self,
        file: usize,
        scope: i32,
        receiver: &str,
        name: &str,
    ) -> String {
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

    pub(super) fn resolve_call(
        &self,
        file: usize,
        call: &crate::facts::CallFact,
    ) -> (Target, Confidence) {
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
            let mut callable: Vec<SymbolRef> = candidates
                .iter()
                .copied()
                .filter(|r| is_callable(&self.symbol(*r).kind) && !self.symbol(*r).test)
                .collect();
            // A class and its own constructors (C#, C++, Dart name them after it): the
            // call builds the class.
            if callable.len() > 1 {
                let classes: Vec<SymbolRef> = callable
                    .iter()
                    .copied()
                    .filter(|r| is_type(&self.symbol(*r).kind))
                    .collect();
                if let [class] = classes[..] {
                    let class_name = &self.symbol(class).qualified_name;
                    if callable
                        .iter()
                        .all(|r| *r == class || self.symbol(*r).owner_type == *class_name)
                    {
                        callable = vec![class];
                    }
                }
            }
            let receiver_is_module =
                !receiver.is_empty() && self.expand_alias(file, receiver).is_some();
            // `d.items()`, `fp.read()`, `list.push()`: on a receiver of unknown type, a
            // builtin container, string, stream or promise method is far likelier than
            // the repository's one method of that name.
            let builtin =
                !receiver.is_empty() && is_builtin_method(&self.files[file].language, plain);
            if callable.len() == 1 && !receiver_is_module && !builtin {
                return (Target::Symbol(callable[0]), Confidence::NameMatch);
            }
        }
        let written = self.external_name(file, scope, receiver, name);
        (Target::External(written), Confidence::Unresolved)
    }
}

/// Methods of the language's builtin types (containers, strings, files and streams,
/// promises, events) that a dynamically typed receiver most likely means.
fn is_builtin_method(language: &str, name: &str) -> bool {
    const PYTHON: &[&str] = &[
        "add",
        "append",
        "clear",
        "close",
        "copy",
        "count",
        "decode",
        "difference",
        "discard",
        "encode",
        "endswith",
        "extend",
        "find",
        "flush",
        "format",
        "get",
        "group",
        "groups",
        "index",
        "insert",
        "items",
        "join",
        "keys",
        "lower",
        "lstrip",
        "match",
        "pop",
        "popitem",
        "read",
        "readline",
        "readlines",
        "remove",
        "replace",
        "reverse",
        "rsplit",
        "rstrip",
        "search",
        "seek",
        "setdefault",
        "sort",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "sub",
        "tell",
        "union",
        "update",
        "upper",
        "values",
        "write",
        "writelines",
        "acquire",
        "release",
        "wait",
        "set",
        "send",
        "cancel",
        "result",
        "done",
        "put",
        "intersection",
        "truncate",
        "fileno",
    ];
    const JAVASCRIPT: &[&str] = &[
        "push",
        "pop",
        "shift",
        "unshift",
        "slice",
        "splice",
        "concat",
        "join",
        "indexOf",
        "lastIndexOf",
        "includes",
        "map",
        "filter",
        "reduce",
        "forEach",
        "find",
        "findIndex",
        "some",
        "every",
        "keys",
        "values",
        "entries",
        "has",
        "get",
        "set",
        "delete",
        "clear",
        "add",
        "then",
        "catch",
        "finally",
        "toString",
        "valueOf",
        "apply",
        "call",
        "bind",
        "emit",
        "on",
        "once",
        "off",
        "removeListener",
        "addListener",
        "write",
        "end",
        "pipe",
        "read",
        "destroy",
        "resume",
        "pause",
        "replace",
        "split",
        "trim",
        "toLowerCase",
        "toUpperCase",
        "startsWith",
        "endsWith",
        "match",
        "test",
        "exec",
        "sort",
        "reverse",
        "fill",
        "flat",
        "flatMap",
        "hasOwnProperty",
        "charAt",
        "charCodeAt",
        "substring",
        "substr",
        "padStart",
        "padEnd",
        "toJSON",
    ];
    match language {
        "python" => PYTHON.contains(&name),
        "javascript" | "typescript" => JAVASCRIPT.contains(&name),
        _ => false,
    }
}

/// Among same-named methods, the one whose parameter count fits (Java overloads);
/// the first when several or none fit.
pub(super) fn pick_overload(
    index: &Index<'_>,
    candidates: &[SymbolRef],
    arguments: u32,
) -> Option<SymbolRef> {
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
pub(super) fn parameter_count(signature: &str) -> Option<u32> {
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
pub(super) fn result_type(signature: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
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
