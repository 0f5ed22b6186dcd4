//! Freshness for a local stack: `codectx up` and `codectx mcp --stdio` watch every indexed
//! checkout they can read and re-index what changed, incrementally, while answers go on.
//!
//! A change is noted at once in the graph's record (`mark_dirty`), so answers say
//! `stale` from the first event; after [`WatchOptions::quiet`] without further events
//! (at most [`WatchOptions::max_delay`] after the first) the repository is indexed again,
//! reusing the facts of every file that did not change, and the record is written fresh.
//! Events on paths no index run reads (hidden paths, build output, dependency trees,
//! files of unknown types) are ignored, so a build or an editor's swap files cost nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codectx_errors::Error;
use codectx_graph::GraphStore;
use codectx_index::IndexOptions;
use notify::Watcher as _;
use tokio::sync::mpsc;

/// A checkout to watch, and the graph it feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub root: PathBuf,
    pub owner: String,
    pub name: String,
    pub graph_id: String,
}

/// How eagerly to re-index.
#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// Re-index after this long without a new event.
    pub quiet: Duration,
    /// ... and at the latest this long after the first event of a burst.
    pub max_delay: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            quiet: Duration::from_millis(300),
            max_delay: Duration::from_millis(1_500),
        }
    }
}

/// The watchers and the task that re-indexes; dropping it stops both.
pub struct Watching {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
    pub targets: Vec<Target>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching")
            .field("targets", &self.targets)
            .finish_non_exhaustive()
    }
}

/// Every graph in `store` whose checkout is a directory here, with its owner from the
/// access store (graphs another process wrote into the same data directory included).
pub async fn local_targets(
    store: &dyn GraphStore,
    access: &codectx_authz::Store,
) -> Result<Vec<Target>, Error> {
    let mut targets = Vec::new();
    for repository in store.repositories().await? {
        let root = PathBuf::from(&repository.root);
        if repository.root.is_empty() || !root.is_dir() {
            continue;
        }
        let Some(graph) = access.graph(&repository.graph_id)? else {
            continue;
        };
        targets.push(Target {
            root,
            owner: graph.owner_id,
            name: repository.name,
            graph_id: repository.graph_id,
        });
    }
    Ok(targets)
}

