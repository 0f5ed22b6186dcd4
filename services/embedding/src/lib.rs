//! embedding: Local sentence embeddings of approved entity names, aliases, types and agent queries.
//!
//! This build serves `Describe` (the scope the service verified for the caller); the
//! other RPCs belong to the local embeddings (ONNX Runtime) capability and answer UNIMPLEMENTED, after the
//! tenant context has been verified, until that capability lands.

use codectx_errors::Error;

use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::embedding::v1::{self as pb, embedding_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::from_request;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_EMBEDDING__`.
pub const NAME: &str = "embedding";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50053;

const CAPABILITY: &str = "local embeddings (ONNX Runtime)";

/// Capabilities this build implements (reported by `Describe`).
const CAPABILITIES: &[&str] = &["describe"];

/// Configuration: defaults, then the TOML file, then `CODECTX_EMBEDDING__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
        }
    }
}

/// Builds the service's routes; it is ready as soon as it is built.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let _ = config;
    let service = Embedding {};
    Ok(BuiltService {
        name: NAME,
        grpc_name: embedding_service_server::SERVICE_NAME,
        routes: Routes::new(embedding_service_server::EmbeddingServiceServer::new(
            service,
        )),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct Embedding {}

#[tonic::async_trait]
impl embedding_service_server::EmbeddingService for Embedding {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let context = from_request(&request)?;
        Ok(Response::new(codectx_runtime::describe(
            NAME,
            CAPABILITIES,
            &context,
        )))
    }

    async fn get_model_info(
        &self,
        request: Request<pb::GetModelInfoRequest>,
    ) -> Result<Response<pb::ModelIdentity>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetModelInfo", CAPABILITY).into())
    }

    async fn embed(
        &self,
        request: Request<pb::EmbedRequest>,
    ) -> Result<Response<pb::EmbedResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Embed", CAPABILITY).into())
    }
}
