//! Languages by query files: a grammar plus `libs/index/queries/<language>.scm`, read by
//! one extractor. A query names what it finds with these captures:
//!
//! | capture | what it marks |
//! |---|---|
//! | `@definition.function` / `.method` / `.class` / `.interface` / `.type` / `.constant` | a symbol; the node is its span |
//! | `@definition.module` | a symbol that holds others (a Ruby or Elixir module): kind `type` |
//! | `@definition.singleton` | a method of the type itself (Ruby `def self.x`): named with `.` |
//! | `@definition.test` | a test written as a call or macro (`it "..." do`, `TEST(Suite, Name)`): kind `function`, a test; `@test.suite` prefixes its name |
//! | `@definition.namespace` | a scope only (C++/C# namespaces): qualifies what is inside |
//! | `@definition.extension` | members added to a type declared elsewhere (Swift `extension T`) |
//! | `@name` | the name of the definition, call, package or import alias in the same match |
//! | `@owner` | the type a definition is written on (Kotlin's `fun Order.isRecent()`): its member |
//! | `@base` | a base type or implemented interface of a class in the same match |
//! | `@package` | the file's package or namespace statement; its `@name` prefixes every symbol |
//! | `@reference.call` | a call site; `@name` the callee, `@receiver` what it is called on |
//! | `@import` | an import; `@import.path` the module, `@import.alias` the local name |
//! | `@head` | in a definition's match, a node that reads like a call but is not one (Elixir's `def f(x)`) |
//!
//! Nesting comes from the spans: a function inside a class (or extension) is that type's
//! method; a symbol's qualified name is the package, the enclosing scopes and its name,
//! joined by the language's own separators ([`Spec`]). The resolver then treats these
//! facts like any other language's: nested scopes, calls on `self`, bases, and unique
//! names (`name_match`).

use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node as SyntaxNode, Query, QueryCursor};

use super::{Builder, NewSymbol, end_line, line};
use crate::layout::Layout;

/// Bump when this extractor (not a query file) changes what an unchanged file yields.
pub const EXTRACTOR: u32 = 1;

/// One language read through its query file.
#[derive(Debug)]
pub struct Spec {
    /// The language's name in the graph (`Node::language`).
    pub name: &'static str,
    pub extensions: &'static [&'static str],
    pub grammar: fn() -> tree_sitter::Language,
    pub query: &'static str,
    /// Between nested scopes: `::` (C++, Ruby), `\` (PHP), `.` (most).
    pub scope_separator: &'static str,
    /// Between a type and its members: `::` (C++, PHP, Ruby constants), `.` (most).
    pub member_separator: &'static str,
    /// Between a type and its instance methods, where it differs: `#` (Ruby).
    pub instance_method_separator: Option<&'static str>,
    /// Markers a doc comment line starts with, longest first.
    pub comment_prefixes: &'static [&'static str],
    /// Node kinds of string literals (`strings.rs` keeps those of 8+ characters).
    pub string_kinds: &'static [&'static str],
    /// Receivers that mean the method's own object.
    pub self_receivers: &'static [&'static str],
    /// A method's bare call may name another method of its type (C++, C#, Kotlin).
    pub implicit_self: bool,
    /// An import binds the last segment of its path as a local name (`import a.b.C`).
    pub import_binds_last: bool,
    /// An import puts every name of the imported namespace in scope (C# `using`).
    pub imports_open_scope: bool,
    /// Test conventions: names that start with one of these (case as written) ...
    pub test_prefixes: &'static [&'static str],
    /// ... or carry one of these attributes/annotations (`@Test`, `[Fact]`); tests
    /// written as calls or macros are the query's `@definition.test`.
    pub test_markers: &'static [&'static str],
    /// File names that hold tests besides the common conventions
    /// ([`codectx_core::conventions::is_test_path`]): suffixes such as `Test.php`.
    pub test_file_suffixes: &'static [&'static str],
}

/// A definition found by the query, before nesting is known.
struct Definition<'t> {
    node: SyntaxNode<'t>,
    role: Role,
    name: String,
    bases: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Symbol(&'static str),
    /// A method of the type itself, named with `.`.
    Singleton,
    Test,
    Namespace,
    Extension,
}

impl Role {
    fn parse(capture: &str) -> Option<Role> {
        Some(match capture.strip_prefix("definition.")? {
            "function" => Role::Symbol("function"),
            "method" => Role::Symbol("method"),
            "class" => Role::Symbol("class"),
            "interface" => Role::Symbol("interface"),
            "type" | "module" => Role::Symbol("type"),
            "constant" => Role::Symbol("constant"),
            "singleton" => Role::Singleton,
            "test" => Role::Test,
            "namespace" => Role::Namespace,
            "extension" => Role::Extension,
            _ => return None,
        })
    }

