//! Cross-session dedup, per tenant and subject: which answer each of a principal's
//! recent requests received, so a new session (after an agent clears its context, or a
//! session-less client whose every request is its own session) that asks the same
//! thing and would receive the same bytes gets a reference instead.
//!
//! Content-verified: an entry holds the SHA-256 of the text sent; a reference is given
//! only when the new answer hashes the same, and a changed answer replaces the stale
//! entry and is sent in full. Keys are hashes (of the tenant and subject, and of the
//! tool, the scope and the arguments), so neither memory nor the state file holds an
//! answer, an argument or an identity in the clear. Bounded (entries per principal,
//! principals) and expiring.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A 32-byte digest, written as hex in the state file.
pub type Digest32 = [u8; 32];

fn hex(digest: &Digest32) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Digest32> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Whose answers these are: the verified tenant and subject of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Principal(Digest32);

impl Principal {
    pub fn new(tenant: &str, subject: &str) -> Principal {
        let mut hasher = Sha256::new();
        hasher.update(b"codectx-compress-principal\0");
        hasher.update(tenant.as_bytes());
        hasher.update([0]);
        hasher.update(subject.as_bytes());
        Principal(hasher.finalize().into())
    }
}

/// Limits of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    pub entries_per_principal: usize,
    pub principals: usize,
    pub ttl: Duration,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            entries_per_principal: 256,
            principals: 4_096,
            ttl: Duration::from_secs(3_600),
        }
    }
}

/// Totals per principal, for the gRPC `GetCompressionStats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub calls: u64,
    pub tokens_raw: u64,
    pub tokens_sent: u64,
    pub dedup_hits: u64,
    pub bypasses: u64,
    pub failures: u64,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.calls += other.calls;
        self.tokens_raw += other.tokens_raw;
        self.tokens_sent += other.tokens_sent;
        self.dedup_hits += other.dedup_hits;
        self.bypasses += other.bypasses;
        self.failures += other.failures;
    }
}

/// An answer a principal received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prior {
    pub text: Digest32,
    pub tool: String,
    pub sent_at: u64,
    pub session: u64,
}

#[derive(Debug, Default)]
struct PrincipalState {
    entries: HashMap<Digest32, Prior>,
    order: VecDeque<Digest32>,
    totals: Totals,
    last_used: u64,
}

#[derive(Debug, Default)]
struct Inner {
    principals: HashMap<Principal, PrincipalState>,
    dirty: bool,
}

/// The store: shared by every session of a gateway.
#[derive(Debug, Default)]
pub struct CrossSessionStore {
    limits: StoreLimits,
    inner: Mutex<Inner>,
}

