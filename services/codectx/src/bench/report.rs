//! The benchmark report: JSON (per question and aggregate, with hardware, commit and
//! workload) and the Markdown tables published in docs/BENCHMARKS.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::load::{LoadReport, OpenLoopReport};
use super::score::{Aggregate, aggregate};
use super::session::{self, SessionAggregate, SessionResult};
use super::workload::{ESTIMATOR, Workload};
use super::{Mode, QuestionResult};

#[derive(Debug, Clone, Serialize)]
pub struct IndexedRepo {
    pub key: String,
    pub path: String,
    pub commit: Option<String>,
    pub index_seconds: f64,
    pub summary: String,
    /// The fingerprint of the repository policy (`.codectx.yaml`) the graph was indexed
    /// under (the empty policy's when the checkout has none): results are comparable only
    /// under the same one.
    pub policy_fingerprint: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hardware {
    pub cpu: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub os: String,
    /// The vector scan's dot-product kernel on this CPU (`avx2` or `portable`, ADR 0017).
    pub vector_kernel: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArmAggregate {
    pub arm: String,
    pub mode: Mode,
    #[serde(flatten)]
    pub aggregate: Aggregate,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub workload: String,
    pub workload_file: String,
    pub estimator: String,
    pub command: String,
    pub codectx_commit: Option<String>,
    pub started_at: String,
    pub hardware: Hardware,
    pub repos: Vec<IndexedRepo>,
    pub aggregates: Vec<ArmAggregate>,
    pub questions: Vec<QuestionResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_aggregates: Vec<SessionAggregate>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionResult>,
    pub load: Option<LoadReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopReport>,
    pub warnings: Vec<String>,
}

pub struct Inputs<'a> {
    pub workload: &'a Workload,
    pub workload_path: &'a Path,
    /// Arm labels (`hybrid`, `hybrid@minimal`, ...), in report order.
    pub arms: &'a [String],
    pub modes: &'a [Mode],
    pub indexed: Vec<IndexedRepo>,
    pub results: Vec<QuestionResult>,
    pub sessions: Vec<SessionResult>,
    pub load: Option<LoadReport>,
    pub open_loop: Option<OpenLoopReport>,
    pub warnings: Vec<String>,
    pub started_at: std::time::SystemTime,
}

impl Report {
    pub fn build(inputs: Inputs<'_>) -> Report {
        let mut groups: Vec<(String, Mode)> = vec![("raw".into(), Mode::Files)];
        for arm in inputs.arms {
            for mode in inputs.modes {
                groups.push((arm.clone(), *mode));
            }
        }
        let aggregates = groups
            .into_iter()
            .map(|(arm, mode)| {
                let scored: Vec<_> = inputs
                    .results
                    .iter()
                    .filter(|r| r.arm == arm && r.mode == mode)
                    .map(QuestionResult::scored)
                    .collect();
                ArmAggregate {
                    arm,
                    mode,
                    aggregate: aggregate(&scored),
                }
            })
            .collect();
        Report {
            workload: inputs.workload.name.clone(),
            workload_file: inputs.workload_path.display().to_string(),
            estimator: ESTIMATOR.into(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            codectx_commit: git_commit(Path::new(env!("CARGO_MANIFEST_DIR"))),
            started_at: utc(inputs.started_at),
            hardware: hardware(),
            repos: inputs.indexed,
            aggregates,
            questions: inputs.results,
            session_aggregates: if inputs.sessions.is_empty() {
                Vec::new()
            } else {
                let mut arms: Vec<&str> = inputs.sessions.iter().map(|s| s.arm.as_str()).collect();
                arms.dedup();
                arms.iter()
                    .map(|arm| session::aggregate(arm, &inputs.sessions))
                    .collect()
            },
            sessions: inputs.sessions,
            load: inputs.load,
            open_loop: inputs.open_loop,
            warnings: inputs.warnings,
        }
    }

    /// Whether the hybrid arm's call mode reached `percent` evidence coverage and pass
    /// rate (task mode when no question has a call).
    pub fn meets(&self, percent: f64) -> bool {
        let gate = self
            .aggregates
            .iter()
            .filter(|a| a.arm == "hybrid" && a.aggregate.questions > 0)
            .min_by_key(|a| a.mode);
        let Some(gate) = gate else {
            eprintln!("--require-coverage: the hybrid arm did not run");
            return false;
        };
        let coverage = gate.aggregate.evidence_coverage_pct.unwrap_or(100.0);
        let pass_rate = 100.0 * gate.aggregate.passed as f64 / gate.aggregate.questions as f64;
        let ok = coverage >= percent && pass_rate >= percent;
        if !ok {
            eprintln!(
                "--require-coverage {percent}%: hybrid {} mode has {coverage:.1}% evidence coverage and a {pass_rate:.1}% pass rate",
                gate.mode.name()
            );
        }
        ok
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "### Workload `{}`\n", self.workload);
        let _ = writeln!(
            out,
            "Run {} at codectx {} on {} ({} cores, {:.0} GiB, {}, vector kernel {}); estimator {}.\n",
            self.started_at,
            self.codectx_commit.as_deref().unwrap_or("(unknown commit)"),
            self.hardware.cpu,
            self.hardware.cores,
            self.hardware.memory_gib,
            self.hardware.os,
            self.hardware.vector_kernel,
            self.estimator
        );
        let _ = writeln!(out, "Command: `{}`\n", self.command);
        for repo in &self.repos {
            let _ = writeln!(
                out,
                "- `{}` = {}{}: {} ({:.1} s; policy fingerprint {})",
                repo.key,
                repo.path,
                repo.commit
                    .as_ref()
                    .map(|c| format!(" @ {c}"))
                    .unwrap_or_default(),
                repo.summary,
                repo.index_seconds,
                &repo.policy_fingerprint[..repo.policy_fingerprint.len().min(12)]
            );
        }
        out.push('\n');
        out.push_str(
            "| arm | mode | questions | passed | baseline tokens | returned tokens | reduction | effective reduction | median reduction | evidence coverage | round trips | p50 ms | p95 ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for row in &self.aggregates {
            let a = &row.aggregate;
            if a.questions == 0 {
                continue;
            }
            let latency = |v: Option<f64>| {
                if row.mode == Mode::Files {
                    "-".to_owned()
                } else {
                    number(v, 1)
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.arm,
                row.mode.name(),
                a.questions,
                a.passed,
                a.baseline_tokens,
                a.returned_tokens,
                percent(a.reduction_pct),
                percent(a.effective_reduction_pct),
                percent(a.median_reduction_pct),
                percent(a.evidence_coverage_pct),
                a.round_trips,
                latency(a.latency_p50_ms),
                latency(a.latency_p95_ms),
            );
        }
        out.push('\n');
        if !self.questions.is_empty() {
            self.per_question(&mut out);
        }
        if !self.sessions.is_empty() {
            self.session_tables(&mut out);
        }
        if let Some(load) = &self.load {
            Self::load_tables(load, &mut out);
        }
        if let Some(open_loop) = &self.open_loop {
            Self::open_loop_table(open_loop, &mut out);
        }
        if !self.warnings.is_empty() {
            out.push_str("Warnings:\n");
            for warning in &self.warnings {
                let _ = writeln!(out, "- {warning}");
            }
            out.push('\n');
        }
        out
    }

    fn per_question(&self, out: &mut String) {
        // One row per question: the baseline, then tokens/coverage/pass per arm and mode.
        let mut columns: Vec<(String, Mode)> = Vec::new();
        for result in &self.questions {
            let key = (result.arm.clone(), result.mode);
            if result.arm != "raw" && !columns.contains(&key) {
                columns.push(key);
            }
        }
        let mut rows: BTreeMap<&str, Vec<&QuestionResult>> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        for result in &self.questions {
            if !rows.contains_key(result.id.as_str()) {
                order.push(&result.id);
            }
            rows.entry(&result.id).or_default().push(result);
        }
        let _ = write!(out, "| question | category | baseline |");
        for (arm, mode) in &columns {
            let _ = write!(out, " {arm} {} |", mode.name());
        }
        out.push_str("\n|---|---|---:|");
        for _ in &columns {
            out.push_str("---|");
        }
        out.push('\n');
        for id in order {
            let results = &rows[id];
            let first = results[0];
            let _ = write!(
                out,
                "| {id} | {} | {} |",
                serde_json::to_value(first.category)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                first.baseline_tokens
            );
            for (arm, mode) in &columns {
                match results.iter().find(|r| &r.arm == arm && r.mode == *mode) {
                    Some(r) => {
                        let _ = write!(
                            out,
                            " {} tok, {}/{}{} |",
                            r.returned_tokens,
                            r.evidence.found,
                            r.evidence.required,
                            if r.passed { "" } else { " FAIL" }
                        );
                    }
                    None => out.push_str(" - |"),
                }
            }
            out.push('\n');
        }
        out.push_str(
            "\nCells: returned tokens, evidence found/required, FAIL when the answer did not pass.\n\n",
        );
    }

    fn session_tables(&self, out: &mut String) {
        out.push_str("Sessions (bench/SESSIONS.md): the calls of each session in one MCP session, and each call in a fresh one (isolated).\n\n| arm | sessions | passed | calls | baseline tokens | returned tokens | reduction | isolated tokens | saved by the session | evidence coverage |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for a in &self.session_aggregates {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                a.arm,
                a.sessions,
                a.passed,
                a.calls,
                a.baseline_tokens,
                a.returned_tokens,
                percent(a.reduction_pct),
                a.isolated_tokens,
                percent(a.session_saving_pct),
                percent(a.evidence_coverage_pct),
            );
        }
        out.push_str("\n| session | repo | calls (repeats) | baseline | returned | isolated | evidence | failed calls |\n|---|---|---:|---:|---:|---:|---:|---|\n");
        for s in &self.sessions {
            let failed: Vec<String> = s
                .calls
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.passed)
                .map(|(i, c)| {
                    format!(
                        "{} {} (missing {})",
                        i + 1,
                        c.tool,
                        c.evidence.missing.join(", ")
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} ({}) | {} | {} | {} | {}/{} | {} |",
                s.id,
                s.repo,
                s.calls.len(),
                s.calls.iter().filter(|c| c.repeat).count(),
                s.baseline_tokens,
                s.returned_tokens,
                s.isolated_tokens,
                s.evidence_found,
                s.evidence_required,
                if failed.is_empty() {
                    "-".to_owned()
                } else {
                    failed.join("; ")
                }
            );
        }
        out.push('\n');
    }

