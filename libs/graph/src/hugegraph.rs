//! HugeGraph 1.5 backend over its REST API (reqwest with rustls). Every statement is a
//! fixed Gremlin template sent to `POST /gremlin` with every value a binding, never
//! formatted into the script text (a value that looks like Gremlin stays plain text).
//! Code-graph roots are bound to `graph_id`; memory roots to the separate `tenant_id`
//! and `namespace` fields (`hugegraph_memory`).
//!
//! Vertex ids are customised strings: a type letter and a hash of the scope and the
//! record's own id (`vertex_id`), so a record of one graph or namespace can never be
//! addressed through another's; every read also checks the scope's properties.
//!
//! HugeGraph refuses an index query while a transaction holds uncommitted writes, and
//! caps a transaction at 10,000 writes (`vertex.tx_capacity`), so a write script commits
//! after each bounded step. `replace_owners` keeps Neo4j's order (old edges out, nodes in,
//! stale nodes out, edges in, owner hashes last): an interrupted run leaves owners whose
//! stored hash is still the old one, and the next run rewrites them.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use codectx_errors::Error;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::model::{
    Confidence, Direction, EdgeKind, Node, NodeKind, NodeRow, OwnerGraph, RepositoryInfo,
};
use crate::{EdgeHit, EdgePage, GraphStore, LanguageCount, NodesPage};

/// Rows bound to one write script (each row one vertex or edge).
const BATCH: usize = 500;
/// Owners whose edges or stale nodes one script removes (each owner commits on its own).
const OWNER_BATCH: usize = 50;
/// Vertices one script removes when a graph is deleted.
const DELETE_BATCH: usize = 500;
/// Requests one store sends at once: HugeGraph's REST server answers 503 ("too busy")
/// past its worker threads (`restserver.max_worker_threads`, twice its cores by default)
/// rather than queueing, so the queue is kept here.
const MAX_IN_FLIGHT: usize = 8;
/// Attempts of a request the server turned away as too busy (it did not run it), with
/// a doubling pause from 10 ms: about 1.3 s in all.
const BUSY_ATTEMPTS: u32 = 8;

/// The schema, created idempotently at connect. Labels and keys are constants of this
/// file; edge labels are the code graph's relationship types.
const SCHEMA: &str = r#"
def s = graph.schema()
texts.each { s.propertyKey(it).asText().ifNotExist().create() }
ints.each { s.propertyKey(it).asInt().ifNotExist().create() }
longs.each { s.propertyKey(it).asLong().ifNotExist().create() }
s.propertyKey('test').asBoolean().ifNotExist().create()
s.propertyKey('fact_confidence').asDouble().ifNotExist().create()
s.propertyKey('aliases').asText().valueList().ifNotExist().create()
s.vertexLabel('code_node').useCustomizeStringId()
  .properties('graph_id', 'nid', 'owner', 'generation', 'kind', 'name', 'qualified_name', 'language',
              'path', 'start_line', 'end_line', 'signature', 'summary', 'fingerprint', 'test', 'doc')
  .ifNotExist().create()
s.indexLabel('code_node_by_name').onV('code_node').by('graph_id', 'name').secondary().ifNotExist().create()
s.indexLabel('code_node_by_qualified_name').onV('code_node').by('graph_id', 'qualified_name').secondary().ifNotExist().create()
s.indexLabel('code_node_by_path').onV('code_node').by('graph_id', 'path').secondary().ifNotExist().create()
s.indexLabel('code_node_by_owner').onV('code_node').by('graph_id', 'owner').secondary().ifNotExist().create()
s.indexLabel('code_node_by_kind').onV('code_node').by('graph_id', 'kind').secondary().ifNotExist().create()
s.vertexLabel('code_repository').useCustomizeStringId()
  .properties('graph_id', 'repo_name', 'root', 'commit', 'indexed_at', 'version', 'policy',
              'policy_fingerprint', 'dirty_since')
  .ifNotExist().create()
s.vertexLabel('code_owner').useCustomizeStringId().properties('graph_id', 'owner', 'hash').ifNotExist().create()
s.indexLabel('code_owner_by_graph').onV('code_owner').by('graph_id').secondary().ifNotExist().create()
edge_labels.each { l ->
  s.edgeLabel(l).sourceLabel('code_node').targetLabel('code_node').multiTimes()
    .properties('graph_id', 'owner', 'line', 'confidence').sortKeys('owner', 'line').ifNotExist().create()
  s.indexLabel(l + '_by_owner').onE(l).by('graph_id', 'owner').secondary().ifNotExist().create()
}
s.vertexLabel('memory_entity').useCustomizeStringId()
  .properties('tenant_id', 'namespace', 'eid', 'name', 'entity_type', 'aliases', 'created_at', 'updated_at')
  .nullableKeys('aliases').ifNotExist().create()