pub(crate) fn unix(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl CrossSessionStore {
    pub fn new(limits: StoreLimits) -> CrossSessionStore {
        CrossSessionStore {
            limits,
            inner: Mutex::default(),
        }
    }

    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// For `principal`'s `request` whose answer now hashes to `text`, sent in `session`:
    /// the earlier answer to reference, when it was sent in another session within the
    /// TTL and hashes the same. Otherwise records this answer (replacing a stale one).
    pub fn check(
        &self,
        principal: Principal,
        request: Digest32,
        text: Digest32,
        tool: &str,
        session: u64,
        now: SystemTime,
    ) -> Option<Prior> {
        let now = unix(now);
        let ttl = self.limits.ttl.as_secs();
        let mut inner = self.lock();
        inner.dirty = true;
        if !inner.principals.contains_key(&principal)
            && inner.principals.len() >= self.limits.principals
        {
            // The least recently used principal goes.
            if let Some(oldest) = inner
                .principals
                .iter()
                .min_by_key(|(_, state)| state.last_used)
                .map(|(key, _)| *key)
            {
                inner.principals.remove(&oldest);
            }
        }
        let state = inner.principals.entry(principal).or_default();
        state.last_used = now;
        if let Some(prior) = state.entries.get(&request) {
            let fresh = now.saturating_sub(prior.sent_at) <= ttl;
            if fresh && prior.text == text && prior.session != session {
                return Some(prior.clone());
            }
            if fresh && prior.text == text {
                return None;
            }
        }
        // New, expired or changed: this answer is now the one the principal holds.
        if state.entries.contains_key(&request) {
            state.order.retain(|key| *key != request);
        } else if state.order.len() >= self.limits.entries_per_principal
            && let Some(oldest) = state.order.pop_front()
        {
            state.entries.remove(&oldest);
        }
        state.order.push_back(request);
        state.entries.insert(
            request,
            Prior {
                text,
                tool: tool.to_owned(),
                sent_at: now,
                session,
            },
        );
        None
    }

    /// Adds a call's counts to the principal's totals.
    pub fn count(&self, principal: Principal, totals: &Totals) {
        let mut inner = self.lock();
        if let Some(state) = inner.principals.get_mut(&principal) {
            state.totals.add(totals);
        } else if inner.principals.len() < self.limits.principals {
            let state = inner.principals.entry(principal).or_default();
            state.totals.add(totals);
        }
    }

    /// The principal's totals (zero when unknown).
    pub fn totals(&self, principal: Principal) -> Totals {
        self.lock()
            .principals
            .get(&principal)
            .map(|state| state.totals)
            .unwrap_or_default()
    }

    /// Entries held for a principal.
    pub fn entries(&self, principal: Principal) -> usize {
        self.lock()
            .principals
            .get(&principal)
            .map(|state| state.entries.len())
            .unwrap_or(0)
    }

    /// Writes the store to `path` (atomically: a temporary file, then a rename) when it
    /// changed since the last save. Expired entries are not written.
    pub fn save(&self, path: &Path, now: SystemTime) -> std::io::Result<bool> {
        let now = unix(now);
        let ttl = self.limits.ttl.as_secs();
        let file = {
            let mut inner = self.lock();
            if !inner.dirty {
                return Ok(false);
            }
            inner.dirty = false;
            StateFile {
                version: 1,
                principals: inner
                    .principals
                    .iter()
                    .map(|(principal, state)| SavedPrincipal {
                        principal: hex(&principal.0),
                        last_used: state.last_used,
                        totals: state.totals,
                        entries: state
                            .order
                            .iter()
                            .filter_map(|key| state.entries.get(key).map(|prior| (key, prior)))
                            .filter(|(_, prior)| now.saturating_sub(prior.sent_at) <= ttl)
                            .map(|(key, prior)| SavedEntry {
                                request: hex(key),
                                text: hex(&prior.text),
                                tool: prior.tool.clone(),
                                sent_at: prior.sent_at,
                            })
                            .collect(),
                    })
                    .collect(),
            }
        };
        let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        let temporary = path.with_extension("tmp");
        std::fs::write(&temporary, bytes)?;
        std::fs::rename(&temporary, path)?;
        Ok(true)
    }

    /// Loads a store written by [`CrossSessionStore::save`]; a missing file is an empty
    /// store. Entries loaded belong to no live session, so each may be referenced once
    /// its content is verified again.
    pub fn load(path: &Path, limits: StoreLimits) -> std::io::Result<CrossSessionStore> {
        let store = CrossSessionStore::new(limits);
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(store),
            Err(e) => return Err(e),
        };
        let file: StateFile = serde_json::from_slice(&bytes).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        {
            let mut inner = store.lock();
            for saved in file.principals.into_iter().take(limits.principals) {
                let Some(principal) = unhex(&saved.principal) else {
                    continue;
                };
                let mut state = PrincipalState {
                    last_used: saved.last_used,
                    totals: saved.totals,
                    ..Default::default()
                };
                for entry in saved
                    .entries
                    .into_iter()
                    .rev()
                    .take(limits.entries_per_principal)
                    .rev()
                {
                    let (Some(request), Some(text)) = (unhex(&entry.request), unhex(&entry.text))
                    else {
                        continue;
                    };
                    state.order.push_back(request);
                    state.entries.insert(
                        request,
                        Prior {
                            text,
                            tool: entry.tool,
                            sent_at: entry.sent_at,
                            session: 0,
                        },
                    );
                }
                inner.principals.insert(Principal(principal), state);
            }
        }
        Ok(store)
    }
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    version: u32,
    principals: Vec<SavedPrincipal>,
}

