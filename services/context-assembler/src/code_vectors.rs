//! The dense leg for code: one vector per symbol of the kinds a task asks for
//! ([`CODE_KINDS`]), embedded from metadata only ([`CodeSymbol`]: kind, name and path
//! words, signature, doc, and the names it uses and holds; ADR 0011), stored in the vector
//! store's code scope (the graph, shared by every tenant entitled to it: the scope comes
//! from the verified context).
//!
//! Vectors follow the graph without the indexer: a symbol's vector id derives from its
//! node id and its text (`code_vector_id`), so comparing the graph's corpus with the ids
//! stored tells what to embed (new or changed symbols) and what to delete (gone or
//! changed), and a restart re-embeds nothing. The work is done by a sync task per graph,
//! started by the requests that need it and run under the caller's own context: it stops
//! before that context expires (60 s), and the next request carries on. Until a graph is
//! fully embedded the dense leg answers from what is there and the answer says so
//! (`degraded: vector: code vectors building (N of M symbols)`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use codectx_clients::{EmbeddingClient, GraphClient, VectorClient};
use codectx_core::embedding_text::{CODE_KINDS, CodeSymbol, code_vector_id};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::embedding::v1::{EmbedPurpose, EmbedRequest, ModelIdentity};
use codectx_proto::graph::v1 as graph;
use codectx_proto::lexical::v1::ScopeKind;
use codectx_proto::vector::v1::{self as vector, VectorScopeKind};
use codectx_tenant::TenantContext;

/// Texts per embedding call (the embedding service's cap is 64).
const EMBED_BATCH: usize = 64;
/// How long before its context expires a sync task stops.
const CONTEXT_MARGIN_SECONDS: i64 = 8;
/// How often a fully embedded graph's version is checked again.
const VERSION_CHECK: Duration = Duration::from_secs(2);

/// The legs a sync task and the dense query use.
#[derive(Clone)]
pub struct Clients {
    pub graph: GraphClient,
    pub embedding: EmbeddingClient,
    pub vectors: VectorClient,
}

/// One graph's code vectors as this process knows them.
#[derive(Default)]
struct Graph {
    /// The corpus version the plan below was made from.
    version: String,
    /// Vector id -> node id, for every symbol of the corpus.
    owners: HashMap<String, String>,
    /// Vector ids of test code (tests, symbols of test files).
    tests: HashSet<String>,
    /// (vector id, text) still to embed.
    pending: VecDeque<(String, String)>,
    /// Vector ids to delete (symbols gone or changed).
    stale: Vec<String>,
    /// A sync task is running.
    busy: bool,
    /// When the version was last compared.
    checked: Option<Instant>,
    model: Option<ModelIdentity>,
    last_error: Option<String>,
}

impl Graph {
    fn total(&self) -> usize {
        self.owners.len()
    }

    fn embedded(&self) -> usize {
        self.owners.len().saturating_sub(self.pending.len())
    }
}

/// What the dense leg can do for a graph now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// Every symbol is embedded.
    Ready,
    /// Some are; the answer is built from those.
    Building { embedded: usize, total: usize },
    /// The graph's plan is not made yet (its first request started it).
    Starting,
}

impl Readiness {
    /// The `degraded` note of an answer, when it is one.
    pub fn note(&self) -> Option<String> {
        match self {
            Readiness::Ready => None,
            Readiness::Building { embedded, total } => Some(format!(
                "vector: code vectors building ({} of {} symbols)",
                codectx_errors::group_thousands(*embedded as u64),
                codectx_errors::group_thousands(*total as u64)
            )),
            Readiness::Starting => Some("vector: code vectors starting".into()),
        }
    }
}

/// Every graph's code vectors.
#[derive(Default, Clone)]
pub struct CodeVectors {
    graphs: Arc<Mutex<HashMap<String, Arc<Mutex<Graph>>>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl CodeVectors {
    fn graph(&self, graph_id: &str) -> Arc<Mutex<Graph>> {
        lock(&self.graphs)
            .entry(graph_id.to_owned())
            .or_default()
            .clone()
    }

    /// Starts (or carries on) the graph's sync under `context` unless one runs, and says
    /// what the dense leg can do now.
    pub fn advance(&self, clients: &Clients, context: &TenantContext) -> Readiness {
        let graph = self.graph(context.graph_id());
        let readiness;
        {
            let mut state = lock(&graph);
            readiness = if state.version.is_empty() {
                Readiness::Starting
            } else if state.pending.is_empty() {
                Readiness::Ready
            } else {
                Readiness::Building {
                    embedded: state.embedded(),
                    total: state.total(),
                }
            };
            let idle = state.pending.is_empty()
                && state.stale.is_empty()
                && state.checked.is_some_and(|at| at.elapsed() < VERSION_CHECK);
            if state.busy || idle {
                return readiness;
            }
            state.busy = true;
        }
        let clients = clients.clone();
        let context = context.clone();
        tokio::spawn(async move {
            let outcome = sync(&clients, &context, &graph).await;
            let mut state = lock(&graph);
            state.busy = false;
            state.last_error = outcome.err().map(|error| {
                tracing::warn!(%error, "code vector sync paused");
                error.to_string()
            });
        });
        readiness
    }
}

fn expired(context: &TenantContext) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    now + CONTEXT_MARGIN_SECONDS >= context.expires_at()
}

