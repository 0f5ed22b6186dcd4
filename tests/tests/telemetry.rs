//! OpenTelemetry across every hop, seen by a real OTLP receiver.
//!
//! The seven services run as their own processes (the binaries the images ship), each
//! exporting OTLP/gRPC to a receiver built from the official opentelemetry-proto
//! messages and grpcio (deploy/local/otlp-receiver.sh). One `minimal_context` call from
//! the official MCP Python SDK must be one trace: spans from all seven services, one root
//! (the gateway's tool call), every other span's parent present in the trace, every
//! server span a child of a client span of another service. Metric labels never carry a
//! tenant, subject, repository or key.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use codectx::stack::ServiceKind;
use serde_json::Value;

struct Process {
    name: &'static str,
    child: Child,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run the tests with `make test`"))
}

/// Starts the OTLP receiver; returns it and the port it listens on.
fn start_receiver(out: &Path) -> (Process, u16) {
    let command = Command::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/local/otlp-receiver.sh"),
    )
    .output()
    .expect("otlp-receiver.sh runs");
    assert!(
        command.status.success(),
        "{}",
        String::from_utf8_lossy(&command.stderr)
    );
    let line = String::from_utf8(command.stdout).unwrap();
    let mut parts = line.split_whitespace();
    let mut child = Command::new(parts.next().unwrap())
        .args(parts)
        .arg(out)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the receiver starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port = first
        .strip_prefix("LISTENING ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("the receiver said {first:?}"));
    (
        Process {
            name: "otlp-receiver",
            child,
        },
        port,
    )
}

