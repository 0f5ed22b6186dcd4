//! Contexts authz minted, reused while nothing that decided them has changed.
//!
//! Every `/mcp` request is authenticated by the guard (authz `Authenticate`, so a revoked
//! key fails on its next request), and every tool call needs a context for its
//! repository (authz `Authorize`): two round trips per call. `Authenticate` also reports
//! the access store's revision, which every write to keys, subjects, teams, grants,
//! repositories or identities changes. A context minted at revision R is exactly what
//! `Authorize` would answer again while the store is still at R, so the tool call reuses
//! it: one round trip per call, and a revocation (any write) still takes effect on the
//! next request, because the revision the guard reads no longer matches.
//!
//! Entries are keyed by a hash of the API key (never the key) and the repository as the
//! agent named it; a context is reused only in the first half of its life, so a call that
//! starts with it never runs past its expiry. Bounded: a full cache drops its expired
//! entries, then everything.

use std::collections::HashMap;
use std::sync::Mutex;

use codectx_tenant::TenantContext;
use sha2::{Digest, Sha256};

/// Most entries held (one per API key and repository in use).
const CAPACITY: usize = 4096;

/// What the `/mcp` guard learned about a request's credential, for the tool call that
/// follows (an extension of the HTTP request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authenticated {
    /// The access revision authz reported.
    pub access_revision: u64,
}

struct Entry {
    context: TenantContext,
    revision: u64,
}

#[derive(Default)]
pub struct ContextCache {
    entries: Mutex<HashMap<(String, String), Entry>>,
}

impl std::fmt::Debug for ContextCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextCache").finish_non_exhaustive()
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn key_of(api_key: &str, repository: &str) -> (String, String) {
    (
        hex(&Sha256::digest(api_key.as_bytes())),
        repository.to_owned(),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `context` is still in the first half of its life at `now`.
fn young(context: &TenantContext, now: i64) -> bool {
    let half = (context.expires_at() - context.issued_at()) / 2;
    now < context.issued_at() + half
}

impl ContextCache {
    /// The context minted for this key and repository at `revision`, if still young.
    pub fn get(&self, api_key: &str, repository: &str, revision: u64) -> Option<TenantContext> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&key_of(api_key, repository))?;
        (entry.revision == revision && young(&entry.context, unix_now()))
            .then(|| entry.context.clone())
    }

    /// Remembers `context`, minted for this key and repository at `revision`.
    pub fn put(&self, api_key: &str, repository: &str, revision: u64, context: TenantContext) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= CAPACITY {
            let now = unix_now();
            entries.retain(|_, e| young(&e.context, now));
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key_of(api_key, repository), Entry { context, revision });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codectx_tenant::{Claims, Minter, SigningKey};

    fn minted(ttl: i64) -> TenantContext {
        Minter::new(SigningKey::generate("k1"))
            .with_ttl_seconds(ttl)
            .mint(&Claims {
                tenant_id: "org_a".into(),
                subject_id: "sub_a".into(),
                repository_id: "rep_a".into(),
                graph_id: "gph_a".into(),
                scopes: vec![codectx_tenant::Scope::ReadCode],
                policy_revision: 1,
            })
            .unwrap()
    }

    #[test]
    fn reused_only_at_the_same_revision_for_the_same_key_and_repository() {
        let cache = ContextCache::default();
        let context = minted(60);
        cache.put("cxk_a", "acme/api", 7, context.clone());
        assert_eq!(cache.get("cxk_a", "acme/api", 7), Some(context));
        assert_eq!(
            cache.get("cxk_a", "acme/api", 8),
            None,
            "anything written since"
        );
        assert_eq!(cache.get("cxk_b", "acme/api", 7), None, "another key");
        assert_eq!(
            cache.get("cxk_a", "acme/web", 7),
            None,
            "another repository"
        );
    }

    #[test]
    fn a_context_past_half_its_life_is_not_reused() {
        let cache = ContextCache::default();
        cache.put("cxk_a", "acme/api", 1, minted(1));
        assert_eq!(cache.get("cxk_a", "acme/api", 1), None);
    }
}