/// One sync run: re-plan when the corpus changed, then delete stale vectors and embed
/// pending ones until done or the context is about to expire.
async fn sync(
    clients: &Clients,
    context: &TenantContext,
    graph: &Mutex<Graph>,
) -> Result<(), Error> {
    let version = clients
        .graph
        .get_corpus_version(
            context,
            graph::GetCorpusVersionRequest {
                scope: ScopeKind::Code as i32,
            },
        )
        .await?
        .version;
    let planned = {
        let mut state = lock(graph);
        state.checked = Some(Instant::now());
        state.version == version
    };
    if !planned {
        plan(clients, context, graph, &version).await?;
    }
    loop {
        if expired(context) {
            return Ok(());
        }
        let (stale, batch, model) = {
            let mut state = lock(graph);
            let deleting = state.stale.len().min(256);
            let stale: Vec<String> = state.stale.drain(..deleting).collect();
            let take = state.pending.len().min(EMBED_BATCH);
            let batch: Vec<(String, String)> = state.pending.iter().take(take).cloned().collect();
            (stale, batch, state.model.clone())
        };
        if stale.is_empty() && batch.is_empty() {
            return Ok(());
        }
        if !stale.is_empty() {
            clients
                .vectors
                .delete(
                    context,
                    vector::DeleteRequest {
                        entity_ids: stale,
                        scope: VectorScopeKind::Code as i32,
                    },
                )
                .await?;
        }
        if batch.is_empty() {
            continue;
        }
        let embedded = clients
            .embedding
            .embed(
                context,
                EmbedRequest {
                    texts: batch.iter().map(|(_, text)| text.clone()).collect(),
                    purpose: EmbedPurpose::Entity as i32,
                },
            )
            .await?;
        if model
            .as_ref()
            .is_some_and(|m| Some(m) != embedded.model.as_ref())
        {
            // The model changed under us: plan again against the new model's collection.
            lock(graph).version.clear();
            return Ok(());
        }
        let records: Vec<vector::VectorRecord> = batch
            .iter()
            .zip(embedded.embeddings)
            .map(|((id, text), e)| vector::VectorRecord {
                entity_id: id.clone(),
                values: e.values,
                // The same metadata text, for native hybrid search when the gateway
                // keeps it (vectors.milvus_native_hybrid).
                text: text.clone(),
            })
            .collect();
        let written = records.len();
        clients
            .vectors
            .upsert(
                context,
                vector::UpsertRequest {
                    model: embedded.model.clone(),
                    records,
                    scope: VectorScopeKind::Code as i32,
                },
            )
            .await?;
        let mut state = lock(graph);
        state.model = embedded.model;
        for _ in 0..written {
            state.pending.pop_front();
        }
    }
}

/// Makes the plan for `version`: every symbol's vector id and text from the corpus, what
/// the store already holds, what to embed and what to delete.
async fn plan(
    clients: &Clients,
    context: &TenantContext,
    graph: &Mutex<Graph>,
    version: &str,
) -> Result<(), Error> {
    // The model's identity names its collection: one embedding tells it.
    let probe = clients
        .embedding
        .embed(
            context,
            EmbedRequest {
                texts: vec!["code".into()],
                purpose: EmbedPurpose::Query as i32,
            },
        )
        .await?;
    let model = probe.model;
    let mut stream = clients
        .graph
        .stream_lexical_corpus(
            context,
            graph::StreamLexicalCorpusRequest {
                scope: ScopeKind::Code as i32,
                with_neighbours: true,
            },
        )
        .await?;
    let mut owners: HashMap<String, String> = HashMap::new();
    let mut tests: HashSet<String> = HashSet::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    while let Some(chunk) = stream.message().await.map_err(Error::from)? {
        for entry in chunk.entries {
            if !CODE_KINDS.contains(&entry.kind.as_str()) {
                continue;
            }
            let text = CodeSymbol {
                kind: &entry.kind,
                name: &entry.name,
                qualified_name: &entry.qualified_name,
                signature: &entry.signature,
                summary: &entry.summary,
                doc: &entry.doc,
                uses: &entry.uses,
                members: &entry.members,
            }
            .text();
            let id = code_vector_id(&entry.entity_id, &text);
            if entry.in_tests {
                tests.insert(id.clone());
            }
            if owners.insert(id.clone(), entry.entity_id).is_none() {
                texts.push((id, text));
            }
        }
    }
    // What the store holds, listed by the first hex digit (each listing is capped).
    let mut stored: HashSet<String> = HashSet::new();
    for digit in "0123456789abcdef".chars() {
        let listed = clients
            .vectors
            .list_ids(
                context,
                vector::ListIdsRequest {
                    model: model.clone(),
                    scope: VectorScopeKind::Code as i32,
                    prefix: format!("cv_{digit}"),
                },
            )
            .await?;
        stored.extend(listed.entity_ids);
    }
    // Similar lengths batch together: a batch is padded to its longest text.
    let mut pending: Vec<(String, String)> = texts
        .into_iter()
        .filter(|(id, _)| !stored.contains(id))
        .collect();
    pending.sort_by_key(|(_, text)| text.len());
    let pending: VecDeque<(String, String)> = pending.into();
    let stale: Vec<String> = stored
        .into_iter()
        .filter(|id| !owners.contains_key(id))
        .collect();
    tracing::info!(
        symbols = owners.len(),
        to_embed = pending.len(),
        to_delete = stale.len(),
        "code vector plan"
    );
    let mut state = lock(graph);
    state.version = version.to_owned();
    state.owners = owners;
    state.tests = tests;
    state.pending = pending;
    state.stale = stale;
    state.model = model;
    Ok(())
}