s.indexLabel('memory_entity_by_scope').onV('memory_entity').by('tenant_id', 'namespace').secondary().ifNotExist().create()
s.vertexLabel('memory_version').useCustomizeStringId().properties('tenant_id', 'namespace', 'mem_version').ifNotExist().create()
s.edgeLabel('memory_fact').sourceLabel('memory_entity').targetLabel('memory_entity').multiTimes()
  .properties('tenant_id', 'namespace', 'fact_id', 'predicate', 'source_client', 'fact_confidence',
              'created_at', 'updated_at', 'valid_to')
  .sortKeys('fact_id').nullableKeys('valid_to').ifNotExist().create()
'ok'
"#;

const SCHEMA_TEXTS: &[&str] = &[
    "graph_id",
    "nid",
    "owner",
    "generation",
    "kind",
    "name",
    "qualified_name",
    "language",
    "path",
    "signature",
    "summary",
    "fingerprint",
    "doc",
    "confidence",
    "hash",
    "repo_name",
    "root",
    "commit",
    "version",
    "policy",
    "policy_fingerprint",
    "tenant_id",
    "namespace",
    "eid",
    "entity_type",
    "predicate",
    "source_client",
    "fact_id",
];
const SCHEMA_INTS: &[&str] = &["start_line", "end_line", "line"];
const SCHEMA_LONGS: &[&str] = &[
    "indexed_at",
    "dirty_since",
    "created_at",
    "updated_at",
    "valid_to",
    "mem_version",
];

/// A code node as a row (the prefix of every script that returns nodes).
macro_rules! with_node_fn {
    ($body:literal) => {
        concat!(
            "def node = { v -> [id: v.value('nid'), graph_id: v.value('graph_id'), kind: v.value('kind'), ",
            "name: v.value('name'), qualified_name: v.value('qualified_name'), language: v.value('language'), ",
            "path: v.value('path'), start_line: v.value('start_line'), end_line: v.value('end_line'), ",
            "signature: v.value('signature'), summary: v.value('summary'), fingerprint: v.value('fingerprint'), ",
            "test: v.value('test'), doc: v.value('doc')] }\n",
            $body
        )
    };
}

/// A repository vertex as a row.
macro_rules! with_repository_fn {
    ($body:literal) => {
        concat!(
            "def repo = { v -> [graph_id: v.value('graph_id'), name: v.value('repo_name'), root: v.value('root'), ",
            "commit: v.value('commit'), indexed_at: v.value('indexed_at'), version: v.value('version'), ",
            "policy: v.value('policy'), policy_fingerprint: v.value('policy_fingerprint'), ",
            "dirty_since: v.value('dirty_since')] }\n",
            $body
        )
    };
}

const PUT_REPOSITORY: &str = "graph.addVertex(T.label, 'code_repository', T.id, vid, 'graph_id', gid, \
    'repo_name', name, 'root', root, 'commit', commit, 'indexed_at', indexed_at as long, 'version', version, \
    'policy', policy, 'policy_fingerprint', policy_fingerprint, 'dirty_since', dirty_since as long)\n'ok'";

const REPOSITORY: &str = with_repository_fn!(
    "def found = graph.vertices(vid)\n\
     if (!found.hasNext()) return []\n\
     def v = found.next()\n\
     v.value('graph_id') == gid ? [repo(v)] : []"
);

const REPOSITORIES: &str =
    with_repository_fn!("g.V().hasLabel('code_repository').toList().collect { repo(it) }");

const MARK_DIRTY: &str = "def found = graph.vertices(vid)\n\
    if (found.hasNext()) { def v = found.next(); if (v.value('graph_id') == gid && v.value('dirty_since') == 0) v.property('dirty_since', since as long) }\n\
    'ok'";

/// Removes up to `batch` vertices of `label` in the graph (a vertex's edges go with it).
const DELETE_SLICE: &str = "def vs = g.V().hasLabel(vertex_label).has('graph_id', gid).limit(batch).toList()\n\
    vs.each { it.remove() }\n\
    graph.tx().commit()\n\
    vs.size()";

const DELETE_VERTEX: &str = "def found = graph.vertices(vid)\n\
    if (found.hasNext()) { def v = found.next(); if (v.value('graph_id') == gid) v.remove() }\n\
    'ok'";

const OWNER_HASHES: &str = "g.V().hasLabel('code_owner').has('graph_id', gid).toList()\
    .collect { [owner: it.value('owner'), hash: it.value('hash')] }";

/// Removes the edges each owner produced, one owner and label at a time (an index query
/// needs a transaction with nothing uncommitted).
const DELETE_OWNER_EDGES: &str = "def n = 0\n\
    for (o in owners) { for (l in labels) {\n\
      def es = g.E().hasLabel(l).has('graph_id', gid).has('owner', o).toList()\n\
      es.each { it.remove() }\n\
      graph.tx().commit()\n\
      n += es.size()\n\
    } }\n\
    n";

