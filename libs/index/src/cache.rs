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

    pub fn set_meta(&self, graph_id: &str, key: &str, value: &str) -> Result<(), Error> {
        self.connection
            .execute(
                "INSERT OR REPLACE INTO meta (graph_id, key, value) VALUES (?1, ?2, ?3)",
                params![graph_id, key, value],
            )
            .map_err(storage)?;
        Ok(())
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
            let mut delete = tx
                .prepare_cached("DELETE FROM facts WHERE graph_id = ?1 AND path = ?2")
                .map_err(storage)?;
            for path in removed {
                delete.execute(params![graph_id, path]).map_err(storage)?;
            }
        }
        tx.commit().map_err(storage)
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

    pub fn store_externals(
        &mut self,
        graph_id: &str,
        built: &std::collections::BTreeMap<String, Vec<(NodeKind, String)>>,
        removed: &[String],
    ) -> Result<(), Error> {
        let tx = self.connection.transaction().map_err(storage)?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO externals (graph_id, path, names) VALUES (?1, ?2, ?3)",
                )
                .map_err(storage)?;
            for (path, names) in built {
                let text: String = names
                    .iter()
                    .map(|(kind, name)| format!("{}\t{name}\n", kind.as_str()))
                    .collect();
                put.execute(params![graph_id, path, text])
                    .map_err(storage)?;
            }
            let mut delete = tx
                .prepare_cached("DELETE FROM externals WHERE graph_id = ?1 AND path = ?2")
                .map_err(storage)?;
            for path in removed {
                delete.execute(params![graph_id, path]).map_err(storage)?;
            }
        }
        tx.commit().map_err(storage)
    }
}
