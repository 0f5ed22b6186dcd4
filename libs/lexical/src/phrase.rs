//! Phrase matches inside stored messages, without a pass per message.
//!
//! A query phrase matches a message when the message contains the phrase, or when a
//! message part of 16+ characters lies inside the phrase (messages are stored split at
//! their interpolations, so a query can run past a part). Both used to be a substring
//! search per message per query (a third of the lexical ranker's CPU under load on the
//! Python standard library); here the messages live in one lowercased buffer searched
//! once with a SIMD substring finder, and parts inside the phrase are found by the first
//! 16 characters of each part, looked up at every character of the phrase.

use memchr::memmem;
use rustc_hash::FxHashMap as HashMap;

/// A stored part this long (characters) or longer may match inside a query.
pub const PART_CHARS: usize = 16;

/// Between messages in the buffer; a match that spans it is discarded.
const SEPARATOR: u8 = 0;

#[derive(Debug, Default)]
pub struct Phrases {
    /// Every message lowercased, each followed by [`SEPARATOR`].
    text: Vec<u8>,
    /// Byte offset of each message in `text`.
    starts: Vec<u32>,
    /// Document of each message.
    documents: Vec<u32>,
    /// First [`PART_CHARS`] characters of each long enough message → its indexes.
    by_prefix: HashMap<String, Vec<u32>>,
}

fn prefix(text: &str) -> Option<&str> {
    match text.char_indices().nth(PART_CHARS) {
        Some((end, _)) => Some(&text[..end]),
        None if text.chars().count() == PART_CHARS => Some(text),
        None => None,
    }
}

impl Phrases {
    /// Stores `message` (lowercased) for `document`.
    pub fn push(&mut self, message: &str, document: u32) {
        let lowered = message.to_lowercase();
        let index = self.starts.len() as u32;
        self.starts.push(self.text.len() as u32);
        self.documents.push(document);
        self.text.extend_from_slice(lowered.as_bytes());
        self.text.push(SEPARATOR);
        if let Some(key) = prefix(&lowered) {
            self.by_prefix
                .entry(key.to_owned())
                .or_default()
                .push(index);
        }
    }

    /// The message holding byte `offset` of the buffer, and where that message ends.
    fn message_at(&self, offset: usize) -> (usize, usize) {
        let index = self.starts.partition_point(|s| (*s as usize) <= offset) - 1;
        let end = self
            .starts
            .get(index + 1)
            .map(|s| *s as usize - 1)
            .unwrap_or(self.text.len() - 1);
        (index, end)
    }

    /// Documents of the messages matching `phrase` (already lowercased), in the order the
    /// messages were stored, at most `limit`.
    pub fn matching(&self, phrase: &str, limit: usize) -> Vec<u32> {
        if phrase.is_empty() || self.starts.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<usize> = Vec::new();
        // The phrase inside a message.
        for at in memmem::find_iter(&self.text, phrase.as_bytes()) {
            let (index, end) = self.message_at(at);
            if at + phrase.len() <= end && found.last() != Some(&index) {
                found.push(index);
            }
        }
        // A long enough message inside the phrase.
        for (at, _) in phrase.char_indices() {
            let Some(key) = prefix(&phrase[at..]) else {
                break;
            };
            for index in self.by_prefix.get(key).into_iter().flatten() {
                let index = *index as usize;
                let start = self.starts[index] as usize;
                let (_, end) = self.message_at(start);
                if phrase.as_bytes()[at..].starts_with(&self.text[start..end]) {
                    found.push(index);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
            .into_iter()
            .take(limit)
            .map(|index| self.documents[index])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition the index answered before: a scan of every message.
    fn scan(messages: &[(&str, u32)], phrase: &str, limit: usize) -> Vec<u32> {
        messages
            .iter()
            .map(|(m, id)| (m.to_lowercase(), *id))
            .filter(|(m, _)| {
                m.contains(phrase)
                    || (m.chars().count() >= PART_CHARS && phrase.contains(m.as_str()))
            })
            .map(|(_, id)| id)
            .take(limit)
            .collect()
    }

    #[test]
    fn matches_what_a_scan_of_every_message_matches() {
        let messages = [
            (
                ") is no longer bundled with Express and must be installed separately",
                0,
            ),
            ("Router.use() requires a middleware function but got a", 1),
            ("short", 2),
            ("invalid literal for int() with base", 3),
            ("Ünïcödé characters before the part", 4),
            ("exactly sixteen!", 5),
            ("with base", 6),
            ("", 7),
            ("no longer bundled", 8),
        ];
        let mut phrases = Phrases::default();
        for (message, id) in messages {
            phrases.push(message, id);
        }
        for phrase in [
            "no longer bundled with express",
            "router.use() requires a middleware function but got a object",
            "why: invalid literal for int() with base 10",
            "ünïcödé characters before the part, and more",
            "we saw exactly sixteen! here",
            "with base",
            "bundled\0with",
            "separately\0router",
            "nothing like any of them",
            "e",
        ] {
            for limit in [1, 2, 10] {
                assert_eq!(
                    phrases.matching(phrase, limit),
                    scan(&messages, phrase, limit),
                    "{phrase:?} limit {limit}"
                );
            }
        }
    }
}
