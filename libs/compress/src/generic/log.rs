//! Logs: lines that differ only in numbers, times and ids fold into their first
//! occurrence with a count; every error and warning line stays, each distinct one once.

use super::{fold, is_signal, template};
use crate::level::Level;

/// Whether a line looks like a log record: a leading timestamp or a level word.
pub(super) fn is_log_line(line: &str) -> bool {
    let trimmed = line.trim_start_matches(['[', ' ']);
    let bytes = trimmed.as_bytes();
    // 2026-01-02, 2026/01/02 (ISO dates), 10:00:01 (times), Jan 02 (syslog).
    let iso_date = bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && (bytes[4] == b'-' || bytes[4] == b'/')
        && bytes[5..7].iter().all(u8::is_ascii_digit);
    let time = bytes.len() >= 8
        && bytes[..2].iter().all(u8::is_ascii_digit)
        && bytes[2] == b':'
        && bytes[3..5].iter().all(u8::is_ascii_digit);
    const MONTHS: [&str; 12] = [
        "Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ", "Aug ", "Sep ", "Oct ", "Nov ",
        "Dec ",
    ];
    let syslog = MONTHS.iter().any(|m| trimmed.starts_with(m));
    const LEVELS: [&str; 10] = [
        "INFO", "WARN", "ERROR", "DEBUG", "TRACE", "FATAL", "level=", "I0", "W0", "E0",
    ];
    let level = LEVELS.iter().any(|l| {
        trimmed.starts_with(l)
            || trimmed
                .split_whitespace()
                .take(4)
                .any(|w| w.trim_matches(['[', ']', ':']) == *l)
    });
    iso_date || time || syslog || level
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let total = lines.len();
    let mut out = match level {
        Level::Off => return text.to_owned(),
        // Every distinct line shape once, with its count; every problem line.
        Level::Summary => fold(&lines, true).0,
        // Problem lines, then the ten most frequent shapes of the rest.
        Level::Aggressive => {
            let mut out = fold(&lines, false).0;
            out.extend(frequent(&lines, 10));
            out
        }
        Level::Minimal => fold(&lines, false).0,
    };
    let problems = lines.iter().filter(|l| is_signal(l)).count();
    out.push(format!(
        "[log: {total} lines, {} distinct shapes, {problems} error or warning lines]",
        distinct(&lines)
    ));
    out.join("\n")
}

fn distinct(lines: &[&str]) -> usize {
    lines
        .iter()
        .map(|l| template(l))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// The `limit` most frequent shapes among non-problem lines: `first line (×N similar)`.
pub(super) fn frequent(lines: &[&str], limit: usize) -> Vec<String> {
    let mut counts: Vec<(String, &str, usize)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in lines.iter().filter(|l| !is_signal(l)) {
        let key = template(line);
        match index.get(&key) {
            Some(&i) => counts[i].2 += 1,
            None => {
                index.insert(key.clone(), counts.len());
                counts.push((key, line, 1));
            }
        }
    }
    counts.sort_by_key(|count| std::cmp::Reverse(count.2));
    counts
        .into_iter()
        .take(limit)
        .map(|(_, line, n)| {
            if n > 1 {
                format!("{line} (×{n} similar)")
            } else {
                line.to_owned()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_fold_and_problems_stay() {
        let mut text = String::new();
        for n in 0..50 {
            text.push_str(&format!(
                "2026-01-02T10:00:{n:02}Z INFO GET /items/{n} 200 {n}ms\n"
            ));
        }
        text.push_str("2026-01-02T10:01:00Z ERROR db: connection refused\n");
        text.push_str("2026-01-02T10:01:01Z WARN retrying in 2s\n");
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let out = compress(&text, level);
            assert!(out.contains("ERROR db: connection refused"), "{level}");
            assert!(out.contains("WARN retrying in 2s"), "{level}");
            assert!(out.len() * 5 < text.len(), "{level}: {out}");
        }
        assert!(compress(&text, Level::Summary).contains("(×50 similar)"));
    }
}
