//! JavaScript and TypeScript (TSX included): modules by path, functions, arrow functions
//! bound to names, classes (methods and arrow-function fields), TS interfaces (required
//! methods), `extends`/`implements`, ES imports and `require`, calls through `this`,
//! `new T()` and typed parameters, `throw new Error("...")` messages, and `test`/`it`
//! cases (named by their title, inside `describe` blocks) in test files.

use tree_sitter::Node as SyntaxNode;

use super::{Builder, NewSymbol, argument_count, children, end_line, line, string_value};
use crate::facts::STAR_IMPORT;
use crate::layout::{Layout, file_name, parent_dir};

struct Context {
    module: String,
    test_file: bool,
}

fn is_test_file(path: &str) -> bool {
    let name = file_name(path);
    [".test.", ".spec.", "_test."]
        .iter()
        .any(|marker| name.contains(marker))
        || path.split('/').any(|p| p == "__tests__")
}

pub fn extract(root: SyntaxNode<'_>, b: &mut Builder<'_>, layout: &Layout) {
    let path = b.facts.path.clone();
    let module = layout.js_module(&path);
    b.facts.module = module.clone();
    b.facts.package = parent_dir(&path).to_owned();
    let context = Context {
        module,
        test_file: is_test_file(&path),
    };
    statements(root, -1, &context, &[], b);
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `./x` and `../y` relative to this file, as module paths; packages stay as written.
fn resolve_module(specifier: &str, path: &str) -> String {
    if !specifier.starts_with('.') {
        return specifier.to_owned();
    }
    let mut parts: Vec<&str> = parent_dir(path)
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    for segment in specifier.split('/') {
        match segment {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    let joined = joined
        .strip_suffix(".js")
        .or_else(|| joined.strip_suffix(".ts"))
        .or_else(|| joined.strip_suffix(".tsx"))
        .or_else(|| joined.strip_suffix(".jsx"))
        .or_else(|| joined.strip_suffix(".mjs"))
        .unwrap_or(&joined)
        .to_owned();
    joined
        .strip_suffix("/index")
        .map(str::to_owned)
        .unwrap_or(joined)
}

fn doc(node: SyntaxNode<'_>, b: &Builder<'_>) -> String {
    let anchor = match node.parent() {
        Some(parent) if parent.kind() == "export_statement" => parent,
        _ => node,
    };
    b.leading_comment(anchor, &["/**", "/*", "//"])
}

fn statements(
    node: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    for child in children(node) {
        statement(child, scope, context, describe, b);
    }
}

fn statement(
    node: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    match node.kind() {
        "import_statement" => import(node, context, b),
        "export_statement" => {
            if let Some(declaration) = node.child_by_field_name("declaration") {
                statement(declaration, scope, context, describe, b);
            } else if node.child_by_field_name("source").is_some() {
                reexport(node, context, b);
            } else {
                expressions(node, scope, context, describe, b);
            }
        }
        "function_declaration" | "generator_function_declaration" => {
            function_like(
                node,
                b.field_text(node, "name"),
                "function",
                scope,
                "",
                context,
                describe,
                b,
            );
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            class(node, scope, context, b)
        }
        "interface_declaration" => {
            let name = b.field_text(node, "name").to_owned();
            let mut bases = Vec::new();
            for child in children(node) {
                if child.kind() == "extends_type_clause" {
                    bases.extend(children(child).into_iter().map(|t| b.text(t).to_owned()));
                }
            }
            let required = node
                .child_by_field_name("body")
                .map(|body| {
                    children(body)
                        .into_iter()
                        .filter(|m| matches!(m.kind(), "method_signature" | "property_signature"))
                        .map(|m| b.field_text(m, "name").to_owned())
                        .collect()
                })
                .unwrap_or_default();
            let qualified = join(&context.module, &name);
            let index = b.add_symbol(NewSymbol {
                kind: "interface",
                qualified_name: qualified.clone(),
                signature: b.header(node, "body"),
                start_line: line(node),
                end_line: end_line(node),
                doc: doc(node, b),
                parent: scope,
                bases,
                required_methods: required,
                name,
                ..Default::default()
            });
            if let Some(body) = node.child_by_field_name("body") {
                for member in children(body)
                    .into_iter()
                    .filter(|m| m.kind() == "method_signature")
                {
                    let method = b.field_text(member, "name").to_owned();
                    b.add_symbol(NewSymbol {
                        kind: "method",
                        qualified_name: join(&qualified, &method),
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
            }
        }
        "type_alias_declaration" | "enum_declaration" => {
            let name = b.field_text(node, "name").to_owned();
            b.add_symbol(NewSymbol {
                kind: "type",
                qualified_name: join(&context.module, &name),
                signature: super::truncate_chars(b.text(node).lines().next().unwrap_or(""), 160),
                start_line: line(node),
                end_line: end_line(node),
                doc: doc(node, b),
                parent: scope,
                name,
                ..Default::default()
            });
        }
        "lexical_declaration" | "variable_declaration" => {
            for declarator in children(node)
                .into_iter()
                .filter(|c| c.kind() == "variable_declarator")
            {
                declarator_node(declarator, node, scope, context, describe, b);
            }
        }
        "expression_statement" => {
            let expression = children(node).into_iter().next();
            let assigned = expression
                .filter(|c| c.kind() == "assignment_expression")
                .is_some_and(|a| assignment(node, a, scope, context, describe, b))
                || expression
                    .filter(|c| c.kind() == "call_expression")
                    .is_some_and(|c| define_property(node, c, scope, context, describe, b));
            if !assigned {
                expressions(node, scope, context, describe, b);
            }
        }
        _ => expressions(node, scope, context, describe, b),
    }
}

/// The leftmost operand of a concatenation (`'bad path ' + p + '!'` -> `'bad path '`): the
/// constant part of a message built by `+`.
fn leading_operand(mut node: SyntaxNode<'_>) -> SyntaxNode<'_> {
    while node.kind() == "binary_expression" {
        match node.child_by_field_name("left") {
            Some(left) => node = left,
            None => break,
        }
    }
    node
}

/// The value a chain of assignments stores (`a = b.c = function () {}` stores the function).
fn assigned_value(mut value: SyntaxNode<'_>) -> SyntaxNode<'_> {
    while value.kind() == "assignment_expression" {
        match value.child_by_field_name("right") {
            Some(right) => value = right,
            None => break,
        }
    }
    value
}

fn is_function_value(node: SyntaxNode<'_>) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// A function defined by assignment to a member, the CommonJS and prototype idioms:
/// `exports.f = function`, `module.exports.f = function` (the module's function `f`),
/// `X.prototype.m = function` (method `m` of `X`), and `obj.m = function m()` on a local
/// object (method `m` of `obj`, e.g. `res.send` on `var res = Object.create(...)`). The
/// symbol spans the whole statement. Returns false for anything else (computed members,
/// `this.x = ...`, non-function values), which is then walked for calls as before.
fn assignment(
    statement: SyntaxNode<'_>,
    assignment: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) -> bool {
    let (Some(left), Some(right)) = (
        assignment.child_by_field_name("left"),
        assignment.child_by_field_name("right"),
    ) else {
        return false;
    };
    let value = assigned_value(right);
    // `module.exports = { f() {}, g: function () {} }`: the module's functions.
    if value.kind() == "object" && matches!(b.text(left), "module.exports" | "exports") {
        object_methods(value, "", scope, context, describe, b);
        object_values(value, scope, context, describe, b);
        return true;
    }
    if !matches!(left.kind(), "member_expression" | "subscript_expression")
        || !is_function_value(value)
    {
        return false;
    }
    // `obj['name'] = function` names `name`; `Route.prototype[method] = function` in a loop
    // over verbs generates methods, one symbol named by the key as written (`[method]`).
    let (property, computed) = if left.kind() == "subscript_expression" {
        let Some(key) = left.child_by_field_name("index") else {
            return false;
        };
        match key.kind() {
            "string" => match string_value(b.text(key)) {
                Some(name) => (name, false),
                None => return false,
            },
            "identifier" => (format!("[{}]", b.text(key)), true),
            _ => return false,
        }
    } else {
        (b.field_text(left, "property").to_owned(), false)
    };
    let Some(object) = left.child_by_field_name("object") else {
        return false;
    };
    let object = b.text(object).to_owned();
    let plain = |text: &str| {
        !text.is_empty()
            && text != "this"
            && text
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if property.is_empty() || !(computed || plain(&property)) {
        return false;
    }
    // `module.exports = function query() {}`: the module's function, named by the
    // function expression (or, anonymous, by the file: `lib/middleware/query.js` -> `query`).
    let module_export = object == "module" && property == "exports";
    let property = if module_export {
        let file = crate::layout::file_name(&b.facts.path);
        let stem = file.split('.').next().unwrap_or(file).to_owned();
        let named = value
            .child_by_field_name("name")
            .map(|n| b.text(n).to_owned())
            .filter(|n| plain(n));
        named.unwrap_or(stem)
    } else {
        property
    };
    let owner = if module_export {
        String::new()
    } else {
        match member_owner(&object) {
            Some(owner) => owner,
            None => return false,
        }
    };
    let (kind, owner_qualified) = defined_on(&owner, scope, context, b);
    let index = function_like(
        value,
        &property,
        kind,
        scope,
        &owner_qualified,
        context,
        describe,
        b,
    );
    b.set_span(index, line(statement), end_line(statement));
    let text = doc(statement, b);
    b.set_doc(index, &text);
    true
}

/// `Object.defineProperty(obj, 'name', { get() {}, set: function (v) {} })`: an accessor
/// property defined on an object, as `obj.name = function` would (method `obj.name`;
/// `X.prototype` gives a method of `X`, `exports` a function of the module). The getter
/// (else the setter, else a function `value`) is the body; the other accessor's calls
/// belong to the same symbol, which spans the statement. False for anything else.
fn define_property(
    statement: SyntaxNode<'_>,
    call: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) -> bool {
    if b.field_text(call, "function") != "Object.defineProperty" {
        return false;
    }
    let Some(arguments) = call.child_by_field_name("arguments") else {
        return false;
    };
    let arguments = children(arguments);
    let [object, name, descriptor] = arguments.as_slice() else {
        return false;
    };
    let Some(name) = string_value(b.text(*name)) else {
        return false;
    };
    if descriptor.kind() != "object" || !is_plain_name(&name) {
        return false;
    }
    let Some(owner) = member_owner(b.text(*object)) else {
        return false;
    };
    // Accessors in the order they make the body: get, set, value.
    let mut accessors: Vec<(usize, SyntaxNode<'_>)> = Vec::new();
    for member in children(*descriptor) {
        let Some((key, value)) = member_function(member, b) else {
            continue;
        };
        let rank = match key.as_str() {
            "get" => 0,
            "set" => 1,
            "value" => 2,
            _ => continue,
        };
        accessors.push((rank, value));
    }
    accessors.sort_by_key(|(rank, _)| *rank);
    let Some(&(_, body)) = accessors.first() else {
        return false;
    };
    let (kind, owner_qualified) = defined_on(&owner, scope, context, b);
    let index = function_like(
        body,
        &name,
        kind,
        scope,
        &owner_qualified,
        context,
        describe,
        b,
    );
    for &(_, other) in &accessors[1..] {
        expressions(other, index, context, describe, b);
    }
    b.set_span(index, line(statement), end_line(statement));
    let text = doc(statement, b);
    b.set_doc(index, &text);
    true
}

/// Who a function assigned to `object.x` belongs to: `exports` / `module.exports` (the
/// module: empty), `X.prototype` (`X`), a plain local name; None for anything else
/// (`this`, computed or nested objects).
fn member_owner(object: &str) -> Option<String> {
    match object {
        "exports" | "module.exports" => Some(String::new()),
        text => match text.strip_suffix(".prototype") {
            Some(class) if is_plain_name(class) && class != "this" => Some(class.to_owned()),
            Some(_) => None,
            None if is_plain_name(text) && text != "this" => Some(text.to_owned()),
            None => None,
        },
    }
}

/// The symbol kind and owner path of a function defined on `owner` ([`member_owner`]):
/// a function of the module, or a method of the owner seen from `scope`.
fn defined_on(
    owner: &str,
    scope: i32,
    context: &Context,
    b: &Builder<'_>,
) -> (&'static str, String) {
    if owner.is_empty() {
        return ("function", String::new());
    }
    let prefix = if scope >= 0 {
        b.facts.symbols[scope as usize].qualified_name.clone()
    } else {
        context.module.clone()
    };
    ("method", join(&prefix, owner))
}

/// A function-valued member of an object literal: `name() {}` or `name: function () {}`
/// (also `'name': () => {}`), with its name.
fn member_function<'t>(
    member: SyntaxNode<'t>,
    b: &Builder<'_>,
) -> Option<(String, SyntaxNode<'t>)> {
    match member.kind() {
        "method_definition" => Some((b.field_text(member, "name").to_owned(), member)),
        "pair" => {
            let value = member
                .child_by_field_name("value")
                .filter(|v| is_function_value(*v))?;
            let key = b
                .field_text(member, "key")
                .trim_matches(|c| c == '\'' || c == '"')
                .to_owned();
            Some((key, value))
        }
        _ => None,
    }
}

fn is_plain_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// `export { a, b as c } from './m'`: imports that re-export under this module's path;
/// `export * from './m'`: every name of `m` (an import aliased [`STAR_IMPORT`], resolved by
/// name through the module).
fn reexport(node: SyntaxNode<'_>, context: &Context, b: &mut Builder<'_>) {
    let Some(module) = source_module(node, b) else {
        return;
    };
    let at = line(node);
    let parts = children(node);
    let mut cursor = node.walk();
    let star = node.children(&mut cursor).any(|c| c.kind() == "*");
    if star && !parts.iter().any(|c| c.kind() == "namespace_export") {
        b.add_import(&module, STAR_IMPORT, &module, at);
        if let Some(import) = b.facts.imports.last_mut() {
            import.exported_as = context.module.clone();
        }
        return;
    }
    for clause in parts.into_iter().filter(|c| c.kind() == "export_clause") {
        for specifier in children(clause)
            .into_iter()
            .filter(|s| s.kind() == "export_specifier")
        {
            let name = b.field_text(specifier, "name").to_owned();
            let alias = specifier
                .child_by_field_name("alias")
                .map(|a| b.text(a).to_owned())
                .unwrap_or_else(|| name.clone());
            if name.is_empty() || alias == "default" {
                continue;
            }
            b.add_import(&join(&module, &name), &alias, &module, at);
            if let Some(import) = b.facts.imports.last_mut() {
                import.exported_as = join(&context.module, &alias);
            }
        }
    }
}

/// Functions in an object literal bound to a name: `const api = { get() {}, set:
/// function () {}, del: () => {} }` gives methods `api.get`, `api.set`, `api.del`; with
/// `owner` empty (`module.exports = { ... }`), functions of the module.
fn object_methods(
    object: SyntaxNode<'_>,
    owner: &str,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    let owner_qualified = if owner.is_empty() {
        String::new()
    } else {
        join(&context.module, owner)
    };
    let kind = if owner.is_empty() {
        "function"
    } else {
        "method"
    };
    for member in children(object) {
        let Some((name, value)) = member_function(member, b) else {
            continue;
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            continue;
        }
        let index = function_like(
            value,
            &name,
            kind,
            scope,
            &owner_qualified,
            context,
            describe,
            b,
        );
        b.set_span(index, line(member), end_line(member));
        let text = doc(member, b);
        b.set_doc(index, &text);
    }
}

/// Calls in an object literal's values that are not functions (those became symbols).
fn object_values(
    object: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    for member in children(object) {
        match member.kind() {
            "method_definition" => {}
            "pair" => {
                if let Some(value) = member
                    .child_by_field_name("value")
                    .filter(|v| !is_function_value(*v))
                {
                    expressions(value, scope, context, describe, b);
                }
            }
            _ => expressions(member, scope, context, describe, b),
        }
    }
}

/// The module an `import ... from` / `export ... from` statement names, resolved against
/// the file's directory.
fn source_module(node: SyntaxNode<'_>, b: &Builder<'_>) -> Option<String> {
    let source = string_value(b.text(node.child_by_field_name("source")?))?;
    Some(resolve_module(&source, &b.facts.path))
}

fn import(node: SyntaxNode<'_>, context: &Context, b: &mut Builder<'_>) {
    let Some(module) = source_module(node, b) else {
        return;
    };
    let at = line(node);
    let _ = context;
    for clause in children(node)
        .into_iter()
        .filter(|c| c.kind() == "import_clause")
    {
        for part in children(clause) {
            match part.kind() {
                // Default import: the module's default export, usually named like the binding.
                "identifier" => {
                    let alias = b.text(part).to_owned();
                    b.add_import(&join(&module, &alias), &alias, &module, at);
                }
                "namespace_import" => {
                    if let Some(alias) = children(part)
                        .into_iter()
                        .find(|c| c.kind() == "identifier")
                    {
                        let alias = b.text(alias).to_owned();
                        b.add_import(&module, &alias, &module, at);
                    }
                }
                "named_imports" => {
                    for specifier in children(part)
                        .into_iter()
                        .filter(|s| s.kind() == "import_specifier")
                    {
                        let name = b.field_text(specifier, "name").to_owned();
                        let alias = specifier
                            .child_by_field_name("alias")
                            .map(|a| b.text(a).to_owned())
                            .unwrap_or_else(|| name.clone());
                        b.add_import(&join(&module, &name), &alias, &module, at);
                    }
                }
                _ => {}
            }
        }
    }
    if !children(node).iter().any(|c| c.kind() == "import_clause") {
        b.add_import(&module, &module, &module, at);
    }
}

#[allow(clippy::too_many_arguments)]
fn function_like(
    node: SyntaxNode<'_>,
    name: &str,
    kind: &'static str,
    scope: i32,
    owner: &str,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) -> i32 {
    let prefix = if owner.is_empty() {
        if scope >= 0 {
            b.facts.symbols[scope as usize].qualified_name.clone()
        } else {
            context.module.clone()
        }
    } else {
        owner.to_owned()
    };
    let index = b.add_symbol(NewSymbol {
        kind,
        qualified_name: join(&prefix, name),
        signature: b.header(node, "body"),
        start_line: line(node),
        end_line: end_line(node),
        doc: doc(node, b),
        parent: scope,
        owner_type: owner.to_owned(),
        name: name.to_owned(),
        ..Default::default()
    });
    parameters(node, index, b);
    // Default values (and parameter decorators) run when the function is called.
    if let Some(list) = node.child_by_field_name("parameters") {
        expressions(list, index, context, describe, b);
    }
    if let Some(body) = node.child_by_field_name("body") {
        if body.kind() == "statement_block" {
            statements(body, index, context, describe, b);
        } else {
            expressions(body, index, context, describe, b);
        }
    }
    index
}

fn parameters(node: SyntaxNode<'_>, scope: i32, b: &mut Builder<'_>) {
    let Some(list) = node.child_by_field_name("parameters") else {
        return;
    };
    for parameter in children(list) {
        if matches!(
            parameter.kind(),
            "required_parameter" | "optional_parameter"
        ) {
            let variable = parameter
                .child_by_field_name("pattern")
                .or_else(|| parameter.child_by_field_name("name"))
                .map(|p| b.text(p).to_owned())
                .unwrap_or_default();
            let type_text = parameter
                .child_by_field_name("type")
                .map(|t| b.text(t).trim_start_matches(':').trim().to_owned())
                .unwrap_or_default();
            b.add_binding(scope, &variable, &type_text);
        }
    }
}

/// `node`'s decorator children.
fn decorator_children(node: SyntaxNode<'_>) -> Vec<SyntaxNode<'_>> {
    children(node)
        .into_iter()
        .filter(|c| c.kind() == "decorator")
        .collect()
}

/// The calls in decorators (`@Component({...})`, `@Log("debug")`), as `scope`'s: those
/// of the symbol they decorate.
fn decorators(decorators: &[SyntaxNode<'_>], scope: i32, context: &Context, b: &mut Builder<'_>) {
    for decorator in decorators {
        expressions(*decorator, scope, context, &[], b);
    }
}

fn class(node: SyntaxNode<'_>, scope: i32, context: &Context, b: &mut Builder<'_>) {
    let name = b.field_text(node, "name").to_owned();
    if name.is_empty() {
        return;
    }
    let qualified = join(&context.module, &name);
    let mut bases = Vec::new();
    let heritages: Vec<SyntaxNode<'_>> = children(node)
        .into_iter()
        .filter(|c| c.kind() == "class_heritage")
        .collect();
    for &heritage in &heritages {
        for clause in children(heritage) {
            match clause.kind() {
                // `extends mixin(Base)` names no class of its own.
                "extends_clause" => {
                    if let Some(value) = clause.child_by_field_name("value")
                        && matches!(value.kind(), "identifier" | "member_expression")
                    {
                        bases.push(b.text(value).to_owned());
                    }
                }
                "implements_clause" => {
                    bases.extend(children(clause).into_iter().map(|t| b.text(t).to_owned()))
                }
                _ => bases.push(b.text(clause).to_owned()),
            }
        }
    }
    let index = b.add_symbol(NewSymbol {
        kind: "class",
        qualified_name: qualified.clone(),
        signature: b.header(node, "body"),
        start_line: line(node),
        end_line: end_line(node),
        doc: doc(node, b),
        parent: scope,
        bases,
        name,
        ..Default::default()
    });
    // The class's decorators (`@Component({...}) export class App` puts them on the
    // export) and its `extends` expression are the class's calls.
    if let Some(export) = node.parent().filter(|p| p.kind() == "export_statement") {
        decorators(&decorator_children(export), index, context, b);
    }
    decorators(&decorator_children(node), index, context, b);
    for heritage in heritages {
        expressions(heritage, index, context, &[], b);
    }
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    // TypeScript puts a member's decorators before it in the body, JavaScript inside it;
    // either way they are the member's calls (the class's when the member is no symbol).
    let mut pending: Vec<SyntaxNode<'_>> = Vec::new();
    for member in children(body) {
        if member.kind() == "decorator" {
            pending.push(member);
            continue;
        }
        let member_index = class_member(member, index, &qualified, context, b);
        // TypeScript's: the member starts at its first decorator, and its signature shows
        // them, as JavaScript's (inside the member) and Python's do.
        if let (Some(member_index), Some(first)) = (member_index, pending.first()) {
            let end = b.facts.symbols[member_index as usize].end_line;
            b.set_span(member_index, line(*first), end);
            let written: Vec<&str> = pending.iter().map(|d| b.text(*d)).collect();
            let signature = format!(
                "{} {}",
                written.join(" "),
                b.facts.symbols[member_index as usize].signature
            );
            b.facts.symbols[member_index as usize].signature = signature;
        }
        pending.extend(decorator_children(member));
        decorators(&pending, member_index.unwrap_or(index), context, b);
        pending.clear();
    }
    decorators(&pending, index, context, b);
}

/// A class body's member: its symbol, if it is one.
fn class_member(
    member: SyntaxNode<'_>,
    index: i32,
    qualified: &str,
    context: &Context,
    b: &mut Builder<'_>,
) -> Option<i32> {
    match member.kind() {
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            let method = b.field_text(member, "name").to_owned();
            Some(function_like(
                member,
                &method,
                "method",
                index,
                qualified,
                context,
                &[],
                b,
            ))
        }
        "public_field_definition" | "field_definition" => {
            let field = member
                .child_by_field_name("name")
                .or_else(|| member.child_by_field_name("property"));
            let field_name = field.map(|f| b.text(f).to_owned()).unwrap_or_default();
            let value = member.child_by_field_name("value");
            match value {
                Some(v)
                    if matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function"
                    ) =>
                {
                    let method =
                        function_like(v, &field_name, "method", index, qualified, context, &[], b);
                    // The span is the whole field, including its name and comment.
                    b.set_span(method, line(member), end_line(member));
                    let text = doc(member, b);
                    b.set_doc(method, &text);
                    Some(method)
                }
                Some(v) if v.kind() == "new_expression" => {
                    let type_name = b.field_text(v, "constructor").to_owned();
                    b.add_binding(index, &field_name, &type_name);
                    None
                }
                _ => {
                    if let Some(t) = member.child_by_field_name("type") {
                        let type_text = b.text(t).trim_start_matches(':').trim().to_owned();
                        b.add_binding(index, &field_name, &type_text);
                    }
                    None
                }
            }
        }
        _ => None,
    }
}

fn declarator_node(
    declarator: SyntaxNode<'_>,
    declaration: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    let name = b.field_text(declarator, "name").to_owned();
    // `var proto = module.exports = function () {}` defines `proto`.
    let value = declarator
        .child_by_field_name("value")
        .map(|v| match assigned_value(v) {
            inner if is_function_value(inner) => inner,
            _ => v,
        });
    // A module-level binding that is neither a function nor an import is a variable
    // (`const` and UPPER_CASE: a constant).
    let is_import = value.is_some_and(|v| b.text(v).trim_start().starts_with("require("));
    if scope < 0
        && declarator
            .child_by_field_name("name")
            .is_some_and(|n| n.kind() == "identifier")
        && !value.is_some_and(is_function_value)
        && !is_import
        && !b
            .facts
            .symbols
            .iter()
            .any(|s| s.parent < 0 && s.name == name)
    {
        let constant = b.text(declaration).starts_with("const")
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        b.add_symbol(NewSymbol {
            kind: if constant { "constant" } else { "variable" },
            qualified_name: join(&context.module, &name),
            signature: super::truncate_chars(b.text(declarator).lines().next().unwrap_or(""), 160),
            start_line: line(declarator),
            end_line: end_line(declarator),
            doc: doc(declaration, b),
            parent: -1,
            name: name.clone(),
            ..Default::default()
        });
    }
    match value {
        Some(v) if is_function_value(v) && scope < 0 => {
            let index = function_like(v, &name, "function", scope, "", context, describe, b);
            let text = doc(declaration, b);
            b.set_span(index, line(declaration), end_line(declaration));
            b.set_doc(index, &text);
        }
        Some(v)
            if v.kind() == "object"
                && scope < 0
                && declarator
                    .child_by_field_name("name")
                    .is_some_and(|n| n.kind() == "identifier") =>
        {
            object_methods(v, &name, scope, context, describe, b);
            object_values(v, scope, context, describe, b);
        }
        Some(v) if v.kind() == "new_expression" => {
            let type_name = b.field_text(v, "constructor").to_owned();
            b.add_binding(scope, &name, &type_name);
            expressions(v, scope, context, describe, b);
        }
        Some(v) if v.kind() == "call_expression" && b.field_text(v, "function") == "require" => {
            let specifier = v
                .child_by_field_name("arguments")
                .and_then(|a| children(a).into_iter().next())
                .and_then(|s| string_value(b.text(s)));
            if let Some(specifier) = specifier {
                let module = resolve_module(&specifier, &b.facts.path.clone());
                b.add_import(&module, &name, &module, line(v));
            }
        }
        Some(v) => {
            if let Some(t) = declarator.child_by_field_name("type") {
                let type_text = b.text(t).trim_start_matches(':').trim().to_owned();
                b.add_binding(scope, &name, &type_text);
            }
            expressions(v, scope, context, describe, b);
        }
        None => {}
    }
}

/// Calls inside an expression; test cases and nested functions become symbols.
fn expressions(
    node: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) {
    match node.kind() {
        "call_expression" if call(node, scope, context, describe, b) => {
            return;
        }
        "new_expression" => {
            let constructor = b.field_text(node, "constructor").to_owned();
            let count = argument_count(node.child_by_field_name("arguments"));
            b.add_call(scope, &constructor, "", line(node), count);
        }
        "throw_statement" => {
            let message = children(node)
                .into_iter()
                .find(|c| matches!(c.kind(), "new_expression" | "call_expression"))
                .and_then(|e| e.child_by_field_name("arguments"))
                .and_then(|a| children(a).into_iter().next())
                .map(leading_operand)
                .filter(|a| matches!(a.kind(), "string" | "template_string"))
                .and_then(|s| string_value(b.text(s)));
            if let Some(message) = message {
                b.add_error(scope, &message, line(node));
            }
        }
        "statement_block" => {
            statements(node, scope, context, describe, b);
            return;
        }
        "lexical_declaration"
        | "variable_declaration"
        | "function_declaration"
        | "class_declaration" => {
            statement(node, scope, context, describe, b);
            return;
        }
        _ => {}
    }
    for child in children(node) {
        expressions(child, scope, context, describe, b);
    }
}

/// Records a call. Returns true when the call was a test or describe block whose body was
/// walked here.
fn call(
    node: SyntaxNode<'_>,
    scope: i32,
    context: &Context,
    describe: &[String],
    b: &mut Builder<'_>,
) -> bool {
    let Some(function) = node.child_by_field_name("function") else {
        return false;
    };
    let arguments = node.child_by_field_name("arguments");
    let count = argument_count(arguments);
    let function_text = b.text(function);
    let head = function_text.split('.').next().unwrap_or(function_text);
    if context.test_file && matches!(head, "describe" | "test" | "it") {
        let parts: Vec<SyntaxNode<'_>> = arguments.map(children).unwrap_or_default();
        let title = parts
            .first()
            .filter(|a| matches!(a.kind(), "string" | "template_string"))
            .and_then(|s| string_value(b.text(*s)));
        let callback = parts
            .iter()
            .find(|a| {
                matches!(
                    a.kind(),
                    "arrow_function" | "function_expression" | "function"
                )
            })
            .copied();
        if let (Some(title), Some(callback)) = (title, callback) {
            if head == "describe" {
                let mut inner = describe.to_vec();
                inner.push(title);
                if let Some(body) = callback.child_by_field_name("body") {
                    expressions(body, scope, context, &inner, b);
                }
            } else {
                let mut path = describe.to_vec();
                path.push(title.clone());
                let index = b.add_symbol(NewSymbol {
                    kind: "function",
                    qualified_name: join(&context.module, &path.join(" > ")),
                    signature: format!("{head}({:?})", title),
                    start_line: line(node),
                    end_line: end_line(node),
                    parent: scope,
                    test: true,
                    name: title,
                    ..Default::default()
                });
                if let Some(body) = callback.child_by_field_name("body") {
                    expressions(body, index, context, describe, b);
                }
            }
            return true;
        }
    }
    match function.kind() {
        "identifier"
            if !matches!(
                function_text,
                "require"
                    | "parseInt"
                    | "parseFloat"
                    | "String"
                    | "Number"
                    | "Boolean"
                    | "Array"
                    | "Object"
            ) =>
        {
            b.add_call(scope, function_text, "", line(node), count);
        }
        "member_expression" => {
            let property = b.field_text(function, "property");
            let object = function.child_by_field_name("object");
            let receiver = match object {
                Some(o) if o.kind() == "this" => "self".to_owned(),
                Some(o) if o.kind() == "super" => "super".to_owned(),
                Some(o)
                    if o.kind() == "member_expression" && b.field_text(o, "object") == "this" =>
                {
                    format!("this.{}", b.field_text(o, "property"))
                }
                Some(o) if o.kind() == "identifier" => b.text(o).to_owned(),
                _ => "?".to_owned(),
            };
            b.add_call(scope, property, &receiver, line(node), count);
            if scope >= 0
                && b.facts.symbols[scope as usize].test
                && let Some(arguments) = arguments
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
        _ => {}
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::{Language, caller_name, facts_of};
    use super::*;

    #[test]
    fn module_specifiers() {
        assert_eq!(resolve_module("./router", "src/app.ts"), "src/router");
        assert_eq!(
            resolve_module("../lib/util.js", "src/a/b.ts"),
            "src/lib/util"
        );
        assert_eq!(
            resolve_module("./components/index", "src/app.tsx"),
            "src/components"
        );
        assert_eq!(resolve_module("react", "src/app.tsx"), "react");
    }

    fn calls(language: Language, path: &str, source: &str) -> Vec<(String, String, u32)> {
        let facts = facts_of(language, path, source);
        facts
            .calls
            .iter()
            .map(|c| (caller_name(&facts, c.caller), c.name.clone(), c.line))
            .collect()
    }

    fn owned(expected: &[(&str, &str, u32)]) -> Vec<(String, String, u32)> {
        expected
            .iter()
            .map(|(c, n, l)| ((*c).to_owned(), (*n).to_owned(), *l))
            .collect()
    }

    /// Calls in decorators, a class's `extends` expression and default values are the
    /// calls of the symbol they belong to (a member's decorators, the member's).
    #[test]
    fn calls_in_decorators_bases_and_parameter_defaults_are_calls() {
        let source = r#"import { Component, Log, makeDefault, mixin, Base } from "./lib";

@Component({ selector: pick("app") })
export class App extends mixin(Base) {
  @Log("debug")
  run(size: number = makeDefault(), { depth = deep() } = {}) {
    return work(size, depth);
  }
}

function area(w = makeDefault(), h = other.size()) {
  return w * h;
}
"#;
        let expected = owned(&[
            ("App", "Component", 3),
            ("App", "pick", 3),
            ("App", "mixin", 4),
            // A member's decorators are read after the member.
            ("run", "makeDefault", 6),
            ("run", "deep", 6),
            ("run", "work", 7),
            ("run", "Log", 5),
            ("area", "makeDefault", 11),
            ("area", "size", 11),
        ]);
        assert_eq!(calls(Language::TypeScript, "src/app.ts", source), expected);
        let javascript = source.replace("size: number = ", "size = ").replace(
            "import { Component, Log, makeDefault, mixin, Base } from \"./lib\";",
            "",
        );
        let expected_js: Vec<(String, String, u32)> = expected.clone();
        assert_eq!(
            calls(Language::JavaScript, "src/app.js", &javascript),
            expected_js
        );
        // A decorated member starts at its first decorator, which its signature shows, in
        // TypeScript (decorators before the member) as in JavaScript (inside it).
        for (language, path, text) in [
            (Language::TypeScript, "src/app.ts", source),
            (Language::JavaScript, "src/app.js", javascript.as_str()),
        ] {
            let facts = facts_of(language, path, text);
            let run = facts.symbols.iter().find(|s| s.name == "run").expect("run");
            assert_eq!((run.start_line, run.end_line), (5, 8), "{path}");
            assert!(
                run.signature.starts_with("@Log(\"debug\")") && run.signature.contains("run("),
                "{path}: {}",
                run.signature
            );
        }
    }
}
