//! Embedded backend: one SQLite file. Every statement binds its values as parameters.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use async_trait::async_trait;
use codectx_errors::Error;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::{
    Confidence, Direction, Edge, EdgeKind, Node, NodeKind, OwnerGraph, RepositoryInfo,
};
use crate::query::{Relevance, RelevanceKey};
use crate::sqlite_connections::Connections;
pub(crate) use crate::sqlite_connections::Reach;
use crate::sqlite_edge_rows::{EdgeRows, edge_rows};
use crate::sqlite_reader_cache::ReaderCache;
use crate::{
    EdgeHit, EdgePage, EdgeRequest, GraphStore, LanguageCount, NodesPage, RankedWindow,
    WindowRequest,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS graphs (
    gid INTEGER PRIMARY KEY,
    graph_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    root TEXT NOT NULL DEFAULT '',
    commit_sha TEXT NOT NULL DEFAULT '',
    indexed_at INTEGER NOT NULL DEFAULT 0,
    version TEXT NOT NULL DEFAULT '',
    listed INTEGER NOT NULL DEFAULT 0,
    policy TEXT NOT NULL DEFAULT '',
    policy_fingerprint TEXT NOT NULL DEFAULT '',
    dirty_since INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS owners (
    oid INTEGER PRIMARY KEY,
    gid INTEGER NOT NULL,
    owner TEXT NOT NULL,
    hash TEXT NOT NULL,
    UNIQUE (gid, owner)
);
CREATE TABLE IF NOT EXISTS nodes (
    nid INTEGER PRIMARY KEY,
    gid INTEGER NOT NULL,
    oid INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    id TEXT NOT NULL,
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
    doc TEXT NOT NULL DEFAULT '',
    UNIQUE (gid, id)
);
CREATE TABLE IF NOT EXISTS edges (
    oid INTEGER NOT NULL,
    src INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    line INTEGER NOT NULL,
    confidence INTEGER NOT NULL
);
";

/// The node table's secondary indexes, kept apart from [`SCHEMA`] because a bulk write
/// drops and rebuilds them ([`rebuild_indexes`]); `UNIQUE (gid, id)` stays, the write
/// finds nodes through it.
const NODE_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS nodes_by_name ON nodes (gid, name);
CREATE INDEX IF NOT EXISTS nodes_by_qualified_name ON nodes (gid, qualified_name);
CREATE INDEX IF NOT EXISTS nodes_by_path ON nodes (gid, path, start_line);
CREATE INDEX IF NOT EXISTS nodes_by_owner ON nodes (oid);
";
const DROP_NODE_INDEXES: &str = "
DROP INDEX IF EXISTS nodes_by_name;
DROP INDEX IF EXISTS nodes_by_qualified_name;
DROP INDEX IF EXISTS nodes_by_path;
DROP INDEX IF EXISTS nodes_by_owner;
";

/// The edge table's indexes, kept apart from [`SCHEMA`] because a bulk write drops and
/// rebuilds them ([`rebuild_indexes`]). The two by endpoint cover every column an edge
/// read takes (the far end, line, confidence): a page of a hub's 500 edges reads no edge
/// row, only the index and the far nodes. Before schema 4 they were `edges_out (src,
/// kind)` and `edges_in (dst, kind)`, and each edge of a page cost a lookup of its row,
/// scattered in the order the edges were written (a 573-edge page: 3.2 ms, 1.3 ms
/// covered; docs/BENCHMARKS.md, "Session of 2026-12-06").
const EDGE_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS edges_from ON edges (src, kind, dst, line, confidence);
CREATE INDEX IF NOT EXISTS edges_to ON edges (dst, kind, src, line, confidence);
CREATE INDEX IF NOT EXISTS edges_by_owner ON edges (oid);
";
const DROP_EDGE_INDEXES: &str = "
DROP INDEX IF EXISTS edges_from;
DROP INDEX IF EXISTS edges_to;
DROP INDEX IF EXISTS edges_by_owner;
";

/// Below this many edges a write keeps the edge indexes and inserts into them.
const BULK_EDGES: usize = 20_000;
/// Below this many written nodes a write keeps the node indexes and inserts into them.
const BULK_NODES: usize = 20_000;

/// Whether a write of `incoming` rows (at least `bulk`) into a table whose largest rowid
/// is `stored` (at least its row count) drops the table's secondary indexes and builds
/// them again after the inserts: one sort per index instead of an ordered B-tree insert
/// per row and index. It pays when the write at least doubles the table, as a first
/// index does: the Python standard library's first write (196k nodes, 642k edges) took
/// 2.98-3.11 s instead of 3.24-3.30 s with the edges' rebuilt (docs/BENCHMARKS.md,
/// "Session of 2026-12-04"), and 3.10-3.14 s instead of 3.83-4.39 s with the nodes'
/// rebuilt as well ("Session of 2026-12-05").
fn rebuild_indexes(incoming: usize, stored: i64, bulk: usize) -> bool {
    incoming >= bulk && incoming as i64 >= stored
}

/// Edge kinds as stored: numbered in the order of their names, so `ORDER BY kind` sorts
/// like the Neo4j backend (by relationship type name). Spaced by ten so a new kind takes a
/// code between its neighbours; schema 0 stored 1..7 and is migrated on open.
fn edge_code(kind: EdgeKind) -> i64 {
    match kind {
        EdgeKind::Calls => 10,
        EdgeKind::Contains => 20,
        EdgeKind::Exports => 25,
        EdgeKind::Implements => 30,
        EdgeKind::Imports => 40,
        EdgeKind::Mentions => 50,
        EdgeKind::References => 55,
        EdgeKind::Requires => 60,
        EdgeKind::TestedBy => 70,
    }
}

/// `PRAGMA user_version` of the graph schema this build writes.
const SCHEMA_VERSION: i64 = 4;

/// Brings an older file to [`SCHEMA_VERSION`] in one transaction.
fn migrate(connection: &mut Connection) -> Result<(), Error> {
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(storage)?;
    if version >= SCHEMA_VERSION {
        return Ok(());
    }
    let tx = connection.transaction().map_err(storage)?;
    if version < 1 {
        // Edge codes 1..7 became 10..70.
        tx.execute("UPDATE edges SET kind = kind * 10 WHERE kind < 10", [])
            .map_err(storage)?;
    }
    if version < 2 {
        // Nodes gained their doc (a file created by this build already has the column).
        let has_doc: bool = tx
            .query_row(
                "SELECT count(*) FROM pragma_table_info('nodes') WHERE name = 'doc'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(storage)?
            > 0;
        if !has_doc {
            tx.execute(
                "ALTER TABLE nodes ADD COLUMN doc TEXT NOT NULL DEFAULT ''",
                [],
            )
            .map_err(storage)?;
        }
    }
    if version < 3 {
        // Graphs gained their policy and what a watcher saw.
        for (column, definition) in [
            ("policy", "TEXT NOT NULL DEFAULT ''"),
            ("policy_fingerprint", "TEXT NOT NULL DEFAULT ''"),
            ("dirty_since", "INTEGER NOT NULL DEFAULT 0"),
        ] {
            let present: i64 = tx
                .query_row(
                    "SELECT count(*) FROM pragma_table_info('graphs') WHERE name = ?1",
                    [column],
                    |r| r.get(0),
                )
                .map_err(storage)?;
            if present == 0 {
                // Constant names and definitions: no input reaches the SQL text.
                tx.execute_batch(&format!(
                    "ALTER TABLE graphs ADD COLUMN {column} {definition}"
                ))
                .map_err(storage)?;
            }
        }
    }
    if version < 4 {
        // The endpoint indexes became covering ones ([`EDGE_INDEXES`], built on open).
        tx.execute_batch("DROP INDEX IF EXISTS edges_out; DROP INDEX IF EXISTS edges_in;")
            .map_err(storage)?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
        .map_err(storage)?;
    tx.commit().map_err(storage)
}

fn edge_from_code(code: i64) -> EdgeKind {
    EdgeKind::ALL
        .into_iter()
        .find(|k| edge_code(*k) == code)
        .unwrap_or(EdgeKind::Contains)
}

fn confidence_code(confidence: Confidence) -> i64 {
    match confidence {
        Confidence::Resolved => 1,
        Confidence::NameMatch => 2,
        Confidence::Unresolved => 3,
        Confidence::Dispatch => 4,
    }
}

fn confidence_from_code(code: i64) -> Confidence {
    match code {
        1 => Confidence::Resolved,
        2 => Confidence::NameMatch,
        4 => Confidence::Dispatch,
        _ => Confidence::Unresolved,
    }
}

const NODE_COLUMNS: &str = "n.id, n.kind, n.name, n.qualified_name, n.language, n.path, n.start_line, n.end_line, n.signature, n.summary, n.fingerprint, n.test, n.doc";

/// [`NODE_COLUMNS`] with only what ranking a window of edges reads (the rest empty).
const LIGHT_NODE_COLUMNS: &str = "n.id, n.kind, n.name, '', n.language, n.path, n.start_line, n.end_line, '', '', '', n.test, ''";

/// The SQLite graph store.
#[derive(Clone)]
pub struct SqliteGraphStore {
    connections: Connections,
}

impl std::fmt::Debug for SqliteGraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteGraphStore").finish_non_exhaustive()
    }
}

/// Whether `error` is a UNIQUE constraint's (a row with the same key is stored).
fn is_unique_violation(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(e, _) if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

pub(crate) fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("graph store (sqlite): {error}"))
}

fn node_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    node_row_at(r, 0)
}

