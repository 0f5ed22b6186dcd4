//! `gateway` binary: config, telemetry, `build()`, serve gRPC and the agent HTTP listener.

use std::path::PathBuf;

use clap::Parser;
use codectx_gateway::{Config, NAME, build, serve_http};

/// The agent-facing MCP edge of codectx.
#[derive(Debug, Parser)]
#[command(name = "gateway", version)]
struct Args {
    /// TOML config file; `CODECTX_GATEWAY__SECTION__KEY` variables override it.
    #[arg(long, env = "CODECTX_CONFIG")]
    config: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config: Config = codectx_config::load(NAME, args.config.as_deref())?;
    let _telemetry = codectx_telemetry::init(NAME, &config.telemetry)?;
    let verifier = codectx_runtime::load_verifier(&config.tenant).await?;
    let grpc_listener = codectx_runtime::bind(&config.server.listen).await?;
    let http_listener = codectx_runtime::bind(&config.http.listen).await?;
    let gateway = build(config.clone(), verifier.clone()).await?;
    let http = tokio::spawn(serve_http(
        gateway.http,
        http_listener,
        codectx_runtime::shutdown_signal(),
    ));
    codectx_runtime::serve(
        gateway.service,
        grpc_listener,
        verifier,
        &config.server,
        codectx_runtime::shutdown_signal(),
    )
    .await?;
    http.await??;
    Ok(())
}
