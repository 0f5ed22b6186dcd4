//! vector-gateway: dense nearest-neighbour search and upsert/delete over memory entity
//! vectors. Tenant and namespace come only from the verified context; hits from any other
//! scope are dropped again after the backend's own filter.

use std::sync::Arc;

use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::vector::v1::{self as pb, vector_gateway_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::{Scope, TenantContext, from_request};
use codectx_vector::embedded::EmbeddedVectorStore;
use codectx_vector::{CollectionKey, VectorScope, VectorStore, check_entity_id, isolate, prepare};
use codectx_vector_milvus::{FilterMode, HybridRecord, MilvusVectorStore};
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_VECTOR_GATEWAY__`.
pub const NAME: &str = "vector-gateway";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50054;

const CAPABILITIES: &[&str] = &["describe", "upsert", "delete", "nearest", "list_ids"];

/// Records per upsert, ids per delete.
pub const MAX_RECORDS: usize = 256;

/// Configuration: defaults, then the TOML file, then `CODECTX_VECTOR_GATEWAY__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub vectors: VectorsConfig,
}

/// The `[vectors]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct VectorsConfig {
    /// `embedded` (default) or `milvus`.
    pub backend: String,
    /// The embedded store's file.
    pub embedded_path: String,
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
        "embedded" => Arc::new(EmbeddedVectorStore::open(std::path::Path::new(
            &vectors.embedded_path,
        ))?),
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

/// How many hits a search reads: 0 means the leg's 10; a caller may read deeper than it
/// fuses, to filter (limits.rs).
fn depth(limit: u32) -> usize {
    if limit == 0 {
        limits::CANDIDATES_PER_LEG
    } else {
        (limit as usize).min(limits::VECTOR_FETCH_DEPTH)
    }
}

fn answer(hits: Vec<codectx_vector::Hit>) -> pb::NearestResponse {
    pb::NearestResponse {
        hits: hits
            .into_iter()
            .map(|h| pb::VectorHit {
                entity_id: h.entity_id,
                score: f64::from(h.score),
            })
            .collect(),
    }
}

/// The scope a request reaches, from the verified context alone, and the permission it
/// needs: memory is the context's tenant and namespace (`read_memory` to read,
/// `write_memory` to write); code is the context's graph, shared by every tenant entitled
/// to it (`read_code` for both: code vectors are derived from the graph's metadata by
/// context-assembler, the only caller NetworkPolicy lets in).
fn scope(context: &TenantContext, kind: i32, write: bool) -> Result<VectorScope, Error> {
    match pb::VectorScopeKind::try_from(kind).unwrap_or(pb::VectorScopeKind::Unspecified) {
        pb::VectorScopeKind::Code => {
            context.require_scope(Scope::ReadCode)?;
            Ok(VectorScope {
                tenant_id: context.graph_id().to_owned(),
                namespace: context.graph_id().to_owned(),
            })
        }
        pb::VectorScopeKind::Memory | pb::VectorScopeKind::Unspecified => {
            context.require_scope(if write {
                Scope::WriteMemory
            } else {
                Scope::ReadMemory
            })?;
            Ok(VectorScope {
                tenant_id: context.tenant_id().to_owned(),
                namespace: context.namespace().to_owned(),
            })
        }
    }
}

fn collection(
    model: Option<codectx_proto::embedding::v1::ModelIdentity>,
) -> Result<CollectionKey, Error> {
    let model = model.ok_or_else(|| {
        Error::invalid_argument("model", "pass the model identity the vectors come from")
    })?;
    let key = CollectionKey {
        model_hash: model.content_hash,
        dimension: model.dimension,
    };
    key.validate()?;
    Ok(key)
}

