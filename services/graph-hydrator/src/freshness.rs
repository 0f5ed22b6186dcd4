//! What the graph-hydrator adds from a graph's repository record: the policy's notes on
//! the cards an answer is about, and whether the checkout has moved past the graph.
//!
//! Notes come from the record (one row); a short cache per graph keeps that read off the
//! hot path of every card lookup. A re-index's notes are visible within [`RECORD_TTL`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codectx_errors::Error;
use codectx_graph::RepositoryInfo;
use codectx_graph::notes::Notes;
use codectx_proto::graph::v1 as pb;

use codectx_graph::Store;

/// How long a graph's record (and its compiled notes) is reused.
pub const RECORD_TTL: Duration = Duration::from_secs(1);

#[derive(Clone)]
struct Cached {
    read_at: Instant,
    notes: Arc<Notes>,
}

/// Records and compiled notes per graph, for [`RECORD_TTL`].
#[derive(Default)]
pub struct Records {
    cache: Mutex<HashMap<String, Cached>>,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records").finish_non_exhaustive()
    }
}

impl Records {
    async fn get(&self, store: &dyn Store, graph_id: &str) -> Result<Option<Cached>, Error> {
        if let Some(cached) = self
            .cache
            .lock()
            .expect("records lock")
            .get(graph_id)
            .filter(|c| c.read_at.elapsed() < RECORD_TTL)
            .cloned()
        {
            return Ok(Some(cached));
        }
        let Some(record) = store.repository(graph_id).await? else {
            return Ok(None);
        };
        let cached = Cached {
            read_at: Instant::now(),
            notes: Arc::new(Notes::from_policy_json(&record.policy)),
        };
        let mut cache = self.cache.lock().expect("records lock");
        // Bounded by the graphs this process serves; stale entries go on the next write.
        cache.retain(|_, c| c.read_at.elapsed() < RECORD_TTL);
        cache.insert(graph_id.to_owned(), cached.clone());
        Ok(Some(cached))
    }

    /// The notes of the graph's policy (none when it has no policy or no record).
    pub async fn notes(&self, store: &dyn Store, graph_id: &str) -> Result<Arc<Notes>, Error> {
        Ok(self
            .get(store, graph_id)
            .await?
            .map(|c| c.notes)
            .unwrap_or_default())
    }
}

/// Sets a card's notes from the policy.
pub fn annotate(card: &mut pb::SymbolCard, notes: &Notes) {
    if notes.is_empty() {
        return;
    }
    let path = card.span.as_ref().map(|s| s.path.as_str()).unwrap_or("");
    let qualified = if card.kind == "file" {
        ""
    } else {
        card.qualified_name.as_str()
    };
    card.notes = notes.notes_for(path, qualified);
}

/// Whether the checkout has moved past the graph, and since when (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staleness {
    Fresh,
    /// A watcher saw files change at this time; the re-index has not landed yet.
    FilesChanged(i64),
    /// The checkout's commit is not the indexed one; HEAD moved at this time.
    CommitMoved(i64),
}

impl Staleness {
    pub fn reason(self) -> &'static str {
        match self {
            Staleness::Fresh => "",
            Staleness::FilesChanged(_) => "files changed",
            Staleness::CommitMoved(_) => "commit moved",
        }
    }

    pub fn since(self) -> Option<i64> {
        match self {
            Staleness::Fresh => None,
            Staleness::FilesChanged(at) | Staleness::CommitMoved(at) => Some(at),
        }
    }
}

/// Reads the checkout's HEAD when the record names a checkout this process can read (the
/// embedded stack; in a cluster the indexer's checkout is elsewhere and only the
/// watcher's mark counts).
pub fn staleness(record: &RepositoryInfo) -> Staleness {
    if record.dirty_since > 0 {
        return Staleness::FilesChanged(record.dirty_since);
    }
    if record.commit.is_empty() || record.root.is_empty() {
        return Staleness::Fresh;
    }
    match codectx_core::checkout::head(std::path::Path::new(&record.root)) {
        Some(head) if !head.commit.is_empty() && head.commit != record.commit => {
            Staleness::CommitMoved(if head.moved_at > 0 {
                head.moved_at
            } else {
                record.indexed_at
            })
        }
        _ => Staleness::Fresh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_or_a_moved_commit_is_stale_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(git.join("HEAD"), "aaaa\n").unwrap();
        let record = RepositoryInfo {
            root: dir.path().display().to_string(),
            commit: "aaaa".into(),
            indexed_at: 100,
            ..Default::default()
        };
        assert_eq!(staleness(&record), Staleness::Fresh);
        let marked = RepositoryInfo {
            dirty_since: 150,
            ..record.clone()
        };
        assert_eq!(staleness(&marked), Staleness::FilesChanged(150));
        std::fs::write(git.join("HEAD"), "bbbb\n").unwrap();
        assert!(matches!(staleness(&record), Staleness::CommitMoved(t) if t > 100));
        let elsewhere = RepositoryInfo {
            root: "/no/such/checkout".into(),
            ..record
        };
        assert_eq!(staleness(&elsewhere), Staleness::Fresh);
    }
}
