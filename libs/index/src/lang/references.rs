//! Names a symbol uses, for REFERENCES edges: one pass over the syntax tree after the
//! language's own extractor (walked together with string literals, [`super::walk`]), driven by a small table per grammar (which nodes are
//! identifiers, which are member accesses, where a name is declared). Each use is
//! attributed to the innermost symbol whose span holds its line; names declared inside
//! that symbol or an enclosing one (locals, parameters, loop and pattern variables) are
//! left out, so a local that shadows a package-level name never becomes a reference.
//! Resolution (`resolve::references`) keeps only uses that name a symbol of the graph
//! and are not already calls.

use rustc_hash::FxHashSet as HashSet;

use std::num::NonZeroU16 as FieldId;

use tree_sitter::Node as SyntaxNode;

use super::kinds::{KindTable, PerLanguage};
use super::walk::{At, Descend, Pass};
use super::{Builder, Language, line};
use crate::facts::ReferenceFact;

/// Most references kept per file (a generated table can hold tens of thousands).
const MAX_PER_FILE: usize = 20_000;

/// What one grammar's names look like.
struct Spec {
    /// Node kinds that name something.
    identifiers: &'static [&'static str],
    /// Member accesses: (kind, object field, property field). The property is not an
    /// identifier use of its own; the pair is (receiver, name).
    members: &'static [(&'static str, &'static str, &'static str)],
    /// (parent kind, field): an identifier in that field declares a name.
    declares: &'static [(&'static str, &'static str)],
    /// Parents all of whose identifier children declare names (parameter lists).
    declaring_parents: &'static [&'static str],
    /// Nodes a declaration reaches its names through (`a, b := ...`, `(x, y) = ...`).
    patterns: &'static [&'static str],
    /// Subtrees with no uses (imports, macros' token trees, labels).
    ignored: &'static [&'static str],
}

const GO: Spec = Spec {
    identifiers: &["identifier", "type_identifier"],
    members: &[
        ("selector_expression", "operand", "field"),
        ("qualified_type", "package", "name"),
    ],
    declares: &[
        ("parameter_declaration", "name"),
        ("variadic_parameter_declaration", "name"),
        ("short_var_declaration", "left"),
        ("range_clause", "left"),
        ("var_spec", "name"),
        ("const_spec", "name"),
        ("type_spec", "name"),
        ("type_alias", "name"),
        ("type_parameter_declaration", "name"),
        ("function_declaration", "name"),
        ("method_declaration", "name"),
        ("receive_statement", "left"),
        ("type_switch_statement", "alias"),
        ("labeled_statement", "label"),
    ],
    declaring_parents: &[],
    patterns: &["expression_list"],
    ignored: &["import_declaration", "package_clause", "field_declaration"],
};

const PYTHON: Spec = Spec {
    identifiers: &["identifier"],
    members: &[("attribute", "object", "attribute")],
    declares: &[
        ("function_definition", "name"),
        ("class_definition", "name"),
        ("default_parameter", "name"),
        ("typed_default_parameter", "name"),
        ("keyword_argument", "name"),
        ("assignment", "left"),
        ("augmented_assignment", "left"),
        ("for_statement", "left"),
        ("for_in_clause", "left"),
        ("named_expression", "name"),
        ("as_pattern", "alias"),
    ],
    declaring_parents: &[
        "parameters",
        "lambda_parameters",
        "typed_parameter",
        "global_statement",
        "nonlocal_statement",
        "as_pattern_target",
    ],
    patterns: &[
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "list_splat_pattern",
        "dictionary_splat_pattern",
    ],
    ignored: &[
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "dotted_name",
    ],
};

