//! MCP sessions bound to the principal that created them.
//!
//! rmcp's session manager knows session ids, not who holds them: any caller with a valid
//! key and another caller's `Mcp-Session-Id` could attach a stream (and with
//! `Last-Event-ID` take over in-flight responses) or DELETE the session. Here every session
//! is bound, when the initialize response names it, to the authenticated subject and a
//! hash of the API key; a request that names a session of another principal gets exactly
//! the answer an unknown session gets. Sessions are capped per key and in total, and idle
//! ones expire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use sha2::{Digest, Sha256};

/// The header rmcp names sessions in.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The body rmcp answers an unknown session with; a foreign one gets the same bytes.
pub const UNKNOWN_SESSION_BODY: &str = "Not Found: Session not found";

/// Who holds a session: the subject and the key it authenticated with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    subject_id: String,
    key_hash: [u8; 32],
}

impl Principal {
    pub fn new(subject_id: &str, api_key: &str) -> Self {
        Self {
            subject_id: subject_id.to_owned(),
            key_hash: Sha256::digest(api_key.as_bytes()).into(),
        }
    }
}

/// Caps on sessions (the `[http]` section's `max_sessions*` and `session_idle_seconds`).
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    pub per_key: usize,
    pub total: usize,
    pub idle: Duration,
}

#[derive(Debug)]
struct Binding {
    principal: Principal,
    last_seen: Instant,
}

#[derive(Debug, Default)]
struct State {
    sessions: HashMap<String, Binding>,
    /// Live sessions plus initializes in flight, per key hash.
    per_key: HashMap<[u8; 32], usize>,
    /// Initializes in flight (a slot is held until the response names a session).
    pending: usize,
}

impl State {
    fn release_key(&mut self, key_hash: &[u8; 32]) {
        if let Some(count) = self.per_key.get_mut(key_hash) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_key.remove(key_hash);
            }
        }
    }
}

/// Why a new session was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRefusal {
    /// This key holds its cap of sessions.
    PerKey { limit: usize },
    /// The gateway holds its cap of sessions.
    Total { limit: usize },
}

impl SessionRefusal {
    pub fn message(&self, idle: Duration) -> String {
        match self {
            SessionRefusal::PerKey { limit } => format!(
                "this API key holds {limit} MCP sessions, the limit per key; end unused ones with DELETE /mcp or let them idle out ({} s)",
                idle.as_secs()
            ),
            SessionRefusal::Total { limit } => {
                format!("the gateway holds {limit} MCP sessions, its limit; retry later")
            }
        }
    }
}

/// A slot for a session being created; give it back with [`Sessions::bind`] or
/// [`Sessions::abandon`].
#[derive(Debug)]
pub struct Reservation {
    principal: Principal,
}