#[tonic::async_trait]
impl vector_gateway_service_server::VectorGatewayService for VectorGateway {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let context = from_request(&request)?;
        let mut capabilities = CAPABILITIES.to_vec();
        if self.hybrid.is_some() {
            capabilities.push("hybrid");
        }
        Ok(Response::new(codectx_runtime::describe(
            NAME,
            &capabilities,
            &context,
        )))
    }

    async fn upsert(
        &self,
        request: Request<pb::UpsertRequest>,
    ) -> Result<Response<pb::UpsertResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, true)?;
        let key = collection(message.model)?;
        limits::check_count("records", message.records.len(), MAX_RECORDS, "records")?;
        let mut records = Vec::with_capacity(message.records.len());
        let mut texts = Vec::new();
        for record in message.records {
            check_entity_id(&record.entity_id)?;
            limits::check_bytes("records.text", &record.text, limits::TASK_BYTES)?;
            let values = prepare(&record.values, &key)?;
            if !record.text.trim().is_empty() {
                texts.push(HybridRecord {
                    entity_id: record.entity_id.clone(),
                    text: record.text,
                    vector: Some(values.clone()),
                });
            }
            records.push((record.entity_id, values));
        }
        let upserted = self.store.upsert(&scope, &key, &records).await?;
        // The hybrid collection after the dense one: an id listed by both is complete.
        if let Some(hybrid) = &self.hybrid {
            hybrid.hybrid_upsert(&scope, &key, &texts).await?;
        }
        Ok(Response::new(pb::UpsertResponse {
            upserted: upserted as u32,
        }))
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, true)?;
        let ids = message.entity_ids;
        limits::check_count("entity_ids", ids.len(), MAX_RECORDS, "ids")?;
        for id in &ids {
            check_entity_id(id)?;
        }
        let deleted = self.store.delete(&scope, &ids).await?;
        Ok(Response::new(pb::DeleteResponse {
            deleted: deleted as u32,
        }))
    }

    async fn nearest(
        &self,
        request: Request<pb::NearestRequest>,
    ) -> Result<Response<pb::NearestResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        let query = prepare(&message.query, &key)?;
        let hits = isolate(
            &scope,
            self.store
                .nearest(&scope, &key, &query, depth(message.limit))
                .await?,
        );
        Ok(Response::new(answer(hits)))
    }

    async fn hybrid(
        &self,
        request: Request<pb::HybridRequest>,
    ) -> Result<Response<pb::NearestResponse>, Status> {
        let context = from_request(&request)?;
        let Some(hybrid) = &self.hybrid else {
            return Err(Error::new(
                codectx_errors::ErrorKind::Unimplemented,
                "native hybrid search is off: set vectors.milvus_native_hybrid with the Milvus backend",
            )
            .into());
        };
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        limits::check_bytes("text", &message.text, limits::TASK_BYTES)?;
        let query = if message.query.is_empty() {
            None
        } else {
            Some(prepare(&message.query, &key)?)
        };
        let hits = isolate(
            &scope,
            hybrid
                .hybrid_search(
                    &scope,
                    &key,
                    &message.text,
                    query.as_deref(),
                    depth(message.limit),
                )
                .await?,
        );
        Ok(Response::new(answer(hits)))
    }

    async fn list_ids(
        &self,
        request: Request<pb::ListIdsRequest>,
    ) -> Result<Response<pb::ListIdsResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        let mut entity_ids = self.store.ids(&scope, &key, &message.prefix).await?;
        // With native hybrid on, a code symbol is stored when both collections hold it:
        // the caller's plan then writes (backfills) what the hybrid collection lacks.
        // Memory records carry no text and are listed as before.
        let code = pb::VectorScopeKind::try_from(message.scope) == Ok(pb::VectorScopeKind::Code);
        if let (Some(hybrid), true) = (&self.hybrid, code) {
            let held: std::collections::HashSet<String> = hybrid
                .hybrid_ids(&scope, &key, &message.prefix)
                .await?
                .into_iter()
                .collect();
            entity_ids.retain(|id| held.contains(id));
        }
        Ok(Response::new(pb::ListIdsResponse { entity_ids }))
    }
}
