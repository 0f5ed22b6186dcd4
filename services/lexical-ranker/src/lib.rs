//! lexical-ranker: Exact identifier lookup and BM25 ranking over the lexical corpus that graph-hydrator streams.
//!
//! This build serves `Describe` (the scope the service verified for the caller); the
//! other RPCs belong to the lexical retrieval (exact lookup and BM25) capability and answer UNIMPLEMENTED, after the
//! tenant context has been verified, until that capability lands.

use codectx_clients::PeerConfig;
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::lexical::v1::{self as pb, lexical_ranker_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::from_request;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_LEXICAL_RANKER__`.
pub const NAME: &str = "lexical-ranker";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50052;

const CAPABILITY: &str = "lexical retrieval (exact lookup and BM25)";

/// Capabilities this build implements (reported by `Describe`).
const CAPABILITIES: &[&str] = &["describe"];

/// Configuration: defaults, then the TOML file, then `CODECTX_LEXICAL_RANKER__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub peers: Peers,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            peers: Peers::default(),
        }
    }
}

/// The `[peers]` section: services this one calls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Peers {
    pub graph_hydrator: PeerConfig,
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            graph_hydrator: PeerConfig::single("http://127.0.0.1:50055"),
        }
    }
}

/// Builds the service's routes; it is ready as soon as it is built.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let _ = config;
    let service = LexicalRanker {};
    Ok(BuiltService {
        name: NAME,
        grpc_name: lexical_ranker_service_server::SERVICE_NAME,
        routes: Routes::new(
            lexical_ranker_service_server::LexicalRankerServiceServer::new(service),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct LexicalRanker {}

#[tonic::async_trait]
impl lexical_ranker_service_server::LexicalRankerService for LexicalRanker {
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

    async fn exact_lookup(
        &self,
        request: Request<pb::ExactLookupRequest>,
    ) -> Result<Response<pb::CandidateList>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("ExactLookup", CAPABILITY).into())
    }

    async fn rank(
        &self,
        request: Request<pb::RankRequest>,
    ) -> Result<Response<pb::CandidateList>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Rank", CAPABILITY).into())
    }

    async fn invalidate_scope(
        &self,
        request: Request<pb::InvalidateScopeRequest>,
    ) -> Result<Response<pb::InvalidateScopeResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("InvalidateScope", CAPABILITY).into())
    }
}
