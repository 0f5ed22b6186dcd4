//! The MCP tools. Every call carries the agent's API key (the HTTP bearer, or the key the
//! stdio server was started with); the tool's `repository` goes to authz with that key,
//! and the signed context authz returns is the only scope the call runs under. Tool
//! arguments never reach a backend except through the assembler's typed requests.

use std::borrow::Cow;
use std::sync::Arc;

use codectx_clients::{AssemblerClient, AuthzClient, bearer_credential};
use codectx_errors::{Error, ErrorKind};
use codectx_proto::assembler::v1 as pb;
use codectx_proto::authz::v1 as authz;
use codectx_tenant::{TenantContext, Verifier};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tracing::Instrument;

use codectx_compress::engine::{DETAIL_ARGUMENT, FOR_EDIT_ARGUMENT, LEVEL_ARGUMENT};
use codectx_compress::ledger::FRESH_ARGUMENT;
use codectx_compress::{Engine, Principal, Session, Tool as CompressedTool};

use crate::contexts::{Authenticated, ContextCache};

use crate::request::{self, CompressRequest, ToolRequest};

/// Where a call's API key comes from.
#[derive(Clone)]
pub enum KeySource {
    /// `Authorization: Bearer` of the HTTP request (checked by the `/mcp` middleware).
    Bearer,
    /// The key a local stdio server was started with.
    Fixed(String),
}

/// The MCP server handler: one per session (cheap to clone).
#[derive(Clone)]
pub struct Tools {
    pub authz: AuthzClient,
    pub assembler: AssemblerClient,
    pub verifier: Arc<Verifier>,
    pub keys: KeySource,
    /// Whether results carry the structured JSON besides the text a model reads.
    pub structured: StructuredContent,
    /// The compression engine every answer passes through (shared by all sessions).
    pub engine: Arc<Engine>,
    /// This MCP session's compression state (what it received, its focus set, ...);
    /// [`Tools::for_new_session`] gives every session its own.
    pub session: Arc<std::sync::Mutex<Session>>,
    /// Contexts authz minted, reused at the same access revision (shared by all sessions).
    pub contexts: Arc<ContextCache>,
}

impl Tools {
    pub fn new(
        authz: AuthzClient,
        assembler: AssemblerClient,
        verifier: Arc<Verifier>,
        keys: KeySource,
        structured: StructuredContent,
        engine: Arc<Engine>,
    ) -> Tools {
        Tools {
            authz,
            assembler,
            verifier,
            keys,
            structured,
            engine,
            session: Arc::new(std::sync::Mutex::new(Session::new())),
            contexts: Arc::new(ContextCache::default()),
        }
    }

    /// The handler for a new MCP session: the same clients and engine, a new session.
    pub fn for_new_session(&self) -> Tools {
        Tools {
            session: Arc::new(std::sync::Mutex::new(Session::new())),
            ..self.clone()
        }
    }
}

/// Whether a tool result carries its answer as structured JSON (for programs) besides
/// the compact text (for models, [`crate::render`]). No tool declares an output schema,
/// so MCP lets the text travel alone. A call overrides the server's choice with
/// `_meta: {"codectx/structured_content": true|false}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredContent {
    /// Text only: an agent pays for every token, and the text holds every value.
    #[default]
    Never,
    /// Text and the structured JSON.
    Always,
}

/// The `_meta` key with which a call asks for (or declines) structured content.
pub const STRUCTURED_META: &str = "codectx/structured_content";

const INSTRUCTIONS: &str = "codectx answers questions about indexed repositories and keeps \
agent memory. Start with list_repositories, then minimal_context for a task or search for \
words; get_symbol_context and get_call_graph for one symbol; get_pr_context for a diff; \
get_code_snippet only when you need the source. Every answer starts with its status \
(ok, not_found, ambiguous, denied, budget_exceeded, truncated), then its entries (kind, name, \
path:lines, then their fields; neighbours grouped by file, `(here)` for the entry's own file) \
and what was omitted. The `index:` and `names` lines are stated when they change: \
an answer without them has the last ones stated.";

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("tool schemas are objects"),
    }
}

fn repository_property() -> Value {
    json!({"type": "string", "description": "Repository name or id, as list_repositories shows it. Optional when you can see exactly one repository; it also selects the memory namespace."})
}

