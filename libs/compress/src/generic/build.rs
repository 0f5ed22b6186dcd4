//! Build and test output (cargo, go test, pytest, Maven, npm, node --test/TAP, ...):
//! progress lines (compiling, downloading, passing tests) collapse into a count; every
//! error, warning and failure stays at every level, with what locates and explains it:
//! the location lines of a diagnostic (`--> src/main.rs:16:5`), its labelled carets
//! (`^^^ expected i64, found u32`), assertion details (`left: 115`, `Total() = 15, want
//! 16`, `expected: <1> but was: <0>`, `10.5 !== 11`), the key fields of a failure report
//! (`location:`, `error:`, `name:`), and the failing frame of every stack trace in it
//! ([`super::trace`]). Summary also keeps each failure's next lines and one line of each
//! other shape; result lines (`test result:`, `BUILD FAILURE`, `# fail 2`) always stay.

use super::{is_signal, trace};
use crate::level::Level;

/// Progress lines of the common tools: counted, not shown, whatever words they hold
/// (`Compiling error-chain v0.12`, `Downloading ...errorprone...`).
const PROGRESS: &[&str] = &[
    "Compiling ",
    "Checking ",
    "Downloaded ",
    "Downloading ",
    "Fresh ",
    "Updating ",
    "Locking ",
    "Adding ",
    "Blocking ",
    "Running ",
    "Documenting ",
    "Installing ",
    "Unpacking ",
    "=== RUN",
    "=== PAUSE",
    "=== CONT",
    "--- PASS",
    "[INFO] Download",
    "npm http",
    "npm timing",
    "npm sill",
    "npm verb",
    "collecting ",
    "# Subtest:",
];

/// Progress lines only when they report nothing: Maven's `[INFO]` carries `[INFO] 2 errors`.
const QUIET_PROGRESS: &[&str] = &["[INFO] ", "PASS", "ok ", "collected "];

/// Result lines: short, and what a reader looks for first.
const RESULTS: &[&str] = &[
    "test result:",
    "Finished ",
    "BUILD SUCCESS",
    "BUILD FAILURE",
    "[INFO] BUILD",
    "[ERROR] Tests run:",
    "[INFO] Tests run:",
    "Tests run:",
    "Total time",
    "[INFO] Total time",
    "FAIL",
    "ok  \t",
    "error: could not compile",
    "error: test failed",
    "short test summary",
    "npm ERR!",
    "added ",
    "found 0 vulnerabilities",
    "# tests ",
    "# pass ",
    "# fail ",
    "running ",
];

/// Fields of a failure report (TAP's YAML, JUnit's and pytest's summaries) that say what
/// and where.
const REPORT_KEYS: &[&str] = &[
    "location:",
    "error:",
    "name:",
    "message:",
    "cause:",
    "reason:",
    "expected:",
    "actual:",
    "file:",
];

/// Whether a line is typical of a build or test tool (detection).
pub(super) fn is_build_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    PROGRESS.iter().any(|p| trimmed.starts_with(p))
        || QUIET_PROGRESS.iter().any(|p| trimmed.starts_with(p))
        || RESULTS.iter().any(|r| trimmed.starts_with(r))
        || trimmed.starts_with("error[")
        || trimmed.starts_with("error:")
        || trimmed.starts_with("warning:")
        || trimmed.starts_with("[ERROR]")
        || trimmed.starts_with("[WARNING]")
        || trimmed.starts_with("--> ")
        || trimmed.starts_with("=====")
        || trimmed.starts_with("PASSED")
        || trimmed.starts_with("FAILED")
        || trimmed.contains(" PASSED")
        || trimmed.contains(" FAILED")
        || trimmed.starts_with("npm warn")
        || trimmed.starts_with("npm error")
        || trimmed.starts_with("not ok ")
        || is_test_line(trimmed)
}

/// `test tests::name ... ok` (cargo, libtest).
fn is_test_line(trimmed: &str) -> bool {
    trimmed.starts_with("test ")
        && (trimmed.ends_with("... ok")
            || trimmed.ends_with("... FAILED")
            || trimmed.ends_with("... ignored"))
}

fn is_progress(line: &str) -> bool {
    let trimmed = line.trim_start();
    if is_result(line) {
        return false;
    }
    PROGRESS.iter().any(|p| trimmed.starts_with(p))
        || (!is_signal(line)
            && (QUIET_PROGRESS.iter().any(|p| trimmed.starts_with(p))
                || trimmed.ends_with(" PASSED")
                || (trimmed.contains(" PASSED ") && trimmed.ends_with(']'))
                || (trimmed.starts_with("test ") && trimmed.ends_with("... ok"))))
}

/// A problem line: a signal word, a failed test, a `path:line: message` report (go
/// test's `t.Errorf`, gcc), or pytest's failing-line (`>`) and explanation (`E`) lines.
fn is_problem(line: &str) -> bool {
    let trimmed = line.trim_start();
    (is_signal(line) && !is_progress(line))
        || trimmed.starts_with("not ok ")
        || line.starts_with("E   ")
        || line.starts_with(">   ")
        || is_location_report(trimmed)
}