    fn open_loop_table(open_loop: &OpenLoopReport, out: &mut String) {
        let _ = writeln!(
            out,
            "Open loop (hybrid, {} MCP sessions, services called {}; latency from each call's scheduled time): knee {} (the highest offered rate with p95 under {:.0} ms and nothing failed, timed out or dropped).\n",
            open_loop.sessions,
            open_loop.peers,
            open_loop
                .knee_per_second
                .map_or_else(|| "none".to_owned(), |k| format!("{k:.0} calls/s")),
            open_loop.p95_limit_ms
        );
        out.push_str("| offered calls/s | achieved calls/s | CPU ms per call | host steal % | sent | errors | timeouts | dropped | p50 ms | p95 ms | p99 ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for rate in &open_loop.rates {
            let _ = writeln!(
                out,
                "| {:.0} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                rate.offered_per_second,
                rate.achieved_per_second,
                number(rate.cpu_ms_per_call, 2),
                number(rate.host_steal_percent, 1),
                rate.sent,
                rate.errors,
                rate.timeouts,
                rate.dropped,
                number(rate.p50_ms, 1),
                number(rate.p95_ms, 1),
                number(rate.p99_ms, 1)
            );
        }
        out.push('\n');
    }

    fn load_tables(load: &LoadReport, out: &mut String) {
        let _ = writeln!(
            out,
            "Load: {} concurrent MCP clients for {:.0} s (hybrid, services called {}): {} calls, {:.1} calls/s, {} ms of CPU per call (the whole stack and its load clients), host steal {}%, {} errors, {} timeouts.\n",
            load.clients,
            load.duration_seconds,
            load.peers,
            load.calls,
            load.calls_per_second,
            number(load.cpu_ms_per_call, 2),
            number(load.host_steal_percent, 1),
            load.errors,
            load.timeouts
        );
        out.push_str("| tool | calls | errors | timeouts | p50 ms | p95 ms | p99 ms |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for tool in &load.tools {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                tool.tool,
                tool.calls,
                tool.errors,
                tool.timeouts,
                number(tool.p50_ms, 1),
                number(tool.p95_ms, 1),
                number(tool.p99_ms, 1)
            );
        }
        out.push_str("\nPer service, from each service's own `rpc.server.duration` histogram (percentiles interpolated inside buckets):\n\n| service | method | calls | mean ms | p50 ms | p95 ms | p99 ms |\n|---|---|---:|---:|---:|---:|---:|\n");
        for row in &load.services {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.service,
                row.method,
                row.calls,
                number(row.mean_ms, 2),
                number(row.p50_ms, 2),
                number(row.p95_ms, 2),
                number(row.p99_ms, 2)
            );
        }
        out.push('\n');
    }
}

