//! `context-assembler` binary: config, telemetry, `build()`, `serve()`.

use std::path::PathBuf;

use clap::Parser;
use codectx_context_assembler::{Config, NAME, build};

/// Orchestrates the retrieval legs and the graph into small, budgeted answers.
#[derive(Debug, Parser)]
#[command(name = "context-assembler", version)]
struct Args {
    /// TOML config file; `CODECTX_CONTEXT_ASSEMBLER__SECTION__KEY` variables override it.
    #[arg(long, env = "CODECTX_CONFIG")]
    config: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config: Config = codectx_config::load(NAME, args.config.as_deref())?;
    let _telemetry = codectx_telemetry::init(NAME, &config.telemetry)?;
    let verifier = codectx_runtime::load_verifier(&config.tenant).await?;
    let listener = codectx_runtime::bind(&config.server.listen).await?;
    let service = build(config.clone()).await?;
    codectx_runtime::serve(
        service,
        listener,
        verifier,
        &config.server,
        codectx_runtime::shutdown_signal(),
    )
    .await?;
    Ok(())
}