/// The session bindings of one gateway.
#[derive(Clone)]
pub struct Sessions {
    state: Arc<Mutex<State>>,
    limits: SessionLimits,
    manager: Arc<LocalSessionManager>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    pub fn new(manager: Arc<LocalSessionManager>, limits: SessionLimits) -> Self {
        Self {
            state: Arc::default(),
            limits,
            manager,
        }
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves only counters behind: keep serving.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// True when `session_id` is live and bound to `principal`; touches it. Unknown,
    /// expired and foreign sessions are all `false`, indistinguishably.
    pub fn check(&self, session_id: &str, principal: &Principal) -> bool {
        let mut state = self.lock();
        let Some(binding) = state.sessions.get_mut(session_id) else {
            return false;
        };
        if binding.principal != *principal || binding.last_seen.elapsed() > self.limits.idle {
            return false;
        }
        binding.last_seen = Instant::now();
        true
    }

    /// Holds a slot for a new session of `principal`, or says which cap is full.
    pub fn reserve(&self, principal: &Principal) -> Result<Reservation, SessionRefusal> {
        let expired = {
            let mut state = self.lock();
            if state.sessions.len() + state.pending >= self.limits.total {
                self.expire_locked(&mut state)
            } else {
                Vec::new()
            }
        };
        self.close_in_background(expired);
        let mut state = self.lock();
        if state.sessions.len() + state.pending >= self.limits.total {
            return Err(SessionRefusal::Total {
                limit: self.limits.total,
            });
        }
        let held = state.per_key.get(&principal.key_hash).copied().unwrap_or(0);
        if held >= self.limits.per_key {
            return Err(SessionRefusal::PerKey {
                limit: self.limits.per_key,
            });
        }
        *state.per_key.entry(principal.key_hash).or_default() += 1;
        state.pending += 1;
        Ok(Reservation {
            principal: principal.clone(),
        })
    }

    /// The response named a new session: bind it to the reservation's principal.
    pub fn bind(&self, reservation: Reservation, session_id: &str) {
        let mut state = self.lock();
        state.pending = state.pending.saturating_sub(1);
        let previous = state.sessions.insert(
            session_id.to_owned(),
            Binding {
                principal: reservation.principal,
                last_seen: Instant::now(),
            },
        );
        // An id is never reused; if it were, the older holder's slot is given back.
        if let Some(previous) = previous {
            state.release_key(&previous.principal.key_hash);
        }
    }

    /// No session came of the reservation (the initialize failed).
    pub fn abandon(&self, reservation: Reservation) {
        let mut state = self.lock();
        state.pending = state.pending.saturating_sub(1);
        state.release_key(&reservation.principal.key_hash);
    }

    /// The holder ended the session (DELETE).
    pub fn unbind(&self, session_id: &str) {
        let mut state = self.lock();
        if let Some(binding) = state.sessions.remove(session_id) {
            state.release_key(&binding.principal.key_hash);
        }
    }

    /// Removes sessions idle for longer than the limit and closes them in rmcp.
    pub fn expire_idle(&self) -> usize {
        let expired = {
            let mut state = self.lock();
            self.expire_locked(&mut state)
        };
        let count = expired.len();
        self.close_in_background(expired);
        count
    }

    fn expire_locked(&self, state: &mut State) -> Vec<String> {
        let idle = self.limits.idle;
        let expired: Vec<String> = state
            .sessions
            .iter()
            .filter(|(_, binding)| binding.last_seen.elapsed() > idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            if let Some(binding) = state.sessions.remove(id) {
                state.release_key(&binding.principal.key_hash);
            }
        }
        expired
    }

    fn close_in_background(&self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        let manager = self.manager.clone();
        tokio::spawn(async move {
            for id in ids {
                let id: rmcp::transport::streamable_http_server::session::SessionId = id.into();
                if let Err(error) = manager.close_session(&id).await {
                    tracing::debug!(%error, "closing an expired MCP session");
                }
            }
        });
    }

    /// Number of bound sessions (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Expires idle sessions every `period` until the returned task is aborted.
    pub fn spawn_reaper(&self, period: Duration) -> tokio::task::JoinHandle<()> {
        let sessions = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let expired = sessions.expire_idle();
                if expired > 0 {
                    tracing::debug!(expired, "expired idle MCP sessions");
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(per_key: usize, total: usize, idle: Duration) -> Sessions {
        Sessions::new(
            Arc::new(LocalSessionManager::default()),
            SessionLimits {
                per_key,
                total,
                idle,
            },
        )
    }

    #[tokio::test]
    async fn a_session_answers_only_its_own_principal() {
        let s = sessions(4, 16, Duration::from_secs(60));
        let alice = Principal::new("sub_alice", "key-a");
        let same_subject_other_key = Principal::new("sub_alice", "key-b");
        let mallory = Principal::new("sub_mallory", "key-m");
        let reservation = s.reserve(&alice).unwrap();
        s.bind(reservation, "s1");
        assert!(s.check("s1", &alice));
        assert!(!s.check("s1", &mallory));
        assert!(!s.check("s1", &same_subject_other_key));
        assert!(!s.check("unknown", &alice));
        s.unbind("s1");
        assert!(!s.check("s1", &alice));
    }

    #[tokio::test]
    async fn caps_hold_per_key_and_in_total_and_slots_come_back() {
        let s = sessions(2, 3, Duration::from_secs(60));
        let a = Principal::new("sub_a", "key-a");
        let b = Principal::new("sub_b", "key-b");
        let first = s.reserve(&a).unwrap();
        s.bind(first, "a1");
        let second = s.reserve(&a).unwrap();
        assert_eq!(
            s.reserve(&a).unwrap_err(),
            SessionRefusal::PerKey { limit: 2 }
        );
        s.abandon(second);
        let again = s.reserve(&a).unwrap();
        s.bind(again, "a2");
        let b1 = s.reserve(&b).unwrap();
        s.bind(b1, "b1");
        assert_eq!(
            s.reserve(&b).unwrap_err(),
            SessionRefusal::Total { limit: 3 }
        );
        s.unbind("a1");
        assert!(s.reserve(&b).is_ok());
    }

    #[tokio::test]
    async fn idle_sessions_expire_and_free_their_slots() {
        let s = sessions(1, 1, Duration::from_millis(20));
        let a = Principal::new("sub_a", "key-a");
        let r = s.reserve(&a).unwrap();
        s.bind(r, "a1");
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(!s.check("a1", &a));
        // The total cap reaps idle sessions before refusing.
        assert!(s.reserve(&a).is_ok());
        assert!(s.is_empty());
    }
}
