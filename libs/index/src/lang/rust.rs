//! Rust: module paths from the crate layout (`crate::a::b`, named after the crate),
//! inline modules, functions, structs/enums/unions (type), traits (interface, with their
//! required methods), impl methods (`crate::m::Type::method`, generic arguments dropped),
//! `impl Trait for Type` (implements), constants and statics, `use` imports, calls through
//! `self`, typed parameters, `let x = Type::new()`/`Type { .. }`, panic!/bail!/anyhow! and
//! `Error::new("...")` messages, and `#[test]`-style tests.

use tree_sitter::Node as SyntaxNode;

use super::{
    Builder, NewSymbol, argument_count, children, clean_type, end_line, line, string_value,
};
use crate::facts::ImplFact;
use crate::layout::Layout;

const ERROR_MACROS: &[&str] = &[
    "panic",
    "bail",
    "anyhow",
    "unreachable",
    "ensure",
    "format_err",
];

struct Context {
    /// The module path of the file or inline module being walked.
    module: String,
    /// Inside `#[cfg(test)]` code.
    in_test_module: bool,
}

pub fn extract(root: SyntaxNode<'_>, b: &mut Builder<'_>, layout: &Layout) {
    let path = b.facts.path.clone();
    let module = layout.rust_module(&path);
    b.facts.module = module.clone();
    b.facts.package = module.clone();
    let in_tests = path.split('/').any(|part| part == "tests");
    items(
        root,
        &Context {
            module,
            in_test_module: in_tests,
        },
        -1,
        b,
    );
}

fn attributes<'a>(node: SyntaxNode<'_>, b: &Builder<'a>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut current = node.prev_sibling();
    while let Some(sibling) = current {
        match sibling.kind() {
            "attribute_item" => out.push(b.text(sibling)),
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        current = sibling.prev_sibling();
    }
    out
}

fn is_test_attribute(attribute: &str) -> bool {
    let inner = attribute
        .trim_start_matches("#[")
        .trim_end_matches(']')
        .trim();
    let path = inner.split('(').next().unwrap_or(inner).trim();
    path == "test" || path.ends_with("::test") || path == "rstest" || path == "test_case"
}

fn doc(node: SyntaxNode<'_>, b: &Builder<'_>) -> String {
    b.leading_comment(node, &["///", "//!", "//", "/**", "/*"])
}

