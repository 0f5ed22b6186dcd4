//! Generic compressors for text that is not a codectx answer (the `compress` tool):
//! JSON arrays and objects, logs, stack traces, build output, tables, file trees and
//! prose. [`detect`] picks one; each keeps every line that reports a problem (errors,
//! warnings, failures) and the failing frame of every stack trace, whatever the level.
//! Everything is local and extractive: no model, no network.

mod build;
mod json;
mod log;
mod prose;
mod table;
mod trace;
mod tree;

use serde::{Deserialize, Serialize};

use crate::level::Level;

/// What a text is, as [`detect`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    JsonArray,
    JsonObject,
    StackTrace,
    BuildOutput,
    Log,
    Table,
    FileTree,
    Prose,
}

impl ContentKind {
    pub const ALL: [ContentKind; 8] = [
        ContentKind::JsonArray,
        ContentKind::JsonObject,
        ContentKind::StackTrace,
        ContentKind::BuildOutput,
        ContentKind::Log,
        ContentKind::Table,
        ContentKind::FileTree,
        ContentKind::Prose,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ContentKind::JsonArray => "json_array",
            ContentKind::JsonObject => "json_object",
            ContentKind::StackTrace => "stack_trace",
            ContentKind::BuildOutput => "build_output",
            ContentKind::Log => "log",
            ContentKind::Table => "table",
            ContentKind::FileTree => "file_tree",
            ContentKind::Prose => "prose",
        }
    }

    pub fn parse(text: &str) -> Option<ContentKind> {
        ContentKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// A compressed text and what it was taken for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compressed {
    pub kind: ContentKind,
    pub text: String,
}

/// Compresses `text` at `level` as `kind` (detected when None). `Level::Off` returns
/// the text unchanged.
pub fn compress_text(text: &str, kind: Option<ContentKind>, level: Level) -> Compressed {
    let kind = kind.unwrap_or_else(|| detect(text));
    let text = match level {
        Level::Off => text.to_owned(),
        _ => match kind {
            ContentKind::JsonArray | ContentKind::JsonObject => json::compress(text, level),
            ContentKind::StackTrace => trace::compress(text, level),
            ContentKind::BuildOutput => build::compress(text, level),
            ContentKind::Log => log::compress(text, level),
            ContentKind::Table => table::compress(text, level),
            ContentKind::FileTree => tree::compress(text, level),
            ContentKind::Prose => prose::compress(text, level),
        },
    };
    Compressed { kind, text }
}

/// What `text` most likely is. JSON is recognised by parsing; the line-based kinds by
/// the share of lines that carry each kind's marks.
pub fn detect(text: &str) -> ContentKind {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(text)
    {
        return if value.is_array() {
            ContentKind::JsonArray
        } else {
            ContentKind::JsonObject
        };
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return ContentKind::Prose;
    }
    let total = lines.len() as f64;
    let share = |count: usize| count as f64 / total;
    let frames = lines.iter().filter(|l| trace::is_frame(l)).count();
    let trace_headers = lines.iter().filter(|l| trace::is_header(l)).count();
    let build = lines.iter().filter(|l| build::is_build_line(l)).count();
    let log = lines.iter().filter(|l| log::is_log_line(l)).count();
    // A test run or a build that printed a trace is build output; a trace is mostly frames.
    if build >= 2 && share(build) >= 0.2 && share(frames) < 0.5 {
        return ContentKind::BuildOutput;
    }
    // A trace is mostly frames and their code lines (Python writes each frame on two
    // or three lines).
    let framed = trace::choose_frames(&lines, Level::Summary)
        .framed
        .iter()
        .filter(|f| **f)
        .count();
    if trace_headers > 0 && frames >= 2 && share(framed) >= 0.4 {
        return ContentKind::StackTrace;
    }
    if share(log) >= 0.5 {
        return ContentKind::Log;
    }
    if tree::looks_like_tree(&lines) {
        return ContentKind::FileTree;
    }
    if table::looks_like_table(&lines) {
        return ContentKind::Table;
    }
    if frames >= 3 && share(frames) >= 0.3 {
        return ContentKind::StackTrace;
    }
    ContentKind::Prose
}