const JAVASCRIPT: Spec = Spec {
    identifiers: &[
        "identifier",
        "type_identifier",
        "shorthand_property_identifier",
    ],
    members: &[("member_expression", "object", "property")],
    declares: &[
        ("variable_declarator", "name"),
        ("function_declaration", "name"),
        ("function_expression", "name"),
        ("generator_function_declaration", "name"),
        ("class_declaration", "name"),
        ("class", "name"),
        ("required_parameter", "pattern"),
        ("optional_parameter", "pattern"),
        ("arrow_function", "parameter"),
        ("catch_clause", "parameter"),
        ("for_in_statement", "left"),
        ("assignment_pattern", "left"),
        ("type_parameter", "name"),
        ("interface_declaration", "name"),
        ("type_alias_declaration", "name"),
        ("enum_declaration", "name"),
        ("abstract_class_declaration", "name"),
    ],
    declaring_parents: &["formal_parameters"],
    patterns: &[
        "object_pattern",
        "array_pattern",
        "rest_pattern",
        "pair_pattern",
    ],
    ignored: &[
        "import_statement",
        "import_clause",
        "export_clause",
        "namespace_import",
        "statement_identifier",
    ],
};

const RUST: Spec = Spec {
    identifiers: &["identifier", "type_identifier"],
    members: &[
        ("scoped_identifier", "path", "name"),
        ("scoped_type_identifier", "path", "name"),
        ("field_expression", "value", "field"),
    ],
    declares: &[
        ("let_declaration", "pattern"),
        ("parameter", "pattern"),
        ("for_expression", "pattern"),
        ("let_condition", "pattern"),
        ("function_item", "name"),
        ("function_signature_item", "name"),
        ("struct_item", "name"),
        ("enum_item", "name"),
        ("union_item", "name"),
        ("trait_item", "name"),
        ("type_item", "name"),
        ("const_item", "name"),
        ("static_item", "name"),
        ("mod_item", "name"),
        ("enum_variant", "name"),
        ("field_declaration", "name"),
        ("constrained_type_parameter", "left"),
    ],
    declaring_parents: &["closure_parameters", "type_parameters", "match_pattern"],
    patterns: &[
        "tuple_pattern",
        "tuple_struct_pattern",
        "struct_pattern",
        "field_pattern",
        "ref_pattern",
        "mut_pattern",
        "captured_pattern",
        "slice_pattern",
        "or_pattern",
        "reference_pattern",
    ],
    ignored: &[
        "use_declaration",
        "token_tree",
        "attribute_item",
        "inner_attribute_item",
        "label",
        "lifetime",
    ],
};

fn spec(language: Language) -> Option<&'static Spec> {
    match language {
        Language::Go => Some(&GO),
        Language::Python => Some(&PYTHON),
        Language::JavaScript | Language::TypeScript | Language::Tsx => Some(&JAVASCRIPT),
        Language::Rust => Some(&RUST),
        Language::Java | Language::Tagged(_) => None,
    }
}

// What a node kind is to this pass, by kind id ([`Tables`]).
const IDENTIFIER: u16 = 1;
const MEMBER: u16 = 1 << 1;
const DECLARING_PARENT: u16 = 1 << 2;
const PATTERN: u16 = 1 << 3;
const IGNORED: u16 = 1 << 4;
/// `self`, `this`, a package name or a path: a receiver worth resolving by its kind.
const RECEIVER: u16 = 1 << 5;
const STRING: u16 = 1 << 6;
const TYPE: u16 = 1 << 7;
const LITERAL_ELEMENT: u16 = 1 << 8;
const KEYED_ELEMENT: u16 = 1 << 9;

/// A [`Spec`] resolved against one grammar: kinds and fields by id.
struct Tables {
    kinds: KindTable,
    /// By kind id: a member access's (object, property) fields.
    members: Vec<Option<(Option<u16>, Option<u16>)>>,
    /// By kind id: the fields in which an identifier child declares a name.
    declares: Vec<Vec<FieldId>>,
}

