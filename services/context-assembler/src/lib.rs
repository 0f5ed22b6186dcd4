//! context-assembler: Orchestrates the retrieval legs and the graph into small, budgeted answers.
//!
//! It answers symbol context, call graphs, code search and minimal context for a task
//! (exact lookup, BM25 and the dense leg over code symbol vectors, fused: `ranking`,
//! `code_vectors`), agent memory (remember, forget, hybrid recall), PR context (change
//! impact) and verified code snippets.

mod code;
mod code_vectors;
mod dense;
mod describe;
mod freshness;
mod grpc;
mod memory;
mod ranking;

use std::sync::Arc;

use codectx_clients::{EmbeddingClient, GraphClient, LexicalClient, PeerConfig, VectorClient};
use codectx_errors::Error;
use codectx_proto::assembler::v1::context_assembler_service_server;
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;

/// Service name in logs, spans and the environment prefix `CODECTX_CONTEXT_ASSEMBLER__`.
pub const NAME: &str = "context-assembler";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50056;

/// Capabilities this build implements (reported by `Describe`).
const CAPABILITIES: &[&str] = &[
    "describe",
    "symbol_context",
    "call_graph",
    "search",
    "recall",
    "remember",
    "forget",
];

/// Configuration: defaults, then the TOML file, then `CODECTX_CONTEXT_ASSEMBLER__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub peers: Peers,
    pub retrieval: RetrievalConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            peers: Peers::default(),
            retrieval: RetrievalConfig::default(),
        }
    }
}

/// The `[retrieval]` section: which ranking legs free-text questions use, and the
/// floors that decide when code matched nothing.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    pub legs: RetrievalLegs,
    pub code_floors: CodeFloors,
}

/// When a code candidate of free text counts as a match (ranking.rs): the dense leg's
/// cosine similarity, and BM25's score per content word of the query (when the dense
/// leg is there to judge). Calibrated on `bench/calibration/code.json`; configurable so
/// the calibration can try others (`codectx bench --code-floors`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CodeFloors {
    pub dense: f64,
    pub lexical: f64,
    /// The weight of BM25's list in the fusion when the dense leg matched and BM25 is
    /// under its floor (0: not fused; 1: plain RRF).
    pub lexical_weight: f64,
}

impl Default for CodeFloors {
    fn default() -> Self {
        CodeFloors {
            dense: ranking::CODE_DENSE_FLOOR,
            lexical: ranking::LEXICAL_STRENGTH_FLOOR,
            lexical_weight: ranking::WEAK_LEXICAL_WEIGHT,
        }
    }
}

/// Ranking legs for free text (`search`, `minimal_context`, `recall`). `hybrid` is the
/// product; `lexical` and `dense` exist so `codectx bench` can measure each leg alone on
/// the same questions (an ablation, not a tuning knob). Symbol selectors (`symbol`
/// arguments) resolve exactly in every mode: they are lookups, not retrieval.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalLegs {
    /// Exact identifiers, BM25 and the dense leg, fused with RRF (k = 60).
    #[default]
    Hybrid,
    /// Exact identifiers and BM25 only.
    Lexical,
    /// Exact identifiers only (names and aliases as written, qualified names).
    Exact,
    /// BM25 only (no exact identifier match is taken as one).
    Bm25,
    /// The dense leg only (memory entity parts; code symbols by their metadata text).
    Dense,
    /// Code: exact identifiers, then Milvus's native hybrid search (a BM25 function over
    /// the symbols' metadata text and the dense leg, fused by RRF k = 60 in Milvus; needs
    /// vector-gateway's `vectors.milvus_native_hybrid`). Memory: as `hybrid`. Measured
    /// against the in-house fusion in docs/BENCHMARKS.md (ADR 0015).
    Native,
}

impl RetrievalLegs {
    /// Whether the lexical ranker is asked at all (for its exact or its BM25 matches).
    pub fn lexical(self) -> bool {
        self.exact() || self.bm25()
    }

    /// Whether identifiers resolve exactly (the exact leg).
    pub fn exact(self) -> bool {
        matches!(
            self,
            RetrievalLegs::Hybrid
                | RetrievalLegs::Lexical
                | RetrievalLegs::Exact
                | RetrievalLegs::Native
        )
    }

    /// Whether code's BM25 and dense legs are Milvus's native hybrid search instead.
    pub fn native(self) -> bool {
        self == RetrievalLegs::Native
    }

    /// The legs memory uses: native hybrid holds code only, so memory stays hybrid.
    pub fn memory(self) -> RetrievalLegs {
        if self.native() {
            RetrievalLegs::Hybrid
        } else {
            self
        }
    }

    /// Whether BM25 candidates count (native: the shared ranker's BM25 judges whether a
    /// query matched; Milvus's own BM25 ranks).
    pub fn bm25(self) -> bool {
        matches!(
            self,
            RetrievalLegs::Hybrid
                | RetrievalLegs::Lexical
                | RetrievalLegs::Bm25
                | RetrievalLegs::Native
        )
    }

