//! `codectx admin` as a person uses it: names wherever ids go, the setup order of
//! docs/services/authz.md, and errors that name the flag typed and the endpoint.

use codectx_tests::{TestStack, codectx_binary};

fn admin(stack: &TestStack, args: &[&str]) -> (bool, String, String) {
    let output = std::process::Command::new(codectx_binary())
        .arg("admin")
        .arg("--authz")
        .arg(stack.endpoint(codectx::stack::ServiceKind::Authz))
        .args(args)
        .env("CODECTX_API_KEY", stack.admin_key())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn ok(stack: &TestStack, args: &[&str]) -> String {
    let (success, stdout, stderr) = admin(stack, args);
    assert!(
        success,
        "codectx admin {args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_work_wherever_ids_do() {
    let stack = TestStack::start().await.unwrap();
    ok(&stack, &["org", "create", "acme-web"]);
    ok(&stack, &["subject", "create", "--org", "acme-web", "alice"]);
    ok(
        &stack,
        &[
            "subject",
            "create",
            "--org",
            "acme-web",
            "ops",
            "--role",
            "org-admin",
        ],
    );
    ok(&stack, &["team", "create", "--org", "acme-web", "platform"]);
    ok(
        &stack,
        &["team", "add-member", "acme-web/platform", "acme-web/alice"],
    );
    let key = ok(
        &stack,
        &["key", "create", "--subject", "acme-web/alice", "laptop"],
    );
    assert!(key.contains("cxk_"), "{key}");
    // The repository entry comes from indexing (here registered as the indexer does).
    let organisation = ok(&stack, &["org", "list"]);
    let organisation_id = organisation
        .lines()
        .find(|l| l.contains("acme-web"))
        .and_then(|l| l.split('\t').next())
        .unwrap()
        .to_owned();
    codectx_tests::register_indexed(&stack, &organisation_id, "web")
        .await
        .unwrap();
    ok(
        &stack,
        &[
            "grant",
            "create",
            "acme-web/web",
            "--team",
            "acme-web/platform",
        ],
    );
    let grants = ok(&stack, &["grant", "list", "acme-web/web"]);
    assert!(grants.contains("team="), "{grants}");
    let subjects = ok(&stack, &["subject", "list", "--org", "acme-web"]);
    assert!(
        subjects.contains("alice") && subjects.contains("org_admin"),
        "{subjects}"
    );

    // Errors name the flag and value typed.
    let (success, _, stderr) = admin(&stack, &["subject", "list", "--org", "acme-wbe"]);
    assert!(!success);
    assert!(stderr.contains("--org acme-wbe"), "{stderr}");
    let (success, _, stderr) = admin(&stack, &["key", "create", "--subject", "alice", "x"]);
    assert!(!success);
    assert!(
        stderr.contains("--subject alice") && stderr.contains("ORG/NAME"),
        "{stderr}"
    );
    stack.stack.stop().await.unwrap();

    // An authz that is not there: the error names the endpoint and the flag.
    let output = std::process::Command::new(codectx_binary())
        .args(["admin", "--authz", "http://127.0.0.1:9", "org", "list"])
        .env("CODECTX_API_KEY", "cxk_x")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("http://127.0.0.1:9") && stderr.contains("--authz"),
        "{stderr}"
    );
}

/// `codectx keys public` prints the ring's public keys in the format services read as
/// `tenant.verification_keys_file`, oldest first, and never creates a ring.
#[test]
fn keys_public_prints_the_verification_keys_file() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("signing-keys");
    let run = |args: &[&str]| {
        std::process::Command::new(codectx_binary())
            .args(args)
            .output()
            .unwrap()
    };
    let ring_arg = ring.to_str().unwrap();
    // No ring yet: a clear error, and still no ring.
    let missing = run(&["keys", "public", "--key-file", ring_arg]);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("keys rotate") && stderr.contains(ring_arg),
        "{stderr}"
    );
    assert!(!ring.exists());

    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = run(&["keys", "rotate", "--key-file", ring_arg]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        ids.push(text.split_whitespace().nth(3).unwrap().to_owned());
    }
    let public = run(&["keys", "public", "--key-file", ring_arg]);
    assert!(public.status.success());
    let file = dir.path().join("verification-keys");
    std::fs::write(&file, &public.stdout).unwrap();
    let keys = codectx_runtime::read_public_keys(&file).unwrap();
    // The first rotate created the ring (one key) and added one: three keys, the two
    // added ones last, in order.
    let listed: Vec<String> = keys.iter().map(|k| k.key_id.clone()).collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(listed[1..], ids[..]);
    // Nothing secret: the private half is not in the output.
    let ring_text = std::fs::read_to_string(&ring).unwrap();
    let stdout = String::from_utf8_lossy(&public.stdout);
    for line in ring_text.lines().filter(|l| !l.starts_with('#')) {
        let seed = line.split_whitespace().nth(1).unwrap();
        assert!(!stdout.contains(seed), "a private seed was printed");
    }
}