fn max_tokens_property(default: u32) -> Value {
    json!({"type": "integer", "minimum": 0, "description": format!("Token budget of the answer (default {default}; a value outside 256-20,000 is raised or lowered to that range); lowest-value detail is dropped first and listed in omitted.")})
}

fn tool(
    name: &'static str,
    description: &'static str,
    properties: Value,
    required: &[&str],
    read_only: bool,
) -> Tool {
    let mut tool = Tool::new(
        name,
        description,
        schema(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })),
    );
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(read_only);
    annotations.open_world_hint = Some(false);
    tool.annotations = Some(annotations);
    tool
}

/// The tool list (names and arguments are part of the contract), built once: every call
/// looks its tool's schema up here (building the list per call took 2-3% of a loaded
/// stack's CPU).
pub fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(build_tools)
}

fn build_tools() -> Vec<Tool> {
    let mut tools = tool_definitions();
    // The context tools' answers are compressed and deduplicated: they take the options.
    for tool in tools.iter_mut() {
        let Some(compressed) = CompressedTool::from_name(&tool.name) else {
            continue;
        };
        let Some(Value::Object(properties)) =
            Arc::make_mut(&mut tool.input_schema).get_mut("properties")
        else {
            continue;
        };
        properties.insert(
            FRESH_ARGUMENT.into(),
            json!({"type": "boolean", "description": "Send the full answer even if you already received the same one (a repeated, unchanged answer otherwise comes back as a one-line reference to the earlier call)."}),
        );
        properties.insert(
            DETAIL_ARGUMENT.into(),
            json!({"type": "boolean", "description": "The answer uncompressed: every field, source and diagnostic the compact answer leaves out."}),
        );
        properties.insert(
            LEVEL_ARGUMENT.into(),
            json!({"type": "string", "enum": codectx_compress::LevelSetting::NAMES, "description": format!("Compression of this answer (default: the server's, normally summary). This tool is never compressed past {}.", compressed.cap())}),
        );
        if matches!(
            compressed,
            CompressedTool::SymbolContext | CompressedTool::MinimalContext
        ) {
            properties.insert(
                FOR_EDIT_ARGUMENT.into(),
                json!({"type": "boolean", "description": "You are about to edit this symbol: the answer uncompressed, and answers about it stay uncompressed for your next 6 calls."}),
            );
        }
    }
    tools
}

