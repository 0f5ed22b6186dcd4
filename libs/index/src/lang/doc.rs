//! A symbol's documentation: the comment block above it (`//`, `///`, `/** */`, `#`) or
//! its docstring, read two ways. Its **summary** is the first meaningful line, shown in
//! answers. Its **doc** is the prose of the whole block on one line (code examples,
//! doctests, directives and tag names dropped, the words of tags kept), capped at
//! [`DOC_CHARS`]: what retrieval matches a plain-language task against (the BM25 doc
//! field and the dense leg's text), never rendered in answers (ADR 0011).

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// Longest doc kept, in characters: the first paragraphs of a docstring hold what a
/// symbol is for; reference sections below them (parameters, examples) matter less and
/// cost model time in the dense leg.
pub const DOC_CHARS: usize = 600;

/// The lines of a comment block without its markers: a line's first matching prefix
/// (`///` before `//`, so the longer ones first), then a leading `*` of a block
/// comment's body and a trailing `*/`. Blank lines stay (they end paragraphs).
pub fn comment_lines<'t>(text: &'t str, prefixes: &[&str]) -> Vec<&'t str> {
    text.lines()
        .map(|raw| {
            let mut line = raw.trim();
            for prefix in prefixes {
                if let Some(rest) = line.strip_prefix(prefix) {
                    line = rest;
                    break;
                }
            }
            line.trim_end_matches("*/").trim_start_matches('*').trim()
        })
        .collect()
}

/// C# (and VB, F#) XML documentation tags as text: `<summary>`, `<para>` and the like
/// go; `<see cref="X"/>` and `<paramref name="x"/>` read `X`, `x`; `<param name="x">`
/// reads `x`. Other angle brackets (`List<T>`) stay.
pub fn without_xml_tags(line: &str) -> std::borrow::Cow<'_, str> {
    static TAGS: OnceLock<Regex> = OnceLock::new();
    if !line.contains('<') {
        return std::borrow::Cow::Borrowed(line);
    }
    let tags = TAGS.get_or_init(|| {
        Regex::new(
            r#"</?(summary|remarks|returns|value|para|example|code|c|exception|list|item|description|term|inheritdoc|include|see|seealso|paramref|typeparamref|param|typeparam)\b(?:\s+\w+\s*=\s*"([^"]*)")?\s*/?>"#,
        )
        .expect("valid pattern")
    });
    tags.replace_all(line, |c: &Captures<'_>| {
        c.get(2)
            .map(|value| format!("{} ", value.as_str()))
            .unwrap_or_default()
    })
}

/// The first meaningful line of a comment's text (markers already stripped): not empty,
/// not a tag (`@param`).
pub fn first_line(text: &str) -> String {
    text.lines()
        .map(|line| {
            without_xml_tags(line)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .find(|line| !line.is_empty() && !line.starts_with('@'))
        .unwrap_or_default()
}

/// The prose of a comment's text (markers already stripped) on one line, at most
/// [`DOC_CHARS`] characters, cut at a word. Dropped: fenced code blocks, doctest and
/// shell prompt lines, reST directives (`.. versionadded:: 2.0`), JSDoc `@example`
/// bodies, and the type braces of tags; kept: the words of tags (`@param config the
/// request's settings` reads `config the request's settings`) and of reST fields
/// (`:param config: the settings` reads `config: the settings`).
pub fn prose(text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut fenced = false;
    let mut example = false;
    let mut length = 0usize;
    'lines: for raw in text.lines() {
        let line = without_xml_tags(raw);
        let line = line.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(tag) = line.strip_prefix('@') {
            let name = tag.split_whitespace().next().unwrap_or("");
            example = name == "example";
            if example {
                continue;
            }
        } else if example {
            continue;
        }
        if line.starts_with(">>>")
            || line.starts_with("... ")
            || line == "..."
            || line.starts_with("$ ")
            || line.starts_with(".. ")
        {
            continue;
        }
        let mut rest = line;
        let mut line_words: Vec<&str> = Vec::new();
        if let Some(tag) = rest.strip_prefix('@') {
            // The tag's name goes; a `{Type}` after it goes too.
            rest = tag.split_once(char::is_whitespace).map_or("", |(_, r)| r);
            let trimmed = rest.trim_start();
            if trimmed.starts_with('{') {
                rest = trimmed.split_once('}').map_or("", |(_, r)| r);
            }
        } else if let Some((head, tail)) = rest.strip_prefix(':').and_then(|f| f.split_once(':')) {
            // `:param name: text` -> `name text`; `:returns: text` -> `text`.
            line_words.extend(head.split_whitespace().skip(1));
            rest = tail;
        }
        line_words.extend(rest.split_whitespace());
        for word in line_words {
            let word = word.replace('`', "");
            if word.is_empty() || word.chars().all(|c| c == '#' || c == '-' || c == '=') {
                continue;
            }
            length += word.chars().count() + usize::from(!words.is_empty());
            if length > DOC_CHARS {
                break 'lines;
            }
            words.push(word);
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_first_line() {
        let text = comment_lines("/**\n * Does it.\n *\n * More here.\n */", &["/**", "/*"]);
        assert_eq!(text, ["", "Does it.", "", "More here.", ""]);
        assert_eq!(first_line(&text.join("\n")), "Does it.");
        let text = comment_lines("/// Serve handles\n/// more", &["///", "//"]);
        assert_eq!(first_line(&text.join("\n")), "Serve handles");
        assert_eq!(first_line("@param x\nReal line"), "Real line");
    }

    #[test]
    fn prose_keeps_words_and_drops_code() {
        let doc = "Generate a URL to the given endpoint.\n\n\
                   If building outside a request, `SERVER_NAME` must be set.\n\n\
                   :param endpoint: The endpoint name.\n:return: the URL\n\
                   .. versionchanged:: 2.2\n    Calls hooks.\n\n\
                   >>> url_for('index')\n'/'\n";
        assert_eq!(
            prose(doc),
            "Generate a URL to the given endpoint. If building outside a request, \
             SERVER_NAME must be set. endpoint The endpoint name. the URL Calls hooks. '/'"
        );
        let js = "Merges two configs.\n@param {Object} config1 the defaults\n\
                  @returns {Object}\n@example\nmerge(a, b)\n";
        assert_eq!(prose(js), "Merges two configs. config1 the defaults");
        let rust = "Zips two iterators.\n\n# Examples\n\n```\nlet x = 1;\n```\n\nSee [`Zip`].";
        assert_eq!(prose(rust), "Zips two iterators. Examples See [Zip].");
    }

    #[test]
    fn xml_documentation_reads_as_text() {
        let doc = "<summary>\nAdds the <see cref=\"TaxRate\"/> to a <c>List<T></c>.\n</summary>\n\
                   <param name=\"lines\">The invoice lines.</param>";
        assert_eq!(first_line(doc), "Adds the TaxRate to a List<T>.");
        assert_eq!(
            prose(doc),
            "Adds the TaxRate to a List<T>. lines The invoice lines."
        );
    }

    #[test]
    fn prose_is_capped_at_a_word() {
        let long = "word ".repeat(500);
        let doc = prose(&long);
        assert!(doc.chars().count() <= DOC_CHARS);
        assert!(doc.ends_with("word"));
    }
}
