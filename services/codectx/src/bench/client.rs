//! A benchmark MCP client: the official Rust SDK (rmcp) over Streamable HTTP, the way an
//! agent connects, measuring each complete tool result as the client receives it.

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

use super::score;

/// Per call: the DESIGN deadline (10 s) plus time for the transport.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

pub struct McpClient {
    service: RunningService<RoleClient, ()>,
    /// Ask for the structured JSON besides the text (`_meta`), as a program would; an
    /// agent's client (the default) gets what the server sends by default.
    structured: bool,
}

/// One tool result as the client received it.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// Bytes of the complete `CallToolResult` JSON (text and structured copies both).
    pub bytes: usize,
    pub is_error: bool,
    pub structured: Option<Value>,
    /// What the agent reads (see [`score::haystack`]).
    pub haystack: String,
    /// The text blocks, joined.
    pub text: String,
    pub latency: Duration,
}

/// Why a call produced no tool result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("no answer within {} s", CALL_TIMEOUT.as_secs())]
    Timeout,
    #[error("MCP call failed: {0}")]
    Transport(String),
}

impl McpClient {
    /// Connects to `url` (the gateway's `/mcp`) with `api_key` as the bearer token.
    pub async fn connect(url: &str, api_key: &str) -> anyhow::Result<McpClient> {
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
            .auth_header(api_key.to_owned());
        // rmcp's default client opens a connection per request (pooling off); agents'
        // HTTP clients keep theirs (the official Python SDK's httpx does), and so does
        // this one: the bench measures the stack, not TCP set-up in its own clients.
        let http = reqwest_rmcp::Client::builder()
            .redirect(reqwest_rmcp::redirect::Policy::none())
            .tcp_nodelay(true)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the MCP HTTP client: {e}"))?;
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let service = ()
            .serve(transport)
            .await
            .map_err(|e| anyhow::anyhow!("cannot open an MCP session at {url}: {e}"))?;
        Ok(McpClient {
            service,
            structured: false,
        })
    }

    /// A client that asks every call for the structured JSON too (tests and programs).
    pub async fn connect_structured(url: &str, api_key: &str) -> anyhow::Result<McpClient> {
        let mut client = Self::connect(url, api_key).await?;
        client.structured = true;
        Ok(client)
    }

    pub async fn call(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallOutcome, CallError> {
        let mut params =
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.clone());
        if self.structured {
            let mut meta = serde_json::Map::new();
            meta.insert(
                codectx_gateway::mcp::STRUCTURED_META.into(),
                Value::Bool(true),
            );
            params.meta = Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(
                meta,
            )));
        }
        let started = Instant::now();
        let result = tokio::time::timeout(CALL_TIMEOUT, self.service.call_tool(params))
            .await
            .map_err(|_| CallError::Timeout)?
            .map_err(|e| CallError::Transport(e.to_string()))?;
        let latency = started.elapsed();
        let bytes = serde_json::to_vec(&result)
            .map_err(|e| CallError::Transport(e.to_string()))?
            .len();
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
            .collect();
        let haystack = score::haystack(&texts, result.structured_content.as_ref());
        let text = texts.join("\n");
        Ok(CallOutcome {
            text,
            bytes,
            is_error: result.is_error.unwrap_or(false),
            structured: result.structured_content,
            haystack,
            latency,
        })
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}
