//! vector-gateway: dense nearest-neighbour search and upsert/delete over memory entity
//! vectors. Tenant and namespace come only from the verified context; hits from any other
//! scope are dropped again after the backend's own filter.

mod grpc;

use std::sync::Arc;

use codectx_errors::Error;
use codectx_proto::vector::v1::vector_gateway_service_server;
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_vector::VectorStore;
use codectx_vector::embedded::{EmbeddedVectorStore, Options as EmbeddedOptions};
use codectx_vector_milvus::{FilterMode, MilvusVectorStore};
use serde::{Deserialize, Serialize};
use tonic::service::Routes;

/// Service name in logs, spans and the environment prefix `CODECTX_VECTOR_GATEWAY__`.
pub const NAME: &str = "vector-gateway";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50054;

const CAPABILITIES: &[&str] = &["describe", "upsert", "delete", "nearest", "list_ids"];

/// Records per upsert, ids per delete.
pub const MAX_RECORDS: usize = 256;

/// Configuration: defaults, then the TOML file, then `CODECTX_VECTOR_GATEWAY__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub vectors: VectorsConfig,
}

/// The `[vectors]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct VectorsConfig {
    /// `embedded` (default) or `milvus`.
    pub backend: String,
    /// The embedded store's file.
    pub embedded_path: String,
    /// The least share of a large scope's rows an embedded search reads, in (0, 1]: 1
    /// (default) reads every row, exact; below 1, scopes of more than 16,384 vectors
    /// are grouped into lists and a search reads the nearest lists, approximate
    /// (ADR 0018; `codectx bench recall` measures the recall of a share).
    pub embedded_probe_share: f64,
    /// Milvus gRPC endpoint, e.g. `http://milvus:19530`.
    pub milvus_uri: String,
    /// Name of the environment variable holding a Milvus token (`user:password` or API key).
    pub milvus_token_env: String,
    /// `template` (filter parameters; Milvus 2.5+) or `literal` (servers without
    /// templates, such as milvus-lite: only minted-id values are accepted, quoted).
    pub milvus_filter_mode: String,
    /// Keep each record's approved text in a versioned hybrid collection beside the dense
    /// one and answer `Hybrid` (Milvus's BM25 function and dense, fused by RRF k = 60 on
    /// the server). Off by default: the in-house fusion is the default (ADR 0015).
    pub milvus_native_hybrid: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            vectors: VectorsConfig::default(),
        }
    }
}

impl Default for VectorsConfig {
    fn default() -> Self {
        Self {
            backend: "embedded".into(),
            embedded_path: ".codectx/vectors.db".into(),
            embedded_probe_share: 1.0,
            milvus_uri: String::new(),
            milvus_token_env: "CODECTX_MILVUS_TOKEN".into(),
            milvus_filter_mode: "template".into(),
            milvus_native_hybrid: false,
        }
    }
}

/// Opens the configured backend and builds the service over it.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let vectors = &config.vectors;
    if vectors.milvus_native_hybrid && vectors.backend != "milvus" {
        return Err(Error::invalid_argument(
            "vectors.milvus_native_hybrid",
            "native hybrid search needs vectors.backend = \"milvus\"",
        ));
    }
    let mut hybrid = None;
    let store: Arc<dyn VectorStore> = match vectors.backend.as_str() {
        "embedded" => Arc::new(EmbeddedVectorStore::open_with(
            std::path::Path::new(&vectors.embedded_path),
            EmbeddedOptions {
                probe_share: vectors.embedded_probe_share,
            },
        )?),
        "milvus" => {
            let mode = match vectors.milvus_filter_mode.as_str() {
                "template" => FilterMode::Template,
                "literal" => FilterMode::Literal,
                other => {
                    return Err(Error::invalid_argument(
                        "vectors.milvus_filter_mode",
                        format!("unknown filter mode {other:?}: use template or literal"),
                    ));
                }
            };
            if vectors.milvus_uri.is_empty() {
                return Err(Error::invalid_argument(
                    "vectors.milvus_uri",
                    "vectors.backend is milvus but vectors.milvus_uri is empty",
                ));
            }
            let token = std::env::var(&vectors.milvus_token_env).unwrap_or_default();
            let milvus =
                Arc::new(MilvusVectorStore::connect(&vectors.milvus_uri, &token, mode).await?);
            if vectors.milvus_native_hybrid {
                hybrid = Some(milvus.clone());
            }
            milvus
        }
        other => {
            return Err(Error::invalid_argument(
                "vectors.backend",
                format!("unknown vector backend {other:?}: use embedded or milvus"),
            ));
        }
    };
    Ok(build_with_stores(store, hybrid))
}

/// Builds the service over an open store.
pub fn build_with_store(store: Arc<dyn VectorStore>) -> BuiltService {
    build_with_stores(store, None)
}

/// Builds the service over an open store and, for native hybrid search, the Milvus store
/// that keeps the hybrid collections.
pub fn build_with_stores(
    store: Arc<dyn VectorStore>,
    hybrid: Option<Arc<MilvusVectorStore>>,
) -> BuiltService {
    BuiltService {
        name: NAME,
        grpc_name: vector_gateway_service_server::SERVICE_NAME,
        routes: Routes::new(
            vector_gateway_service_server::VectorGatewayServiceServer::new(VectorGateway {
                store,
                hybrid,
            })
            .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    }
}

struct VectorGateway {
    store: Arc<dyn VectorStore>,
    /// The Milvus store's hybrid collections, when native hybrid search is on.
    hybrid: Option<Arc<MilvusVectorStore>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_env(value: &str) -> Result<Config, codectx_config::ConfigError> {
        codectx_config::load_with_env(
            "vector-gateway",
            None,
            [(
                "CODECTX_VECTOR_GATEWAY__VECTORS__EMBEDDED_PROBE_SHARE".to_owned(),
                value.to_owned(),
            )],
        )
    }

    #[test]
    fn the_probe_share_defaults_to_exact_and_reads_from_the_environment() {
        assert_eq!(Config::default().vectors.embedded_probe_share, 1.0);
        // An integer and a fraction both read as a share.
        assert_eq!(from_env("1").unwrap().vectors.embedded_probe_share, 1.0);
        assert_eq!(from_env("0.25").unwrap().vectors.embedded_probe_share, 0.25);
        assert!(from_env("a quarter").is_err());
    }

    #[tokio::test]
    async fn a_share_outside_zero_to_one_refuses_to_start() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.vectors.embedded_path = dir.path().join("vectors.db").display().to_string();
        config.vectors.embedded_probe_share = 0.0;
        let Err(refused) = build(config).await else {
            panic!("a share of 0 was accepted");
        };
        assert!(
            refused.to_string().contains("embedded_probe_share"),
            "{refused}"
        );
    }
}