/// Upserts nodes: a vertex written under an existing id replaces its properties and keeps
/// its edges (other owners' edges into it survive a rewrite).
const PUT_NODES: &str = "rows.each { r -> graph.addVertex(T.label, 'code_node', T.id, r.vid, \
    'graph_id', gid, 'nid', r.id, 'owner', r.owner, 'generation', generation, 'kind', r.kind, 'name', r.name, \
    'qualified_name', r.qualified_name, 'language', r.language, 'path', r.path, \
    'start_line', r.start_line as int, 'end_line', r.end_line as int, 'signature', r.signature, \
    'summary', r.summary, 'fingerprint', r.fingerprint, 'test', r.test, 'doc', r.doc) }\n\
    graph.tx().commit()\n\
    rows.size()";

/// Removes the nodes of each owner that this run did not write.
const DELETE_STALE_NODES: &str = "def n = 0\n\
    for (o in owners) {\n\
      def vs = g.V().hasLabel('code_node').has('graph_id', gid).has('owner', o).toList().findAll { it.value('generation') != generation }\n\
      vs.each { it.remove() }\n\
      graph.tx().commit()\n\
      n += vs.size()\n\
    }\n\
    n";

/// Creates edges between existing nodes (an edge to a node no owner wrote is skipped, as
/// Neo4j's MATCH skips it).
const PUT_EDGES: &str = "def cache = [:]\n\
    def vertex = { id -> if (!cache.containsKey(id)) { def it = graph.vertices(id); cache.put(id, it.hasNext() ? it.next() : null) }; cache.get(id) }\n\
    def n = 0\n\
    rows.each { r -> def a = vertex(r.from); def b = vertex(r.to)\n\
      if (a != null && b != null) { a.addEdge(r.label, b, 'graph_id', gid, 'owner', r.owner, 'line', r.line as int, 'confidence', r.confidence); n++ } }\n\
    graph.tx().commit()\n\
    n";

const DELETE_OWNERS: &str = "vids.each { id -> def it = graph.vertices(id); if (it.hasNext()) { def v = it.next(); if (v.value('graph_id') == gid) v.remove() } }\n\
    graph.tx().commit()\n\
    vids.size()";

const PUT_OWNERS: &str = "rows.each { r -> graph.addVertex(T.label, 'code_owner', T.id, r.vid, 'graph_id', gid, 'owner', r.owner, 'hash', r.hash) }\n\
    graph.tx().commit()\n\
    rows.size()";

/// Nodes whose indexed field (`name`, `qualified_name` or `path`: constants of this file)
/// equals a value.
const NODES_BY_FIELD: &str = with_node_fn!(
    "g.V().hasLabel('code_node').has('graph_id', gid).has(field, wanted).toList().collect { node(it) }"
);

const NODES_BY_ID: &str = with_node_fn!(
    "graph.vertices(vids.toArray()).toList().findAll { it.label() == 'code_node' && it.value('graph_id') == gid }.collect { node(it) }"
);

/// The edges of the given labels at a root, with the node at the other end.
const EDGES: &str = with_node_fn!(
    "def found = graph.vertices(vid)\n\
     if (!found.hasNext()) return []\n\
     def root = found.next()\n\
     if (root.value('graph_id') != gid) return []\n\
     def out = []\n\
     def dir = outgoing ? Direction.OUT : Direction.IN\n\
     root.edges(dir, labels as String[]).each { e ->\n\
       def other = outgoing ? e.inVertex() : e.outVertex()\n\
       if (other.value('graph_id') == gid) out << [label: e.label(), line: e.value('line'), confidence: e.value('confidence'), node: node(other)]\n\
     }\n\
     out"
);

const LANGUAGE_COUNTS: &str = "def m = [:]\n\
    g.V().hasLabel('code_node').has('graph_id', gid).toList().each { v ->\n\
      def l = v.value('language')\n\
      if (l == '') return\n\
      def c = m.get(l)\n\
      if (c == null) { c = [language: l, files: 0, symbols: 0, tests: 0]; m.put(l, c) }\n\
      def k = v.value('kind')\n\
      if (k == 'file') c.files += 1\n\
      if (symbols.contains(k)) { c.symbols += 1; if (v.value('test')) c.tests += 1 }\n\
    }\n\
    m.values().toList()";

const NEIGHBOUR_NAMES: &str = "def out = []\n\
    if (vids.isEmpty()) return out\n\
    graph.vertices(vids as Object[]).each { a -> if (a.value('graph_id') == gid) {\n\
      a.edges(Direction.OUT, edge_label).each { e -> def b = e.inVertex()\n\
        if (b.value('graph_id') == gid && to_kinds.contains(b.value('kind'))) out << [a.value('nid'), e.value('line'), b.value('nid'), b.value('name')] } } }\n\
    out";

