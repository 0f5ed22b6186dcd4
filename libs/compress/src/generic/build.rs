//! Build and test output (cargo, go test, pytest, Maven, npm, ...): progress lines
//! (compiling, downloading, passing tests) collapse into counts; every error, warning
//! and failure stays with the lines that locate it, and so do the result lines.

use super::{fold, is_signal};
use crate::level::Level;

/// Progress lines of the common tools: counted, not shown.
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
    "=== RUN",
    "=== PAUSE",
    "=== CONT",
    "--- PASS",
    "PASS",
    "[INFO] Download",
    "[INFO] ---",
    "[INFO] ",
    "npm http",
    "npm timing",
    "npm sill",
    "npm verb",
    "collecting ",
    "collected ",
];

/// Result lines: short and what a reader looks for first.
const RESULTS: &[&str] = &[
    "test result:",
    "Finished ",
    "BUILD SUCCESS",
    "BUILD FAILURE",
    "Tests run:",
    "Total time",
    "FAIL",
    "ok  ",
    "passed",
    "failed",
    "error: could not compile",
    "short test summary",
    "npm ERR!",
    "added ",
    "found 0 vulnerabilities",
];

/// Whether a line is typical of a build or test tool.
pub(super) fn is_build_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    PROGRESS.iter().any(|p| trimmed.starts_with(p))
        || RESULTS.iter().any(|r| trimmed.starts_with(r))
        || trimmed.starts_with("error[")
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
}

fn is_progress(line: &str) -> bool {
    let trimmed = line.trim_start();
    !is_signal(line)
        && (PROGRESS.iter().any(|p| trimmed.starts_with(p))
            || trimmed.ends_with(" PASSED")
            || trimmed.ends_with(" ok")
            || trimmed.starts_with("test ") && trimmed.ends_with("... ok"))
}

/// A problem line: a signal word, or pytest's failing-line (`>`) and explanation
/// (`E`) lines.
fn is_problem(line: &str) -> bool {
    (is_signal(line) && !is_progress(line)) || line.starts_with("E   ") || line.starts_with(">   ")
}

fn is_result(line: &str) -> bool {
    let trimmed = line.trim_start();
    RESULTS.iter().any(|r| trimmed.starts_with(r))
        || (trimmed.starts_with('=')
            && (trimmed.contains(" passed") || trimmed.contains(" failed")))
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // How many lines after a problem line belong to it (its location and code).
    let context = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => 12,
        Level::Aggressive => 3,
        Level::Minimal => 0,
    };
    let mut keep = vec![false; lines.len()];
    let mut progress = 0usize;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if is_problem(line) {
            keep[index] = true;
            // The diagnostic's block: up to `context` lines, until a blank line or the
            // next diagnostic.
            let mut next = index + 1;
            while next < lines.len()
                && next <= index + context
                && !lines[next].trim().is_empty()
                && (!is_signal(lines[next]) || lines[next].starts_with([' ', '\t', '|']))
            {
                keep[next] = true;
                next += 1;
            }
            index = next;
            continue;
        }
        if is_result(line) {
            keep[index] = true;
        } else if is_progress(line) {
            progress += 1;
        }
        index += 1;
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, keep)| **keep)
        .map(|(line, _)| *line)
        .collect();
    // Identical problem lines (the same warning from many files) fold with a count.
    let (mut out, _) = fold(&kept, true);
    let other = lines.len() - kept.len() - progress;
    if level == Level::Summary {
        // Lines that are neither progress nor problems: each shape once.
        let rest: Vec<&str> = lines
            .iter()
            .zip(&keep)
            .filter(|(line, keep)| !**keep && !is_progress(line) && !line.trim().is_empty())
            .map(|(line, _)| *line)
            .collect();
        let (folded, _) = fold(&rest, true);
        if !folded.is_empty() {
            out.push("[other lines, one of each shape:]".into());
            out.extend(folded.into_iter().take(20));
        }
    }
    out.push(format!(
        "[build output: {} lines; {progress} progress lines collapsed, {other} other lines]",
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
                "error[E0425]: cannot find value `y` in this scope",
                "error: could not compile `demo`",
            ] {
                assert!(out.contains(line), "{level}: {line}");
            }
            assert!(!out.contains("Compiling crate7 "), "{level}");
        }
        assert!(compress(&text, Level::Summary).contains("--> src/main.rs:2:5"));
    }
}
