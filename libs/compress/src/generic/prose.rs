//! Prose: extractive. Sentences are scored by the rarity of their words in the text
//! (TF-IDF over sentences) with a bonus for a paragraph's first sentence; the best are
//! kept in their order, filler phrases are stripped, headings and problem sentences
//! always stay. Code fences stay at summary and are counted at the other levels.

use std::collections::HashMap;

use super::is_signal;
use crate::level::Level;

const STOP: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "this", "that", "with", "from", "they", "will", "would",
    "there", "their", "what", "about", "which", "when", "make", "like", "into", "than", "them",
    "then", "its", "also", "been", "some", "such", "these", "those", "only", "other", "more",
    "each", "may", "must", "should", "could", "does", "how", "who", "why", "where", "here",
];

const FILLER: &[(&str, &str)] = &[
    ("it is important to note that ", ""),
    ("it should be noted that ", ""),
    ("as a matter of fact, ", ""),
    ("in order to ", "to "),
    ("basically, ", ""),
    ("basically ", ""),
    ("actually, ", ""),
    ("actually ", ""),
    ("essentially ", ""),
    ("really ", ""),
    ("very ", ""),
    ("just ", ""),
    ("of course, ", ""),
    ("needless to say, ", ""),
];

fn words(sentence: &str) -> impl Iterator<Item = String> + '_ {
    sentence
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
}

fn strip_filler(sentence: &str) -> String {
    let mut out = sentence.to_owned();
    for (phrase, replacement) in FILLER {
        out = replace_words(&out, phrase, replacement);
        out = replace_words(&out, &capitalise(phrase), &capitalise(replacement));
    }
    out
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

/// Replaces `phrase` where it starts a word (not inside one: "every" keeps its "very").
fn replace_words(text: &str, phrase: &str, replacement: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(phrase) {
        let boundary = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
            && (at > 0 || out.chars().next_back().is_none_or(|c| !c.is_alphanumeric()));
        out.push_str(&rest[..at]);
        if boundary {
            out.push_str(replacement);
        } else {
            out.push_str(phrase);
        }
        rest = &rest[at + phrase.len()..];
    }
    out.push_str(rest);
    out
}

/// Splits a paragraph into sentences at `.`, `!` or `?` followed by a space.
fn sentences(paragraph: &str) -> Vec<String> {
    let flat = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = flat.as_bytes();
    for i in 0..bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1) == Some(&b' ')
            && bytes
                .get(i + 2)
                .is_some_and(|c| c.is_ascii_uppercase() || !c.is_ascii())
        {
            out.push(flat[start..=i].to_owned());
            start = i + 2;
        }
    }
    if start < flat.len() {
        out.push(flat[start..].to_owned());
    }
    out
}

enum Block {
    Heading(String),
    Code(Vec<String>),
    Paragraph(Vec<String>),
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut paragraph = String::new();
    let mut code: Option<Vec<String>> = None;
    let flush = |paragraph: &mut String, out: &mut Vec<Block>| {
        if !paragraph.trim().is_empty() {
            out.push(Block::Paragraph(sentences(paragraph)));
        }
        paragraph.clear();
    };
    for line in text.lines() {
        if let Some(lines) = code.as_mut() {
            lines.push(line.to_owned());
            if line.trim_start().starts_with("```") {
                out.push(Block::Code(code.take().unwrap_or_default()));
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            flush(&mut paragraph, &mut out);
            code = Some(vec![line.to_owned()]);
        } else if trimmed.starts_with('#') {
            flush(&mut paragraph, &mut out);
            out.push(Block::Heading(line.to_owned()));
        } else if trimmed.is_empty() || trimmed.starts_with("- ") || trimmed.starts_with("* ") {
            flush(&mut paragraph, &mut out);
            paragraph.push_str(trimmed);
            paragraph.push(' ');
        } else {
            paragraph.push_str(trimmed);
            paragraph.push(' ');
        }
    }
    if let Some(lines) = code {
        out.push(Block::Code(lines));
    }
    flush(&mut paragraph, &mut out);
    out
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let ratio = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => 0.5,
        Level::Aggressive => 0.3,
        Level::Minimal => 0.15,
    };
    let blocks = blocks(text);
    let all: Vec<&String> = blocks
        .iter()
        .flat_map(|b| match b {
            Block::Paragraph(s) => s.iter().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    let count = all.len().max(1) as f64;
    let mut document_frequency: HashMap<String, usize> = HashMap::new();
    for sentence in &all {
        let mut seen: Vec<String> = words(sentence).collect();
        seen.sort();
        seen.dedup();
        for word in seen {
            *document_frequency.entry(word).or_default() += 1;
        }
    }
    let score = |sentence: &str, first: bool| -> f64 {
        let terms: Vec<String> = words(sentence).collect();
        if terms.is_empty() {
            return 0.0;
        }
        let sum: f64 = terms
            .iter()
            .map(|w| (count / *document_frequency.get(w).unwrap_or(&1) as f64).ln() + 1.0)
            .sum();
        let base = sum / (terms.len() as f64).sqrt();
        if first { base * 1.3 } else { base }
    };
    // The score a sentence needs: the ratio's quantile over every sentence.
    let mut scores: Vec<f64> = Vec::new();
    for block in &blocks {
        if let Block::Paragraph(sentences) = block {
            for (i, s) in sentences.iter().enumerate() {
                scores.push(score(s, i == 0));
            }
        }
    }
    // The best `ratio` of sentences by score (earlier first among equals).
    let keep = ((scores.len() as f64 * ratio).ceil() as usize).max(1);
    let mut ranked: Vec<usize> = (0..scores.len()).collect();
    ranked.sort_by(|a, b| {
        scores[*b]
            .partial_cmp(&scores[*a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let chosen: std::collections::HashSet<usize> = ranked.into_iter().take(keep).collect();
    let mut out: Vec<String> = Vec::new();
    let mut index = 0;
    for block in &blocks {
        match block {
            Block::Heading(h) => out.push(h.clone()),
            Block::Code(lines) if level == Level::Summary => out.push(lines.join("\n")),
            Block::Code(lines) => out.push(format!("[code block: {} lines]", lines.len())),
            Block::Paragraph(sentences) => {
                let mut kept = Vec::new();
                for sentence in sentences {
                    if chosen.contains(&index) || is_signal(sentence) {
                        kept.push(strip_filler(sentence));
                    }
                    index += 1;
                }
                if !kept.is_empty() {
                    out.push(kept.join(" "));
                }
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_informative_sentences_in_order() {
        let text = "The gateway verifies the signed tenant context on every request. \
            It is very nice. It is really good. It is just fine. \
            When the context has expired, the gateway answers unauthenticated and logs the key id. \
            Basically it works.";
        let out = compress(text, Level::Aggressive);
        assert!(out.contains("signed tenant context"), "{out}");
        assert!(!out.contains("nice") && !out.contains("works"), "{out}");
        let summary = compress(text, Level::Summary);
        assert!(summary.contains("expired"), "{summary}");
        assert_eq!(
            strip_filler("In order to start, it is very simple."),
            "To start, it is simple."
        );
    }

    #[test]
    fn problem_sentences_always_stay() {
        let text = "Alpha beta gamma delta. Epsilon zeta eta theta. The upload failed with status 503. Iota kappa lambda.";
        assert!(compress(text, Level::Minimal).contains("failed with status 503"));
    }
}
