//! What one MCP session holds for compression: its calls and token budget, the ledger
//! of answers sent (session dedup), the focus set, the per-tool detail rates of the
//! quality monitor, and the failures counted.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::ledger::SessionLedger;
use crate::level::{Level, LevelSetting, LevelSource};
use crate::parts::PartsLedger;
use crate::stated::StatedHeaders;

/// A symbol or file just opened for reading source or for editing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FocusEntry {
    /// The `symbol` argument it was opened with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The last call number it covers.
    pub until_call: u64,
}

/// Per-tool counts (the quality monitor reads `calls` and `detail`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    pub calls: u64,
    pub detail: u64,
    pub tokens_raw: u64,
    pub tokens_sent: u64,
    pub dedup_hits: u64,
    pub bypasses: u64,
}

impl ToolStats {
    /// More than 30% of at least 5 calls asked for detail: the compressed answers were
    /// not enough, so this tool stays at summary or below for the rest of the session.
    pub fn capped_at_summary(&self) -> bool {
        self.calls >= QUALITY_MIN_CALLS && self.detail * 10 > self.calls * 3
    }
}

/// Calls a tool needs before the quality monitor judges it.
pub const QUALITY_MIN_CALLS: u64 = 5;

/// One session's compression state.
#[derive(Debug, Default)]
pub struct Session {
    /// A number unique in the gateway's lifetime (cross-session dedup tells sessions
    /// apart by it).
    pub(crate) id: u64,
    pub(crate) calls: u64,
    pub(crate) tokens_raw: u64,
    pub(crate) tokens_sent: u64,
    pub(crate) ledger: SessionLedger,
    pub(crate) parts: PartsLedger,
    pub(crate) part_references: u64,
    pub(crate) stated: StatedHeaders,
    pub(crate) focus: Vec<FocusEntry>,
    pub(crate) tools: BTreeMap<String, ToolStats>,
    pub(crate) failures: u64,
    pub(crate) dedup_hits: u64,
    pub(crate) cross_session_hits: u64,
    pub(crate) bypasses: u64,
    pub(crate) last_level: Option<Level>,
}