    /// Which of two patterns matching one declaration names it.
    fn specificity(self) -> u8 {
        match self {
            Role::Test => 3,
            Role::Symbol("interface") | Role::Singleton => 2,
            _ => 1,
        }
    }

    /// Whether other definitions inside it are its members.
    fn is_scope(self) -> bool {
        matches!(
            self,
            Role::Namespace
                | Role::Extension
                | Role::Symbol("class")
                | Role::Symbol("interface")
                | Role::Symbol("type")
        )
    }

    fn is_type(self) -> bool {
        matches!(
            self,
            Role::Extension
                | Role::Symbol("class")
                | Role::Symbol("interface")
                | Role::Symbol("type")
        )
    }
}

/// The compiled query of a language, built once.
pub fn query(spec: &'static Spec, slot: &'static OnceLock<Query>) -> &'static Query {
    slot.get_or_init(|| {
        Query::new(&(spec.grammar)(), spec.query)
            .unwrap_or_else(|error| panic!("queries/{}.scm: {error}", spec.name))
    })
}

/// Text of a name as written, without quotes (test names, import paths are strings).
fn unquote(text: &str) -> &str {
    let text = text.trim();
    let text = text
        .strip_prefix(['"', '\'', '`', '<'])
        .map(|t| t.strip_suffix(['"', '\'', '`', '>']).unwrap_or(t))
        .unwrap_or(text);
    text.trim()
}

pub fn extract(
    spec: &'static Spec,
    query: &Query,
    root: SyntaxNode<'_>,
    b: &mut Builder<'_>,
    _layout: &Layout,
) {
    let names = query.capture_names();
    let source = b.source.as_bytes();
    let mut definitions: Vec<Definition<'_>> = Vec::new();
    let mut calls: Vec<(SyntaxNode<'_>, String, String)> = Vec::new();
    let mut heads: Vec<usize> = Vec::new();
    let mut package = String::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, root, source);
    while let Some(found) = matches.next() {
        let mut role_node: Option<(Role, SyntaxNode<'_>)> = None;
        let mut call: Option<SyntaxNode<'_>> = None;
        let mut import: Option<SyntaxNode<'_>> = None;
        let mut is_package = false;
        let (mut name, mut receiver, mut path, mut alias) = (None, None, None, None);
        let mut suite: Option<String> = None;
        let mut owner: Option<String> = None;
        let mut bases = Vec::new();
        for capture in found.captures() {
            let text = || b.text(capture.node).to_owned();
            match names[capture.index as usize] {
                "name" => name = Some(text()),
                "test.suite" => suite = Some(text()),
                "owner" => owner = Some(text()),
                "receiver" => receiver = Some(text()),
                "base" => bases.push(text()),
                "reference.call" => call = Some(capture.node),
                "import" => import = Some(capture.node),
                "import.path" => path = Some(text()),
                "import.alias" => alias = Some(text()),
                "package" => is_package = true,
                "head" => heads.push(capture.node.id()),
                other => {
                    if let Some(role) = Role::parse(other) {
                        role_node = Some((role, capture.node));
                    }
                }
            }
        }
        if is_package {
            if let Some(name) = name {
                package = name.trim().trim_end_matches(';').trim().to_owned();
            }
        } else if let Some((role, node)) = role_node {
            let Some(mut name) = name
                .map(|n| unquote(&n).to_owned())
                .filter(|n| !n.is_empty())
            else {
                continue;
            };
            if let Some(suite) = suite {
                name = format!("{}.{name}", unquote(&suite));
            }
            if let Some(owner) = owner {
                name = format!("{}{}{name}", owner.trim(), spec.member_separator);
            }
            // One node, one definition: patterns that match the same declaration add
            // their bases; the more specific pattern names it (a test over a function,
            // an interface over a class, a name written with its owner over a bare one).
            if let Some(known) = definitions.iter_mut().find(|d| d.node.id() == node.id()) {
                for base in bases {
                    if !known.bases.contains(&base) {
                        known.bases.push(base);
                    }
                }
                if role.specificity() > known.role.specificity() {
                    known.role = role;
                    known.name = name;
                } else if role == known.role && name.len() > known.name.len() {
                    known.name = name;
                }
                continue;
            }
            definitions.push(Definition {
                node,
                role,
                name,
                bases,
            });
        } else if let Some(node) = call {
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                calls.push((node, name, receiver.unwrap_or_default()));
            }
        } else if let Some(node) = import {
            // A whole statement may be the path (`import a.b.c`): its keyword goes.
            let Some(path) = path
                .map(|p| {
                    let p = p.trim();
                    unquote(p.strip_prefix("import ").unwrap_or(p))
                        .trim_end_matches(';')
                        .to_owned()
                })
                .filter(|p| !p.is_empty())
            else {
                continue;
            };
            // Where an import binds its last segment (`import a.b.C`, `use App\X`), that
            // is its local name; elsewhere (`#include`, `require`) it binds none, and the
            // path itself stands for it.
            let alias = alias.unwrap_or_else(|| {
                if spec.import_binds_last {
                    path.rsplit(['/', '.', ':', '\\'])
                        .find(|part| !part.is_empty() && *part != "*")
                        .unwrap_or(&path)
                        .to_owned()
                } else {
                    path.clone()
                }
            });
            b.add_import(&path, &alias, &path, line(node));
        }
    }
    b.facts.module = package.clone();
    b.facts.package = package.clone();
    let defined: Vec<usize> = definitions.iter().map(|d| d.node.id()).collect();
    add_definitions(spec, &package, definitions, b);
    let innermost = b.innermost_by_line();
    for (node, name, receiver) in calls {
        // A definition's head, or a test written as a call (`it "..." do`), is not a call.
        if heads.contains(&node.id()) || defined.contains(&node.id()) {
            continue;
        }
        let at = line(node);
        let caller = innermost.get(at as usize).copied().unwrap_or(-1);
        let receiver = if spec.self_receivers.contains(&receiver.as_str()) {
            "self".to_owned()
        } else if is_simple_receiver(&receiver) {
            receiver
        } else {
            // A call's result or an expression: nothing to resolve the callee through,
            // but not a bare call either.
            "(expression)".to_owned()
        };
        // `a::b::c()` and `a.b()` written as one name: the last part is the callee.
        let (receiver, name) = match split_last(&name, spec) {
            Some((prefix, last)) if receiver.is_empty() => (prefix.to_owned(), last.to_owned()),
            _ => (receiver, name),
        };
        let arguments = super::argument_count(node.child_by_field_name("arguments"));
        b.add_call(caller, &name, &receiver, at, arguments);
    }
}