/// The HugeGraph store: one graph of a HugeGraph server, reached over its REST API.
#[derive(Clone)]
pub struct HugeGraphStore {
    client: reqwest::Client,
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    gremlin_url: String,
    /// `<base>/graphs/<graph>/graph/vertices`: the typed REST endpoint that pages.
    vertices_url: String,
    graph: String,
    user: String,
    password: String,
}

impl std::fmt::Debug for HugeGraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HugeGraphStore")
            .field("gremlin_url", &self.gremlin_url)
            .field("graph", &self.graph)
            .finish_non_exhaustive()
    }
}

pub(crate) fn backend(error: impl std::fmt::Display) -> Error {
    Error::unavailable(format!("graph store (hugegraph): {error}"))
}

/// A vertex id: a type letter and 32 hex of sha256 over the scope and the record's id.
pub(crate) fn vertex_id(kind: char, parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    format!("{kind}{}", hex::encode(&hasher.finalize()[..16]))
}

fn node_vid(graph_id: &str, id: &str) -> String {
    vertex_id('n', &[graph_id, id])
}

/// Splits `http(s)://host:port/<graph>` into the server's base URL and the graph's name
/// (`hugegraph` when the path is empty).
fn split_url(url: &str) -> Result<(String, String), Error> {
    let trimmed = url.trim_end_matches('/');
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        return Err(Error::invalid_argument(
            "hugegraph_url",
            format!("{url:?} is not an http(s) URL like http://hugegraph:8080/hugegraph"),
        ));
    };
    if scheme != "http" && scheme != "https" {
        return Err(Error::invalid_argument(
            "hugegraph_url",
            format!("{url:?} must start with http:// or https://"),
        ));
    }
    if rest.contains('@') {
        return Err(Error::invalid_argument(
            "hugegraph_url",
            "the HugeGraph URL must not carry credentials: give the user and the password separately",
        ));
    }
    let (host, graph) = match rest.split_once('/') {
        Some((host, path)) => (host, path.rsplit('/').next().unwrap_or_default()),
        None => (rest, ""),
    };
    let graph = if graph.is_empty() { "hugegraph" } else { graph };
    if !graph
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Error::invalid_argument(
            "hugegraph_url",
            format!("graph name {graph:?} must be letters, digits, '_' or '-'"),
        ));
    }
    Ok((format!("{scheme}://{host}"), graph.to_owned()))
}

#[derive(Debug, Deserialize)]
struct GremlinReply {
    result: GremlinResult,
}

#[derive(Debug, Deserialize)]
struct GremlinResult {
    #[serde(default)]
    data: Value,
}

#[derive(Debug, Deserialize)]
struct RepositoryRow {
    graph_id: String,
    name: String,
    root: String,
    commit: String,
    indexed_at: i64,
    version: String,
    policy: String,
    policy_fingerprint: String,
    dirty_since: i64,
}

impl From<RepositoryRow> for RepositoryInfo {
    fn from(r: RepositoryRow) -> Self {
        RepositoryInfo {
            graph_id: r.graph_id,
            name: r.name,
            root: r.root,
            commit: r.commit,
            indexed_at: r.indexed_at,
            version: r.version,
            policy: r.policy,
            policy_fingerprint: r.policy_fingerprint,
            dirty_since: r.dirty_since,
        }
    }
}

fn edge_label(kind: EdgeKind) -> &'static str {
    kind.as_str()
}

