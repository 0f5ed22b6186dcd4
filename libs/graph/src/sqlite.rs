//! Embedded backend: one SQLite file. Every statement binds its values as parameters.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use codectx_errors::Error;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use crate::model::{Confidence, Direction, EdgeKind, Node, NodeKind, OwnerGraph, RepositoryInfo};
use crate::{EdgeHit, EdgePage, GraphStore};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS repositories (
    graph_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    root TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    indexed_at INTEGER NOT NULL,
    version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owners (
    graph_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (graph_id, owner)
);
CREATE TABLE IF NOT EXISTS nodes (
    graph_id TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    language TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL,
    summary TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    test INTEGER NOT NULL,
    PRIMARY KEY (graph_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nodes_by_name ON nodes (graph_id, name);
CREATE INDEX IF NOT EXISTS nodes_by_qualified_name ON nodes (graph_id, qualified_name);
CREATE INDEX IF NOT EXISTS nodes_by_path ON nodes (graph_id, path, start_line);
CREATE INDEX IF NOT EXISTS nodes_by_owner ON nodes (graph_id, owner);
CREATE INDEX IF NOT EXISTS nodes_by_kind ON nodes (graph_id, kind);
CREATE TABLE IF NOT EXISTS edges (
    graph_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER NOT NULL,
    confidence TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_out ON edges (graph_id, src, kind);
CREATE INDEX IF NOT EXISTS edges_in ON edges (graph_id, dst, kind);
CREATE INDEX IF NOT EXISTS edges_by_owner ON edges (graph_id, owner);
";

const NODE_COLUMNS: &str = "n.id, n.kind, n.name, n.qualified_name, n.language, n.path, n.start_line, n.end_line, n.signature, n.summary, n.fingerprint, n.test";

/// The SQLite graph store.
#[derive(Clone)]
pub struct SqliteGraphStore {
    connection: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteGraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteGraphStore").finish_non_exhaustive()
    }
}

fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("graph store (sqlite): {error}"))
}

fn node_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    let kind: String = r.get(1)?;
    Ok(Node {
        id: r.get(0)?,
        kind: NodeKind::parse(&kind).unwrap_or(NodeKind::External),
        name: r.get(2)?,
        qualified_name: r.get(3)?,
        language: r.get(4)?,
        path: r.get(5)?,
        start_line: r.get(6)?,
        end_line: r.get(7)?,
        signature: r.get(8)?,
        summary: r.get(9)?,
        fingerprint: r.get(10)?,
        test: r.get::<_, i64>(11)? != 0,
    })
}

fn placeholders(count: usize, first: usize) -> String {
    (0..count)
        .map(|i| format!("?{}", first + i))
        .collect::<Vec<_>>()
        .join(",")
}

impl SqliteGraphStore {
    /// Opens (creating if needed) the graph database at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        let connection = Connection::open(path).map_err(storage)?;
        connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;")
            .map_err(storage)?;
        connection.execute_batch(SCHEMA).map_err(storage)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let connection = self.connection.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = connection
                .lock()
                .map_err(|_| Error::internal("graph store lock poisoned"))?;
            work(&mut guard)
        })
        .await
        .map_err(|e| Error::internal(format!("graph store worker: {e}")))?
    }

    fn query_nodes(
        connection: &Connection,
        sql: &str,
        values: Vec<String>,
    ) -> Result<Vec<Node>, Error> {
        let mut statement = connection.prepare_cached(sql).map_err(storage)?;
        let rows = statement
            .query_map(params_from_iter(values.iter()), node_row)
            .map_err(storage)?;
        rows.collect::<Result<_, _>>().map_err(storage)
    }
}

