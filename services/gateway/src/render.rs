//! The text a model reads: a compact rendering of an assembled answer.
//!
//! The structured JSON is for programs; a model pays for every repeated key, quote and
//! brace. The rendering keeps every value of the answer and drops only the syntax:
//!
//! - the first line is `status: <status>` (and the notice, when there is one);
//! - qualified names lose the repository's own module prefix when every slash-separated
//!   name shares one (`example.com/shop/server.Run` reads `server.Run`), stated once on a
//!   `names relative to` line so the full name can be rebuilt;
//! - an entry is a head line `kind name  path:start-end`, then its signature, summary
//!   and other fields, one per line;
//! - neighbour lists (callers, callees, tests, ...) are grouped by file, one line per
//!   file: `path: line kind name; line kind name`; the entry's own file reads `(here)`;
//!   neighbours found with less than full confidence (`name_match`, `dispatch`) are
//!   listed apart under `field (confidence):`, so a guess never reads as a fact;
//! - summaries name symbols relative to the same prefix;
//! - source text is indented under `source:`, byte for byte; a signature or summary
//!   that the source holds verbatim is not repeated above it;
//! - empty lists, nulls and empty strings are dropped; `tokens` (the JSON's own size)
//!   is dropped; any field this module does not know is kept as `key: value`.

use serde_json::{Map, Value};

