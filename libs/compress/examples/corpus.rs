//! `make bench-compress`: the `compress` tool's reduction on every sample of the corpus
//! (libs/compress/tests/corpus), per level, in tokens (bytes/4, as the benchmarks
//! count), with the lines each must keep checked. With a path (and a level), prints
//! that file compressed instead.
//!
//!   cargo run -p codectx-compress --example corpus [-- FILE [summary|aggressive|minimal]]

use std::path::Path;

use codectx_compress::generic::tokens;
use codectx_compress::{Level, compress_text};

fn level(name: &str) -> Level {
    Level::ALL
        .into_iter()
        .find(|level| level.as_str() == name)
        .unwrap_or_else(|| panic!("{name:?}: a level is off, summary, aggressive or minimal"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(path) = args.first() {
        let text = std::fs::read_to_string(path).expect("readable file");
        let level = args.get(1).map_or(Level::Summary, |name| level(name));
        let out = compress_text(&text, None, level);
        println!("{}", out.text);
        eprintln!(
            "kind {}, {} -> {} tokens",
            out.kind.as_str(),
            tokens(&text),
            tokens(&out.text)
        );
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut samples: Vec<_> = std::fs::read_dir(&corpus)
        .expect("the corpus directory")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("txt" | "json")
            )
        })
        .collect();
    samples.sort();
    println!("| sample | detected | tokens | summary | aggressive | minimal | lines kept |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut totals = [0usize; 4];
    for path in samples {
        let text = std::fs::read_to_string(&path).expect("readable sample");
        let keep: Vec<String> = std::fs::read_to_string(path.with_extension("keep"))
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect();
        let before = tokens(&text);
        totals[0] += before;
        let mut cells = Vec::new();
        let mut kept = 0;
        let mut kind = "";
        for (n, level) in [Level::Summary, Level::Aggressive, Level::Minimal]
            .into_iter()
            .enumerate()
        {
            let out = compress_text(&text, None, level);
            kind = out.kind.as_str();
            let after = tokens(&out.text);
            totals[n + 1] += after;
            cells.push(format!(
                "{after} ({:.1}%)",
                100.0 * (before.saturating_sub(after)) as f64 / before as f64
            ));
            kept += keep
                .iter()
                .filter(|line| out.text.contains(line.as_str()))
                .count();
        }
        println!(
            "| {} | {kind} | {before} | {} | {} | {} | {kept}/{} |",
            path.file_name().unwrap().to_string_lossy(),
            cells[0],
            cells[1],
            cells[2],
            keep.len() * 3
        );
    }
    let saved = |after: usize| 100.0 * (totals[0].saturating_sub(after)) as f64 / totals[0] as f64;
    println!(
        "| all | | {} | {} ({:.1}%) | {} ({:.1}%) | {} ({:.1}%) | |",
        totals[0],
        totals[1],
        saved(totals[1]),
        totals[2],
        saved(totals[2]),
        totals[3],
        saved(totals[3])
    );
}
