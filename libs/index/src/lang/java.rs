//! Java: packages, classes/interfaces/enums/records (nested), methods and constructors
//! (overloads told apart by parameter types), fields and locals as bindings (Java
//! declares types), `extends`/`implements`, calls (implicit `this` included),
//! `new T(...)` as a call to the class, `throw new X("...")` messages, and `@Test`
//! methods.

use tree_sitter::Node as SyntaxNode;

use super::{Builder, NewSymbol, argument_count, children, end_line, line, string_value};
use crate::layout::Layout;

const TEST_ANNOTATIONS: &[&str] = &[
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
];

pub fn extract(root: SyntaxNode<'_>, b: &mut Builder<'_>, _layout: &Layout) {
    let package = children(root)
        .into_iter()
        .find(|c| c.kind() == "package_declaration")
        .and_then(|p| {
            children(p)
                .into_iter()
                .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"))
        })
        .map(|n| b.text(n).to_owned())
        .unwrap_or_default();
    b.facts.module = package.clone();
    b.facts.package = package.clone();
    for child in children(root) {
        match child.kind() {
            "import_declaration" => {
                let path = children(child)
                    .into_iter()
                    .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"))
                    .map(|n| b.text(n).to_owned());
                let wildcard = children(child).into_iter().any(|c| c.kind() == "asterisk");
                if let Some(path) = path
                    && !wildcard
                {
                    let alias = path.rsplit('.').next().unwrap_or(&path).to_owned();
                    let module = path
                        .rsplit_once('.')
                        .map(|(m, _)| m.to_owned())
                        .unwrap_or_default();
                    b.add_import(&path, &alias, &module, line(child));
                }
            }
            _ => type_declaration(child, &package, -1, b),
        }
    }
}

fn annotations<'a>(node: SyntaxNode<'_>, b: &Builder<'a>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for child in children(node) {
        if child.kind() == "modifiers" {
            for modifier in children(child) {
                if matches!(modifier.kind(), "marker_annotation" | "annotation") {
                    let name = b.field_text(modifier, "name");
                    out.push(name.rsplit('.').next().unwrap_or(name));
                }
            }
        }
    }
    out
}

fn doc(node: SyntaxNode<'_>, b: &Builder<'_>) -> String {
    b.leading_comment(node, &["/**", "/*", "//"])
}

fn type_list(node: Option<SyntaxNode<'_>>, b: &Builder<'_>) -> Vec<String> {
    let Some(node) = node else { return Vec::new() };
    let mut out = Vec::new();
    for child in children(node) {
        if child.kind() == "type_list" {
            out.extend(children(child).into_iter().map(|t| b.text(t).to_owned()));
        } else {
            out.push(b.text(child).to_owned());
        }
    }
    out
}

fn type_declaration(node: SyntaxNode<'_>, prefix: &str, parent: i32, b: &mut Builder<'_>) {
    let kind = match node.kind() {
        "class_declaration" | "enum_declaration" | "record_declaration" => "class",
        "interface_declaration" | "annotation_type_declaration" => "interface",
        _ => return,
    };
    let name = b.field_text(node, "name").to_owned();
    let qualified = if prefix.is_empty() {
        name.clone()
    } else {
        format!("{prefix}.{name}")
    };
    let mut bases = type_list(node.child_by_field_name("superclass"), b);
    bases.extend(type_list(node.child_by_field_name("interfaces"), b));
    for child in children(node) {
        if child.kind() == "extends_interfaces" {
            bases.extend(type_list(Some(child), b));
        }
    }
    let body = node.child_by_field_name("body");
    let required: Vec<String> = if kind == "interface" {
        body.map(|body| {
            children(body)
                .into_iter()
                .filter(|c| c.kind() == "method_declaration")
                .map(|m| b.field_text(m, "name").to_owned())
                .collect()
        })
        .unwrap_or_default()
    } else {
        Vec::new()
    };
    let index = b.add_symbol(NewSymbol {
        kind,
        qualified_name: qualified.clone(),
        signature: b.header(node, "body"),
        start_line: line(node),
        end_line: end_line(node),
        doc: doc(node, b),
        parent,
        bases,
        required_methods: required,
        name,
        ..Default::default()
    });
    let Some(body) = body else { return };
    let mut members = children(body);
    // Enum bodies keep their methods in a nested declarations node.
    if let Some(declarations) = members
        .iter()
        .find(|m| m.kind() == "enum_body_declarations")
        .copied()
    {
        members.extend(children(declarations));
    }
    for member in members {
        match member.kind() {
            "method_declaration" | "constructor_declaration" => {
                method(member, &qualified, index, b)
            }
            "field_declaration" => {
                let type_text = b.field_text(member, "type").to_owned();
                let mut cursor = member.walk();
                let declarators: Vec<_> = member
                    .children_by_field_name("declarator", &mut cursor)
                    .collect();
                for declarator in declarators {
                    let variable = b.field_text(declarator, "name").to_owned();
                    b.add_binding(index, &variable, &type_text);
                    if let Some(value) = declarator.child_by_field_name("value") {
                        walk(value, index, b);
                    }
                }
            }
            _ => type_declaration(member, &qualified, index, b),
        }
    }
}