/// Watches every checkout of a running local stack's graphs, unless there is none.
pub async fn watch_stack(
    stack: &crate::stack::Stack,
    data: &Path,
) -> Result<Option<Watching>, Error> {
    let targets = local_targets(&*stack.graph_store, stack.authority.store()).await?;
    if targets.is_empty() {
        return Ok(None);
    }
    let store: Arc<dyn GraphStore> = stack.graph_store.clone();
    start(
        store,
        Some(stack.authority.store().clone()),
        targets,
        data,
        WatchOptions::default(),
    )
    .map(Some)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The target a changed path belongs to (the deepest root that holds it), if the change
/// can matter to an index run.
fn target_of(targets: &[Target], path: &Path) -> Option<usize> {
    let (at, relative) = targets
        .iter()
        .enumerate()
        .filter_map(|(i, t)| path.strip_prefix(&t.root).ok().map(|r| (i, r)))
        .max_by_key(|(i, _)| targets[*i].root.components().count())?;
    let relative = relative.to_str()?;
    (!relative.is_empty() && codectx_index::may_affect_index(relative)).then_some(at)
}

/// Starts watching `targets`; re-indexes into `store` with the facts cache of `data`, and
/// records each run with the access store when given one (so `list_repositories` shows
/// the commit and policy the graph now holds).
pub fn start(
    store: Arc<dyn GraphStore>,
    access: Option<Arc<codectx_authz::Store>>,
    targets: Vec<Target>,
    data: &Path,
    options: WatchOptions,
) -> Result<Watching, Error> {
    let (events, mut changed) = mpsc::unbounded_channel::<usize>();
    let roots = targets.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else {
            return;
        };
        if matches!(event.kind, notify::EventKind::Access(_)) {
            return;
        }
        for path in &event.paths {
            if let Some(at) = target_of(&roots, path) {
                let _ = events.send(at);
            }
        }
    })
    .map_err(|e| Error::internal(format!("cannot watch files: {e}")))?;
    for target in &targets {
        watcher
            .watch(&target.root, notify::RecursiveMode::Recursive)
            .map_err(|e| {
                Error::internal(format!(
                    "cannot watch {}: {e} (on Linux, raise fs.inotify.max_user_watches)",
                    target.root.display()
                ))
            })?;
        tracing::info!(repository = %target.name, root = %target.root.display(), "watching for changes");
    }
    let cache = data.join("index-cache.db");
    let watched = targets.clone();
    let task = tokio::spawn(async move {
        // Every file's facts from the last run, so a re-index after an edit decodes no
        // cached facts.
        let warm = codectx_index::Warm::new();
        while let Some(first) = changed.recv().await {
            let began = Instant::now();
            let mut pending = BTreeSet::new();
            let note = |at: usize, pending: &mut BTreeSet<usize>| {
                let fresh = pending.insert(at);
                let store = store.clone();
                let graph_id = watched[at].graph_id.clone();
                async move {
                    if fresh && let Err(error) = store.mark_dirty(&graph_id, now()).await {
                        tracing::warn!(%error, "cannot mark the graph stale");
                    }
                }
            };
            note(first, &mut pending).await;
            // Debounce: wait for a quiet spell, but not forever.
            loop {
                let left = options.max_delay.saturating_sub(began.elapsed());
                if left.is_zero() {
                    break;
                }
                match tokio::time::timeout(options.quiet.min(left), changed.recv()).await {
                    Ok(Some(at)) => note(at, &mut pending).await,
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
            for at in pending {
                let target = &watched[at];
                let run = codectx_index::index_with(
                    &*store,
                    &IndexOptions {
                        root: target.root.clone(),
                        owner: target.owner.clone(),
                        name: target.name.clone(),
                        cache: cache.clone(),
                        max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
                        progress: false,
                        // One parser thread: answers keep the other cores.
                        threads: 1,
                    },
                    Some(&warm),
                )
                .await;
                if let (Ok(report), Some(access)) = (&run, &access) {
                    let registered = access.register_indexed_graph(
                        &target.owner,
                        &target.name,
                        &codectx_authz::GraphIndex {
                            commit: report.commit.clone(),
                            policy_fingerprint: report.policy.fingerprint.clone(),
                        },
                    );
                    if let Err(error) = registered {
                        tracing::warn!(repository = %target.name, %error, "cannot record the re-index");
                    }
                }
                match run {
                    Ok(report) => tracing::info!(
                        repository = %target.name,
                        parsed = report.parsed,
                        removed = report.removed,
                        owners = report.owners_written,
                        seconds = report.seconds,
                        "re-indexed after a change"
                    ),
                    // The graph keeps what it had (and stays marked stale): a bad policy
                    // file, an unreadable checkout. The next change tries again.
                    Err(error) => {
                        tracing::warn!(repository = %target.name, %error, "re-index failed")
                    }
                }
            }
        }
    });
    Ok(Watching {
        _watcher: watcher,
        task,
        targets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_belongs_to_the_deepest_root_and_noise_to_none() {
        let target = |root: &str| Target {
            root: PathBuf::from(root),
            owner: String::new(),
            name: root.into(),
            graph_id: root.into(),
        };
        let targets = [target("/src/app"), target("/src/app/vendored/lib")];
        assert_eq!(target_of(&targets, Path::new("/src/app/main.go")), Some(0));
        assert_eq!(
            target_of(&targets, Path::new("/src/app/vendored/lib/x.go")),
            Some(1)
        );
        assert_eq!(target_of(&targets, Path::new("/src/app/.git/index")), None);
        assert_eq!(target_of(&targets, Path::new("/src/app/target/a.rs")), None);
        assert_eq!(target_of(&targets, Path::new("/elsewhere/a.go")), None);
    }
}
