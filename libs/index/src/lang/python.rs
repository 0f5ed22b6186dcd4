//! Python: modules from package directories, functions, classes (nested), methods,
//! decorators (kept in the signature; the span starts at the first decorator), module
//! constants, imports (absolute and relative), calls with `self`/`cls`/`super()`
//! receivers, type hints and constructor assignments as bindings, `raise X("...")`
//! messages, and tests by pytest/unittest conventions.

use std::sync::LazyLock;

use tree_sitter::Node as SyntaxNode;

use super::kinds::KindTable;
use super::{Builder, Language, NewSymbol, argument_count, children, end_line, line, string_value};
use crate::layout::{Layout, file_name};

struct Context<'a> {
    module: &'a str,
    test_file: bool,
}

fn is_test_file(path: &str) -> bool {
    let name = file_name(path);
    (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || path
            .split('/')
            .any(|part| part == "tests" || part == "test")
}

pub fn extract(root: SyntaxNode<'_>, b: &mut Builder<'_>, layout: &Layout) {
    let path = b.facts.path.clone();
    let module = layout.python_module(&path);
    b.facts.package = if file_name(&path) == "__init__.py" {
        module.clone()
    } else {
        module
            .rsplit_once('.')
            .map(|(p, _)| p.to_owned())
            .unwrap_or_default()
    };
    b.facts.module = module.clone();
    let context = Context {
        module: &module,
        test_file: is_test_file(&path),
    };
    block(root, -1, &context, b);
}

/// The qualified-name prefix of a scope.
fn prefix(scope: i32, context: &Context<'_>, b: &Builder<'_>) -> String {
    if scope >= 0 {
        b.facts.symbols[scope as usize].qualified_name.clone()
    } else {
        context.module.to_owned()
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn scope_kind<'a>(scope: i32, b: &'a Builder<'_>) -> &'a str {
    if scope >= 0 {
        b.facts.symbols[scope as usize].kind.as_str()
    } else {
        ""
    }
}

/// Statements of a block (or module), in order.
fn block(node: SyntaxNode<'_>, scope: i32, context: &Context<'_>, b: &mut Builder<'_>) {
    for statement in children(node) {
        statement_node(statement, scope, context, b);
    }
}

fn docstring(body: Option<SyntaxNode<'_>>, b: &Builder<'_>) -> String {
    let Some(first) = body.and_then(|body| children(body).into_iter().next()) else {
        return String::new();
    };
    if first.kind() != "expression_statement" {
        return String::new();
    }
    let Some(string) = children(first)
        .into_iter()
        .next()
        .filter(|s| s.kind() == "string")
    else {
        return String::new();
    };
    string_value(b.text(string)).unwrap_or_default()
}

fn statement_node(node: SyntaxNode<'_>, scope: i32, context: &Context<'_>, b: &mut Builder<'_>) {
    match node.kind() {
        "import_statement" => {
            let mut cursor = node.walk();
            let names: Vec<_> = node.children_by_field_name("name", &mut cursor).collect();
            for name in names {
                let (target, alias) = match name.kind() {
                    "aliased_import" => (
                        b.field_text(name, "name").to_owned(),
                        b.field_text(name, "alias").to_owned(),
                    ),
                    _ => {
                        let dotted = b.text(name).to_owned();
                        let head = dotted.split('.').next().unwrap_or(&dotted).to_owned();
                        // `import os.path` binds `os`, and makes `os.path` reachable through it.
                        (head.clone(), head)
                    }
                };
                let full = if name.kind() == "aliased_import" {
                    target.clone()
                } else {
                    b.text(name).to_owned()
                };
                b.add_import(&target, &alias, &full, line(node));
            }
        }
        "import_from_statement" => {
            let module = match node.child_by_field_name("module_name") {
                Some(m) if m.kind() == "relative_import" => relative_module(m, context, b),
                Some(m) => b.text(m).to_owned(),
                None => String::new(),
            };
            let mut cursor = node.walk();
            let names: Vec<_> = node.children_by_field_name("name", &mut cursor).collect();
            for name in names {
                let (imported, alias) = match name.kind() {
                    "aliased_import" => (
                        b.field_text(name, "name").to_owned(),
                        b.field_text(name, "alias").to_owned(),
                    ),
                    _ => (b.text(name).to_owned(), b.text(name).to_owned()),
                };
                b.add_import(&join(&module, &imported), &alias, &module, line(node));
                // A package's `__init__` re-exports what it imports (public names).
                if scope < 0
                    && b.facts.path.ends_with("__init__.py")
                    && !alias.starts_with('_')
                    && alias != "*"
                    && let Some(import) = b.facts.imports.last_mut()
                {
                    import.exported_as = join(context.module, &alias);
                }
            }
        }
        "decorated_definition" => {
            let decorators: Vec<SyntaxNode<'_>> = children(node)
                .into_iter()
                .filter(|c| c.kind() == "decorator")
                .collect();
            if let Some(definition) = node.child_by_field_name("definition") {
                definition_node(definition, Some(node), &decorators, scope, context, b);
            }
        }
        "function_definition" | "class_definition" => {
            definition_node(node, None, &[], scope, context, b)
        }
        "expression_statement" => {
            for child in children(node) {
                if child.kind() == "assignment" {
                    assignment(child, scope, context, b);
                }
                expressions(child, scope, b);
            }
        }
        _ => {
            // Compound statements (if/for/while/try/with/match) hold blocks of statements.
            let mut handled_blocks = false;
            for child in children(node) {
                match child.kind() {
                    "block" => {
                        block(child, scope, context, b);
                        handled_blocks = true;
                    }
                    "else_clause"
                    | "elif_clause"
                    | "except_clause"
                    | "finally_clause"
                    | "case_clause"
                    | "except_group_clause" => {
                        statement_node(child, scope, context, b);
                        handled_blocks = true;
                    }
                    _ => expressions(child, scope, b),
                }
            }
            if node.kind() == "raise_statement" {
                raise(node, scope, b);
            }
            if node.kind() == "with_statement" {
                with_bindings(node, scope, b);
            }
            let _ = handled_blocks;
        }
    }
}

/// `with Session() as s:` types `s` as `Session` in the scope (the context manager's
/// usual `__enter__` returns itself).
fn with_bindings(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let Some(clause) = children(node)
        .into_iter()
        .find(|c| c.kind() == "with_clause")
    else {
        return;
    };
    for item in children(clause)
        .into_iter()
        .filter(|c| c.kind() == "with_item")
    {
        let Some(pattern) = item
            .child_by_field_name("value")
            .filter(|v| v.kind() == "as_pattern")
        else {
            continue;
        };
        let value = children(pattern).into_iter().next();
        let alias = pattern.child_by_field_name("alias");
        if let (Some(value), Some(alias)) = (value, alias)
            && value.kind() == "call"
            && let Some(function) = value.child_by_field_name("function")
            && matches!(function.kind(), "identifier" | "attribute")
        {
            let variable = b.text(alias).trim().to_owned();
            let type_name = b.text(function).to_owned();
            if variable.chars().all(|c| c.is_alphanumeric() || c == '_') {
                b.add_binding(scope, &variable, &type_name);
            }
        }
    }
}

fn relative_module(node: SyntaxNode<'_>, context: &Context<'_>, b: &Builder<'_>) -> String {
    let prefix = children(node)
        .into_iter()
        .find(|c| c.kind() == "import_prefix")
        .map(|p| b.text(p).len())
        .unwrap_or(0);
    let rest = children(node)
        .into_iter()
        .find(|c| c.kind() == "dotted_name")
        .map(|d| b.text(d))
        .unwrap_or("");
    // The current package is the module's parent (or the module itself for __init__).
    let mut base: Vec<&str> = if b.facts.package.is_empty() {
        Vec::new()
    } else {
        b.facts.package.split('.').collect()
    };
    for _ in 1..prefix {
        base.pop();
    }
    let _ = context;
    let mut module = base.join(".");
    if !rest.is_empty() {
        module = join(&module, rest);
    }
    module
}

fn definition_node(
    node: SyntaxNode<'_>,
    decorated: Option<SyntaxNode<'_>>,
    decorators: &[SyntaxNode<'_>],
    scope: i32,
    context: &Context<'_>,
    b: &mut Builder<'_>,
) {
    let outer = decorated.unwrap_or(node);
    let name = b.field_text(node, "name").to_owned();
    let qualified = join(&prefix(scope, context, b), &name);
    let body = node.child_by_field_name("body");
    let mut signature = b.header(node, "body");
    if !decorators.is_empty() {
        let texts: Vec<&str> = decorators.iter().map(|d| b.text(*d)).collect();
        signature = format!("{} {signature}", texts.join(" "));
    }
    if node.kind() == "class_definition" {
        let bases: Vec<String> = node
            .child_by_field_name("superclasses")
            .map(|list| {
                children(list)
                    .into_iter()
                    .filter(|c| matches!(c.kind(), "identifier" | "attribute" | "subscript"))
                    .map(|c| b.text(c).to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let test = context.test_file
            && (name.starts_with("Test") || bases.iter().any(|base| base.ends_with("TestCase")));
        let index = b.add_symbol(NewSymbol {
            kind: "class",
            qualified_name: qualified,
            signature,
            start_line: line(outer),
            end_line: end_line(outer),
            doc: docstring(body, b),
            parent: scope,
            bases,
            test,
            name,
            ..Default::default()
        });
        header_calls(
            decorators,
            node.child_by_field_name("superclasses"),
            index,
            b,
        );
        if let Some(body) = body {
            block(body, index, context, b);
        }
        return;
    }
    let in_class = scope_kind(scope, b) == "class";
    let class_is_test = in_class && b.facts.symbols[scope as usize].test;
    let test = context.test_file && name.starts_with("test") && (!in_class || class_is_test);
    let owner_type = if in_class {
        b.facts.symbols[scope as usize].qualified_name.clone()
    } else {
        String::new()
    };
    let index = b.add_symbol(NewSymbol {
        kind: if in_class { "method" } else { "function" },
        qualified_name: qualified,
        signature,
        start_line: line(outer),
        end_line: end_line(outer),
        doc: docstring(body, b),
        parent: scope,
        owner_type,
        test,
        name,
        ..Default::default()
    });
    if let Some(parameters) = node.child_by_field_name("parameters") {
        for parameter in children(parameters) {
            match parameter.kind() {
                "typed_parameter" => {
                    let variable = children(parameter)
                        .into_iter()
                        .find(|c| c.kind() == "identifier")
                        .map(|c| b.text(c).to_owned());
                    let type_text = hint(parameter.child_by_field_name("type"), b);
                    if let Some(variable) = variable {
                        b.add_binding(index, &variable, &type_text);
                    }
                }
                "typed_default_parameter" => {
                    let variable = b.field_text(parameter, "name").to_owned();
                    let type_text = hint(parameter.child_by_field_name("type"), b);
                    b.add_binding(index, &variable, &type_text);
                }
                _ => {}
            }
        }
    }
    header_calls(decorators, node.child_by_field_name("parameters"), index, b);
    if let Some(body) = body {
        block(body, index, context, b);
    }
}

/// The calls in a definition's header (decorators, a class's bases, a function's default
/// values: `@app.route("/")`, `class P(namedtuple("P", "x y"))`, `def f(x=make())`), as
/// the definition's own: they run when it is defined, and the definition's span (which
/// starts at its first decorator) holds them, as it holds their names' references.
fn header_calls(
    decorators: &[SyntaxNode<'_>],
    rest: Option<SyntaxNode<'_>>,
    index: i32,
    b: &mut Builder<'_>,
) {
    for decorator in decorators {
        expressions(*decorator, index, b);
    }
    if let Some(rest) = rest {
        expressions(rest, index, b);
    }
}

/// A type hint reduced to a class name: `Optional[Foo]` and `Foo | None` give `Foo`.
fn hint(node: Option<SyntaxNode<'_>>, b: &Builder<'_>) -> String {
    let Some(node) = node else {
        return String::new();
    };
    let text = b.text(node).trim().trim_matches(|c| c == '"' || c == '\'');
    let text = text
        .split('|')
        .map(str::trim)
        .find(|part| *part != "None")
        .unwrap_or(text);
    for wrapper in ["Optional[", "typing.Optional[", "Type[", "type["] {
        if let Some(inner) = text.strip_prefix(wrapper) {
            return inner.trim_end_matches(']').to_owned();
        }
    }
    text.to_owned()
}

fn assignment(node: SyntaxNode<'_>, scope: i32, context: &Context<'_>, b: &mut Builder<'_>) {
    let Some(left) = node.child_by_field_name("left") else {
        return;
    };
    let right = node.child_by_field_name("right");
    let annotated = node.child_by_field_name("type").map(|t| hint(Some(t), b));
    let constructed = right.filter(|r| r.kind() == "call").and_then(|call| {
        let function = call.child_by_field_name("function")?;
        matches!(function.kind(), "identifier" | "attribute").then(|| b.text(function).to_owned())
    });
    let type_text = annotated.or(constructed).unwrap_or_default();
    // `a = b = value`: the inner assignment binds `b`.
    if let Some(inner) = right.filter(|r| r.kind() == "assignment") {
        assignment(inner, scope, context, b);
    }
    match left.kind() {
        "identifier" => {
            let variable = b.text(left).to_owned();
            if scope < 0 {
                module_variable(node, &variable, context, b);
            }
            if !type_text.is_empty() {
                b.add_binding(scope, &variable, &type_text);
            }
        }
        "pattern_list" | "tuple_pattern" if scope < 0 => {
            for target in children(left)
                .into_iter()
                .filter(|t| t.kind() == "identifier")
            {
                let variable = b.text(target).to_owned();
                module_variable(node, &variable, context, b);
            }
        }
        "attribute" => {
            // `self.x = Foo()` types the attribute for the whole class.
            let object = b.field_text(left, "object");
            if object == "self" && !type_text.is_empty() {
                let mut class = scope;
                while class >= 0 && b.facts.symbols[class as usize].kind != "class" {
                    class = b.facts.symbols[class as usize].parent;
                }
                if class >= 0 {
                    let attribute = b.field_text(left, "attribute").to_owned();
                    b.add_binding(class, &attribute, &type_text);
                }
            }
        }
        _ => {}
    }
}

/// A module-level assignment's target: a constant (UPPER_CASE) or a variable symbol, once
/// (the first assignment defines it).
fn module_variable(
    node: SyntaxNode<'_>,
    variable: &str,
    context: &Context<'_>,
    b: &mut Builder<'_>,
) {
    let is_constant = variable.len() > 1
        && variable
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && variable
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase());
    let qualified = join(context.module, variable);
    let redefined = b
        .facts
        .symbols
        .iter()
        .any(|s| s.parent < 0 && s.qualified_name == qualified);
    if variable == "_" || redefined {
        return;
    }
    b.add_symbol(NewSymbol {
        kind: if is_constant { "constant" } else { "variable" },
        qualified_name: qualified,
        signature: super::truncate_chars(b.text(node).lines().next().unwrap_or(""), 120),
        start_line: line(node),
        end_line: end_line(node),
        parent: -1,
        name: variable.to_owned(),
        ..Default::default()
    });
}

fn raise(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let Some(raised) = children(node).into_iter().next() else {
        return;
    };
    if raised.kind() != "call" {
        return;
    }
    let message = raised
        .child_by_field_name("arguments")
        .and_then(|a| children(a).into_iter().next())
        // The template of a formatted message: `'bad %r' % x`, `'bad {}'.format(x)`.
        .map(|a| match a.kind() {
            "binary_operator" => a.child_by_field_name("left").unwrap_or(a),
            "call" => a
                .child_by_field_name("function")
                .filter(|f| f.kind() == "attribute")
                .and_then(|f| f.child_by_field_name("object"))
                .unwrap_or(a),
            _ => a,
        })
        .filter(|a| a.kind() == "string" || a.kind() == "concatenated_string")
        .and_then(|a| {
            string_value(b.text(a).split('\n').next().unwrap_or(""))
                .or_else(|| string_value(b.text(a)))
        });
    if let Some(message) = message {
        b.add_error(scope, &message, line(node));
    }
}

const CALL: u16 = 1;
const BLOCK: u16 = 1 << 1;

/// Calls (and, in tests, references) inside an expression, in source order; nested
/// blocks are statements of their own.
fn expressions(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    static KINDS: LazyLock<KindTable> = LazyLock::new(|| {
        KindTable::new(
            &Language::Python.grammar(),
            &[(CALL, &["call"]), (BLOCK, &["block"])],
        )
    });
    if KINDS.is(node, CALL) {
        call(node, scope, b);
    }
    // Named descendants in preorder, by one cursor; an unnamed node's subtree (a token's)
    // and a block's are not entered.
    let mut cursor = node.walk();
    if !cursor.goto_first_child() {
        return;
    }
    let mut depth = 1usize;
    loop {
        let child = cursor.node();
        if child.is_named() && !KINDS.is(child, BLOCK) {
            if KINDS.is(child, CALL) {
                call(child, scope, b);
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
        }
        while !cursor.goto_next_sibling() {
            cursor.goto_parent();
            depth -= 1;
            if depth == 0 {
                return;
            }
        }
    }
}

/// The fields a call site reads, by id (a field looked up by name scans the grammar's
/// field names, once per call site of the file otherwise).
struct CallFields {
    function: u16,
    arguments: u16,
    object: u16,
    attribute: u16,
}

static CALL_FIELDS: LazyLock<CallFields> = LazyLock::new(|| {
    let grammar = Language::Python.grammar();
    let field = |name: &str| {
        grammar
            .field_id_for_name(name)
            .map(u16::from)
            .expect("a field of the Python grammar")
    };
    CallFields {
        function: field("function"),
        arguments: field("arguments"),
        object: field("object"),
        attribute: field("attribute"),
    }
});

fn call(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let fields = &*CALL_FIELDS;
    let Some(function) = node.child_by_field_id(fields.function) else {
        return;
    };
    let count = argument_count(node.child_by_field_id(fields.arguments));
    match function.kind() {
        "identifier" => {
            let name = b.text(function);
            if matches!(
                name,
                "print"
                    | "len"
                    | "isinstance"
                    | "str"
                    | "int"
                    | "float"
                    | "bool"
                    | "list"
                    | "dict"
                    | "set"
                    | "tuple"
                    | "range"
                    | "super"
                    | "getattr"
                    | "setattr"
                    | "hasattr"
                    | "type"
                    | "repr"
                    | "iter"
                    | "next"
                    | "enumerate"
                    | "zip"
                    | "sorted"
                    | "min"
                    | "max"
                    | "sum"
                    | "any"
                    | "all"
                    | "map"
                    | "filter"
                    | "id"
                    | "hash"
                    | "abs"
                    | "callable"
                    | "issubclass"
                    | "format"
                    | "open"
                    | "vars"
                    | "object"
            ) {
                return;
            }
            b.add_call(scope, name, "", line(node), count);
        }
        "attribute" => {
            let name = function
                .child_by_field_id(fields.attribute)
                .map(|n| b.text(n))
                .unwrap_or("");
            let object = function.child_by_field_id(fields.object);
            let receiver = match object {
                Some(o) if o.kind() == "identifier" && matches!(b.text(o), "self" | "cls") => {
                    "self".to_owned()
                }
                Some(o) if o.kind() == "call" && b.field_text(o, "function") == "super" => {
                    "super()".to_owned()
                }
                Some(o) => b.text(o).to_owned(),
                None => String::new(),
            };
            // Receivers that are themselves calls or subscripts carry no usable name.
            if receiver.contains('(') && receiver != "super()"
                || receiver.contains('[')
                || receiver.contains('\n')
            {
                b.add_call(scope, name, "?", line(node), count);
            } else {
                b.add_call(scope, name, &receiver, line(node), count);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{caller_name, facts_of};
    use super::*;

    fn calls(source: &str) -> Vec<(String, String, String, u32, u32)> {
        let facts = facts_of(Language::Python, "", source);
        facts
            .calls
            .iter()
            .map(|c| {
                (
                    caller_name(&facts, c.caller),
                    c.name.clone(),
                    c.receiver.clone(),
                    c.line,
                    c.arguments,
                )
            })
            .collect()
    }

    /// Calls nested in arguments, lambdas, comprehensions, f-strings, conditions and
    /// subscripts come in source order (outer before inner), each under the definition
    /// holding it; a nested block's calls are its own statement's. Calls in a definition's
    /// decorators, parameter defaults and bases are the definition's own.
    #[test]
    fn calls_in_every_kind_of_expression_come_in_source_order() {
        let source = r#"
import os

@register(name=label("x"))
def outer(a, b=default()):
    result = first(second(a), third(b=fourth()))
    value = [make(i) for i in items() if keep(i)]
    text = f"{render(a)} and {os.path.join(a, b)}"
    pick = (lambda q: inner(q))(seed())
    if check(a) and other.check(b):
        for x in loop(a):
            body(x)
        else:
            done()
    return table[index(a)].method(arg()) or self.helper(super().base())

class Thing(Base, metaclass=make_meta()):
    size = compute()

    @cached(size=limit())
    def method(self, c: int = count()):
        with open_ctx() as handle, lock(handle):
            self.run(handle)
        try:
            risky()
        except make_error() as error:
            handle_error(error)

top_level(call_in(arguments()))
"#;
        let got = calls(source);
        let expected: Vec<(&str, &str, &str, u32, u32)> = vec![
            ("outer", "register", "", 4, 1),
            ("outer", "label", "", 4, 1),
            ("outer", "default", "", 5, 0),
            ("outer", "first", "", 6, 2),
            ("outer", "second", "", 6, 1),
            ("outer", "third", "", 6, 1),
            ("outer", "fourth", "", 6, 0),
            ("outer", "make", "", 7, 1),
            ("outer", "items", "", 7, 0),
            ("outer", "keep", "", 7, 1),
            ("outer", "render", "", 8, 1),
            ("outer", "join", "os.path", 8, 2),
            ("outer", "inner", "", 9, 1),
            ("outer", "seed", "", 9, 0),
            ("outer", "check", "", 10, 1),
            ("outer", "check", "other", 10, 1),
            ("outer", "loop", "", 11, 1),
            ("outer", "body", "", 12, 1),
            ("outer", "done", "", 14, 0),
            ("outer", "method", "?", 15, 1),
            ("outer", "index", "", 15, 1),
            ("outer", "arg", "", 15, 0),
            ("outer", "helper", "self", 15, 1),
            ("outer", "base", "super()", 15, 0),
            ("Thing", "make_meta", "", 17, 0),
            ("Thing", "compute", "", 18, 0),
            ("method", "cached", "", 20, 1),
            ("method", "limit", "", 20, 0),
            ("method", "count", "", 21, 0),
            ("method", "open_ctx", "", 22, 0),
            ("method", "lock", "", 22, 1),
            ("method", "run", "self", 23, 1),
            ("method", "risky", "", 25, 0),
            ("method", "make_error", "", 26, 0),
            ("method", "handle_error", "", 27, 1),
            ("<module>", "top_level", "", 29, 1),
            ("<module>", "call_in", "", 29, 1),
            ("<module>", "arguments", "", 29, 0),
        ];
        let expected: Vec<(String, String, String, u32, u32)> = expected
            .into_iter()
            .map(|(c, n, r, l, a)| (c.to_owned(), n.to_owned(), r.to_owned(), l, a))
            .collect();
        assert_eq!(got, expected);
    }
}
