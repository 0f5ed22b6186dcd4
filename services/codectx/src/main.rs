//! `codectx`: run the whole stack, administer access, rotate keys, run benchmarks.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use codectx::admin::{self, AdminArgs};
use codectx::indexing::{self, IndexArgs};
use codectx::stack::{ServiceKind, Stack, StackOptions};

/// mimalloc instead of glibc malloc (docs/BENCHMARKS.md, "Indexing, second pass").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// codectx: small, precise, authorized code context for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "codectx", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Indexes a repository into the code graph (embedded SQLite, Neo4j or HugeGraph).
    Index(IndexArgs),
    /// Starts all seven services in one process on loopback ports (embedded stores).
    Up(UpArgs),
    /// Administers organisations, teams, subjects, API keys, repositories and grants.
    Admin(AdminArgs),
    /// Manages authz signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Serves the MCP tools to one local agent over stdin/stdout, on the embedded stack
    /// of a data directory (index first with `codectx index` or `codectx up --index`).
    Mcp(McpArgs),
    /// Runs a benchmark workload (bench/WORKLOAD.md format) through the real MCP path and
    /// reports context reduction, evidence coverage and latency (docs/BENCHMARKS.md).
    Bench(Box<codectx::bench::BenchArgs>),
    /// Re-indexes a repository now in a Kubernetes install: creates a Job from the
    /// repository's indexer CronJob (the chart's `indexer`) and prints its name.
    Reindex(codectx::reindex::ReindexArgs),
}

#[derive(Debug, clap::Args)]
struct McpArgs {
    /// Speak MCP over stdin/stdout (the only transport of this command; HTTP agents use
    /// `codectx up` and its `/mcp` URL).
    #[arg(long, required = true)]
    stdio: bool,
    /// Data directory of the embedded stores (the one `codectx up` or `codectx index` used).
    #[arg(long, default_value = ".codectx")]
    data: PathBuf,
    /// Name of the environment variable holding the agent's API key (the key is never
    /// passed on the command line, where other users could read it).
    #[arg(long, default_value = "CODECTX_API_KEY")]
    api_key_env: String,
    /// Embedding runtime and model directory (`make models` fills the default).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Do not watch the indexed checkouts: answers then come from the graph as last
    /// indexed (and say `stale` when its commit is behind the checkout's).
    #[arg(long)]
    no_watch: bool,
}