/// `cart_test.go:46: Total() = 15, want 16`: a location and a message.
fn is_location_report(trimmed: &str) -> bool {
    let mut parts = trimmed.splitn(3, ':');
    let (Some(path), Some(line), Some(message)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !path.contains(' ')
        && path.contains('.')
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
        && !message.trim().is_empty()
        && !message.trim_start().starts_with("in ")
}

fn is_result(line: &str) -> bool {
    let trimmed = line.trim_start();
    RESULTS.iter().any(|r| trimmed.starts_with(r))
        || (trimmed.starts_with('=')
            && (trimmed.contains(" passed") || trimmed.contains(" failed")))
}

/// What locates or explains a failure: kept at every level inside a failure's report.
fn is_detail(line: &str) -> bool {
    let text = trace::body(line);
    let lower = text.to_ascii_lowercase();
    text.starts_with("--> ")
        || text.starts_with("::: ")
        || REPORT_KEYS.iter().any(|key| text.starts_with(key))
        || lower.contains("expected")
        || lower.contains("actual")
        || lower.contains("but was")
        || lower.starts_with("left:")
        || lower.starts_with("right:")
        || text.contains(" !== ")
        || text.contains(" === ")
        || text.contains(" != ")
        || text.contains(" == ")
        || text.contains(", want ")
        || text.contains(" got ")
        || is_label(text)
}

/// A labelled caret line of a compiler diagnostic: `|     ^^^^^ expected i64, found u32`.
fn is_label(text: &str) -> bool {
    let text = text.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ' || c == '|');
    let marks = text
        .chars()
        .take_while(|c| matches!(c, '^' | '-' | '~'))
        .count();
    marks > 0 && text[marks..].trim_start().len() > 1
}

/// The line that ends a failure's report: the next test or step, or a section.
fn ends_report(line: &str) -> bool {
    let trimmed = line.trim_start();
    is_progress(line)
        || trimmed.starts_with("=== RUN")
        || trimmed.starts_with("# Subtest")
        || trimmed.starts_with("ok ")
        || trimmed.starts_with("___")
        || trimmed.starts_with("====")
        || trimmed.starts_with("----")
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // Lines after a problem line kept with it whatever they are (summary only: the
    // details that locate it are kept at every level).
    let context = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => 8,
        Level::Aggressive | Level::Minimal => 0,
    };
    let frames = trace::choose_frames(&lines, level);
    let mut keep = frames.keep.clone();
    let mut progress = 0usize;
    // Lines left in the current failure's report, and whether we are in one.
    let mut in_report = false;
    let mut after_problem = 0usize;
    for (index, line) in lines.iter().enumerate() {
        if frames.framed[index] {
            continue;
        }
        if is_result(line) {
            keep[index] = true;
            in_report = false;
            continue;
        }
        if is_progress(line) {
            progress += 1;
            in_report = false;
            continue;
        }
        if is_problem(line) {
            keep[index] = true;
            in_report = true;
            // A header that ends in a colon (`thread 't' panicked at src/lib.rs:66:40:`,
            // `error: |-`) continues on the next line: its message.
            after_problem = if line.trim_end().ends_with(':') {
                context.max(1)
            } else {
                context
            };
            continue;
        }
        if in_report && ends_report(line) {
            in_report = false;
        }
        if in_report && (is_detail(line) || after_problem > 0) && !line.trim().is_empty() {
            keep[index] = true;
        }
        after_problem = after_problem.saturating_sub(1);
    }
    // The same line again (one warning from many files) is counted on its first.
    let mut counted: Vec<(&str, usize)> = Vec::new();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, line) in lines.iter().enumerate() {
        if !keep[index] || trace::is_caret_line(line) {
            continue;
        }
        match seen.get(line) {
            Some(&at) => counted[at].1 += 1,
            None => {
                seen.insert(*line, counted.len());
                counted.push((*line, 1));
            }
        }
    }
    let mut out: Vec<String> = counted
        .into_iter()
        .map(|(line, count)| {
            if count > 1 {
                format!("{line} (×{count})")
            } else {
                line.to_owned()
            }
        })
        .collect();
    let kept = keep.iter().filter(|k| **k).count();
    let other = lines.len().saturating_sub(kept + progress);
    if level == Level::Summary {
        // Lines that are neither progress nor problems: a few, each shape once.
        let rest: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|(i, line)| {
                !keep[*i] && !frames.framed[*i] && !is_progress(line) && !line.trim().is_empty()
            })
            .map(|(_, line)| *line)
            .collect();
        let (folded, _) = super::fold(&rest, true);
        if !folded.is_empty() {
            out.push("[other lines, one of each shape:]".into());
            out.extend(folded.into_iter().take(8));
        }
    }
    out.push(format!(
        "[build output: {} lines; {progress} progress lines collapsed, {other} other lines left out]",
        lines.len()
    ));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_collapses_and_diagnostics_stay_with_their_location() {
        let mut text = String::new();
        for n in 0..40 {
            text.push_str(&format!("   Compiling crate{n} v0.{n}.0\n"));
        }
        text.push_str("warning: unused variable: `x`\n --> src/lib.rs:3:9\n  |\n3 |     let x = 1;\n  |         ^ help: prefix it\n\n");
        text.push_str(
            "error[E0425]: cannot find value `y` in this scope\n --> src/main.rs:2:5\n\n",
        );
        text.push_str("error: could not compile `demo` (bin \"demo\") due to 1 previous error\n");
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let out = compress(&text, level);
            for line in [
                "warning: unused variable: `x`",
                "--> src/lib.rs:3:9",
                "error[E0425]: cannot find value `y` in this scope",
                "--> src/main.rs:2:5",
                "error: could not compile `demo`",
            ] {
                assert!(out.contains(line), "{level}: {line}\n{out}");
            }
            assert!(!out.contains("Compiling crate7 "), "{level}");
        }
    }

    #[test]
    fn repeated_problems_are_counted_once_and_distinct_ones_all_stay() {
        let text = "warning: unused import\nwarning: unused import\nE   assert 1 == 2\nE   assert 3 == 4\n";
        let out = compress(text, Level::Minimal);
        assert!(out.contains("warning: unused import (×2)"), "{out}");
        assert!(
            out.contains("assert 1 == 2") && out.contains("assert 3 == 4"),
            "{out}"
        );
    }
}
