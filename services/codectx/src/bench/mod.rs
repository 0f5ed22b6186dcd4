//! `codectx bench`: runs a workload (`bench/WORKLOAD.md`) through the real MCP path
//! (Streamable HTTP to the gateway, all seven services on embedded stores) and reports
//! context reduction, evidence coverage and latency, per question and from summed counts.
//!
//! Arms: `raw` (the baseline files an agent would read, computed from the checkout),
//! and one stack per retrieval arm (`hybrid`, the product; the ablations `lexical`,
//! `exact`, `bm25` and `dense`, one leg or two each), each run in call mode (the
//! question's own tool call) and task mode (`minimal_context` with the question). Load
//! mode replays the workload from N concurrent MCP clients on the hybrid stack and reads
//! each service's own latency histogram. Session mode (bench/SESSIONS.md, [`session`])
//! runs a workload's sessions on the hybrid stack, each in one MCP session and call by
//! call in isolated ones.

pub mod calibrate;
pub mod client;
mod load;
pub mod oracle;
pub mod recall;
mod report;
pub mod score;
pub mod session;
mod tenants;
pub mod workload;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::ValueEnum;
use codectx_context_assembler::RetrievalLegs;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::indexing::{self, IndexArgs};
use crate::stack::{GraphBackend, PeerTransport, ServiceKind, Stack, StackOptions, VectorBackend};
use client::{CallOutcome, McpClient};
use score::{Evidence, Scored};
use workload::{Expected, Question, Session, Workload};