#[async_trait]
impl GraphStore for SqliteGraphStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn put_repository(&self, repository: &RepositoryInfo) -> Result<(), Error> {
        let r = repository.clone();
        self.run(move |c| {
            c.execute(
                "INSERT INTO repositories (graph_id, name, root, commit_sha, indexed_at, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (graph_id) DO UPDATE SET name = excluded.name, root = excluded.root,
                   commit_sha = excluded.commit_sha, indexed_at = excluded.indexed_at, version = excluded.version",
                params![r.graph_id, r.name, r.root, r.commit, r.indexed_at, r.version],
            )
            .map_err(storage)?;
            Ok(())
        })
        .await
    }

    async fn repository(&self, graph_id: &str) -> Result<Option<RepositoryInfo>, Error> {
        let graph_id = graph_id.to_owned();
        self.run(move |c| {
            c.query_row(
                "SELECT graph_id, name, root, commit_sha, indexed_at, version FROM repositories WHERE graph_id = ?1",
                params![graph_id],
                repository_row,
            )
            .optional()
            .map_err(storage)
        })
        .await
    }

    async fn repositories(&self) -> Result<Vec<RepositoryInfo>, Error> {
        self.run(|c| {
            let mut statement = c
                .prepare("SELECT graph_id, name, root, commit_sha, indexed_at, version FROM repositories ORDER BY name")
                .map_err(storage)?;
            let rows = statement.query_map([], repository_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
        .await
    }

    async fn delete_graph(&self, graph_id: &str) -> Result<(), Error> {
        let graph_id = graph_id.to_owned();
        self.run(move |c| {
            let tx = c.transaction().map_err(storage)?;
            for table in ["nodes", "edges", "owners", "repositories"] {
                // Table names are constants from this list, never input.
                tx.execute(
                    &format!("DELETE FROM {table} WHERE graph_id = ?1"),
                    params![graph_id],
                )
                .map_err(storage)?;
            }
            tx.commit().map_err(storage)
        })
        .await
    }

    async fn owner_hashes(&self, graph_id: &str) -> Result<HashMap<String, String>, Error> {
        let graph_id = graph_id.to_owned();
        self.run(move |c| {
            let mut statement = c
                .prepare("SELECT owner, hash FROM owners WHERE graph_id = ?1")
                .map_err(storage)?;
            let rows = statement
                .query_map(params![graph_id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
        .await
    }

    async fn replace_owners(
        &self,
        graph_id: &str,
        removed: &[String],
        owners: &[OwnerGraph],
    ) -> Result<(), Error> {
        let graph_id = graph_id.to_owned();
        let removed = removed.to_vec();
        let owners = owners.to_vec();
        self.run(move |c| {
            let tx = c.transaction().map_err(storage)?;
            {
                let mut delete_nodes = tx.prepare_cached("DELETE FROM nodes WHERE graph_id = ?1 AND owner = ?2").map_err(storage)?;
                let mut delete_edges = tx.prepare_cached("DELETE FROM edges WHERE graph_id = ?1 AND owner = ?2").map_err(storage)?;
                let mut delete_owner = tx.prepare_cached("DELETE FROM owners WHERE graph_id = ?1 AND owner = ?2").map_err(storage)?;
                let mut insert_node = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO nodes (graph_id, id, owner, kind, name, qualified_name, language, path, start_line, end_line, signature, summary, fingerprint, test)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    )
                    .map_err(storage)?;
                let mut insert_edge = tx
                    .prepare_cached(
                        "INSERT INTO edges (graph_id, owner, src, dst, kind, line, confidence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )
                    .map_err(storage)?;
                let mut put_owner = tx
                    .prepare_cached("INSERT OR REPLACE INTO owners (graph_id, owner, hash) VALUES (?1, ?2, ?3)")
                    .map_err(storage)?;
                for owner in removed.iter().chain(owners.iter().map(|o| &o.owner)) {
                    delete_nodes.execute(params![graph_id, owner]).map_err(storage)?;
                    delete_edges.execute(params![graph_id, owner]).map_err(storage)?;
                    delete_owner.execute(params![graph_id, owner]).map_err(storage)?;
                }
                for owner in &owners {
                    for n in &owner.nodes {
                        insert_node
                            .execute(params![
                                graph_id,
                                n.id,
                                owner.owner,
                                n.kind.as_str(),
                                n.name,
                                n.qualified_name,
                                n.language,
                                n.path,
                                n.start_line,
                                n.end_line,
                                n.signature,
                                n.summary,
                                n.fingerprint,
                                n.test as i64
                            ])
                            .map_err(storage)?;
                    }
                    for e in &owner.edges {
                        insert_edge
                            .execute(params![graph_id, owner.owner, e.from, e.to, e.kind.as_str(), e.line, e.confidence.as_str()])
                            .map_err(storage)?;
                    }
                    put_owner.execute(params![graph_id, owner.owner, owner.hash]).map_err(storage)?;
                }
            }
            tx.commit().map_err(storage)
        })
        .await
    }

    async fn nodes_by_name(
        &self,
        graph_id: &str,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        let values = vec![graph_id.to_owned(), name.to_owned()];
        self.run(move |c| {
            Self::query_nodes(
                c,
                &format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.graph_id = ?1 AND n.name = ?2 ORDER BY n.path, n.start_line, n.id LIMIT {limit}"),
                values,
            )
        })
        .await
    }

    async fn nodes_by_qualified_name(
        &self,
        graph_id: &str,
        qualified_name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        let values = vec![graph_id.to_owned(), qualified_name.to_owned()];
        self.run(move |c| {
            Self::query_nodes(
                c,
                &format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.graph_id = ?1 AND n.qualified_name = ?2 ORDER BY n.path, n.start_line, n.id LIMIT {limit}"),
                values,
            )
        })
        .await
    }

    async fn nodes(&self, graph_id: &str, ids: &[String]) -> Result<Vec<Node>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let graph_id = graph_id.to_owned();
        let ids = ids.to_vec();
        self.run(move |c| {
            let mut out = Vec::with_capacity(ids.len());
            for chunk in ids.chunks(500) {
                let mut values = vec![graph_id.clone()];
                values.extend(chunk.iter().cloned());
                out.extend(Self::query_nodes(
                    c,
                    &format!(
                        "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.graph_id = ?1 AND n.id IN ({})",
                        placeholders(chunk.len(), 2)
                    ),
                    values,
                )?);
            }
            Ok(out)
        })
        .await
    }

    async fn nodes_in_path(&self, graph_id: &str, path: &str) -> Result<Vec<Node>, Error> {
        let values = vec![graph_id.to_owned(), path.to_owned()];
        self.run(move |c| {
            Self::query_nodes(
                c,
                &format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.graph_id = ?1 AND n.path = ?2 ORDER BY n.start_line, n.end_line DESC, n.id"),
                values,
            )
        })
        .await
    }

    async fn edges(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<EdgePage, Error> {
        if kinds.is_empty() {
            return Ok(EdgePage::default());
        }
        let (near, far) = match direction {
            Direction::Outgoing => ("src", "dst"),
            Direction::Incoming => ("dst", "src"),
        };
        let mut values = vec![graph_id.to_owned(), root.to_owned()];
        values.extend(kinds.iter().map(|k| k.as_str().to_owned()));
        let kind_list = placeholders(kinds.len(), 3);
        // Column names come from the two constants above, never from input.
        let count_sql = format!(
            "SELECT COUNT(*) FROM edges e WHERE e.graph_id = ?1 AND e.{near} = ?2 AND e.kind IN ({kind_list})"
        );
        let page_sql = format!(
            "SELECT {NODE_COLUMNS}, e.kind, e.line, e.confidence FROM edges e
             JOIN nodes n ON n.graph_id = e.graph_id AND n.id = e.{far}
             WHERE e.graph_id = ?1 AND e.{near} = ?2 AND e.kind IN ({kind_list})
             ORDER BY e.kind, n.path, e.line, n.start_line, n.id LIMIT {limit}"
        );
        self.run(move |c| {
            let total: i64 = c
                .prepare_cached(&count_sql)
                .map_err(storage)?
                .query_row(params_from_iter(values.iter()), |r| r.get(0))
                .map_err(storage)?;
            let mut statement = c.prepare_cached(&page_sql).map_err(storage)?;
            let rows = statement
                .query_map(params_from_iter(values.iter()), |r| {
                    let node = node_row(r)?;
                    let kind: String = r.get(12)?;
                    let confidence: String = r.get(14)?;
                    Ok(EdgeHit {
                        node,
                        kind: EdgeKind::parse(&kind).unwrap_or(EdgeKind::Contains),
                        line: r.get(13)?,
                        confidence: Confidence::parse(&confidence)
                            .unwrap_or(Confidence::Unresolved),
                    })
                })
                .map_err(storage)?;
            let hits = rows.collect::<Result<_, _>>().map_err(storage)?;
            Ok(EdgePage {
                hits,
                total: total as usize,
            })
        })
        .await
    }

    async fn nodes_of_kinds(&self, graph_id: &str, kinds: &[NodeKind]) -> Result<Vec<Node>, Error> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let mut values = vec![graph_id.to_owned()];
        values.extend(kinds.iter().map(|k| k.as_str().to_owned()));
        let sql = format!(
            "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.graph_id = ?1 AND n.kind IN ({}) ORDER BY n.id",
            placeholders(kinds.len(), 2)
        );
        self.run(move |c| Self::query_nodes(c, &sql, values)).await
    }
}

fn repository_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RepositoryInfo> {
    Ok(RepositoryInfo {
        graph_id: r.get(0)?,
        name: r.get(1)?,
        root: r.get(2)?,
        commit: r.get(3)?,
        indexed_at: r.get(4)?,
        version: r.get(5)?,
    })
}
