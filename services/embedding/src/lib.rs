//! embedding: local sentence embeddings over gRPC. The model loads in the background;
//! health reports NOT_SERVING until it has, and calls answer UNAVAILABLE with the reason
//! (missing library or model, broken file) so callers fall back to lexical-only.
//! Queries come first: they have a queue of their own, concurrent queries are
//! micro-batched, and a bulk (entity) request is embedded a few texts at a time with the
//! waiting queries served between them, so a search does not wait for a code-vector
//! build's batches. Query embeddings are cached.

mod grpc;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use codectx_embed::{Embedder, ModelFiles};
use codectx_errors::Error;
use codectx_proto::embedding::v1::embedding_service_server;
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tonic::service::Routes;

/// Service name in logs, spans and the environment prefix `CODECTX_EMBEDDING__`.
pub const NAME: &str = "embedding";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50053;

const CAPABILITIES: &[&str] = &["describe", "embed", "model_info"];

/// Texts per request.
pub const MAX_TEXTS: usize = 64;

/// Configuration: defaults, then the TOML file, then `CODECTX_EMBEDDING__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub model: ModelConfig,
}

/// The `[model]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Directory with `model.onnx`, `tokenizer.json` and (unless `runtime` is set)
    /// `libonnxruntime.so.1.32.0`, as `make models` lays it out.
    pub directory: String,
    /// ONNX Runtime library; empty: `ORT_DYLIB_PATH`, else `<directory>/libonnxruntime.so.1.32.0`.
    pub runtime: String,
    /// Texts per call to the model when batching concurrent requests.
    pub max_batch: usize,
    /// How long a batch waits for more requests, in microseconds.
    pub batch_wait_us: u64,
    /// Cached query embeddings.
    pub query_cache_entries: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            model: ModelConfig::default(),
        }
    }
}

impl Default for ModelConfig {
    fn default() -> Self {
        let directory = std::env::var("HOME")
            .map(|home| format!("{home}/.cache/codectx/models"))
            .unwrap_or_else(|_| ".cache/codectx/models".into());
        Self {
            directory,
            runtime: String::new(),
            max_batch: 32,
            batch_wait_us: 1_000,
            query_cache_entries: 10_000,
        }
    }
}

impl ModelConfig {
    pub fn files(&self) -> ModelFiles {
        let mut files = ModelFiles::in_directory(std::path::Path::new(&self.directory));
        if !self.runtime.is_empty() {
            files.runtime = PathBuf::from(&self.runtime);
        } else if let Ok(path) = std::env::var("ORT_DYLIB_PATH") {
            files.runtime = PathBuf::from(path);
        }
        files
    }
}

type Job = (Vec<String>, oneshot::Sender<Result<Vec<Vec<f32>>, Error>>);

/// Texts of a bulk request embedded per model call; queries waiting are served between
/// these calls (a query waits for at most this many texts of a bulk request).
const BULK_CHUNK: usize = 4;

/// The two queues of the model's worker.
#[derive(Clone)]
struct Queues {
    query: mpsc::Sender<Job>,
    bulk: mpsc::Sender<Job>,
}

/// Which queue a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    Query,
    Bulk,
}

/// Model state: loading, loaded, or failed with the reason.
enum State {
    Loading,
    Ready(Queues, codectx_embed::ModelIdentity),
    Failed(String),
}

struct EmbeddingService {
    state: Arc<RwLock<State>>,
    queries: moka::future::Cache<String, Arc<Vec<f32>>>,
}

/// Builds the service and starts loading the model in the background.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let readiness = Readiness::new(false);
    let state = Arc::new(RwLock::new(State::Loading));
    let files = config.model.files();
    let max_batch = config.model.max_batch.max(1);
    let wait = Duration::from_micros(config.model.batch_wait_us);
    let loading_state = state.clone();
    let loading_readiness = readiness.clone();
    tokio::spawn(async move {
        let loaded = tokio::task::spawn_blocking(move || Embedder::load(&files)).await;
        let next = match loaded {
            Ok(Ok(embedder)) => {
                let identity = embedder.identity().clone();
                let (query, queries) = mpsc::channel::<Job>(1024);
                let (bulk, bulks) = mpsc::channel::<Job>(1024);
                tokio::spawn(worker(Arc::new(embedder), queries, bulks, max_batch, wait));
                loading_readiness.set_ready(true);
                State::Ready(Queues { query, bulk }, identity)
            }
            Ok(Err(error)) => {
                tracing::error!(%error, "embedding model unavailable; the system runs lexical-only");
                State::Failed(error.message().to_owned())
            }
            Err(error) => State::Failed(format!("model loader crashed: {error}")),
        };
        if let Ok(mut state) = loading_state.write() {
            *state = next;
        }
    });
    let service = EmbeddingService {
        state,
        queries: moka::future::Cache::builder()
            .max_capacity(config.model.query_cache_entries)
            .build(),
    };
    Ok(BuiltService {
        name: NAME,
        grpc_name: embedding_service_server::SERVICE_NAME,
        routes: Routes::new(
            embedding_service_server::EmbeddingServiceServer::new(service)
                .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness,
    })
}