/// How long the warm-up asks again while a repository's lexical index is still loading
/// (the corpus stream's own deadline, `CORPUS_STREAM_DEADLINE_SECONDS`).
const LEXICAL_LOAD_WAIT_SECONDS: u64 = codectx_core::limits::CORPUS_STREAM_DEADLINE_SECONDS;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    /// Workload file in the bench/WORKLOAD.md format.
    #[arg(long, required = true)]
    pub workload: Option<PathBuf>,
    /// A checkout for each repository key of the workload: KEY=PATH (repeatable). It is
    /// indexed (incrementally: an unchanged checkout reuses its index) under --data.
    #[arg(long = "repo", value_name = "KEY=PATH", required = true)]
    pub repos: Vec<String>,
    /// Retrieval arms to run besides the raw-file baseline, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "hybrid,lexical,dense")]
    pub arms: Vec<Arm>,
    /// Which modes to run: the questions' own calls, minimal_context with the question,
    /// or both.
    #[arg(long, value_enum, default_value_t = ModeSelection::Both)]
    pub mode: ModeSelection,
    /// Only these question ids (comma separated); default: all.
    #[arg(long, value_delimiter = ',')]
    pub questions: Vec<String>,
    /// Load mode: replay the workload from this many concurrent MCP clients (on the
    /// hybrid stack) after the accuracy pass, and report calls/s, latency, the CPU time a
    /// call costs the whole in-process stack and the host's steal time. 0: no load phase.
    #[arg(long, default_value_t = 0)]
    pub concurrency: usize,
    /// How long the load phase runs, e.g. 60s, 2m (each rate of the open loop too).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Open-loop load: offer these rates in turn (calls per second, comma separated, e.g.
    /// 100,300,600), each for --duration, from --open-loop-sessions MCP sessions, and
    /// report each rate's latency, CPU time per call, host steal and the knee (the highest rate with
    /// p95 under 25 ms and nothing failed or dropped). Runs after the closed loop, on the
    /// hybrid stack.
    #[arg(long, value_delimiter = ',')]
    pub rates: Vec<f64>,
    /// MCP sessions the open loop spreads its arrivals over.
    #[arg(long, default_value_t = 32)]
    pub open_loop_sessions: usize,
    /// Where the JSON report and the Markdown tables go.
    #[arg(long, default_value = ".codectx-bench/reports")]
    pub out: PathBuf,
    /// Data directory for the benchmark's embedded stores (kept between runs).
    #[arg(long, default_value = ".codectx-bench/data")]
    pub data: PathBuf,
    /// Embedding runtime and model directory (`make models` fills the default).
    #[arg(long)]
    pub models: Option<PathBuf>,
    /// Exit non-zero when the hybrid arm's call-mode evidence coverage (or pass rate) is
    /// below this percentage: a regression gate for CI.
    #[arg(long, value_name = "PERCENT")]
    pub require_coverage: Option<f64>,
    /// Also run the questions at these compression levels (comma separated: off,
    /// summary, aggressive, minimal), each in a new MCP session and reported as
    /// `ARM@LEVEL`; the plain arm is the gateway's default level.
    #[arg(long, value_delimiter = ',', value_parser = parse_level)]
    pub levels: Vec<codectx_compress::Level>,
    /// Code no-match floors to run with instead of the calibrated ones: DENSE,LEXICAL
    /// (the dense leg's nearest similarity, BM25's best score per word), optionally
    /// ,WEAK_LEXICAL_WEIGHT (BM25's weight in the fusion when it is under its floor and
    /// the dense leg matched); for calibration (bench/calibrate-code.py).
    #[arg(long, value_parser = parse_floors)]
    pub code_floors: Option<codectx_context_assembler::CodeFloors>,
    /// Seconds an arm with the dense leg waits for each repository's code vectors to be
    /// complete before measuring (0: measure while they build, for a quick smoke).
    #[arg(long, default_value_t = 1_200, value_name = "SECONDS")]
    pub wait_for_vectors: u64,
    /// Measure on a Neo4j 5.26 or HugeGraph 1.5 graph store (the repositories are indexed
    /// into it) instead of the embedded SQLite one: what a cluster deployment costs.
    #[command(flatten)]
    pub graph: crate::indexing::GraphArgs,
    /// Measure on a Milvus vector store at this gRPC URI (milvus-lite included; filters
    /// are sent as literals unless --milvus-filter-templates) instead of the embedded one.
    #[arg(long, value_name = "URI")]
    pub milvus: Option<String>,
    /// Send Milvus filters as templates with parameters (Milvus 2.5+ servers).
    #[arg(long, requires = "milvus")]
    pub milvus_filter_templates: bool,
    /// The embedded vector store's least share of a large scope's rows a search reads
    /// (`vectors.embedded_probe_share`): 1 reads every row (exact); below 1, the
    /// nearest lists only (ADR 0018).
    #[arg(long, default_value_t = 1.0, value_name = "SHARE")]
    pub vector_probe_share: f64,
    /// How the stack's services call each other: in process, as `codectx up` runs them
    /// (ADR 0016), or over loopback gRPC, as separate processes and pods do.
    #[arg(long, value_enum, default_value_t = PeerTransport::InProcess)]
    pub peers: PeerTransport,
}

impl BenchArgs {
    fn graph_backend(&self) -> GraphBackend {
        self.graph.backend()
    }

    /// The vector store for an arm: Milvus keeps the hybrid collection for the native
    /// arm only, so the other arms measure what they always did.
    fn vector_backend(&self, arm: Arm) -> VectorBackend {
        match &self.milvus {
            None => VectorBackend::Embedded,
            Some(uri) => VectorBackend::Milvus {
                uri: uri.clone(),
                literal_filters: !self.milvus_filter_templates,
                native_hybrid: arm == Arm::Native,
            },
        }
    }
}

fn parse_floors(text: &str) -> Result<codectx_context_assembler::CodeFloors, String> {
    let number = |value: &str| {
        value
            .trim()
            .parse::<f64>()
            .map_err(|e| format!("{value:?}: {e}"))
    };
    let values = text.split(',').map(number).collect::<Result<Vec<_>, _>>()?;
    let calibrated = codectx_context_assembler::CodeFloors::default();
    match values[..] {
        [dense, lexical] => Ok(codectx_context_assembler::CodeFloors {
            dense,
            lexical,
            ..calibrated
        }),
        [dense, lexical, lexical_weight] => Ok(codectx_context_assembler::CodeFloors {
            dense,
            lexical,
            lexical_weight,
        }),
        _ => Err(format!(
            "{text:?}: give DENSE,LEXICAL or DENSE,LEXICAL,WEAK_LEXICAL_WEIGHT, e.g. 0.39,1.6,0.3"
        )),
    }
}

