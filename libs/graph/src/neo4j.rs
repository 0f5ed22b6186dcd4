//! Neo4j 5.26 backend over Bolt (neo4rs). Every statement is a fixed template: labels
//! (`CodeNode`, `CodeRepository`, `CodeOwner`) and relationship types are constants, every
//! value is a query parameter, and every match is rooted at `graph_id`.

use std::collections::HashMap;

use async_trait::async_trait;
use codectx_errors::Error;
use neo4rs::{BoltType, ConfigBuilder, Graph, Query, query};
use serde::Deserialize;

use crate::model::{
    Confidence, Direction, EdgeKind, Node, NodeKind, NodeRow, OwnerGraph, RepositoryInfo,
};
use crate::{EdgeHit, EdgePage, EdgeRequest, GraphStore, LanguageCount, NodesPage};

/// Rows per UNWIND statement.
const BATCH: usize = 5_000;

/// Rows written in one transaction before it is committed and the next one started: a
/// whole repository's first index (hundreds of thousands of nodes and edges) does not fit
/// in the server's transaction memory (`dbms.memory.transaction.total.max`). Writes under
/// it (every incremental run of ordinary size) stay atomic.
const TRANSACTION_ROWS: usize = 40_000;

/// Owners per statement that deletes what owners hold, and the rows an owner is reckoned
/// to hold (a source file's nodes and edges: about 400 in the Python standard library),
/// so a full rebuild's deletions are split like its writes.
const OWNER_BATCH: usize = 100;
const OWNER_ROWS: usize = 400;

/// A write that commits every [`TRANSACTION_ROWS`] rows. The phases of `replace_owners`
/// stay in order across transactions (old edges out, nodes in, stale nodes out, edges in,
/// owner hashes last), so an interrupted run leaves owners whose stored hash is still the
/// old one: the next run rewrites them.
struct Chunked<'a> {
    graph: &'a Graph,
    txn: neo4rs::Txn,
    rows: usize,
}

