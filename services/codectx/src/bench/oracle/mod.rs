//! `codectx bench oracle`: the code graph judged by compiler-grade SCIP indexes
//! (scip-go, scip-python, scip-typescript; `bench/oracle/install.sh` installs them and
//! `bench/oracle/index.sh` indexes the corpus). Per project and per indexer: definition
//! recall by category, reference recall and precision, call-edge precision, with samples
//! of every miss. See [`compare`] for the rules and docs/BENCHMARKS.md for the numbers.

pub mod compare;
pub mod scip;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use prost::Message as _;
use serde::Serialize;

use compare::{Category, Ratio, Score};

#[derive(Debug, clap::Args)]
pub struct OracleArgs {
    /// A project to judge: SCIP=CHECKOUT, the SCIP index and the directory it was made
    /// from (repeatable). Projects are summed per indexer (one line per language).
    #[arg(long = "project", value_name = "SCIP=CHECKOUT", required = true)]
    pub projects: Vec<String>,
    /// Where oracle.json and oracle.md go.
    #[arg(long, default_value = ".codectx-bench/reports")]
    pub out: PathBuf,
    /// Fail (exit 2) when definition recall of any indexer is below this percentage.
    #[arg(long, value_name = "PERCENT")]
    pub require_definitions: Option<f64>,
}

/// The checkout a SCIP index was made from, read lazily.
struct Checkout {
    root: PathBuf,
    files: std::cell::RefCell<BTreeMap<String, Vec<String>>>,
}

impl Checkout {
    fn line(&self, path: &str, line: usize) -> Option<String> {
        let mut files = self.files.borrow_mut();
        let lines = files.entry(path.to_owned()).or_insert_with(|| {
            std::fs::read_to_string(self.root.join(path))
                .map(|t| t.lines().map(str::to_owned).collect())
                .unwrap_or_default()
        });
        lines.get(line).cloned()
    }
}

impl compare::Source for Checkout {
    fn is_import(&self, path: &str, line: u32) -> bool {
        self.line(path, line.saturating_sub(1) as usize)
            .is_some_and(|l| {
                let l = l.trim_start();
                l.contains("require(") || l.starts_with("import ")
            })
    }

    fn text(&self, path: &str, range: &[i32]) -> Option<String> {
        // [line, start, end] on one line (character offsets; ASCII identifiers).
        let [line, start, end] = range else {
            return None;
        };
        let text = self.line(path, (*line).max(0) as usize)?;
        let chars: Vec<char> = text.chars().collect();
        let (start, end) = ((*start).max(0) as usize, (*end).max(0) as usize);
        (start < end && end <= chars.len()).then(|| chars[start..end].iter().collect())
    }
}

#[derive(Debug, Serialize)]
struct ProjectReport {
    name: String,
    indexer: String,
    score: Score,
}

