//! `codectx bench` end to end: the built binary indexes a checkout, starts the stack,
//! asks every question over Streamable HTTP with the rmcp client and writes its report.
//! Needs the embedding model (CODECTX_TEST_MODEL_DIR, set by deploy/local/with-services.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn model_directory() -> String {
    std::env::var("CODECTX_TEST_MODEL_DIR").expect(
        "CODECTX_TEST_MODEL_DIR is not set: run the tests through deploy/local/with-services.sh (make test)",
    )
}

/// Runs `codectx bench` with `arguments`; returns (exit code, report JSON).
fn bench(workload: &Path, name: &str, arguments: &[&str]) -> (i32, Value, String) {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let output = Command::new(codectx_tests::codectx_binary())
        .arg("bench")
        .arg("--workload")
        .arg(workload)
        .arg("--data")
        .arg(scratch.path().join("data"))
        .arg("--out")
        .arg(&out)
        .arg("--models")
        .arg(model_directory())
        .args(arguments)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report_path = out.join(format!("{name}.json"));
    let report: Value = match std::fs::read_to_string(&report_path) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(error) => panic!(
            "no report at {} ({error}); stderr:\n{stderr}",
            report_path.display()
        ),
    };
    assert!(out.join(format!("{name}.md")).exists());
    (output.status.code().unwrap_or(-1), report, stderr)
}

fn aggregate<'a>(report: &'a Value, arm: &str, mode: &str) -> &'a Value {
    report["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["arm"] == arm && a["mode"] == mode)
        .unwrap_or_else(|| panic!("no {arm}/{mode} aggregate in {report}"))
}

fn question<'a>(report: &'a Value, id: &str, arm: &str, mode: &str) -> &'a Value {
    report["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == id && q["arm"] == arm && q["mode"] == mode)
        .unwrap_or_else(|| panic!("no {id} {arm}/{mode} in the report"))
}