/// A receiver worth resolving: a name or a short path of names (`self.repo`, `@items`,
/// `Shop::Cart`, `$this->transport`).
fn is_simple_receiver(receiver: &str) -> bool {
    receiver.len() <= 80
        && receiver.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '@' | '$' | '-' | '>' | '\\')
        })
}

/// `Foo::bar` -> (`Foo`, `bar`), `Account:deposit` -> (`Account`, `deposit`): split at
/// the last separator of any kind (the shortest last part, then the longest separator).
fn split_last<'n>(name: &'n str, spec: &Spec) -> Option<(&'n str, &'n str)> {
    [spec.member_separator, spec.scope_separator, "::", ".", ":"]
        .into_iter()
        .filter(|s| !s.is_empty())
        .filter_map(|separator| name.rsplit_once(separator))
        .min_by_key(|(prefix, last)| (last.len(), prefix.len()))
}

/// Adds the definitions, outermost first, each with its scope's qualified name.
fn add_definitions(
    spec: &'static Spec,
    package: &str,
    mut definitions: Vec<Definition<'_>>,
    b: &mut Builder<'_>,
) {
    // Outer before inner: by start, then the wider first.
    definitions.sort_by_key(|d| (d.node.start_byte(), std::cmp::Reverse(d.node.end_byte())));
    // Open scopes: (end byte, role, qualified name, symbol index or -1).
    let mut open: Vec<(usize, Role, String, i32)> = Vec::new();
    let package_prefix = |name: &str| {
        if package.is_empty() {
            name.to_owned()
        } else {
            format!("{package}{}{name}", spec.scope_separator)
        }
    };
    for definition in definitions {
        let start = definition.node.start_byte();
        while open.last().is_some_and(|(end, ..)| *end <= start) {
            open.pop();
        }
        let enclosing = open.last().cloned();
        // A name written qualified (`Foo::bar` outside its class) is a member of `Foo`.
        let (written_scope, name) = match split_last(&definition.name, spec) {
            Some((scope, last)) if !scope.is_empty() && definition.role != Role::Test => {
                (Some(scope.to_owned()), last.to_owned())
            }
            _ => (None, definition.name.clone()),
        };
        let scope_name = match (&enclosing, &written_scope) {
            (Some((_, _, outer, _)), Some(written)) => {
                Some(format!("{outer}{}{written}", spec.scope_separator))
            }
            (Some((_, _, outer, _)), None) => Some(outer.clone()),
            (None, Some(written)) => Some(package_prefix(written)),
            (None, None) => None,
        };
        let enclosing_role = enclosing.as_ref().map(|(_, role, ..)| *role);
        let in_type = written_scope.is_some() || enclosing_role.is_some_and(Role::is_type);
        let (kind, separator) = match definition.role {
            Role::Symbol("function") | Role::Symbol("method") if in_type => (
                "method",
                spec.instance_method_separator
                    .unwrap_or(spec.member_separator),
            ),
            Role::Singleton => ("method", "."),
            Role::Symbol("method") => ("function", spec.scope_separator),
            Role::Symbol(kind) => (
                kind,
                if in_type && !definition.role.is_scope() {
                    spec.member_separator
                } else {
                    spec.scope_separator
                },
            ),
            Role::Test => ("function", spec.scope_separator),
            Role::Namespace | Role::Extension => ("", spec.scope_separator),
        };
        let qualified = match &scope_name {
            Some(scope) => format!("{scope}{separator}{name}"),
            None => package_prefix(&name),
        };
        let parent = enclosing.as_ref().map_or(-1, |(.., index)| *index);
        let index = if kind.is_empty() {
            // A namespace or extension is a scope only; for an extension, its members
            // belong to the type it names.
            -1
        } else {
            let node = definition.node;
            let test = definition.role == Role::Test || is_test(spec, b, node, &name, kind);
            let owner_type = if kind == "method" {
                scope_name.clone().unwrap_or_default()
            } else {
                String::new()
            };
            b.add_symbol(NewSymbol {
                kind,
                name: name.clone(),
                qualified_name: qualified.clone(),
                signature: signature(b, node),
                start_line: line(node),
                end_line: end_line(node),
                doc: b.leading_comment(doc_anchor(node), spec.comment_prefixes),
                parent: if parent >= 0 { parent } else { -1 },
                owner_type,
                bases: definition.bases,
                test,
                ..Default::default()
            })
        };
        if definition.role.is_scope() || matches!(definition.role, Role::Symbol(_)) {
            // Functions scope what is nested in them too (a closure's calls).
            let index = if index >= 0 {
                index
            } else {
                open.last().map_or(-1, |(.., i)| *i)
            };
            open.push((
                definition.node.end_byte(),
                definition.role,
                qualified,
                index,
            ));
        }
    }
}

