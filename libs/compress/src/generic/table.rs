//! Tables (markdown, TSV, CSV, space-aligned columns as `kubectl get` prints them): the
//! header, a row count, the first and last rows, and every row that reports a problem.

use super::is_signal;
use crate::level::Level;

fn columns(line: &str) -> usize {
    line.split("  ").filter(|c| !c.trim().is_empty()).count()
}

/// Whether the lines are rows of one table.
pub(super) fn looks_like_table(lines: &[&str]) -> bool {
    if lines.len() < 3 {
        return false;
    }
    let most = |test: &dyn Fn(&str) -> bool| {
        lines.iter().filter(|l| test(l)).count() * 10 >= lines.len() * 8
    };
    if most(&|l: &str| l.trim_start().starts_with('|')) {
        return true;
    }
    for delimiter in ['\t', ','] {
        let count = lines[0].matches(delimiter).count();
        if count >= 1
            && (delimiter == '\t' || count >= 2)
            && most(&|l: &str| l.matches(delimiter).count() == count)
        {
            return true;
        }
    }
    // Space-aligned: an upper-case header and rows with as many columns.
    let header = lines[0];
    let width = columns(header);
    width >= 2
        && header.chars().any(|c| c.is_ascii_uppercase())
        && !header.chars().any(|c| c.is_ascii_lowercase())
        && most(&|l: &str| columns(l).abs_diff(width) <= 1)
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let (first, last) = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => (5, 2),
        Level::Aggressive => (3, 1),
        Level::Minimal => (0, 0),
    };
    // Markdown tables carry a separator row under the header.
    let header_rows = if lines.get(1).is_some_and(|l| {
        l.trim_start().starts_with("|-")
            || l.trim_start().starts_with("| -")
            || l.trim_start().starts_with("|:")
    }) {
        2
    } else {
        1
    };
    let header_rows = header_rows.min(lines.len());
    let rows = &lines[header_rows..];
    let mut out: Vec<String> = lines[..header_rows]
        .iter()
        .map(|l| (*l).to_owned())
        .collect();
    let mut hidden = 0;
    for (index, row) in rows.iter().enumerate() {
        if index < first || index + last >= rows.len() || is_signal(row) {
            if hidden > 0 {
                out.push(format!("… {hidden} rows"));
                hidden = 0;
            }
            out.push((*row).to_owned());
        } else {
            hidden += 1;
        }
    }
    if hidden > 0 {
        out.push(format!("… {hidden} rows"));
    }
    out.push(format!("[table: {} rows]", rows.len()));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_rows_survive() {
        let mut text = String::from("NAME      READY   STATUS             RESTARTS\n");
        for n in 0..30 {
            let status = if n == 17 {
                "CrashLoopBackOff   12"
            } else {
                "Running            0"
            };
            text.push_str(&format!("api-{n:<5} 1/1     {status}\n"));
        }
        assert!(looks_like_table(&text.lines().collect::<Vec<_>>()));
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let out = compress(&text, level);
            assert!(
                out.contains("api-17") && out.contains("CrashLoopBackOff"),
                "{level}"
            );
            assert!(out.starts_with("NAME"), "{level}");
            assert!(out.contains("[table: 30 rows]"));
        }
    }
}