fn tool_definitions() -> Vec<Tool> {
    vec![
        tool(
            "list_repositories",
            "Repositories you may query, by name and id.",
            json!({}),
            &[],
            true,
        ),
        tool(
            "describe_repository",
            "When the repository was indexed (commit), its languages with their files, symbols and tests, and how deeply each is read: where answers are complete and where to read files instead.",
            json!({"repository": repository_property()}),
            &[],
            true,
        ),
        tool(
            "minimal_context",
            "The smallest useful context for a task: the best-matching symbol with its callers and callees (implementations for types), related symbols and your matching memory notes, within a token budget (default 1,500). Name the identifiers you know in the task.",
            json!({
                "task": {"type": "string", "maxLength": 8192, "description": "What you are working on, in words and identifiers (at most 8 KiB)."},
                "repository": repository_property(),
                "max_tokens": max_tokens_property(1500)
            }),
            &["task"],
            true,
        ),
        tool(
            "search",
            "Find symbols by words, identifiers or error messages: exact matches first, then ranked matches, at most 8.",
            json!({
                "repository": repository_property(),
                "query": {"type": "string", "description": "Words, an identifier, a qualified name, or an error message."},
                "kinds": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 16, "description": "Only these kinds (function, method, type, ...); at most 16."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 8}
            }),
            &["query"],
            true,
        ),
        tool(
            "get_symbol_context",
            "One symbol's card (signature, file, lines, summary, fingerprint) with its callers, callees, implementations and tests.",
            json!({
                "repository": repository_property(),
                "symbol": {"type": "string", "description": "A plain name (Serve), a qualified name, or a trailing part in the language's separators (Server.Serve, (*Server).Serve, a::b::c)."},
                "max_tokens": max_tokens_property(20000),
                "include_ids": {"type": "boolean", "description": "Include opaque ids for get_code_snippet."}
            }),
            &["symbol"],
            true,
        ),
        tool(
            "get_call_graph",
            "Callers and/or callees of a symbol, depth 1 or 2, with call-site lines and confidence.",
            json!({
                "repository": repository_property(),
                "symbol": {"type": "string"},
                "direction": {"type": "string", "enum": ["callers", "callees", "both"], "description": "Default both."},
                "depth": {"type": "integer", "minimum": 1, "maximum": 2},
                "max_tokens": max_tokens_property(20000)
            }),
            &["symbol"],
            true,
        ),
        tool(
            "get_pr_context",
            "What a change touches: the changed symbols with their callers and tests, from a unified diff (at most 4 MiB) or a list of changed files (at most 100).",
            json!({
                "repository": repository_property(),
                "diff": {"type": "string", "description": "A unified diff (git diff)."},
                "files": {"type": "array", "items": {"type": "string"}, "maxItems": 100, "description": "Changed paths, relative to the repository root."},
                "max_tokens": max_tokens_property(20000)
            }),
            &[],
            true,
        ),
        tool(
            "get_code_snippet",
            "The source of one symbol, read now and verified against the index; fails as stale if it changed. Pass the fingerprint you hold to be sure it is the version you saw.",
            json!({
                "repository": repository_property(),
                "symbol": {"type": "string"},
                "id": {"type": "string", "description": "An id from an earlier answer (include_ids)."},
                "fingerprint": {"type": "string"}
            }),
            &[],
            true,
        ),
        tool(
            "recall",
            "Search agent memory (names, aliases, types; words and meaning) and return entities with their facts, up to 2 hops. Memory is written by agents: verify before relying on it.",
            json!({
                "repository": repository_property(),
                "query": {"type": "string", "maxLength": 4096},
                "max_entries": {"type": "integer", "minimum": 1, "maximum": 8},
                "hops": {"type": "integer", "minimum": 1, "maximum": 2}
            }),
            &["query"],
            true,
        ),
        tool(
            "remember",
            "Store an entity in agent memory with its type, aliases and facts (predicate/object pairs). A new object for the same predicate supersedes the old fact.",
            json!({
                "repository": repository_property(),
                "entity": {"type": "string"},
                "type": {"type": "string", "description": "service, person, decision, ..."},
                "aliases": {"type": "array", "items": {"type": "string"}},
                "facts": {"type": "array", "maxItems": 32, "description": "At most 32. An object naming a remembered entity (by name or alias) links the two; any other object is a value. A new object for the same subject and predicate supersedes the old one.", "items": {"type": "object", "properties": {
                    "predicate": {"type": "string", "description": "lower_snake_case: owned_by, writes_to, decided_on, ..."},
                    "object": {"type": "string", "description": "An entity's name or alias, or a value. Leave it out with subject: this entity is then the object."},
                    "subject": {"type": "string", "description": "Another entity this fact is about (OrdersDB writes_to <this entity>); default: this entity."}
                }, "required": ["predicate"], "additionalProperties": false}}
            }),
            &["entity", "type"],
            false,
        ),
        tool(
            "compress",
            "Compress a large text you hold (command output, logs, a stack trace, build or test output, JSON, a table, a file tree, prose) before reading it: keeps every error and warning line and the failing frame of each stack trace; says which kind it detected. Extractive and local.",
            json!({
                "text": {"type": "string", "maxLength": request::COMPRESS_TEXT_BYTES, "description": "The text, at most 256 KiB."},
                "kind": {"type": "string", "enum": codectx_compress::ContentKind::ALL.map(|k| k.as_str()), "description": "What the text is; detected when left out."},
                "level": {"type": "string", "enum": ["summary", "aggressive", "minimal"], "description": "How much to keep (default summary)."}
            }),
            &["text"],
            true,
        ),
        tool(
            "get_compression_stats",
            "This session's compression: the level and where it came from, the token budget used, calls, tokens saved, dedup and focus entries, per-tool detail-request rates and failures.",
            json!({}),
            &[],
            true,
        ),
        tool(
            "forget",
            "Delete an entity (by name or alias) from agent memory, with its aliases, facts and vectors.",
            json!({
                "repository": repository_property(),
                "entity": {"type": "string"}
            }),
            &["entity"],
            false,
        ),
    ]
}

/// A typed error as the agent sees it: a tool result flagged as an error, naming the field
/// and the limit where there is one.
fn error_value(error: &Error) -> Value {
    let error = &error.for_agent();
    let mut value = json!({
        "status": "error",
        "reason": error.reason(),
        "message": error.message(),
    });
    if !error.field().is_empty() {
        value["field"] = Value::from(error.field());
    }
    if let Some(limit) = error.limit() {
        value["limit"] = Value::from(limit);
    }
    if !error.suggestions().is_empty() {
        value["suggestions"] = Value::from(error.suggestions().to_vec());
    }
    value
}