/// `describe_repository`: the repository on one line, then a line per language
/// (`go: 101 files, 1,380 symbols, 312 tests; deep: definitions, ...`).
fn render_repository(top: &Map<String, Value>, out: &mut String) {
    if let Some(repository) = top.get("repository").and_then(Value::as_object) {
        out.push_str("repository: ");
        out.push_str(non_empty_str(repository.get("name")).unwrap_or("?"));
        if let Some(commit) = non_empty_str(repository.get("commit")) {
            out.push_str(" at ");
            out.push_str(commit);
        }
        if let Some(at) = repository.get("indexed_at").filter(|v| !is_empty(v)) {
            out.push_str(", indexed ");
            match at.as_i64() {
                Some(seconds) => out.push_str(&utc(seconds)),
                None => out.push_str(&compact(at)),
            }
        }
        if let Some(policy) = non_empty_str(repository.get("policy_fingerprint")) {
            let annotations = repository
                .get("annotations")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            out.push_str(&format!(
                ", policy {} ({annotations} annotation{})",
                &policy[..policy.len().min(12)],
                if annotations == 1 { "" } else { "s" }
            ));
        }
        if repository.get("stale").and_then(Value::as_bool) == Some(true) {
            out.push_str(&format!(
                ", stale: {} {} s ago",
                non_empty_str(repository.get("stale_reason")).unwrap_or("the checkout changed"),
                repository
                    .get("stale_seconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            ));
        }
        out.push('\n');
    }
    let Some(languages) = top.get("languages").and_then(Value::as_array) else {
        return;
    };
    for language in languages.iter().filter_map(Value::as_object) {
        let count = |field: &str, unit: &str| -> Option<String> {
            let n = language
                .get(field)
                .and_then(Value::as_u64)
                .filter(|n| *n > 0)?;
            let plural = if n == 1 { "" } else { "s" };
            Some(format!(
                "{} {unit}{plural}",
                codectx_errors::group_thousands(n)
            ))
        };
        let counts: Vec<String> = [("files", "file"), ("symbols", "symbol"), ("tests", "test")]
            .into_iter()
            .filter_map(|(field, unit)| count(field, unit))
            .collect();
        out.push_str(&format!(
            "{}: {}; {}: {}\n",
            non_empty_str(language.get("language")).unwrap_or("?"),
            counts.join(", "),
            non_empty_str(language.get("depth")).unwrap_or("?"),
            non_empty_str(language.get("reads")).unwrap_or(""),
        ));
    }
}

/// The graph the answer was read from, and whether the checkout has moved past it:
/// `index: commit 0123456789ab` or `index: commit 0123456789ab, stale: files changed 42 s
/// ago; re-index, or read the files for what changed`.
fn render_index(top: &Map<String, Value>, out: &mut String) {
    let Some(index) = top.get("index").and_then(Value::as_object) else {
        return;
    };
    out.push_str("index:");
    for key in ["commit", "version"] {
        if let Some(value) = non_empty_str(index.get(key)) {
            out.push_str(&format!(" {key} {value}"));
        }
    }
    if index.get("stale").and_then(Value::as_bool) == Some(true) {
        let reason = non_empty_str(index.get("stale_reason")).unwrap_or("the checkout changed");
        let seconds = index
            .get("stale_seconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        out.push_str(&format!(
            ", stale: {reason} {seconds} s ago; the answer may not show that change (it is re-indexed when a watcher runs; read the files to be sure)"
        ));
    }
    out.push('\n');
}

/// Unix seconds as `2026-12-02 04:05 UTC` (days to a civil date: Howard Hinnant's
/// algorithm).
fn utc(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let minutes = seconds.rem_euclid(86_400) / 60;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minutes / 60,
        minutes % 60
    )
}

/// Fields of an entry rendered on its head line or in a fixed place.
const HEAD_FIELDS: &[&str] = &["kind", "qualified_name", "path", "lines", "line", "text"];
/// Top-level fields rendered in a fixed place (or dropped: `tokens`).
const TOP_FIELDS: &[&str] = &[
    "status",
    "index",
    "repository",
    "languages",
    "notice",
    "entries",
    "related",
    "omitted",
    "next",
    "provenance",
    "tokens",
];

/// Renders an answer envelope (`status`, `entries`, ...) for a model.
pub fn render(answer: &Value) -> String {
    let Some(top) = answer.as_object() else {
        return compact(answer);
    };
    let prefix = module_prefix(answer);
    // A name, or a summary that names one ("raised in example.com/shop/server.Run"),
    // relative to the prefix wherever a word starts with it.
    let name = |text: &str| -> String {
        match &prefix {
            Some(prefix) => {
                let text = text.strip_prefix(prefix.as_str()).unwrap_or(text);
                if text.contains(prefix.as_str()) {
                    text.replace(&format!(" {prefix}"), " ")
                } else {
                    text.to_owned()
                }
            }
            None => text.to_owned(),
        }
    };
    let mut out = String::new();
    let status = top.get("status").and_then(Value::as_str).unwrap_or("ok");
    out.push_str("status: ");
    out.push_str(status);
    out.push('\n');
    if let Some(notice) = non_empty_str(top.get("notice")) {
        out.push_str("notice: ");
        out.push_str(notice);
        out.push('\n');
    }
    render_index(top, &mut out);
    if let Some(prefix) = &prefix {
        out.push_str("names relative to ");
        out.push_str(prefix);
        out.push('\n');
    }
    render_repository(top, &mut out);
    for (title, field) in [("", "entries"), ("related:", "related")] {
        let Some(items) = top.get(field).and_then(Value::as_array) else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        if !title.is_empty() {
            out.push_str(title);
            out.push('\n');
        }
        for item in items {
            render_entry(item, &name, &mut out);
        }
    }
    // Fields an envelope may carry besides the known ones (candidates, suggestions, ...).
    for (key, value) in top {
        if TOP_FIELDS.contains(&key.as_str()) || is_empty(value) {
            continue;
        }
        render_field(key, value, "", None, &name, &mut out);
    }
    if let Some(omitted) = top.get("omitted").and_then(Value::as_array) {
        for item in omitted {
            out.push_str("omitted: ");
            match item.as_object() {
                Some(fields) => {
                    let count = fields.get("count").map(compact).unwrap_or_default();
                    let what = non_empty_str(fields.get("what")).unwrap_or("");
                    let reason = non_empty_str(fields.get("reason"));
                    out.push_str(format!("{count} {what}").trim());
                    if let Some(reason) = reason {
                        out.push_str(" (");
                        out.push_str(reason);
                        out.push(')');
                    }
                    let rest: Map<String, Value> = fields
                        .iter()
                        .filter(|(k, v)| {
                            !["count", "what", "reason"].contains(&k.as_str()) && !is_empty(v)
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !rest.is_empty() {
                        out.push(' ');
                        out.push_str(&compact(&Value::Object(rest)));
                    }
                }
                None => out.push_str(&compact(item)),
            }
            out.push('\n');
        }
    }
    if let Some(next) = non_empty_str(top.get("next")) {
        out.push_str("next: ");
        out.push_str(next);
        out.push('\n');
    }
    if let Some(provenance) = top.get("provenance").and_then(Value::as_object) {
        for (key, value) in provenance {
            if !is_empty(value) {
                render_field(key, value, "", None, &name, &mut out);
            }
        }
    }
    out
}

fn render_entry(entry: &Value, name: &dyn Fn(&str) -> String, out: &mut String) {
    let Some(fields) = entry.as_object() else {
        out.push_str(&compact(entry));
        out.push('\n');
        return;
    };
    let own_path = non_empty_str(fields.get("path"));
    let mut head = Vec::new();
    // Code entries have a kind and a qualified name; memory entities a type and a name.
    let kind_field = if fields.contains_key("kind") {
        "kind"
    } else {
        "type"
    };
    let name_field = if fields.contains_key("qualified_name") {
        "qualified_name"
    } else {
        "name"
    };
    if let Some(kind) = non_empty_str(fields.get(kind_field)) {
        head.push(kind.to_owned());
    }
    if let Some(qualified) = non_empty_str(fields.get(name_field)) {
        head.push(name(qualified));
    }
    if let Some(path) = own_path {
        head.push(format!("{path}{}", location(fields)));
    }
    if head.is_empty() {
        head.push("-".into());
    }
    out.push_str(&head.join(" "));
    out.push('\n');
    // With its source, an entry's signature and summary are lines of that source.
    let source = non_empty_str(fields.get("text")).map(squeeze);
    let in_source = |key: &str, value: &Value| {
        matches!(key, "signature" | "summary")
            && value.as_str().is_some_and(|text| {
                source
                    .as_deref()
                    .is_some_and(|source| source.contains(&squeeze(text)))
            })
    };
    for (key, value) in fields {
        if HEAD_FIELDS.contains(&key.as_str())
            || key == kind_field
            || key == name_field
            || is_empty(value)
            || in_source(key, value)
        {
            continue;
        }
        // The repository policy's notes: one line each, as the team wrote them.
        if key == "notes"
            && let Some(notes) = value.as_array()
        {
            for note in notes.iter().filter_map(Value::as_str) {
                out.push_str("  note: ");
                out.push_str(note);
                out.push('\n');
            }
            continue;
        }
        render_field(key, value, "  ", own_path, name, out);
    }
    if let Some(text) = non_empty_str(fields.get("text")) {
        out.push_str("  source:\n");
        for line in text.lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// Text with every run of whitespace as one space (signatures are stored joined).
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `:start-end` from `lines`, or `:line`.
fn location(fields: &Map<String, Value>) -> String {
    if let Some([start, end]) = fields
        .get("lines")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        let (start, end) = (compact(start), compact(end));
        return if start == end {
            format!(":{start}")
        } else {
            format!(":{start}-{end}")
        };
    }
    match fields.get("line") {
        Some(line) if !line.is_null() => format!(":{}", compact(line)),
        _ => String::new(),
    }
}

fn render_field(
    key: &str,
    value: &Value,
    indent: &str,
    own_path: Option<&str>,
    name: &dyn Fn(&str) -> String,
    out: &mut String,
) {
    match value {
        Value::Array(items) if items.iter().all(is_neighbour) => {
            // Resolved neighbours first, then each lesser confidence in first-seen order.
            let mut groups: Vec<(Option<&str>, Vec<&Value>)> = vec![(None, Vec::new())];
            for item in items {
                let confidence = item
                    .get("confidence")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty() && *c != "resolved");
                match groups.iter_mut().find(|(c, _)| *c == confidence) {
                    Some((_, members)) => members.push(item),
                    None => groups.push((confidence, vec![item])),
                }
            }
            for (confidence, members) in groups {
                if members.is_empty() {
                    continue;
                }
                out.push_str(indent);
                out.push_str(key);
                if let Some(confidence) = confidence {
                    out.push_str(" (");
                    out.push_str(confidence);
                    out.push(')');
                }
                out.push_str(":\n");
                render_neighbours(&members, indent, own_path, name, out);
            }
        }
        Value::Array(items) if items.iter().all(is_fact) => {
            out.push_str(&format!("{indent}{key}:\n"));
            for item in items {
                out.push_str(&format!("{indent}  {}\n", fact(item)));
            }
        }
        Value::Array(items) if items.iter().all(|v| !v.is_object() && !v.is_array()) => {
            let words: Vec<String> = items.iter().map(|v| scalar(v, name)).collect();
            out.push_str(&format!("{indent}{key}: {}\n", words.join(", ")));
        }
        Value::Array(items) => {
            out.push_str(&format!("{indent}{key}:\n"));
            for item in items {
                match item.as_object() {
                    Some(_) if item.get("qualified_name").is_some() => {
                        let mut nested = String::new();
                        render_entry(item, name, &mut nested);
                        for line in nested.lines() {
                            out.push_str(&format!("{indent}  {line}\n"));
                        }
                    }
                    _ => out.push_str(&format!("{indent}  {}\n", compact(item))),
                }
            }
        }
        Value::Object(_) => out.push_str(&format!("{indent}{key}: {}\n", compact(value))),
        _ => out.push_str(&format!("{indent}{key}: {}\n", scalar(value, name))),
    }
}

/// A memory fact: `subject predicate object`, with anything else in brackets.
fn is_fact(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|fields| fields.contains_key("predicate") && fields.contains_key("object"))
}

fn fact(value: &Value) -> String {
    let Some(fields) = value.as_object() else {
        return compact(value);
    };
    let mut parts: Vec<String> = ["subject", "predicate", "object"]
        .iter()
        .filter_map(|key| non_empty_str(fields.get(*key)).map(str::to_owned))
        .collect();
    let rest: Vec<String> = fields
        .iter()
        .filter(|(k, v)| !["subject", "predicate", "object"].contains(&k.as_str()) && !is_empty(v))
        .map(|(k, v)| format!("{k} {}", compact(v)))
        .collect();
    if !rest.is_empty() {
        parts.push(format!("[{}]", rest.join(", ")));
    }
    parts.join(" ")
}

/// Fields a neighbour may carry: a name (or an id) at a place, its kind and how sure the
/// index is of the edge.
const NEIGHBOUR_KEYS: &[&str] = &[
    "kind",
    "qualified_name",
    "id",
    "path",
    "line",
    "lines",
    "confidence",
];

/// A neighbour: an object naming a symbol (or a node id) at a place, and nothing else of
/// substance.
fn is_neighbour(value: &Value) -> bool {
    value.as_object().is_some_and(|fields| {
        (fields.contains_key("qualified_name") || fields.contains_key("id"))
            && fields.contains_key("path")
            && fields.keys().all(|k| NEIGHBOUR_KEYS.contains(&k.as_str()))
    })
}

/// Neighbours grouped by file, in first-seen order: `path: line kind name; ...`.
fn render_neighbours(
    items: &[&Value],
    indent: &str,
    own_path: Option<&str>,
    name: &dyn Fn(&str) -> String,
    out: &mut String,
) {
    // Per file: (line, kind, name) of each member.
    type Member = (Option<String>, Option<String>, String);
    let mut groups: Vec<(String, Vec<Member>)> = Vec::new();
    for item in items {
        let Some(fields) = item.as_object() else {
            continue;
        };
        let path = non_empty_str(fields.get("path")).unwrap_or("");
        let line = location(fields).strip_prefix(':').map(str::to_owned);
        let kind = non_empty_str(fields.get("kind")).map(str::to_owned);
        // A name says more than an id; an id alone is what get_code_snippet takes.
        let label = match non_empty_str(fields.get("qualified_name")) {
            Some(qualified) => name(qualified),
            None => non_empty_str(fields.get("id")).unwrap_or("").to_owned(),
        };
        let member = (line, kind, label);
        match groups.iter_mut().find(|(p, _)| p == path) {
            Some((_, members)) => members.push(member),
            None => groups.push((path.to_owned(), vec![member])),
        }
    }
    for (path, members) in groups {
        let shown = if Some(path.as_str()) == own_path {
            "(here)"
        } else {
            path.as_str()
        };
        // Names of one file usually share their package or class: stated once.
        let names: Vec<&str> = members.iter().map(|(_, _, name)| name.as_str()).collect();
        let shared = shared_qualifier(&names);
        let texts: Vec<String> = members
            .iter()
            .map(|(line, kind, label)| {
                [
                    line.as_deref(),
                    kind.as_deref(),
                    Some(&label[shared.len()..]),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ")
            })
            .collect();
        if shared.is_empty() {
            out.push_str(&format!("{indent}  {shown}: {}\n", texts.join("; ")));
        } else {
            out.push_str(&format!(
                "{indent}  {shown} ({shared}): {}\n",
                texts.join("; ")
            ));
        }
    }
}

/// The qualifier (package, module, class) that every name of a group starts with, up to
/// and including a separator (`.`, `/`, `::`, `#`), when there are at least two names and
/// it is long enough to be worth stating once; else empty.
fn shared_qualifier<'a>(names: &[&'a str]) -> &'a str {
    let [first, rest @ ..] = names else {
        return "";
    };
    if rest.is_empty() {
        return "";
    }
    let mut end = first.len();
    for other in rest {
        end = end.min(
            first
                .bytes()
                .zip(other.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    // Back to the last separator, and never the whole of any name.
    let prefix = &first[..end];
    let cut = prefix
        .char_indices()
        .filter(|(_, c)| matches!(c, '.' | '/' | ':' | '#'))
        .map(|(i, c)| i + c.len_utf8())
        .next_back()
        .unwrap_or(0);
    if cut < 4 || names.iter().any(|n| n.len() <= cut) {
        return "";
    }
    &first[..cut]
}

/// The common module prefix of the answer's slash-separated qualified names, ending at a
/// `/`, when there are at least two such names and they all share it.
fn module_prefix(answer: &Value) -> Option<String> {
    let mut names = Vec::new();
    collect_names(answer, &mut names);
    let slashed: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| n.contains('/'))
        .collect();
    if slashed.len() < 2 || slashed.len() != names.len() {
        return None;
    }
    let first = slashed[0];
    let mut end = first.rfind('/')? + 1;
    for name in &slashed[1..] {
        while end > 0 && !(name.len() >= end && name.as_bytes()[..end] == first.as_bytes()[..end]) {
            end = first[..end - 1].rfind('/').map_or(0, |i| i + 1);
        }
    }
    // Keep at least one path element: `example.com/` alone says little.
    (end > 0 && first[..end].matches('/').count() >= 2).then(|| first[..end].to_owned())
}

fn collect_names(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            // String literals and error messages are "names" of text, not of symbols.
            let literal = fields
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k == "string" || k == "error_message");
            if let Some(Value::String(name)) = fields.get("qualified_name")
                && !literal
            {
                out.push(name.clone());
            }
            // The literals a symbol holds are text too, with or without their kind.
            fields
                .iter()
                .filter(|(key, _)| key.as_str() != "strings")
                .for_each(|(_, v)| collect_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_names(v, out)),
        _ => {}
    }
}

fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn scalar(value: &Value, name: &dyn Fn(&str) -> String) -> String {
    match value {
        Value::String(text) => name(text),
        other => compact(other),
    }
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_read_as_a_utc_date() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_184_300), "2026-12-02 04:05 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
    }
    use serde_json::json;

    #[test]
    fn an_entry_with_its_neighbours_reads_compactly_and_keeps_every_value() {
        let answer = json!({
            "status": "ok",
            "tokens": 301,
            "entries": [{
                "kind": "method",
                "qualified_name": "example.com/shop/server.(*Server).Serve",
                "path": "server/server.go",
                "lines": [26, 35],
                "signature": "func (s *Server) Serve(path string) (string, error)",
                "summary": "Serve handles a path on a pointer receiver.",
                "callers": [
                    {"kind": "function", "line": 54, "path": "server/server.go",
                     "qualified_name": "example.com/shop/server.Run"}
                ],
                "callees": [
                    {"kind": "method", "line": 34, "path": "server/server.go",
                     "qualified_name": "example.com/shop/server.(*Server).render"},
                    {"kind": "method", "line": 30, "path": "store/store.go",
                     "qualified_name": "example.com/shop/store.(*DB).Get"},
                    {"kind": "method", "line": 41, "path": "store/store.go",
                     "qualified_name": "example.com/shop/store.(*DB).Put"}
                ],
                "implementations": [],
                "strings": [
                    {"kind": "error_message", "line": 28, "path": "server/server.go",
                     "qualified_name": "empty path"}
                ],
                "unresolved_callees": ["errors.New", "fmt.Errorf"],
                "fingerprint": "be2ef3f85f020fe1",
                "text": "func (s *Server) Serve(path string) (string, error) {\n\treturn \"\", nil\n}\n"
            }],
            "omitted": [{"count": 1, "reason": "listed_under_tests", "what": "callers that are tests"}],
            "next": "get_code_snippet for its source",
            "provenance": {"legs": ["exact"]}
        });
        let text = render(&answer);
        assert_eq!(
            text,
            "status: ok\n\
             names relative to example.com/shop/\n\
             method server.(*Server).Serve server/server.go:26-35\n\
             \x20 callees:\n\
             \x20   (here): 34 method server.(*Server).render\n\
             \x20   store/store.go (store.(*DB).): 30 method Get; 41 method Put\n\
             \x20 callers:\n\
             \x20   (here): 54 function server.Run\n\
             \x20 fingerprint: be2ef3f85f020fe1\n\
             \x20 strings:\n\
             \x20   (here): 28 error_message empty path\n\
             \x20 summary: Serve handles a path on a pointer receiver.\n\
             \x20 unresolved_callees: errors.New, fmt.Errorf\n\
             \x20 source:\n\
             \x20   func (s *Server) Serve(path string) (string, error) {\n\
             \x20   \treturn \"\", nil\n\
             \x20   }\n\
             omitted: 1 callers that are tests (listed_under_tests)\n\
             next: get_code_snippet for its source\n\
             legs: exact\n"
        );
        assert!(text.len() * 4 < answer.to_string().len() * 3, "{text}");
    }

    #[test]
    fn names_keep_their_prefix_unless_every_name_shares_one() {
        // Python names have no module path; Go standard library paths share none.
        let python = json!({"status": "ok", "entries": [
            {"kind": "method", "qualified_name": "shop.cart.Cart.add", "path": "shop/cart.py", "line": 3}
        ]});
        assert!(render(&python).contains("method shop.cart.Cart.add shop/cart.py:3\n"));
        let stdlib = json!({"status": "ok", "entries": [
            {"kind": "function", "qualified_name": "net/http.Get", "path": "net/http/client.go"},
            {"kind": "function", "qualified_name": "encoding/json.Marshal", "path": "encoding/json/encode.go"}
        ]});
        let text = render(&stdlib);
        assert!(!text.contains("names relative"), "{text}");
        assert!(text.contains("function net/http.Get"));
    }

    #[test]
    fn memory_entities_and_facts_read_as_sentences() {
        let answer = json!({
            "status": "ok",
            "entries": [{"name": "Payments service", "type": "service",
                         "aliases": ["billing engine"], "found_by": ["exact"]}],
            "facts": [{"subject": "Payments service", "predicate": "owned_by",
                       "object": "Team Ledger", "hop": 1}]
        });
        let text = render(&answer);
        assert!(
            text.contains("service Payments service\n  aliases: billing engine\n"),
            "{text}"
        );
        assert!(
            text.contains("facts:\n  Payments service owned_by Team Ledger [hop 1]\n"),
            "{text}"
        );
    }

    #[test]
    fn unknown_fields_stay_and_empty_ones_go() {
        let answer = json!({
            "status": "not_found",
            "notice": "nothing matches",
            "entries": [],
            "candidates": [{"qualified_name": "a.b", "path": "a.py", "kind": "function", "line": 1}],
            "suggestions": ["Cart.add", "Cart.remove"],
            "budget": {"max_tokens": 1500},
            "blank_field": "",
            "null_field": null,
            "provenance": {"legs": ["exact", "name"], "degraded": ["vector: unavailable"]}
        });
        let text = render(&answer);
        assert!(
            text.starts_with("status: not_found\nnotice: nothing matches\n"),
            "{text}"
        );
        assert!(
            text.contains("candidates:\n  a.py: 1 function a.b\n"),
            "{text}"
        );
        assert!(
            text.contains("suggestions: Cart.add, Cart.remove\n"),
            "{text}"
        );
        assert!(text.contains("budget: {\"max_tokens\":1500}\n"), "{text}");
        assert!(text.contains("degraded: vector: unavailable\n"), "{text}");
        assert!(
            !text.contains("blank_field")
                && !text.contains("null_field")
                && !text.contains("entries"),
            "{text}"
        );
    }
}