#[derive(Serialize, Deserialize)]
struct SavedPrincipal {
    principal: String,
    last_used: u64,
    totals: Totals,
    entries: Vec<SavedEntry>,
}

#[derive(Serialize, Deserialize)]
struct SavedEntry {
    request: String,
    text: String,
    tool: String,
    sent_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(text: &str) -> Digest32 {
        Sha256::digest(text.as_bytes()).into()
    }

    #[test]
    fn a_repeat_in_another_session_is_referenced_only_when_unchanged() {
        let store = CrossSessionStore::default();
        let alice = Principal::new("acme", "alice");
        let now = SystemTime::now();
        let request = digest("get_symbol_context Serve");
        assert_eq!(
            store.check(alice, request, digest("v1"), "get_symbol_context", 1, now),
            None
        );
        // The same session: the session ledger's business, not this store's.
        assert_eq!(
            store.check(alice, request, digest("v1"), "get_symbol_context", 1, now),
            None
        );
        let prior = store
            .check(alice, request, digest("v1"), "get_symbol_context", 2, now)
            .expect("referenced");
        assert_eq!(prior.session, 1);
        // Changed: sent in full, and the stale entry is gone.
        assert_eq!(
            store.check(alice, request, digest("v2"), "get_symbol_context", 3, now),
            None
        );
        assert_eq!(
            store.check(alice, request, digest("v1"), "get_symbol_context", 4, now),
            None
        );
    }

    #[test]
    fn nothing_crosses_principals_and_entries_expire() {
        let store = CrossSessionStore::new(StoreLimits {
            ttl: Duration::from_secs(60),
            ..Default::default()
        });
        let request = digest("search Serve");
        let now = SystemTime::now();
        store.check(
            Principal::new("acme", "alice"),
            request,
            digest("v1"),
            "search",
            1,
            now,
        );
        for other in [
            Principal::new("acme", "bob"),
            Principal::new("globex", "alice"),
        ] {
            assert_eq!(
                store.check(other, request, digest("v1"), "search", 2, now),
                None
            );
        }
        let later = now + Duration::from_secs(61);
        assert_eq!(
            store.check(
                Principal::new("acme", "alice"),
                request,
                digest("v1"),
                "search",
                3,
                later
            ),
            None
        );
    }

    #[test]
    fn bounded_and_persisted() {
        let limits = StoreLimits {
            entries_per_principal: 4,
            principals: 2,
            ttl: Duration::from_secs(600),
        };
        let store = CrossSessionStore::new(limits);
        let alice = Principal::new("acme", "alice");
        let now = SystemTime::now();
        for n in 0..10 {
            store.check(
                alice,
                digest(&n.to_string()),
                digest("text"),
                "search",
                1,
                now,
            );
        }
        assert_eq!(store.entries(alice), 4);
        store.check(
            Principal::new("acme", "bob"),
            digest("x"),
            digest("x"),
            "search",
            1,
            now,
        );
        store.check(
            Principal::new("acme", "carol"),
            digest("x"),
            digest("x"),
            "search",
            1,
            now,
        );
        assert_eq!(store.lock().principals.len(), 2);
        store.count(
            Principal::new("acme", "carol"),
            &Totals {
                calls: 3,
                ..Default::default()
            },
        );

        let dir =
            std::env::temp_dir().join(format!("codectx-compress-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        assert!(store.save(&path, now).unwrap());
        assert!(
            !store.save(&path, now).unwrap(),
            "unchanged: not written again"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("carol") && !text.contains("acme"),
            "identities are hashed"
        );
        let loaded = CrossSessionStore::load(&path, limits).unwrap();
        assert_eq!(loaded.totals(Principal::new("acme", "carol")).calls, 3);
        // A loaded entry belongs to no live session: referenced once verified.
        assert!(
            loaded
                .check(
                    Principal::new("acme", "carol"),
                    digest("x"),
                    digest("x"),
                    "search",
                    7,
                    now
                )
                .is_some()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