fn parse_level(text: &str) -> Result<codectx_compress::Level, String> {
    codectx_compress::Level::ALL
        .into_iter()
        .find(|level| level.as_str() == text)
        .ok_or_else(|| format!("{text:?}: a level is off, summary, aggressive or minimal"))
}

/// The label of an arm's results at a level (None: the server's default).
fn arm_label(arm: Arm, level: Option<codectx_compress::Level>) -> String {
    match level {
        None => arm.name().to_owned(),
        Some(level) => format!("{}@{level}", arm.name()),
    }
}

/// A call at an explicit level: the `compression` argument, where the tool takes it.
fn at_level(
    tool: &str,
    mut arguments: Map<String, Value>,
    level: Option<codectx_compress::Level>,
) -> Map<String, Value> {
    if let Some(level) = level
        && codectx_compress::Tool::from_name(tool).is_some()
    {
        arguments.insert(
            codectx_compress::engine::LEVEL_ARGUMENT.into(),
            Value::from(level.as_str()),
        );
    }
    arguments
}

/// Benchmarks other than a workload run.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Judges the code graph against compiler-grade SCIP indexes (scip-go, scip-python,
    /// scip-typescript): definition recall, reference recall and precision
    /// (`make bench-oracle`).
    Oracle(oracle::OracleArgs),
    /// Chooses the dense leg's similarity floor on a labelled set (bench/calibration),
    /// per embedded text variant (`make bench-calibrate`).
    Calibrate(calibrate::CalibrateArgs),
    /// Measures the embedded vector store's lists against its exact scan: recall of the
    /// exact answer at each depth for the workloads' questions and for stored vectors,
    /// rows read and time per query (`make bench-recall`, ADR 0018).
    Recall(recall::RecallArgs),
}

/// A retrieval configuration under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// Exact lookup, BM25 and the dense leg fused with RRF, then graph hydration.
    Hybrid,
    /// Exact lookup and BM25 only.
    Lexical,
    /// Exact lookup only.
    Exact,
    /// BM25 only.
    Bm25,
    /// The dense leg only.
    Dense,
    /// Exact lookup, then Milvus's native hybrid search (BM25 function and dense fused by
    /// RRF in Milvus) for code; needs --milvus (ADR 0015).
    Native,
}

impl Arm {
    fn legs(self) -> RetrievalLegs {
        match self {
            Arm::Hybrid => RetrievalLegs::Hybrid,
            Arm::Lexical => RetrievalLegs::Lexical,
            Arm::Exact => RetrievalLegs::Exact,
            Arm::Bm25 => RetrievalLegs::Bm25,
            Arm::Dense => RetrievalLegs::Dense,
            Arm::Native => RetrievalLegs::Native,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Arm::Hybrid => "hybrid",
            Arm::Lexical => "lexical",
            Arm::Exact => "exact",
            Arm::Bm25 => "bm25",
            Arm::Dense => "dense",
            Arm::Native => "native",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeSelection {
    Call,
    Task,
    Both,
}

/// How a question is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The question's own tool call.
    Call,
    /// `minimal_context` with the question as the task.
    Task,
    /// The raw-file baseline (the files an agent would otherwise read).
    Files,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Call => "call",
            Mode::Task => "task",
            Mode::Files => "files",
        }
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit())
        .map(|at| text.split_at(at))
        .unwrap_or((text, "s"));
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; write e.g. 60s or 2m"))?;
    match unit {
        "s" | "" => Ok(Duration::from_secs(value)),
        "m" => Ok(Duration::from_secs(value * 60)),
        "ms" => Ok(Duration::from_millis(value)),
        _ => Err(format!("{text:?}: the unit must be ms, s or m")),
    }
}

