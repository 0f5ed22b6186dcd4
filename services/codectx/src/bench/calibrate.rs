//! `codectx bench calibrate`: chooses the dense leg's similarity floor on a labelled set
//! (bench/calibration/*.json), never on the workloads it is judged by. For every query,
//! the most similar entity of its memory by the real model; a floor `t` answers that
//! entity when its similarity is at least `t`, else nothing. Reported per embedded text
//! variant and floor: accuracy (the labelled entity, or nothing when the label is
//! null), and how often a wrong entity or nothing was answered; the best floor is the
//! most accurate (the higher on ties: a wrong entity costs more than an empty answer).

use std::path::PathBuf;

use anyhow::Context;
use codectx_embed::{Embedder, ModelFiles, cosine};
use serde::{Deserialize, Serialize};

/// Arguments of `codectx bench calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// A labelled set (bench/calibration/memory.json format).
    #[arg(long, default_value = "bench/calibration/memory.json")]
    pub set: PathBuf,
    /// Embedding runtime and model directory (`make models` fills the default).
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// Where the JSON report goes.
    #[arg(long, default_value = ".codectx-bench/reports")]
    pub out: PathBuf,
}

#[derive(Debug, Deserialize)]
struct Set {
    name: String,
    memories: Vec<Memory>,
    queries: Vec<Query>,
}

#[derive(Debug, Deserialize)]
struct Memory {
    id: String,
    entities: Vec<Entity>,
}

#[derive(Debug, Deserialize)]
struct Entity {
    name: String,
    #[serde(rename = "type", default)]
    entity_type: String,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    facts: Vec<Fact>,
}

#[derive(Debug, Deserialize)]
struct Fact {
    predicate: String,
    object: String,
}

#[derive(Debug, Deserialize)]
struct Query {
    memory: String,
    query: String,
    expected: Option<String>,
    #[serde(default)]
    kind: String,
}

/// What the entity texts hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Name, aliases and type.
    Names,
    /// Name, aliases, type and current facts in one text.
    NamesAndFacts,
    /// One vector for the name, aliases and type, and one per fact (`name predicate
    /// object`); an entity scores its best part (what the assembler stores: ADR 0009).
    Parts,
}

impl Variant {
    /// The texts an entity is embedded as (its score is the best of them).
    fn texts(self, entity: &Entity) -> Vec<String> {
        let facts: Vec<(String, String)> = entity
            .facts
            .iter()
            .map(|f| (f.predicate.clone(), f.object.clone()))
            .collect();
        let text = codectx_core::embedding_text::memory_entity;
        match self {
            Variant::Names => vec![text(
                &entity.name,
                &entity.aliases,
                &entity.entity_type,
                &[],
            )],
            Variant::NamesAndFacts => {
                vec![text(
                    &entity.name,
                    &entity.aliases,
                    &entity.entity_type,
                    &facts,
                )]
            }
            Variant::Parts => codectx_core::embedding_text::memory_parts(
                &entity.name,
                &entity.aliases,
                &entity.entity_type,
                &facts,
            ),
        }
    }
}

/// One floor's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub floor: f64,
    pub accuracy_pct: f64,
    /// Queries with a label answered with that entity.
    pub found: usize,
    /// Queries answered with another entity than their label (or any, for null).
    pub wrong: usize,
    /// Queries with a label answered with nothing.
    pub missed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    pub variant: Variant,
    pub best: Row,
    pub rows: Vec<Row>,
    /// The top similarity of each query, by whether its top entity was the label.
    pub right_top_scores: Vec<f32>,
    pub other_top_scores: Vec<f32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub set: String,
    pub model: String,
    pub queries: usize,
    pub null_queries: usize,
    pub variants: Vec<VariantReport>,
}

/// A memory's entities by name, with their vectors.
type Embedded<'a> = Vec<(&'a str, Vec<f32>)>;

