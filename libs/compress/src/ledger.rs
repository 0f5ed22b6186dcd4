//! Session dedup: an answer this MCP session already received, unchanged, comes back as
//! a one-line reference to the call that carried it, instead of its full text.
//!
//! Keyed by the SHA-256 of the text the agent would receive, so an answer that changed
//! in any byte (the code was re-indexed, memory was written) is always sent in full.
//! Never deduplicated ([`crate::Engine`] decides): errors, snippets (`get_code_snippet`),
//! writes, answers under [`MIN_TOKENS`], a call with `fresh: true`, `detail: true` or
//! `for_edit: true`, a call on the focus set, and a call that asked for structured
//! content (programs get full answers). A ledger belongs to one MCP session (each
//! session gets its own, so nothing crosses sessions, subjects or tenants) and holds at
//! most [`MAX_ENTRIES`] answers, forgetting the oldest.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use sha2::{Digest, Sha256};

/// Answers smaller than this many tokens (ceil(bytes/4)) are always sent: a reference
/// would save too little.
pub const MIN_TOKENS: usize = 100;
/// Answers remembered per session.
pub const MAX_ENTRIES: usize = 512;
/// The argument with which a call asks for the full answer again.
pub const FRESH_ARGUMENT: &str = "fresh";

#[derive(Debug, Clone)]
struct Sent {
    call: u64,
    tool: String,
    at: Instant,
}

/// What one MCP session has received.
#[derive(Debug, Default)]
pub struct SessionLedger {
    calls: u64,
    sent: HashMap<[u8; 32], Sent>,
    order: VecDeque<[u8; 32]>,
}

impl SessionLedger {
    /// Counts a call; returns its number in the session (1-based).
    pub fn next_call(&mut self) -> u64 {
        self.calls += 1;
        self.calls
    }

    /// Answers remembered now.
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    /// For call number `call` of `tool` whose full text is `text`: the reference to send
    /// instead when the session already received exactly this text (and `dedup` allows
    /// it), else None after remembering the text as sent now.
    pub fn answer(
        &mut self,
        call: u64,
        tool: &str,
        text: &str,
        dedup: bool,
        now: Instant,
    ) -> Option<String> {
        let key: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        if dedup
            && text.len().div_ceil(4) >= MIN_TOKENS
            && let Some(earlier) = self.sent.get(&key)
        {
            let status = text.lines().next().unwrap_or("status: ok");
            return Some(format!(
                "{status}\nunchanged: the same answer as call {} ({}, {} s ago) in this session; \
                 nothing in it changed since. Repeat the call with \"{FRESH_ARGUMENT}\": true to \
                 receive it in full.\n",
                earlier.call,
                earlier.tool,
                now.saturating_duration_since(earlier.at).as_secs()
            ));
        }
        if !self.sent.contains_key(&key) {
            if self.order.len() == MAX_ENTRIES
                && let Some(oldest) = self.order.pop_front()
            {
                self.sent.remove(&oldest);
            }
            self.order.push_back(key);
        }
        self.sent.insert(
            key,
            Sent {
                call,
                tool: tool.to_owned(),
                at: now,
            },
        );
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(text: &str) -> String {
        format!("status: ok\n{}", text.repeat(100))
    }

    #[test]
    fn a_repeated_unchanged_answer_becomes_a_reference() {
        let mut ledger = SessionLedger::default();
        let now = Instant::now();
        let answer = long("function server.Run server/server.go:51-56\n");
        assert_eq!(
            ledger.answer(1, "get_symbol_context", &answer, true, now),
            None
        );
        let reference = ledger
            .answer(2, "get_symbol_context", &answer, true, now)
            .expect("deduplicated");
        assert!(
            reference.starts_with(
                "status: ok\nunchanged: the same answer as call 1 (get_symbol_context"
            )
        );
        assert!(reference.contains("\"fresh\": true"));
        assert!(reference.len() * 10 < answer.len());
    }

    #[test]
    fn a_changed_answer_is_always_sent() {
        let mut ledger = SessionLedger::default();
        let now = Instant::now();
        let before = long("function server.Run server/server.go:51-56\n");
        let after = before.replacen("51-56", "51-57", 1);
        assert_eq!(ledger.answer(1, "search", &before, true, now), None);
        assert_eq!(ledger.answer(2, "search", &after, true, now), None);
        // Both are remembered: either, repeated, is a reference.
        assert!(ledger.answer(3, "search", &before, true, now).is_some());
        assert!(ledger.answer(4, "search", &after, true, now).is_some());
    }

    #[test]
    fn small_answers_and_bypassed_calls_are_sent_in_full() {
        let mut ledger = SessionLedger::default();
        let now = Instant::now();
        let small = "status: not_found\nnotice: nothing matches\n";
        assert_eq!(ledger.answer(1, "search", small, true, now), None);
        assert_eq!(ledger.answer(2, "search", small, true, now), None);
        let answer = long("a longer line\n");
        assert_eq!(ledger.answer(3, "recall", &answer, false, now), None);
        // Sent in full (fresh, or structured) still counts as sent.
        assert!(ledger.answer(4, "recall", &answer, true, now).is_some());
        assert_eq!(ledger.answer(5, "recall", &answer, false, now), None);
    }

    #[test]
    fn the_ledger_is_bounded() {
        let mut ledger = SessionLedger::default();
        let now = Instant::now();
        for n in 0..(MAX_ENTRIES + 10) {
            ledger.answer(n as u64, "search", &long(&format!("{n}\n")), true, now);
        }
        assert_eq!(ledger.sent.len(), MAX_ENTRIES);
        // The oldest were forgotten: sent in full again.
        assert_eq!(ledger.answer(0, "search", &long("0\n"), true, now), None);
        assert!(
            ledger
                .answer(
                    1,
                    "search",
                    &long(&format!("{}\n", MAX_ENTRIES + 9)),
                    true,
                    now
                )
                .is_some()
        );
    }
}
