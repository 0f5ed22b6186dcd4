//! `codectx bench recall`: how much of the exact answer the embedded vector store's
//! inverted lists find (ADR 0018). The judge is the exact scan over every row of the same
//! store ([`Probe::Every`]); the queries are every question and task of the workloads,
//! embedded by the real model as the assembler embeds a query, and vectors stored in the
//! scope itself (a symbol's "more like this"). Reported per scope that has lists and per
//! depth: recall (the share of the exact answer's ids found), the queries whose answer
//! was exact, the rows read and the time per query, both ways.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use codectx_embed::{Embedder, ModelFiles};
use codectx_vector::CollectionKey;
use codectx_vector::embedded::{EmbeddedVectorStore, Options, Probe, ScopeSize};
use serde::Serialize;

/// Arguments of `codectx bench recall`.
#[derive(Debug, clap::Args)]
pub struct RecallArgs {
    /// A data directory holding `vectors.db` (what `codectx bench` or `codectx index`
    /// with embeddings wrote).
    #[arg(long)]
    pub data: PathBuf,
    /// Workload files whose questions and tasks are the text queries (repeatable).
    #[arg(long = "workload", required = true)]
    pub workloads: Vec<PathBuf>,
    /// Stored vectors per scope used as queries besides the texts.
    #[arg(long, default_value_t = 200)]
    pub stored: usize,
    /// Answer depths to judge, comma separated (the assembler asks for 10 or 30).
    #[arg(long, value_delimiter = ',', default_value = "10,30")]
    pub depths: Vec<usize>,
    /// Shares of the rows the lists read, comma separated (`vectors.embedded_probe_share`
    /// of the vector-gateway's config: what each would find).
    #[arg(long, value_delimiter = ',', default_value = "0.0625,0.125,0.25,0.5")]
    pub shares: Vec<f64>,
    /// Embedding runtime and model directory (`make models` fills the default).
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// Where the JSON report goes.
    #[arg(long, default_value = ".codectx-bench/reports")]
    pub out: PathBuf,
}

/// One scope's recall at one depth, for one kind of query.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub scope_rows: usize,
    pub lists: usize,
    pub queries: &'static str,
    pub count: usize,
    pub depth: usize,
    /// The least share of the rows the lists read.
    pub share: f64,
    /// Share of the exact answers' ids the index found, over every query.
    pub recall: f64,
    /// Queries whose answer held every id of the exact one.
    pub exact_answers: usize,
    pub rows_read_index: f64,
    pub rows_read_exact: f64,
    pub micros_index: f64,
    pub micros_exact: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub model: String,
    pub open_seconds: f64,
    pub rows: Vec<Row>,
}

/// The texts a workload asks: each question, and each call's `query` or `task`.
fn texts(workload: &serde_json::Value) -> Vec<String> {
    let mut texts = Vec::new();
    for question in workload["questions"].as_array().into_iter().flatten() {
        if let Some(text) = question["question"].as_str() {
            texts.push(text.to_owned());
        }
        for field in ["query", "task"] {
            if let Some(text) = question["call"]["arguments"][field].as_str() {
                texts.push(text.to_owned());
            }
        }
    }
    texts.retain(|t| !t.trim().is_empty());
    texts
}