/// The model's worker: queries first (concurrent ones gathered into one call of at most
/// `max_batch` texts), then bulk requests [`BULK_CHUNK`] texts at a time, serving the
/// queries that arrived meanwhile between chunks. (Each text is its own inference
/// anyway, `Embedder::embed`, so chunking costs a bulk request nothing but the hops.)
async fn worker(
    embedder: Arc<Embedder>,
    mut queries: mpsc::Receiver<Job>,
    mut bulks: mpsc::Receiver<Job>,
    max_batch: usize,
    wait: Duration,
) {
    loop {
        tokio::select! {
            biased;
            Some(first) = queries.recv() => {
                answer_queries(&embedder, first, &mut queries, max_batch, wait).await;
            }
            Some((texts, reply)) = bulks.recv() => {
                let mut vectors = Vec::with_capacity(texts.len());
                let mut failed = None;
                for chunk in texts.chunks(BULK_CHUNK) {
                    while let Ok(first) = queries.try_recv() {
                        answer_queries(&embedder, first, &mut queries, max_batch, Duration::ZERO).await;
                    }
                    match embed(&embedder, chunk.to_vec()).await {
                        Ok(chunk) => vectors.extend(chunk),
                        Err(error) => {
                            failed = Some(error);
                            break;
                        }
                    }
                }
                let _ = reply.send(failed.map_or(Ok(vectors), Err));
            }
            else => return,
        }
    }
}

/// Answers `first` and the queries that arrive within `wait` (at most `max_batch` texts)
/// with one call to the model.
async fn answer_queries(
    embedder: &Arc<Embedder>,
    first: Job,
    queries: &mut mpsc::Receiver<Job>,
    max_batch: usize,
    wait: Duration,
) {
    let mut jobs = vec![first];
    let mut texts = jobs[0].0.len();
    let deadline = tokio::time::Instant::now() + wait;
    while texts < max_batch {
        match tokio::time::timeout_at(deadline, queries.recv()).await {
            Ok(Some(job)) => {
                texts += job.0.len();
                jobs.push(job);
            }
            _ => break,
        }
    }
    let all: Vec<String> = jobs.iter().flat_map(|(t, _)| t.iter().cloned()).collect();
    match embed(embedder, all).await {
        Ok(mut vectors) => {
            for (job_texts, reply) in jobs {
                let rest = vectors.split_off(job_texts.len());
                let _ = reply.send(Ok(std::mem::replace(&mut vectors, rest)));
            }
        }
        Err(error) => {
            for (_, reply) in jobs {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}

/// One call to the model, off the async threads.
async fn embed(embedder: &Arc<Embedder>, texts: Vec<String>) -> Result<Vec<Vec<f32>>, Error> {
    let model = embedder.clone();
    tokio::task::spawn_blocking(move || model.embed(&texts))
        .await
        .unwrap_or_else(|e| Err(Error::internal(format!("embedding worker: {e}"))))
}

impl EmbeddingService {
    fn ready(&self) -> Result<(Queues, codectx_embed::ModelIdentity), Error> {
        let state = self
            .state
            .read()
            .map_err(|_| Error::internal("model state lock poisoned"))?;
        match &*state {
            State::Ready(queues, identity) => Ok((queues.clone(), identity.clone())),
            State::Loading => Err(Error::loading(
                "the embedding model is still loading; retry shortly",
            )),
            State::Failed(reason) => Err(Error::unavailable(format!(
                "the embedding model is not available: {reason}"
            ))),
        }
    }

    async fn run(
        &self,
        queues: &Queues,
        priority: Priority,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, Error> {
        let (reply, answer) = oneshot::channel();
        let sender = match priority {
            Priority::Query => &queues.query,
            Priority::Bulk => &queues.bulk,
        };
        sender
            .send((texts, reply))
            .await
            .map_err(|_| Error::unavailable("the embedding worker stopped"))?;
        answer
            .await
            .map_err(|_| Error::unavailable("the embedding worker stopped"))?
    }
}
