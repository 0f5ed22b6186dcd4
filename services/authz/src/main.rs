//! `authz` binary: config, telemetry, `build()`, `serve()`.

use std::path::PathBuf;

use clap::Parser;
use codectx_authz::{Config, NAME, build};

/// Authenticates credentials and mints signed tenant contexts.
#[derive(Debug, Parser)]
#[command(name = "authz", version)]
struct Args {
    /// TOML config file; `CODECTX_AUTHZ__SECTION__KEY` variables override it.
    #[arg(long, env = "CODECTX_CONFIG")]
    config: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config: Config = codectx_config::load(NAME, args.config.as_deref())?;
    let _telemetry = codectx_telemetry::init(NAME, &config.telemetry)?;
    let authz = build(&config)?;
    let verifier = authz.verifier()?;
    let listener = codectx_runtime::bind(&config.server.listen).await?;
    codectx_runtime::serve(
        authz.service,
        listener,
        verifier,
        &config.server,
        codectx_runtime::shutdown_signal(),
    )
    .await?;
    Ok(())
}
