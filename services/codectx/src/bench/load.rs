//! Load mode: N concurrent MCP clients (one session each) replay the workload's calls for
//! a fixed time; latency per tool from the clients, per service from the services' own
//! `rpc.server.duration` histograms.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use codectx_telemetry::RpcLatency;
use serde::Serialize;
use serde_json::{Map, Value};

use super::client::{CallError, McpClient};
use super::score::percentile;

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub clients: usize,
    pub duration_seconds: f64,
    pub calls: u64,
    pub calls_per_second: f64,
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
        duration_seconds: elapsed,
        calls: 0,
        calls_per_second: 0.0,
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
        report.tools.push(ToolLatency {
            tool,
            calls,
            errors: samples.errors,
            timeouts: samples.timeouts,
            p50_ms: percentile(&mut samples.latencies_ms, 0.50),
            p95_ms: percentile(&mut samples.latencies_ms, 0.95),
            p99_ms: percentile(&mut samples.latencies_ms, 0.99),
        });
    }
    report.calls_per_second = report.calls as f64 / elapsed.max(f64::EPSILON);
    Ok(report)
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