/// One question, one arm, one mode.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionResult {
    pub id: String,
    pub repo: String,
    pub category: workload::Category,
    pub arm: String,
    pub mode: Mode,
    pub tool: String,
    pub status: String,
    pub is_error: bool,
    pub returned_bytes: usize,
    pub returned_tokens: u64,
    pub baseline_tokens: u64,
    pub evidence: Evidence,
    pub passed: bool,
    pub round_trips: u32,
    pub latency_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    pub expected: Option<Expected>,
    /// The structured answer, written to `<workload>.answers.jsonl` for diagnosis.
    #[serde(skip)]
    pub answer: Option<Value>,
}

impl QuestionResult {
    fn scored(&self) -> Scored {
        Scored {
            expected: self.expected.unwrap_or(Expected::Found),
            baseline_tokens: self.baseline_tokens,
            returned_tokens: self.returned_tokens,
            evidence: self.evidence.clone(),
            passed: self.passed,
            round_trips: self.round_trips,
            latency_ms: self.latency_ms,
        }
    }
}

/// The raw-file baseline of one question, recomputed from the checkout.
#[derive(Debug, Clone, Default)]
struct Baseline {
    tokens: u64,
    /// `path` headers and contents of the files, as an agent reading them would see.
    text: String,
}

fn baseline(root: &Path, question: &Question, warnings: &mut Vec<String>) -> Baseline {
    files_baseline(
        root,
        &question.id,
        &question.baseline_files,
        question.baseline_tokens,
        warnings,
    )
}

/// The raw-file baseline of `files` under `root`; `stated` is checked against it.
fn files_baseline(
    root: &Path,
    id: &str,
    files: &[String],
    stated: Option<u64>,
    warnings: &mut Vec<String>,
) -> Baseline {
    let mut out = Baseline::default();
    for file in files {
        match std::fs::read(root.join(file)) {
            Ok(bytes) => {
                out.tokens += score::tokens(bytes.len());
                out.text.push_str(file);
                out.text.push('\n');
                out.text.push_str(&String::from_utf8_lossy(&bytes));
                out.text.push('\n');
            }
            Err(error) => warnings.push(format!(
                "{id}: baseline file {file} cannot be read under {}: {error}",
                root.display()
            )),
        }
    }
    if let Some(stated) = stated
        && stated != out.tokens
    {
        warnings.push(format!(
            "{id}: the workload says baseline_tokens {stated}; this checkout gives {} (used)",
            out.tokens
        ));
    }
    out
}

/// Session baselines by session id.
fn session_baselines(
    sessions: &[Session],
    repos: &BTreeMap<String, PathBuf>,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, u64> {
    sessions
        .iter()
        .map(|s| {
            let baseline = files_baseline(
                &repos[&s.repo],
                &s.id,
                &s.baseline_files,
                s.baseline_tokens,
                warnings,
            );
            (s.id.clone(), baseline.tokens)
        })
        .collect()
}

fn parse_repos(pairs: &[String]) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let mut repos = BTreeMap::new();
    for pair in pairs {
        let (key, path) = pair
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--repo {pair:?}: write KEY=PATH"))?;
        let path = PathBuf::from(path);
        anyhow::ensure!(
            path.is_dir(),
            "--repo {key}={}: not a directory",
            path.display()
        );
        repos.insert(key.to_owned(), path.canonicalize()?);
    }
    Ok(repos)
}