impl<'a> Chunked<'a> {
    async fn start(graph: &'a Graph) -> Result<Chunked<'a>, Error> {
        Ok(Chunked {
            graph,
            txn: graph.start_txn().await.map_err(backend)?,
            rows: 0,
        })
    }

    async fn run(&mut self, query: neo4rs::Query, rows: usize) -> Result<(), Error> {
        if self.rows > 0 && self.rows + rows > TRANSACTION_ROWS {
            let next = self.graph.start_txn().await.map_err(backend)?;
            std::mem::replace(&mut self.txn, next)
                .commit()
                .await
                .map_err(backend)?;
            self.rows = 0;
        }
        self.txn.run(query).await.map_err(backend)?;
        self.rows += rows.max(1);
        Ok(())
    }

    async fn commit(self) -> Result<(), Error> {
        self.txn.commit().await.map_err(backend)
    }
}

const SCHEMA: &[&str] = &[
    "CREATE CONSTRAINT code_node_identity IF NOT EXISTS FOR (n:CodeNode) REQUIRE (n.graph_id, n.id) IS UNIQUE",
    "CREATE CONSTRAINT code_repository_identity IF NOT EXISTS FOR (r:CodeRepository) REQUIRE r.graph_id IS UNIQUE",
    "CREATE CONSTRAINT code_owner_identity IF NOT EXISTS FOR (o:CodeOwner) REQUIRE (o.graph_id, o.owner) IS UNIQUE",
    "CREATE INDEX code_node_name IF NOT EXISTS FOR (n:CodeNode) ON (n.graph_id, n.name)",
    "CREATE INDEX code_node_qualified_name IF NOT EXISTS FOR (n:CodeNode) ON (n.graph_id, n.qualified_name)",
    "CREATE INDEX code_node_path IF NOT EXISTS FOR (n:CodeNode) ON (n.graph_id, n.path)",
    "CREATE INDEX code_node_owner IF NOT EXISTS FOR (n:CodeNode) ON (n.graph_id, n.owner)",
    "CREATE INDEX code_node_kind IF NOT EXISTS FOR (n:CodeNode) ON (n.graph_id, n.kind)",
    "CREATE INDEX code_contains_owner IF NOT EXISTS FOR ()-[r:CONTAINS]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_imports_owner IF NOT EXISTS FOR ()-[r:IMPORTS]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_calls_owner IF NOT EXISTS FOR ()-[r:CALLS]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_implements_owner IF NOT EXISTS FOR ()-[r:IMPLEMENTS]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_tested_by_owner IF NOT EXISTS FOR ()-[r:TESTED_BY]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_mentions_owner IF NOT EXISTS FOR ()-[r:MENTIONS]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_requires_owner IF NOT EXISTS FOR ()-[r:REQUIRES]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_references_owner IF NOT EXISTS FOR ()-[r:REFERENCES]-() ON (r.graph_id, r.owner)",
    "CREATE INDEX code_exports_owner IF NOT EXISTS FOR ()-[r:EXPORTS]-() ON (r.graph_id, r.owner)",
];

const NODE_RETURN: &str = "n.id AS id, n.kind AS kind, n.name AS name, n.qualified_name AS qualified_name, \
    n.language AS language, n.path AS path, n.start_line AS start_line, n.end_line AS end_line, \
    n.signature AS signature, n.summary AS summary, n.fingerprint AS fingerprint, n.test AS test, \
    coalesce(n.doc, '') AS doc";

/// The templates that depend on a relationship type, one per constant type.
struct EdgeTemplates {
    delete_by_owner: &'static str,
    create: &'static str,
    neighbour_names: &'static str,
}

macro_rules! edge_templates {
    ($rel:literal) => {
        EdgeTemplates {
            neighbour_names: concat!(
                "UNWIND $sources AS source ",
                "MATCH (a:CodeNode {graph_id: $graph_id, id: source})-[r:", $rel, "]->(b:CodeNode {graph_id: $graph_id}) ",
                "WHERE b.kind IN $to_kinds ",
                "RETURN a.id AS source, b.name AS name ORDER BY a.id, r.line, b.name, b.id"
            ),
            delete_by_owner: concat!(
                "MATCH ()-[r:", $rel, " {graph_id: $graph_id}]->() WHERE r.owner IN $owners DELETE r"
            ),
            create: concat!(
                "UNWIND $rows AS row ",
                "MATCH (a:CodeNode {graph_id: $graph_id, id: row.from}) ",
                "MATCH (b:CodeNode {graph_id: $graph_id, id: row.to}) ",
                "CREATE (a)-[:", $rel, " {graph_id: $graph_id, owner: row.owner, line: row.line, confidence: row.confidence}]->(b)"
            ),
        }
    };
}

fn templates(kind: EdgeKind) -> EdgeTemplates {
    match kind {
        EdgeKind::Contains => edge_templates!("CONTAINS"),
        EdgeKind::Imports => edge_templates!("IMPORTS"),
        EdgeKind::Calls => edge_templates!("CALLS"),
        EdgeKind::Implements => edge_templates!("IMPLEMENTS"),
        EdgeKind::TestedBy => edge_templates!("TESTED_BY"),
        EdgeKind::Mentions => edge_templates!("MENTIONS"),
        EdgeKind::Requires => edge_templates!("REQUIRES"),
        EdgeKind::References => edge_templates!("REFERENCES"),
        EdgeKind::Exports => edge_templates!("EXPORTS"),
    }
}

/// The Neo4j graph store.
#[derive(Clone)]
pub struct Neo4jGraphStore {
    graph: Graph,
}

impl std::fmt::Debug for Neo4jGraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Neo4jGraphStore").finish_non_exhaustive()
    }
}

/// Whether a schema statement failed only because another process created the same rule.
fn is_already_there(message: &str) -> bool {
    [
        "EquivalentSchemaRuleAlreadyExists",
        "ConstraintAlreadyExists",
        "IndexAlreadyExists",
    ]
    .iter()
    .any(|code| message.contains(code))
}

fn backend(error: impl std::fmt::Display) -> Error {
    Error::unavailable(format!("graph store (neo4j): {error}"))
}

#[derive(Debug, Deserialize)]
struct EdgeRow {
    #[serde(flatten)]
    node: NodeRow,
    /// The relationship type (`EdgeKind::as_str`).
    rel: String,
    line: i64,
    confidence: String,
    /// How many edges the root has of these kinds in this direction (every row the same).
    total: i64,
    /// The root the row belongs to ([`edge_pages_query`] only).
    #[serde(default)]
    root: String,
    /// The branch the row belongs to ([`edge_pages_union`] only).
    #[serde(default)]
    spec: i64,
}

impl EdgeRow {
    fn into_hit(self) -> Result<EdgeHit, Error> {
        let kind = EdgeKind::parse(&self.rel).ok_or_else(|| {
            Error::internal(format!(
                "graph store (neo4j): unknown relationship type {}",
                self.rel
            ))
        })?;
        Ok(EdgeHit {
            node: self.node.into_node(),
            kind,
            line: self.line.max(0) as u32,
            confidence: Confidence::parse(&self.confidence).unwrap_or(Confidence::Unresolved),
        })
    }
}

