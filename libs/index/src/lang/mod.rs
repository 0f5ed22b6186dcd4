//! Language extractors: tree-sitter syntax trees to [`FileFacts`]. Each language module
//! walks its grammar's nodes; the helpers here keep them short and consistent.

pub mod doc;
pub mod go;
pub mod java;
pub mod javascript;
pub mod kinds;
pub mod languages;
pub mod python;
pub mod references;
pub mod rust;
pub mod strings;
pub mod tags;
pub mod walk;

use codectx_graph::model::content_hash;
use tree_sitter::Node as SyntaxNode;

use crate::facts::{
    BindingFact, CallFact, ErrorFact, FileFacts, ImportFact, ReferenceFact, SymbolFact,
};
use crate::layout::Layout;
use crate::redact;
pub use languages::Tagged;

/// Bump when a change to extraction every language shares (doc comments, strings,
/// references, redaction, the facts written for a skipped file) alters the facts of an
/// unchanged file.
const COMMON_EXTRACTOR: u32 = 13;

/// Bump the deep language's number when its extractor module changes what an unchanged
/// file yields. Languages read through query files are versioned by their query text
/// and [`tags::EXTRACTOR`], so editing a `.scm` file refreshes that language alone.
fn deep_extractor(language: &str) -> Option<u32> {
    Some(match language {
        "go" => 1,
        "python" => 2,
        "rust" => 1,
        "javascript" | "typescript" => 2,
        "java" => 1,
        "markdown" => 1,
        "manifest" => 1,
        _ => return None,
    })
}

/// The extractor version of a language (a [`FileFacts::language`] value; empty for a
/// file no extractor read): stored with each file's facts, compared on the next run.
pub fn extractor_version(language: &str) -> &'static str {
    static VERSIONS: std::sync::LazyLock<std::collections::HashMap<String, String>> =
        std::sync::LazyLock::new(|| {
            let mut versions = std::collections::HashMap::new();
            for name in [
                "",
                "go",
                "python",
                "rust",
                "javascript",
                "typescript",
                "java",
                "markdown",
                "manifest",
            ] {
                versions.insert(
                    name.to_owned(),
                    format!("{COMMON_EXTRACTOR}.{}", deep_extractor(name).unwrap_or(0)),
                );
            }
            for tagged in Tagged::ALL {
                let spec = tagged.spec();
                let query = content_hash(spec.query.as_bytes());
                versions.insert(
                    spec.name.to_owned(),
                    format!("{COMMON_EXTRACTOR}.t{}.{}", tags::EXTRACTOR, &query[..12]),
                );
            }
            versions
        });
    VERSIONS
        .get(language)
        .or_else(|| VERSIONS.get(""))
        .map(String::as_str)
        .unwrap_or("")
}

/// The languages the indexer parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Go,
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    /// Read through its query file (`tags.rs`, `languages.rs`).
    Tagged(Tagged),
}

impl Language {
    pub fn from_path(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.').map(|(_, e)| e)?;
        Some(match extension {
            "go" => Language::Go,
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "java" => Language::Java,
            other => Language::Tagged(Tagged::from_extension(other)?),
        })
    }

    /// [`from_path`](Self::from_path), with a `.h` header read as C++ when its text says
    /// so (classes, namespaces, templates, access specifiers): C and C++ share the
    /// extension.
    pub fn for_source(path: &str, text: &str) -> Option<Language> {
        let Some(language) = Language::from_path(path) else {
            // A script without an extension says what it is on its first line, or in an
            // editor's mode line (first or last lines).
            return if crate::layout::file_name(path).contains('.') {
                None
            } else {
                let mut start = text.len().saturating_sub(256);
                while !text.is_char_boundary(start) {
                    start += 1;
                }
                let tail = &text[start..];
                Language::from_shebang(text.lines().next().unwrap_or(""))
                    .or_else(|| Language::from_mode_line(text, tail))
            };
        };
        if language == Language::Tagged(Tagged::C) && path.ends_with(".h") && looks_like_cpp(text) {
            return Some(Language::Tagged(Tagged::Cpp));
        }
        Some(language)
    }

