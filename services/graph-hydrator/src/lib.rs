//! graph-hydrator: the only service that reads and writes the code graph (and, with the
//! memory capability, agent memory). Every call is rooted at the verified context's
//! `graph_id`; nothing in a request can name another graph.

mod corpus;
mod freshness;
mod grpc;
mod neighbours;
pub mod snippet;
pub mod store;

use std::sync::Arc;

use codectx_errors::Error;
use codectx_graph::Store;
use codectx_proto::graph::v1::graph_hydrator_service_server::{
    GraphHydratorServiceServer, SERVICE_NAME,
};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;

pub use store::GraphConfig;

/// Service name in logs, spans and the environment prefix `CODECTX_GRAPH_HYDRATOR__`.
pub const NAME: &str = "graph-hydrator";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50055;

/// Configuration: defaults, then the TOML file, then `CODECTX_GRAPH_HYDRATOR__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub graph: GraphConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            graph: GraphConfig::default(),
        }
    }
}

/// Opens the configured graph store and builds the service over it.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let store = store::open(&config.graph).await?;
    Ok(build_with_store(store))
}

/// Builds the service over an already open store (tests, `codectx up`).
pub fn build_with_store(store: Arc<dyn Store>) -> BuiltService {
    BuiltService {
        name: NAME,
        grpc_name: SERVICE_NAME,
        routes: Routes::new(
            GraphHydratorServiceServer::new(grpc::GraphHydrator {
                store,
                records: Arc::default(),
            })
            .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    }
}
