//! `codectx index`: index a repository into the embedded SQLite graph or into Neo4j.

use std::path::PathBuf;
use std::sync::Arc;

use codectx_errors::Error;
use codectx_graph::GraphStore;
use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::sqlite::SqliteGraphStore;
use codectx_index::{IndexOptions, IndexReport};

/// Arguments of `codectx index`.
#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// The repository checkout to index.
    pub path: PathBuf,
    /// The repository key agents use as `repository` (e.g. `gin`, `acme/api`).
    #[arg(long)]
    pub name: String,
    /// Data directory: the embedded graph (`graph.db`) and the index cache live here.
    #[arg(long, default_value = ".codectx")]
    pub data: PathBuf,
    /// Write to Neo4j at this Bolt URI instead of the embedded graph.
    #[arg(long)]
    pub neo4j: Option<String>,
    #[arg(long, default_value = "neo4j", requires = "neo4j")]
    pub neo4j_user: String,
    /// Name of the environment variable holding the Neo4j password.
    #[arg(long, default_value = "CODECTX_NEO4J_PASSWORD", requires = "neo4j")]
    pub neo4j_password_env: String,
    /// Files larger than this many bytes are skipped.
    #[arg(long, default_value_t = codectx_index::DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,
    /// Parser threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Do not show a progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl IndexArgs {
    /// Indexing `path` as `name` into the embedded graph under `data`, with defaults.
    pub fn embedded(path: PathBuf, name: String, data: PathBuf) -> Self {
        Self {
            path,
            name,
            data,
            neo4j: None,
            neo4j_user: String::new(),
            neo4j_password_env: String::new(),
            max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            quiet: false,
        }
    }
}

/// Opens the store `args` names.
pub async fn open_store(args: &IndexArgs) -> Result<Arc<dyn GraphStore>, Error> {
    match &args.neo4j {
        Some(uri) => {
            let password = std::env::var(&args.neo4j_password_env).unwrap_or_default();
            Ok(Arc::new(
                Neo4jGraphStore::connect(uri, &args.neo4j_user, &password).await?,
            ))
        }
        None => Ok(Arc::new(SqliteGraphStore::open(
            &args.data.join("graph.db"),
        )?)),
    }
}

/// Indexes and returns the report.
pub async fn run(args: &IndexArgs, store: &dyn GraphStore) -> Result<IndexReport, Error> {
    codectx_index::index(
        store,
        &IndexOptions {
            root: args.path.clone(),
            name: args.name.clone(),
            cache: args.data.join("index-cache.db"),
            max_file_bytes: args.max_file_bytes,
            progress: !args.quiet,
            threads: args.threads,
        },
    )
    .await
}

/// The one-paragraph summary printed after a run.
pub fn summary(name: &str, report: &IndexReport) -> String {
    let mut text = format!(
        "indexed {name} ({}): {} files ({} parsed, {} unchanged, {} removed, {} generated, {} skipped), {} symbols, {} edges in {:.2} s ({:.0} files/s)",
        report.graph_id,
        report.files,
        report.parsed,
        report.reused,
        report.removed,
        report.generated,
        report.skipped.len(),
        report.symbols,
        report.edges,
        report.seconds,
        report.files_per_second()
    );
    if report.syntax_errors > 0 {
        text.push_str(&format!(
            "; {} files had syntax errors (indexed what parsed)",
            report.syntax_errors
        ));
    }
    text
}
