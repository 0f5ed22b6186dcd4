//! gateway: the agent-facing edge. Agents speak MCP to it over Streamable HTTP (`/mcp`,
//! official Rust SDK `rmcp`); every request needs `Authorization: Bearer <api key>`,
//! checked with authz before any MCP work (401 otherwise), and browser `Origin`s must be
//! on the allow-list. Each tool call authorizes its repository through authz and forwards
//! the signed context to context-assembler. Every answer passes through the compression
//! engine (`codectx-compress`) on its way out. The gRPC surface serves `Describe` and the
//! compression totals of the caller's tenant and subject.

pub mod contexts;
pub mod mcp;
pub mod render;
pub mod request;
pub mod schema;
pub mod sessions;

use std::sync::Arc;

use codectx_clients::{AssemblerClient, AuthzClient, PeerConfig, bearer_credential};
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::gateway::v1::{self as pb, gateway_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::{Verifier, from_request};
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_GATEWAY__`.
pub const NAME: &str = "gateway";

/// Default gRPC port (internal).
pub const DEFAULT_PORT: u16 = 50057;

/// Default agent-facing HTTP address.
pub const DEFAULT_HTTP_LISTEN: &str = "127.0.0.1:8080";

const CAPABILITIES: &[&str] = &[
    "describe",
    "compression_stats",
    "http_health",
    "mcp_streamable_http",
    "mcp_stdio",
];

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
    pub mcp: McpConfig,
}

/// The `[mcp]` section: what tool results carry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// `never` (default): the compact text only; `always`: also the structured JSON.
    /// A call's `_meta` `codectx/structured_content` overrides it.
    pub structured_content: mcp::StructuredContent,
    /// `[mcp.compression]`: levels, dedup, focus (docs/compression.md).
    pub compression: codectx_compress::CompressionConfig,
}

/// The environment variable that sets the compression level of a gateway, `codectx up`
/// and `codectx mcp --stdio` alike (over the configuration file).
pub const COMPRESSION_LEVEL_ENV: &str = "CODECTX_COMPRESSION_LEVEL";

/// The compression engine for `config`: the level from [`COMPRESSION_LEVEL_ENV`] when
/// set (or from the gateway's own environment variable, which the configuration layer
/// already applied), the cross-session store loaded from its state file when there is
/// one.
pub fn compression_engine(
    config: &codectx_compress::CompressionConfig,
) -> Result<Arc<codectx_compress::Engine>, Error> {
    use codectx_compress::{CrossSessionStore, Engine, LevelSetting, LevelSource};
    let mut config = config.clone();
    let mut source = if std::env::var_os("CODECTX_GATEWAY__MCP__COMPRESSION__LEVEL").is_some() {
        LevelSource::Environment
    } else {
        LevelSource::Config
    };
    if let Ok(value) = std::env::var(COMPRESSION_LEVEL_ENV) {
        config.level = LevelSetting::parse(value.trim()).ok_or_else(|| {
            Error::invalid_argument(
                COMPRESSION_LEVEL_ENV,
                format!(
                    "{COMPRESSION_LEVEL_ENV}={value:?}: the level is one of {}",
                    LevelSetting::NAMES.join(", ")
                ),
            )
        })?;
        source = LevelSource::Environment;
    }
    let limits = config.store_limits();
    let store = if config.state_file.is_empty() {
        CrossSessionStore::new(limits)
    } else {
        CrossSessionStore::load(std::path::Path::new(&config.state_file), limits).map_err(|e| {
            Error::internal(format!("compression state file {}: {e}", config.state_file))
        })?
    };
    Ok(Arc::new(Engine::new(config, source, Arc::new(store))))
}

/// Saves the cross-session store to its state file every `period` while the runtime
/// lives (nothing when the engine has no state file).
pub fn spawn_state_saver(engine: Arc<codectx_compress::Engine>, period: std::time::Duration) {
    let path = engine.config().state_file.clone();
    if path.is_empty() {
        return;
    }
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let engine = engine.clone();
            let path = std::path::PathBuf::from(&path);
            let saved = tokio::task::spawn_blocking(move || {
                engine.store().save(&path, std::time::SystemTime::now())
            })
            .await;
            if let Ok(Err(error)) = saved {
                tracing::warn!(%error, "could not save the compression state file");
            }
        }
    });
}

/// The `[http]` section: where agents connect.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    pub listen: String,
    /// Browser origins allowed on `/mcp` (RFC 6454 match; `:*` is any port). Requests
    /// without `Origin` (agents, CLIs) pass; any other `Origin` is refused with 403.
    pub allowed_origins: Vec<String>,
    /// `Host` values accepted on `/mcp` (DNS-rebinding protection). Empty: loopback
    /// only. Set the public host names in a cluster.
    pub allowed_hosts: Vec<String>,
    /// MCP sessions one API key may hold at once (a new one past it answers 429).
    pub max_sessions_per_key: usize,
    /// MCP sessions the gateway holds at once (a new one past it answers 503).
    pub max_sessions: usize,
    /// A session unused for this long ends (its id then answers 404).
    pub session_idle_seconds: u64,
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
            mcp: McpConfig::default(),
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: DEFAULT_HTTP_LISTEN.into(),
            allowed_origins: vec!["http://localhost:*".into(), "http://127.0.0.1:*".into()],
            allowed_hosts: Vec::new(),
            max_sessions_per_key: 64,
            max_sessions: 4_096,
            session_idle_seconds: 300,
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

/// Builds the gateway. `verifier` checks the contexts authz mints for tool calls (the
/// same keys the gRPC layer trusts).
pub async fn build(config: Config, verifier: Arc<Verifier>) -> Result<Gateway, Error> {
    // Peers are validated now so a typo fails at start, not on the first call.
    let engine = compression_engine(&config.mcp.compression)?;
    spawn_state_saver(engine.clone(), std::time::Duration::from_secs(30));
    let tools = mcp::Tools::new(
        AuthzClient::connect(&config.peers.authz)?,
        AssemblerClient::connect(&config.peers.context_assembler)?,
        verifier,
        mcp::KeySource::Bearer,
        config.mcp.structured_content,
        engine.clone(),
    );
    let service = BuiltService {
        name: NAME,
        grpc_name: gateway_service_server::SERVICE_NAME,
        routes: Routes::new(
            gateway_service_server::GatewayServiceServer::new(GatewayHandler { engine })
                .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    };
    Ok(Gateway {
        service,
        http: http_router(tools, &config.http),
    })
}

fn http_router(tools: mcp::Tools, config: &HttpConfig) -> axum::Router {
    use axum::routing::get;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        // A 4 MiB diff, JSON-escaped, must reach the typed `diff` check.
        .with_max_request_body_bytes(codectx_core::limits::GRPC_MESSAGE_BYTES);
    if !config.allowed_hosts.is_empty() {
        mcp_config = mcp_config.with_allowed_hosts(config.allowed_hosts.clone());
    }
    let idle = std::time::Duration::from_secs(config.session_idle_seconds.max(1));
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(idle);
    let manager = Arc::new(manager);
    let sessions = sessions::Sessions::new(
        manager.clone(),
        sessions::SessionLimits {
            per_key: config.max_sessions_per_key.max(1),
            total: config.max_sessions.max(1),
            idle,
        },
    );
    // The reaper lives as long as the runtime; it holds only the bindings.
    sessions.spawn_reaper(idle.min(std::time::Duration::from_secs(30)));
    let edge = Edge {
        authz: tools.authz.clone(),
        sessions,
    };
    let service =
        StreamableHttpService::new(move || Ok(tools.for_new_session()), manager, mcp_config);
    let mcp = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(edge, guard_mcp));
    axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(mcp)
}

/// What the `/mcp` guard needs: authz to check keys, and the session bindings.
#[derive(Clone)]
struct Edge {
    authz: AuthzClient,
    sessions: sessions::Sessions,
}

/// Guards `/mcp`: a valid API key before any MCP work (401 otherwise; checked on every
/// request, so a revoked key fails on its next call), and sessions bound to the subject
/// and key that created them (a foreign session id answers exactly as an unknown one).
async fn guard_mcp(
    axum::extract::State(edge): axum::extract::State<Edge>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let refuse = |status: StatusCode, message: String| {
        (
            status,
            [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(serde_json::json!({"error": "unauthenticated", "message": message})),
        )
            .into_response()
    };
    let Some(key) = mcp::bearer(request.headers()) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "send the API key as Authorization: Bearer <key>".into(),
        );
    };
    let (subject, authenticated) = match edge
        .authz
        .authenticate(codectx_proto::authz::v1::AuthenticateRequest {
            credential: Some(bearer_credential(&key)),
        })
        .await
    {
        Ok(response) => (
            response.subject.map(|s| s.id).unwrap_or_default(),
            contexts::Authenticated {
                access_revision: response.access_revision,
            },
        ),
        Err(error) if error.kind() == codectx_errors::ErrorKind::Unauthenticated => {
            return refuse(StatusCode::UNAUTHORIZED, error.message().to_owned());
        }
        Err(error) => {
            tracing::warn!(%error, "authz unavailable while checking an API key");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"error": "unavailable", "message": "authz is not reachable; retry"})),
            )
                .into_response();
        }
    };
    let mut request = match check_json_rpc_body(request).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    // The tool call reuses a context minted at this revision (`contexts`).
    request.extensions_mut().insert(authenticated);
    let principal = sessions::Principal::new(&subject, &key);
    let session_id = request
        .headers()
        .get(sessions::SESSION_HEADER)
        .map(|value| value.to_str().unwrap_or_default().to_owned());
    match session_id {
        Some(session_id) => {
            if !edge.sessions.check(&session_id, &principal) {
                return unknown_session();
            }
            let ending = request.method() == axum::http::Method::DELETE;
            let response = next.run(request).await;
            if ending && response.status().is_success() {
                edge.sessions.unbind(&session_id);
            }
            response
        }
        None => {
            let reservation = match edge.sessions.reserve(&principal) {
                Ok(reservation) => reservation,
                Err(refusal) => {
                    let status = match refusal {
                        sessions::SessionRefusal::PerKey { .. } => StatusCode::TOO_MANY_REQUESTS,
                        sessions::SessionRefusal::Total { .. } => StatusCode::SERVICE_UNAVAILABLE,
                    };
                    return (
                        status,
                        axum::Json(serde_json::json!({
                            "error": "too_many_sessions",
                            "message": refusal.message(edge.sessions.limits().idle),
                        })),
                    )
                        .into_response();
                }
            };
            let response = next.run(request).await;
            match response
                .headers()
                .get(sessions::SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
            {
                Some(created) => edge.sessions.bind(reservation, created),
                None => edge.sessions.abandon(reservation),
            }
            response
        }
    }
}

/// Longest JSON-RPC request id accepted (*ours*): ids are echoed back, so a megabyte id
/// would be a megabyte answer.
pub const MAX_JSON_RPC_ID_BYTES: usize = 128;

/// Refuses POST bodies that are not JSON (400 with a JSON-RPC parse error, where rmcp
/// would say 415) or whose request id is longer than [`MAX_JSON_RPC_ID_BYTES`], and hands
/// the buffered body on. Other methods pass untouched.
async fn check_json_rpc_body(
    request: axum::extract::Request,
) -> Result<axum::extract::Request, axum::response::Response> {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    if request.method() != axum::http::Method::POST {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let limit = codectx_core::limits::GRPC_MESSAGE_BYTES;
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {limit} bytes"),
            )
                .into_response());
        }
    };
    let error = |code: i32, message: String| {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": code, "message": message},
            })),
        )
            .into_response()
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Err(e) => {
            return Err(error(
                -32700,
                format!("Parse error: the body is not JSON ({e})"),
            ));
        }
        Ok(serde_json::Value::Object(message)) => {
            let id_bytes = match message.get("id") {
                Some(serde_json::Value::String(id)) => id.len(),
                Some(other @ serde_json::Value::Number(_)) => other.to_string().len(),
                Some(serde_json::Value::Null) | None => 0,
                Some(_) => {
                    return Err(error(
                        -32600,
                        "Invalid Request: id must be a string or a number".into(),
                    ));
                }
            };
            if id_bytes > MAX_JSON_RPC_ID_BYTES {
                return Err(error(
                    -32600,
                    format!(
                        "Invalid Request: id is {} bytes; the limit is {MAX_JSON_RPC_ID_BYTES}",
                        codectx_errors::group_thousands(id_bytes as u64)
                    ),
                ));
            }
        }
        // Arrays and scalars: rmcp answers them as the protocol says.
        Ok(_) => {}
    }
    Ok(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
}

/// The answer to a session id that is unknown, expired or another principal's: the same
/// status and body rmcp gives an unknown session, so the two cannot be told apart.
fn unknown_session() -> axum::response::Response {
    let mut response =
        axum::response::Response::new(axum::body::Body::from(sessions::UNKNOWN_SESSION_BODY));
    *response.status_mut() = axum::http::StatusCode::NOT_FOUND;
    response
}

/// Serves the agent-facing HTTP router until `shutdown` resolves.
pub async fn serve_http(
    router: axum::Router,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    use axum::serve::ListenerExt;
    // TCP_NODELAY: small MCP responses go out at once, not after the peer's delayed ACK.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| Error::internal(format!("gateway HTTP server: {e}")))
}

struct GatewayHandler {
    engine: Arc<codectx_compress::Engine>,
}

#[tonic::async_trait]
impl gateway_service_server::GatewayService for GatewayHandler {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, NAME, CAPABILITIES)
    }

    async fn get_compression_stats(
        &self,
        request: Request<pb::GetCompressionStatsRequest>,
    ) -> Result<Response<pb::CompressionStats>, Status> {
        let context = from_request(&request)?;
        let totals = self.engine.store().totals(codectx_compress::Principal::new(
            context.tenant_id(),
            context.subject_id(),
        ));
        Ok(Response::new(pb::CompressionStats {
            calls: totals.calls,
            tokens_in: totals.tokens_raw,
            tokens_out: totals.tokens_sent,
            dedup_hits: totals.dedup_hits,
            bypasses: totals.bypasses,
            failures: totals.failures,
        }))
    }
}
