//! The per-file facts cache: an SQLite file beside the graph (in the data directory).
//! Keyed by graph and path; valid while the file's size, modification time and content
//! hash say it is the same file, and while the repository layout is unchanged.

use std::collections::HashMap;
use std::path::Path;

use codectx_errors::Error;
use prost::Message;
use rusqlite::{Connection, OptionalExtension, params};

use codectx_graph::NodeKind;

use crate::facts::FileFacts;

fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("index cache: {error}"))
}

/// A cached file: what identifies its version, and its facts.
#[derive(Debug, Clone)]
pub struct CachedFile {
    pub size: u64,
    pub modified_ns: i64,
    pub facts: FileFacts,
    /// The node ids of the file's symbols in its graph, in symbol order, when the process
    /// that holds the facts has computed them ([`crate::Warm`]); empty otherwise (never
    /// stored on disk: they are a function of the facts and the graph).
    pub symbol_ids: Vec<String>,
}

pub struct Cache {
    connection: Connection,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").finish_non_exhaustive()
    }
}

impl Cache {
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        let connection = Connection::open(path).map_err(storage)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                 CREATE TABLE IF NOT EXISTS facts (
                     graph_id TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
                     modified_ns INTEGER NOT NULL, blob BLOB NOT NULL, PRIMARY KEY (graph_id, path)
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS externals (
                     graph_id TEXT NOT NULL, path TEXT NOT NULL, names TEXT NOT NULL, PRIMARY KEY (graph_id, path)
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS meta (
                     graph_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (graph_id, key)
                 ) WITHOUT ROWID;",
            )
            .map_err(storage)?;
        Ok(Self { connection })
    }

    pub fn meta(&self, graph_id: &str, key: &str) -> Result<Option<String>, Error> {
        self.connection
            .query_row(
                "SELECT value FROM meta WHERE graph_id = ?1 AND key = ?2",
                params![graph_id, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(storage)
    }

    /// Every cached file of a graph. Entries that do not decode are left out (and so
    /// re-parsed).
    pub fn load(&self, graph_id: &str) -> Result<HashMap<String, CachedFile>, Error> {
        let mut statement = self
            .connection
            .prepare("SELECT path, size, modified_ns, blob FROM facts WHERE graph_id = ?1")
            .map_err(storage)?;
        let rows = statement
            .query_map(params![graph_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                ))
            })
            .map_err(storage)?;
        let mut out = HashMap::new();
        for row in rows {
            let (path, size, modified_ns, blob) = row.map_err(storage)?;
            if let Ok(facts) = FileFacts::decode(blob.as_slice()) {
                out.insert(
                    path,
                    CachedFile {
                        size: size as u64,
                        modified_ns,
                        facts,
                        symbol_ids: Vec::new(),
                    },
                );
            }
        }
        Ok(out)
    }

    /// Replaces the cache of a graph's changed files (path, size, modification time,
    /// facts) and drops removed ones.
    pub fn store(
        &mut self,
        graph_id: &str,
        changed: &[(&str, u64, i64, &FileFacts)],
        removed: &[String],
    ) -> Result<(), Error> {
        self.record(graph_id, changed, removed, &Default::default(), &[], || {
            true
        })
        .map(|_| ())
    }

    pub fn clear(&self, graph_id: &str) -> Result<(), Error> {
        self.connection
            .execute("DELETE FROM facts WHERE graph_id = ?1", params![graph_id])
            .map_err(storage)?;
        self.connection
            .execute(
                "DELETE FROM externals WHERE graph_id = ?1",
                params![graph_id],
            )
            .map_err(storage)?;
        Ok(())
    }