/// Whether the row's [`NODE_COLUMNS`], starting at column `at`, hold `node` exactly.
fn row_is(r: &rusqlite::Row<'_>, at: usize, node: &Node) -> rusqlite::Result<bool> {
    let text = |i: usize| -> rusqlite::Result<&str> {
        r.get_ref(at + i)?.as_str().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(
                at + i,
                rusqlite::types::Type::Text,
                Box::new(e),
            )
        })
    };
    let number = |i: usize| -> rusqlite::Result<i64> { r.get(at + i) };
    Ok(text(0)? == node.id
        && text(1)? == node.kind.as_str()
        && text(2)? == node.name
        && text(3)? == node.qualified_name
        && text(4)? == node.language
        && text(5)? == node.path
        && number(6)? == i64::from(node.start_line)
        && number(7)? == i64::from(node.end_line)
        && text(8)? == node.signature
        && text(9)? == node.summary
        && text(10)? == node.fingerprint
        && (number(11)? != 0) == node.test
        && text(12)? == node.doc)
}

/// A node from [`NODE_COLUMNS`] starting at column `at`.
fn node_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Node> {
    let kind: String = r.get(at + 1)?;
    Ok(Node {
        id: r.get(at)?,
        kind: NodeKind::parse(&kind).unwrap_or(NodeKind::External),
        name: r.get(at + 2)?,
        qualified_name: r.get(at + 3)?,
        language: r.get(at + 4)?,
        path: r.get(at + 5)?,
        start_line: r.get(at + 6)?,
        end_line: r.get(at + 7)?,
        signature: r.get(at + 8)?,
        summary: r.get(at + 9)?,
        fingerprint: r.get(at + 10)?,
        test: r.get::<_, i64>(at + 11)? != 0,
        doc: r.get(at + 12)?,
    })
}

/// Statements the connection keeps prepared. A statement's text depends on its shape
/// and limit, never on the values it reads: a list of values is bound to a number of
/// placeholders rounded up to a power of two ([`ListSlots`]), so a store prepares a few
/// dozen texts. The default (16) was too small: preparing took 9% of a loaded stack's
/// CPU. (Limits stay literal: SQLite 3.50 runs `ORDER BY .. LIMIT ?` with a bound limit
/// several times slower than with a literal one, 94 against 22 µs for an edge page.)
pub(crate) const PREPARED_STATEMENTS: usize = 128;

/// Most values bound as one list (SQLite caps the parameters of a statement).
const LIST_VALUES: usize = 512;

/// The placeholders of a list of values, rounded up to a power of two: lists of 3 and
/// 4 values share a statement, the fourth slot bound to NULL (which `IN` never
/// matches). A bound list of any length costs one of ten statements, not one each,
/// and stays an index lookup per value (a JSON array read by `json_each` cost more:
/// the list becomes a subquery).
struct ListSlots {
    count: usize,
}

impl ListSlots {
    fn for_len(len: usize) -> Self {
        Self {
            count: len.max(1).next_power_of_two(),
        }
    }

    /// `?first, ?first+1, ...`, one per slot.
    fn placeholders(&self, first: usize) -> String {
        placeholders(self.count, first)
    }

    /// `values`, then NULL in the slots beyond them.
    fn bind(&self, values: impl IntoIterator<Item = Value>) -> impl Iterator<Item = Value> {
        values
            .into_iter()
            .chain(std::iter::repeat(Value::Null))
            .take(self.count)
    }
}

fn placeholders(count: usize, first: usize) -> String {
    (0..count)
        .map(|i| format!("?{}", first + i))
        .collect::<Vec<_>>()
        .join(",")
}

/// The statements that read a root's edges of some kinds in one direction.
struct EdgePageSql {
    count: String,
    full: String,
    /// Up to [`crate::LIGHT_WINDOW`] + 1 of the root's edges with full rows, found from
    /// the root's id in one statement and in no order: a small window whole when fewer
    /// come back ([`EdgePageSql::small`]).
    small: Option<String>,
    light: String,
    /// `light` with the far node's `nid` last ([`RANKED_NID`]): what ranking a window
    /// in the store reads.
    ranked: String,
}

/// The column of [`EdgePageSql::ranked`] that holds the far node's `nid`.
const RANKED_NID: usize = 16;

