//! `cargo run --release -p codectx-index --example reindex -- PATH NAME DATA_DIR FILE [EDITS]`:
//! what the watcher of `codectx up` does after an edit, timed. Indexes PATH (from the
//! facts cache in DATA_DIR when it has one), then EDITS times (default 5) appends a
//! function to FILE (relative to PATH) and re-indexes in the same process, once keeping
//! the facts in memory between runs (the watcher's way) and once reading the disk cache
//! back (a new process's way). Prints each run's wall time and the process's resident
//! memory (`make bench-index`; docs/BENCHMARKS.md). FILE is edited in place: run it on a
//! copy.

use std::io::Write;
use std::time::Instant;

use codectx_graph::sqlite::SqliteGraphStore;
use codectx_index::{IndexOptions, Warm, index_with};

/// The allocator of the `codectx` binary, whose watcher this times.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn resident_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn append(file: &std::path::Path, n: usize) {
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    // A function that calls an existing name, so its callers' files are re-resolved too.
    writeln!(
        f,
        "\n\ndef _codectx_reindex_{n}():\n    return _codectx_reindex_{}()\n",
        n.saturating_sub(1)
    )
    .unwrap();
}

#[tokio::main]
async fn main() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let args: Vec<String> = std::env::args().collect();
    let (root, name, data) = (&args[1], &args[2], std::path::PathBuf::from(&args[3]));
    let file = std::path::Path::new(root).join(&args[4]);
    let edits: usize = args.get(5).map_or(5, |n| n.parse().unwrap());
    let store = SqliteGraphStore::open(&data.join("graph.db")).unwrap();
    let options = IndexOptions {
        root: root.into(),
        owner: codectx_core::ids::derive(codectx_core::ids::prefix::ORGANISATION, "index-tests"),
        name: name.clone(),
        cache: data.join("index-cache.db"),
        max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
        progress: false,
        threads: 1,
    };
    let warm = Warm::new();
    let began = Instant::now();
    let first = index_with(&store, &options, Some(&warm)).await.unwrap();
    println!(
        "first run: {} files ({} parsed) in {:.3} s, {} MiB resident",
        first.files,
        first.parsed,
        began.elapsed().as_secs_f64(),
        resident_mib()
    );
    for (label, keep) in [
        ("facts kept in memory", true),
        ("disk cache read back", false),
    ] {
        let mut walls = Vec::new();
        for n in 0..edits {
            append(&file, walls.len() + n * 100 + usize::from(keep) * 10_000);
            let began = Instant::now();
            let report = index_with(&store, &options, keep.then_some(&warm))
                .await
                .unwrap();
            walls.push(began.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(report.parsed, 1, "one file changed");
        }
        walls.sort_by(f64::total_cmp);
        println!(
            "one-file re-index, {label}: median {:.0} ms, min {:.0} ms, max {:.0} ms over {edits} edits, {} MiB resident",
            walls[walls.len() / 2],
            walls[0],
            walls[walls.len() - 1],
            resident_mib()
        );
    }
}