    /// The external and module nodes each file's owner pointed at in the last run.
    pub fn load_externals(
        &self,
        graph_id: &str,
    ) -> Result<HashMap<String, Vec<(NodeKind, String)>>, Error> {
        let mut statement = self
            .connection
            .prepare("SELECT path, names FROM externals WHERE graph_id = ?1")
            .map_err(storage)?;
        let rows = statement
            .query_map(params![graph_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(storage)?;
        let mut out = HashMap::new();
        for row in rows {
            let (path, names) = row.map_err(storage)?;
            let list = names
                .lines()
                .filter_map(|line| {
                    let (kind, name) = line.split_once('\t')?;
                    Some((NodeKind::parse(kind)?, name.to_owned()))
                })
                .collect();
            out.insert(path, list);
        }
        Ok(out)
    }

    /// What one run learned, in one transaction: the changed files' facts (path, size,
    /// modification time, facts), the removed files gone, each built owner's externals,
    /// and `meta` (key, value). It may run while the graph is written: the transaction
    /// commits only when `commit`, called once everything is staged, says the graph
    /// write succeeded (it may block until then), and rolls back otherwise, so the cache
    /// never claims facts the graph does not hold. Returns whether it committed.
    pub fn record(
        &mut self,
        graph_id: &str,
        changed: &[(&str, u64, i64, &FileFacts)],
        removed: &[String],
        externals: &std::collections::BTreeMap<String, Vec<(NodeKind, String)>>,
        meta: &[(&str, &str)],
        commit: impl FnOnce() -> bool,
    ) -> Result<bool, Error> {
        let tx = self.connection.transaction().map_err(storage)?;
        {
            let mut put = tx
                .prepare_cached("INSERT OR REPLACE INTO facts (graph_id, path, size, modified_ns, blob) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(storage)?;
            for (path, size, modified_ns, facts) in changed {
                put.execute(params![
                    graph_id,
                    path,
                    *size as i64,
                    modified_ns,
                    facts.encode_to_vec()
                ])
                .map_err(storage)?;
            }
            let mut put_externals = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO externals (graph_id, path, names) VALUES (?1, ?2, ?3)",
                )
                .map_err(storage)?;
            for (path, names) in externals {
                let text: String = names
                    .iter()
                    .map(|(kind, name)| format!("{}\t{name}\n", kind.as_str()))
                    .collect();
                put_externals
                    .execute(params![graph_id, path, text])
                    .map_err(storage)?;
            }
            for table in ["facts", "externals"] {
                let mut delete = tx
                    .prepare_cached(&format!(
                        "DELETE FROM {table} WHERE graph_id = ?1 AND path = ?2"
                    ))
                    .map_err(storage)?;
                for path in removed {
                    delete.execute(params![graph_id, path]).map_err(storage)?;
                }
            }
            let mut put_meta = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO meta (graph_id, key, value) VALUES (?1, ?2, ?3)",
                )
                .map_err(storage)?;
            for (key, value) in meta {
                put_meta
                    .execute(params![graph_id, key, value])
                    .map_err(storage)?;
            }
        }
        if commit() {
            tx.commit().map_err(storage)?;
            Ok(true)
        } else {
            tx.rollback().map_err(storage)?;
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(path: &str) -> FileFacts {
        FileFacts {
            path: path.into(),
            language: "go".into(),
            content_hash: format!("hash of {path}"),
            ..Default::default()
        }
    }

    /// A run's record is staged while the graph is written and kept only if the write
    /// succeeded: a failed write leaves the cache as the last good run left it.
    #[test]
    fn a_record_commits_only_when_the_graph_write_succeeded() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = Cache::open(&dir.path().join("cache.db")).unwrap();
        let graph = "gph_test";
        let (a, b) = (facts("a.go"), facts("b.go"));
        let externals: std::collections::BTreeMap<String, Vec<(NodeKind, String)>> = [(
            "a.go".to_owned(),
            vec![(NodeKind::External, "fmt".to_owned())],
        )]
        .into();
        let committed = cache
            .record(
                graph,
                &[("a.go", 10, 1, &a)],
                &[],
                &externals,
                &[("version", "v1")],
                || true,
            )
            .unwrap();
        assert!(committed);

        // The next run adds b.go and removes a.go.
        let next_run = |cache: &mut Cache, written: bool| {
            cache
                .record(
                    graph,
                    &[("b.go", 20, 2, &b)],
                    &["a.go".to_owned()],
                    &Default::default(),
                    &[("version", "v2")],
                    || written,
                )
                .unwrap()
        };
        // Its graph write fails: nothing of it stays.
        assert!(!next_run(&mut cache, false));
        let loaded = cache.load(graph).unwrap();
        assert_eq!(loaded.keys().collect::<Vec<_>>(), vec!["a.go"]);
        assert_eq!(loaded["a.go"].facts, a);
        assert_eq!(cache.meta(graph, "version").unwrap().as_deref(), Some("v1"));
        assert_eq!(cache.load_externals(graph).unwrap()["a.go"].len(), 1);

        // It succeeds: the removed file's facts and externals go, the new ones stay.
        assert!(next_run(&mut cache, true));
        let loaded = cache.load(graph).unwrap();
        assert_eq!(loaded.keys().collect::<Vec<_>>(), vec!["b.go"]);
        assert_eq!(cache.meta(graph, "version").unwrap().as_deref(), Some("v2"));
        assert!(!cache.load_externals(graph).unwrap().contains_key("a.go"));
    }
}