/// The one query that reads a root's edges of some kinds in one direction: the total and
/// the first `$limit` by kind, path, line, the other end's start line, qualified name and
/// id (the SQLite backend's order), with the other ends' signatures, summaries,
/// fingerprints, qualified names and docs left empty when the total passes `$light_over`.
/// One traversal answers both the count and the page, and every kind at once: a query per
/// kind and another for its count cost an expansion a dozen round trips.
///
/// The relationship types are written into the text (Cypher takes no parameter there),
/// from [`EdgeKind::as_str`] only: no input reaches it. The graph and root are parameters.
fn edge_page_query(kinds: &[EdgeKind], direction: Direction) -> String {
    format!(
        "{} RETURN {EDGE_PAGE_RETURN}",
        edge_page_match(kinds, direction, "$root")
    )
}

/// [`edge_page_query`] for each root of `$roots` (a subquery per root), each row with its
/// `root`. A root without edges answers no row.
fn edge_pages_query(kinds: &[EdgeKind], direction: Direction) -> String {
    format!(
        "UNWIND $roots AS root CALL {{ WITH root {} RETURN {EDGE_PAGE_RETURN} }} \
         RETURN root, total, rel, line, confidence, id, kind, name, qualified_name, language, \
           path, start_line, end_line, signature, summary, fingerprint, test, doc",
        edge_page_match(kinds, direction, "root")
    )
}

/// The kinds asked, each once, in the order pages list them (by relationship type name).
fn type_order(kinds: &[EdgeKind]) -> Vec<EdgeKind> {
    let mut kinds = kinds.to_vec();
    kinds.sort_by_key(|k| k.as_str());
    kinds.dedup();
    kinds
}

/// The `$light_over` of a page: past it a window is read light (never for a plain page).
fn light_threshold(keep: Option<usize>) -> i64 {
    keep.map_or(i64::MAX, |keep| keep.max(crate::LIGHT_WINDOW) as i64)
}

/// Most pages one [`edge_pages_union`] query reads.
const PAGES_PER_QUERY: usize = 32;

/// Several pages in one query: a `UNION ALL` branch per page (each its own kinds and
/// direction, written from [`EdgeKind::as_str`] only), with parameters `$root_i`,
/// `$limit_i` and `$light_over_i`, each row with its branch's `spec`.
fn edge_pages_union(pages: &[(usize, &[EdgeKind], Direction)]) -> String {
    let branches: Vec<String> = pages
        .iter()
        .map(|(i, kinds, direction)| {
            format!(
                "{} RETURN {i} AS spec, {EDGE_PAGE_RETURN}",
                edge_page_match_with(
                    kinds,
                    *direction,
                    &format!("$root_{i}"),
                    &format!("$limit_{i}"),
                    &format!("$light_over_{i}"),
                )
            )
        })
        .collect();
    format!(
        "CALL {{ {} }} RETURN spec, total, rel, line, confidence, id, kind, name, qualified_name, \
         language, path, start_line, end_line, signature, summary, fingerprint, test, doc",
        branches.join(" UNION ALL ")
    )
}

/// What [`edge_page_query`] returns per edge.
const EDGE_PAGE_RETURN: &str = "total, type(r) AS rel, r.line AS line, r.confidence AS confidence, \
    n.id AS id, n.kind AS kind, n.name AS name, \
    CASE WHEN light THEN '' ELSE n.qualified_name END AS qualified_name, \
    n.language AS language, n.path AS path, n.start_line AS start_line, n.end_line AS end_line, \
    CASE WHEN light THEN '' ELSE n.signature END AS signature, \
    CASE WHEN light THEN '' ELSE n.summary END AS summary, \
    CASE WHEN light THEN '' ELSE n.fingerprint END AS fingerprint, \
    n.test AS test, \
    CASE WHEN light THEN '' ELSE coalesce(n.doc, '') END AS doc";

/// The match, order, count and cut of [`edge_page_query`], up to its `RETURN`; `root` is
/// the parameter or variable that holds the root's id.
fn edge_page_match(kinds: &[EdgeKind], direction: Direction, root: &str) -> String {
    edge_page_match_with(kinds, direction, root, "$limit", "$light_over")
}