#[derive(Debug, clap::Args)]
struct UpArgs {
    /// Data directory for every embedded store.
    #[arg(long, default_value = ".codectx")]
    data: PathBuf,
    /// Index this repository (incrementally) before serving.
    #[arg(long)]
    index: Option<PathBuf>,
    /// The repository key for --index (default: the directory's name).
    #[arg(long, requires = "index")]
    name: Option<String>,
    /// Where the gateway serves agents (MCP over HTTP at /mcp).
    #[arg(long, default_value = "127.0.0.1:8080")]
    gateway_addr: String,
    /// Name of an environment variable holding the development API key to use, so scripts
    /// and tests know it; otherwise one is created on first start and kept in the data dir.
    #[arg(long)]
    dev_api_key_env: Option<String>,
    /// authz's gRPC port; the other services take the next six. 0 picks free ports.
    #[arg(long, default_value_t = 50051)]
    grpc_base_port: u16,
    /// Embedding runtime and model directory (`make models` fills the default).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Seconds to report NOT_SERVING before stopping on SIGTERM/SIGINT.
    #[arg(long, default_value_t = 1)]
    drain_seconds: u64,
    /// Do not watch the indexed checkouts. By default every graph whose checkout is on
    /// this machine is re-indexed incrementally when its files change (debounced), and
    /// answers say `stale` until the re-index lands.
    #[arg(long)]
    no_watch: bool,
    /// The least share of a large scope's vectors a dense search reads: 1 (default)
    /// reads every vector, exact; below 1, scopes of more than 16,384 vectors are grouped
    /// into lists and a search reads the nearest lists, approximate and cheaper (ADR
    /// 0018; `codectx bench recall` measures what a share finds).
    #[arg(long, default_value_t = 1.0, value_name = "SHARE")]
    vector_probe_share: f64,
    /// The graph store (code graphs and memory): the embedded one in --data unless
    /// --neo4j or --hugegraph names a server.
    #[command(flatten)]
    graph: codectx::indexing::GraphArgs,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Adds a new signing key to the ring; authz signs with it from its next start and
    /// keeps trusting older keys until they are removed from the file.
    Rotate {
        /// The key ring file (default: DATA/authz/signing-keys).
        #[arg(long)]
        key_file: Option<PathBuf>,
        #[arg(long, default_value = ".codectx")]
        data: PathBuf,
    },
    /// Prints the public keys of the ring as `<key id> <base64 public key>` lines, the
    /// format of `tenant.verification_keys_file`: services given this file verify
    /// contexts without fetching keys from authz (a Kubernetes Secret or ConfigMap holds
    /// it). Public keys only; the ring is not changed.
    Public {
        /// The key ring file (default: DATA/authz/signing-keys).
        #[arg(long)]
        key_file: Option<PathBuf>,
        #[arg(long, default_value = ".codectx")]
        data: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Index(args) => {
            // A batch job: no vector scan to speed up with huge pages, and many pages
            // freed and written again (`memory`).
            let _small_pages = codectx::memory::SmallPages::begin();
            let _telemetry =
                codectx_telemetry::init("codectx", &codectx_telemetry::TelemetryConfig::default())?;
            let store = indexing::open_store(&args).await?;
            let report = indexing::run(&args, &*store).await?;
            println!("{}", indexing::summary(&args.name, &report));
            if args.explain_policy {
                println!("{}", indexing::explain_policy(&report));
            }
            Ok(())
        }
        Command::Up(args) => up(args).await,
        Command::Mcp(args) => mcp_stdio(args).await,
        Command::Bench(args) => {
            let _telemetry = codectx_telemetry::init(
                "codectx",
                &codectx_telemetry::TelemetryConfig {
                    log_filter: "warn".into(),
                    ..Default::default()
                },
            )?;
            if !codectx::bench::run(*args).await? {
                std::process::exit(2);
            }
            Ok(())
        }
        Command::Admin(args) => admin::run(args).await,
        Command::Reindex(args) => {
            let job = codectx::reindex::run(&args).await?;
            println!("{job}");
            Ok(())
        }
        Command::Keys(KeysCommand::Rotate { key_file, data }) => {
            let path = key_file.unwrap_or_else(|| data.join("authz").join("signing-keys"));
            let key_id = codectx_authz::rotate_signing_key(&path)?;
            println!(
                "added signing key {key_id} to {}; restart authz to sign with it",
                path.display()
            );
            Ok(())
        }
        Command::Keys(KeysCommand::Public { key_file, data }) => {
            let path = key_file.unwrap_or_else(|| data.join("authz").join("signing-keys"));
            print!("{}", codectx_authz::public_keys_text(&path)?);
            Ok(())
        }
    }
}

/// The compression configuration of a local stack (`codectx up`, `codectx mcp --stdio`):
/// the defaults, with the cross-session store saved in the data directory so it
/// outlives a restart.
fn persistent_compression(data: &std::path::Path) -> codectx_compress::CompressionConfig {
    let directory = data.join("gateway");
    let _ = std::fs::create_dir_all(&directory);
    codectx_compress::CompressionConfig {
        state_file: directory
            .join("compression-state.json")
            .to_string_lossy()
            .into_owned(),
        ..Default::default()
    }
}