impl HugeGraphStore {
    /// Connects to `url` (`http(s)://host:port/<graph>`) as `user` and creates the schema
    /// if it does not exist.
    pub async fn connect(url: &str, user: &str, password: &str) -> Result<Self, Error> {
        let (base, graph) = split_url(url)?;
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(8)
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .map_err(backend)?;
        let store = HugeGraphStore {
            client,
            in_flight: std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT)),
            gremlin_url: format!("{base}/gremlin"),
            vertices_url: format!("{base}/graphs/{graph}/graph/vertices"),
            graph,
            user: user.to_owned(),
            password: password.to_owned(),
        };
        let bindings = json!({
            "texts": SCHEMA_TEXTS,
            "ints": SCHEMA_INTS,
            "longs": SCHEMA_LONGS,
            "edge_labels": EdgeKind::ALL.iter().map(|k| edge_label(*k)).collect::<Vec<_>>(),
        });
        // Two processes starting at once both create the schema; the loser of a race is
        // told a label exists, and the next attempt finds every label there.
        let mut last = None;
        for _ in 0..3 {
            match store.run(SCHEMA, bindings.clone()).await {
                Ok(_) => return Ok(store),
                Err(error) => last = Some(error),
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        Err(last.unwrap_or_else(|| backend("schema not created")))
    }

    /// Runs a fixed script with its values bound; answers the script's result list.
    /// (A binding must not be named like a Gremlin default import: `label`, `id`, `key`
    /// and `value` resolve to `T.label` and its kin, not to the binding.)
    pub(crate) async fn run(&self, script: &'static str, bindings: Value) -> Result<Value, Error> {
        let body = json!({
            "gremlin": script,
            "bindings": bindings,
            "language": "gremlin-groovy",
            "aliases": { "g": format!("__g_{}", self.graph), "graph": self.graph },
        });
        let bytes = self
            .send(|| self.client.post(&self.gremlin_url).json(&body))
            .await?;
        let reply: GremlinReply = serde_json::from_slice(&bytes).map_err(backend)?;
        Ok(reply.result.data)
    }

    /// Sends one request (built afresh for each attempt) with the store's credentials,
    /// at most [`MAX_IN_FLIGHT`] at once, retrying a 503 (the server did not run it);
    /// answers the body of a success and a backend error naming the server's reason
    /// otherwise.
    async fn send(&self, request: impl Fn() -> reqwest::RequestBuilder) -> Result<Vec<u8>, Error> {
        let _permit = self.in_flight.acquire().await.map_err(backend)?;
        let mut pause = std::time::Duration::from_millis(10);
        let mut attempt = 1;
        let (status, bytes) = loop {
            let response = request()
                .basic_auth(&self.user, Some(&self.password))
                .send()
                .await
                .map_err(backend)?;
            let status = response.status();
            let bytes = response.bytes().await.map_err(backend)?;
            if status != reqwest::StatusCode::SERVICE_UNAVAILABLE || attempt >= BUSY_ATTEMPTS {
                break (status, bytes);
            }
            tokio::time::sleep(pause).await;
            pause *= 2;
            attempt += 1;
        };
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(backend(format!(
                "the server refused the credentials of user {:?} (401)",
                self.user
            )));
        }
        if !status.is_success() {
            #[derive(Deserialize)]
            struct Failure {
                #[serde(default)]
                exception: String,
                #[serde(default)]
                message: String,
            }
            let detail = serde_json::from_slice::<Failure>(&bytes)
                .map(|f| format!("{} {}", f.exception, f.message))
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
            return Err(backend(format!("{status}: {}", detail.trim())));
        }
        Ok(bytes.into())
    }

    /// Runs a script whose result is a list of rows of `T`.
    pub(crate) async fn rows<T: DeserializeOwned>(
        &self,
        script: &'static str,
        bindings: Value,
    ) -> Result<Vec<T>, Error> {
        let data = self.run(script, bindings).await?;
        serde_json::from_value(data).map_err(backend)
    }

    /// Runs a script whose result is one number (a count of what it did).
    async fn count(&self, script: &'static str, bindings: Value) -> Result<u64, Error> {
        let counts: Vec<u64> = self.rows(script, bindings).await?;
        Ok(counts.into_iter().sum())
    }

    async fn nodes_where(
        &self,
        graph_id: &str,
        field: &'static str,
        value: &str,
    ) -> Result<Vec<Node>, Error> {
        let rows: Vec<NodeRow> = self
            .rows(
                NODES_BY_FIELD,
                json!({"gid": graph_id, "field": field, "wanted": value}),
            )
            .await?;
        Ok(scoped_nodes(graph_id, rows))
    }
}

/// A HugeGraph corpus cursor: the index of the kind being read, `:`, and the server's
/// page token within it (empty: its first page).
fn parse_cursor(cursor: &str) -> Result<(usize, String), Error> {
    if cursor.is_empty() {
        return Ok((0, String::new()));
    }
    cursor
        .split_once(':')
        .and_then(|(kind, token)| Some((kind.parse().ok()?, token.to_owned())))
        .ok_or_else(|| {
            Error::invalid_argument(
                "cursor",
                "not a cursor this store wrote: start again from an empty cursor",
            )
        })
}

/// The typed REST endpoint's answer to a paged vertex query.
#[derive(Deserialize)]
struct VerticesReply {
    vertices: Vec<VertexReply>,
    #[serde(default)]
    page: Option<String>,
}

#[derive(Deserialize)]
struct VertexReply {
    properties: NodeRow,
}

impl HugeGraphStore {
    /// One page of a graph's code nodes of one kind through the REST endpoint that pages
    /// over the `(graph_id, kind)` index: the rows and the server's token for the next
    /// page (`None`: the last). The values travel as a JSON query parameter, read as
    /// values (`keep_start_p`: a value that starts like `P.gt(...)` stays text).
    async fn vertices_page(
        &self,
        graph_id: &str,
        kind: &str,
        token: &str,
        limit: usize,
    ) -> Result<(Vec<NodeRow>, Option<String>), Error> {
        let properties = json!({"graph_id": graph_id, "kind": kind}).to_string();
        let limit = limit.to_string();
        let bytes = self
            .send(|| {
                self.client.get(&self.vertices_url).query(&[
                    ("label", "code_node"),
                    ("properties", properties.as_str()),
                    ("keep_start_p", "true"),
                    ("page", token),
                    ("limit", limit.as_str()),
                ])
            })
            .await?;
        let reply: VerticesReply = serde_json::from_slice(&bytes).map_err(backend)?;
        let rows = reply.vertices.into_iter().map(|v| v.properties).collect();
        Ok((rows, reply.page.filter(|p| !p.is_empty())))
    }
}