/// [`edge_page_match`] with the names of its limit and light threshold parameters.
fn edge_page_match_with(
    kinds: &[EdgeKind],
    direction: Direction,
    root: &str,
    limit: &str,
    light_over: &str,
) -> String {
    let types = kinds
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join("|");
    let pattern = match direction {
        Direction::Outgoing => format!(
            "(:CodeNode {{graph_id: $graph_id, id: {root}}})-[r:{types}]->(n:CodeNode {{graph_id: $graph_id}})"
        ),
        Direction::Incoming => format!(
            "(n:CodeNode {{graph_id: $graph_id}})-[r:{types}]->(:CodeNode {{graph_id: $graph_id, id: {root}}})"
        ),
    };
    format!(
        "MATCH {pattern} \
         WITH r, n ORDER BY type(r), n.path, r.line, n.start_line, n.qualified_name, n.id \
         WITH collect([r, n]) AS pairs \
         WITH size(pairs) AS total, pairs[0..{limit}] AS kept \
         UNWIND kept AS pair \
         WITH total, total > {light_over} AS light, pair[0] AS r, pair[1] AS n"
    )
}

#[derive(Debug, Deserialize)]
struct RepositoryRow {
    graph_id: String,
    name: String,
    root: String,
    commit: String,
    indexed_at: i64,
    version: String,
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    policy_fingerprint: Option<String>,
    #[serde(default)]
    dirty_since: Option<i64>,
}

impl Neo4jGraphStore {
    /// Connects and creates the constraints and indexes if they do not exist.
    pub async fn connect(uri: &str, user: &str, password: &str) -> Result<Self, Error> {
        let config = ConfigBuilder::default()
            .uri(uri)
            .user(user)
            .password(password)
            .fetch_size(1_000)
            .max_connections(8)
            .build()
            .map_err(backend)?;
        let graph = Graph::connect(config).map_err(backend)?;
        for statement in SCHEMA.iter().chain(crate::neo4j_memory::MEMORY_SCHEMA) {
            match graph.run(query(statement)).await {
                Ok(()) => {}
                // Two processes starting at once (replicas, parallel tests) both create
                // the schema: `IF NOT EXISTS` is checked before either commits, and the
                // second is told an equivalent rule exists. That is the wanted state.
                Err(error) if is_already_there(&error.to_string()) => {}
                Err(error) => return Err(backend(error)),
            }
        }
        Ok(Self { graph })
    }

    pub(crate) fn graph(&self) -> &Graph {
        &self.graph
    }

    pub(crate) async fn fetch_rows<T: for<'de> Deserialize<'de>>(
        &self,
        q: Query,
    ) -> Result<Vec<T>, Error> {
        self.fetch(q).await
    }

    async fn fetch<T: for<'de> Deserialize<'de>>(&self, q: Query) -> Result<Vec<T>, Error> {
        let mut stream = self.graph.execute(q).await.map_err(backend)?;
        let mut out = Vec::new();
        while let Some(row) = stream.next().await.map_err(backend)? {
            out.push(row.to::<T>().map_err(backend)?);
        }
        Ok(out)
    }

    /// Edges from or to `root` in one query ([`edge_page_query`]); with `light_over:
    /// Some(keep)` and more than `keep` of them (and more than [`crate::LIGHT_WINDOW`]),
    /// the nodes carry only what ranking reads.
    async fn edge_page(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
        light_over: Option<usize>,
    ) -> Result<EdgePage, Error> {
        let kinds = type_order(kinds);
        if kinds.is_empty() || limit == 0 {
            return Ok(EdgePage::default());
        }
        let light_over = light_threshold(light_over);
        let rows: Vec<EdgeRow> = self
            .fetch(
                query(&edge_page_query(&kinds, direction))
                    .param("graph_id", graph_id)
                    .param("root", root)
                    .param("limit", limit as i64)
                    .param("light_over", light_over),
            )
            .await?;
        let total = rows.first().map_or(0, |row| row.total.max(0) as usize);
        let hits = rows
            .into_iter()
            .map(EdgeRow::into_hit)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EdgePage {
            hits,
            total,
            light: total as i64 > light_over,
        })
    }

    async fn fetch_nodes(&self, q: Query) -> Result<Vec<Node>, Error> {
        Ok(self
            .fetch::<NodeRow>(q)
            .await?
            .into_iter()
            .map(NodeRow::into_node)
            .collect())
    }
}

fn node_map(owner: &str, generation: &str, n: &Node) -> HashMap<String, BoltType> {
    let mut row: HashMap<String, BoltType> = HashMap::with_capacity(14);
    row.insert("id".into(), n.id.clone().into());
    row.insert("owner".into(), owner.into());
    row.insert("generation".into(), generation.into());
    row.insert("kind".into(), n.kind.as_str().into());
    row.insert("name".into(), n.name.clone().into());
    row.insert("qualified_name".into(), n.qualified_name.clone().into());
    row.insert("language".into(), n.language.clone().into());
    row.insert("path".into(), n.path.clone().into());
    row.insert("start_line".into(), i64::from(n.start_line).into());
    row.insert("end_line".into(), i64::from(n.end_line).into());
    row.insert("signature".into(), n.signature.clone().into());
    row.insert("summary".into(), n.summary.clone().into());
    row.insert("fingerprint".into(), n.fingerprint.clone().into());
    row.insert("test".into(), n.test.into());
    row.insert("doc".into(), n.doc.clone().into());
    row
}

