//! The `compress` tool on real outputs produced on this machine (tests/corpus/README.md
//! says how each was made): cargo, go test, pytest, Maven, npm, Python and Java stack
//! traces, a large JSON API response and a Kubernetes API list. Every line its `.keep`
//! file names (written by reading the raw outputs only: KEEP-RULES.md) survives every
//! level; the kind is detected; the output is smaller than the input.

use std::path::{Path, PathBuf};

use codectx_compress::{ContentKind, Level, compress_text};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Each sample and the kind it must be detected as.
const SAMPLES: &[(&str, ContentKind)] = &[
    ("cargo-build.txt", ContentKind::BuildOutput),
    ("cargo-test.txt", ContentKind::BuildOutput),
    ("go-test.txt", ContentKind::BuildOutput),
    ("pytest.txt", ContentKind::BuildOutput),
    ("maven-compile.txt", ContentKind::BuildOutput),
    ("maven-test.txt", ContentKind::BuildOutput),
    ("npm-install.txt", ContentKind::BuildOutput),
    ("npm-test.txt", ContentKind::BuildOutput),
    ("python-trace.txt", ContentKind::StackTrace),
    ("python-exceptiongroup-trace.txt", ContentKind::StackTrace),
    ("java-trace.txt", ContentKind::StackTrace),
    ("pypi-requests.json", ContentKind::JsonObject),
    ("kube-pods.json", ContentKind::JsonObject),
];

fn keep_lines(sample: &str) -> Vec<String> {
    let keep = corpus().join(Path::new(sample).with_extension("keep"));
    match std::fs::read_to_string(&keep) {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn every_sample_is_detected_compressed_and_keeps_its_lines() {
    let mut failures = Vec::new();
    for (sample, kind) in SAMPLES {
        let text = std::fs::read_to_string(corpus().join(sample)).unwrap();
        let detected = compress_text(&text, None, Level::Summary);
        if detected.kind != *kind {
            failures.push(format!(
                "{sample}: detected {:?}, not {kind:?}",
                detected.kind
            ));
        }
        let keep = keep_lines(sample);
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let out = compress_text(&text, None, level);
            if out.text.len() >= text.len() {
                failures.push(format!(
                    "{sample} at {level}: {} bytes, not smaller than {}",
                    out.text.len(),
                    text.len()
                ));
            }
            for line in &keep {
                if !out.text.contains(line.as_str()) {
                    failures.push(format!("{sample} at {level}: lost {line:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
