//! Go: packages by directory (import path from go.mod), functions, methods with value and
//! pointer receivers (`pkg.(*T).M`, `pkg.T.M`), types, interfaces (method sets for
//! implicit satisfaction), constants, calls, errors.New/fmt.Errorf/panic messages, and
//! `TestXxx` tests in `_test.go` files.

use tree_sitter::Node as SyntaxNode;

use super::{Builder, NewSymbol, argument_count, children, end_line, line, string_value};
use crate::layout::{Layout, parent_dir};

struct Scope<'a> {
    symbol: i32,
    receiver: Option<&'a str>,
}

/// The package name an import path is used under by default.
pub fn default_package_name(import_path: &str) -> String {
    let mut parts: Vec<&str> = import_path.split('/').collect();
    // `example.com/x/v2` is package x; `gopkg.in/yaml.v3` is package yaml.
    if parts.len() > 1
        && parts.last().is_some_and(|p| {
            p.len() >= 2 && p.starts_with('v') && p[1..].chars().all(|c| c.is_ascii_digit())
        })
    {
        parts.pop();
    }
    let last = parts.last().copied().unwrap_or(import_path);
    let last = last.split('.').next().unwrap_or(last);
    last.trim_start_matches("go-").replace('-', "_")
}

fn is_test_name(name: &str) -> bool {
    ["Test", "Fuzz", "Example"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| {
            rest.is_empty() || rest.starts_with('_') || rest.starts_with(|c: char| c.is_uppercase())
        })
    })
}