/// Runs the benchmark; returns false when `--require-coverage` is not met.
pub async fn run(args: BenchArgs) -> anyhow::Result<bool> {
    match args.command {
        Some(BenchCommand::Oracle(oracle)) => return oracle::run(oracle).await,
        Some(BenchCommand::Calibrate(calibrate)) => {
            return tokio::task::spawn_blocking(move || calibrate::run(calibrate).map(|_| true))
                .await?;
        }
        Some(BenchCommand::Recall(recall)) => {
            return tokio::task::spawn_blocking(move || recall::run(recall).map(|_| true)).await?;
        }
        None => {}
    }
    let started_at = std::time::SystemTime::now();
    let workload_path = args
        .workload
        .clone()
        .context("--workload is required (or a subcommand: codectx bench oracle)")?;
    let workload = Workload::load(&workload_path)?;
    let (questions, sessions) = workload
        .select(&args.questions)
        .map_err(|e| anyhow::anyhow!(e))?;
    let repos = parse_repos(&args.repos)?;
    for repo in &workload.repos {
        anyhow::ensure!(
            repos.contains_key(&repo.key),
            "the workload needs repository {:?} ({}): pass --repo {}=PATH",
            repo.key,
            if repo.source.is_empty() {
                "no source given"
            } else {
                &repo.source
            },
            repo.key
        );
    }
    // Services record their latency into this process's meter provider from now on.
    let metrics = codectx_telemetry::InProcessMetrics::install();
    let mut warnings = Vec::new();

    std::fs::create_dir_all(&args.data)?;
    let mut indexed = Vec::new();
    for repo in &workload.repos {
        let path = &repos[&repo.key];
        let index_args = IndexArgs {
            quiet: true,
            graph: args.graph.clone(),
            ..IndexArgs::embedded(path.clone(), repo.key.clone(), args.data.clone())
        };
        let store = indexing::open_store(&index_args).await?;
        let began = std::time::Instant::now();
        let report = indexing::run(&index_args, &*store).await?;
        eprintln!("{}", indexing::summary(&repo.key, &report));
        indexed.push(report::IndexedRepo {
            key: repo.key.clone(),
            path: path.display().to_string(),
            commit: report::checkout_commit(path),
            index_seconds: began.elapsed().as_secs_f64(),
            summary: indexing::summary(&repo.key, &report),
            policy_fingerprint: report.policy.fingerprint.clone(),
        });
    }

    // Tenants other than dev: their organisations, indexed repositories and keys.
    let tenants = tenants::prepare(&workload, &repos, &args.data, &args.graph).await?;

    let baselines: BTreeMap<String, Baseline> = questions
        .iter()
        .map(|q| (q.id.clone(), baseline(&repos[&q.repo], q, &mut warnings)))
        .collect();
    let mut results = raw_file_arm(&questions, &baselines);
    let session_baselines = session_baselines(&sessions, &repos, &mut warnings);
    let mut session_results = Vec::new();

    let modes: Vec<Mode> = match args.mode {
        ModeSelection::Call => vec![Mode::Call],
        ModeSelection::Task => vec![Mode::Task],
        ModeSelection::Both => vec![Mode::Call, Mode::Task],
    };
    anyhow::ensure!(
        args.milvus.is_some() || !args.arms.contains(&Arm::Native),
        "the native arm is Milvus's native hybrid search: pass --milvus URI (make bench-native starts milvus-lite)"
    );
    let mut arms = args.arms.clone();
    arms.sort();
    arms.dedup();
    let mut load_report = None;
    let mut open_loop_report = None;
    for arm in &arms {
        let stack = Stack::start(StackOptions {
            retrieval: arm.legs(),
            // Each session is measured as a new agent's: what an earlier run (another
            // level, call mode) received must not be referenced.
            compression: codectx_compress::CompressionConfig {
                cross_session: false,
                ..Default::default()
            },
            oidc: Default::default(),
            model_directory: args.models.clone(),
            code_floors: args.code_floors,
            graph: args.graph_backend(),
            vectors: args.vector_backend(*arm),
            vector_probe_share: args.vector_probe_share,
            transport: args.peers,
            ..StackOptions::ephemeral(args.data.clone())
        })
        .await?;
        if !stack
            .wait_serving(ServiceKind::Embedding, Duration::from_secs(30))
            .await
        {
            warnings.push(format!(
                "{}: the embedding model did not load (run `make models` or pass --models); the dense leg answered nothing",
                arm.name()
            ));
        }
        let url = format!(
            "http://{}/mcp",
            stack
                .gateway_http()
                .ok_or_else(|| anyhow::anyhow!("the gateway did not start"))?
        );
        let api_key = stack.dev.api_key.clone();
        for call in &workload.setup {
            let client =
                McpClient::connect(&url, tenants.key(call.tenant.as_deref(), &api_key)?).await?;
            let outcome = client.call(&call.tool, &call.arguments).await?;
            client.close().await;
            anyhow::ensure!(
                !outcome.is_error,
                "setup call {} ({}) failed: {}",
                call.tool,
                call.tenant.as_deref().unwrap_or(tenants::DEV),
                outcome.haystack
            );
        }
        let client = McpClient::connect(&url, &api_key).await?;
        // Not measured: the first code query of a repository loads its lexical index
        // (streamed from graph-hydrator), a one-time cost per corpus version; and the
        // graph's code vectors are built by the requests that need them, so the arms
        // with the dense leg wait until every symbol is embedded (an answer says
        // `code vectors building` until then) and every run measures the same thing.
        for repo in &workload.repos {
            let mut arguments = Map::new();
            arguments.insert("repository".into(), Value::from(repo.key.clone()));
            arguments.insert("query".into(), Value::from("main"));
            arguments.insert("compression".into(), Value::from("off"));
            arguments.insert("fresh".into(), Value::Bool(true));
            let began = std::time::Instant::now();
            let mut reported = began;
            loop {
                let building = match client.call("search", &arguments).await {
                    Ok(outcome) if !outcome.is_error => outcome
                        .text
                        .lines()
                        .find(|line| line.contains("code vectors"))
                        .map(str::to_owned),
                    // The lexical index loads on after a call that gave up waiting for
                    // it (a large corpus on a slow or busy machine): ask again until it
                    // answers, so the load is not measured in the first question.
                    failed if began.elapsed() < Duration::from_secs(LEXICAL_LOAD_WAIT_SECONDS) => {
                        if reported.elapsed() > Duration::from_secs(15) {
                            let why = match failed {
                                Ok(outcome) => outcome.text,
                                Err(error) => error.to_string(),
                            };
                            eprintln!(
                                "{}: {}: waiting for the lexical index: {}",
                                arm.name(),
                                repo.key,
                                why.trim()
                            );
                            reported = std::time::Instant::now();
                        }
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        continue;
                    }
                    Ok(outcome) => {
                        warnings.push(format!(
                            "{}: {}: the warm-up search still failed after {LEXICAL_LOAD_WAIT_SECONDS} s: {}",
                            arm.name(),
                            repo.key,
                            outcome.text.trim()
                        ));
                        None
                    }
                    Err(error) => {
                        warnings.push(format!(
                            "{}: {}: the warm-up search still failed after {LEXICAL_LOAD_WAIT_SECONDS} s: {error}",
                            arm.name(),
                            repo.key
                        ));
                        None
                    }
                };
                let Some(building) = building.filter(|_| arm.legs().dense() || arm.legs().native())
                else {
                    break;
                };
                if began.elapsed() >= Duration::from_secs(args.wait_for_vectors) {
                    warnings.push(format!(
                        "{}: {}: the code vectors were not complete after {} s ({building}); the dense leg answered from part of them",
                        arm.name(),
                        repo.key,
                        args.wait_for_vectors
                    ));
                    break;
                }
                if reported.elapsed() > Duration::from_secs(15) {
                    eprintln!("{}: {}: {}", arm.name(), repo.key, building.trim());
                    reported = std::time::Instant::now();
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
        client.close().await;
        let levels = std::iter::once(None).chain(args.levels.iter().copied().map(Some));
        for level in levels {
            for question in &questions {
                for mode in &modes {
                    let Some((tool, arguments)) = ask(question, *mode) else {
                        continue;
                    };
                    let arguments = at_level(&tool, arguments, level);
                    // Every question in an MCP session of its own, as a new agent asks
                    // it: nothing an earlier question received is referenced (session
                    // mode measures that).
                    let key = tenants.key(question.tenant.as_deref(), &api_key)?;
                    let client = McpClient::connect(&url, key).await?;
                    let outcome = client.call(&tool, &arguments).await;
                    client.close().await;
                    let mut result = score_answer(
                        question,
                        *arm,
                        *mode,
                        &tool,
                        baselines[&question.id].tokens,
                        outcome,
                    );
                    result.arm = arm_label(*arm, level);
                    results.push(result);
                }
            }
        }
        // Sessions measure the product's session behaviour: the hybrid arm only.
        if *arm == Arm::Hybrid {
            for session in &sessions {
                session_results.push(
                    session::run(
                        &url,
                        &api_key,
                        arm.name(),
                        session,
                        session_baselines[&session.id],
                    )
                    .await?,
                );
            }
        }
        if *arm == Arm::Hybrid && args.concurrency > 0 {
            let calls: Vec<(String, Map<String, Value>)> = questions
                .iter()
                .flat_map(|q| modes.iter().filter_map(|m| ask(q, *m)))
                .collect();
            let before = metrics.snapshot();
            // bench/profile/profile.sh starts sampling at this line.
            eprintln!(
                "load phase: {} MCP clients for {} s",
                args.concurrency,
                args.duration.as_secs()
            );
            let mut report =
                load::run(&url, &api_key, &calls, args.concurrency, args.duration).await?;
            report.services = load::service_latency(&before, &metrics.snapshot());
            report.peers = args.peers.describe();
            load_report = Some(report);
        }
        if *arm == Arm::Hybrid && !args.rates.is_empty() {
            let calls: Vec<(String, Map<String, Value>)> = questions
                .iter()
                .flat_map(|q| modes.iter().filter_map(|m| ask(q, *m)))
                .collect();
            let mut report = load::open_loop(
                &url,
                &api_key,
                &calls,
                &args.rates,
                args.duration,
                args.open_loop_sessions,
            )
            .await?;
            report.peers = args.peers.describe();
            open_loop_report = Some(report);
        }
        stack.stop().await?;
    }

    let report = report::Report::build(report::Inputs {
        workload: &workload,
        workload_path: &workload_path,
        arms: &arms
            .iter()
            .flat_map(|arm| {
                std::iter::once(None)
                    .chain(args.levels.iter().copied().map(Some))
                    .map(|level| arm_label(*arm, level))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>(),
        modes: &modes,
        indexed,
        results,
        sessions: session_results,
        load: load_report,
        open_loop: open_loop_report,
        warnings,
        started_at,
    });
    std::fs::create_dir_all(&args.out)?;
    let stem: String = workload
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = |extension: &str| args.out.join(format!("{stem}.{extension}"));
    std::fs::write(path("json"), serde_json::to_string_pretty(&report)?)?;
    let mut answers = String::new();
    for result in &report.questions {
        if let Some(answer) = &result.answer {
            answers.push_str(&serde_json::to_string(&serde_json::json!({
                "id": result.id, "arm": result.arm, "mode": result.mode, "tool": result.tool,
                "passed": result.passed, "missing": result.evidence.missing, "answer": answer,
            }))?);
            answers.push('\n');
        }
    }
    for session in &report.sessions {
        for (index, call) in session.calls.iter().enumerate() {
            if let Some(answer) = &call.answer {
                answers.push_str(&serde_json::to_string(&serde_json::json!({
                    "session": session.id, "call": index + 1, "tool": call.tool,
                    "passed": call.passed, "missing": call.evidence.missing, "answer": answer,
                }))?);
                answers.push('\n');
            }
        }
    }
    std::fs::write(path("answers.jsonl"), answers)?;
    let markdown = report.markdown();
    std::fs::write(path("md"), &markdown)?;
    println!("{markdown}");
    eprintln!(
        "wrote {}, {} and {}",
        path("json").display(),
        path("md").display(),
        path("answers.jsonl").display()
    );
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(required) = args.require_coverage {
        return Ok(report.meets(required));
    }
    Ok(true)
}

/// The MCP call a question makes in `mode`; None when the question has no call.
fn ask(question: &Question, mode: Mode) -> Option<(String, Map<String, Value>)> {
    match mode {
        Mode::Call => question
            .call
            .as_ref()
            .map(|call| (call.tool.clone(), call.arguments.clone())),
        Mode::Task => {
            let mut arguments = Map::new();
            arguments.insert("task".into(), Value::from(question.question.clone()));
            arguments.insert("repository".into(), Value::from(question.repo.clone()));
            Some(("minimal_context".into(), arguments))
        }
        Mode::Files => None,
    }
}

fn raw_file_arm(
    questions: &[Question],
    baselines: &BTreeMap<String, Baseline>,
) -> Vec<QuestionResult> {
    questions
        .iter()
        // A file listing cannot say "nothing matches": no-match questions (and questions
        // without baseline files, such as memory recall) have no raw arm.
        .filter(|q| q.expected_result == Expected::Found && !q.baseline_files.is_empty())
        .map(|question| {
            let baseline = &baselines[&question.id];
            let evidence = score::evidence(
                &baseline.text,
                &question.must_contain,
                &question.must_not_contain,
            );
            QuestionResult {
                id: question.id.clone(),
                repo: question.repo.clone(),
                category: question.category,
                arm: "raw".into(),
                mode: Mode::Files,
                tool: "read files".into(),
                status: String::new(),
                is_error: false,
                returned_bytes: baseline.text.len(),
                returned_tokens: baseline.tokens,
                baseline_tokens: baseline.tokens,
                passed: evidence.missing.is_empty() && evidence.forbidden_present.is_empty(),
                evidence,
                round_trips: question.baseline_files.len() as u32,
                latency_ms: 0.0,
                error: None,
                expected: Some(Expected::Found),
                answer: None,
            }
        })
        .collect()
}

fn score_answer(
    question: &Question,
    arm: Arm,
    mode: Mode,
    tool: &str,
    baseline_tokens: u64,
    outcome: Result<CallOutcome, client::CallError>,
) -> QuestionResult {
    let mut result = QuestionResult {
        id: question.id.clone(),
        repo: question.repo.clone(),
        category: question.category,
        arm: arm.name().into(),
        mode,
        tool: tool.into(),
        status: "error".into(),
        is_error: true,
        returned_bytes: 0,
        returned_tokens: 0,
        baseline_tokens,
        evidence: Evidence {
            required: question.must_contain.len(),
            missing: question.must_contain.clone(),
            ..Evidence::default()
        },
        passed: false,
        round_trips: 1,
        latency_ms: 0.0,
        error: None,
        expected: Some(question.expected_result),
        answer: None,
    };
    match outcome {
        Ok(outcome) => {
            let judged = score::judge(
                &outcome,
                question.expected_result,
                &question.must_contain,
                &question.must_not_contain,
            );
            result.passed = judged.passed;
            result.status = judged.shape.status;
            result.is_error = judged.shape.is_error;
            result.returned_bytes = outcome.bytes;
            result.returned_tokens = judged.returned_tokens;
            result.evidence = judged.evidence;
            result.latency_ms = outcome.latency.as_secs_f64() * 1000.0;
            // The structured answer when the result carried one, else its text.
            result.answer = outcome.structured.or(Some(Value::String(outcome.text)));
        }
        Err(error) => result.error = Some(error.to_string()),
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("15").unwrap(), Duration::from_secs(15));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5h").is_err());
    }

    #[test]
    fn task_mode_asks_minimal_context_with_the_question() {
        let question: Question = serde_json::from_value(serde_json::json!({
            "id": "Q", "repo": "r", "category": "callers", "expected_result": "found",
            "question": "Who calls f?"
        }))
        .unwrap();
        assert!(ask(&question, Mode::Call).is_none());
        let (tool, arguments) = ask(&question, Mode::Task).unwrap();
        assert_eq!(tool, "minimal_context");
        assert_eq!(arguments["task"], "Who calls f?");
        assert_eq!(arguments["repository"], "r");
    }
}