/// Runs the comparison; false when `--require-definitions` is not met.
pub async fn run(args: OracleArgs) -> anyhow::Result<bool> {
    let mut projects = Vec::new();
    for spec in &args.projects {
        let (scip_path, checkout) = spec
            .split_once('=')
            .with_context(|| format!("--project {spec:?}: expected SCIP=CHECKOUT"))?;
        let bytes = std::fs::read(scip_path).with_context(|| format!("reading {scip_path}"))?;
        let index = scip::Index::decode(bytes.as_slice())
            .with_context(|| format!("{scip_path} is not a SCIP index"))?;
        let indexer = index
            .metadata
            .as_ref()
            .and_then(|m| m.tool_info.as_ref())
            .map(|t| format!("{} {}", t.name, t.version))
            .unwrap_or_else(|| "unknown".into());
        let name = std::path::Path::new(checkout)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| checkout.to_owned());
        let options = codectx_index::IndexOptions {
            root: PathBuf::from(checkout),
            owner: "org_oracle".to_owned(),
            name: name.clone(),
            cache: PathBuf::new(),
            max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
            progress: false,
            threads: 0,
        };
        let owners =
            tokio::task::spawn_blocking(move || codectx_index::snapshot(&options)).await??;
        let nodes: Vec<_> = owners
            .iter()
            .flat_map(|o| o.nodes.iter().cloned())
            .collect();
        let edges: Vec<_> = owners
            .iter()
            .flat_map(|o| o.edges.iter().cloned())
            .collect();
        let source = Checkout {
            root: PathBuf::from(checkout),
            files: Default::default(),
        };
        // scip-go types every expression; the Python and TypeScript checkers leave members
        // of untyped receivers silent.
        let silence_is_blind = !indexer.starts_with("scip-go");
        let score = compare::score(&index, &nodes, &edges, &source, silence_is_blind);
        println!("{}", line(&name, &score));
        projects.push(ProjectReport {
            name,
            indexer,
            score,
        });
    }

    let mut totals: BTreeMap<String, Score> = BTreeMap::new();
    for project in &projects {
        totals
            .entry(project.indexer.clone())
            .or_default()
            .merge(&project.score);
    }
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::json!({ "projects": projects, "totals": totals });
    std::fs::write(
        args.out.join("oracle.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    let markdown = markdown(&projects, &totals);
    std::fs::write(args.out.join("oracle.md"), &markdown)?;
    println!("\n{markdown}");
    println!("report: {}", args.out.join("oracle.json").display());
    Ok(args.require_definitions.is_none_or(|floor| {
        totals
            .values()
            .all(|s| s.definition_recall().percent() >= floor)
    }))
}

fn pct(r: Ratio) -> String {
    format!("{:.1}% ({}/{})", r.percent(), r.found, r.total)
}

fn line(name: &str, score: &Score) -> String {
    format!(
        "{name}: definitions {}, references {}, reference precision {}, call precision {}",
        pct(score.definition_recall()),
        pct(score.references),
        pct(score.reference_precision),
        pct(score.call_precision)
    )
}

fn markdown(projects: &[ProjectReport], totals: &BTreeMap<String, Score>) -> String {
    let mut out = String::new();
    let categories = [
        Category::Function,
        Category::Method,
        Category::Type,
        Category::Variable,
    ];
    out.push_str("| indexer | project | definitions | function | method | type | variable | reference recall | reference precision | call precision | resolved / name_match calls | unmodelled targets | unjudged edges |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let mut row = |indexer: &str, name: &str, s: &Score| {
        let _ = write!(out, "| {indexer} | {name} | {}", pct(s.definition_recall()));
        for c in categories {
            let _ = write!(
                out,
                " | {}",
                s.definitions.get(&c).map_or("-".into(), |r| pct(*r))
            );
        }
        let by = |c: &str| {
            s.call_precision_by_confidence
                .get(c)
                .map_or("-".into(), |r| format!("{:.1}%", r.percent()))
        };
        let _ = writeln!(
            out,
            " | {} | {} | {} | {} / {} | {} | {} |",
            pct(s.references),
            pct(s.reference_precision),
            pct(s.call_precision),
            by("resolved"),
            by("name_match"),
            s.unmodelled_targets,
            s.unjudged_edges
        );
    };
    for p in projects {
        row(&p.indexer, &p.name, &p.score);
    }
    for (indexer, s) in totals {
        row(indexer, "**all**", s);
    }
    for p in projects {
        let s = &p.score;
        let _ = writeln!(out, "\n### {}\n", p.name);
        if !s.files_not_indexed.is_empty() {
            let _ = writeln!(
                out,
                "Not indexed by design ({} files): {}\n",
                s.files_not_indexed.len(),
                s.files_not_indexed
                    .keys()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for (title, items) in [
            ("missed definitions", &s.missed_definitions),
            ("missed references", &s.missed_references),
            ("wrong edges", &s.wrong_edges),
        ] {
            if !items.is_empty() {
                let _ = writeln!(out, "{title} (first {}):", items.len().min(12));
                for item in items.iter().take(12) {
                    let _ = writeln!(out, "- `{item}`");
                }
                out.push('\n');
            }
        }
    }
    out
}