pub fn extract(root: SyntaxNode<'_>, b: &mut Builder<'_>, layout: &Layout) {
    let path = b.facts.path.clone();
    let import_path = layout.go_import_path(parent_dir(&path));
    let is_test_file = path.ends_with("_test.go");
    let package_name = children(root)
        .into_iter()
        .find(|c| c.kind() == "package_clause")
        .and_then(|c| children(c).into_iter().next())
        .map(|n| b.text(n).to_owned())
        .unwrap_or_default();
    let module = if is_test_file && package_name.ends_with("_test") {
        format!("{import_path}_test")
    } else {
        import_path.clone()
    };
    b.facts.module = module.clone();
    b.facts.package = import_path.clone();

    for child in children(root) {
        match child.kind() {
            "import_declaration" => imports(child, b),
            "function_declaration" => {
                let name = b.field_text(child, "name").to_owned();
                let test = is_test_file && is_test_name(&name);
                let index = b.add_symbol(NewSymbol {
                    kind: "function",
                    qualified_name: format!("{module}.{name}"),
                    signature: b.header(child, "body"),
                    start_line: line(child),
                    end_line: end_line(child),
                    doc: b.leading_comment(child, &["//"]),
                    parent: -1,
                    test,
                    name,
                    ..Default::default()
                });
                parameters(child.child_by_field_name("parameters"), index, b);
                if let Some(body) = child.child_by_field_name("body") {
                    walk(
                        body,
                        &Scope {
                            symbol: index,
                            receiver: None,
                        },
                        b,
                    );
                }
            }
            "method_declaration" => method(child, &module, b),
            // `var ErrX = errors.New("pkg: message")`: sentinel errors are declared at
            // package level, where no function body is walked.
            "var_declaration" => {
                package_variables(child, &module, b);
                package_messages(child, b);
            }
            "type_declaration" => {
                for spec in children(child)
                    .into_iter()
                    .filter(|c| matches!(c.kind(), "type_spec" | "type_alias"))
                {
                    type_spec(spec, child, &module, b);
                }
            }
            "const_declaration" => {
                for spec in children(child)
                    .into_iter()
                    .filter(|c| c.kind() == "const_spec")
                {
                    for name in spec_names(spec, b) {
                        b.add_symbol(NewSymbol {
                            kind: "constant",
                            qualified_name: format!("{module}.{name}"),
                            signature: format!("const {}", b.text(spec)),
                            start_line: line(spec),
                            end_line: end_line(spec),
                            doc: b.leading_comment(spec, &["//"]),
                            parent: -1,
                            name,
                            ..Default::default()
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

/// The specs of a declaration, grouped or not: `import "x"` and `import ( "x"; "y" )`,
/// `var a = 1` and `var ( a = 1; b = 2 )`.
fn specs<'t>(declaration: SyntaxNode<'t>, spec: &str, list: &str) -> Vec<SyntaxNode<'t>> {
    let mut out = Vec::new();
    for child in children(declaration) {
        if child.kind() == spec {
            out.push(child);
        } else if child.kind() == list {
            out.extend(children(child).into_iter().filter(|c| c.kind() == spec));
        }
    }
    out
}

/// The names a `const` or `var` spec declares (`_` declares none).
fn spec_names(spec: SyntaxNode<'_>, b: &Builder<'_>) -> Vec<String> {
    let mut cursor = spec.walk();
    spec.children_by_field_name("name", &mut cursor)
        .filter(|n| n.kind() == "identifier")
        .map(|n| b.text(n).to_owned())
        .filter(|name| name != "_")
        .collect()
}

fn imports(node: SyntaxNode<'_>, b: &mut Builder<'_>) {
    for spec in specs(node, "import_spec", "import_spec_list") {
        let Some(target) = string_value(b.field_text(spec, "path")) else {
            continue;
        };
        let alias = match spec.child_by_field_name("name") {
            Some(name) if name.kind() == "package_identifier" => b.text(name).to_owned(),
            // `import . "strings"` (common in tests): its names are used unqualified.
            Some(name) if name.kind() == "dot" => ".".to_owned(),
            Some(_) => continue, // `_` imports bind no name
            None => default_package_name(&target),
        };
        b.add_import(&target, &alias, &target, line(spec));
    }
}

fn method(node: SyntaxNode<'_>, module: &str, b: &mut Builder<'_>) {
    let name = b.field_text(node, "name").to_owned();
    let receiver = node.child_by_field_name("receiver").and_then(|list| {
        children(list)
            .into_iter()
            .find(|c| c.kind() == "parameter_declaration")
    });
    let (receiver_name, receiver_type) = match receiver {
        Some(declaration) => (
            declaration
                .child_by_field_name("name")
                .map(|n| b.text(n))
                .unwrap_or(""),
            declaration
                .child_by_field_name("type")
                .map(|n| b.text(n))
                .unwrap_or(""),
        ),
        None => ("", ""),
    };
    let pointer = receiver_type.trim_start().starts_with('*');
    let type_name = super::clean_type(receiver_type);
    let qualified_name = if pointer {
        format!("{module}.(*{type_name}).{name}")
    } else {
        format!("{module}.{type_name}.{name}")
    };
    let index = b.add_symbol(NewSymbol {
        kind: "method",
        qualified_name,
        signature: b.header(node, "body"),
        start_line: line(node),
        end_line: end_line(node),
        doc: b.leading_comment(node, &["//"]),
        parent: -1,
        owner_type: format!("{module}.{type_name}"),
        name,
        ..Default::default()
    });
    parameters(node.child_by_field_name("parameters"), index, b);
    if let Some(body) = node.child_by_field_name("body") {
        let receiver = (!receiver_name.is_empty()).then_some(receiver_name);
        walk(
            body,
            &Scope {
                symbol: index,
                receiver,
            },
            b,
        );
    }
}

fn type_spec(spec: SyntaxNode<'_>, declaration: SyntaxNode<'_>, module: &str, b: &mut Builder<'_>) {
    let name = b.field_text(spec, "name").to_owned();
    let type_node = spec.child_by_field_name("type");
    let mut required = Vec::new();
    let mut embedded = Vec::new();
    let mut method_elements = Vec::new();
    // `type FileInfo = fs.FileInfo`: another name for a named type (an alias symbol whose
    // target resolution follows); `type Info fs.FileInfo` defines a new type.
    let alias_of = type_node
        .filter(|t| {
            spec.kind() == "type_alias"
                && matches!(
                    t.kind(),
                    "type_identifier" | "qualified_type" | "generic_type"
                )
        })
        .map(|t| b.text(t).to_owned());
    let kind = match type_node.map(|t| t.kind()) {
        _ if alias_of.is_some() => "alias",
        Some("interface_type") => {
            for element in children(type_node.expect("matched")) {
                match element.kind() {
                    "method_elem" | "method_spec" => {
                        required.push(b.field_text(element, "name").to_owned());
                        method_elements.push(element);
                    }
                    "type_elem" | "constraint_elem" => {
                        let text = b.text(element);
                        // Only plain embedded interfaces; type-set unions carry no methods.
                        if !text.contains('|') && !text.contains('~') {
                            embedded.push(text.trim().to_owned());
                        }
                    }
                    _ => {}
                }
            }
            "interface"
        }
        Some("struct_type") => {
            // Embedded fields (`struct{ cancelCtx }`, `*Buffer`) promote their methods.
            for list in children(type_node.expect("matched"))
                .into_iter()
                .filter(|c| c.kind() == "field_declaration_list")
            {
                for field in children(list)
                    .into_iter()
                    .filter(|c| c.kind() == "field_declaration")
                {
                    if field.child_by_field_name("name").is_none()
                        && let Some(type_node) = field.child_by_field_name("type")
                    {
                        let text = b.text(type_node).trim_start_matches('*').trim();
                        if !text.is_empty() {
                            embedded.push(text.to_owned());
                        }
                    }
                }
            }
            "type"
        }
        _ => "type",
    };
    // A single-spec declaration's comment sits above `type`; a grouped one above the spec.
    let anchor = if children(declaration).len() == 1 {
        declaration
    } else {
        spec
    };
    let index = b.add_symbol(NewSymbol {
        kind,
        qualified_name: format!("{module}.{name}"),
        // A struct shows its fields (the stored signature is capped at 300 characters).
        signature: if type_node.is_some_and(|t| t.kind() == "struct_type") {
            format!("type {}", b.declaration(spec))
        } else {
            format!(
                "type {}",
                super::truncate_chars(b.text(spec).lines().next().unwrap_or(""), 200)
            )
        },
        start_line: line(anchor),
        end_line: end_line(anchor),
        doc: b.leading_comment(anchor, &["//"]),
        parent: -1,
        required_methods: required,
        embedded,
        bases: alias_of.into_iter().collect(),
        name,
        ..Default::default()
    });
    // An interface's methods are symbols of their own (calls through the interface
    // resolve to them, then dispatch to the implementations).
    let interface = format!("{module}.{}", b.facts.symbols[index as usize].name);
    for element in method_elements {
        let method = b.field_text(element, "name").to_owned();
        b.add_symbol(NewSymbol {
            kind: "method",
            qualified_name: format!("{interface}.{method}"),
            signature: b.text(element).trim().to_owned(),
            start_line: line(element),
            end_line: end_line(element),
            doc: b.leading_comment(element, &["//"]),
            parent: index,
            owner_type: interface.clone(),
            name: method,
            ..Default::default()
        });
    }
    // Struct field types, so `s.field.Method()` resolves through the receiver.
    if let Some(structure) = type_node.filter(|t| t.kind() == "struct_type") {
        for list in children(structure)
            .into_iter()
            .filter(|c| c.kind() == "field_declaration_list")
        {
            for field in children(list)
                .into_iter()
                .filter(|c| c.kind() == "field_declaration")
            {
                let type_text = field
                    .child_by_field_name("type")
                    .map(|t| b.text(t))
                    .unwrap_or("");
                let mut cursor = field.walk();
                let names: Vec<_> = field.children_by_field_name("name", &mut cursor).collect();
                for name in names {
                    let variable = b.text(name).to_owned();
                    b.add_binding(index, &variable, type_text);
                }
            }
        }
    }
}

fn parameters(list: Option<SyntaxNode<'_>>, scope: i32, b: &mut Builder<'_>) {
    let Some(list) = list else { return };
    for declaration in children(list) {
        if !matches!(
            declaration.kind(),
            "parameter_declaration" | "variadic_parameter_declaration"
        ) {
            continue;
        }
        let type_text = declaration
            .child_by_field_name("type")
            .map(|t| b.text(t))
            .unwrap_or("");
        let mut cursor = declaration.walk();
        let names: Vec<_> = declaration
            .children_by_field_name("name", &mut cursor)
            .collect();
        for name in names {
            let variable = b.text(name).to_owned();
            b.add_binding(scope, &variable, type_text);
        }
    }
}

/// The type a Go expression evidently has: `T{}`, `&T{}`, `new(T)`, or the result of a
/// called function (`call:NewT`, resolved later from that function's signature).
fn expression_type(node: SyntaxNode<'_>, b: &Builder<'_>) -> String {
    match node.kind() {
        "composite_literal" => b.field_text(node, "type").to_owned(),
        "unary_expression" => node
            .child_by_field_name("operand")
            .map(|o| expression_type(o, b))
            .unwrap_or_default(),
        "call_expression" => {
            let function = node.child_by_field_name("function");
            match function.map(|f| (f.kind(), b.text(f))) {
                Some(("identifier", "new")) => node
                    .child_by_field_name("arguments")
                    .and_then(|a| children(a).into_iter().next())
                    .map(|t| b.text(t).to_owned())
                    .unwrap_or_default(),
                Some(("identifier", name)) | Some(("selector_expression", name)) => {
                    format!("call:{name}")
                }
                _ => String::new(),
            }
        }
        _ => String::new(),
    }
}

fn walk(node: SyntaxNode<'_>, scope: &Scope<'_>, b: &mut Builder<'_>) {
    match node.kind() {
        "call_expression" => call(node, scope, b),
        "short_var_declaration" => {
            let left = node
                .child_by_field_name("left")
                .map(children)
                .unwrap_or_default();
            let right = node
                .child_by_field_name("right")
                .map(children)
                .unwrap_or_default();
            if left.len() == right.len() {
                for (variable, value) in left.iter().zip(right.iter()) {
                    let type_name = expression_type(*value, b);
                    let variable = b.text(*variable).to_owned();
                    if let Some(call) = type_name.strip_prefix("call:") {
                        b.facts.bindings.push(crate::facts::BindingFact {
                            scope: scope.symbol,
                            variable,
                            type_name: format!("call:{call}"),
                        });
                    } else {
                        b.add_binding(scope.symbol, &variable, &type_name);
                    }
                }
            }
        }
        "var_spec" => {
            if let Some(type_node) = node.child_by_field_name("type") {
                let type_text = b.text(type_node).to_owned();
                let mut cursor = node.walk();
                let names: Vec<_> = node.children_by_field_name("name", &mut cursor).collect();
                for name in names {
                    let variable = b.text(name).to_owned();
                    b.add_binding(scope.symbol, &variable, &type_text);
                }
            }
        }
        _ => {}
    }
    for child in children(node) {
        walk(child, scope, b);
    }
}

/// `var X = ...` / `var ( ... )` at package level: one variable symbol per name.
fn package_variables(declaration: SyntaxNode<'_>, module: &str, b: &mut Builder<'_>) {
    for spec in specs(declaration, "var_spec", "var_spec_list") {
        for name in spec_names(spec, b) {
            b.add_symbol(NewSymbol {
                kind: "variable",
                qualified_name: format!("{module}.{name}"),
                signature: super::truncate_chars(
                    &format!("var {}", b.text(spec).lines().next().unwrap_or("")),
                    160,
                ),
                start_line: line(spec),
                end_line: end_line(spec),
                doc: b.leading_comment(spec, &["//"]),
                parent: -1,
                name,
                ..Default::default()
            });
        }
    }
}

fn package_messages(node: SyntaxNode<'_>, b: &mut Builder<'_>) {
    if node.kind() == "call_expression"
        && let Some(function) = node.child_by_field_name("function")
        && function.kind() == "selector_expression"
    {
        let field = b.field_text(function, "field");
        let operand = function
            .child_by_field_name("operand")
            .map(|o| b.text(o))
            .unwrap_or("");
        if (operand == "errors" && field == "New") || (operand == "fmt" && field == "Errorf") {
            let message = node
                .child_by_field_name("arguments")
                .and_then(|a| children(a).into_iter().next())
                .filter(|a| {
                    matches!(
                        a.kind(),
                        "interpreted_string_literal" | "raw_string_literal"
                    )
                })
                .and_then(|a| string_value(b.text(a)));
            if let Some(message) = message {
                b.add_error(-1, &message, line(node));
            }
        }
    }
    for child in children(node) {
        package_messages(child, b);
    }
}

fn call(node: SyntaxNode<'_>, scope: &Scope<'_>, b: &mut Builder<'_>) {
    let Some(function) = node.child_by_field_name("function") else {
        return;
    };
    let arguments = node.child_by_field_name("arguments");
    let count = argument_count(arguments);
    // The first argument, or the constant head of a concatenation built from it
    // (`panic("already registered for path '" + path + "'")`).
    let first_string = || {
        arguments
            .and_then(|a| children(a).into_iter().find(|c| c.is_named()))
            .map(|mut a| {
                while a.kind() == "binary_expression" {
                    match a.child_by_field_name("left") {
                        Some(left) => a = left,
                        None => break,
                    }
                }
                a
            })
            .filter(|a| {
                matches!(
                    a.kind(),
                    "interpreted_string_literal" | "raw_string_literal"
                )
            })
            .and_then(|a| string_value(b.text(a)))
    };
    match function.kind() {
        "identifier" => {
            let name = b.text(function);
            if name == "panic" {
                if let Some(message) = first_string() {
                    b.add_error(scope.symbol, &message, line(node));
                }
                return;
            }
            if matches!(
                name,
                "len"
                    | "cap"
                    | "make"
                    | "new"
                    | "append"
                    | "copy"
                    | "delete"
                    | "close"
                    | "print"
                    | "println"
                    | "min"
                    | "max"
                    | "clear"
                    | "complex"
                    | "real"
                    | "imag"
                    | "recover"
            ) {
                return;
            }
            b.add_call(scope.symbol, name, "", line(node), count);
        }
        "selector_expression" => {
            let field = b.field_text(function, "field");
            let operand = function.child_by_field_name("operand");
            let operand_text = operand.map(|o| b.text(o)).unwrap_or("");
            if ((operand_text == "errors" && field == "New")
                || (operand_text == "fmt" && field == "Errorf"))
                && let Some(message) = first_string()
            {
                b.add_error(scope.symbol, &message, line(node));
            }
            // The method's receiver is `self`; a field of it is `self.field`.
            let receiver = match (operand, scope.receiver) {
                (Some(o), Some(receiver))
                    if o.kind() == "identifier" && operand_text == receiver =>
                {
                    "self".to_owned()
                }
                (Some(o), Some(receiver)) if o.kind() == "selector_expression" => {
                    let inner = b.field_text(o, "operand");
                    if inner == receiver {
                        format!("self.{}", b.field_text(o, "field"))
                    } else {
                        operand_text.to_owned()
                    }
                }
                _ => operand_text.to_owned(),
            };
            b.add_call(scope.symbol, field, &receiver, line(node), count);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert_eq!(default_package_name("net/http"), "http");
        assert_eq!(default_package_name("github.com/go-chi/chi/v5"), "chi");
        assert_eq!(default_package_name("gopkg.in/yaml.v3"), "yaml");
        assert_eq!(default_package_name("fmt"), "fmt");
    }

    #[test]
    fn test_names() {
        assert!(is_test_name("TestServe"));
        assert!(is_test_name("Test_serve"));
        assert!(is_test_name("ExampleServer"));
        assert!(!is_test_name("Testify"));
        assert!(!is_test_name("BenchmarkServe"));
    }
}
