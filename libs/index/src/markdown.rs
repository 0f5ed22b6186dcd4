//! Markdown: ATX headings become sections (to the next heading of the same or a higher
//! level), and code spans in a section are candidate symbol mentions.

use codectx_graph::model::span_fingerprint;

use crate::facts::SectionFact;

/// Sections of a Markdown document.
pub fn sections(text: &str) -> Vec<SectionFact> {
    let lines: Vec<&str> = text.lines().collect();
    let mut headings: Vec<(usize, u32, String)> = Vec::new();
    let mut fenced = false;
    for (number, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with(' ') {
            let heading = trimmed[level..]
                .trim()
                .trim_end_matches('#')
                .trim()
                .to_owned();
            if !heading.is_empty() {
                let heading = crate::redact::text(&heading).into_owned();
                headings.push((number, level as u32, heading));
            }
        }
    }
    let mut out = Vec::with_capacity(headings.len());
    for (position, (start, level, heading)) in headings.iter().enumerate() {
        let end = headings[position + 1..]
            .iter()
            .find(|(_, other, _)| other <= level)
            .map(|(line, _, _)| *line)
            .unwrap_or(lines.len());
        let start_line = *start as u32 + 1;
        let end_line = (end as u32).max(start_line);
        let body = lines[*start..end].join("\n");
        out.push(SectionFact {
            heading: heading.clone(),
            level: *level,
            start_line,
            end_line,
            mentions: code_spans(&body),
            fingerprint: span_fingerprint(text, start_line, end_line).unwrap_or_default(),
        });
    }
    out
}

/// Inline code spans that look like identifiers or qualified names.
fn code_spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        if let Some(stripped) = after.strip_prefix("``") {
            rest = stripped;
            continue;
        }
        let Some(close) = after.find('`') else { break };
        let span = after[..close].trim().trim_end_matches("()");
        let identifier_like = !span.is_empty()
            && span.len() <= 200
            && span.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '*' | '(' | ')' | '#')
            })
            && span
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '(');
        if identifier_like && !out.iter().any(|o: &String| o == span) {
            out.push(span.to_owned());
        }
        rest = &after[close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_sections_and_mentions() {
        let text = "# Title\nIntro `Engine`.\n## Routing\nUse `Engine.ServeHTTP()` and `x + y`.\n```\n# not a heading\n```\n# Next\n";
        let sections = sections(text);
        assert_eq!(
            sections
                .iter()
                .map(|s| (s.heading.as_str(), s.start_line, s.end_line))
                .collect::<Vec<_>>(),
            vec![("Title", 1, 7), ("Routing", 3, 7), ("Next", 8, 8)]
        );
        assert_eq!(sections[1].mentions, vec!["Engine.ServeHTTP"]);
        assert!(sections[0].mentions.contains(&"Engine".to_owned()));
    }
}