#[async_trait]
impl GraphStore for Neo4jGraphStore {
    fn backend(&self) -> &'static str {
        "neo4j"
    }

    async fn put_repository(&self, r: &RepositoryInfo) -> Result<(), Error> {
        self.graph
            .run(
                query(
                    "MERGE (r:CodeRepository {graph_id: $graph_id}) \
                     SET r.name = $name, r.root = $root, r.commit = $commit, r.indexed_at = $indexed_at, r.version = $version, \
                         r.policy = $policy, r.policy_fingerprint = $policy_fingerprint, r.dirty_since = $dirty_since",
                )
                .param("graph_id", r.graph_id.clone())
                .param("name", r.name.clone())
                .param("root", r.root.clone())
                .param("commit", r.commit.clone())
                .param("indexed_at", r.indexed_at)
                .param("version", r.version.clone())
                .param("policy", r.policy.clone())
                .param("policy_fingerprint", r.policy_fingerprint.clone())
                .param("dirty_since", r.dirty_since),
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn mark_dirty(&self, graph_id: &str, since: i64) -> Result<(), Error> {
        self.graph
            .run(
                query(
                    "MATCH (r:CodeRepository {graph_id: $graph_id}) \
                     WHERE coalesce(r.dirty_since, 0) = 0 SET r.dirty_since = $since",
                )
                .param("graph_id", graph_id)
                .param("since", since),
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn repository(&self, graph_id: &str) -> Result<Option<RepositoryInfo>, Error> {
        let rows: Vec<RepositoryRow> = self
            .fetch(
                query(
                    "MATCH (r:CodeRepository {graph_id: $graph_id}) RETURN r.graph_id AS graph_id, r.name AS name, \
                     r.root AS root, r.commit AS commit, r.indexed_at AS indexed_at, r.version AS version, \
                     r.policy AS policy, r.policy_fingerprint AS policy_fingerprint, r.dirty_since AS dirty_since",
                )
                .param("graph_id", graph_id),
            )
            .await?;
        Ok(rows.into_iter().next().map(repository_from_row))
    }

    async fn repositories(&self) -> Result<Vec<RepositoryInfo>, Error> {
        let rows: Vec<RepositoryRow> = self
            .fetch(query(
                "MATCH (r:CodeRepository) RETURN r.graph_id AS graph_id, r.name AS name, r.root AS root, \
                 r.commit AS commit, r.indexed_at AS indexed_at, r.version AS version, r.policy AS policy, \
                 r.policy_fingerprint AS policy_fingerprint, r.dirty_since AS dirty_since ORDER BY r.name",
            ))
            .await?;
        Ok(rows.into_iter().map(repository_from_row).collect())
    }

    async fn delete_graph(&self, graph_id: &str) -> Result<(), Error> {
        // In slices, so a large graph does not need one huge transaction.
        loop {
            let deleted: Vec<Count> = self
                .fetch(
                    query(
                        "MATCH (n:CodeNode {graph_id: $graph_id}) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS total",
                    )
                    .param("graph_id", graph_id),
                )
                .await?;
            if deleted.first().is_none_or(|c| c.total == 0) {
                break;
            }
        }
        self.graph
            .run(
                query("MATCH (o:CodeOwner {graph_id: $graph_id}) DELETE o")
                    .param("graph_id", graph_id),
            )
            .await
            .map_err(backend)?;
        self.graph
            .run(
                query("MATCH (r:CodeRepository {graph_id: $graph_id}) DELETE r")
                    .param("graph_id", graph_id),
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn owner_hashes(&self, graph_id: &str) -> Result<HashMap<String, String>, Error> {
        #[derive(Deserialize)]
        struct OwnerRow {
            owner: String,
            hash: String,
        }
        let rows: Vec<OwnerRow> = self
            .fetch(
                query("MATCH (o:CodeOwner {graph_id: $graph_id}) RETURN o.owner AS owner, o.hash AS hash")
                    .param("graph_id", graph_id),
            )
            .await?;
        Ok(rows.into_iter().map(|r| (r.owner, r.hash)).collect())
    }

    async fn replace_owners(
        &self,
        graph_id: &str,
        removed: &[String],
        owners: Vec<OwnerGraph>,
    ) -> Result<(), Error> {
        let touched: Vec<String> = removed
            .iter()
            .cloned()
            .chain(owners.iter().map(|o| o.owner.clone()))
            .collect();
        if touched.is_empty() {
            return Ok(());
        }
        let generation = codectx_core::ids::mint("gen");
        let mut txn = Chunked::start(&self.graph).await?;
        // 1. Edges these owners produced go; they are re-created below.
        for kind in EdgeKind::ALL {
            for chunk in touched.chunks(OWNER_BATCH) {
                txn.run(
                    query(templates(kind).delete_by_owner)
                        .param("graph_id", graph_id)
                        .param("owners", chunk.to_vec()),
                    chunk.len() * OWNER_ROWS,
                )
                .await?;
            }
        }
        // 2. Upsert nodes (same ids keep their incoming edges from other owners).
        let rows: Vec<HashMap<String, BoltType>> = owners
            .iter()
            .flat_map(|o| o.nodes.iter().map(|n| node_map(&o.owner, &generation, n)))
            .collect();
        for chunk in rows.chunks(BATCH) {
            txn.run(
                query(
                    "UNWIND $rows AS row MERGE (n:CodeNode {graph_id: $graph_id, id: row.id}) \
                     SET n.owner = row.owner, n.generation = row.generation, n.kind = row.kind, n.name = row.name, \
                         n.qualified_name = row.qualified_name, n.language = row.language, n.path = row.path, \
                         n.start_line = row.start_line, n.end_line = row.end_line, n.signature = row.signature, \
                         n.summary = row.summary, n.fingerprint = row.fingerprint, n.test = row.test, n.doc = row.doc",
                )
                .param("graph_id", graph_id)
                .param("rows", chunk.to_vec()),
                chunk.len(),
            )
            .await?;
        }
        // 3. Nodes of these owners that were not written now are gone.
        for chunk in touched.chunks(OWNER_BATCH) {
            txn.run(
                query(
                    "MATCH (n:CodeNode {graph_id: $graph_id}) WHERE n.owner IN $owners AND n.generation <> $generation \
                     DETACH DELETE n",
                )
                .param("graph_id", graph_id)
                .param("owners", chunk.to_vec())
                .param("generation", generation.clone()),
                chunk.len() * OWNER_ROWS,
            )
            .await?;
        }
        // 4. Edges, per constant relationship type.
        for kind in EdgeKind::ALL {
            let rows: Vec<HashMap<String, BoltType>> = owners
                .iter()
                .flat_map(|o| {
                    o.edges.iter().filter(|e| e.kind == kind).map(|e| {
                        let mut row: HashMap<String, BoltType> = HashMap::with_capacity(5);
                        row.insert("from".into(), e.from.clone().into());
                        row.insert("to".into(), e.to.clone().into());
                        row.insert("owner".into(), o.owner.clone().into());
                        row.insert("line".into(), i64::from(e.line).into());
                        row.insert("confidence".into(), e.confidence.as_str().into());
                        row
                    })
                })
                .collect();
            for chunk in rows.chunks(BATCH) {
                txn.run(
                    query(templates(kind).create)
                        .param("graph_id", graph_id)
                        .param("rows", chunk.to_vec()),
                    chunk.len(),
                )
                .await?;
            }
        }
        // 5. Owner hashes.
        for chunk in removed.chunks(BATCH) {
            txn.run(
                query(
                    "MATCH (o:CodeOwner {graph_id: $graph_id}) WHERE o.owner IN $owners DELETE o",
                )
                .param("graph_id", graph_id)
                .param("owners", chunk.to_vec()),
                chunk.len(),
            )
            .await?;
        }
        let hashes: Vec<HashMap<String, BoltType>> = owners
            .iter()
            .map(|o| {
                let mut row: HashMap<String, BoltType> = HashMap::with_capacity(2);
                row.insert("owner".into(), o.owner.clone().into());
                row.insert("hash".into(), o.hash.clone().into());
                row
            })
            .collect();
        for chunk in hashes.chunks(BATCH) {
            txn.run(
                query("UNWIND $rows AS row MERGE (o:CodeOwner {graph_id: $graph_id, owner: row.owner}) SET o.hash = row.hash")
                    .param("graph_id", graph_id)
                    .param("rows", chunk.to_vec()),
                chunk.len(),
            )
            .await?;
        }
        txn.commit().await
    }

    async fn nodes_by_name(
        &self,
        graph_id: &str,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        self.fetch_nodes(
            query(&format!(
                "MATCH (n:CodeNode {{graph_id: $graph_id, name: $name}}) RETURN {NODE_RETURN} \
                 ORDER BY n.path, n.start_line, n.qualified_name, n.id LIMIT $limit"
            ))
            .param("graph_id", graph_id)
            .param("name", name)
            .param("limit", limit as i64),
        )
        .await
    }

    async fn nodes_by_qualified_name(
        &self,
        graph_id: &str,
        qualified_name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        self.fetch_nodes(
            query(&format!(
                "MATCH (n:CodeNode {{graph_id: $graph_id, qualified_name: $qualified_name}}) RETURN {NODE_RETURN} \
                 ORDER BY n.path, n.start_line, n.qualified_name, n.id LIMIT $limit"
            ))
            .param("graph_id", graph_id)
            .param("qualified_name", qualified_name)
            .param("limit", limit as i64),
        )
        .await
    }

    async fn nodes(&self, graph_id: &str, ids: &[String]) -> Result<Vec<Node>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.fetch_nodes(
            query(&format!(
                "UNWIND $ids AS wanted MATCH (n:CodeNode {{graph_id: $graph_id, id: wanted}}) RETURN {NODE_RETURN}"
            ))
            .param("graph_id", graph_id)
            .param("ids", ids.to_vec()),
        )
        .await
    }

    async fn nodes_in_path(&self, graph_id: &str, path: &str) -> Result<Vec<Node>, Error> {
        self.fetch_nodes(
            query(&format!(
                "MATCH (n:CodeNode {{graph_id: $graph_id, path: $path}}) RETURN {NODE_RETURN} \
                 ORDER BY n.start_line, n.end_line DESC, n.qualified_name, n.id"
            ))
            .param("graph_id", graph_id)
            .param("path", path),
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

    async fn edge_pages(
        &self,
        graph_id: &str,
        requests: &[EdgeRequest],
    ) -> Result<Vec<EdgePage>, Error> {
        let mut pages = vec![EdgePage::default(); requests.len()];
        // The pages worth a branch: some kind asked and a limit above zero.
        let mut asked: Vec<(usize, Vec<EdgeKind>)> = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            let kinds = type_order(&r.kinds);
            if !kinds.is_empty() && r.limit > 0 {
                asked.push((i, kinds));
            }
        }
        if let [(i, kinds)] = asked.as_slice() {
            let r = &requests[*i];
            pages[*i] = self
                .edge_page(graph_id, &r.root, kinds, r.direction, r.limit, r.keep)
                .await?;
            return Ok(pages);
        }
        for chunk in asked.chunks(PAGES_PER_QUERY) {
            let shape: Vec<(usize, &[EdgeKind], Direction)> = chunk
                .iter()
                .enumerate()
                .map(|(b, (i, kinds))| (b, kinds.as_slice(), requests[*i].direction))
                .collect();
            let mut q = query(&edge_pages_union(&shape)).param("graph_id", graph_id);
            let mut light_over = Vec::with_capacity(chunk.len());
            for (b, (i, _)) in chunk.iter().enumerate() {
                let r = &requests[*i];
                let over = light_threshold(r.keep);
                light_over.push(over);
                q = q
                    .param(&format!("root_{b}"), r.root.as_str())
                    .param(&format!("limit_{b}"), r.limit as i64)
                    .param(&format!("light_over_{b}"), over);
            }
            let rows: Vec<EdgeRow> = self.fetch(q).await?;
            for row in rows {
                let b = usize::try_from(row.spec)
                    .ok()
                    .filter(|b| *b < chunk.len())
                    .ok_or_else(|| {
                        Error::internal(format!("graph store (neo4j): unknown page {}", row.spec))
                    })?;
                let page = &mut pages[chunk[b].0];
                page.total = row.total.max(0) as usize;
                page.light = page.total as i64 > light_over[b];
                page.hits.push(row.into_hit()?);
            }
        }
        Ok(pages)
    }

    async fn edges_each(
        &self,
        graph_id: &str,
        roots: &[String],
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<EdgePage>, Error> {
        let kinds = type_order(kinds);
        let mut pages = vec![EdgePage::default(); roots.len()];
        if kinds.is_empty() || limit == 0 || roots.is_empty() {
            return Ok(pages);
        }
        // Each root once in the query (a root asked twice gets the same page twice).
        let mut unique: Vec<String> = roots.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let rows: Vec<EdgeRow> = self
            .fetch(
                query(&edge_pages_query(&kinds, direction))
                    .param("graph_id", graph_id)
                    .param("roots", unique)
                    .param("limit", limit as i64)
                    .param("light_over", i64::MAX),
            )
            .await?;
        let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, root) in roots.iter().enumerate() {
            at.entry(root.as_str()).or_default().push(i);
        }
        for row in rows {
            let Some(places) = at.get(row.root.as_str()) else {
                continue;
            };
            let places = places.clone();
            let total = row.total.max(0) as usize;
            let hit = row.into_hit()?;
            for i in places {
                pages[i].total = total;
                pages[i].hits.push(hit.clone());
            }
        }
        Ok(pages)
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
        let kinds: Vec<String> = kinds.iter().map(|k| k.as_str().to_owned()).collect();
        // Keyset paging by id: the cursor is the last id of the page before. The order
        // names both properties of the `(graph_id, id)` index, so Neo4j reads the index in
        // order and stops at the limit; `ORDER BY n.id` alone (the same order, one graph)
        // made it read and sort every node past the cursor, each page: 0.4-0.8 s a page
        // of 5,000 at 190k nodes, against 12k index entries read with both.
        let nodes = self
            .fetch_nodes(
                query(&format!(
                    "MATCH (n:CodeNode {{graph_id: $graph_id}}) WHERE n.id > $after AND n.kind IN $kinds \
                     RETURN {NODE_RETURN} ORDER BY n.graph_id, n.id LIMIT $limit"
                ))
                .param("graph_id", graph_id)
                .param("after", cursor)
                .param("kinds", kinds)
                .param("limit", limit as i64),
            )
            .await?;
        let next = (nodes.len() == limit).then(|| nodes[limit - 1].id.clone());
        Ok(NodesPage { nodes, next })
    }

    async fn language_counts(&self, graph_id: &str) -> Result<Vec<LanguageCount>, Error> {
        let symbols: Vec<String> = crate::query::SYMBOL_KINDS
            .iter()
            .map(|k| k.as_str().to_owned())
            .collect();
        let rows: Vec<LanguageRow> = self
            .fetch(
                query(
                    "MATCH (n:CodeNode {graph_id: $graph_id}) WHERE n.language <> '' \
                     RETURN n.language AS language, \
                            sum(CASE WHEN n.kind = 'file' THEN 1 ELSE 0 END) AS files, \
                            sum(CASE WHEN n.kind IN $symbols THEN 1 ELSE 0 END) AS symbols, \
                            sum(CASE WHEN n.kind IN $symbols AND n.test THEN 1 ELSE 0 END) AS tests \
                     ORDER BY language",
                )
                .param("graph_id", graph_id)
                .param("symbols", symbols),
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| LanguageCount {
                language: r.language,
                files: r.files.max(0) as u64,
                symbols: r.symbols.max(0) as u64,
                tests: r.tests.max(0) as u64,
            })
            .collect())
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
        let to_kinds: Vec<String> = to_kinds.iter().map(|k| k.as_str().to_owned()).collect();
        let rows: Vec<NeighbourName> = self
            .fetch(
                query(templates(kind).neighbour_names)
                    .param("graph_id", graph_id)
                    .param("sources", sources.to_vec())
                    .param("to_kinds", to_kinds),
            )
            .await?;
        Ok(rows.into_iter().map(|r| (r.source, r.name)).collect())
    }
}

#[derive(Debug, Deserialize)]
struct LanguageRow {
    language: String,
    files: i64,
    symbols: i64,
    tests: i64,
}

#[derive(Debug, Deserialize)]
struct NeighbourName {
    source: String,
    name: String,
}

#[derive(Debug, Deserialize)]
struct Count {
    total: i64,
}

fn repository_from_row(r: RepositoryRow) -> RepositoryInfo {
    RepositoryInfo {
        graph_id: r.graph_id,
        name: r.name,
        root: r.root,
        commit: r.commit,
        indexed_at: r.indexed_at,
        version: r.version,
        policy: r.policy.unwrap_or_default(),
        policy_fingerprint: r.policy_fingerprint.unwrap_or_default(),
        dirty_since: r.dirty_since.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_rule_another_process_created_is_not_an_error() {
        assert!(super::is_already_there(
            "Neo4j error `Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists`: An equivalent index already exists"
        ));
        assert!(!super::is_already_there(
            "Neo4j error `Neo.ClientError.Security.Unauthorized`"
        ));
    }

    /// Re-indexing deletes an owner's edges of every type by `(graph_id, owner)`: without
    /// an index for a type, that delete scans every relationship of the type in the
    /// database, every tenant's.
    #[test]
    fn every_relationship_type_has_an_owner_index() {
        for kind in crate::model::EdgeKind::ALL {
            let wanted = format!("()-[r:{}]-() ON (r.graph_id, r.owner)", kind.as_str());
            assert!(
                super::SCHEMA.iter().any(|s| s.contains(&wanted)),
                "no owner index for {}",
                kind.as_str()
            );
        }
    }
}