/// The rows of this graph as nodes (a row of another graph is never answered).
fn scoped_nodes(graph_id: &str, rows: Vec<NodeRow>) -> Vec<Node> {
    rows.into_iter()
        .filter(|r| r.graph_id == graph_id)
        .map(NodeRow::into_node)
        .collect()
}

fn by_place(nodes: &mut [Node]) {
    nodes.sort_by(|a, b| {
        (&a.path, a.start_line, &a.qualified_name, &a.id).cmp(&(
            &b.path,
            b.start_line,
            &b.qualified_name,
            &b.id,
        ))
    });
}

#[async_trait]
impl GraphStore for HugeGraphStore {
    fn backend(&self) -> &'static str {
        "hugegraph"
    }

    async fn put_repository(&self, r: &RepositoryInfo) -> Result<(), Error> {
        self.run(
            PUT_REPOSITORY,
            json!({
                "vid": vertex_id('r', &[&r.graph_id]),
                "gid": r.graph_id,
                "name": r.name,
                "root": r.root,
                "commit": r.commit,
                "indexed_at": r.indexed_at,
                "version": r.version,
                "policy": r.policy,
                "policy_fingerprint": r.policy_fingerprint,
                "dirty_since": r.dirty_since,
            }),
        )
        .await?;
        Ok(())
    }

    async fn repository(&self, graph_id: &str) -> Result<Option<RepositoryInfo>, Error> {
        let rows: Vec<RepositoryRow> = self
            .rows(
                REPOSITORY,
                json!({"vid": vertex_id('r', &[graph_id]), "gid": graph_id}),
            )
            .await?;
        Ok(rows.into_iter().next().map(RepositoryInfo::from))
    }

    async fn repositories(&self) -> Result<Vec<RepositoryInfo>, Error> {
        let rows: Vec<RepositoryRow> = self.rows(REPOSITORIES, json!({})).await?;
        let mut out: Vec<RepositoryInfo> = rows.into_iter().map(RepositoryInfo::from).collect();
        out.sort_by(|a, b| (&a.name, &a.graph_id).cmp(&(&b.name, &b.graph_id)));
        Ok(out)
    }

    async fn mark_dirty(&self, graph_id: &str, since: i64) -> Result<(), Error> {
        self.run(
            MARK_DIRTY,
            json!({"vid": vertex_id('r', &[graph_id]), "gid": graph_id, "since": since}),
        )
        .await?;
        Ok(())
    }

    async fn delete_graph(&self, graph_id: &str) -> Result<(), Error> {
        for label in ["code_node", "code_owner"] {
            while self
                .count(
                    DELETE_SLICE,
                    json!({"vertex_label": label, "gid": graph_id, "batch": DELETE_BATCH}),
                )
                .await?
                > 0
            {}
        }
        self.run(
            DELETE_VERTEX,
            json!({"vid": vertex_id('r', &[graph_id]), "gid": graph_id}),
        )
        .await?;
        Ok(())
    }

    async fn owner_hashes(&self, graph_id: &str) -> Result<HashMap<String, String>, Error> {
        #[derive(Deserialize)]
        struct OwnerRow {
            owner: String,
            hash: String,
        }
        let rows: Vec<OwnerRow> = self.rows(OWNER_HASHES, json!({"gid": graph_id})).await?;
        Ok(rows.into_iter().map(|r| (r.owner, r.hash)).collect())
    }

    async fn replace_owners(
        &self,
        graph_id: &str,
        removed: &[String],
        owners: Vec<OwnerGraph>,
    ) -> Result<(), Error> {
        let touched: Vec<&str> = removed
            .iter()
            .map(String::as_str)
            .chain(owners.iter().map(|o| o.owner.as_str()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        if touched.is_empty() {
            return Ok(());
        }
        let generation = codectx_core::ids::mint("gen");
        let labels: Vec<&str> = EdgeKind::ALL.iter().map(|k| edge_label(*k)).collect();
        // 1. Edges these owners produced go; they are re-created below.
        for chunk in touched.chunks(OWNER_BATCH) {
            self.count(
                DELETE_OWNER_EDGES,
                json!({"gid": graph_id, "owners": chunk, "labels": labels}),
            )
            .await?;
        }
        // 2. Nodes, upserted (same ids keep their incoming edges from other owners).
        let rows: Vec<Value> = owners
            .iter()
            .flat_map(|o| {
                o.nodes.iter().map(|n| {
                    json!({
                        "vid": node_vid(graph_id, &n.id),
                        "id": n.id,
                        "owner": o.owner,
                        "kind": n.kind.as_str(),
                        "name": n.name,
                        "qualified_name": n.qualified_name,
                        "language": n.language,
                        "path": n.path,
                        "start_line": n.start_line,
                        "end_line": n.end_line,
                        "signature": n.signature,
                        "summary": n.summary,
                        "fingerprint": n.fingerprint,
                        "test": n.test,
                        "doc": n.doc,
                    })
                })
            })
            .collect();
        for chunk in rows.chunks(BATCH) {
            self.count(
                PUT_NODES,
                json!({"gid": graph_id, "generation": generation, "rows": chunk}),
            )
            .await?;
        }
        // 3. Nodes of these owners that were not written now are gone.
        for chunk in touched.chunks(OWNER_BATCH) {
            self.count(
                DELETE_STALE_NODES,
                json!({"gid": graph_id, "owners": chunk, "generation": generation}),
            )
            .await?;
        }
        // 4. Edges.
        let rows: Vec<Value> = owners
            .iter()
            .flat_map(|o| {
                o.edges.iter().map(|e| {
                    json!({
                        "from": node_vid(graph_id, &e.from),
                        "to": node_vid(graph_id, &e.to),
                        "label": edge_label(e.kind),
                        "owner": o.owner,
                        "line": e.line,
                        "confidence": e.confidence.as_str(),
                    })
                })
            })
            .collect();
        for chunk in rows.chunks(BATCH) {
            self.count(PUT_EDGES, json!({"gid": graph_id, "rows": chunk}))
                .await?;
        }
        // 5. Owner hashes, last.
        let gone: Vec<String> = removed
            .iter()
            .map(|o| vertex_id('o', &[graph_id, o]))
            .collect();
        for chunk in gone.chunks(BATCH) {
            self.count(DELETE_OWNERS, json!({"gid": graph_id, "vids": chunk}))
                .await?;
        }
        let hashes: Vec<Value> = owners
            .iter()
            .map(|o| {
                json!({"vid": vertex_id('o', &[graph_id, &o.owner]), "owner": o.owner, "hash": o.hash})
            })
            .collect();
        for chunk in hashes.chunks(BATCH) {
            self.count(PUT_OWNERS, json!({"gid": graph_id, "rows": chunk}))
                .await?;
        }
        Ok(())
    }

    async fn nodes_by_name(
        &self,
        graph_id: &str,
        name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        let mut nodes = self.nodes_where(graph_id, "name", name).await?;
        by_place(&mut nodes);
        nodes.truncate(limit);
        Ok(nodes)
    }

    async fn nodes_by_qualified_name(
        &self,
        graph_id: &str,
        qualified_name: &str,
        limit: usize,
    ) -> Result<Vec<Node>, Error> {
        let mut nodes = self
            .nodes_where(graph_id, "qualified_name", qualified_name)
            .await?;
        by_place(&mut nodes);
        nodes.truncate(limit);
        Ok(nodes)
    }

    async fn nodes(&self, graph_id: &str, ids: &[String]) -> Result<Vec<Node>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let vids: Vec<String> = ids.iter().map(|id| node_vid(graph_id, id)).collect();
        let rows: Vec<NodeRow> = self
            .rows(NODES_BY_ID, json!({"gid": graph_id, "vids": vids}))
            .await?;
        Ok(scoped_nodes(graph_id, rows))
    }

    async fn nodes_in_path(&self, graph_id: &str, path: &str) -> Result<Vec<Node>, Error> {
        let mut nodes = self.nodes_where(graph_id, "path", path).await?;
        nodes.sort_by(|a, b| crate::model::outline_key(a).cmp(&crate::model::outline_key(b)));
        Ok(nodes)
    }

    async fn edges(
        &self,
        graph_id: &str,
        root: &str,
        kinds: &[EdgeKind],
        direction: Direction,
        limit: usize,
    ) -> Result<EdgePage, Error> {
        #[derive(Deserialize)]
        struct EdgeRow {
            label: String,
            line: i64,
            confidence: String,
            node: NodeRow,
        }
        let mut kinds = kinds.to_vec();
        kinds.sort_by_key(|k| k.as_str());
        kinds.dedup();
        if kinds.is_empty() {
            return Ok(EdgePage::default());
        }
        let labels: Vec<&str> = kinds.iter().map(|k| edge_label(*k)).collect();
        let rows: Vec<EdgeRow> = self
            .rows(
                EDGES,
                json!({
                    "gid": graph_id,
                    "vid": node_vid(graph_id, root),
                    "labels": labels,
                    "outgoing": direction == Direction::Outgoing,
                }),
            )
            .await?;
        let mut hits: Vec<EdgeHit> = rows
            .into_iter()
            .filter(|r| r.node.graph_id == graph_id)
            .filter_map(|r| {
                Some(EdgeHit {
                    kind: EdgeKind::parse(&r.label)?,
                    line: r.line.max(0) as u32,
                    confidence: Confidence::parse(&r.confidence).unwrap_or(Confidence::Unresolved),
                    node: r.node.into_node(),
                })
            })
            .collect();
        // Same order as the other backends: by relationship type name, then the other
        // end's path, the edge's line, the node's start line, qualified name and id.
        hits.sort_by(|a, b| {
            (
                a.kind.as_str(),
                &a.node.path,
                a.line,
                a.node.start_line,
                &a.node.qualified_name,
                &a.node.id,
            )
                .cmp(&(
                    b.kind.as_str(),
                    &b.node.path,
                    b.line,
                    b.node.start_line,
                    &b.node.qualified_name,
                    &b.node.id,
                ))
        });
        let total = hits.len();
        hits.truncate(limit);
        Ok(EdgePage {
            hits,
            total,
            light: false,
        })
    }

    async fn nodes_of_kinds_page(
        &self,
        graph_id: &str,
        kinds: &[NodeKind],
        cursor: &str,
        limit: usize,
    ) -> Result<NodesPage, Error> {
        let (mut kind, mut token) = parse_cursor(cursor)?;
        // Kinds with nothing left are skipped here, so a page is empty only at the end.
        while let Some(wanted) = kinds.get(kind) {
            let (rows, next) = self
                .vertices_page(graph_id, wanted.as_str(), &token, limit.max(1))
                .await?;
            let nodes = scoped_nodes(graph_id, rows);
            let next = match next {
                Some(page) => Some((kind, page)),
                None if kind + 1 < kinds.len() => Some((kind + 1, String::new())),
                None => None,
            };
            if nodes.is_empty()
                && let Some((k, t)) = next.clone()
            {
                (kind, token) = (k, t);
                continue;
            }
            return Ok(NodesPage {
                nodes,
                next: next.map(|(k, t)| format!("{k}:{t}")),
            });
        }
        Ok(NodesPage::default())
    }

    async fn language_counts(&self, graph_id: &str) -> Result<Vec<LanguageCount>, Error> {
        #[derive(Deserialize)]
        struct LanguageRow {
            language: String,
            files: u64,
            symbols: u64,
            tests: u64,
        }
        let symbols: Vec<&str> = crate::query::SYMBOL_KINDS
            .iter()
            .map(|k| k.as_str())
            .collect();
        let rows: Vec<LanguageRow> = self
            .rows(
                LANGUAGE_COUNTS,
                json!({"gid": graph_id, "symbols": symbols}),
            )
            .await?;
        let mut out: Vec<LanguageCount> = rows
            .into_iter()
            .map(|r| LanguageCount {
                language: r.language,
                files: r.files,
                symbols: r.symbols,
                tests: r.tests,
            })
            .collect();
        out.sort_by(|a, b| a.language.cmp(&b.language));
        Ok(out)
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
        // Vertex ids hash the graph with the node's id: another graph's id names nothing.
        let vids: Vec<String> = sources.iter().map(|id| node_vid(graph_id, id)).collect();
        let to_kinds: Vec<&str> = to_kinds.iter().map(|k| k.as_str()).collect();
        let mut rows: Vec<(String, i64, String, String)> = self
            .rows(
                NEIGHBOUR_NAMES,
                json!({
                    "gid": graph_id,
                    "edge_label": edge_label(kind),
                    "vids": vids,
                    "to_kinds": to_kinds,
                }),
            )
            .await?;
        rows.sort_by(|a, b| (&a.0, a.1, &a.3, &a.2).cmp(&(&b.0, b.1, &b.3, &b.2)));
        Ok(rows
            .into_iter()
            .map(|(source, _, _, name)| (source, name))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_graph_and_carry_no_credentials() {
        assert_eq!(
            split_url("http://hg:8080/codectx").unwrap(),
            ("http://hg:8080".to_owned(), "codectx".to_owned())
        );
        assert_eq!(
            split_url("https://hg:8443/").unwrap(),
            ("https://hg:8443".to_owned(), "hugegraph".to_owned())
        );
        assert!(split_url("http://admin:secret@hg:8080/hugegraph").is_err());
        assert!(split_url("bolt://hg:7687").is_err());
        assert!(split_url("http://hg:8080/graph'); g.V().drop()").is_err());
    }

    #[test]
    fn vertex_ids_differ_by_scope() {
        assert_ne!(node_vid("g1", "n1"), node_vid("g2", "n1"));
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(vertex_id('m', &["ab", "c"]), vertex_id('m', &["a", "bc"]));
        assert_eq!(node_vid("g1", "n1").len(), 33);
    }
}