/// Where a declaration's doc comment sits: above the node, or above the wrapper that
/// starts where it starts (Dart's `member_declaration` around a method).
fn doc_anchor(node: SyntaxNode<'_>) -> SyntaxNode<'_> {
    let mut anchor = node;
    while anchor.prev_sibling().is_none()
        && let Some(parent) = anchor.parent()
        && parent.start_byte() == anchor.start_byte()
        && parent.parent().is_some()
    {
        anchor = parent;
    }
    anchor
}

/// The declaration's header: up to its body (a `body` field, or the first child whose
/// kind names a body or block), else its first line.
fn signature(b: &Builder<'_>, node: SyntaxNode<'_>) -> String {
    let mut cursor = node.walk();
    let body_field = node.child_by_field_name("body").map(|b| b.id());
    let body = node.named_children(&mut cursor).find(|child| {
        let kind = child.kind();
        Some(child.id()) == body_field
            || kind.contains("body")
            || kind.ends_with("block")
            || kind == "do_block"
            || kind.contains("comment")
    });
    let end = body.map_or_else(
        || {
            let text = b.text(node);
            node.start_byte() + text.find('\n').unwrap_or(text.len())
        },
        |body| body.start_byte(),
    );
    b.source
        .get(node.start_byte()..end)
        .unwrap_or("")
        .trim()
        .trim_end_matches(['{', ':', '='])
        .trim()
        .to_owned()
}

/// A test by the language's conventions: a test macro, a test attribute or annotation,
/// or a test name in a test file.
fn is_test(spec: &Spec, b: &Builder<'_>, node: SyntaxNode<'_>, name: &str, kind: &str) -> bool {
    if !matches!(kind, "function" | "method") {
        return false;
    }
    if has_marker(spec, b, node) {
        return true;
    }
    let path = b.facts.path.as_str();
    let test_file = codectx_core::conventions::is_test_path(path)
        || spec
            .test_file_suffixes
            .iter()
            .any(|suffix| path.ends_with(suffix));
    test_file && spec.test_prefixes.iter().any(|p| name.starts_with(p))
}

/// Whether an attribute or annotation on the declaration (inside it, or right above
/// it) names a test marker.
fn has_marker(spec: &Spec, b: &Builder<'_>, node: SyntaxNode<'_>) -> bool {
    if spec.test_markers.is_empty() {
        return false;
    }
    let marked = |n: SyntaxNode<'_>| {
        let kind = n.kind();
        (kind.contains("attribute") || kind.contains("annotation") || kind == "modifiers")
            && spec.test_markers.iter().any(|marker| {
                b.text(n)
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|word| word == *marker)
            })
    };
    let mut cursor = node.walk();
    if node.children(&mut cursor).any(marked) {
        return true;
    }
    let mut previous = node.prev_sibling();
    while let Some(sibling) = previous {
        if marked(sibling) {
            return true;
        }
        if !sibling.kind().contains("attribute") && !sibling.kind().contains("annotation") {
            break;
        }
        previous = sibling.prev_sibling();
    }
    false
}
