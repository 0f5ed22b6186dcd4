//! String literals, for exact lookup of messages wherever they are written: every literal
//! of [`MIN_CHARS`] or more characters, split at its interpolations (`f"bad {x}"`,
//! `` `bad ${x}` ``) and at format placeholders (`{}`, `{name}`, `%s`, `%v`, `%d`), kept
//! with the innermost symbol around it (or, at top level, the statement holding it) and
//! the line it is on. Messages the language extractor already recorded as raised are not
//! repeated. Docstrings, imports, struct tags and attributes are not literals of
//! interest; every part goes through secret redaction like any other indexed text.

use std::sync::OnceLock;

use regex::Regex;
use tree_sitter::Node as SyntaxNode;

use super::kinds::{KindTable, PerLanguage};
use super::walk::{At, Descend, Pass};
use super::{Builder, Language, MESSAGE_CHARS, line, string_value, truncate_chars};
use crate::facts::ErrorFact;
use crate::redact;

/// Shortest literal part kept, in characters.
pub const MIN_CHARS: usize = 8;
/// Most literal parts kept per file (a data table can hold thousands).
const MAX_PER_FILE: usize = 2_000;

fn literal_kinds(language: Language) -> &'static [&'static str] {
    match language {
        Language::Go => &["interpreted_string_literal", "raw_string_literal"],
        Language::Python => &["string"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            &["string", "template_string"]
        }
        Language::Rust => &["string_literal", "raw_string_literal"],
        Language::Java => &["string_literal", "text_block"],
        Language::Tagged(tagged) => tagged.spec().string_kinds,
    }
}

/// Subtrees whose strings are not messages: imports, struct tags, attributes.
const IGNORED: &[&str] = &[
    "import_declaration",
    "import_statement",
    "import_from_statement",
    "attribute_item",
    "inner_attribute_item",
    "use_declaration",
    "decorator",
    "annotation",
    "marker_annotation",
    // The languages read through query files: includes, usings and imports.
    "preproc_include",
    "import",
    "using_directive",
    "namespace_use_declaration",
    "import_or_export",
];

/// Interpolation children of a literal node.
const INTERPOLATIONS: &[&str] = &["interpolation", "template_substitution"];

// The kinds above, by kind id of each grammar.
const LITERAL: u16 = 1;
const IGNORED_KIND: u16 = 1 << 1;
const INTERPOLATION: u16 = 1 << 2;

fn placeholders() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\{[^{}\s]{0,40}\}|%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]")
            .expect("valid placeholder pattern")
    })
}

/// A Python docstring: a string that is the first statement of a module, class or
/// function body.
fn is_docstring(parent: Option<SyntaxNode<'_>>) -> bool {
    let Some(statement) = parent.filter(|p| p.kind() == "expression_statement") else {
        return false;
    };
    let Some(body) = statement.parent() else {
        return false;
    };
    matches!(body.kind(), "block" | "module")
        && body
            .named_child(0)
            .is_some_and(|first| first.id() == statement.id())
}

/// A string that is a statement by itself: a docstring anywhere, a `'use strict'`
/// directive.
fn is_bare_statement(parent: Option<SyntaxNode<'_>>) -> bool {
    parent.is_some_and(|p| p.kind() == "expression_statement" && p.named_child_count() == 1)
}

/// A `require('x')` / `import('x')` specifier.
fn is_module_specifier(
    language: Language,
    node: SyntaxNode<'_>,
    parent: Option<SyntaxNode<'_>>,
    b: &Builder<'_>,
) -> bool {
    // In Kotlin or Scala, `require(cond, "message")` checks an argument.
    let javascript = matches!(
        language,
        Language::JavaScript | Language::TypeScript | Language::Tsx
    );
    javascript
        && parent
            .filter(|p| p.kind() == "arguments")
        .and_then(|a| a.parent())
        .and_then(|call| call.child_by_field_name("function"))
            .is_some_and(|f| matches!(b.text(f), "require" | "import"))
        // Go struct tags, `export ... from 'x'`.
        || parent.is_some_and(|p| {
            matches!(p.kind(), "field_declaration" | "export_statement")
                && ["tag", "source"]
                    .iter()
                    .any(|f| p.child_by_field_name(f).is_some_and(|t| t.id() == node.id()))
        })
}

/// The literal's text with interpolations cut out, split into parts.
fn parts(node: SyntaxNode<'_>, kinds: &KindTable, b: &Builder<'_>) -> Vec<String> {
    let start = node.start_byte();
    let mut text = String::new();
    let mut at = start;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if kinds.is(child, INTERPOLATION) {
            text.push_str(b.source.get(at..child.start_byte()).unwrap_or(""));
            text.push('\u{0}');
            at = child.end_byte();
        }
    }
    text.push_str(b.source.get(at..node.end_byte()).unwrap_or(""));
    let Some(inner) = string_value(&text) else {
        return Vec::new();
    };
    let marked = placeholders().replace_all(&inner, "\u{0}");
    marked
        .split('\u{0}')
        // Whitespace and the punctuation that joins a part to an interpolation.
        .map(|p| {
            p.trim_matches(|c: char| {
                c.is_whitespace()
                    || matches!(c, ':' | ';' | ',' | '(' | ')' | '\'' | '"' | '=' | '.')
            })
        })
        .filter(|p| p.chars().count() >= MIN_CHARS && p.chars().any(char::is_alphabetic))
        .map(str::to_owned)
        .collect()
}