fn number(value: Option<f64>, places: usize) -> String {
    value.map_or_else(|| "n/a".into(), |v| format!("{v:.places$}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".into(), |v| format!("{v:.1}%"))
}

/// The commit of a checkout that is itself a git work tree's top level (a directory
/// inside some other repository, such as an installed standard library, has none).
pub fn checkout_commit(path: &Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    let top = std::path::PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let same = top.canonicalize().ok()? == path.canonicalize().ok()?;
    if same { git_commit(path) } else { None }
}

/// `git rev-parse --short HEAD` of a checkout (with `-dirty` when it has changes).
pub fn git_commit(path: &Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let commit = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let dirty = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

fn hardware() -> Hardware {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, name)| name.trim().to_owned())
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let memory_kib: f64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    Hardware {
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_gib: memory_kib / 1024.0 / 1024.0,
        os: format!("{} {}", std::env::consts::OS, release.trim()),
        vector_kernel: codectx_kernels::dot_kernel(),
    }
}

/// RFC 3339 UTC time of `at`, to the second.
fn utc(at: std::time::SystemTime) -> String {
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        let at = |s: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s);
        assert_eq!(utc(at(0)), "1970-01-01T00:00:00Z");
        assert_eq!(utc(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(utc(at(1_795_910_400 + 3_661)), "2026-11-29T01:01:01Z");
    }
}