impl EdgePageSql {
    fn new(kinds: &[EdgeKind], direction: Direction, limit: usize) -> Self {
        let (near, far) = match direction {
            Direction::Outgoing => ("src", "dst"),
            Direction::Incoming => ("dst", "src"),
        };
        let kind_list = kinds
            .iter()
            .map(|k| edge_code(*k).to_string())
            .collect::<Vec<_>>()
            .join(",");
        // Column names come from the constants here and kinds are numbers from an enum:
        // no input reaches the SQL text.
        let page = |columns: &str, extra: &str| {
            format!(
                "SELECT {columns}, e.kind, e.line, e.confidence{extra} FROM edges e
                 JOIN nodes n ON n.nid = e.{far}
                 WHERE e.{near} = ?1 AND e.kind IN ({kind_list})
                 ORDER BY e.kind, n.path, e.line, n.start_line, n.qualified_name, n.id LIMIT {limit}"
            )
        };
        // Only when the page's limit is above the probe: then fewer rows than the probe
        // are every edge of the root, and the window is complete.
        let small = (limit > crate::LIGHT_WINDOW).then(|| {
            format!(
                "SELECT {NODE_COLUMNS}, e.kind, e.line, e.confidence FROM nodes r
                 JOIN edges e ON e.{near} = r.nid
                 LEFT JOIN nodes n ON n.nid = e.{far}
                 WHERE r.gid = ?1 AND r.id = ?2 AND e.kind IN ({kind_list})
                 LIMIT {}",
                crate::LIGHT_WINDOW + 1
            )
        });
        EdgePageSql {
            count: format!(
                "SELECT COUNT(*) FROM edges e WHERE e.{near} = ?1 AND e.kind IN ({kind_list})"
            ),
            full: page(NODE_COLUMNS, ""),
            small,
            light: page(LIGHT_NODE_COLUMNS, ""),
            ranked: page(LIGHT_NODE_COLUMNS, ", n.nid"),
        }
    }

    /// The `nid` of `root` in graph `gid` and its number of edges this page counts; None
    /// when the graph has no such node or the node no such edge.
    fn root_total(
        &self,
        c: &Connection,
        gid: i64,
        root: &str,
    ) -> Result<Option<(i64, usize)>, Error> {
        let Some(nid): Option<i64> = c
            .prepare_cached("SELECT nid FROM nodes WHERE gid = ?1 AND id = ?2")
            .map_err(storage)?
            .query_row(params![gid, root], |r| r.get(0))
            .optional()
            .map_err(storage)?
        else {
            return Ok(None);
        };
        let total: i64 = c
            .prepare_cached(&self.count)
            .map_err(storage)?
            .query_row(params![nid], |r| r.get(0))
            .map_err(storage)?;
        // Most pages asked are empty (a function nobody calls): no second statement.
        Ok((total > 0).then_some((nid, total as usize)))
    }

    /// Whether a window of `total` edges keeping `keep` is read light: below
    /// crate::LIGHT_WINDOW edges the full rows cost less than a second query for the
    /// kept ones (every store call is a read transaction of its own).
    fn is_light(total: usize, keep: Option<usize>) -> bool {
        keep.is_some_and(|keep| total > keep.max(crate::LIGHT_WINDOW))
    }

    /// The page of `root` in graph `gid` (empty when the graph has no such node).
    fn read(
        &self,
        c: &Connection,
        gid: i64,
        root: &str,
        light_over: Option<usize>,
    ) -> Result<EdgePage, Error> {
        let Some((nid, total)) = self.root_total(c, gid, root)? else {
            return Ok(EdgePage::default());
        };
        self.read_rows(c, nid, total, Self::is_light(total, light_over))
    }

    /// The page of the node `nid`, of `total` edges.
    fn read_rows(
        &self,
        c: &Connection,
        nid: i64,
        total: usize,
        light: bool,
    ) -> Result<EdgePage, Error> {
        let mut statement = c
            .prepare_cached(if light { &self.light } else { &self.full })
            .map_err(storage)?;
        let rows = statement
            .query_map(params![nid], |r| {
                Ok(EdgeHit {
                    node: node_row(r)?,
                    kind: edge_from_code(r.get(13)?),
                    line: r.get(14)?,
                    confidence: confidence_from_code(r.get(15)?),
                })
            })
            .map_err(storage)?;
        let hits = rows.collect::<Result<_, _>>().map_err(storage)?;
        Ok(EdgePage { hits, total, light })
    }

    /// Every edge of `root` in graph `gid`, in the page's order, when it has at most
    /// [`crate::LIGHT_WINDOW`] (None when it has more, or the page's limit is not above
    /// that). One statement instead of three (the root's nid, the count, the page) for
    /// the windows most expansions ask, of which half are empty; a hub's costs the probe
    /// of 101 rows and no sort.
    fn small(&self, c: &Connection, gid: i64, root: &str) -> Result<Option<EdgePage>, Error> {
        let Some(sql) = &self.small else {
            return Ok(None);
        };
        let mut statement = c.prepare_cached(sql).map_err(storage)?;
        let mut rows = statement.query(params![gid, root]).map_err(storage)?;
        let mut hits = Vec::new();
        let mut total = 0;
        while let Some(r) = rows.next().map_err(storage)? {
            if total == crate::LIGHT_WINDOW {
                return Ok(None);
            }
            total += 1;
            // An edge whose far node is gone (its owner re-indexed without it, the
            // edge's not yet) counts, as the count of the page does, but is no hit.
            if r.get_ref(0).map_err(storage)? == rusqlite::types::ValueRef::Null {
                continue;
            }
            hits.push(EdgeHit {
                node: node_row(r).map_err(storage)?,
                kind: edge_from_code(r.get(13).map_err(storage)?),
                line: r.get(14).map_err(storage)?,
                confidence: confidence_from_code(r.get(15).map_err(storage)?),
            });
        }
        // The page's order ([`EdgePageSql::new`]): kind (by code), path, line, then the
        // node's start line, qualified name and id. Text compares as SQLite's BINARY
        // collation does, byte by byte.
        hits.sort_by(|a, b| {
            (edge_code(a.kind), &a.node.path, a.line, a.node.start_line)
                .cmp(&(edge_code(b.kind), &b.node.path, b.line, b.node.start_line))
                .then_with(|| a.node.qualified_name.cmp(&b.node.qualified_name))
                .then_with(|| a.node.id.cmp(&b.node.id))
        });
        Ok(Some(EdgePage {
            hits,
            total,
            light: false,
        }))
    }

