//! Secret redaction of every stored string, tested on a corpus of real credential formats
//! and on repositories in four languages that embed them in constants, signatures, error
//! messages, doc comments, URLs and manifests.
//!
//! The secrets are assembled at run time (prefix + body) so this file holds no string a
//! secret scanner would flag; the values follow each provider's published format.

mod common;

use codectx_graph::{GraphStore, NodeKind};
use codectx_index::redact;

/// (what, a value in that format). Bodies are random-looking but fake.
fn corpus() -> Vec<(&'static str, String)> {
    let body36 = "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVc"; // 36 characters
    vec![
        (
            "aws access key id",
            format!("{}{}", "AKIA", "Q7RZ4K2LMN8PX3VT"),
        ),
        (
            "aws sts key id",
            format!("{}{}", "ASIA", "J3K9L2M8N4P7Q1R6"),
        ),
        ("github classic token", format!("{}_{}", "ghp", body36)),
        ("github oauth token", format!("{}_{}", "gho", body36)),
        ("github app token", format!("{}_{}", "ghs", body36)),
        (
            "github fine-grained token",
            format!(
                "{}_{}",
                "github_pat",
                "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU"
            ),
        ),
        (
            "gitlab token",
            format!("{}-{}", "glpat", "xY7zQ2wE9rT4uI1oP6aS"),
        ),
        (
            "slack bot token",
            format!("{}-{}", "xoxb", "2048-1024-Zx9Qw8Er7Ty6Ui5Op4As3Df2"),
        ),
        (
            "slack webhook",
            format!(
                "https://hooks.slack.com/services/{}/{}/{}",
                "T0AB12CD3", "B0EF45GH6", "Zx9Qw8Er7Ty6Ui5Op4As3Df2"
            ),
        ),
        (
            "stripe secret key",
            format!("{}_{}_{}", "sk", "live", "4eC39HqLyjWDarjtT1zdp7dc9Zx"),
        ),
        (
            "stripe restricted key",
            format!("{}_{}_{}", "rk", "test", "51H8x2Lq9Zx9Qw8Er7Ty6Ui5Op"),
        ),
        (
            "google api key",
            format!("{}{}", "AIza", "SyD3x9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm"),
        ),
        (
            "openai project key",
            format!(
                "{}-{}-{}",
                "sk", "proj", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVc"
            ),
        ),
        (
            "anthropic key",
            format!(
                "{}-{}-{}",
                "sk", "ant-api03", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm-AbC"
            ),
        ),
        (
            "json web token",
            format!(
                "{}.{}.{}",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
                "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
            ),
        ),
        ("npm token", format!("{}_{}", "npm", body36)),
        (
            "pypi token",
            format!(
                "{}-{}",
                "pypi", "AgEIcHlwaS5vcmcCJDNmZjU0ZTA4LWE1NTQtNGM5ZC1iYjM3LTg4YjgzY2E3"
            ),
        ),
        (
            "sendgrid key",
            format!(
                "{}.{}.{}",
                "SG", "ngeVfQFYQlKU0ufo8x5d1A", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
            ),
        ),
        (
            "twilio key",
            format!("{}{}", "SK", "0123456789abcdef0123456789abcdef"),
        ),
        (
            "hugging face token",
            format!("{}_{}", "hf", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbV"),
        ),
        (
            "codectx api key",
            format!("{}_{}", "cxk", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm"),
        ),
        (
            "unformatted random key",
            "q8ZmW2xLr7Tn4Kp9Vb3Yc6Hd1Jf5Gs0A".to_owned(),
        ),
    ]
}

#[test]
fn every_format_in_the_corpus_is_masked_in_any_context() {
    for (what, secret) in corpus() {
        for context in [
            format!("const apiKey = \"{secret}\""),
            format!("token={secret}"),
            secret.clone(),
            format!("authorization failed for key '{secret}'"),
            format!("\"{secret}\""),
        ] {
            let redacted = redact::text(&context);
            assert!(
                !redacted.contains(&secret),
                "{what}: {context:?} -> {redacted:?}"
            );
        }
    }
}

#[test]
fn passwords_in_urls_and_assignments_to_secret_names_are_masked() {
    for (text, secret) in [
        (
            "postgres://app:s3cr3t-Pa55@db.internal:5432/app",
            "s3cr3t-Pa55",
        ),
        ("amqp://guest:hunter2@localhost:5672/", "hunter2"),
        (
            "const dbPassword = \"correct horse battery\"",
            "correct horse battery",
        ),
        ("API_KEY = 'abc123def456'", "abc123def456"),
        ("let client_secret: &str = \"tiny\";", "tiny"),
        ("{\"password\": \"p@ss w0rd\"}", "p@ss w0rd"),
        ("private-key=\"k\"", "=\"k\""),
        (
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4==;",
            "Zm9vYmFyYmF6cXV4",
        ),
    ] {
        let redacted = redact::text(text);
        assert!(!redacted.contains(secret), "{text:?} -> {redacted:?}");
    }
    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    assert!(!redact::text(pem).contains("b3BlbnNzaC1rZXktdjEAAAAA"));
}

#[test]
fn ordinary_code_strings_are_kept() {
    for text in [
        "func (c *Client) Do(req *Request) (*Response, error)",
        "def authenticate(self, token: str, password: str) -> bool",
        "pub fn new(token: Token, api_key: &str) -> Self",
        "invalid token: %s",
        "password must be at least 8 characters",
        "token = self._next_token()",
        "https://docs.python.org/3/library/secrets.html",
        "expected 'AccountName' in the connection string",
        "mismatched types: expected u32, found {}",
        "sk-learn is not a package name, scikit-learn is",
        "crate::routing::method_routing::MethodRouter::route_service_with_tsr",
    ] {
        assert_eq!(redact::text(text), text);
    }
}

/// The graph of a repository that embeds secrets in Go, Python, Rust and JavaScript holds
/// none of them, in any stored string of any node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_stored_string_holds_a_secret() {
    let aws = format!("{}{}", "AKIA", "Q7RZ4K2LMN8PX3VT");
    let github = format!("{}_{}", "ghp", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVc");
    let stripe = format!("{}_{}_{}", "sk", "live", "4eC39HqLyjWDarjtT1zdp7dc9Zx");
    let password = "correct-horse-battery";
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::write(root.join("go.mod"), "module example.com/leaky\n").unwrap();
    std::fs::write(
        root.join("config.go"),
        format!(
            "package leaky\n\n// apiKey is the production key {aws}.\nconst apiKey = \"{aws}\"\n\nvar dsn = \"postgres://app:{password}@db:5432/app\"\n\nfunc Connect() error {{\n\tpanic(\"cannot connect with token {github}\")\n}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("settings.py"),
        format!(
            "API_KEY = \"{stripe}\"\n\n\ndef login(password=\"{password}\"):\n    \"\"\"Logs in with token={github}.\"\"\"\n    raise ValueError(\"bad key {aws}\")\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("lib.rs"),
        format!(
            "/// Signs with {github}.\npub const TOKEN: &str = \"{github}\";\n\npub fn check() -> Result<(), String> {{\n    Err(format!(\"key {stripe} rejected\"))\n}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("client.js"),
        format!(
            "const SECRET = '{stripe}';\n\nfunction call() {{\n  throw new Error('token {github} expired');\n}}\nmodule.exports = {{ call }};\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        format!("# Leaky {aws}\n\nUse `Connect` with password={password}.\n"),
    )
    .unwrap();
    let indexed = common::index_path(root, "leaky").await;
    let nodes = indexed
        .store
        .nodes_of_kinds(&indexed.graph, &NodeKind::ALL)
        .await
        .unwrap();
    assert!(nodes.len() > 8, "{}", nodes.len());
    for node in &nodes {
        let stored = format!(
            "{} {} {} {}",
            node.name, node.qualified_name, node.signature, node.summary
        );
        for secret in [aws.as_str(), github.as_str(), stripe.as_str(), password] {
            assert!(!stored.contains(secret), "{secret} in {node:?}");
        }
    }
    // The constants and messages are still there, with the values masked.
    assert!(
        nodes
            .iter()
            .any(|n| n.name == "apiKey" && n.signature.contains("[redacted]")),
        "{nodes:#?}"
    );
    assert!(
        nodes
            .iter()
            .any(|n| n.kind == NodeKind::ErrorMessage && n.name.contains("[redacted]")),
        "{nodes:#?}"
    );
}
