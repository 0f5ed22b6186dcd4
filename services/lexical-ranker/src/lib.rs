//! lexical-ranker: exact identifier lookup and BM25 over the lexical corpus that
//! graph-hydrator streams, cached per (scope, version) with a byte-size weigher. The scope
//! (code graph or memory namespace) always comes from the verified context.

mod grpc;
mod previous;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use codectx_clients::{GraphClient, PeerConfig};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_lexical::{Document, LexicalIndex, WordForms};
use codectx_proto::graph::v1::{GetCorpusVersionRequest, StreamLexicalCorpusRequest};
use codectx_proto::lexical::v1::{ScopeKind, lexical_ranker_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::{Scope, TenantContext};
use serde::{Deserialize, Serialize};
use tonic::service::Routes;

/// Service name in logs, spans and the environment prefix `CODECTX_LEXICAL_RANKER__`.
pub const NAME: &str = "lexical-ranker";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50052;

const CAPABILITIES: &[&str] = &[
    "describe",
    "exact_lookup",
    "bm25",
    "code_scope",
    "memory_scope",
];

/// Configuration: defaults, then the TOML file, then `CODECTX_LEXICAL_RANKER__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub peers: Peers,
    /// Memory for cached indexes, in MiB (weighed by approximate index size).
    pub cache_mib: u64,
    /// How long a request waits, in milliseconds, for its scope's index to load before
    /// it answers `unavailable` ("loading; retry in a few seconds"). The load goes on
    /// for the next request. Under the operation deadline, so a caller hears why
    /// instead of a `deadline_exceeded` that tells it to narrow its request.
    pub load_wait_ms: u64,
    /// How long, in milliseconds from when a new version is first seen, code calls wait
    /// for its index when the previous version's index is held: past it, they are
    /// answered from the previous one, marked `stale`, while the new one loads (a large
    /// repository's re-index after a save does not make every search wait or fail for
    /// the whole rebuild).
    pub stale_wait_ms: u64,
}

/// The `[peers]` section: services this one calls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Peers {
    pub graph_hydrator: PeerConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            peers: Peers::default(),
            cache_mib: 512,
            load_wait_ms: limits::INDEX_LOAD_WAIT_SECONDS * 1000,
            stale_wait_ms: STALE_WAIT_MS,
        }
    }
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            graph_hydrator: PeerConfig::single("http://127.0.0.1:50055"),
        }
    }
}

/// [`Config::stale_wait_ms`] by default: a small repository's new index (the Python
/// standard library's in about 2 s here; most in well under a second) is usually ready
/// within it, so answers stay fresh; a large one's is not waited for.
pub const STALE_WAIT_MS: u64 = 1_000;