    /// The window of `request` ranked: [`crate::query::rank_window`] of its page. A
    /// window read light (a hub's) is ranked from its rows as they stream, and only the
    /// nodes kept are built; a small one is read whole and ranked as a page.
    fn rank(
        &self,
        c: &Connection,
        gid: i64,
        request: &WindowRequest,
    ) -> Result<RankedWindow, Error> {
        let edges = &request.edges;
        if let Some(page) = self.small(c, gid, &edges.root)? {
            return Ok(crate::query::rank_window(request, page));
        }
        let Some((root, total)) = self.root_total(c, gid, &edges.root)? else {
            return Ok(crate::query::rank_window(request, EdgePage::default()));
        };
        if !Self::is_light(total, edges.keep) {
            let page = self.read_rows(c, root, total, false)?;
            return Ok(crate::query::rank_window(request, page));
        }
        let keep = edges.keep.unwrap_or(usize::MAX);
        let relevance = Relevance::new(&request.root_path, &request.root_name);
        // One edge per neighbour: a node's nid stands for its id, since ids are unique in
        // a graph (`UNIQUE (gid, id)`) and both ends of an edge are nodes of one graph.
        let mut distinct: FxHashSet<i64> = FxHashSet::default();
        let mut seen: HashSet<String> = HashSet::new();
        // Best first; equal keys in the page's order (a new row goes after its equals).
        let mut kept: Vec<(RelevanceKey, EdgeHit)> = Vec::new();
        let mut window = 0;
        let mut statement = c.prepare_cached(&self.ranked).map_err(storage)?;
        let mut rows = statement.query(params![root]).map_err(storage)?;
        while let Some(r) = rows.next().map_err(storage)? {
            window += 1;
            let nid: i64 = r.get(RANKED_NID).map_err(storage)?;
            if nid == root || !distinct.insert(nid) {
                continue;
            }
            if request.seen {
                seen.insert(r.get(0).map_err(storage)?);
            }
            let text = |i: usize| -> Result<&str, Error> {
                r.get_ref(i)
                    .map_err(storage)?
                    .as_str()
                    .map_err(|e| storage(e.into()))
            };
            let kind = edge_from_code(r.get(13).map_err(storage)?);
            let external = NodeKind::parse(text(1)?).is_none_or(|k| k == NodeKind::External);
            let test = r.get::<_, i64>(11).map_err(storage)? != 0;
            let key = relevance.key_of(external, test, text(5)?, text(2)?, kind);
            if kept.len() >= keep && kept.last().is_none_or(|(worst, _)| key >= *worst) {
                continue;
            }
            let hit = EdgeHit {
                node: node_row(r).map_err(storage)?,
                kind,
                line: r.get(14).map_err(storage)?,
                confidence: confidence_from_code(r.get(15).map_err(storage)?),
            };
            let at = kept.partition_point(|(k, _)| *k <= key);
            kept.insert(at, (key, hit));
            kept.truncate(keep);
        }
        Ok(RankedWindow {
            kept: kept.into_iter().map(|(_, hit)| hit).collect(),
            distinct: distinct.len(),
            window,
            total,
            light: true,
            seen,
        })
    }
}

/// The statements of each shape of request (kinds, direction and limit), prepared once
/// per store call.
#[derive(Default)]
struct EdgePageStatements {
    shapes: Vec<(EdgeRequest, EdgePageSql)>,
}

impl EdgePageStatements {
    fn of(&mut self, request: &EdgeRequest) -> &EdgePageSql {
        let same = |(shape, _): &(EdgeRequest, EdgePageSql)| {
            shape.kinds == request.kinds
                && shape.direction == request.direction
                && shape.limit == request.limit
        };
        let at = match self.shapes.iter().position(same) {
            Some(at) => at,
            None => {
                self.shapes.push((
                    request.clone(),
                    EdgePageSql::new(&request.kinds, request.direction, request.limit),
                ));
                self.shapes.len() - 1
            }
        };
        &self.shapes[at].1
    }
}

impl SqliteGraphStore {
    /// Edges from or to `root`; with `light_over: Some(keep)` and more than `keep` of
    /// them, nodes carry only the columns ranking reads ([`LIGHT_NODE_COLUMNS`]).
    async fn edge_page(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
        light_over: Option<usize>,
    ) -> Result<EdgePage, Error> {
        let request = EdgeRequest {
            root: root.to_owned(),
            kinds: kinds.to_vec(),
            direction,
            limit,
            keep: light_over,
        };
        let mut pages = self.read_pages(graph_id, vec![request]).await?;
        Ok(pages.pop().unwrap_or_default())
    }

    /// The page of each request, in one call of the store's worker.
    async fn read_pages(
        &self,
        graph_id: &str,
        requests: Vec<EdgeRequest>,
    ) -> Result<Vec<EdgePage>, Error> {
        let graph_id = graph_id.to_owned();
        self.read(Reach::Bounded, move |c| {
            let Some(gid) = Self::gid(c, &graph_id)? else {
                return Ok(vec![EdgePage::default(); requests.len()]);
            };
            // Requests of the same kinds, direction and limit share their statements.
            let mut statements = EdgePageStatements::default();
            let mut pages = Vec::with_capacity(requests.len());
            for request in &requests {
                if request.kinds.is_empty() {
                    pages.push(EdgePage::default());
                    continue;
                }
                pages.push(
                    statements
                        .of(request)
                        .read(c, gid, &request.root, request.keep)?,
                );
            }
            Ok(pages)
        })
        .await
    }

    /// Each window ranked ([`GraphStore::ranked_windows`]), in one call of the store's
    /// worker.
    async fn rank_windows(
        &self,
        graph_id: &str,
        requests: Vec<WindowRequest>,
    ) -> Result<Vec<RankedWindow>, Error> {
        let graph_id = graph_id.to_owned();
        self.read_cached(Reach::Bounded, move |c, cache| {
            let gid = cache.gid(&graph_id, || Self::gid(c, &graph_id))?;
            let mut statements = EdgePageStatements::default();
            let mut windows = Vec::with_capacity(requests.len());
            for request in &requests {
                windows.push(match gid {
                    // A hub's window, read light, is remembered until the file changes
                    // ([`ReaderCache`]).
                    Some(gid) if !request.edges.kinds.is_empty() => {
                        cache.window(gid, request, || {
                            statements.of(&request.edges).rank(c, gid, request)
                        })?
                    }
                    _ => crate::query::rank_window(request, EdgePage::default()),
                });
            }
            Ok(windows)
        })
        .await
    }