#[test]
fn a_workload_md_file_runs_and_is_scored_from_the_checkout() {
    let root = repository_root();
    let workload = root.join("tests/fixtures/bench/shop.json");
    let repo = format!("shop={}", root.join("tests/fixtures/python").display());
    let (code, report, stderr) = bench(
        &workload,
        "fixture-shop",
        &[
            "--repo",
            &repo,
            "--arms",
            "hybrid",
            "--concurrency",
            "2",
            "--duration",
            "2s",
            "--rates",
            "20,40",
            "--open-loop-sessions",
            "4",
            "--require-coverage",
            "100",
        ],
    );
    assert_eq!(code, 0, "stderr:\n{stderr}");
    assert_eq!(report["workload"], "fixture-shop");
    // The open loop offers each rate for the duration: about rate x seconds arrivals,
    // each measured from its scheduled time.
    let open_loop = &report["open_loop"];
    let rates = open_loop["rates"].as_array().unwrap();
    assert_eq!(rates.len(), 2, "{open_loop}");
    for (rate, offered) in rates.iter().zip([20.0, 40.0]) {
        assert_eq!(rate["offered_per_second"], offered);
        let sent = rate["sent"].as_f64().unwrap();
        assert!(
            (offered * 2.0 * 0.9..=offered * 2.0).contains(&sent),
            "{rate}"
        );
        assert!(rate["p95_ms"].as_f64().unwrap() > 0.0, "{rate}");
        assert_eq!(rate["timeouts"], 0, "{rate}");
    }
    assert_eq!(open_loop["p95_limit_ms"], 25.0);
    assert_eq!(report["estimator"], "bytes/4");

    // The baseline is recomputed from the checkout; the file's wrong number is reported.
    let expected_baseline: u64 = ["shop/cart.py", "tests/test_cart.py"]
        .iter()
        .map(|p| {
            (std::fs::metadata(root.join("tests/fixtures/python").join(p))
                .unwrap()
                .len())
            .div_ceil(4)
        })
        .sum();
    let callers = question(&report, "SHOP-01", "hybrid", "call");
    assert_eq!(callers["baseline_tokens"], expected_baseline);
    assert_eq!(callers["passed"], true, "{callers}");
    assert!(callers["returned_tokens"].as_u64().unwrap() > 0);
    assert!(
        report["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("SHOP-01: the workload says baseline_tokens 1")),
        "{}",
        report["warnings"]
    );
    // Returned tokens are ceil(bytes / 4) of the whole result as received.
    let bytes = callers["returned_bytes"].as_u64().unwrap();
    assert_eq!(
        callers["returned_tokens"].as_u64().unwrap(),
        bytes.div_ceil(4)
    );

    let no_match = question(&report, "SHOP-03", "hybrid", "call");
    assert_eq!(no_match["status"], "not_found");
    assert_eq!(no_match["passed"], true);
    // Task mode asks minimal_context with the question.
    assert_eq!(
        question(&report, "SHOP-03", "hybrid", "task")["tool"],
        "minimal_context"
    );

    let call = aggregate(&report, "hybrid", "call");
    assert_eq!(call["questions"], 3);
    assert_eq!(call["passed"], 3);
    assert_eq!(call["evidence_coverage_pct"], 100.0);
    // No-match questions count toward the pass rate only.
    assert_eq!(call["with_baseline"], 2);
    let raw = aggregate(&report, "raw", "files");
    assert_eq!(raw["questions"], 2);

    let load = &report["load"];
    // Session mode: the session's calls in one MCP session and each in its own; every
    // call scored on its own evidence, tokens summed per session.
    let session = &report["sessions"][0];
    assert_eq!(session["id"], "SHOP-S1");
    assert_eq!(session["calls"].as_array().unwrap().len(), 4);
    assert_eq!(session["calls"][3]["repeat"], true, "{session}");
    assert_eq!(session["passed"], true, "{session}");
    assert_eq!(session["baseline_tokens"], expected_baseline);
    let returned = session["returned_tokens"].as_u64().unwrap();
    let per_call: u64 = session["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["returned_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(returned, per_call);
    assert!(session["isolated_tokens"].as_u64().unwrap() > 0);
    let sessions = &report["session_aggregates"][0];
    assert_eq!(sessions["arm"], "hybrid");
    assert_eq!(sessions["sessions"], 1);
    assert_eq!(sessions["evidence_coverage_pct"], 100.0);
    assert_eq!(load["clients"], 2);
    assert!(load["calls"].as_u64().unwrap() > 0, "{load}");
    assert_eq!(load["timeouts"], 0);
    // Per-service latency comes from the services' own histograms.
    let services: Vec<&str> = load["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    for service in [
        "ContextAssemblerService",
        "GraphHydratorService",
        "AuthzService",
    ] {
        assert!(services.contains(&service), "{services:?}");
    }
}

#[test]
fn require_coverage_fails_when_evidence_is_missing() {
    let root = repository_root();
    let mut workload: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/fixtures/bench/shop.json")).unwrap(),
    )
    .unwrap();
    workload["questions"][0]["must_contain"] = serde_json::json!(["no such text anywhere"]);
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("broken.json");
    std::fs::write(&path, workload.to_string()).unwrap();
    let repo = format!("shop={}", root.join("tests/fixtures/python").display());
    let (code, report, _) = bench(
        &path,
        "fixture-shop",
        &[
            "--repo",
            &repo,
            "--arms",
            "hybrid",
            "--mode",
            "call",
            "--require-coverage",
            "100",
        ],
    );
    assert_eq!(code, 2);
    let broken = question(&report, "SHOP-01", "hybrid", "call");
    assert_eq!(broken["passed"], false);
    assert_eq!(broken["evidence"]["missing"][0], "no such text anywhere");
}

#[test]
fn memory_workload_compares_the_retrieval_arms() {
    let root = repository_root();
    let repo = format!("notes-repo={}", root.join("tests/fixtures/go").display());
    let (code, report, stderr) = bench(
        &root.join("bench/workloads/memory.json"),
        "memory-v2",
        &[
            "--repo",
            &repo,
            "--arms",
            "hybrid,lexical",
            "--mode",
            "call",
        ],
    );
    assert_eq!(code, 0, "stderr:\n{stderr}");
    let hybrid = aggregate(&report, "hybrid", "call");
    let lexical = aggregate(&report, "lexical", "call");
    // Paraphrased questions need the dense leg: hybrid answers more than lexical alone.
    assert!(
        hybrid["passed"].as_u64().unwrap() > lexical["passed"].as_u64().unwrap(),
        "hybrid {hybrid} lexical {lexical}"
    );
    let paraphrase = question(&report, "MEM-08", "hybrid", "call");
    assert_eq!(paraphrase["passed"], true, "{paraphrase}");
    // Nothing similar: the floor on dense similarity keeps the answer empty.
    assert_eq!(
        question(&report, "MEM-11", "hybrid", "call")["passed"],
        true
    );
    // Tenants (the workload's `tenant` field): every question that asks one tenant for
    // what only another remembered, or for what it forgot, gets nothing of it.
    let workload: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("bench/workloads/memory.json")).unwrap(),
    )
    .unwrap();
    let guarded: Vec<&str> = workload["questions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["tenant"].is_string() && q["expected_result"] == "none")
        .filter(|q| !q["must_not_contain"].as_array().unwrap().is_empty())
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert!(guarded.len() >= 10, "{guarded:?}");
    for id in guarded {
        let answer = question(&report, id, "hybrid", "call");
        assert_eq!(answer["passed"], true, "{id}: {answer}");
    }
}