fn method(node: SyntaxNode<'_>, owner: &str, parent: i32, b: &mut Builder<'_>) {
    let name = b.field_text(node, "name").to_owned();
    let test = annotations(node, b)
        .iter()
        .any(|a| TEST_ANNOTATIONS.contains(a));
    let parameter_types: Vec<String> = node
        .child_by_field_name("parameters")
        .map(|p| {
            children(p)
                .into_iter()
                .filter(|c| matches!(c.kind(), "formal_parameter" | "spread_parameter"))
                .map(|c| super::collapse_whitespace(b.field_text(c, "type")))
                .collect()
        })
        .unwrap_or_default();
    let body_field = "body";
    let index = b.add_symbol(NewSymbol {
        kind: "method",
        qualified_name: format!("{owner}.{name}"),
        signature: b.header(node, body_field),
        start_line: line(node),
        end_line: end_line(node),
        doc: doc(node, b),
        parent,
        owner_type: owner.to_owned(),
        test,
        discriminator: format!("({})", parameter_types.join(",")),
        name,
        ..Default::default()
    });
    if let Some(parameters) = node.child_by_field_name("parameters") {
        for parameter in children(parameters)
            .into_iter()
            .filter(|c| c.kind() == "formal_parameter")
        {
            let variable = b.field_text(parameter, "name").to_owned();
            let type_text = b.field_text(parameter, "type").to_owned();
            b.add_binding(index, &variable, &type_text);
        }
    }
    if let Some(body) = node.child_by_field_name(body_field) {
        walk(body, index, b);
    }
}

fn walk(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    match node.kind() {
        "local_variable_declaration" => {
            let type_text = b.field_text(node, "type").to_owned();
            let mut cursor = node.walk();
            let declarators: Vec<_> = node
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            for declarator in declarators {
                let variable = b.field_text(declarator, "name").to_owned();
                // `var x = new T()` takes the constructed type.
                let type_text = if type_text == "var" {
                    declarator
                        .child_by_field_name("value")
                        .filter(|v| v.kind() == "object_creation_expression")
                        .map(|v| b.field_text(v, "type").to_owned())
                        .unwrap_or_default()
                } else {
                    type_text.clone()
                };
                b.add_binding(scope, &variable, &type_text);
            }
        }
        "method_invocation" => {
            let name = b.field_text(node, "name");
            let count = argument_count(node.child_by_field_name("arguments"));
            let receiver = match node.child_by_field_name("object") {
                None => String::new(),
                Some(object) if object.kind() == "this" => "self".to_owned(),
                Some(object) if object.kind() == "super" => "super".to_owned(),
                Some(object)
                    if object.kind() == "field_access"
                        && b.field_text(object, "object") == "this" =>
                {
                    format!("this.{}", b.field_text(object, "field"))
                }
                Some(object)
                    if matches!(
                        object.kind(),
                        "identifier" | "field_access" | "scoped_identifier"
                    ) =>
                {
                    b.text(object).to_owned()
                }
                Some(_) => "?".to_owned(),
            };
            b.add_call(scope, name, &receiver, line(node), count);
            if scope >= 0
                && b.facts.symbols[scope as usize].test
                && let Some(arguments) = node.child_by_field_name("arguments")
            {
                for argument in children(arguments)
                    .into_iter()
                    .filter(|a| a.kind() == "identifier")
                {
                    let referenced = b.text(argument).to_owned();
                    b.add_reference(scope, &referenced, line(argument));
                }
            }
        }
        "object_creation_expression" => {
            let type_name = super::clean_type(b.field_text(node, "type"));
            let count = argument_count(node.child_by_field_name("arguments"));
            b.add_call(scope, &type_name, "", line(node), count);
        }
        "throw_statement" => {
            let message = children(node)
                .into_iter()
                .find(|c| c.kind() == "object_creation_expression")
                .and_then(|creation| creation.child_by_field_name("arguments"))
                .and_then(|arguments| {
                    children(arguments)
                        .into_iter()
                        .find(|a| a.kind() == "string_literal")
                })
                .and_then(|literal| string_value(b.text(literal)));
            if let Some(message) = message {
                b.add_error(scope, &message, line(node));
            }
        }
        "class_body" => return, // anonymous classes: their methods are not symbols
        _ => {}
    }
    for child in children(node) {
        walk(child, scope, b);
    }
}