    /// Opens (creating if needed) the graph database at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        let mut connection = Connection::open(path).map_err(storage)?;
        connection.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
        // The temporary store stays a file (SQLite's default, in SQLITE_TMPDIR, TMPDIR or
        // /tmp): a sort that fits the cache never touches it, but with the store in memory
        // SQLite's sorter allocates each record on its own instead of packing them into one
        // buffer, and a bulk write's index rebuild (chiefly the edges' sort) took 1.95-2.40 s
        // instead of 1.49-1.63 s (docs/BENCHMARKS.md, "Session of 2026-12-07 (sixth)").
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                 PRAGMA cache_size = -131072; PRAGMA foreign_keys = OFF;",
            )
            .map_err(storage)?;
        connection.execute_batch(SCHEMA).map_err(storage)?;
        connection.execute_batch(NODE_INDEXES).map_err(storage)?;
        connection.execute_batch(EDGE_INDEXES).map_err(storage)?;
        migrate(&mut connection)?;
        connection
            .execute_batch(crate::sqlite_memory::MEMORY_SCHEMA)
            .map_err(storage)?;
        Ok(Self {
            connections: Connections::open(path, connection)?,
        })
    }

    /// Work on the writer's connection, on the blocking pool ([`Connections::run`]).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        self.connections.run(work).await
    }

    /// A read in one read transaction, placed by its reach ([`Connections::read`]).
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        reach: Reach,
        work: impl FnOnce(&Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        self.connections.read(reach, work).await
    }

    /// [`Self::read`] with the reader's cache ([`Connections::read_cached`]).
    pub(crate) async fn read_cached<T: Send + 'static>(
        &self,
        reach: Reach,
        work: impl FnOnce(&Connection, &mut ReaderCache) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        self.connections.read_cached(reach, work).await
    }

    fn gid(connection: &Connection, graph_id: &str) -> Result<Option<i64>, Error> {
        connection
            .prepare_cached("SELECT gid FROM graphs WHERE graph_id = ?1")
            .map_err(storage)?
            .query_row(params![graph_id], |r| r.get(0))
            .optional()
            .map_err(storage)
    }

    fn ensure_gid(connection: &Connection, graph_id: &str) -> Result<i64, Error> {
        if let Some(gid) = Self::gid(connection, graph_id)? {
            return Ok(gid);
        }
        connection
            .execute(
                "INSERT INTO graphs (graph_id) VALUES (?1)",
                params![graph_id],
            )
            .map_err(storage)?;
        Ok(connection.last_insert_rowid())
    }

    fn query_nodes(
        connection: &Connection,
        sql: &str,
        values: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<Node>, Error> {
        let mut statement = connection.prepare_cached(sql).map_err(storage)?;
        let rows = statement
            .query_map(params_from_iter(values.iter()), node_row)
            .map_err(storage)?;
        rows.collect::<Result<_, _>>().map_err(storage)
    }

    /// Runs a node query for a graph; an unknown graph has no nodes.
    async fn nodes_where(
        &self,
        reach: Reach,
        graph_id: &str,
        sql: String,
        mut values: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<Node>, Error> {
        let graph_id = graph_id.to_owned();
        self.read(reach, move |c| {
            let Some(gid) = Self::gid(c, &graph_id)? else {
                return Ok(Vec::new());
            };
            values.insert(0, gid.into());
            Self::query_nodes(c, &sql, values)
        })
        .await
    }
}

use rusqlite::types::Value;

#[async_trait]
impl GraphStore for SqliteGraphStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn put_repository(&self, repository: &RepositoryInfo) -> Result<(), Error> {
        let r = repository.clone();
        self.run(move |c| {
            let gid = Self::ensure_gid(c, &r.graph_id)?;
            c.execute(
                "UPDATE graphs SET name = ?2, root = ?3, commit_sha = ?4, indexed_at = ?5, version = ?6, listed = 1,
                   policy = ?7, policy_fingerprint = ?8, dirty_since = ?9 WHERE gid = ?1",
                params![
                    gid,
                    r.name,
                    r.root,
                    r.commit,
                    r.indexed_at,
                    r.version,
                    r.policy,
                    r.policy_fingerprint,
                    r.dirty_since
                ],
            )
            .map_err(storage)?;
            Ok(())
        })
        .await
    }

    async fn repository(&self, graph_id: &str) -> Result<Option<RepositoryInfo>, Error> {
        let graph_id = graph_id.to_owned();
        self.read(Reach::Bounded, move |c| {
            c.query_row(
                "SELECT graph_id, name, root, commit_sha, indexed_at, version, policy, policy_fingerprint, dirty_since FROM graphs WHERE graph_id = ?1 AND listed = 1",
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
                .prepare("SELECT graph_id, name, root, commit_sha, indexed_at, version, policy, policy_fingerprint, dirty_since FROM graphs WHERE listed = 1 ORDER BY name")
                .map_err(storage)?;
            let rows = statement.query_map([], repository_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
        .await
    }

    async fn mark_dirty(&self, graph_id: &str, since: i64) -> Result<(), Error> {
        let graph_id = graph_id.to_owned();
        self.run(move |c| {
            c.execute(
                "UPDATE graphs SET dirty_since = ?2 WHERE graph_id = ?1 AND dirty_since = 0",
                params![graph_id, since],
            )
            .map_err(storage)?;
            Ok(())
        })
        .await
    }

    async fn delete_graph(&self, graph_id: &str) -> Result<(), Error> {
        let graph_id = graph_id.to_owned();
        self.run(move |c| {
            let Some(gid) = Self::gid(c, &graph_id)? else {
                return Ok(());
            };
            let tx = c.transaction().map_err(storage)?;
            tx.execute(
                "DELETE FROM edges WHERE oid IN (SELECT oid FROM owners WHERE gid = ?1)",
                params![gid],
            )
            .map_err(storage)?;
            tx.execute("DELETE FROM nodes WHERE gid = ?1", params![gid])
                .map_err(storage)?;
            tx.execute("DELETE FROM owners WHERE gid = ?1", params![gid])
                .map_err(storage)?;
            tx.execute("DELETE FROM graphs WHERE gid = ?1", params![gid])
                .map_err(storage)?;
            tx.commit().map_err(storage)
        })
        .await
    }

    async fn owner_hashes(&self, graph_id: &str) -> Result<HashMap<String, String>, Error> {
        let graph_id = graph_id.to_owned();
        self.read(Reach::Whole, move |c| {
            let Some(gid) = Self::gid(c, &graph_id)? else {
                return Ok(HashMap::new());
            };
            let mut statement = c
                .prepare("SELECT owner, hash FROM owners WHERE gid = ?1")
                .map_err(storage)?;
            let rows = statement
                .query_map(params![gid], |r| {
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
        owners: Vec<OwnerGraph>,
    ) -> Result<(), Error> {
        let graph_id = graph_id.to_owned();
        let removed = removed.to_vec();
        self.run(move |c| {
            let tx = c.transaction().map_err(storage)?;
            let gid = Self::ensure_gid(&tx, &graph_id)?;
            let bulk;
            {
                let mut find_owner = tx.prepare_cached("SELECT oid FROM owners WHERE gid = ?1 AND owner = ?2").map_err(storage)?;
                let mut delete_edges = tx.prepare_cached("DELETE FROM edges WHERE oid = ?1").map_err(storage)?;
                let mut delete_nodes = tx.prepare_cached("DELETE FROM nodes WHERE oid = ?1").map_err(storage)?;
                let mut delete_owner = tx.prepare_cached("DELETE FROM owners WHERE oid = ?1").map_err(storage)?;
                let mut held_nodes = tx
                    .prepare_cached(&format!("SELECT n.nid, {NODE_COLUMNS} FROM nodes n WHERE n.oid = ?1"))
                    .map_err(storage)?;
                let mut delete_node = tx.prepare_cached("DELETE FROM nodes WHERE nid = ?1").map_err(storage)?;
                let mut put_owner = tx
                    .prepare_cached(
                        "INSERT INTO owners (gid, owner, hash) VALUES (?1, ?2, ?3)
                         ON CONFLICT (gid, owner) DO UPDATE SET hash = excluded.hash RETURNING oid",
                    )
                    .map_err(storage)?;
                let mut upsert_node = tx
                    .prepare_cached(
                        "INSERT INTO nodes (gid, oid, generation, id, kind, name, qualified_name, language, path, start_line, end_line, signature, summary, fingerprint, test, doc)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                         ON CONFLICT (gid, id) DO UPDATE SET oid = excluded.oid, generation = excluded.generation, kind = excluded.kind,
                           name = excluded.name, qualified_name = excluded.qualified_name, language = excluded.language, path = excluded.path,
                           start_line = excluded.start_line, end_line = excluded.end_line, signature = excluded.signature,
                           summary = excluded.summary, fingerprint = excluded.fingerprint, test = excluded.test, doc = excluded.doc
                         RETURNING nid",
                    )
                    .map_err(storage)?;
                // A node no row holds yet is inserted without the upsert's RETURNING, which
                // makes SQLite gather the returned rows in a table of their own: a first
                // write of 190k nodes took 0.5 s less (docs/BENCHMARKS.md, "Session of
                // 2026-12-07 (sixth)"). An id stored after all (under another owner, or
                // twice in this batch) fails the insert and goes through the upsert.
                let mut insert_node = tx
                    .prepare_cached(
                        "INSERT INTO nodes (gid, oid, generation, id, kind, name, qualified_name, language, path, start_line, end_line, signature, summary, fingerprint, test, doc)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                    )
                    .map_err(storage)?;
                let mut find_node = tx.prepare_cached("SELECT nid FROM nodes WHERE gid = ?1 AND id = ?2").map_err(storage)?;
                let mut insert_edge = tx
                    .prepare_cached("INSERT INTO edges (oid, src, dst, kind, line, confidence) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                    .map_err(storage)?;

                // Removed owners go entirely.
                for owner in &removed {
                    if let Some(oid) = find_owner.query_row(params![gid, owner], |r| r.get::<_, i64>(0)).optional().map_err(storage)? {
                        delete_edges.execute(params![oid]).map_err(storage)?;
                        delete_nodes.execute(params![oid]).map_err(storage)?;
                        delete_owner.execute(params![oid]).map_err(storage)?;
                    }
                }
                // Replaced owners: edges go; nodes that changed are upserted (same ids keep
                // their rows and so the edges other owners point at them with), nodes the
                // owner still holds unchanged are not written (re-indexing one file rewrites
                // the repository owner's thousands of external nodes only when they change),
                // and nodes no owner of this batch writes any more go.
                let written: FxHashSet<&str> =
                    owners.iter().flat_map(|o| o.nodes.iter().map(|n| n.id.as_str())).collect();
                // First what each owner holds (through nodes_by_owner, which a bulk write
                // drops below), then the writes.
                let mut held = Vec::with_capacity(owners.len());
                for owner in &owners {
                    let oid: i64 = put_owner.query_row(params![gid, owner.owner, owner.hash], |r| r.get(0)).map_err(storage)?;
                    delete_edges.execute(params![oid]).map_err(storage)?;
                    // The owner's stored rows, compared column by column with what is
                    // written now (no row is copied out).
                    let incoming: FxHashMap<&str, &Node> = owner.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
                    let mut unchanged: FxHashMap<&str, i64> = FxHashMap::default();
                    let mut changed: FxHashSet<&str> = FxHashSet::default();
                    let mut stale: Vec<i64> = Vec::new();
                    {
                        let mut rows = held_nodes.query(params![oid]).map_err(storage)?;
                        while let Some(row) = rows.next().map_err(storage)? {
                            let nid: i64 = row.get(0).map_err(storage)?;
                            let id = row.get_ref(1).map_err(storage)?.as_str().map_err(|e| storage(e.into()))?;
                            match incoming.get_key_value(id) {
                                Some((&id, node)) if row_is(row, 1, node).map_err(storage)? => {
                                    unchanged.insert(id, nid);
                                }
                                Some((&id, _)) => {
                                    changed.insert(id);
                                }
                                None if !written.contains(id) => stale.push(nid),
                                None => {}
                            }
                        }
                    }
                    held.push((oid, unchanged, changed, stale));
                }
                let nodes_written = owners
                    .iter()
                    .zip(&held)
                    .map(|(owner, (_, unchanged, _, _))| owner.nodes.len() - unchanged.len())
                    .sum::<usize>();
                let stored_nodes: i64 = tx
                    .query_row("SELECT coalesce(max(nid), 0) FROM nodes", [], |r| r.get(0))
                    .map_err(storage)?;
                let rebuild_nodes = rebuild_indexes(nodes_written, stored_nodes, BULK_NODES);
                if rebuild_nodes {
                    tx.execute_batch(DROP_NODE_INDEXES).map_err(storage)?;
                }
                let mut nids: FxHashMap<&str, i64> = FxHashMap::default();
                let mut oids = Vec::with_capacity(owners.len());
                for (owner, (oid, unchanged, changed, stale)) in owners.iter().zip(held) {
                    for n in &owner.nodes {
                        if let Some(&nid) = unchanged.get(n.id.as_str()) {
                            nids.insert(n.id.as_str(), nid);
                            continue;
                        }
                        let row = params![
                            gid,
                            oid,
                            1,
                            n.id,
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
                            n.test as i64,
                            n.doc
                        ];
                        let inserted = if changed.contains(n.id.as_str()) {
                            None
                        } else {
                            match insert_node.execute(row) {
                                Ok(_) => Some(tx.last_insert_rowid()),
                                Err(e) if is_unique_violation(&e) => None,
                                Err(e) => return Err(storage(e)),
                            }
                        };
                        let nid = match inserted {
                            Some(nid) => nid,
                            None => upsert_node.query_row(row, |r| r.get(0)).map_err(storage)?,
                        };
                        nids.insert(n.id.as_str(), nid);
                    }
                    for nid in stale {
                        delete_node.execute(params![nid]).map_err(storage)?;
                    }
                    oids.push(oid);
                }
                // After the deletes above, which use edges_by_owner; in this transaction,
                // so readers keep the indexes and a failed write leaves them as they were.
                let edges_written: usize = owners.iter().map(|o| o.edges.len()).sum();
                let stored: i64 = tx
                    .query_row("SELECT coalesce(max(rowid), 0) FROM edges", [], |r| r.get(0))
                    .map_err(storage)?;
                let rebuild = rebuild_indexes(edges_written, stored, BULK_EDGES);
                // The edges as rows (sqlite_edge_rows.rs): on a second thread while the
                // node indexes are built, when they are; sorted as edges_from when that
                // index is built after them.
                let codes = |e: &Edge| (edge_code(e.kind), confidence_code(e.confidence));
                let EdgeRows { mut rows, misses } = if rebuild_nodes {
                    let (built, rows) = std::thread::scope(|scope| {
                        let rows = scope.spawn(|| edge_rows(&owners, &oids, &nids, codes, rebuild));
                        (tx.execute_batch(NODE_INDEXES), rows.join())
                    });
                    built.map_err(storage)?;
                    rows.map_err(|_| Error::internal("graph store (sqlite): preparing the edge rows panicked"))?
                } else {
                    edge_rows(&owners, &oids, &nids, codes, rebuild)
                };
                // Endpoints the write did not give a nid: stored nodes of other owners.
                let had_misses = !misses.is_empty();
                let mut find = |known: Option<i64>, id: &str| -> Result<Option<i64>, Error> {
                    match known {
                        Some(nid) => Ok(Some(nid)),
                        None => find_node.query_row(params![gid, id], |r| r.get(0)).optional().map_err(storage),
                    }
                };
                for miss in misses {
                    let (Some(src), Some(dst)) = (find(miss.src, &miss.edge.from)?, find(miss.dst, &miss.edge.to)?) else {
                        let e = miss.edge;
                        tracing::warn!(owner = %owners[miss.owner].owner, from = %e.from, to = %e.to, "edge to a node that does not exist; skipped");
                        continue;
                    };
                    let [_, kind, _, line, confidence, oid] = miss.row;
                    rows.push([src, kind, dst, line, confidence, oid]);
                }
                if rebuild && had_misses {
                    rows.sort_unstable();
                }
                if rebuild {
                    tx.execute_batch(DROP_EDGE_INDEXES).map_err(storage)?;
                }
                for [src, kind, dst, line, confidence, oid] in rows {
                    insert_edge.execute(params![oid, src, dst, kind, line, confidence]).map_err(storage)?;
                }
                if rebuild {
                    tx.execute_batch(EDGE_INDEXES).map_err(storage)?;
                }
                bulk = rebuild || rebuild_nodes;
            }
            tx.commit().map_err(storage)?;
            // Freeing a bulk write's rows (196k nodes and 642k edges for the Python
            // standard library) takes a fifth of a second: not on the connection's
            // thread, which every caller waits for.
            if bulk {
                std::thread::spawn(move || drop(owners));
            }
            Ok(())
        })
        .await
    }

    // INDEXED BY: without statistics SQLite prefers nodes_by_path to avoid sorting and
    // scans the whole graph (20 ms on 120k nodes instead of 0.05 ms).
    async fn nodes_by_name(
        &self,
        graph_id: &str,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        self.nodes_where(
            Reach::Bounded,
            graph_id,
            format!("SELECT {NODE_COLUMNS} FROM nodes n INDEXED BY nodes_by_name WHERE n.gid = ?1 AND n.name = ?2 ORDER BY n.path, n.start_line, n.qualified_name, n.id LIMIT {limit}"),
            vec![Value::Text(name.to_owned())],
        )
        .await
    }

    async fn nodes_by_qualified_name(
        &self,
        graph_id: &str,
        qualified_name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        self.nodes_where(
            Reach::Bounded,
            graph_id,
            format!("SELECT {NODE_COLUMNS} FROM nodes n INDEXED BY nodes_by_qualified_name WHERE n.gid = ?1 AND n.qualified_name = ?2 ORDER BY n.path, n.start_line, n.qualified_name, n.id LIMIT {limit}"),
            vec![Value::Text(qualified_name.to_owned())],
        )
        .await
    }

    async fn nodes(&self, graph_id: &str, ids: &[String]) -> Result<Vec<Node>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(LIST_VALUES) {
            let slots = ListSlots::for_len(chunk.len());
            let sql = format!(
                "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.gid = ?1 AND n.id IN ({})",
                slots.placeholders(2)
            );
            let values = slots.bind(chunk.iter().map(|id| Value::Text(id.clone())));
            out.extend(
                self.nodes_where(Reach::Bounded, graph_id, sql, values.collect())
                    .await?,
            );
        }
        Ok(out)
    }

    async fn nodes_in_path(&self, graph_id: &str, path: &str) -> Result<Vec<Node>, Error> {
        self.nodes_where(
            Reach::Bounded,
            graph_id,
            format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.gid = ?1 AND n.path = ?2 ORDER BY n.start_line, n.end_line DESC, n.qualified_name, n.id"),
            vec![Value::Text(path.to_owned())],
        )
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
        self.edge_page(graph_id, root, kinds, direction, limit, None)
            .await
    }

    async fn edges_each(
        &self,
        graph_id: &str,
        roots: &[String],
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<EdgePage>, Error> {
        let requests = roots
            .iter()
            .map(|root| EdgeRequest {
                root: root.clone(),
                kinds: kinds.to_vec(),
                direction,
                limit,
                keep: None,
            })
            .collect();
        self.read_pages(graph_id, requests).await
    }

    async fn edge_pages(
        &self,
        graph_id: &str,
        requests: &[EdgeRequest],
    ) -> Result<Vec<EdgePage>, Error> {
        self.read_pages(graph_id, requests.to_vec()).await
    }

    async fn ranked_windows(
        &self,
        graph_id: &str,
        requests: &[WindowRequest],
    ) -> Result<Vec<RankedWindow>, Error> {
        self.rank_windows(graph_id, requests.to_vec()).await
    }

    async fn edge_window(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
        keep: usize,
    ) -> Result<EdgePage, Error> {
        self.edge_page(graph_id, root, kinds, direction, limit, Some(keep))
            .await
    }

    async fn nodes_of_kinds_page(
        &self,
        graph_id: &str,
        kinds: &[NodeKind],
        cursor: &str,
        limit: usize,
    ) -> Result<NodesPage, Error> {
        if kinds.is_empty() {
            return Ok(NodesPage::default());
        }
        let limit = limit.max(1);
        // Keyset paging by id: the cursor is the last id of the page before.
        let mut values: Vec<Value> = vec![Value::Text(cursor.to_owned())];
        values.extend(kinds.iter().map(|k| Value::Text(k.as_str().to_owned())));
        values.push(Value::Integer(limit as i64));
        let nodes = self
            .nodes_where(
                Reach::Whole,
                graph_id,
                format!(
                    "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.gid = ?1 AND n.id > ?2 AND n.kind IN ({}) ORDER BY n.id LIMIT ?{}",
                    placeholders(kinds.len(), 3),
                    kinds.len() + 3
                ),
                values,
            )
            .await?;
        let next = (nodes.len() == limit).then(|| nodes[limit - 1].id.clone());
        Ok(NodesPage { nodes, next })
    }

    async fn language_counts(&self, graph_id: &str) -> Result<Vec<LanguageCount>, Error> {
        let symbols: Vec<Value> = crate::query::SYMBOL_KINDS
            .iter()
            .map(|k| Value::Text(k.as_str().to_owned()))
            .collect();
        // Only placeholders reach the SQL text.
        let sql = format!(
            "SELECT language, SUM(kind = 'file'), SUM(kind IN ({0})), SUM(kind IN ({0}) AND test <> 0)
             FROM nodes WHERE gid = ?1 AND language <> '' GROUP BY language ORDER BY language",
            placeholders(symbols.len(), 2)
        );
        let graph_id = graph_id.to_owned();
        self.read(Reach::Whole, move |c| {
            let Some(gid) = Self::gid(c, &graph_id)? else {
                return Ok(Vec::new());
            };
            let mut statement = c.prepare_cached(&sql).map_err(storage)?;
            let parameters = std::iter::once(Value::Integer(gid)).chain(symbols);
            let rows = statement
                .query_map(params_from_iter(parameters), |r| {
                    Ok(LanguageCount {
                        language: r.get(0)?,
                        files: r.get::<_, i64>(1)? as u64,
                        symbols: r.get::<_, i64>(2)? as u64,
                        tests: r.get::<_, i64>(3)? as u64,
                    })
                })
                .map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
        .await
    }

    async fn neighbour_names(
        &self,
        graph_id: &str,
        kind: EdgeKind,
        sources: &[String],
        to_kinds: &[NodeKind],
    ) -> Result<Vec<(String, String)>, Error> {
        if sources.is_empty() || to_kinds.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let kinds = ListSlots::for_len(to_kinds.len());
        for sources in sources.chunks(LIST_VALUES) {
            let slots = ListSlots::for_len(sources.len());
            // Only placeholders reach the SQL text; every value is bound.
            let sql = format!(
                "SELECT a.id, b.name FROM nodes a JOIN edges e ON e.src = a.nid JOIN nodes b ON b.nid = e.dst
                 WHERE a.gid = ?1 AND e.kind = ?2 AND a.id IN ({}) AND b.kind IN ({})
                 ORDER BY a.id, e.line, b.name, b.id",
                slots.placeholders(3),
                kinds.placeholders(3 + slots.count)
            );
            let mut values: Vec<Value> = vec![Value::Integer(edge_code(kind))];
            values.extend(slots.bind(sources.iter().map(|id| Value::Text(id.clone()))));
            values.extend(kinds.bind(to_kinds.iter().map(|k| Value::Text(k.as_str().to_owned()))));
            let graph_id = graph_id.to_owned();
            let rows: Vec<(String, String)> = self
                .read(Reach::Whole, move |c| {
                    let Some(gid) = Self::gid(c, &graph_id)? else {
                        return Ok(Vec::new());
                    };
                    let mut statement = c.prepare_cached(&sql).map_err(storage)?;
                    let parameters = std::iter::once(Value::Integer(gid)).chain(values);
                    let rows = statement
                        .query_map(params_from_iter(parameters), |r| Ok((r.get(0)?, r.get(1)?)))
                        .map_err(storage)?;
                    rows.collect::<Result<_, _>>().map_err(storage)
                })
                .await?;
            out.extend(rows);
        }
        // Chunks are in input order: put the whole in the contract's order.
        out.sort_by(|a: &(String, String), b| a.0.cmp(&b.0));
        Ok(out)
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
        policy: r.get(6)?,
        policy_fingerprint: r.get(7)?,
        dirty_since: r.get(8)?,
    })
}

#[cfg(test)]
mod migration_tests {
    use super::*;

    #[test]
    fn schema_zero_edge_codes_are_renumbered_once() {
        let dir = std::env::temp_dir().join(format!("codectx-migrate-{}", std::process::id()));
        let path = dir.join("graph.db");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        {
            // A file written by the schema-0 build: codes 1..7, user_version 0.
            let connection = Connection::open(&path).unwrap();
            connection.execute_batch(SCHEMA).unwrap();
            connection
                .execute_batch("INSERT INTO edges VALUES (1, 1, 2, 1, 3, 1); INSERT INTO edges VALUES (1, 1, 3, 7, 4, 1);")
                .unwrap();
        }
        for _ in 0..2 {
            drop(SqliteGraphStore::open(&path).unwrap());
        }
        let connection = Connection::open(&path).unwrap();
        let kinds: Vec<i64> = connection
            .prepare("SELECT kind FROM edges ORDER BY line")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            kinds.into_iter().map(edge_from_code).collect::<Vec<_>>(),
            vec![EdgeKind::Calls, EdgeKind::TestedBy]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn schema_three_endpoint_indexes_become_covering_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.db");
        {
            // A file written by the schema-3 build: the endpoint indexes without the far
            // end's columns.
            let connection = Connection::open(&path).unwrap();
            connection.execute_batch(SCHEMA).unwrap();
            connection
                .execute_batch(
                    "CREATE INDEX edges_out ON edges (src, kind);
                     CREATE INDEX edges_in ON edges (dst, kind);
                     INSERT INTO edges VALUES (1, 1, 2, 10, 3, 1);
                     PRAGMA user_version = 3;",
                )
                .unwrap();
        }
        drop(SqliteGraphStore::open(&path).unwrap());
        let connection = Connection::open(&path).unwrap();
        let indexes: Vec<String> = connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(indexes, ["edges_by_owner", "edges_from", "edges_to"]);
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }
}

#[cfg(test)]
mod bulk_write_tests {
    use super::*;

    #[test]
    fn a_write_rebuilds_a_tables_indexes_when_large_and_at_least_as_large_as_the_table() {
        // The first index of a repository.
        assert!(rebuild_indexes(BULK_EDGES, 0, BULK_EDGES));
        assert!(rebuild_indexes(600_000, 0, BULK_EDGES));
        // A small write, even into an empty file: inserting is cheaper than sorting.
        assert!(!rebuild_indexes(BULK_EDGES - 1, 0, BULK_EDGES));
        // A re-index of one file, or a new repository beside a larger one.
        assert!(!rebuild_indexes(40, 600_000, BULK_EDGES));
        assert!(!rebuild_indexes(100_000, 600_000, BULK_EDGES));
        // A write that at least doubles the table.
        assert!(rebuild_indexes(600_000, 600_000, BULK_EDGES));
    }
}

#[cfg(test)]
mod list_statement_tests {
    use super::*;

    #[test]
    fn lists_share_a_statement_per_power_of_two_and_pad_with_null() {
        let slots: Vec<usize> = [0, 1, 2, 3, 4, 5, 100, 512]
            .iter()
            .map(|n| ListSlots::for_len(*n).count)
            .collect();
        assert_eq!(slots, [1, 1, 2, 4, 4, 8, 128, 512]);
        let three = ListSlots::for_len(3);
        assert_eq!(three.placeholders(2), "?2,?3,?4,?5");
        let bound: Vec<Value> = three.bind((1..=3).map(Value::Integer)).collect();
        assert_eq!(
            bound,
            [
                Value::Integer(1),
                Value::Integer(2),
                Value::Integer(3),
                Value::Null
            ]
        );
    }
}
