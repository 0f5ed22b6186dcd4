//! The pipeline every tool answer passes through where the session lives (the gateway):
//! bypass checks, the tool's compressor at the session's level, then session and
//! cross-session dedup. A panic anywhere in compression or dedup returns the raw answer
//! and is counted.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::generic::tokens;
use crate::ledger::{FRESH_ARGUMENT, MIN_TOKENS};
use crate::level::{Level, LevelSetting, LevelSource};
use crate::session::{Session, remaining_share};
use crate::store::{CrossSessionStore, Principal, StoreLimits, Totals, unix};
use crate::tools::{self, Compressor, Tool};

/// Arguments every compressed tool takes.
pub const DETAIL_ARGUMENT: &str = "detail";
pub const FOR_EDIT_ARGUMENT: &str = "for_edit";
pub const LEVEL_ARGUMENT: &str = "compression";

/// The tool whose answers put their subject in focus.
pub const SNIPPET_TOOL: &str = "get_code_snippet";

/// Configuration of the engine (the gateway's `[mcp.compression]` section).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompressionConfig {
    /// off, summary (default), aggressive, minimal or auto.
    pub level: LevelSetting,
    /// The session token budget `auto` measures against.
    pub token_budget: u64,
    /// Session dedup: a repeated, unchanged answer comes back as a reference.
    pub dedup: bool,
    /// Cross-session dedup per tenant and subject.
    pub cross_session: bool,
    /// How long a cross-session entry may be referenced, in seconds.
    pub cross_session_ttl_seconds: u64,
    /// Cross-session entries per tenant and subject.
    pub cross_session_entries: usize,
    /// Principals (tenant and subject) the cross-session store holds.
    pub cross_session_principals: usize,
    /// Where the cross-session store is saved (empty: memory only).
    pub state_file: String,
    /// Calls for which a symbol or file opened with get_code_snippet or for_edit
    /// bypasses compression and dedup.
    pub focus_window: u64,
}

impl Default for CompressionConfig {
    fn default() -> Self {
        CompressionConfig {
            level: LevelSetting::Summary,
            token_budget: 150_000,
            dedup: true,
            cross_session: true,
            cross_session_ttl_seconds: 3_600,
            cross_session_entries: 256,
            cross_session_principals: 4_096,
            state_file: String::new(),
            focus_window: 6,
        }
    }
}

impl CompressionConfig {
    pub fn store_limits(&self) -> StoreLimits {
        StoreLimits {
            entries_per_principal: self.cross_session_entries.max(1),
            principals: self.cross_session_principals.max(1),
            ttl: std::time::Duration::from_secs(self.cross_session_ttl_seconds),
        }
    }
}

/// Why an answer travelled uncompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bypass {
    Detail,
    ForEdit,
    Focus,
    Snippet,
    Write,
    Small,
    Structured,
    NotCompressed,
    LevelOff,
}

/// What happened to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Compressed,
    Bypassed(Bypass),
    /// The same text as an earlier call of this session.
    SessionReference,
    /// The same text as an earlier session of this tenant and subject received.
    CrossSessionReference,
    /// Compression failed; the raw answer went out.
    Failed,
}

/// The text to send and how it came about.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub text: String,
    pub level: Level,
    pub outcome: Outcome,
}

/// A call as the engine needs it.
pub struct Call<'a> {
    pub tool: &'a str,
    pub arguments: &'a Map<String, Value>,
    /// The client asked for structured content: programs get full answers.
    pub structured: bool,
    /// The verified tenant and subject, when the call was authorized.
    pub principal: Option<Principal>,
    /// What the call ran against (the repository or graph id), part of the
    /// cross-session key.
    pub scope: &'a str,
}

/// Options a call carries in its arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallOptions {
    pub detail: bool,
    pub for_edit: bool,
    pub fresh: bool,
    pub level: Option<LevelSetting>,
}

impl CallOptions {
    /// Reads the options (the gateway checked their types against the schema).
    pub fn of(arguments: &Map<String, Value>) -> CallOptions {
        let flag = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        CallOptions {
            detail: flag(DETAIL_ARGUMENT),
            for_edit: flag(FOR_EDIT_ARGUMENT),
            fresh: flag(FRESH_ARGUMENT),
            level: arguments
                .get(LEVEL_ARGUMENT)
                .and_then(Value::as_str)
                .and_then(LevelSetting::parse),
        }
    }
}

