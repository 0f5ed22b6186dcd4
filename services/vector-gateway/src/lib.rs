//! vector-gateway: Dense nearest-neighbour search and upsert/delete, scoped by the tenant context.
//!
//! This build serves `Describe` (the scope the service verified for the caller); the
//! other RPCs belong to the dense vector search capability and answer UNIMPLEMENTED, after the
//! tenant context has been verified, until that capability lands.

use codectx_errors::Error;

use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::vector::v1::{self as pb, vector_gateway_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::from_request;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_VECTOR_GATEWAY__`.
pub const NAME: &str = "vector-gateway";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50054;

const CAPABILITY: &str = "dense vector search";

/// Capabilities this build implements (reported by `Describe`).
const CAPABILITIES: &[&str] = &["describe"];

/// Configuration: defaults, then the TOML file, then `CODECTX_VECTOR_GATEWAY__*`.
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
    let service = VectorGateway {};
    Ok(BuiltService {
        name: NAME,
        grpc_name: vector_gateway_service_server::SERVICE_NAME,
        routes: Routes::new(
            vector_gateway_service_server::VectorGatewayServiceServer::new(service),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct VectorGateway {}

#[tonic::async_trait]
impl vector_gateway_service_server::VectorGatewayService for VectorGateway {
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

    async fn upsert(
        &self,
        request: Request<pb::UpsertRequest>,
    ) -> Result<Response<pb::UpsertResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Upsert", CAPABILITY).into())
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Delete", CAPABILITY).into())
    }

    async fn nearest(
        &self,
        request: Request<pb::NearestRequest>,
    ) -> Result<Response<pb::NearestResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Nearest", CAPABILITY).into())
    }
}