/// `codectx mcp --stdio`: the stack on free loopback ports, the MCP tools on stdin/stdout.
/// Nothing but MCP goes to stdout; logs go to stderr.
async fn mcp_stdio(args: McpArgs) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    anyhow::ensure!(args.stdio, "pass --stdio");
    let _telemetry =
        codectx_telemetry::init("codectx", &codectx_telemetry::TelemetryConfig::default())?;
    let key = std::env::var(&args.api_key_env).map_err(|_| {
        anyhow::anyhow!(
            "--api-key-env names {}, which is not set: export the API key `codectx up` printed",
            args.api_key_env
        )
    })?;
    let stack = Stack::start(StackOptions {
        data_dir: args.data.clone(),
        services: ServiceKind::ALL.to_vec(),
        grpc_base_port: 0,
        gateway_http: "127.0.0.1:0".into(),
        dev_api_key: None,
        drain_seconds: 0,
        model_directory: args.models.clone(),
        retrieval: Default::default(),
        code_floors: None,
        oidc: Default::default(),
        // The stdio tools below have their own engine (with the state file).
        compression: Default::default(),
        graph: Default::default(),
        vectors: Default::default(),
        vector_probe_share: 1.0,
        lexical_load_wait_ms: codectx_core::limits::INDEX_LOAD_WAIT_SECONDS * 1000,
        lexical_stale_wait_ms: codectx_lexical_ranker::STALE_WAIT_MS,
        lexical_cache_mib: codectx_lexical_ranker::Config::default().cache_mib,
        transport: Default::default(),
    })
    .await?;
    let endpoint = |kind: ServiceKind| {
        stack
            .peer(kind)
            .ok_or_else(|| anyhow::anyhow!("{} did not start", kind.name()))
    };
    let engine = codectx_gateway::compression_engine(&persistent_compression(&args.data))?;
    codectx_gateway::spawn_state_saver(engine.clone(), std::time::Duration::from_secs(30));
    let tools = codectx_gateway::mcp::Tools::new(
        codectx_clients::AuthzClient::connect(&endpoint(ServiceKind::Authz)?)?,
        codectx_clients::AssemblerClient::connect(&endpoint(ServiceKind::ContextAssembler)?)?,
        stack.verifier.clone(),
        codectx_gateway::mcp::KeySource::Fixed(key.clone()),
        Default::default(),
        engine,
    );
    // A wrong key fails now, not on the agent's first call.
    tools
        .authz
        .authenticate(codectx_proto::authz::v1::AuthenticateRequest {
            credential: Some(codectx_clients::api_key_credential(&key)),
        })
        .await
        .map_err(|e| anyhow::anyhow!("the API key in {}: {e}", args.api_key_env))?;
    // Recall's dense leg needs the model: give it time to load before the first call.
    if !stack
        .wait_serving(ServiceKind::Embedding, std::time::Duration::from_secs(20))
        .await
    {
        tracing::warn!("the embedding model is not loaded: recall runs lexical-only until it is");
    }
    let _watching = if args.no_watch {
        None
    } else {
        codectx::watch::watch_stack(&stack, &args.data).await?
    };
    let running = tools.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    stack.stop().await?;
    Ok(())
}