fn answer_value(answer: pb::ContextAnswer) -> Result<Value, Error> {
    serde_json::from_str(&answer.json)
        .map_err(|e| Error::internal(format!("assembler answer is not JSON: {e}")))
}

/// The tool result: the compact text, and the JSON when `structured`.
fn tool_result(value: Value, is_error: bool, structured: bool) -> CallToolResult {
    let text = crate::render::render(&value);
    tool_result_with_text(text, value, is_error, structured)
}

fn tool_result_with_text(
    text: String,
    value: Value,
    is_error: bool,
    structured: bool,
) -> CallToolResult {
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    if structured {
        result.structured_content = Some(value);
    }
    result
}

impl Tools {
    fn api_key(&self, context: &RequestContext<RoleServer>) -> Result<String, Error> {
        match &self.keys {
            KeySource::Fixed(key) => Ok(key.clone()),
            KeySource::Bearer => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| bearer(&parts.headers))
                .ok_or_else(|| {
                    Error::unauthenticated("send the API key as Authorization: Bearer <key>")
                }),
        }
    }

    /// The repository entries the caller's credential may use.
    async fn visible_repositories(&self, key: &str) -> Result<Vec<authz::AccessRepository>, Error> {
        Ok(self
            .authz
            .list_accessible_repositories(authz::ListAccessibleRepositoriesRequest {
                credential: Some(bearer_credential(key)),
            })
            .await?
            .repositories)
    }

    /// Resolves the call's repository through authz into a verified context: the one
    /// minted for this key and repository at `revision` (the access revision the `/mcp`
    /// guard just read) when there is one (`contexts`), a new one otherwise.
    async fn authorize(
        &self,
        key: &str,
        repository: Option<String>,
        revision: Option<u64>,
    ) -> Result<TenantContext, Error> {
        let named = repository.clone().unwrap_or_default();
        if let Some(revision) = revision
            && let Some(context) = self.contexts.get(key, &named, revision)
        {
            return Ok(context);
        }
        let repository = match repository {
            Some(repository) => repository,
            None => {
                let visible = self.visible_repositories(key).await?;
                match visible.as_slice() {
                    [only] => only.id.clone(),
                    [] => {
                        return Err(Error::not_found(
                            "you may see no repository: ask an administrator for a grant",
                        ));
                    }
                    _ => {
                        return Err(Error::invalid_argument(
                            "repository",
                            "repository is required: you may see several",
                        )
                        .with_suggestions(
                            visible.iter().map(|r| r.name.clone()).take(10).collect(),
                        ));
                    }
                }
            }
        };
        let authorized = self
            .authz
            .authorize(authz::AuthorizeRequest {
                credential: Some(bearer_credential(key)),
                repository,
                scopes: vec![],
            })
            .await?;
        let context = self
            .verifier
            .verify(&authorized.signed_context)
            .map_err(|e| {
                Error::unauthenticated(format!(
                    "authz returned a context this gateway cannot verify: {e}"
                ))
            })?;
        // Kept only when minted at the revision the guard read: a write in between (the
        // context may already reflect it) makes the next call authorize again.
        if revision == Some(authorized.access_revision) {
            self.contexts
                .put(key, &named, authorized.access_revision, context.clone());
        }
        Ok(context)
    }

    async fn call(
        &self,
        name: &str,
        arguments: JsonObject,
        key: &str,
        revision: Option<u64>,
    ) -> Result<Answered, Error> {
        // Arguments are checked against the tool's schema before any authz round trip.
        let decoded = request::decode(name, arguments)?;
        let call = match decoded.request {
            ToolRequest::ListRepositories => {
                return Ok(Answered::Listing(self.list_repositories(key).await?));
            }
            ToolRequest::Compress(request) => return Ok(compress_answer(request)),
            ToolRequest::CompressionStats => {
                let stats = self.engine.stats(&self.session);
                return Ok(Answered::Text {
                    text: stats.render(),
                    value: serde_json::to_value(&stats)
                        .map_err(|e| Error::internal(e.to_string()))?,
                });
            }
            call => call,
        };
        let context = self.authorize(key, decoded.repository, revision).await?;
        let assembler = &self.assembler;
        let answer = match call {
            ToolRequest::ListRepositories
            | ToolRequest::Compress(_)
            | ToolRequest::CompressionStats => unreachable!("answered above"),
            ToolRequest::MinimalContext(request) => {
                assembler.minimal_context(&context, request).await?
            }
            ToolRequest::Search(request) => assembler.search(&context, request).await?,
            ToolRequest::SymbolContext(request) => {
                assembler.symbol_context(&context, request).await?
            }
            ToolRequest::CallGraph(request) => assembler.call_graph(&context, request).await?,
            ToolRequest::PrContext(request) => assembler.pr_context(&context, request).await?,
            ToolRequest::CodeSnippet(request) => assembler.code_snippet(&context, request).await?,
            ToolRequest::DescribeRepository => {
                assembler
                    .describe_repository(&context, pb::DescribeRepositoryRequest {})
                    .await?
            }
            ToolRequest::Recall(request) => assembler.recall(&context, request).await?,
            ToolRequest::Remember(request) => assembler.remember(&context, request).await?,
            ToolRequest::Forget(request) => assembler.forget(&context, request).await?,
        };
        Ok(Answered::Context {
            value: answer_value(answer)?,
            principal: Principal::new(context.tenant_id(), context.subject_id()),
            scope: context.repository_id().to_owned(),
        })
    }

    async fn list_repositories(&self, key: &str) -> Result<Value, Error> {
        let visible = self.visible_repositories(key).await?;
        // With what each graph's last index read: its commit and the fingerprint of the
        // repository policy (.codectx.yaml) applied, shortened; describe_repository has
        // the rest.
        let short = |text: &str| text.chars().take(12).collect::<String>();
        let entries: Vec<Value> = visible
            .iter()
            .map(|r| {
                let mut entry = json!({"name": r.name, "id": r.id});
                if !r.commit.is_empty() {
                    entry["commit"] = Value::from(short(&r.commit));
                }
                if !r.policy_fingerprint.is_empty() {
                    entry["policy"] = Value::from(short(&r.policy_fingerprint));
                }
                entry
            })
            .collect();
        let (text, _) = codectx_assemble::finalize(
            json!({"status": "ok", "entries": entries, "omitted": [], "tokens": 0}),
        );
        serde_json::from_str(&text).map_err(|e| Error::internal(e.to_string()))
    }
}