impl Tables {
    fn new(grammar: &tree_sitter::Language, spec: &Spec) -> Tables {
        let member_kinds: Vec<&str> = spec.members.iter().map(|(kind, _, _)| *kind).collect();
        let kinds = KindTable::new(
            grammar,
            &[
                (IDENTIFIER, spec.identifiers),
                (MEMBER, &member_kinds),
                (DECLARING_PARENT, spec.declaring_parents),
                (PATTERN, spec.patterns),
                (IGNORED, spec.ignored),
                (
                    RECEIVER,
                    &[
                        "self",
                        "this",
                        "package_identifier",
                        "scoped_identifier",
                        "crate",
                        "super",
                    ],
                ),
                (STRING, &["string"]),
                (TYPE, &["type"]),
                (LITERAL_ELEMENT, &["literal_element"]),
                (KEYED_ELEMENT, &["keyed_element"]),
            ],
        );
        let field = |name: &str| grammar.field_id_for_name(name);
        let ids = 0..grammar.node_kind_count() as u16;
        let members = ids
            .clone()
            .map(|id| {
                let name = grammar.node_kind_for_id(id)?;
                let (_, object, property) = spec.members.iter().find(|(k, _, _)| *k == name)?;
                Some((field(object).map(u16::from), field(property).map(u16::from)))
            })
            .collect();
        let declares = ids
            .map(|id| match grammar.node_kind_for_id(id) {
                Some(name) => spec
                    .declares
                    .iter()
                    .filter(|(kind, _)| *kind == name)
                    .filter_map(|(_, f)| field(f))
                    .collect(),
                None => Vec::new(),
            })
            .collect();
        Tables {
            kinds,
            members,
            declares,
        }
    }

    fn member(&self, node: SyntaxNode<'_>) -> Option<(Option<u16>, Option<u16>)> {
        self.members.get(node.kind_id() as usize).copied().flatten()
    }
}

/// Receivers worth resolving: a name, `self`/`this`, or a short dotted path of names.
fn is_simple_receiver(node: SyntaxNode<'_>, tables: &Tables) -> bool {
    let flags = tables.kinds.flags(node);
    flags & (RECEIVER | IDENTIFIER) != 0
        || (flags & MEMBER != 0
            && node.end_byte() - node.start_byte() <= 80
            && node.child(0).is_some_and(|c| is_simple_receiver(c, tables)))
}

/// Whether identifier `node` (whose parent is `parent`) declares a name (climbing through
/// pattern nodes). The parent comes from the walk: `Node::parent` searches down from the
/// root, which costs more than the rest of the pass on a long module.
fn declares(node: SyntaxNode<'_>, parent: Option<SyntaxNode<'_>>, tables: &Tables) -> bool {
    let mut child = node;
    let mut parent = parent;
    while let Some(p) = parent {
        let flags = tables.kinds.flags(p);
        if flags & PATTERN != 0 {
            child = p;
            parent = p.parent();
            continue;
        }
        if flags & DECLARING_PARENT != 0 {
            return true;
        }
        for field in tables
            .declares
            .get(p.kind_id() as usize)
            .into_iter()
            .flatten()
        {
            let mut cursor = p.walk();
            if p.children_by_field_id(*field, &mut cursor)
                .any(|c| c.id() == child.id())
            {
                return true;
            }
        }
        return false;
    }
    false
}

/// Go composite literal keys (`T{Name: x}`) name fields, not variables.
fn is_field_key(parent: Option<SyntaxNode<'_>>, tables: &Tables) -> bool {
    let Some(element) = parent.filter(|p| tables.kinds.is(*p, LITERAL_ELEMENT)) else {
        return false;
    };
    element
        .parent()
        .filter(|k| tables.kinds.is(*k, KEYED_ELEMENT))
        .and_then(|k| k.named_child(0))
        .is_some_and(|first| first.id() == element.id())
}

/// The references pass ([`super::walk`]): the names each symbol uses, kept until
/// [`References::finish`] turns them into facts.
pub struct References<'a, 'b> {
    language: Language,
    tables: &'static Tables,
    b: &'b Builder<'a>,
    innermost: &'b [i32],
    declared: HashSet<(i32, &'a str)>,
    /// Borrowed from the source: a fact is allocated only for a use that is kept.
    uses: Vec<(i32, &'a str, &'a str, u32)>,
}

impl<'a, 'b> References<'a, 'b> {
    /// The pass for a file of `language` (None when the language has no table or the
    /// file no symbol); `innermost` is [`Builder::innermost_by_line`].
    pub fn new(language: Language, innermost: &'b [i32], b: &'b Builder<'a>) -> Option<Self> {
        static TABLES: PerLanguage<Tables> = PerLanguage::new();
        let spec = spec(language)?;
        if b.facts.symbols.is_empty() {
            return None;
        }
        Some(Self {
            language,
            tables: TABLES.get(language, |grammar| Tables::new(grammar, spec)),
            b,
            innermost,
            declared: HashSet::default(),
            uses: Vec::new(),
        })
    }