    pub fn dense(self) -> bool {
        matches!(self, RetrievalLegs::Hybrid | RetrievalLegs::Dense)
    }

    /// Whether a lexical candidate belongs to these legs (`exact` says which leg found it).
    pub fn keeps(self, exact: bool) -> bool {
        if exact { self.exact() } else { self.bm25() }
    }
}

/// The `[peers]` section: services this one calls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Peers {
    pub lexical_ranker: PeerConfig,
    pub embedding: PeerConfig,
    pub vector_gateway: PeerConfig,
    pub graph_hydrator: PeerConfig,
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            lexical_ranker: PeerConfig::single("http://127.0.0.1:50052"),
            embedding: PeerConfig::single("http://127.0.0.1:50053"),
            vector_gateway: PeerConfig::single("http://127.0.0.1:50054"),
            graph_hydrator: PeerConfig::single("http://127.0.0.1:50055"),
        }
    }
}

/// Builds the service's routes; it is ready as soon as it is built.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let service = ContextAssembler {
        graph: GraphClient::connect(&config.peers.graph_hydrator)?,
        lexical: LexicalClient::connect(&config.peers.lexical_ranker)?,
        embedding: EmbeddingClient::connect(&config.peers.embedding)?,
        vectors: VectorClient::connect(&config.peers.vector_gateway)?,
        backfill: memory::Backfill::default(),
        retrieval: config.retrieval.legs,
        code_floors: config.retrieval.code_floors,
        code_vectors: code_vectors::CodeVectors::default(),
        freshness: Arc::default(),
    };
    Ok(BuiltService {
        name: NAME,
        grpc_name: context_assembler_service_server::SERVICE_NAME,
        routes: Routes::new(
            context_assembler_service_server::ContextAssemblerServiceServer::new(service)
                .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct ContextAssembler {
    graph: GraphClient,
    lexical: LexicalClient,
    embedding: EmbeddingClient,
    vectors: VectorClient,
    backfill: memory::Backfill,
    retrieval: RetrievalLegs,
    code_floors: CodeFloors,
    code_vectors: code_vectors::CodeVectors,
    freshness: Arc<freshness::Freshness>,
}

impl ContextAssembler {
    /// A code operation under the deadline, its answer stamped with the graph's index
    /// (commit or version, and staleness: `freshness`).
    async fn code<T>(
        &self,
        context: &codectx_tenant::TenantContext,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        deadline(async {
            let index = self.freshness.index(&self.graph, context).await;
            freshness::with_index(index, work).await
        })
        .await
    }

    fn dense_code(&self) -> ranking::DenseCode {
        ranking::DenseCode {
            floors: self.code_floors,
            vectors: self.code_vectors.clone(),
            clients: code_vectors::Clients {
                graph: self.graph.clone(),
                embedding: self.embedding.clone(),
                vectors: self.vectors.clone(),
            },
        }
    }

    fn legs(&self) -> memory::Legs<'_> {
        memory::Legs {
            graph: &self.graph,
            lexical: &self.lexical,
            embedding: &self.embedding,
            vectors: &self.vectors,
            backfill: &self.backfill,
            retrieval: self.retrieval.memory(),
        }
    }
}

/// Every operation ends within the DESIGN.md deadline (10 s).
async fn deadline<T>(
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::time::timeout(
        std::time::Duration::from_secs(codectx_core::limits::OPERATION_DEADLINE_SECONDS),
        work,
    )
    .await
    .map_err(|_| {
        Error::new(
            codectx_errors::ErrorKind::DeadlineExceeded,
            "the answer took longer than 10 s; narrow the request",
        )
    })?
}

#[cfg(test)]
mod tests {
    use super::RetrievalLegs;

    #[test]
    fn each_arm_keeps_only_its_own_legs() {
        let keeps = |legs: RetrievalLegs| (legs.keeps(true), legs.keeps(false), legs.dense());
        assert_eq!(keeps(RetrievalLegs::Hybrid), (true, true, true));
        assert_eq!(keeps(RetrievalLegs::Lexical), (true, true, false));
        assert_eq!(keeps(RetrievalLegs::Exact), (true, false, false));
        assert_eq!(keeps(RetrievalLegs::Bm25), (false, true, false));
        assert_eq!(keeps(RetrievalLegs::Dense), (false, false, true));
        assert!(!RetrievalLegs::Dense.lexical());
        // Native: the exact leg stays; the shared BM25 judges whether a query matched and
        // Milvus's fused list ranks (dense() is the in-house dense list, not run for it).
        assert_eq!(keeps(RetrievalLegs::Native), (true, true, false));
        assert!(RetrievalLegs::Native.native() && !RetrievalLegs::Hybrid.native());
        assert_eq!(RetrievalLegs::Native.memory(), RetrievalLegs::Hybrid);
    }
}