/// A tool's answer before it goes out.
enum Answered {
    /// An assembled answer about a repository, authorized for `principal`.
    Context {
        value: Value,
        principal: Principal,
        scope: String,
    },
    /// The repositories the caller may see.
    Listing(Value),
    /// Text the gateway wrote itself (`compress`, `get_compression_stats`).
    Text { text: String, value: Value },
}

impl Answered {
    fn value(&self) -> &Value {
        match self {
            Answered::Context { value, .. }
            | Answered::Listing(value)
            | Answered::Text { value, .. } => value,
        }
    }
}

/// The `compress` tool: the text compressed, with what it was taken for and the saving.
fn compress_answer(request: CompressRequest) -> Answered {
    let before = codectx_compress::generic::tokens(&request.text);
    if before < codectx_compress::ledger::MIN_TOKENS {
        let kind = request
            .kind
            .unwrap_or_else(|| codectx_compress::generic::detect(&request.text));
        return Answered::Text {
            text: format!(
                "status: ok\nkind: {}\nunchanged: under {} tokens\n---\n{}",
                kind.as_str(),
                codectx_compress::ledger::MIN_TOKENS,
                request.text
            ),
            value: json!({"status": "ok", "kind": kind.as_str(), "tokens_in": before, "tokens_out": before, "text": request.text}),
        };
    }
    let detected = request.kind.is_none();
    let compressed = codectx_compress::compress_text(&request.text, request.kind, request.level);
    let after = codectx_compress::generic::tokens(&compressed.text);
    let saved = (before.saturating_sub(after)) as f64 * 100.0 / before as f64;
    Answered::Text {
        text: format!(
            "status: ok\nkind: {}{}\nlevel: {}\ntokens: {} -> {} ({saved:.1}% saved)\n---\n{}\n",
            compressed.kind.as_str(),
            if detected { " (detected)" } else { "" },
            request.level,
            codectx_errors::group_thousands(before as u64),
            codectx_errors::group_thousands(after as u64),
            compressed.text
        ),
        value: json!({
            "status": "ok",
            "kind": compressed.kind.as_str(),
            "detected": detected,
            "level": request.level.as_str(),
            "tokens_in": before,
            "tokens_out": after,
            "text": compressed.text,
        }),
    }
}

