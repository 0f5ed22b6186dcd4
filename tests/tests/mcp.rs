//! The MCP tools through the official MCP Python SDK (tests/e2e/mcp_e2e.py): Streamable
//! HTTP in both protocol modes (2026-07-28 via auto, 2025-11-25 via legacy) and stdio in
//! both; tenant isolation with same-named repositories; 401 before any work, including
//! for a key revoked after it worked.

use std::path::PathBuf;
use std::process::Command;

use codectx_proto::authz::v1 as pb;
use codectx_tests::{create_tenant, create_tenant_on_public, start_indexed};

fn python() -> String {
    std::env::var("CODECTX_TEST_MCP_PYTHON").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MCP_PYTHON is not set: run the tests with `make test`")
    })
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("e2e/mcp_e2e.py")
}

fn run(arguments: &[&str]) {
    let output = Command::new(python())
        .arg(script())
        .args(arguments)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "mcp_e2e.py {}\nstdout:\n{}\nstderr:\n{}",
        arguments.join(" ").chars().take(300).collect::<String>(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_through_the_official_python_sdk() {
    let f = start_indexed("go", "shop").await;
    // Tenant A's `shop` reads the indexed graph (shared publicly by the platform admin);
    // tenant B's `shop` is B's own, empty graph.
    let a = create_tenant_on_public(&f.stack, "tenant-a", "shop", f.context.repository_id())
        .await
        .unwrap();
    let b = create_tenant(&f.stack, "tenant-b", "shop").await.unwrap();
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    // The e2e expects recall's dense leg: let the model finish loading first (it loads in
    // the background, and other tests compete for the two cores).
    assert!(
        f.stack
            .stack
            .wait_serving(
                codectx::stack::ServiceKind::Embedding,
                std::time::Duration::from_secs(60)
            )
            .await,
        "the embedding model did not load within 60 s"
    );

    for mode in ["auto", "legacy"] {
        run(&[
            "tools",
            "--transport",
            "http",
            "--url",
            &url,
            "--mode",
            mode,
            "--key",
            &a.api_key,
            "--key-b",
            &b.api_key,
        ]);
    }

    // Sessions are bound to the subject and key that created them: tenant B's key on
    // tenant A's session id answers exactly as an unknown session (GET stream, resume,
    // POST, DELETE), and A's session keeps working.
    run(&[
        "sessions", "--url", &url, "--key", &a.api_key, "--key-b", &b.api_key,
    ]);

    // 401 before any work: no key, a wrong key, and a key revoked after it worked.
    run(&[
        "probe",
        "--url",
        &url,
        "--key",
        "not-a-key",
        "--expect",
        "401",
    ]);
    let authz = f.stack.authz();
    let extra = authz
        .create_api_key(
            f.stack.admin_key(),
            pb::CreateApiKeyRequest {
                subject_id: a.subject.id.clone(),
                name: "revoked".into(),
            },
        )
        .await
        .unwrap();
    run(&[
        "probe",
        "--url",
        &url,
        "--key",
        &extra.secret,
        "--expect",
        "200",
    ]);
    authz
        .revoke_api_key(
            f.stack.admin_key(),
            pb::RevokeApiKeyRequest {
                key_id: extra.key.unwrap().id,
            },
        )
        .await
        .unwrap();
    run(&[
        "probe",
        "--url",
        &url,
        "--key",
        &extra.secret,
        "--expect",
        "401",
    ]);

    // stdio: `codectx mcp --stdio` on the same data directory, once the stack is stopped.
    let data = f.stack.data.path().to_str().unwrap().to_owned();
    f.stack.stack.stop().await.unwrap();
    let binary = codectx_tests::codectx_binary();
    let models = std::env::var("CODECTX_TEST_MODEL_DIR").unwrap_or_default();
    for mode in ["auto", "legacy"] {
        run(&[
            "tools",
            "--transport",
            "stdio",
            "--codectx",
            binary.to_str().unwrap(),
            "--data",
            &data,
            "--models",
            &models,
            "--mode",
            mode,
            "--key",
            &a.api_key,
            "--key-b",
            &b.api_key,
        ]);
    }
}
