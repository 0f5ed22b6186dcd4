//! Load mode: N concurrent MCP clients (one session each) replay the workload's calls for
//! a fixed time; latency per tool from the clients, per service from the services' own
//! `rpc.server.duration` histograms.
//!
//! Open-loop mode ([`open_loop`]): calls arrive at a fixed rate whatever the answers do
//! (a closed loop slows its own arrivals when the server slows, and so hides queueing);
//! latency is measured from each call's scheduled time, so a late start counts against
//! the server. Each rate runs in turn; the *knee* is the highest rate whose p95 stays
//! under [`KNEE_P95_MS`] with nothing failed, timed out or dropped.
//!
//! Both modes also report the CPU time a call costs ([`CpuClock`]): the process's CPU
//! time over the phase divided by the calls answered. Every service and the load clients
//! run in this one process, so it is the whole stack's cost of a call (clients
//! included), and unlike calls/s at saturation it does not move with queueing. They also
//! report the host's steal time over the phase (Linux `/proc/stat`): on a shared VM the
//! same binary ran at half the calls/s while its host took 4-8% steal
//! (docs/BENCHMARKS.md), so a run with steal is not comparable with one without.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use codectx_telemetry::RpcLatency;
use serde::Serialize;
use serde_json::{Map, Value};

use super::client::{CallError, McpClient};
use super::score::percentile;

/// The process's CPU time (every thread, user and system) and the host's CPU counters
/// since a start.
pub struct CpuClock {
    process: Duration,
    host: Option<HostTicks>,
}

impl CpuClock {
    pub fn start() -> Self {
        CpuClock {
            process: process_cpu(),
            host: HostTicks::read(),
        }
    }

    /// CPU milliseconds per call since the start; None without calls.
    pub fn per_call_ms(&self, calls: u64) -> Option<f64> {
        (calls > 0).then(|| {
            process_cpu().saturating_sub(self.process).as_secs_f64() * 1000.0 / calls as f64
        })
    }

    /// The share of the host's CPU time since the start that its hypervisor gave to
    /// other guests (steal), in percent; None where `/proc/stat` is not readable.
    pub fn host_steal_percent(&self) -> Option<f64> {
        self.host?.steal_percent_until(HostTicks::read()?)
    }
}

/// The first line of `/proc/stat`: every CPU's time in ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq)]
struct HostTicks {
    steal: u64,
    total: u64,
}

impl HostTicks {
    fn read() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse(stat.lines().next()?)
    }

    /// `cpu user nice system idle iowait irq softirq steal [guest guest_nice]`; guest time
    /// is already inside user and nice, so the total is the first eight.
    fn parse(line: &str) -> Option<Self> {
        let mut fields = line.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        let values: Vec<u64> = fields
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        (values.len() == 8).then(|| HostTicks {
            steal: values[7],
            total: values.iter().sum(),
        })
    }

    fn steal_percent_until(self, later: HostTicks) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let steal = later.steal.checked_sub(self.steal)?;
        (total > 0).then(|| steal as f64 * 100.0 / total as f64)
    }
}

fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub clients: usize,
    /// How the services called each other ([`crate::stack::PeerTransport::describe`]).
    pub peers: &'static str,
    pub duration_seconds: f64,
    pub calls: u64,
    pub calls_per_second: f64,
    /// The whole process's CPU time per call answered ([`CpuClock`]).
    pub cpu_ms_per_call: Option<f64>,
    /// The host's steal time over the phase, percent ([`CpuClock::host_steal_percent`]).
    pub host_steal_percent: Option<f64>,
    pub errors: u64,
    pub timeouts: u64,
    pub tools: Vec<ToolLatency>,
    pub services: Vec<ServiceLatency>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolLatency {
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServiceLatency {
    pub service: String,
    pub method: String,
    pub calls: u64,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[derive(Default)]
struct Samples {
    latencies_ms: Vec<f64>,
    errors: u64,
    timeouts: u64,
}

impl Samples {
    /// The tool's row: calls (answered and timed out), errors and percentiles.
    fn latency(&mut self, tool: String) -> ToolLatency {
        ToolLatency {
            tool,
            calls: self.latencies_ms.len() as u64 + self.timeouts,
            errors: self.errors,
            timeouts: self.timeouts,
            p50_ms: percentile(&mut self.latencies_ms, 0.50),
            p95_ms: percentile(&mut self.latencies_ms, 0.95),
            p99_ms: percentile(&mut self.latencies_ms, 0.99),
        }
    }
}

/// Replays `calls` from `clients` concurrent sessions for `duration`. Tool results with
/// isError and transport failures count as errors (not_found is an answer, not an
/// error); calls without an answer within the client timeout count as timeouts.
pub async fn run(
    url: &str,
    api_key: &str,
    calls: &[(String, Map<String, Value>)],
    clients: usize,
    duration: Duration,
) -> anyhow::Result<LoadReport> {
    anyhow::ensure!(!calls.is_empty(), "the workload has no calls to replay");
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(McpClient::connect(url, api_key).await?);
    }
    let cpu = CpuClock::start();
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for (index, session) in sessions.into_iter().enumerate() {
        let calls = calls.to_vec();
        // Clients start at different questions so the mix is spread from the first second.
        let offset = index * calls.len() / clients.max(1);
        tasks.push(tokio::spawn(async move {
            let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
            let mut next = offset;
            while Instant::now() < deadline {
                let (tool, arguments) = &calls[next % calls.len()];
                next += 1;
                let entry = samples.entry(tool.clone()).or_default();
                match session.call(tool, arguments).await {
                    Ok(outcome) => {
                        entry
                            .latencies_ms
                            .push(outcome.latency.as_secs_f64() * 1000.0);
                        if outcome.is_error {
                            entry.errors += 1;
                        }
                    }
                    Err(CallError::Timeout) => entry.timeouts += 1,
                    Err(CallError::Transport(_)) => entry.errors += 1,
                }
            }
            session.close().await;
            samples
        }));
    }
    let mut merged: BTreeMap<String, Samples> = BTreeMap::new();
    for task in tasks {
        for (tool, samples) in task.await? {
            let entry = merged.entry(tool).or_default();
            entry.latencies_ms.extend(samples.latencies_ms);
            entry.errors += samples.errors;
            entry.timeouts += samples.timeouts;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut report = LoadReport {
        clients,
        peers: "",
        duration_seconds: elapsed,
        calls: 0,
        calls_per_second: 0.0,
        cpu_ms_per_call: None,
        host_steal_percent: None,
        errors: 0,
        timeouts: 0,
        tools: Vec::new(),
        services: Vec::new(),
    };
    for (tool, mut samples) in merged {
        let calls = samples.latencies_ms.len() as u64 + samples.timeouts;
        report.calls += calls;
        report.errors += samples.errors;
        report.timeouts += samples.timeouts;
        report.tools.push(samples.latency(tool));
    }
    report.calls_per_second = report.calls as f64 / elapsed.max(f64::EPSILON);
    let answered = report.calls - report.timeouts;
    report.cpu_ms_per_call = cpu.per_call_ms(answered);
    report.host_steal_percent = cpu.host_steal_percent();
    Ok(report)
}

/// The p95 a rate must stay under to count towards the knee (the serving goal, ms).
pub const KNEE_P95_MS: f64 = 25.0;

/// Calls in flight beyond which an arrival is dropped (and counted) instead of sent: the
/// server is past saturation, and queueing more only measures the client.
pub const MAX_IN_FLIGHT: usize = 2_048;

/// One offered rate of the open loop.
#[derive(Debug, Clone, Serialize)]
pub struct RateReport {
    pub offered_per_second: f64,
    pub duration_seconds: f64,
    pub sent: u64,
    pub achieved_per_second: f64,
    /// The whole process's CPU time per call answered ([`CpuClock`]).
    pub cpu_ms_per_call: Option<f64>,
    /// The host's steal time over the rate, percent ([`CpuClock::host_steal_percent`]).
    pub host_steal_percent: Option<f64>,
    pub errors: u64,
    pub timeouts: u64,
    pub dropped: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub tools: Vec<ToolLatency>,
}

impl RateReport {
    /// Whether the rate is served within the goal, with nothing lost.
    pub fn within_goal(&self) -> bool {
        self.errors == 0
            && self.timeouts == 0
            && self.dropped == 0
            && self.p95_ms.is_some_and(|p95| p95 < KNEE_P95_MS)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenLoopReport {
    /// MCP sessions the arrivals are spread over.
    pub sessions: usize,
    /// How the services called each other ([`crate::stack::PeerTransport::describe`]).
    pub peers: &'static str,
    pub p95_limit_ms: f64,
    pub rates: Vec<RateReport>,
    /// The highest offered rate within the goal; None when no rate was.
    pub knee_per_second: Option<f64>,
}

/// Offers each of `rates` (calls/s) for `duration`, spread over `sessions` MCP sessions.
pub async fn open_loop(
    url: &str,
    api_key: &str,
    calls: &[(String, Map<String, Value>)],
    rates: &[f64],
    duration: Duration,
    sessions: usize,
) -> anyhow::Result<OpenLoopReport> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    anyhow::ensure!(!calls.is_empty(), "the workload has no calls to replay");
    anyhow::ensure!(
        rates.iter().all(|r| r.is_finite() && *r > 0.0),
        "--rates must be positive numbers of calls per second"
    );
    let mut clients = Vec::with_capacity(sessions);
    for _ in 0..sessions.max(1) {
        clients.push(Arc::new(McpClient::connect(url, api_key).await?));
    }
    let calls: Arc<Vec<(String, Map<String, Value>)>> = Arc::new(calls.to_vec());
    let mut reports = Vec::new();
    for &rate in rates {
        let in_flight = Arc::new(AtomicUsize::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        let cpu = CpuClock::start();
        let started = tokio::time::Instant::now();
        let interval = Duration::from_secs_f64(1.0 / rate);
        let mut dropped = 0u64;
        let mut sent = 0u64;
        let mut finished = Vec::new();
        loop {
            let at = started + interval.mul_f64(sent as f64 + dropped as f64);
            if at >= started + duration {
                break;
            }
            tokio::time::sleep_until(at).await;
            let index = (sent + dropped) as usize;
            if in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
                dropped += 1;
                continue;
            }
            sent += 1;
            in_flight.fetch_add(1, Ordering::Relaxed);
            let (client, calls, in_flight) = (
                clients[index % clients.len()].clone(),
                calls.clone(),
                in_flight.clone(),
            );
            tasks.spawn(async move {
                let (tool, arguments) = &calls[index % calls.len()];
                let outcome = client.call(tool, arguments).await;
                in_flight.fetch_sub(1, Ordering::Relaxed);
                // From the scheduled time: a call that started late waited for the server.
                let latency_ms = at.elapsed().as_secs_f64() * 1000.0;
                (tool.clone(), latency_ms, outcome)
            });
            // Reap finished calls as they come, so the set stays small.
            while let Some(done) = tasks.try_join_next() {
                finished.push(done?);
            }
        }
        let mut by_tool: BTreeMap<String, Samples> = BTreeMap::new();
        while let Some(done) = tasks.join_next().await {
            finished.push(done?);
        }
        let elapsed = started.elapsed().as_secs_f64();
        let finished_calls = finished.iter().filter(|(_, _, o)| o.is_ok()).count() as u64;
        let cpu_ms_per_call = cpu.per_call_ms(finished_calls);
        let host_steal_percent = cpu.host_steal_percent();
        let mut all = Vec::new();
        let (mut errors, mut timeouts) = (0, 0);
        for (tool, latency_ms, outcome) in finished {
            let entry = by_tool.entry(tool).or_default();
            match outcome {
                Ok(outcome) => {
                    entry.latencies_ms.push(latency_ms);
                    all.push(latency_ms);
                    if outcome.is_error {
                        entry.errors += 1;
                        errors += 1;
                    }
                }
                Err(CallError::Timeout) => {
                    entry.timeouts += 1;
                    timeouts += 1;
                }
                Err(CallError::Transport(_)) => {
                    entry.errors += 1;
                    errors += 1;
                }
            }
        }
        let tools = by_tool
            .into_iter()
            .map(|(tool, mut samples)| samples.latency(tool))
            .collect();
        let report = RateReport {
            offered_per_second: rate,
            duration_seconds: elapsed,
            sent,
            achieved_per_second: all.len() as f64 / elapsed.max(f64::EPSILON),
            cpu_ms_per_call,
            host_steal_percent,
            errors,
            timeouts,
            dropped,
            p50_ms: percentile(&mut all, 0.50),
            p95_ms: percentile(&mut all, 0.95),
            p99_ms: percentile(&mut all, 0.99),
            tools,
        };
        eprintln!(
            "open loop {rate:.0}/s: {} sent, p95 {} ms, CPU {} ms per call, host steal {}%, {} errors, {} timeouts, {} dropped",
            report.sent,
            report.p95_ms.map_or("n/a".into(), |p| format!("{p:.1}")),
            report
                .cpu_ms_per_call
                .map_or("n/a".into(), |c| format!("{c:.2}")),
            report
                .host_steal_percent
                .map_or("n/a".into(), |c| format!("{c:.1}")),
            report.errors,
            report.timeouts,
            report.dropped
        );
        reports.push(report);
        // Let queues drain before the next rate.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            client.close().await;
        }
    }
    Ok(OpenLoopReport {
        sessions,
        peers: "",
        p95_limit_ms: KNEE_P95_MS,
        knee_per_second: knee(&reports),
        rates: reports,
    })
}

/// The highest offered rate within the goal.
pub fn knee(rates: &[RateReport]) -> Option<f64> {
    rates
        .iter()
        .filter(|r| r.within_goal())
        .map(|r| r.offered_per_second)
        .fold(None, |best: Option<f64>, rate| {
            Some(best.map_or(rate, |b| b.max(rate)))
        })
}

/// Per (service, method): what the services recorded between two snapshots.
pub fn service_latency(before: &[RpcLatency], after: &[RpcLatency]) -> Vec<ServiceLatency> {
    let mut out = Vec::new();
    for now in after {
        let earlier = before
            .iter()
            .find(|b| b.service == now.service && b.method == now.method);
        let mut delta = now.clone();
        if let Some(earlier) = earlier {
            delta.count = now.count.saturating_sub(earlier.count);
            delta.sum_ms = now.sum_ms - earlier.sum_ms;
            for (bucket, old) in delta.bucket_counts.iter_mut().zip(&earlier.bucket_counts) {
                *bucket = bucket.saturating_sub(*old);
            }
        }
        if delta.count == 0 || now.service.starts_with("grpc.") {
            continue;
        }
        out.push(ServiceLatency {
            service: short_service(&delta.service),
            method: delta.method.clone(),
            calls: delta.count,
            mean_ms: Some(delta.sum_ms / delta.count as f64),
            p50_ms: delta.quantile_ms(0.50),
            p95_ms: delta.quantile_ms(0.95),
            p99_ms: delta.quantile_ms(0.99),
        });
    }
    out.sort_by(|a, b| (&a.service, &a.method).cmp(&(&b.service, &b.method)));
    out
}

/// `codectx.graph.v1.GraphHydratorService` -> `GraphHydratorService`.
fn short_service(full: &str) -> String {
    full.rsplit('.').next().unwrap_or(full).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(count: u64, buckets: Vec<u64>) -> RpcLatency {
        RpcLatency {
            service: "codectx.graph.v1.GraphHydratorService".into(),
            method: "GetSymbolCards".into(),
            count,
            sum_ms: count as f64,
            bounds: vec![1.0, 2.0],
            bucket_counts: buckets,
        }
    }

    fn rate(offered: f64, p95: f64, dropped: u64) -> RateReport {
        RateReport {
            offered_per_second: offered,
            duration_seconds: 1.0,
            sent: 10,
            achieved_per_second: offered,
            cpu_ms_per_call: None,
            host_steal_percent: None,
            errors: 0,
            timeouts: 0,
            dropped,
            p50_ms: Some(p95 / 2.0),
            p95_ms: Some(p95),
            p99_ms: Some(p95),
            tools: Vec::new(),
        }
    }

    #[test]
    fn the_knee_is_the_highest_rate_within_the_goal_with_nothing_lost() {
        let rates = [
            rate(100.0, 8.0, 0),
            rate(300.0, 19.0, 0),
            rate(600.0, 31.0, 0),
            rate(900.0, 12.0, 40),
        ];
        assert_eq!(knee(&rates), Some(300.0));
        assert_eq!(knee(&rates[2..]), None);
    }

    #[test]
    fn cpu_per_call_counts_the_work_done_since_the_start() {
        let clock = CpuClock::start();
        assert_eq!(clock.per_call_ms(0), None);
        // Spin until the process clock has moved by at least 20 ms of CPU.
        let mut x = 0u64;
        while clock.per_call_ms(1).unwrap_or(0.0) < 20.0 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let per_call = clock.per_call_ms(4).expect("calls were made");
        assert!((5.0..1_000.0).contains(&per_call), "{per_call} ms");
    }

    #[test]
    fn host_steal_is_the_steal_share_of_all_cpu_time_between_two_reads() {
        let before =
            HostTicks::parse("cpu  6775732 196735 918273 4501970 48682 0 35096 139761 0 0")
                .expect("a /proc/stat cpu line");
        assert_eq!(before.steal, 139_761);
        // 1,000 more ticks, 60 of them stolen.
        let after =
            HostTicks::parse("cpu  6776332 196735 918473 4502100 48682 0 35106 139821 50 0")
                .expect("a /proc/stat cpu line");
        assert_eq!(before.steal_percent_until(after), Some(6.0));
        assert_eq!(before.steal_percent_until(before), None);
        assert_eq!(HostTicks::parse("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(HostTicks::parse("cpu 1 2 3"), None);
        assert_eq!(HostTicks::parse("cpu 1 2 x 4 5 6 7 8"), None);
    }

    #[test]
    fn service_latency_is_the_difference_between_snapshots() {
        let before = [latency(10, vec![10, 0, 0])];
        let after = [latency(30, vec![10, 20, 0])];
        let rows = service_latency(&before, &after);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].service, "GraphHydratorService");
        assert_eq!(rows[0].calls, 20);
        // Every new sample sits in the (1, 2] bucket.
        assert!(rows[0].p50_ms.unwrap() > 1.0 && rows[0].p50_ms.unwrap() <= 2.0);
        assert!(service_latency(&after, &after).is_empty());
    }
}