    fn at(&self, line: u32) -> i32 {
        self.innermost.get(line as usize).copied().unwrap_or(-1)
    }

    /// The file's references, to append to `b.facts.references`.
    pub fn finish(self) -> Vec<ReferenceFact> {
        let symbols = &self.b.facts.symbols;
        let declared = &self.declared;
        let is_local = |from: i32, name: &str| {
            let mut scope = from;
            while scope >= 0 {
                if declared.contains(&(scope, name)) {
                    return true;
                }
                scope = symbols[scope as usize].parent;
            }
            false
        };
        let mut seen: HashSet<(i32, &str, &str)> = HashSet::default();
        let mut out = Vec::new();
        for &(from, receiver, name, line) in &self.uses {
            if out.len() >= MAX_PER_FILE {
                break;
            }
            if !seen.insert((from, receiver, name)) {
                continue;
            }
            // A plain local is not a reference; a member of a local may be (its type can
            // be known), and resolution keeps only what it resolves through that type.
            if receiver.is_empty() && is_local(from, name) {
                continue;
            }
            if symbols[from as usize].name == name && receiver.is_empty() {
                continue; // its own name (a definition line, recursion is a call)
            }
            out.push(ReferenceFact {
                from,
                name: name.to_owned(),
                line,
                receiver: receiver.to_owned(),
            });
        }
        out
    }
}

impl<'t> Pass<'t> for References<'_, '_> {
    fn enter(&mut self, node: SyntaxNode<'t>, at: At<'t>) -> Descend {
        let tables = self.tables;
        let b = self.b;
        let parent = at.parent;
        let flags = tables.kinds.flags(node);
        if flags & IGNORED != 0 {
            return Descend::Skip;
        }
        if let Some((object, property)) = tables.member(node) {
            let object = object.and_then(|f| node.child_by_field_id(f));
            let property = property.and_then(|f| node.child_by_field_id(f));
            if let (Some(o), Some(p)) = (object, property)
                && is_simple_receiver(o, tables)
            {
                let from = self.at(line(node));
                if from >= 0 {
                    self.uses.push((from, b.text(o), b.text(p), line(node)));
                }
            }
            // The object and the other children (arguments of a generic path, ...),
            // in order, but not the property.
            return match property {
                Some(p) => Descend::AllBut(p.id()),
                None => Descend::All,
            };
        }
        // Python forward references: `param: "Parameter | None"` names `Parameter`.
        if self.language == Language::Python
            && flags & STRING != 0
            && parent.is_some_and(|p| tables.kinds.is(p, TYPE))
        {
            let from = self.at(line(node));
            if from >= 0 {
                let text = b.text(node).trim_matches(|c| c == '"' || c == '\'');
                for token in text
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                    .filter(|t| t.starts_with(|c: char| c.is_alphabetic() || c == '_'))
                {
                    let (receiver, name) = token.rsplit_once('.').unwrap_or(("", token));
                    if !name.is_empty() && name != "None" {
                        self.uses.push((from, receiver, name, line(node)));
                    }
                }
            }
            return Descend::Skip;
        }
        if flags & IDENTIFIER != 0 {
            let from = self.at(line(node));
            if from >= 0 {
                let text = b.text(node);
                if declares(node, parent, tables) {
                    self.declared.insert((from, text));
                } else if !(self.language == Language::Go && is_field_key(parent, tables)) {
                    self.uses.push((from, "", text, line(node)));
                }
            }
            return Descend::Skip;
        }
        Descend::All
    }
}