pub fn run(args: RecallArgs) -> anyhow::Result<Report> {
    let mut queries = Vec::new();
    for path in &args.workloads {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let workload: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        queries.extend(texts(&workload));
    }
    queries.sort();
    queries.dedup();
    anyhow::ensure!(!queries.is_empty(), "the workloads ask no question");
    anyhow::ensure!(
        !args.depths.is_empty() && args.depths.iter().all(|d| *d > 0),
        "--depths: positive depths, comma separated"
    );
    let directory = args.models.clone().unwrap_or_else(|| {
        PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/codectx/models")
    });
    let embedder = Embedder::load(&ModelFiles::in_directory(&directory))?;
    let identity = embedder.identity().clone();
    let collection = CollectionKey {
        model_hash: identity.content_hash.clone(),
        dimension: identity.dimension,
    };
    let mut text_vectors = Vec::with_capacity(queries.len());
    for chunk in queries.chunks(32) {
        text_vectors.extend(embedder.embed(chunk)?);
    }
    let path = args.data.join("vectors.db");
    anyhow::ensure!(path.exists(), "no vector store at {}", path.display());
    let started = Instant::now();
    anyhow::ensure!(
        !args.shares.is_empty() && args.shares.iter().all(|s| *s > 0.0 && *s < 1.0),
        "--shares: shares of the rows in (0, 1), comma separated (1 is the exact scan itself)"
    );
    let smallest = args.shares.iter().copied().fold(1.0, f64::min);
    let store = EmbeddedVectorStore::open_with(
        &path,
        Options {
            probe_share: smallest,
        },
    )?;
    let open_seconds = started.elapsed().as_secs_f64();
    let scopes: Vec<ScopeSize> = store
        .scopes()?
        .into_iter()
        .filter(|s| s.collection == collection.name() && s.lists > 1)
        .collect();
    anyhow::ensure!(
        !scopes.is_empty(),
        "no scope of the model's collection in {} has lists (more than {} rows)",
        path.display(),
        codectx_vector::embedded::EXACT_UP_TO
    );
    let mut rows = Vec::new();
    for size in &scopes {
        let stored = store.sample(&size.scope, &collection, args.stored)?;
        for (kind, vectors) in [("texts", &text_vectors), ("stored vectors", &stored)] {
            for (&share, &depth) in args
                .shares
                .iter()
                .flat_map(|share| args.depths.iter().map(move |depth| (share, depth)))
            {
                let probe = Probe::Share(share);
                let mut row = Row {
                    scope_rows: size.rows,
                    lists: size.lists,
                    queries: kind,
                    count: vectors.len(),
                    depth,
                    share,
                    recall: 0.0,
                    exact_answers: 0,
                    rows_read_index: 0.0,
                    rows_read_exact: 0.0,
                    micros_index: 0.0,
                    micros_exact: 0.0,
                };
                let (mut found, mut wanted) = (0usize, 0usize);
                for vector in vectors.iter() {
                    let started = Instant::now();
                    let index = store.search(&size.scope, &collection, vector, depth, probe)?;
                    row.micros_index += started.elapsed().as_secs_f64() * 1e6;
                    let started = Instant::now();
                    let exact =
                        store.search(&size.scope, &collection, vector, depth, Probe::Every)?;
                    row.micros_exact += started.elapsed().as_secs_f64() * 1e6;
                    let hits: std::collections::HashSet<&str> =
                        index.hits.iter().map(|h| h.entity_id.as_str()).collect();
                    let matched = exact
                        .hits
                        .iter()
                        .filter(|h| hits.contains(h.entity_id.as_str()))
                        .count();
                    found += matched;
                    wanted += exact.hits.len();
                    row.exact_answers += usize::from(matched == exact.hits.len());
                    row.rows_read_index += index.rows_read as f64;
                    row.rows_read_exact += exact.rows_read as f64;
                }
                let n = vectors.len().max(1) as f64;
                row.recall = found as f64 / wanted.max(1) as f64;
                row.rows_read_index /= n;
                row.rows_read_exact /= n;
                row.micros_index /= n;
                row.micros_exact /= n;
                rows.push(row);
            }
        }
    }
    let report = Report {
        model: identity.name.clone(),
        open_seconds,
        rows,
    };
    let markdown = markdown(&report, queries.len());
    print!("{markdown}");
    std::fs::create_dir_all(&args.out)?;
    let json = args.out.join("vector-recall.json");
    std::fs::write(&json, serde_json::to_string_pretty(&report)?)?;
    let tables = args.out.join("vector-recall.md");
    std::fs::write(&tables, &markdown)?;
    println!("\nwrote {} and {}", json.display(), tables.display());
    Ok(report)
}

/// The report as Markdown: a sentence, then one table row per scope, kind of query,
/// share and depth.
fn markdown(report: &Report, texts: usize) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "Vector recall of the embedded store's lists against its exact scan: model {}, {} text queries; store opened (lists learned) in {:.1} s.\n\n",
        report.model, texts, report.open_seconds
    );
    out.push_str(
        "| scope rows | lists | queries | share read | depth | recall | exact answers | rows read (lists / all) | µs per query (lists / all) |\n",
    );
    out.push_str("|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for row in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} {} | {:.4} | {} | {:.4} | {}/{} | {:.0} / {:.0} | {:.0} / {:.0} |",
            row.scope_rows,
            row.lists,
            row.count,
            row.queries,
            row.share,
            row.depth,
            row.recall,
            row.exact_answers,
            row.count,
            row.rows_read_index,
            row.rows_read_exact,
            row.micros_index,
            row.micros_exact
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_each_question_and_each_calls_query_or_task() {
        let workload = serde_json::json!({
            "questions": [
                {"question": "Who calls dumps?", "call": {"tool": "get_call_graph", "arguments": {"symbol": "json.dumps"}}},
                {"question": "Find the parser", "call": {"tool": "search", "arguments": {"query": "parse the header"}}},
                {"question": "  ", "call": {"tool": "minimal_context", "arguments": {"task": "add a retry"}}}
            ]
        });
        assert_eq!(
            texts(&workload),
            [
                "Who calls dumps?",
                "Find the parser",
                "parse the header",
                "add a retry"
            ]
        );
        assert!(texts(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn writes_one_row_per_scope_query_kind_share_and_depth() {
        let row = Row {
            scope_rows: 73_492,
            lists: 271,
            queries: "texts",
            count: 418,
            depth: 10,
            share: 0.25,
            recall: 0.9376,
            exact_answers: 287,
            rows_read_index: 18_559.0,
            rows_read_exact: 73_492.0,
            micros_index: 594.2,
            micros_exact: 2_044.0,
        };
        let report = Report {
            model: "m".into(),
            open_seconds: 2.7,
            rows: vec![row.clone(), Row { depth: 30, ..row }],
        };
        let text = markdown(&report, 418);
        assert!(text.contains(
            "| 73492 | 271 | 418 texts | 0.2500 | 10 | 0.9376 | 287/418 | 18559 / 73492 | 594 / 2044 |"
        ));
        assert_eq!(text.lines().filter(|l| l.starts_with("| 73492")).count(), 2);
    }
}