/// Tool latency and tokens returned. Labels come from a fixed set: a tool this gateway
/// serves (or `unknown`) and `ok` or an error kind; never a tenant, subject or session.
fn record_tool_metrics(
    name: &str,
    outcome: &Result<Answered, Error>,
    elapsed: std::time::Duration,
) {
    let tool = if tools().iter().any(|known| known.name == name) {
        name.to_owned()
    } else {
        "unknown".to_owned()
    };
    let outcome_label = match outcome {
        Ok(_) => "ok".to_owned(),
        Err(error) => format!("{:?}", error.kind()),
    };
    codectx_telemetry::tool_duration().record(
        elapsed.as_secs_f64() * 1000.0,
        &[
            opentelemetry::KeyValue::new("mcp.tool", tool.clone()),
            opentelemetry::KeyValue::new("outcome", outcome_label),
        ],
    );
    let tokens = outcome
        .as_ref()
        .ok()
        .and_then(|answered| answered.value().get("tokens"))
        .and_then(Value::as_u64);
    if let Some(tokens) = tokens {
        codectx_telemetry::tool_tokens()
            .add(tokens, &[opentelemetry::KeyValue::new("mcp.tool", tool)]);
    }
}

/// The bearer token of an `Authorization` header, if well formed.
pub fn bearer(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    codectx_core::auth::bearer_token(value).map(str::to_owned)
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("codectx", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: Cow<'static, str> = request.name.clone();
        let structured = context
            .meta
            .0
            .get(STRUCTURED_META)
            .and_then(Value::as_bool)
            .unwrap_or(self.structured == StructuredContent::Always);
        let key = match self.api_key(&context) {
            Ok(key) => key,
            Err(error) => return Ok(tool_result(error_value(&error), true, structured).into()),
        };
        let arguments = request.arguments.unwrap_or_default();
        let options = arguments.clone();
        // One trace per tool call (not one per MCP session: the SDK's session span is
        // not its parent), or a child of the agent's own trace when it sends
        // `traceparent`. Every gRPC hop below is a descendant of this span.
        let span = tracing::info_span!(
            parent: None,
            "mcp.tool_call",
            otel.name = %format!("tools/call {name}"),
            otel.kind = "server",
            mcp.tool = %name,
            outcome = tracing::field::Empty,
        );
        if let Some(parts) = context.extensions.get::<http::request::Parts>() {
            codectx_telemetry::set_remote_parent(&span, &parts.headers);
        }
        let started = std::time::Instant::now();
        // What the `/mcp` guard learned authenticating this request (none over stdio).
        let revision = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Authenticated>())
            .map(|a| a.access_revision);
        let outcome = self
            .call(&name, arguments, &key, revision)
            .instrument(span.clone())
            .await;
        record_tool_metrics(&name, &outcome, started.elapsed());
        span.record(
            "outcome",
            match &outcome {
                Ok(_) => "ok".to_owned(),
                Err(error) => format!("{:?}", error.kind()),
            },
        );
        let result = match outcome {
            Ok(Answered::Text { text, value }) => {
                tool_result_with_text(text, value, false, structured)
            }
            Ok(Answered::Listing(value)) => tool_result(value, false, structured),
            Ok(Answered::Context {
                value,
                principal,
                scope,
            }) => {
                let delivered = self.engine.deliver(
                    &self.session,
                    &codectx_compress::Call {
                        tool: &name,
                        arguments: &options,
                        structured,
                        principal: Some(principal),
                        scope: &scope,
                    },
                    &value,
                    crate::render::render,
                );
                tool_result_with_text(delivered.text, value, false, structured)
            }
            Err(error) => {
                self.engine.count_error(&self.session, &name);
                if error.kind() == ErrorKind::Internal {
                    tracing::error!(tool = %name, %error, "tool failed");
                } else if error.is_redacted_for_agent() {
                    tracing::warn!(tool = %name, %error, reason = error.reason(), "tool failed; the agent saw a generic message");
                }
                tool_result(error_value(&error), true, structured)
            }
        };
        Ok(result.into())
    }
}