/// The string literals pass ([`super::walk`]): the literal parts found, kept until
/// [`attach`] adds them to the file's facts.
pub struct Strings<'a, 'b> {
    language: Language,
    kinds: &'static KindTable,
    b: &'b Builder<'a>,
    innermost: &'b [i32],
    root_id: usize,
    /// Raised messages by line: a part they already hold is not repeated.
    raised: std::collections::HashMap<u32, Vec<String>>,
    out: Vec<ErrorFact>,
}

impl<'a, 'b> Strings<'a, 'b> {
    /// The pass for a file of `language` whose tree's root is `root`; `innermost` is
    /// [`Builder::innermost_by_line`].
    pub fn new(
        language: Language,
        root: SyntaxNode<'_>,
        innermost: &'b [i32],
        b: &'b Builder<'a>,
    ) -> Self {
        static TABLES: PerLanguage<KindTable> = PerLanguage::new();
        let kinds = TABLES.get(language, |grammar| {
            KindTable::new(
                grammar,
                &[
                    (LITERAL, literal_kinds(language)),
                    (IGNORED_KIND, IGNORED),
                    (INTERPOLATION, INTERPOLATIONS),
                ],
            )
        });
        let mut raised: std::collections::HashMap<u32, Vec<String>> = Default::default();
        for error in &b.facts.errors {
            raised
                .entry(error.line)
                .or_default()
                .push(error.message.clone());
        }
        Self {
            language,
            kinds,
            b,
            innermost,
            root_id: root.id(),
            raised,
            out: Vec::new(),
        }
    }

    /// The literal parts found, for [`attach`].
    pub fn finish(self) -> Vec<ErrorFact> {
        self.out
    }
}

impl<'t> Pass<'t> for Strings<'_, '_> {
    fn enter(&mut self, node: SyntaxNode<'t>, at: At<'t>) -> Descend {
        if self.out.len() >= MAX_PER_FILE {
            return Descend::Skip;
        }
        let (kinds, b, parent, top) = (self.kinds, self.b, at.parent, at.top);
        let flags = kinds.flags(node);
        if flags & IGNORED_KIND != 0 {
            return Descend::Skip;
        }
        if flags & LITERAL == 0 {
            return Descend::All;
        }
        let parts = parts(node, kinds, b);
        if parts.is_empty()
            || is_docstring(parent)
            || is_bare_statement(parent)
            || is_module_specifier(self.language, node, parent, b)
        {
            return Descend::Skip;
        }
        let line = line(node);
        let enclosing = self.innermost.get(line as usize).copied().unwrap_or(-1);
        // What the redaction leaves of the literal in its context (`password="..."`
        // masks the value): a part it masks is a secret and is not indexed.
        let in_context = redact::text(
            b.source
                .get(b.line_start(line)..node.end_byte())
                .unwrap_or(""),
        )
        .into_owned();
        let context = b.line_text(line);
        for part in parts {
            if !in_context.contains(part.as_str()) {
                continue;
            }
            let message = redact::text(&truncate_chars(&part, MESSAGE_CHARS)).into_owned();
            if self
                .raised
                .get(&line)
                .is_some_and(|messages| messages.iter().any(|m| m.contains(message.as_str())))
            {
                continue;
            }
            let statement = if enclosing < 0 && top.id() != self.root_id {
                b.line_text(super::line(top))
            } else {
                String::new()
            };
            self.out.push(ErrorFact {
                enclosing,
                message,
                line,
                raised: false,
                context: context.clone(),
                statement,
            });
        }
        Descend::Skip
    }
}

/// Appends the literal parts `out` ([`Strings::finish`]) to `b.facts.errors`, and names
/// the symbol or top-level statement around the messages the extractor found;
/// `innermost` is [`Builder::innermost_by_line`].
pub fn attach(
    mut out: Vec<ErrorFact>,
    root: SyntaxNode<'_>,
    innermost: &[i32],
    b: &mut Builder<'_>,
) {
    out.dedup_by(|a, b| a.line == b.line && a.message == b.message);
    // Messages the extractor found outside a function (`var ErrX = errors.New(...)`)
    // belong to the symbol around them now that package variables are symbols.
    for error in b.facts.errors.iter_mut().filter(|e| e.enclosing < 0) {
        error.enclosing = innermost.get(error.line as usize).copied().unwrap_or(-1);
    }
    // Raised messages outside any symbol name their top-level statement too.
    let tops: Vec<(u32, u32)> = {
        let mut cursor = root.walk();
        root.named_children(&mut cursor)
            .map(|c| (line(c), super::end_line(c)))
            .collect()
    };
    let statements: Vec<(usize, String)> = b
        .facts
        .errors
        .iter()
        .enumerate()
        .filter(|(_, e)| e.enclosing < 0 && e.statement.is_empty())
        .filter_map(|(i, e)| {
            let (start, _) = tops
                .iter()
                .find(|(s, end)| *s <= e.line && e.line <= *end)?;
            Some((i, b.line_text(*start)))
        })
        .collect();
    for (i, statement) in statements {
        b.facts.errors[i].statement = statement;
    }
    b.facts.errors.extend(out);
}
