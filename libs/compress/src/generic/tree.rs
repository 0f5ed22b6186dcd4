//! File trees (`tree` output, or one path per line as `find` and `git ls-files` print):
//! the upper levels as they are, deeper entries folded into counts.

use std::collections::BTreeMap;

use super::is_signal;
use crate::level::Level;

const DRAWING: [&str; 3] = ["├", "└", "│"];

fn is_path(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.contains(' ') && (line.contains('/') || line.contains('.'))
}

/// Whether the lines are a file tree.
pub(super) fn looks_like_tree(lines: &[&str]) -> bool {
    let drawn = lines
        .iter()
        .filter(|l| DRAWING.iter().any(|d| l.contains(d)))
        .count();
    if drawn >= 2 && drawn * 10 >= lines.len() * 3 {
        return true;
    }
    lines.len() >= 5 && lines.iter().filter(|l| is_path(l)).count() * 10 >= lines.len() * 9
}

/// Depth of a drawn tree line: its name's column, in four-column steps.
fn depth(line: &str) -> usize {
    let column = line
        .chars()
        .take_while(|c| !c.is_alphanumeric() && !matches!(c, '.' | '_' | '-' | '@'))
        .count();
    column.div_ceil(4)
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let (max_depth, names) = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => (3, 5),
        Level::Aggressive => (2, 2),
        Level::Minimal => (1, 0),
    };
    let drawn = lines.iter().any(|l| DRAWING.iter().any(|d| l.contains(d)));
    let mut out = Vec::new();
    if drawn {
        let mut hidden = 0;
        let mut hidden_depth = 0;
        for line in &lines {
            let d = depth(line);
            if d <= max_depth || is_signal(line) {
                if hidden > 0 {
                    out.push(format!("{}… {hidden} entries", "    ".repeat(hidden_depth)));
                    hidden = 0;
                }
                out.push((*line).to_owned());
            } else {
                if hidden == 0 {
                    hidden_depth = d;
                }
                hidden += 1;
            }
        }
        if hidden > 0 {
            out.push(format!("{}… {hidden} entries", "    ".repeat(hidden_depth)));
        }
    } else {
        // Paths: one line per directory with its file count and first names.
        let mut directories: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for line in &lines {
            let path = line.trim();
            let (directory, name) = path.rsplit_once('/').unwrap_or((".", path));
            directories.entry(directory).or_default().push(name);
        }
        for (directory, files) in &directories {
            if names == 0 {
                out.push(format!("{directory}/ ({} files)", files.len()));
                continue;
            }
            let shown: Vec<&str> = files.iter().take(names).copied().collect();
            let more = if files.len() > names {
                format!(", … {} more", files.len() - names)
            } else {
                String::new()
            };
            out.push(format!(
                "{directory}/ ({}): {}{more}",
                files.len(),
                shown.join(", ")
            ));
        }
    }
    out.push(format!("[file tree: {} entries]", lines.len()));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_group_by_directory() {
        let text: String = (0..40)
            .map(|n| format!("src/module{}/file{n}.rs\n", n % 4))
            .collect();
        let out = compress(&text, Level::Summary);
        assert!(out.contains("src/module0/ (10): file0.rs"), "{out}");
        assert!(out.len() * 2 < text.len());
    }

    #[test]
    fn deep_entries_fold() {
        let text = "repo\n├── a\n│   └── b\n│       └── c\n│           └── d\n│               └── e.rs\n└── f.rs\n";
        let out = compress(text, Level::Minimal);
        assert!(out.contains("├── a") && out.contains("└── f.rs"));
        assert!(!out.contains("e.rs"), "{out}");
    }
}
