//! gateway: the agent-facing edge. Agents speak MCP to it over Streamable HTTP (`/mcp`)
//! or stdio; it authorizes each call through authz and forwards the signed context to
//! context-assembler. This build serves the gRPC surface (`Describe`; compression
//! statistics answer UNIMPLEMENTED) and the HTTP listener with `/healthz`; the MCP tools
//! land with the context-assembly issue, until then `/mcp` answers 501 and says so.

use codectx_clients::PeerConfig;
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::gateway::v1::{self as pb, gateway_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::from_request;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_GATEWAY__`.
pub const NAME: &str = "gateway";

/// Default gRPC port (internal).
pub const DEFAULT_PORT: u16 = 50057;

/// Default agent-facing HTTP address.
pub const DEFAULT_HTTP_LISTEN: &str = "127.0.0.1:8080";

const CAPABILITIES: &[&str] = &["describe", "http_health"];

/// Configuration: defaults, then the TOML file, then `CODECTX_GATEWAY__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The internal gRPC listener.
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
    pub http: HttpConfig,
    pub peers: Peers,
}

/// The `[http]` section: where agents connect.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    pub listen: String,
}

/// The `[peers]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Peers {
    pub authz: PeerConfig,
    pub context_assembler: PeerConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
            http: HttpConfig::default(),
            peers: Peers::default(),
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: DEFAULT_HTTP_LISTEN.into(),
        }
    }
}

impl Default for Peers {
    fn default() -> Self {
        Self {
            authz: PeerConfig::single("http://127.0.0.1:50051"),
            context_assembler: PeerConfig::single("http://127.0.0.1:50056"),
        }
    }
}

/// A built gateway: the gRPC service and the agent-facing HTTP router.
pub struct Gateway {
    pub service: BuiltService,
    pub http: axum::Router,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

pub async fn build(config: Config) -> Result<Gateway, Error> {
    // Validate peer configuration now so a typo fails at start, not on the first call.
    codectx_clients::AuthzClient::connect(&config.peers.authz)?;
    codectx_clients::AssemblerClient::connect(&config.peers.context_assembler)?;
    let service = BuiltService {
        name: NAME,
        grpc_name: gateway_service_server::SERVICE_NAME,
        routes: Routes::new(gateway_service_server::GatewayServiceServer::new(
            GatewayHandler,
        )),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    };
    Ok(Gateway {
        service,
        http: http_router(),
    })
}

fn http_router() -> axum::Router {
    use axum::http::StatusCode;
    use axum::routing::{any, get};
    axum::Router::new().route("/healthz", get(|| async { "ok\n" })).route(
        "/mcp",
        any(|| async {
            (
                StatusCode::NOT_IMPLEMENTED,
                axum::Json(serde_json::json!({
                    "error": "unimplemented",
                    "message": "the MCP tools are part of the context assembly and MCP gateway capability, which this build does not implement yet",
                })),
            )
        }),
    )
}

/// Serves the agent-facing HTTP router until `shutdown` resolves.
pub async fn serve_http(
    router: axum::Router,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| Error::internal(format!("gateway HTTP server: {e}")))
}

struct GatewayHandler;

#[tonic::async_trait]
impl gateway_service_server::GatewayService for GatewayHandler {
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

    async fn get_compression_stats(
        &self,
        request: Request<pb::GetCompressionStatsRequest>,
    ) -> Result<Response<pb::CompressionStats>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetCompressionStats", "compression").into())
    }
}