/// Builds the service; it is ready at once (indexes load on first use).
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let graph = GraphClient::connect(&config.peers.graph_hydrator)?;
    let cache = moka::future::Cache::builder()
        .weigher(|_key: &(String, String), index: &Arc<LexicalIndex>| {
            u32::try_from(index.approximate_bytes()).unwrap_or(u32::MAX)
        })
        .max_capacity(config.cache_mib.max(1) * 1024 * 1024)
        .build();
    let ranker = LexicalRanker {
        graph,
        cache,
        cache_bytes: config.cache_mib.max(1) * 1024 * 1024,
        oversize: Arc::new(Mutex::new(None)),
        current: Arc::new(Mutex::new(HashMap::new())),
        previous: Arc::new(previous::PreviousIndexes::default()),
        load_wait: std::time::Duration::from_millis(config.load_wait_ms),
        stale_wait: std::time::Duration::from_millis(config.stale_wait_ms),
    };
    Ok(BuiltService {
        name: NAME,
        grpc_name: lexical_ranker_service_server::SERVICE_NAME,
        routes: Routes::new(
            lexical_ranker_service_server::LexicalRankerServiceServer::new(ranker)
                .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct LexicalRanker {
    graph: GraphClient,
    /// (scope key, corpus version) → index.
    cache: moka::future::Cache<(String, String), Arc<LexicalIndex>>,
    /// The cache's budget in bytes ([`Config::cache_mib`]).
    cache_bytes: u64,
    /// The latest index heavier than the whole budget, which the cache cannot hold:
    /// kept here, one at a time, so a repository that large is served from memory
    /// instead of being streamed and built again for every call (with a warning to
    /// raise `cache_mib`).
    oversize: Arc<Mutex<Option<Held>>>,
    /// scope key → the version last served, so a new version evicts the old index.
    current: Arc<Mutex<HashMap<String, String>>>,
    /// Each code scope's previous index, answered from (marked stale) past
    /// [`Config::stale_wait_ms`] while a newer version loads.
    previous: Arc<previous::PreviousIndexes>,
    /// How long a request waits for a load ([`Config::load_wait_ms`]).
    load_wait: std::time::Duration,
    /// How long a code request waits for a new version's load when the previous
    /// version's index is held ([`Config::stale_wait_ms`]).
    stale_wait: std::time::Duration,
}

/// An index to answer from: its version, and whether a newer version is loading (then
/// the index is the previous version's).
pub(crate) struct Served {
    pub index: Arc<LexicalIndex>,
    pub version: String,
    pub stale: bool,
}

impl Served {
    fn fresh(index: Arc<LexicalIndex>, version: String) -> Self {
        Self {
            index,
            version,
            stale: false,
        }
    }
}

/// A cache key: (scope key, corpus version).
pub(crate) type IndexKey = (String, String);

/// An index held outside the cache, with its key.
pub(crate) type Held = (IndexKey, Arc<LexicalIndex>);

/// The scope part of a cache key, for logs (`code:gph_...`, `memory:...`).
fn key_scope(key: &(String, String)) -> &str {
    &key.0
}

impl LexicalRanker {
    /// The index held for `key`, in the cache or in the oversize slot.
    async fn held(&self, key: &(String, String)) -> Result<Option<Arc<LexicalIndex>>, Error> {
        if let Some(index) = self.cache.get(key).await {
            return Ok(Some(index));
        }
        let oversize = self
            .oversize
            .lock()
            .map_err(|_| Error::internal("oversize lock poisoned"))?;
        Ok(oversize
            .as_ref()
            .filter(|(held, _)| held == key)
            .map(|(_, index)| index.clone()))
    }

    /// The index of the caller's scope at the corpus's current version, or at `known`
    /// (the version the caller knows) when an index of its scope at that version is held:
    /// then without a round trip to graph-hydrator. A code scope whose new version is
    /// still loading past [`Config::stale_wait_ms`] is answered from the previous
    /// version's index when it is held ([`Served::stale`]).
    pub(crate) async fn index(
        &self,
        context: &TenantContext,
        scope: ScopeKind,
        known: &str,
    ) -> Result<Served, Error> {
        let scope_key = match scope {
            ScopeKind::Memory => {
                context.require_scope(Scope::ReadMemory)?;
                format!("memory:{}", context.namespace())
            }
            _ => {
                context.require_scope(Scope::ReadCode)?;
                format!("code:{}", context.graph_id())
            }
        };
        // The scope comes from the verified context: a caller's version only picks among
        // its own scope's indexes.
        if !known.is_empty()
            && let Some(index) = self.held(&(scope_key.clone(), known.to_owned())).await?
        {
            return Ok(Served::fresh(index, known.to_owned()));
        }
        let version = self
            .graph
            .get_corpus_version(
                context,
                GetCorpusVersionRequest {
                    scope: scope as i32,
                },
            )
            .await?
            .version;
        let previous = {
            let mut current = self
                .current
                .lock()
                .map_err(|_| Error::internal("version map lock poisoned"))?;
            current.insert(scope_key.clone(), version.clone())
        };
        if let Some(previous) = previous.filter(|p| *p != version) {
            let stale = (scope_key.clone(), previous);
            // A code scope keeps the previous index to answer from while the new one
            // loads (when two re-indexes come quickly, the last index loaded stays).
            if scope != ScopeKind::Memory
                && let Some(index) = self.held(&stale).await?
            {
                self.previous.replaced((stale.clone(), index))?;
            }
            self.cache.invalidate(&stale).await;
            let mut oversize = self
                .oversize
                .lock()
                .map_err(|_| Error::internal("oversize lock poisoned"))?;
            if oversize.as_ref().is_some_and(|(held, _)| *held == stale) {
                *oversize = None;
            }
        }
        let key = (scope_key, version.clone());
        if let Some(index) = self.held(&key).await? {
            self.previous.loaded(&key)?;
            return Ok(Served::fresh(index, version));
        }
        let fallback = self.previous.of(&key.0)?;
        let graph = self.graph.clone();
        let loader_context = context.clone();
        let cache = self.cache.clone();
        let (oversize, cache_bytes) = (self.oversize.clone(), self.cache_bytes);
        let (previous, current) = (self.previous.clone(), self.current.clone());
        let loader_key = key.clone();
        let loaded_key = key.clone();
        // The load runs in a task of its own: a caller that gives up (its deadline passed
        // while a large corpus streams in) does not cancel it, so the index is ready for
        // the next call instead of every call starting over. Concurrent callers share one
        // load (moka coalesces them).
        let load = tokio::spawn(async move {
            let loaded = cache
                .try_get_with(key.clone(), async move {
                    let mut stream = graph
                        .stream_lexical_corpus(
                            &loader_context,
                            StreamLexicalCorpusRequest {
                                scope: scope as i32,
                                with_neighbours: false,
                            },
                        )
                        .await?;
                    let mut documents = Vec::new();
                    while let Some(chunk) = stream.message().await.map_err(Error::from)? {
                        documents.extend(chunk.entries.into_iter().map(|e| Document {
                            id: e.entity_id,
                            name: e.name,
                            qualified_name: e.qualified_name,
                            kind: e.kind,
                            signature: e.signature,
                            aliases: e.aliases,
                            error_messages: e.error_messages,
                            summary: e.summary,
                            facts: e.facts,
                            predicates: e.predicates,
                            doc: e.doc,
                            in_tests: e.in_tests,
                            path: e.path,
                            line: e.line,
                        }));
                    }
                    // Memory is prose: its word forms fold; code names stay as written.
                    let words = match scope {
                        ScopeKind::Memory => WordForms::Folded,
                        _ => WordForms::Kept,
                    };
                    let index = tokio::task::spawn_blocking(move || {
                        LexicalIndex::build_with(documents, words)
                    })
                    .await
                    .map_err(|e| Error::internal(format!("index builder: {e}")))?;
                    tracing::info!(
                        scope = key_scope(&loader_key),
                        documents = index.len(),
                        mib = index.approximate_bytes() / (1024 * 1024),
                        "lexical index built"
                    );
                    Ok::<_, Error>(Arc::new(index))
                })
                .await?;
            if loaded.approximate_bytes() as u64 > cache_bytes {
                let mut held = oversize
                    .lock()
                    .map_err(|_| Arc::new(Error::internal("oversize lock poisoned")))?;
                // Callers that waited on the same load all land here: warn once.
                if held.as_ref().is_none_or(|(held, _)| *held != key) {
                    tracing::warn!(
                        scope = key_scope(&key),
                        mib = loaded.approximate_bytes() / (1024 * 1024),
                        cache_mib = cache_bytes / (1024 * 1024),
                        "a lexical index is heavier than the whole cache (lexical-ranker cache_mib): \
                         it is kept alone outside it; raise cache_mib to hold it with the others"
                    );
                    *held = Some((key, loaded.clone()));
                }
            }
            // The new index is in: the previous one is no longer answered from. Unless a
            // newer version was seen while this one loaded: then this one is the newest
            // index there is, and is answered from while that one loads.
            let newest = current
                .lock()
                .map_err(|_| Arc::new(Error::internal("version map lock poisoned")))?
                .get(&loaded_key.0)
                .is_none_or(|version| *version == loaded_key.1);
            if newest || scope == ScopeKind::Memory {
                previous.loaded(&loaded_key).map_err(Arc::new)?;
            } else {
                previous
                    .superseded((loaded_key, loaded.clone()))
                    .map_err(Arc::new)?;
            }
            Ok::<_, Arc<Error>>(loaded)
        });
        // With the previous version's index held, a code call waits for the new one
        // until `stale_wait_ms` after the new version was first seen, then is answered
        // from the previous (its ids that the graph no longer has are dropped at
        // hydration): a small repository's calls get the new index, and during a large
        // one's rebuild only the first calls wait.
        let wait = match &fallback {
            Some((_, since)) => self.stale_wait.saturating_sub(since.elapsed()),
            None => self.load_wait,
        };
        let index = match tokio::time::timeout(wait, load).await {
            Ok(joined) => joined
                .map_err(|e| Error::internal(format!("corpus loader: {e}")))?
                .map_err(|e: Arc<Error>| (*e).clone())?,
            Err(_) => {
                if let Some((((_, previous_version), index), _)) = fallback {
                    return Ok(Served {
                        index,
                        version: previous_version,
                        stale: true,
                    });
                }
                // A large corpus (a big repository on a server graph store, the first
                // request after a start) can take longer than a tool call may: the caller
                // hears that the index is loading and when to ask again, while the load
                // goes on.
                return Err(Error::loading(format!(
                    "the lexical index of this {} is still loading (a large corpus, first \
                     read after a start or a re-index); retry in a few seconds",
                    match scope {
                        ScopeKind::Memory => "memory namespace",
                        _ => "repository",
                    }
                )));
            }
        };
        Ok(Served::fresh(index, version))
    }
}