/// Milvus's native hybrid search for a code query (BM25 over the symbols' metadata text
/// and the dense leg, fused by RRF in Milvus), with the dense collection's nearest
/// similarity that judges whether the query matched (RRF scores are no similarity): node
/// ids, best first, with the fused score, at most [`limits::CANDIDATES_PER_LEG`], test
/// code left out as for [`nearest`]; the query is embedded once for both.
pub async fn native(
    vectors: &CodeVectors,
    clients: &Clients,
    context: &TenantContext,
    query: &str,
    production_only: bool,
) -> Result<(Vec<(String, f64)>, Option<f64>), Error> {
    let depth = fetch_depth(production_only);
    let (model, query_vector) =
        crate::dense::embed_query(&clients.embedding, context, query).await?;
    let fused = clients.vectors.hybrid(
        context,
        vector::HybridRequest {
            model: model.clone(),
            query: query_vector.clone(),
            text: query.to_owned(),
            limit: depth as u32,
            scope: VectorScopeKind::Code as i32,
        },
    );
    let judge = crate::dense::nearest_to(
        &clients.vectors,
        context,
        model,
        query_vector,
        VectorScopeKind::Code,
        depth,
    );
    let (fused, judge) = tokio::join!(fused, judge);
    let top = known(vectors, context, judge?, production_only)
        .first()
        .map(|(_, score)| *score);
    Ok((known(vectors, context, fused?.hits, production_only), top))
}

/// How deep a leg reads: deeper when test code is left out, so tests named like the task
/// do not crowd out the code it describes.
fn fetch_depth(production_only: bool) -> usize {
    if production_only {
        limits::VECTOR_FETCH_DEPTH
    } else {
        limits::CANDIDATES_PER_LEG
    }
}

/// The hits whose vector the plan knows, as node ids (a vector of a symbol that changed
/// since is dropped), test code left out with `production_only`, at most
/// [`limits::CANDIDATES_PER_LEG`].
fn known(
    vectors: &CodeVectors,
    context: &TenantContext,
    hits: Vec<vector::VectorHit>,
    production_only: bool,
) -> Vec<(String, f64)> {
    let graph = vectors.graph(context.graph_id());
    let state = lock(&graph);
    hits.into_iter()
        .filter(|h| !(production_only && state.tests.contains(&h.entity_id)))
        .filter_map(|h| {
            state
                .owners
                .get(&h.entity_id)
                .map(|node| (node.clone(), h.score))
        })
        .take(limits::CANDIDATES_PER_LEG)
        .collect()
}

/// The dense leg for a code query: node ids of the nearest symbols at or above `floor`,
/// best first, with their similarity, at most [`limits::CANDIDATES_PER_LEG`]. With
/// `production_only`, test code is left out before that cut: the leg reads deeper
/// ([`limits::VECTOR_FETCH_DEPTH`]) so tests named like the task do not crowd out the code
/// it describes.
pub async fn nearest(
    vectors: &CodeVectors,
    clients: &Clients,
    context: &TenantContext,
    query: &str,
    floor: f64,
    production_only: bool,
) -> Result<Vec<(String, f64)>, Error> {
    let hits = crate::dense::nearest(
        &clients.embedding,
        &clients.vectors,
        context,
        query,
        VectorScopeKind::Code,
        fetch_depth(production_only),
    )
    .await?;
    let mut kept = known(vectors, context, hits, production_only);
    kept.retain(|(_, score)| *score >= floor);
    Ok(kept)
}