fn evaluate(tops: &[(Option<&str>, &str, f32)], floor: f64) -> Row {
    let (mut right, mut found, mut wrong, mut missed) = (0, 0, 0, 0);
    for (expected, top, score) in tops {
        let answered = (f64::from(*score) >= floor).then_some(*top);
        match (expected, answered) {
            (Some(label), Some(name)) if *label == name => {
                right += 1;
                found += 1;
            }
            (None, None) => right += 1,
            (Some(_), None) => missed += 1,
            (_, Some(_)) => wrong += 1,
        }
    }
    Row {
        floor,
        accuracy_pct: (1000.0 * right as f64 / tops.len().max(1) as f64).round() / 10.0,
        found,
        wrong,
        missed,
    }
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(&args.set)
        .with_context(|| format!("reading {}", args.set.display()))?;
    let set: Set =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", args.set.display()))?;
    let directory = args.models.clone().unwrap_or_else(|| {
        PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/codectx/models")
    });
    let embedder = Embedder::load(&ModelFiles::in_directory(&directory))?;
    let queries: Vec<String> = set.queries.iter().map(|q| q.query.clone()).collect();
    let query_vectors = embed_all(&embedder, &queries)?;
    let mut variants = Vec::new();
    for variant in [Variant::Names, Variant::NamesAndFacts, Variant::Parts] {
        let mut memories: Vec<(&str, Embedded<'_>)> = Vec::new();
        for memory in &set.memories {
            let mut owners: Vec<&str> = Vec::new();
            let mut texts: Vec<String> = Vec::new();
            for entity in &memory.entities {
                for text in variant.texts(entity) {
                    owners.push(entity.name.as_str());
                    texts.push(text);
                }
            }
            let vectors = embed_all(&embedder, &texts)?;
            memories.push((
                memory.id.as_str(),
                owners.into_iter().zip(vectors).collect(),
            ));
        }
        let mut tops: Vec<(Option<&str>, &str, f32)> = Vec::new();
        for (query, vector) in set.queries.iter().zip(&query_vectors) {
            let (_, entities) = memories
                .iter()
                .find(|(id, _)| *id == query.memory)
                .with_context(|| {
                    format!("query {:?}: no memory {:?}", query.query, query.memory)
                })?;
            let (name, score) = entities
                .iter()
                .map(|(name, entity)| (*name, cosine(vector, entity)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .context("an empty memory")?;
            tops.push((query.expected.as_deref(), name, score));
        }
        let rows: Vec<Row> = (0..=16)
            .map(|step| evaluate(&tops, 0.20 + 0.025 * f64::from(step)))
            .collect();
        let best = rows
            .iter()
            .cloned()
            .reduce(|best, row| {
                if row.accuracy_pct >= best.accuracy_pct {
                    row
                } else {
                    best
                }
            })
            .expect("rows");
        let (right_top_scores, other_top_scores) = tops.iter().fold(
            (Vec::new(), Vec::new()),
            |(mut right, mut other), (expected, top, score)| {
                if expected.is_some_and(|label| label == *top) {
                    right.push(*score);
                } else {
                    other.push(*score);
                }
                (right, other)
            },
        );
        variants.push(VariantReport {
            variant,
            best,
            rows,
            right_top_scores,
            other_top_scores,
        });
    }
    let report = Report {
        set: set.name.clone(),
        model: embedder.identity().name.clone(),
        queries: set.queries.len(),
        null_queries: set.queries.iter().filter(|q| q.expected.is_none()).count(),
        variants,
    };
    print_report(&report, &set);
    std::fs::create_dir_all(&args.out)?;
    let path = args.out.join(format!("{}.json", set.name));
    std::fs::write(&path, serde_json::to_string_pretty(&report)?)?;
    eprintln!("wrote {}", path.display());
    Ok(report)
}

fn embed_all(embedder: &Embedder, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(32) {
        out.extend(embedder.embed(chunk)?);
    }
    Ok(out)
}

fn print_report(report: &Report, set: &Set) {
    let kinds: std::collections::BTreeSet<&str> =
        set.queries.iter().map(|q| q.kind.as_str()).collect();
    println!(
        "Calibration set `{}`: {} queries ({} with no answer; kinds: {}), model {}.\n",
        report.set,
        report.queries,
        report.null_queries,
        kinds.into_iter().collect::<Vec<_>>().join(", "),
        report.model
    );
    for variant in &report.variants {
        println!(
            "| {:?}: floor | accuracy | right entity | wrong entity | nothing (had an answer) |",
            variant.variant
        );
        println!("|---:|---:|---:|---:|---:|");
        for row in &variant.rows {
            let mark = if (row.floor - variant.best.floor).abs() < 1e-9 {
                " (best)"
            } else {
                ""
            };
            println!(
                "| {:.3}{mark} | {:.1}% | {} | {} | {} |",
                row.floor, row.accuracy_pct, row.found, row.wrong, row.missed
            );
        }
        println!();
    }
}
