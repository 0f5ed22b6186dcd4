//! `cargo run --release -p codectx-index --example index_dir -- PATH NAME DATA_DIR`:
//! indexes a directory into an SQLite graph and prints the report (for profiling).

use codectx_graph::sqlite::SqliteGraphStore;
use codectx_index::{IndexOptions, index};

#[tokio::main]
async fn main() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let args: Vec<String> = std::env::args().collect();
    let (root, name, data) = (&args[1], &args[2], std::path::PathBuf::from(&args[3]));
    let store = SqliteGraphStore::open(&data.join("graph.db")).unwrap();
    let report = index(
        &store,
        &IndexOptions {
            root: root.into(),
            owner: codectx_core::ids::derive(
                codectx_core::ids::prefix::ORGANISATION,
                "index-tests",
            ),
            name: name.clone(),
            cache: data.join("index-cache.db"),
            max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
            progress: true,
            threads: 0,
        },
    )
    .await
    .unwrap();
    println!(
        "files {} parsed {} reused {} skipped {} syntax_errors {} symbols {} edges {} owners_written {} seconds {:.3} files/s {:.0}",
        report.files,
        report.parsed,
        report.reused,
        report.skipped.len(),
        report.syntax_errors,
        report.symbols,
        report.edges,
        report.owners_written,
        report.seconds,
        report.files_per_second()
    );
}