fn items(container: SyntaxNode<'_>, context: &Context, parent: i32, b: &mut Builder<'_>) {
    for item in children(container) {
        match item.kind() {
            "use_declaration" => {
                let first = b.facts.imports.len();
                if let Some(argument) = item.child_by_field_name("argument") {
                    use_tree(argument, "", context, line(item), b);
                }
                // `pub use` (any `pub(...)` too) re-exports under this module's path.
                let public = children(item)
                    .into_iter()
                    .any(|c| c.kind() == "visibility_modifier");
                if public {
                    for import in &mut b.facts.imports[first..] {
                        if import.alias != "*" && import.alias != "_" {
                            import.exported_as = format!("{}::{}", context.module, import.alias);
                        }
                    }
                }
            }
            "function_item" => {
                function(item, context, parent, "", b);
            }
            "struct_item" | "enum_item" | "union_item" | "type_item" => {
                let name = b.field_text(item, "name").to_owned();
                // A struct or enum shows its fields and variants (capped when stored).
                let signature = if matches!(item.kind(), "struct_item" | "enum_item" | "union_item")
                {
                    b.declaration(item)
                } else {
                    b.header(item, "body")
                };
                let index = b.add_symbol(NewSymbol {
                    kind: "type",
                    qualified_name: format!("{}::{name}", context.module),
                    signature,
                    start_line: line(item),
                    end_line: end_line(item),
                    doc: doc(item, b),
                    parent,
                    name,
                    ..Default::default()
                });
                if let Some(body) = item.child_by_field_name("body") {
                    for field in children(body)
                        .into_iter()
                        .filter(|f| f.kind() == "field_declaration")
                    {
                        let variable = b.field_text(field, "name").to_owned();
                        let type_text = b.field_text(field, "type");
                        b.add_binding(index, &variable, type_text);
                    }
                }
            }
            "trait_item" => {
                let name = b.field_text(item, "name").to_owned();
                let qualified = format!("{}::{name}", context.module);
                let body = item.child_by_field_name("body");
                let required: Vec<String> = body
                    .map(|body| {
                        children(body)
                            .into_iter()
                            .filter(|c| {
                                matches!(c.kind(), "function_signature_item" | "function_item")
                            })
                            .map(|c| b.field_text(c, "name").to_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                let bases: Vec<String> = item
                    .child_by_field_name("bounds")
                    .map(|bounds| {
                        children(bounds)
                            .into_iter()
                            .map(|c| b.text(c).to_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                let index = b.add_symbol(NewSymbol {
                    kind: "interface",
                    qualified_name: qualified.clone(),
                    signature: b.header(item, "body"),
                    start_line: line(item),
                    end_line: end_line(item),
                    doc: doc(item, b),
                    parent,
                    required_methods: required,
                    bases,
                    name,
                    ..Default::default()
                });
                if let Some(body) = body {
                    for member in children(body) {
                        match member.kind() {
                            "function_item" => {
                                function(member, context, index, &qualified, b);
                            }
                            "function_signature_item" => {
                                let method = b.field_text(member, "name").to_owned();
                                b.add_symbol(NewSymbol {
                                    kind: "method",
                                    qualified_name: format!("{qualified}::{method}"),
                                    signature: b.text(member).trim_end_matches(';').to_owned(),
                                    start_line: line(member),
                                    end_line: end_line(member),
                                    doc: doc(member, b),
                                    parent: index,
                                    owner_type: qualified.clone(),
                                    name: method,
                                    ..Default::default()
                                });
                            }
                            _ => {}
                        }
                    }
                }
            }
            "impl_item" => {
                let type_text = b.field_text(item, "type");
                let type_name = clean_type(type_text);
                let type_name = type_name
                    .rsplit("::")
                    .next()
                    .unwrap_or(&type_name)
                    .to_owned();
                if let Some(trait_node) = item.child_by_field_name("trait") {
                    let trait_name = b.text(trait_node).to_owned();
                    // A blanket impl over a type parameter names no concrete type.
                    let generic_self =
                        item.child_by_field_name("type_parameters")
                            .is_some_and(|params| {
                                b.text(params).contains(&format!("{type_name}:"))
                                    || b.text(params) == format!("<{type_name}>")
                            });
                    if !type_name.is_empty() && !generic_self {
                        b.facts.impls.push(ImplFact {
                            type_name: type_name.clone(),
                            trait_name,
                            line: line(item),
                        });
                    }
                }
                if type_name.is_empty() {
                    continue;
                }
                // The type's own path when this file imports it (`use crate::routing::Router`).
                let owner = b
                    .facts
                    .imports
                    .iter()
                    .find(|i| i.alias == type_name)
                    .map(|i| i.target.clone())
                    .unwrap_or_else(|| format!("{}::{type_name}", context.module));
                if let Some(body) = item.child_by_field_name("body") {
                    for member in children(body)
                        .into_iter()
                        .filter(|m| m.kind() == "function_item")
                    {
                        function(member, context, parent, &owner, b);
                    }
                }
            }
            "mod_item" => {
                let name = b.field_text(item, "name");
                if let Some(body) = item.child_by_field_name("body") {
                    let test_module = attributes(item, b).iter().any(|a| a.contains("cfg(test)"))
                        || name == "tests";
                    let inner = Context {
                        module: format!("{}::{name}", context.module),
                        in_test_module: context.in_test_module || test_module,
                    };
                    items(body, &inner, parent, b);
                }
            }
            "const_item" | "static_item" => {
                let name = b.field_text(item, "name").to_owned();
                b.add_symbol(NewSymbol {
                    kind: "constant",
                    qualified_name: format!("{}::{name}", context.module),
                    signature: super::truncate_chars(
                        b.text(item).lines().next().unwrap_or(""),
                        160,
                    ),
                    start_line: line(item),
                    end_line: end_line(item),
                    doc: doc(item, b),
                    parent,
                    name,
                    ..Default::default()
                });
            }
            _ => {}
        }
    }
}

/// `use a::b::{c, d as e, f::*}` → imports `c`, `e`.
fn use_tree(node: SyntaxNode<'_>, prefix: &str, context: &Context, at: u32, b: &mut Builder<'_>) {
    let join = |prefix: &str, rest: &str| {
        if prefix.is_empty() {
            rest.to_owned()
        } else {
            format!("{prefix}::{rest}")
        }
    };
    match node.kind() {
        "scoped_identifier" | "identifier" | "crate" | "self" | "super" => {
            let path = join(prefix, b.text(node));
            let alias = path.rsplit("::").next().unwrap_or(&path).to_owned();
            if alias == "self" {
                let module = path.trim_end_matches("::self");
                let alias = module.rsplit("::").next().unwrap_or(module).to_owned();
                b.add_import(
                    &absolute(module, context),
                    &alias,
                    &absolute(module, context),
                    at,
                );
            } else {
                let target = absolute(&path, context);
                let module = target
                    .rsplit_once("::")
                    .map(|(m, _)| m.to_owned())
                    .unwrap_or_else(|| target.clone());
                b.add_import(&target, &alias, &module, at);
            }
        }
        "use_as_clause" => {
            let path = join(prefix, b.field_text(node, "path"));
            let alias = b.field_text(node, "alias").to_owned();
            let target = absolute(&path, context);
            let module = target
                .rsplit_once("::")
                .map(|(m, _)| m.to_owned())
                .unwrap_or_else(|| target.clone());
            b.add_import(&target, &alias, &module, at);
        }
        "scoped_use_list" => {
            let path = join(prefix, b.field_text(node, "path"));
            if let Some(list) = node.child_by_field_name("list") {
                for child in children(list) {
                    use_tree(child, &path, context, at, b);
                }
            }
        }
        "use_list" => {
            for child in children(node) {
                use_tree(child, prefix, context, at, b);
            }
        }
        _ => {}
    }
}

/// `crate::x` → `<crate>::x`, `self::x` and `super::x` relative to the module.
fn absolute(path: &str, context: &Context) -> String {
    let crate_name = context.module.split("::").next().unwrap_or(&context.module);
    if let Some(rest) = path.strip_prefix("crate::") {
        return format!("{crate_name}::{rest}");
    }
    if let Some(rest) = path.strip_prefix("self::") {
        return format!("{}::{rest}", context.module);
    }
    let mut module = context.module.clone();
    let mut rest = path;
    while let Some(stripped) = rest.strip_prefix("super::") {
        module = module
            .rsplit_once("::")
            .map(|(m, _)| m.to_owned())
            .unwrap_or(module);
        rest = stripped;
    }
    if rest.len() != path.len() {
        return format!("{module}::{rest}");
    }
    path.to_owned()
}

fn function(
    node: SyntaxNode<'_>,
    context: &Context,
    parent: i32,
    owner: &str,
    b: &mut Builder<'_>,
) -> i32 {
    let name = b.field_text(node, "name").to_owned();
    let attributes = attributes(node, b);
    let test = attributes.iter().any(|a| is_test_attribute(a));
    let _ = context.in_test_module;
    let qualified = if owner.is_empty() {
        format!("{}::{name}", context.module)
    } else {
        format!("{owner}::{name}")
    };
    let index = b.add_symbol(NewSymbol {
        kind: if owner.is_empty() {
            "function"
        } else {
            "method"
        },
        qualified_name: qualified,
        signature: b.header(node, "body"),
        start_line: line(node),
        end_line: end_line(node),
        doc: doc(node, b),
        parent,
        owner_type: owner.to_owned(),
        test,
        name,
        ..Default::default()
    });
    if let Some(parameters) = node.child_by_field_name("parameters") {
        for parameter in children(parameters)
            .into_iter()
            .filter(|p| p.kind() == "parameter")
        {
            let pattern = b
                .field_text(parameter, "pattern")
                .trim_start_matches("mut ")
                .to_owned();
            let type_text = b.field_text(parameter, "type");
            b.add_binding(index, &pattern, type_text);
        }
    }
    if let Some(body) = node.child_by_field_name("body") {
        walk(body, index, context, b);
    }
    index
}

/// The type a `let` value evidently has.
fn value_type(value: SyntaxNode<'_>, b: &Builder<'_>) -> String {
    match value.kind() {
        "struct_expression" => b.field_text(value, "name").to_owned(),
        "call_expression" => {
            let function = value
                .child_by_field_name("function")
                .map(|f| b.text(f))
                .unwrap_or("");
            match function.rsplit_once("::") {
                // `Type::new(..)`, `Type::from(..)`: constructors of the path's type.
                Some((path, _))
                    if path
                        .rsplit("::")
                        .next()
                        .is_some_and(|t| t.starts_with(|c: char| c.is_uppercase())) =>
                {
                    path.to_owned()
                }
                _ => format!("call:{function}"),
            }
        }
        "reference_expression" | "try_expression" | "await_expression" => children(value)
            .into_iter()
            .next()
            .map(|inner| value_type(inner, b))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn walk(node: SyntaxNode<'_>, scope: i32, context: &Context, b: &mut Builder<'_>) {
    match node.kind() {
        "function_item" => {
            // A nested fn is its own symbol.
            function(node, context, scope, "", b);
            return;
        }
        "let_declaration" => {
            let pattern = node
                .child_by_field_name("pattern")
                .filter(|p| p.kind() == "identifier");
            if let Some(pattern) = pattern {
                let variable = b.text(pattern).to_owned();
                let type_text = match node.child_by_field_name("type") {
                    Some(t) => b.text(t).to_owned(),
                    None => node
                        .child_by_field_name("value")
                        .map(|v| value_type(v, b))
                        .unwrap_or_default(),
                };
                if let Some(call) = type_text.strip_prefix("call:") {
                    b.facts.bindings.push(crate::facts::BindingFact {
                        scope,
                        variable,
                        type_name: format!("call:{call}"),
                    });
                } else {
                    b.add_binding(scope, &variable, &type_text);
                }
            }
        }
        "call_expression" => call(node, scope, b),
        "macro_invocation" => {
            let name = b.field_text(node, "macro");
            let name = name.rsplit("::").next().unwrap_or(name);
            if ERROR_MACROS.contains(&name) {
                let token_tree = children(node)
                    .into_iter()
                    .find(|c| c.kind() == "token_tree");
                if let Some(message) = token_tree.and_then(|t| first_string(t, b)) {
                    b.add_error(scope, &message, line(node));
                }
            }
            // Macro arguments are token trees, not expressions: calls in them
            // (`assert_eq!(router.handle("/"), ..)`) are recovered from the tokens.
            if let Some(tokens) = children(node)
                .into_iter()
                .find(|c| c.kind() == "token_tree")
            {
                macro_calls(tokens, scope, b);
            }
            return;
        }
        _ => {}
    }
    for child in children(node) {
        walk(child, scope, context, b);
    }
}

/// Calls in a macro's token tree: `name(`, `path::name(`, `receiver.name(`.
fn macro_calls(tree: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let mut cursor = tree.walk();
    let tokens: Vec<SyntaxNode<'_>> = tree.children(&mut cursor).collect();
    for (at, token) in tokens.iter().enumerate() {
        if token.kind() == "token_tree" {
            macro_calls(*token, scope, b);
            continue;
        }
        if token.kind() != "identifier" {
            continue;
        }
        let Some(next) = tokens.get(at + 1) else {
            continue;
        };
        if next.kind() != "token_tree" || !b.text(*next).starts_with('(') {
            continue;
        }
        let name = b.text(*token);
        let count = argument_count(Some(*next)).min(1);
        let previous = at
            .checked_sub(1)
            .map(|i| (tokens[i].kind(), b.text(tokens[i])));
        match previous {
            Some((_, ".")) => {
                let receiver = match at.checked_sub(2).map(|i| tokens[i]) {
                    Some(r) if r.kind() == "self" || b.text(r) == "self" => "self".to_owned(),
                    Some(r) if r.kind() == "identifier" => b.text(r).to_owned(),
                    _ => "?".to_owned(),
                };
                b.add_call(scope, name, &receiver, line(*token), count);
            }
            Some((_, "::")) => {
                let mut start = at - 1;
                while start >= 2
                    && b.text(tokens[start]) == "::"
                    && tokens[start - 1].kind() == "identifier"
                {
                    start -= 2;
                }
                let path: String = tokens[start + 1..=at].iter().map(|t| b.text(*t)).collect();
                b.add_call(
                    scope,
                    path.trim_start_matches("::"),
                    "",
                    line(*token),
                    count,
                );
            }
            _ => {
                if !matches!(name, "Some" | "Ok" | "Err" | "Box") {
                    b.add_call(scope, name, "", line(*token), count);
                }
            }
        }
    }
}

fn first_string(node: SyntaxNode<'_>, b: &Builder<'_>) -> Option<String> {
    children(node)
        .into_iter()
        .find(|c| matches!(c.kind(), "string_literal" | "raw_string_literal"))
        .and_then(|s| string_value(b.text(s)))
}

fn call(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let Some(mut function) = node.child_by_field_name("function") else {
        return;
    };
    if function.kind() == "generic_function"
        && let Some(inner) = function.child_by_field_name("function")
    {
        function = inner;
    }
    let arguments = node.child_by_field_name("arguments");
    let count = argument_count(arguments);
    match function.kind() {
        "identifier" => {
            let name = b.text(function);
            if matches!(name, "Some" | "Ok" | "Err" | "Box" | "drop") {
                return;
            }
            b.add_call(scope, name, "", line(node), count);
        }
        "scoped_identifier" => {
            let path = b.field_text(function, "path");
            let name = b.field_text(function, "name");
            if path.contains("Error")
                && matches!(name, "new" | "msg" | "custom" | "other")
                && let Some(message) = arguments.and_then(|a| first_string(a, b))
            {
                b.add_error(scope, &message, line(node));
            }
            // `Type::method` and `module::function` both resolve through the path.
            b.add_call(
                scope,
                format!("{}::{name}", clean_type(path).trim_end_matches("::"))
                    .trim_start_matches("::"),
                "",
                line(node),
                count,
            );
        }
        "field_expression" => {
            let field = b.field_text(function, "field");
            let value = function.child_by_field_name("value");
            let receiver = match value {
                Some(v) if v.kind() == "self" => "self".to_owned(),
                Some(v) if v.kind() == "field_expression" && b.field_text(v, "value") == "self" => {
                    format!("self.{}", b.field_text(v, "field"))
                }
                Some(v) if v.kind() == "identifier" => b.text(v).to_owned(),
                _ => "?".to_owned(),
            };
            b.add_call(scope, field, &receiver, line(node), count);
        }
        _ => {}
    }
}