/// Whether a line reports a problem: such lines survive every level of every generic
/// compressor.
pub fn is_signal(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "error",
        "warn",
        "fail",
        "fatal",
        "panic",
        "exception",
        "critical",
        "traceback",
        "caused by",
        "denied",
        "refused",
        "timed out",
        "timeout",
        "crashloop",
        "backoff",
        "oomkilled",
        "unhealthy",
        "unready",
        "notready",
        "not ready",
        "npm err",
        "abort",
    ];
    let lower = line.to_ascii_lowercase();
    WORDS.iter().any(|word| lower.contains(word))
}

/// A line with digits and hex runs collapsed, so lines that differ only in counters,
/// times, ids and addresses share one template.
pub(crate) fn template(line: &str) -> String {
    fn flush(run: &mut String, out: &mut String) {
        if run.is_empty() {
            return;
        }
        let has_digit = run.chars().any(|c| c.is_ascii_digit());
        let hex = run.len() >= 8 && has_digit && run.chars().all(|c| c.is_ascii_hexdigit());
        if hex || run.chars().all(|c| c.is_ascii_digit()) {
            out.push('#');
        } else {
            let mut in_digits = false;
            for c in run.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('#');
                    }
                    in_digits = true;
                } else {
                    out.push(c);
                    in_digits = false;
                }
            }
        }
        run.clear();
    }
    let mut out = String::with_capacity(line.len());
    let mut run = String::new();
    for c in line.chars() {
        if c.is_ascii_alphanumeric() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Lines with repeats of one template folded into the first: `line (×N similar)`.
/// Signal lines are kept whatever `keep_other` says; other lines only when it is true.
/// Returns the lines and how many were folded or dropped.
pub(crate) fn fold(lines: &[&str], keep_other: bool) -> (Vec<String>, usize) {
    use std::collections::HashMap;
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut dropped = 0;
    for line in lines {
        let signal = is_signal(line);
        if !signal && !keep_other {
            dropped += 1;
            continue;
        }
        let key = template(line);
        // Signal lines fold only into an identical earlier line: each distinct
        // problem stays.
        let key = if signal { format!("!{line}") } else { key };
        match seen.get(&key) {
            Some(&index) => {
                out[index].1 += 1;
                dropped += 1;
            }
            None => {
                seen.insert(key, out.len());
                out.push(((*line).to_owned(), 1));
            }
        }
    }
    let lines = out
        .into_iter()
        .map(|(line, count)| {
            if count > 1 {
                format!("{line} (×{count} similar)")
            } else {
                line
            }
        })
        .collect();
    (lines, dropped)
}

/// Tokens of a text as the benchmarks count them (bytes/4, rounded up).
pub fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_ignore_numbers_and_ids() {
        assert_eq!(
            template("GET /items/42 200 in 13ms id=d3adbeefcafe"),
            template("GET /items/7 200 in 9ms id=0123456789ab")
        );
        assert_ne!(template("GET /items/1 200"), template("POST /items/1 200"));
    }

    #[test]
    fn detection_by_shape() {
        assert_eq!(detect("[{\"a\": 1}, {\"a\": 2}]"), ContentKind::JsonArray);
        assert_eq!(detect("{\"a\": {\"b\": 1}}"), ContentKind::JsonObject);
        let java = "java.lang.IllegalStateException: boom\n\tat com.shop.Cart.add(Cart.java:12)\n\tat com.shop.Main.main(Main.java:5)\n";
        assert_eq!(detect(java), ContentKind::StackTrace);
        let cargo = "   Compiling a v0.1.0\n   Compiling b v0.1.0\nerror[E0425]: cannot find value `x`\n  --> src/main.rs:2:5\n";
        assert_eq!(detect(cargo), ContentKind::BuildOutput);
        let log = "2026-01-02T10:00:00Z INFO started\n2026-01-02T10:00:01Z INFO ready\n2026-01-02T10:00:02Z WARN slow\n";
        assert_eq!(detect(log), ContentKind::Log);
        let table = "NAME   READY   STATUS\napi-1  1/1     Running\napi-2  0/1     CrashLoopBackOff\ndb-0   1/1     Running\n";
        assert_eq!(detect(table), ContentKind::Table);
        let tree = "src/\n├── main.rs\n├── lib.rs\n└── util/\n    └── mod.rs\n";
        assert_eq!(detect(tree), ContentKind::FileTree);
        assert_eq!(
            detect("The service starts. It reads its configuration and listens."),
            ContentKind::Prose
        );
    }

    #[test]
    fn off_returns_the_text() {
        let text = "anything at all\n";
        assert_eq!(compress_text(text, None, Level::Off).text, text);
    }
}