/// The engine: configuration, the compressor in use and the cross-session store.
pub struct Engine {
    config: CompressionConfig,
    source: LevelSource,
    compressor: Compressor,
    store: Arc<CrossSessionStore>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.config)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine with the built-in compressors; `source` says where `config.level`
    /// came from.
    pub fn new(
        config: CompressionConfig,
        source: LevelSource,
        store: Arc<CrossSessionStore>,
    ) -> Engine {
        Engine {
            config,
            source,
            compressor: tools::compress,
            store,
        }
    }

    /// The same engine with another compressor (tests prove the failure path with it).
    pub fn with_compressor(mut self, compressor: Compressor) -> Engine {
        self.compressor = compressor;
        self
    }

    pub fn config(&self) -> &CompressionConfig {
        &self.config
    }

    pub fn source(&self) -> LevelSource {
        self.source
    }

    pub fn store(&self) -> &Arc<CrossSessionStore> {
        &self.store
    }

    /// Counts a call that failed (errors travel uncompressed).
    pub fn count_error(&self, session: &Mutex<Session>, tool: &str) {
        let mut session = lock(session);
        session.calls += 1;
        session.bypasses += 1;
        session.tools.entry(tool.to_owned()).or_default().calls += 1;
    }

    /// The text an answer travels as. `render` turns an answer into the text a model
    /// reads.
    pub fn deliver(
        &self,
        session: &Mutex<Session>,
        call: &Call<'_>,
        answer: &Value,
        render: fn(&Value) -> String,
    ) -> Delivered {
        let options = CallOptions::of(call.arguments);
        let tool = Tool::from_name(call.tool);
        // Count the call, choose its level, check the focus set.
        let (number, session_id, level, in_focus) = {
            let mut session = lock(session);
            session.calls += 1;
            session.expire_focus();
            let stats = session.tools.entry(call.tool.to_owned()).or_default();
            stats.calls += 1;
            if options.detail {
                stats.detail += 1;
            }
            let capped = stats.capped_at_summary();
            let setting = options.level.unwrap_or(self.config.level);
            let mut level = setting.resolve(remaining_share(
                session.tokens_sent,
                self.config.token_budget,
            ));
            if let Some(tool) = tool {
                level = level.min(tool.cap());
            }
            if capped {
                level = level.min(Level::Summary);
            }
            session.last_level = Some(level);
            let in_focus = session.in_focus(call.arguments, answer);
            (session.calls, session.id, level, in_focus)
        };
        let raw = render(answer);
        let raw_tokens = tokens(&raw);
        let bypass = if call.structured {
            Some(Bypass::Structured)
        } else if call.tool == SNIPPET_TOOL {
            Some(Bypass::Snippet)
        } else if tool.is_none() {
            Some(if matches!(call.tool, "remember" | "forget") {
                Bypass::Write
            } else {
                Bypass::NotCompressed
            })
        } else if options.detail {
            Some(Bypass::Detail)
        } else if options.for_edit {
            Some(Bypass::ForEdit)
        } else if in_focus {
            Some(Bypass::Focus)
        } else if raw_tokens < MIN_TOKENS {
            Some(Bypass::Small)
        } else {
            None
        };
        // Dedup applies to compressed context answers, and to ones sent raw because
        // the level is off; never to the other bypasses.
        let may_dedup = self.config.dedup
            && !options.fresh
            && tool.is_some()
            && matches!(bypass, None | Some(Bypass::LevelOff));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let (shaped, level, mut outcome) = match (bypass, tool) {
                (None, Some(tool)) if level > Level::Off => (
                    (self.compressor)(tool, level, answer),
                    level,
                    Outcome::Compressed,
                ),
                (None, _) => (
                    answer.clone(),
                    Level::Off,
                    Outcome::Bypassed(Bypass::LevelOff),
                ),
                (Some(reason), _) => (answer.clone(), Level::Off, Outcome::Bypassed(reason)),
            };
            let text = if matches!(outcome, Outcome::Compressed) {
                render(&shaped)
            } else {
                raw.clone()
            };
            // An answer too small to reference, or one that must go in full: sent in
            // full, and remembered (whole and by parts) as received.
            if !may_dedup || tokens(&text) < MIN_TOKENS {
                let mut session = lock(session);
                session
                    .ledger
                    .answer(number, call.tool, &text, false, Instant::now());
                session.parts.apply(&shaped, number, false);
                return (text, level, outcome, 0);
            }
            let reference =
                lock(session)
                    .ledger
                    .answer(number, call.tool, &text, true, Instant::now());
            if let Some(reference) = reference {
                return (reference, level, Outcome::SessionReference, 0);
            }
            if self.config.cross_session
                && let Some(principal) = call.principal
            {
                let text_hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
                let request = request_key(call, level);
                let now = SystemTime::now();
                if let Some(prior) = self
                    .store
                    .check(principal, request, text_hash, call.tool, session_id, now)
                {
                    outcome = Outcome::CrossSessionReference;
                    let status = text.lines().next().unwrap_or("status: ok");
                    let age = unix(now).saturating_sub(prior.sent_at);
                    let text = format!(
                        "{status}\nunchanged: the same answer as {} sent you {age} s ago in an earlier session; \
                         nothing in it changed since. If it is no longer in your context, repeat the call \
                         with \"{FRESH_ARGUMENT}\": true to receive it in full.\n",
                        prior.tool
                    );
                    return (text, level, outcome, 0);
                }
            }
            // Entries and neighbour lists this session already holds become references.
            let (value, parts) = lock(session).parts.apply(&shaped, number, true);
            if parts > 0 {
                return (render(&value), level, outcome, parts);
            }
            (text, level, outcome, 0)
        }));
        let (text, level, outcome, parts) = match outcome {
            Ok(done) => done,
            Err(_) => {
                tracing::error!(
                    tool = call.tool,
                    "compression failed; the raw answer was sent"
                );
                (raw.clone(), Level::Off, Outcome::Failed, 0)
            }
        };
        let delivered;
        let totals = {
            let mut session = lock(session);
            // The header lines the session's last answer already stated are left out
            // (`fresh: true`, `detail: true`, programs and a failed compression get
            // them all).
            let elide = !options.fresh
                && !options.detail
                && !call.structured
                && !matches!(outcome, Outcome::Failed);
            delivered = session.stated.apply(&text, elide);
            let sent = tokens(&delivered) as u64;
            session.tokens_raw += raw_tokens as u64;
            session.tokens_sent += sent;
            let mut totals = Totals {
                calls: 1,
                tokens_raw: raw_tokens as u64,
                tokens_sent: sent,
                ..Default::default()
            };
            match outcome {
                Outcome::SessionReference => {
                    session.dedup_hits += 1;
                    totals.dedup_hits = 1;
                }
                Outcome::CrossSessionReference => {
                    session.cross_session_hits += 1;
                    totals.dedup_hits = 1;
                }
                Outcome::Failed => {
                    session.failures += 1;
                    totals.failures = 1;
                }
                Outcome::Bypassed(_) => {
                    session.bypasses += 1;
                    totals.bypasses = 1;
                }
                Outcome::Compressed => {}
            }
            session.part_references += parts as u64;
            let stats = session.tools.entry(call.tool.to_owned()).or_default();
            stats.tokens_raw += raw_tokens as u64;
            stats.tokens_sent += sent;
            if matches!(
                outcome,
                Outcome::SessionReference | Outcome::CrossSessionReference
            ) {
                stats.dedup_hits += 1;
            }
            // Opened for reading or editing: in focus for the next calls.
            if call.tool == SNIPPET_TOOL || options.for_edit {
                session.add_focus(call.arguments, answer, self.config.focus_window);
            }
            totals
        };
        if let Some(principal) = call.principal {
            self.store.count(principal, &totals);
        }
        Delivered {
            text: delivered,
            level,
            outcome,
        }
    }

    /// `get_compression_stats` for a session.
    pub fn stats(&self, session: &Mutex<Session>) -> crate::session::Stats {
        lock(session).stats(self.config.level, self.source, self.config.token_budget)
    }
}

fn lock(session: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    session
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The cross-session key of a call: its tool, scope, level and arguments (in a
/// canonical order, without the options that do not change the answer).
fn request_key(call: &Call<'_>, level: Level) -> [u8; 32] {
    fn canonical(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for key in keys {
                    out.push_str(&serde_json::to_string(key).unwrap_or_default());
                    out.push(':');
                    canonical(&map[key], out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    canonical(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut arguments = call.arguments.clone();
    for option in [
        FRESH_ARGUMENT,
        DETAIL_ARGUMENT,
        FOR_EDIT_ARGUMENT,
        LEVEL_ARGUMENT,
    ] {
        arguments.remove(option);
    }
    let mut text = String::new();
    canonical(&Value::Object(arguments), &mut text);
    let mut hasher = Sha256::new();
    for part in [call.tool, call.scope, level.as_str(), &text] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize().into()
}