fn read_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tool_call_is_one_trace_across_all_seven_services() {
    let work = tempfile::tempdir().unwrap();
    let exported = work.path().join("otlp.jsonl");
    let (_receiver, otlp_port) = start_receiver(&exported);

    // Index a repository and create the development identity, as `codectx up` does.
    let data = work.path().join("data");
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/go");
    let indexed = Command::new(codectx_tests::codectx_binary())
        .args(["index", "--quiet", "--name", "shop", "--data"])
        .arg(&data)
        .arg(&fixture)
        .output()
        .unwrap();
    assert!(
        indexed.status.success(),
        "{}",
        String::from_utf8_lossy(&indexed.stderr)
    );
    let authz_dir = data.join("authz");
    let (dev, repositories) = {
        let authz = codectx_authz::build(&codectx_authz::Config {
            data_dir: authz_dir.display().to_string(),
            ..Default::default()
        })
        .unwrap();
        let store = authz.authority.store();
        let dev = codectx_authz::bootstrap_dev(store, &authz_dir, None).unwrap();
        let entries = codectx_authz::grant_indexed_repositories(store, &dev.subject.id).unwrap();
        assert_eq!(entries.len(), 1, "the indexed repository is granted");
        let ids: Vec<String> = entries
            .into_iter()
            .flat_map(|r| [r.id, r.graph_id])
            .collect();
        (dev, ids)
    };

    // The seven services, each its own process, peers at static loopback addresses.
    let port: BTreeMap<ServiceKind, u16> =
        ServiceKind::ALL.iter().map(|k| (*k, free_port())).collect();
    let http_port = free_port();
    let address = |kind: ServiceKind| format!("http://127.0.0.1:{}", port[&kind]);
    let peers = |kind: ServiceKind| format!("[\"{}\"]", address(kind));
    let mut processes = Vec::new();
    for kind in ServiceKind::ALL {
        let name = kind.name();
        let prefix = format!("CODECTX_{}__", name.to_uppercase().replace('-', "_"));
        let mut command = Command::new(codectx_tests::workspace_binary(name));
        let mut set = |key: &str, value: String| {
            command.env(format!("{prefix}{key}"), value);
        };
        set("SERVER__LISTEN", format!("127.0.0.1:{}", port[&kind]));
        set("SERVER__DRAIN_SECONDS", "0".into());
        set(
            "TELEMETRY__OTLP_ENDPOINT",
            format!("http://127.0.0.1:{otlp_port}"),
        );
        set("TELEMETRY__LOG_FILTER", "info".into());
        if kind != ServiceKind::Authz {
            set("TENANT__AUTHZ_ENDPOINT", address(ServiceKind::Authz));
        }
        match kind {
            ServiceKind::Authz => set("DATA_DIR", authz_dir.display().to_string()),
            ServiceKind::LexicalRanker => {
                set(
                    "PEERS__GRAPH_HYDRATOR__ENDPOINTS",
                    peers(ServiceKind::GraphHydrator),
                );
            }
            ServiceKind::Embedding => set("MODEL__DIRECTORY", env("CODECTX_TEST_MODEL_DIR")),
            ServiceKind::VectorGateway => {
                set("VECTORS__BACKEND", "embedded".into());
                set(
                    "VECTORS__EMBEDDED_PATH",
                    data.join("vectors.db").display().to_string(),
                );
            }
            ServiceKind::GraphHydrator => {
                set("GRAPH__BACKEND", "sqlite".into());
                set(
                    "GRAPH__SQLITE_PATH",
                    data.join("graph.db").display().to_string(),
                );
            }
            ServiceKind::ContextAssembler => {
                for (key, peer) in [
                    ("LEXICAL_RANKER", ServiceKind::LexicalRanker),
                    ("EMBEDDING", ServiceKind::Embedding),
                    ("VECTOR_GATEWAY", ServiceKind::VectorGateway),
                    ("GRAPH_HYDRATOR", ServiceKind::GraphHydrator),
                ] {
                    set(&format!("PEERS__{key}__ENDPOINTS"), peers(peer));
                }
            }
            ServiceKind::Gateway => {
                set("HTTP__LISTEN", format!("127.0.0.1:{http_port}"));
                set("PEERS__AUTHZ__ENDPOINTS", peers(ServiceKind::Authz));
                set(
                    "PEERS__CONTEXT_ASSEMBLER__ENDPOINTS",
                    peers(ServiceKind::ContextAssembler),
                );
            }
        }
        // Metrics leave every second, and once more when the process stops.
        command
            .env("OTEL_METRIC_EXPORT_INTERVAL", "1000")
            .stdout(Stdio::null());
        processes.push(Process {
            name,
            child: command
                .spawn()
                .unwrap_or_else(|e| panic!("{name} starts: {e}")),
        });
        if kind == ServiceKind::Authz {
            // The others fetch their verification keys from authz when they start.
            assert!(
                serving(&address(kind), Duration::from_secs(30)).await,
                "authz serving"
            );
        }
    }
    for kind in ServiceKind::ALL {
        assert!(
            serving(&address(kind), Duration::from_secs(90)).await,
            "{} did not report SERVING within 90 s",
            kind.name()
        );
    }

    let output = Command::new(env("CODECTX_TEST_MCP_PYTHON"))
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("e2e/mcp_e2e.py"))
        .args([
            "call",
            "--url",
            &format!("http://127.0.0.1:{http_port}/mcp"),
        ])
        .args(["--key", &dev.api_key, "--tool", "minimal_context"])
        .args([
            "--arguments",
            r#"{"task": "how is an order's total computed and where is it tested?"}"#,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tools/call: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    // Stop every service gracefully (SIGTERM): each flushes its spans and metrics.
    for process in processes.iter_mut().rev() {
        let _ = Command::new("kill")
            .args(["-TERM", &process.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while process.child.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not stop",
                process.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let records = read_records(&exported);

    // One trace: the tool call's.
    let spans: Vec<&Value> = records.iter().filter(|r| r["signal"] == "span").collect();
    let root = spans
        .iter()
        .find(|s| s["name"] == "tools/call minimal_context")
        .unwrap_or_else(|| panic!("no tool call span among {} spans", spans.len()));
    let trace = root["trace_id"].as_str().unwrap();
    let in_trace: Vec<&&Value> = spans.iter().filter(|s| s["trace_id"] == trace).collect();
    let services: BTreeSet<&str> = in_trace
        .iter()
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    let expected: BTreeSet<&str> = ServiceKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(
        services,
        expected,
        "services in the tool call's trace ({} spans)",
        in_trace.len()
    );
    let by_id: BTreeMap<&str, &&Value> = in_trace
        .iter()
        .map(|s| (s["span_id"].as_str().unwrap(), *s))
        .collect();
    let roots: Vec<&str> = in_trace
        .iter()
        .filter(|s| s["parent_span_id"] == "")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let listing: Vec<String> = in_trace
        .iter()
        .map(|s| {
            format!(
                "{} {} {} <- {}",
                s["service"], s["name"], s["span_id"], s["parent_span_id"]
            )
        })
        .collect();
    assert_eq!(
        roots,
        ["tools/call minimal_context"],
        "one root; the trace:\n{}",
        listing.join("\n")
    );
    const SERVER: i64 = 2;
    const CLIENT: i64 = 3;
    for span in &in_trace {
        let parent = span["parent_span_id"].as_str().unwrap();
        if parent.is_empty() {
            continue;
        }
        let parent = by_id
            .get(parent)
            .unwrap_or_else(|| panic!("{} has a parent outside the trace", span["name"]));
        if span["kind"] == SERVER && span["service"] != "gateway" {
            assert_eq!(
                parent["kind"], CLIENT,
                "{} ({}) is the child of a client span",
                span["name"], span["service"]
            );
            assert_ne!(
                parent["service"], span["service"],
                "{} is called from another service",
                span["name"]
            );
        }
    }

    // Metrics: what operators need, and never a tenant, subject, repository or key.
    let metrics: Vec<&Value> = records.iter().filter(|r| r["signal"] == "metric").collect();
    let reported: BTreeSet<(&str, &str)> = metrics
        .iter()
        .map(|m| (m["service"].as_str().unwrap(), m["name"].as_str().unwrap()))
        .collect();
    for kind in ServiceKind::ALL {
        assert!(
            reported.contains(&(kind.name(), "rpc.server.duration")),
            "{} reports rpc.server.duration: {reported:?}",
            kind.name()
        );
    }
    assert!(reported.contains(&("gateway", "codectx.tool.duration")));
    assert!(reported.contains(&("gateway", "codectx.tool.tokens")));
    let mut secrets: Vec<String> = vec![
        dev.api_key.clone(),
        dev.organisation.id.clone(),
        dev.subject.id.clone(),
    ];
    secrets.extend(repositories);
    for metric in &metrics {
        for (key, value) in metric["attributes"].as_object().unwrap() {
            for forbidden in ["tenant", "subject", "session", "organisation", "repository"] {
                assert!(
                    !key.contains(forbidden),
                    "metric {} has a {key} label",
                    metric["name"]
                );
            }
            let value = value.to_string();
            for secret in &secrets {
                assert!(
                    !value.contains(secret.as_str()),
                    "metric {} label {key} carries an identifier",
                    metric["name"]
                );
            }
        }
    }
}

/// Waits until the service at `endpoint` reports SERVING on the gRPC health service.
async fn serving(endpoint: &str, timeout: Duration) -> bool {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if let Ok(channel) = tonic::transport::Channel::from_shared(endpoint.to_owned())
            .unwrap()
            .connect()
            .await
        {
            let status = HealthClient::new(channel)
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await;
            if status.is_ok_and(|s| s.into_inner().status == 1) {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}