async fn up(args: UpArgs) -> anyhow::Result<()> {
    let _telemetry =
        codectx_telemetry::init("codectx", &codectx_telemetry::TelemetryConfig::default())?;
    let dev_api_key = match &args.dev_api_key_env {
        Some(name) => Some(
            std::env::var(name)
                .map_err(|_| anyhow::anyhow!("--dev-api-key-env names {name}, which is not set"))?,
        ),
        None => None,
    };
    if let Some(path) = &args.index {
        let name = match &args.name {
            Some(name) => name.clone(),
            None => path
                .canonicalize()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| anyhow::anyhow!("cannot name {}: pass --name", path.display()))?,
        };
        let index_args = IndexArgs {
            graph: args.graph.clone(),
            ..IndexArgs::embedded(path.clone(), name.clone(), args.data.clone())
        };
        // Small pages for the index, huge ones again for serving (`memory`).
        let small_pages = codectx::memory::SmallPages::begin();
        let store = indexing::open_store(&index_args).await?;
        let report = indexing::run(&index_args, &*store).await?;
        drop(small_pages);
        println!("{}", indexing::summary(&name, &report));
    }
    let stack = Stack::start(StackOptions {
        data_dir: args.data.clone(),
        services: ServiceKind::ALL.to_vec(),
        grpc_base_port: args.grpc_base_port,
        gateway_http: args.gateway_addr.clone(),
        dev_api_key,
        drain_seconds: args.drain_seconds,
        model_directory: args.models.clone(),
        retrieval: Default::default(),
        code_floors: None,
        oidc: Default::default(),
        compression: persistent_compression(&args.data),
        graph: args.graph.backend(),
        vectors: Default::default(),
        vector_probe_share: args.vector_probe_share,
        lexical_load_wait_ms: codectx_core::limits::INDEX_LOAD_WAIT_SECONDS * 1000,
        lexical_stale_wait_ms: codectx_lexical_ranker::STALE_WAIT_MS,
        lexical_cache_mib: codectx_lexical_ranker::Config::default().cache_mib,
        transport: Default::default(),
    })
    .await?;
    let watching = if args.no_watch {
        None
    } else {
        codectx::watch::watch_stack(&stack, &args.data).await?
    };
    println!("codectx is up (data in {})", args.data.display());
    if let Some(watching) = &watching {
        println!(
            "watching {} checkout(s) for changes: edits are re-indexed within about 2 s (--no-watch turns this off)",
            watching.targets.len()
        );
    }
    println!(
        "(services call each other in process and listen for plaintext gRPC on loopback only; across a network each service sets server.tls and peers.*.tls: docs/security.md)"
    );
    println!();
    println!("services (gRPC, health and reflection on each):");
    for (kind, endpoint) in stack.endpoints() {
        println!("  {:<18} {endpoint}", kind.name());
    }
    if let Some(http) = stack.gateway_http() {
        println!(
            "  {:<18} http://{http}/mcp (agents; /healthz for probes)",
            "gateway (agents)"
        );
    }
    println!();
    let entries = stack
        .authority
        .store()
        .list_repositories(&stack.dev.organisation.id)?;
    if !entries.is_empty() {
        println!("the dev organisation's repositories (pass the name as `repository`):");
        for entry in &entries {
            let root = match stack.graph_store.repository(&entry.graph_id).await? {
                Some(graph) => graph.root,
                None => "(not in this data directory's graph)".into(),
            };
            println!("  {:<18} {root} ({})", entry.name, entry.graph_id);
        }
        println!();
    }
    println!("development identity:");
    println!(
        "  organisation  {} ({})",
        stack.dev.organisation.name, stack.dev.organisation.id
    );
    println!(
        "  subject       {} ({}, platform admin)",
        stack.dev.subject.name, stack.dev.subject.id
    );
    println!("  API key       {}", stack.dev.api_key);
    println!();
    if let Some(http) = stack.gateway_http() {
        println!("connect an agent over HTTP (e.g. .mcp.json, Claude Code, Cursor):");
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {"codectx": {
                "type": "http",
                "url": format!("http://{http}/mcp"),
                "headers": {"Authorization": format!("Bearer {}", stack.dev.api_key)}
            }}}))?
        );
        let data = args
            .data
            .canonicalize()
            .unwrap_or_else(|_| args.data.clone());
        println!("or over stdio (stop this server first; the key comes from CODECTX_API_KEY):");
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"mcpServers": {"codectx": {
                "command": std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "codectx".into()),
                "args": ["mcp", "--stdio", "--data", data.display().to_string()],
                "env": {"CODECTX_API_KEY": stack.dev.api_key}
            }}}))?
        );
        println!();
    }
    println!(
        "try: CODECTX_API_KEY={} codectx admin --authz {} whoami",
        stack.dev.api_key,
        stack.endpoint(ServiceKind::Authz).unwrap_or_default()
    );
    println!("stop with Ctrl-C");
    codectx_runtime::shutdown_signal().await;
    stack.stop().await?;
    Ok(())
}