impl Session {
    pub fn new() -> Session {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Session {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Default::default()
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Drops focus entries past their window.
    pub(crate) fn expire_focus(&mut self) {
        let call = self.calls;
        self.focus.retain(|entry| entry.until_call >= call);
    }

    /// Whether a call is about something in focus: its `symbol` argument names a
    /// focused symbol (as it was asked for, or by its qualified name), its subject is a
    /// focused symbol, or its `files` (or the files of its `diff`) include a focused
    /// file. A free-text query never matches (Infigraph's rule: no false positives on
    /// search), and neither does another symbol of a focused file.
    pub(crate) fn in_focus(
        &self,
        arguments: &serde_json::Map<String, Value>,
        answer: &Value,
    ) -> bool {
        let symbol = arguments.get("symbol").and_then(Value::as_str);
        let mut files: Vec<&str> = arguments
            .get("files")
            .and_then(Value::as_array)
            .map(|files| files.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(diff) = arguments.get("diff").and_then(Value::as_str) {
            files.extend(diff.lines().filter_map(|line| {
                line.strip_prefix("+++ b/")
                    .or_else(|| line.strip_prefix("--- a/"))
            }));
        }
        let subject = answer.get("entries").and_then(|e| e.get(0));
        let subject_name = subject
            .and_then(|s| s.get("qualified_name"))
            .and_then(Value::as_str);
        self.focus.iter().any(|entry| {
            let same = |a: Option<&str>, b: &Option<String>| {
                matches!((a, b), (Some(a), Some(b)) if a == b)
            };
            same(symbol, &entry.symbol)
                || same(symbol, &entry.qualified_name)
                || same(subject_name, &entry.qualified_name)
                || files.iter().any(|file| same(Some(file), &entry.path))
        })
    }

    /// Puts a call's subject in focus for the next `window` calls.
    pub(crate) fn add_focus(
        &mut self,
        arguments: &serde_json::Map<String, Value>,
        answer: &Value,
        window: u64,
    ) {
        let subject = answer.get("entries").and_then(|e| e.get(0));
        let text = |value: Option<&Value>| {
            value
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let entry = FocusEntry {
            symbol: text(arguments.get("symbol")),
            qualified_name: text(subject.and_then(|s| s.get("qualified_name"))),
            path: text(subject.and_then(|s| s.get("path"))),
            until_call: self.calls + window,
        };
        if entry.symbol.is_none() && entry.qualified_name.is_none() && entry.path.is_none() {
            return;
        }
        self.focus.retain(|e| {
            !(e.qualified_name == entry.qualified_name
                && e.path == entry.path
                && e.symbol == entry.symbol)
        });
        // A bounded set: the oldest focus goes first.
        if self.focus.len() >= MAX_FOCUS {
            self.focus.remove(0);
        }
        self.focus.push(entry);
    }

    /// The statistics `get_compression_stats` reports.
    pub fn stats(&self, setting: LevelSetting, source: LevelSource, budget: u64) -> Stats {
        let remaining = budget.saturating_sub(self.tokens_sent);
        Stats {
            level: setting.as_str(),
            level_source: source.as_str(),
            current_level: setting
                .resolve(remaining_share(self.tokens_sent, budget))
                .as_str(),
            budget: Budget {
                tokens: budget,
                used: self.tokens_sent,
                remaining,
            },
            calls: self.calls,
            tokens_raw: self.tokens_raw,
            tokens_sent: self.tokens_sent,
            saved_percent: if self.tokens_raw == 0 {
                0.0
            } else {
                ((self.tokens_raw.saturating_sub(self.tokens_sent)) as f64 * 1000.0
                    / self.tokens_raw as f64)
                    .round()
                    / 10.0
            },
            dedup_entries: self.ledger.len() + self.parts.len(),
            part_references: self.part_references,
            headers_left_out: self.stated.elided(),
            dedup_hits: self.dedup_hits,
            cross_session_hits: self.cross_session_hits,
            focus: self
                .focus
                .iter()
                .filter(|e| e.until_call > self.calls)
                .cloned()
                .collect(),
            bypasses: self.bypasses,
            failures: self.failures,
            tools: self
                .tools
                .iter()
                .map(|(name, stats)| {
                    (
                        name.clone(),
                        ToolReport {
                            calls: stats.calls,
                            detail_requests: stats.detail,
                            detail_rate_percent: (stats.detail * 100)
                                .checked_div(stats.calls)
                                .unwrap_or(0),
                            capped_at_summary: stats.capped_at_summary(),
                            tokens_raw: stats.tokens_raw,
                            tokens_sent: stats.tokens_sent,
                            dedup_hits: stats.dedup_hits,
                        },
                    )
                })
                .collect(),
        }
    }
}

/// Focus entries a session holds at most.
pub const MAX_FOCUS: usize = 32;

/// Share of the budget left (0.0-1.0).
pub(crate) fn remaining_share(used: u64, budget: u64) -> f64 {
    if budget == 0 {
        return 0.0;
    }
    1.0 - (used as f64 / budget as f64).min(1.0)
}

/// `get_compression_stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub level: &'static str,
    pub level_source: &'static str,
    pub current_level: &'static str,
    pub budget: Budget,
    pub calls: u64,
    pub tokens_raw: u64,
    pub tokens_sent: u64,
    pub saved_percent: f64,
    pub dedup_entries: usize,
    pub dedup_hits: u64,
    /// Entries and neighbour lists sent as references to an earlier call.
    pub part_references: u64,
    /// Header lines (`index:`, `names relative to`) left out because the session's
    /// last answer that carried them said the same.
    pub headers_left_out: u64,
    pub cross_session_hits: u64,
    pub focus: Vec<FocusEntry>,
    pub bypasses: u64,
    pub failures: u64,
    pub tools: BTreeMap<String, ToolReport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub tokens: u64,
    pub used: u64,
    pub remaining: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolReport {
    pub calls: u64,
    pub detail_requests: u64,
    pub detail_rate_percent: u64,
    pub capped_at_summary: bool,
    pub tokens_raw: u64,
    pub tokens_sent: u64,
    pub dedup_hits: u64,
}

impl Stats {
    /// The compact text a model reads.
    pub fn render(&self) -> String {
        let mut out = format!(
            "status: ok\nlevel: {} (from {}; now {})\nbudget: {} of {} tokens used, {} left\ncalls: {}, tokens {} raw -> {} sent ({}% saved)\ndedup: {} answers and parts held, {} session hits, {} parts referenced, {} cross-session hits, {} header lines left out (stated before)\nbypasses: {}\nfailures: {}\n",
            self.level,
            self.level_source,
            self.current_level,
            self.budget.used,
            self.budget.tokens,
            self.budget.remaining,
            self.calls,
            self.tokens_raw,
            self.tokens_sent,
            self.saved_percent,
            self.dedup_entries,
            self.dedup_hits,
            self.part_references,
            self.cross_session_hits,
            self.headers_left_out,
            self.bypasses,
            self.failures,
        );
        if self.focus.is_empty() {
            out.push_str("focus: none\n");
        }
        for entry in &self.focus {
            let what = entry
                .qualified_name
                .as_deref()
                .or(entry.symbol.as_deref())
                .unwrap_or("");
            out.push_str(&format!(
                "focus: {what} {} (until call {})\n",
                entry.path.as_deref().unwrap_or(""),
                entry.until_call
            ));
        }
        for (name, tool) in &self.tools {
            out.push_str(&format!(
                "tool {name}: {} calls, detail {} ({}%){}, tokens {} -> {}, {} dedup hits\n",
                tool.calls,
                tool.detail_requests,
                tool.detail_rate_percent,
                if tool.capped_at_summary {
                    ", capped at summary"
                } else {
                    ""
                },
                tool.tokens_raw,
                tool.tokens_sent,
                tool.dedup_hits,
            ));
        }
        out
    }
}