    /// The language a `#!` line names (`#!/usr/bin/env bash`, `#!/usr/bin/python3`).
    pub fn from_shebang(first_line: &str) -> Option<Language> {
        let command = first_line.strip_prefix("#!")?.trim();
        let mut words = command.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            program = words.find(|w| !w.starts_with('-'))?;
        }
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match program {
            "bash" | "sh" | "zsh" | "ksh" | "dash" => Language::Tagged(Tagged::Bash),
            "python" => Language::Python,
            "node" => Language::JavaScript,
            "ruby" => Language::Tagged(Tagged::Ruby),
            "php" => Language::Tagged(Tagged::Php),
            "lua" => Language::Tagged(Tagged::Lua),
            "elixir" => Language::Tagged(Tagged::Elixir),
            _ => return None,
        })
    }

    /// The language an editor mode line names: Emacs `-*- shell-script -*-` on the first
    /// lines, vim or ex `filetype=sh` / `ft=bash` on the last ones. Shell only: that is
    /// where files without an extension or `#!` line are common (sourced completion and
    /// library scripts).
    pub fn from_mode_line(head: &str, tail: &str) -> Option<Language> {
        let emacs = head.lines().take(2).any(|line| {
            line.split("-*-")
                .nth(1)
                .is_some_and(|mode| matches!(mode.trim(), "shell-script" | "sh" | "bash"))
        });
        let vim = tail.lines().rev().take(3).any(|line| {
            ["filetype=", "ft="].iter().any(|key| {
                line.split(key).nth(1).is_some_and(|value| {
                    matches!(
                        value.split(|c: char| !c.is_alphanumeric()).next(),
                        Some("sh" | "bash" | "zsh")
                    )
                })
            })
        });
        (emacs || vim).then_some(Language::Tagged(Tagged::Bash))
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Go => "go",
            Language::Python => "python",
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript | Language::Tsx => "typescript",
            Language::Java => "java",
            Language::Tagged(tagged) => tagged.spec().name,
        }
    }

    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::Tagged(tagged) => (tagged.spec().grammar)(),
        }
    }
}

/// Whether a header's text is C++: a line that declares a class, namespace or template,
/// or an access specifier.
fn looks_like_cpp(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("class ")
            || line.starts_with("namespace ")
            || line.starts_with("template <")
            || line.starts_with("template<")
            || line.starts_with("public:")
            || line.starts_with("private:")
            || line.starts_with("protected:")
    })
}

/// Extracts facts from one parsed file.
pub fn extract(
    language: Language,
    tree: &tree_sitter::Tree,
    source: &str,
    facts: &mut FileFacts,
    layout: &Layout,
) {
    let mut builder = Builder::new(source, facts);
    match language {
        Language::Go => go::extract(tree.root_node(), &mut builder, layout),
        Language::Python => python::extract(tree.root_node(), &mut builder, layout),
        Language::Rust => rust::extract(tree.root_node(), &mut builder, layout),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            javascript::extract(tree.root_node(), &mut builder, layout)
        }
        Language::Java => java::extract(tree.root_node(), &mut builder, layout),
        Language::Tagged(tagged) => tags::extract(
            tagged.spec(),
            tagged.query(),
            tree.root_node(),
            &mut builder,
            layout,
        ),
    }
    let innermost = builder.innermost_by_line();
    // References and string literals in one walk of the tree.
    let root = tree.root_node();
    let (references, strings) = {
        let mut references = references::References::new(language, &innermost, &builder);
        let mut strings = strings::Strings::new(language, root, &innermost, &builder);
        match references.as_mut() {
            Some(references) => walk::walk(root, &mut [references, &mut strings]),
            None => walk::walk(root, &mut [&mut strings]),
        }
        (references.map(|r| r.finish()), strings.finish())
    };
    builder
        .facts
        .references
        .extend(references.into_iter().flatten());
    strings::attach(strings, root, &innermost, &mut builder);
}

/// Longest signature kept, in characters.
const SIGNATURE_CHARS: usize = 300;
/// Longest summary kept, in characters.
const SUMMARY_CHARS: usize = 200;
/// Longest error message kept, in characters.
const MESSAGE_CHARS: usize = 300;

/// Accumulates facts for one file while a language module walks it.
pub struct Builder<'a> {
    pub source: &'a str,
    pub facts: &'a mut FileFacts,
    /// Byte offset of the start of every line, so spans are sliced without rescanning.
    line_starts: Vec<usize>,
}

/// A symbol to add.
#[derive(Debug, Default)]
pub struct NewSymbol {
    pub kind: &'static str,
    pub name: String,
    pub qualified_name: String,
    pub signature: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The documentation text (comment markers stripped, or a docstring): the summary
    /// and the doc are read from it (`doc.rs`).
    pub doc: String,
    pub parent: i32,
    pub owner_type: String,
    pub bases: Vec<String>,
    pub test: bool,
    pub required_methods: Vec<String>,
    pub embedded: Vec<String>,
    pub discriminator: String,
}

impl<'a> Builder<'a> {
    pub fn new(source: &'a str, facts: &'a mut FileFacts) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            source
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self {
            source,
            facts,
            line_starts,
        }
    }

    /// Content hash of lines `start..=end`, identical to `span_fingerprint` on the file.
    fn fingerprint(&self, start: u32, end: u32) -> String {
        if start == 0 || end < start {
            return String::new();
        }
        let Some(&begin) = self.line_starts.get(start as usize - 1) else {
            return String::new();
        };
        let finish = self
            .line_starts
            .get(end as usize)
            .copied()
            .unwrap_or(self.source.len());
        if begin >= finish
            && !(begin == finish && finish == self.source.len() && begin < self.source.len())
        {
            return String::new();
        }
        content_hash(&self.source.as_bytes()[begin..finish])
    }

    pub fn text(&self, node: SyntaxNode<'_>) -> &'a str {
        node.utf8_text(self.source.as_bytes()).unwrap_or("")
    }

    pub fn field_text(&self, node: SyntaxNode<'_>, field: &str) -> &'a str {
        node.child_by_field_name(field)
            .map(|n| self.text(n))
            .unwrap_or("")
    }

    pub fn add_symbol(&mut self, symbol: NewSymbol) -> i32 {
        let fingerprint = self.fingerprint(symbol.start_line, symbol.end_line);
        self.facts.symbols.push(SymbolFact {
            kind: symbol.kind.to_owned(),
            name: symbol.name,
            qualified_name: symbol.qualified_name,
            signature: redact::text(&truncate_chars(
                &collapse_whitespace(&symbol.signature),
                SIGNATURE_CHARS,
            ))
            .into_owned(),
            start_line: symbol.start_line,
            end_line: symbol.end_line,
            summary: redact::summary(&truncate_chars(
                &doc::first_line(&symbol.doc),
                SUMMARY_CHARS,
            )),
            doc: redact::summary(&doc::prose(&symbol.doc)),
            fingerprint,
            parent: symbol.parent,
            owner_type: symbol.owner_type,
            bases: symbol.bases,
            test: symbol.test,
            required_methods: symbol.required_methods,
            discriminator: symbol.discriminator,
            embedded: symbol.embedded,
        });
        (self.facts.symbols.len() - 1) as i32
    }

    /// Sets a symbol's summary and doc from its documentation text (for symbols whose
    /// comment sits above a statement found after the symbol was added).
    pub fn set_doc(&mut self, index: i32, text: &str) {
        let symbol = &mut self.facts.symbols[index as usize];
        symbol.summary = redact::summary(&truncate_chars(&doc::first_line(text), SUMMARY_CHARS));
        symbol.doc = redact::summary(&doc::prose(text));
    }

    /// Moves a symbol's span (e.g. to cover `const f = () => ..`) and rehashes it.
    pub fn set_span(&mut self, index: i32, start_line: u32, end_line: u32) {
        let fingerprint = self.fingerprint(start_line, end_line);
        let symbol = &mut self.facts.symbols[index as usize];
        symbol.start_line = start_line;
        symbol.end_line = end_line;
        symbol.fingerprint = fingerprint;
    }

    pub fn add_call(&mut self, caller: i32, name: &str, receiver: &str, line: u32, arguments: u32) {
        if name.is_empty() {
            return;
        }
        self.facts.calls.push(CallFact {
            caller,
            name: name.to_owned(),
            receiver: receiver.to_owned(),
            line,
            arguments,
        });
    }

    pub fn add_binding(&mut self, scope: i32, variable: &str, type_name: &str) {
        let type_name = clean_type(type_name);
        if variable.is_empty() || type_name.is_empty() {
            return;
        }
        self.facts.bindings.push(BindingFact {
            scope,
            variable: variable.to_owned(),
            type_name,
        });
    }

    pub fn add_import(&mut self, target: &str, alias: &str, module: &str, line: u32) {
        if target.is_empty() || alias.is_empty() {
            return;
        }
        self.facts.imports.push(ImportFact {
            target: target.to_owned(),
            alias: alias.to_owned(),
            line,
            module: module.to_owned(),
            exported_as: String::new(),
        });
    }

    pub fn add_reference(&mut self, from: i32, name: &str, line: u32) {
        if from >= 0 && !name.is_empty() {
            self.facts.references.push(ReferenceFact {
                from,
                name: name.to_owned(),
                line,
                receiver: String::new(),
            });
        }
    }

    pub fn add_error(&mut self, enclosing: i32, message: &str, line: u32) {
        let message = message.trim();
        if message.is_empty() {
            return;
        }
        let context = self.line_text(line);
        self.facts.errors.push(ErrorFact {
            enclosing,
            message: redact::text(&truncate_chars(message, MESSAGE_CHARS)).into_owned(),
            line,
            raised: true,
            context,
            statement: String::new(),
        });
    }

    /// A declaration with its body, comments and attributes dropped (whitespace is
    /// collapsed when stored): a struct's signature shows its fields.
    pub fn declaration(&self, node: SyntaxNode<'_>) -> String {
        self.text(node)
            .lines()
            .map(|l| {
                let l = l.trim();
                if l.starts_with("#[") || l.starts_with("//") {
                    ""
                } else {
                    l.split(" //").next().unwrap_or(l)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Byte offset where line `line` (1-based) starts.
    pub fn line_start(&self, line: u32) -> usize {
        self.line_starts
            .get(line.saturating_sub(1) as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Line `line` (1-based) of the source, trimmed, at most 160 characters, redacted.
    pub fn line_text(&self, line: u32) -> String {
        let index = line.saturating_sub(1) as usize;
        let Some(&start) = self.line_starts.get(index) else {
            return String::new();
        };
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.source.len());
        let text = self.source.get(start..end).unwrap_or("").trim();
        redact::text(&truncate_chars(text, 160)).into_owned()
    }

    /// The innermost symbol holding each line (index by 1-based line; -1: none): wider
    /// spans first, narrower ones overwrite.
    pub fn innermost_by_line(&self) -> Vec<i32> {
        let symbols = &self.facts.symbols;
        let lines =
            self.facts
                .lines
                .max(symbols.iter().map(|s| s.end_line).max().unwrap_or(0)) as usize;
        let mut innermost: Vec<i32> = vec![-1; lines + 2];
        let mut order: Vec<usize> = (0..symbols.len()).collect();
        order.sort_by_key(|&i| {
            std::cmp::Reverse(symbols[i].end_line.saturating_sub(symbols[i].start_line))
        });
        for i in order {
            let s = &symbols[i];
            for slot in innermost
                .iter_mut()
                .take((s.end_line as usize + 1).min(lines + 2))
                .skip(s.start_line as usize)
            {
                *slot = i as i32;
            }
        }
        innermost
    }

    /// Text from the node's start to the start of its `body` field (the declaration
    /// header), or the whole first line when there is no body.
    pub fn header(&self, node: SyntaxNode<'_>, body_field: &str) -> String {
        let end = node
            .child_by_field_name(body_field)
            .map(|b| b.start_byte())
            .unwrap_or_else(|| {
                let start = node.start_byte();
                self.source[start..node.end_byte()]
                    .find('\n')
                    .map(|i| start + i)
                    .unwrap_or(node.end_byte())
            });
        let header = self.source.get(node.start_byte()..end).unwrap_or("");
        header
            .trim()
            .trim_end_matches(['{', ':', ';'])
            .trim()
            .to_owned()
    }

    /// The comment block right above `node` (`//`, `///`, `#`, `/** */`; attributes and
    /// decorators in between are skipped), its markers stripped, line by line.
    pub fn leading_comment(&self, node: SyntaxNode<'_>, prefixes: &[&str]) -> String {
        let mut lines = Vec::new();
        let mut current = node.prev_sibling();
        let mut expected_row = node.start_position().row;
        while let Some(sibling) = current {
            let kind = sibling.kind();
            let is_comment = kind.contains("comment");
            let is_attribute = kind == "attribute_item"
                || kind == "decorator"
                || kind == "marker_annotation"
                || kind == "annotation";
            let adjacent = sibling.end_position().row + 1 >= expected_row;
            // A `/** ... */` block documents the declaration after it even across blank
            // lines (JSDoc, Javadoc, PHPDoc); other comments must touch it.
            if is_comment && !adjacent && lines.is_empty() && self.text(sibling).starts_with("/**")
            {
                lines.push(self.text(sibling));
                break;
            }
            if !(is_comment || is_attribute) || !adjacent {
                break;
            }
            if is_comment {
                lines.push(self.text(sibling));
            }
            expected_row = sibling.start_position().row;
            current = sibling.prev_sibling();
        }
        lines.reverse();
        doc::comment_lines(&lines.join("\n"), prefixes).join("\n")
    }
}

/// The first meaningful line of a comment block, without comment markers.
pub fn first_comment_line(text: &str, prefixes: &[&str]) -> String {
    doc::first_line(&doc::comment_lines(text, prefixes).join("\n"))
}

/// 1-based first line of a node.
pub fn line(node: SyntaxNode<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

/// 1-based last line of a node.
pub fn end_line(node: SyntaxNode<'_>) -> u32 {
    let end = node.end_position();
    // A node ending at column 0 ends on the previous line.
    if end.column == 0 && end.row > node.start_position().row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// Named children of a node.
pub fn children(node: SyntaxNode<'_>) -> Vec<SyntaxNode<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The value of a string literal: quotes and prefixes removed, simple escapes kept as
/// written. None for templates with substitutions.
pub fn string_value(text: &str) -> Option<String> {
    let text = text.trim();
    let text = text.trim_start_matches(|c: char| {
        matches!(c, 'r' | 'b' | 'u' | 'f' | 'R' | 'B' | 'U' | 'F' | '#')
    });
    for quote in ["\"\"\"", "'''", "\"", "'", "`"] {
        if text.len() >= 2 * quote.len() && text.starts_with(quote) {
            let inner = text[quote.len()..].trim_end_matches('#');
            let inner = inner.strip_suffix(quote)?;
            return Some(inner.to_owned());
        }
    }
    None
}

/// A type as written, reduced to the name resolution can use: pointers, references,
/// `mut`, generic arguments, array brackets and nullability removed.
pub fn clean_type(text: &str) -> String {
    if text.trim_end().ends_with("[]") {
        return "Array".to_owned();
    }
    let mut depth = 0usize;
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '<' | '[' => depth += 1,
            '>' | ']' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            '*' | '&' | '?' | '(' | ')' => {}
            _ => out.push(ch),
        }
    }
    let out = out.trim();
    let out = out.strip_prefix("mut ").unwrap_or(out);
    let out = out.strip_prefix("dyn ").unwrap_or(out);
    let out = out.strip_prefix("impl ").unwrap_or(out);
    let out = out.split_whitespace().last().unwrap_or("");
    if out
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        out.to_owned()
    } else {
        String::new()
    }
}

pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// Counts the named argument nodes of an argument list (comments are not arguments).
pub fn argument_count(arguments: Option<SyntaxNode<'_>>) -> u32 {
    let Some(arguments) = arguments else {
        return 0;
    };
    // Once per call site: no list of the children, and no substring searcher built for
    // each argument's kind name.
    let mut cursor = arguments.walk();
    arguments
        .named_children(&mut cursor)
        .filter(|c| !c.kind().as_bytes().windows(7).any(|w| w == b"comment"))
        .count() as u32
}

/// A source's facts as `language`'s extractor writes them (tests of the extractors).
#[cfg(test)]
pub(crate) fn facts_of(language: Language, path: &str, source: &str) -> FileFacts {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).expect("grammar");
    let tree = parser.parse(source, None).expect("parses");
    let mut facts = FileFacts {
        path: path.to_owned(),
        ..Default::default()
    };
    extract(language, &tree, source, &mut facts, &Layout::default());
    facts
}

/// The name of a call's caller in `facts`: a symbol's, or `<module>`.
#[cfg(test)]
pub(crate) fn caller_name(facts: &FileFacts, caller: i32) -> String {
    usize::try_from(caller)
        .map(|index| facts.symbols[index].name.clone())
        .unwrap_or_else(|_| "<module>".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_match_the_graph_definition() {
        use codectx_graph::model::span_fingerprint;
        for text in ["a\nbb\nccc\n", "a\nbb\nccc", "x", "\n\n", "one\r\ntwo\r\n"] {
            let mut facts = FileFacts::default();
            let builder = Builder::new(text, &mut facts);
            let lines = text.lines().count() as u32;
            for start in 1..=lines {
                for end in start..=lines {
                    assert_eq!(
                        builder.fingerprint(start, end),
                        span_fingerprint(text, start, end).unwrap_or_default(),
                        "{text:?} {start}..{end}"
                    );
                }
            }
        }
    }

    #[test]
    fn python_formatted_messages_keep_their_template() {
        let source = "def f(x):\n    raise ValueError('bad value: %r' % x)\n\ndef g(x):\n    raise KeyError('no key {}'.format(x))\n\ndef h():\n    raise TypeError(make_message())\n";
        let facts = facts_of(Language::Python, "", source);
        let messages: Vec<(&str, u32)> = facts
            .errors
            .iter()
            .map(|e| (e.message.as_str(), e.line))
            .collect();
        assert_eq!(messages, vec![("bad value: %r", 2), ("no key {}", 5)]);
    }

    #[test]
    fn strings() {
        assert_eq!(string_value("\"hi\"").as_deref(), Some("hi"));
        assert_eq!(string_value("r#\"raw\"#").as_deref(), Some("raw"));
        assert_eq!(string_value("'''doc'''").as_deref(), Some("doc"));
        assert_eq!(string_value("f'x {y}'").as_deref(), Some("x {y}"));
        assert_eq!(string_value("`tpl`").as_deref(), Some("tpl"));
        assert_eq!(string_value("abc"), None);
    }

    #[test]
    fn types() {
        assert_eq!(clean_type("*Server"), "Server");
        assert_eq!(clean_type("&mut Vec<T>"), "Vec");
        assert_eq!(clean_type("Optional[Foo]"), "Optional");
        assert_eq!(clean_type("http.Server"), "http.Server");
        assert_eq!(clean_type("[]byte"), "byte");
        assert_eq!(clean_type("string[]"), "Array");
        assert_eq!(clean_type("final List<String>"), "List");
    }

    #[test]
    fn shebangs_name_languages() {
        for (line, language) in [
            ("#!/bin/sh", Some(Language::Tagged(Tagged::Bash))),
            ("#!/usr/bin/env bash", Some(Language::Tagged(Tagged::Bash))),
            ("#!/usr/bin/python3.11", Some(Language::Python)),
            (
                "#!/usr/bin/env -S node --no-warnings",
                Some(Language::JavaScript),
            ),
            ("#!/usr/bin/env ruby", Some(Language::Tagged(Tagged::Ruby))),
            ("#!/usr/bin/perl", None),
            ("# not a shebang", None),
        ] {
            assert_eq!(Language::from_shebang(line), language, "{line}");
        }
        assert_eq!(
            Language::for_source("bin/tool", "#!/bin/bash\necho hi\n"),
            Some(Language::Tagged(Tagged::Bash))
        );
        assert_eq!(Language::for_source("notes.txt", "#!/bin/bash\n"), None);
        // Mode lines, for sourced scripts without a `#!` line.
        for text in [
            "# ssh completion   -*- shell-script -*-\n_ssh() { :; }\n",
            "_ssh() { :; }\n\n# ex: filetype=sh\n",
            "f() { :; }\n# vim: set ft=bash ts=4:\n",
        ] {
            assert_eq!(
                Language::for_source("completions/ssh", text),
                Some(Language::Tagged(Tagged::Bash)),
                "{text}"
            );
        }
        assert_eq!(
            Language::for_source("LICENSE", "MIT License\n\nCopyright\n"),
            None
        );
        // The last bytes may begin inside a character.
        let text = format!("{}\n# ex: filetype=sh\n", "é".repeat(300));
        assert_eq!(
            Language::for_source("script", &text),
            Some(Language::Tagged(Tagged::Bash))
        );
    }

    #[test]
    fn comments() {
        assert_eq!(
            first_comment_line("// Serve handles\n// more", &["///", "//"]),
            "Serve handles"
        );
        assert_eq!(
            first_comment_line("/**\n * Does it.\n */", &["/**", "/*"]),
            "Does it."
        );
    }
}
