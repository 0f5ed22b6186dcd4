//! The adversarial suite: a hostile tenant attacks another tenant through every MCP tool
//! and string argument, the session layer, the admin RPCs and the internal gRPC services,
//! while the victim keeps working. Cases are generated (tool x argument x hostile value,
//! plus session, admin and direct-gRPC families), well over 1,000 attempts per run.
//!
//! Reported (stderr) and asserted: attempts, leaks (a victim-only marker in an answer to
//! the attacker that the attacker did not send itself), panics (a process-wide hook),
//! deadline overruns (no request may outlive the 10 s deadline by more than 1 s) and the
//! worst latency the victim saw meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use codectx::bench::client::{CallError, McpClient};
use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, GraphClient, PeerConfig};
use codectx_proto::assembler::v1 as assembler_pb;
use codectx_proto::authz::v1 as pb;
use codectx_proto::graph::v1 as graph_pb;
use codectx_tenant::{Scope, TenantContext};
use codectx_tests::{TestStack, authorize, with_context_bytes};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The 10 s operation deadline plus the 1 s of slack the issue allows.
const DEADLINE_WITH_SLACK: Duration = Duration::from_secs(11);

static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
}

/// One organisation: an org admin, a member, and the member's context on `shop`.
struct Party {
    organisation: pb::Organisation,
    admin_key: String,
    member: pb::Subject,
    member_key: String,
    repository: pb::AccessRepository,
    context: TenantContext,
}

fn copy_fixture(name: &str) -> tempfile::TempDir {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let checkout = tempfile::tempdir().unwrap();
    copy(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
        checkout.path(),
    );
    checkout
}

/// Creates the organisation, indexes `fixture` for it as `shop` (as `codectx index --org`
/// does), and grants its member every scope.
async fn party(stack: &TestStack, name: &str, fixture: &str, checkout: &std::path::Path) -> Party {
    let authz = stack.authz();
    let platform = stack.admin_key();
    let organisation = authz
        .create_organisation(
            platform,
            pb::CreateOrganisationRequest { name: name.into() },
        )
        .await
        .unwrap();
    let subject = |role: pb::Role, who: &str| pb::CreateSubjectRequest {
        organisation_id: organisation.id.clone(),
        name: who.into(),
        role: role as i32,
    };
    let admin = authz
        .create_subject(platform, subject(pb::Role::OrgAdmin, "admin"))
        .await
        .unwrap();
    let member = authz
        .create_subject(platform, subject(pb::Role::Member, "agent"))
        .await
        .unwrap();
    let key = |subject: &pb::Subject| pb::CreateApiKeyRequest {
        subject_id: subject.id.clone(),
        name: "key".into(),
    };
    let admin_key = authz
        .create_api_key(platform, key(&admin))
        .await
        .unwrap()
        .secret;
    let member_key = authz
        .create_api_key(platform, key(&member))
        .await
        .unwrap()
        .secret;
    let args = codectx::indexing::IndexArgs {
        threads: 2,
        quiet: true,
        org: Some(name.into()),
        ..codectx::indexing::IndexArgs::embedded(
            checkout.to_path_buf(),
            "shop".into(),
            stack.data.path().to_path_buf(),
        )
    };
    codectx::indexing::run(&args, &*stack.stack.graph_store)
        .await
        .unwrap_or_else(|e| panic!("indexing {fixture} for {name}: {e}"));
    let repository = authz
        .list_repositories(
            platform,
            pb::ListRepositoriesRequest {
                organisation_id: organisation.id.clone(),
            },
        )
        .await
        .unwrap()
        .repositories
        .into_iter()
        .find(|r| r.name == "shop")
        .unwrap();
    authz
        .create_grant(
            &admin_key,
            pb::CreateGrantRequest {
                repository_id: repository.id.clone(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    member.id.clone(),
                )),
                scopes: Scope::ALL.iter().map(|s| s.to_proto() as i32).collect(),
            },
        )
        .await
        .unwrap();
    let authorized = authorize(stack, &member_key, "shop").await.unwrap();
    let context = stack
        .stack
        .verifier
        .verify(&authorized.signed_context)
        .unwrap();
    Party {
        organisation,
        admin_key,
        member,
        member_key,
        repository,
        context,
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

/// What the attack tallies.
#[derive(Debug, Default)]
struct Tally {
    attempts: usize,
    leaks: Vec<String>,
    overruns: Vec<String>,
    worst_attacker: Duration,
    /// Everything the attacker has sent so far: what it stored itself (a remembered
    /// entity named like a victim id) may come back later without being a leak.
    sent: String,
}

impl Tally {
    /// Records one attempt: `request` is everything the attacker sent, `answer` everything
    /// it got back. A victim marker in the answer that is not in the request is a leak.
    fn record(
        &mut self,
        label: &str,
        request: &str,
        answer: &str,
        latency: Duration,
        markers: &[String],
    ) {
        self.attempts += 1;
        self.worst_attacker = self.worst_attacker.max(latency);
        self.sent.push_str(request);
        self.sent.push('\n');
        if latency > DEADLINE_WITH_SLACK {
            self.overruns.push(format!("{label}: {latency:?}"));
        }
        for marker in markers {
            if answer.contains(marker.as_str()) && !self.sent.contains(marker.as_str()) {
                self.leaks.push(format!(
                    "{label}: {marker:?} in {}",
                    answer.chars().take(300).collect::<String>()
                ));
            }
        }
    }
}

/// Hostile values for a string argument, given what the attacker knows of the victim
/// (ids seen in logs, names guessed) and classic injection shapes.
fn hostile_strings(victim: &Party, victim_symbol_id: &str) -> Vec<String> {
    let graph = victim.context.graph_id();
    vec![
        victim.repository.id.clone(),
        victim.repository.name.clone(),
        graph.to_owned(),
        victim.organisation.id.clone(),
        victim.context.namespace().to_owned(),
        format!("{}|{graph}", victim.organisation.id),
        victim_symbol_id.to_owned(),
        format!("{graph}::NewServer"),
        format!("{}/shop", victim.organisation.name),
        "victim/shop".into(),
        "../../../../etc/passwd".into(),
        "/etc/passwd".into(),
        "..\\..\\windows\\win.ini".into(),
        "' OR '1'='1".into(),
        "\") MATCH (n) RETURN n //".into(),
        "MATCH (n) DETACH DELETE n".into(),
        "'; DROP TABLE repositories; --".into(),
        "%".into(),
        "_".into(),
        "*".into(),
        "\u{0}".into(),
        "shop\nauthorization: Bearer x".into(),
        "\u{202e}pohs".into(),
        "${jndi:ldap://127.0.0.1/x}".into(),
        "{{7*7}}".into(),
        "gph_00000000000000000000000000000000".into(),
        "repo_ffffffffffffffffffffffffffffffff".into(),
        "x".repeat(5_000),
        "y".repeat(9_000),
        "NewServer".into(),
        "store.DB".into(),
        "Payments canary".into(),
    ]
}

/// (tool, the attacker's own valid arguments, the string arguments to attack).
fn tools() -> Vec<(&'static str, Value, Vec<&'static str>)> {
    vec![
        ("list_repositories", json!({}), vec![]),
        (
            "describe_repository",
            json!({"repository": "shop"}),
            vec!["repository"],
        ),
        (
            "search",
            json!({"repository": "shop", "query": "Server"}),
            vec!["repository", "query", "kinds"],
        ),
        (
            "get_symbol_context",
            json!({"repository": "shop", "symbol": "Cart"}),
            vec!["repository", "symbol"],
        ),
        (
            "get_call_graph",
            json!({"repository": "shop", "symbol": "Cart"}),
            vec!["repository", "symbol", "direction"],
        ),
        (
            "get_pr_context",
            json!({"repository": "shop", "files": ["shop/cart.py"]}),
            vec!["repository", "diff", "files"],
        ),
        (
            "minimal_context",
            json!({"repository": "shop", "task": "change Cart"}),
            vec!["repository", "task"],
        ),
        (
            "get_code_snippet",
            json!({"repository": "shop", "symbol": "Cart"}),
            vec!["repository", "symbol", "id", "fingerprint"],
        ),
        (
            "recall",
            json!({"repository": "shop", "query": "payments"}),
            vec!["repository", "query"],
        ),
        (
            "remember",
            json!({"repository": "shop", "entity": "Attacker note", "type": "note"}),
            vec!["repository", "entity", "type", "aliases", "facts"],
        ),
        (
            "forget",
            json!({"repository": "shop", "entity": "Attacker note"}),
            vec!["repository", "entity"],
        ),
    ]
}

/// Puts `value` where `argument` goes, in the shape the schema expects.
fn with_argument(base: &Value, argument: &str, value: &str) -> Map<String, Value> {
    let mut arguments = object(base.clone());
    let shaped = match argument {
        "kinds" | "files" | "aliases" => json!([value]),
        "facts" => json!([{"predicate": "uses", "object": value}]),
        "diff" => json!(format!("--- a/{value}\n+++ b/{value}\n@@ -1 +1 @@\n+x\n")),
        _ => json!(value),
    };
    if argument == "id" || argument == "diff" {
        arguments.remove("symbol");
        arguments.remove("files");
    }
    arguments.insert(argument.to_owned(), shaped);
    arguments
}

/// Raw HTTP/1.1 to the gateway, as an attacker would send it; returns status and body.
async fn raw_http(address: std::net::SocketAddr, request: String) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn http_request(method: &str, key: &str, session: Option<&str>, extra: &str, body: &str) -> String {
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n{session}{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_tenant_reads_nothing_and_breaks_nothing() {
    count_panics();
    let stack = TestStack::start().await.unwrap();
    let victim_checkout = copy_fixture("go");
    let attacker_checkout = copy_fixture("python");
    let victim = party(&stack, "victim", "go", victim_checkout.path()).await;
    let attacker = party(&stack, "attacker", "python", attacker_checkout.path()).await;
    assert_ne!(victim.context.graph_id(), attacker.context.graph_id());
    let http = stack.stack.gateway_http().unwrap();
    let url = format!("http://{http}/mcp");

    // The victim's own data: a remembered canary and a symbol's id and fingerprint.
    let canary = format!("CANARY-{}", codectx_core::ids::mint("cny"));
    let victim_client = McpClient::connect_structured(&url, &victim.member_key)
        .await
        .unwrap();
    let remembered = victim_client
        .call(
            "remember",
            &object(
                json!({"repository": "shop", "entity": "Payments canary service", "type": "service",
                           "facts": [{"predicate": "stores", "object": canary}]}),
            ),
        )
        .await
        .unwrap();
    assert!(!remembered.is_error, "{}", remembered.haystack);
    let card = victim_client
        .call(
            "get_symbol_context",
            &object(json!({"repository": "shop", "symbol": "NewServer", "include_ids": true})),
        )
        .await
        .unwrap();
    let card_value = card.structured.clone().unwrap();
    let symbol_id = card_value["entries"][0]["id"].as_str().unwrap().to_owned();
    let fingerprint = card_value["entries"][0]["fingerprint"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // Markers only the victim's data holds.
    let mut markers = vec![
        canary.clone(),
        symbol_id.clone(),
        victim.context.graph_id().to_owned(),
        victim.repository.id.clone(),
        victim.organisation.id.clone(),
        victim.member.id.clone(),
        "db *store.DB".to_owned(),
        "Payments canary service".to_owned(),
    ];
    if fingerprint.len() >= 8 {
        markers.push(fingerprint.clone());
    }

    // The victim keeps working throughout; its worst latency is reported.
    let stop = Arc::new(AtomicBool::new(false));
    let victim_load = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut worst = Duration::ZERO;
            let mut calls = 0usize;
            let mut failures = 0usize;
            while !stop.load(Ordering::SeqCst) {
                match victim_client
                    .call(
                        "search",
                        &object(json!({"repository": "shop", "query": "Server"})),
                    )
                    .await
                {
                    Ok(outcome) if !outcome.is_error && outcome.haystack.contains("Server") => {
                        worst = worst.max(outcome.latency)
                    }
                    _ => failures += 1,
                }
                calls += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            victim_client.close().await;
            (worst, calls, failures)
        })
    };

    let mut tally = Tally::default();
    let attacker_client = McpClient::connect(&url, &attacker.member_key)
        .await
        .unwrap();
    let hostile = hostile_strings(&victim, &symbol_id);

    // 1. Every tool x every string argument x every hostile value.
    for (tool, base, arguments) in tools() {
        let mut cases: Vec<Map<String, Value>> = vec![object(base.clone())];
        for argument in &arguments {
            for value in &hostile {
                cases.push(with_argument(&base, argument, value));
            }
        }
        for numeric in ["limit", "max_tokens", "depth", "max_entries", "hops"] {
            for value in [
                json!(-1),
                json!(0),
                json!(1e12),
                json!("8"),
                json!(u64::MAX),
            ] {
                let mut arguments = object(base.clone());
                arguments.insert(numeric.into(), value);
                cases.push(arguments);
            }
        }
        for arguments in cases {
            let request = Value::Object(arguments.clone()).to_string();
            let started = Instant::now();
            let answer = match attacker_client.call(tool, &arguments).await {
                Ok(outcome) => outcome.haystack,
                Err(CallError::Timeout) => "timeout".to_owned(),
                Err(CallError::Transport(error)) => error,
            };
            tally.record(tool, &request, &answer, started.elapsed(), &markers);
        }
    }
    // Heavy inputs within the caps: a ~4 MiB diff over 100 files (real and made-up paths,
    // thousands of hunks), every kind at once, the largest task. Each answers within its
    // deadline (typed limit errors where a cap is reached).
    let mut diff = String::new();
    for file in 0..100 {
        let path = if file == 0 {
            "shop/cart.py".to_owned()
        } else {
            format!("shop/generated_{file}.py")
        };
        diff.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
        for hunk in 0..95 {
            let line = hunk * 7 + 1;
            diff.push_str(&format!(
                "@@ -{line},3 +{line},3 @@\n-old line {hunk}\n+{}\n context\n",
                "x".repeat(370)
            ));
        }
    }
    assert!(diff.len() < 4 * 1024 * 1024, "{}", diff.len());
    let kinds: Vec<String> = [
        "function",
        "method",
        "type",
        "interface",
        "class",
        "constant",
        "module",
        "package",
        "file",
        "doc_section",
        "error_message",
        "external",
        "repository",
        "f",
        "g",
        "h",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect();
    for (tool, arguments) in [
        (
            "get_pr_context",
            json!({"repository": "shop", "diff": diff}),
        ),
        (
            "get_pr_context",
            json!({"repository": "shop", "files": (0..100).map(|i| format!("shop/f{i}.py")).collect::<Vec<_>>()}),
        ),
        (
            "search",
            json!({"repository": "shop", "query": "Cart total", "kinds": kinds}),
        ),
        (
            "minimal_context",
            json!({"repository": "shop", "task": "Cart ".repeat(1_638)}),
        ),
        (
            "get_symbol_context",
            json!({"repository": "shop", "symbol": "Cart", "max_tokens": 20_000}),
        ),
    ] {
        let arguments = object(arguments);
        let request = Value::Object(arguments.clone()).to_string();
        let started = Instant::now();
        let answer = match attacker_client.call(tool, &arguments).await {
            Ok(outcome) => outcome.haystack,
            Err(CallError::Timeout) => "timeout".to_owned(),
            Err(CallError::Transport(error)) => error,
        };
        tally.record(tool, &request, &answer, started.elapsed(), &markers);
    }

    // The attacker's own valid calls still answer from its own graph.
    let own = attacker_client
        .call(
            "search",
            &object(json!({"repository": "shop", "query": "Cart"})),
        )
        .await
        .unwrap();
    assert!(own.haystack.contains("Cart"), "{}", own.haystack);

    // 2. Sessions: the victim's session id with the attacker's key, every method.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "v", "version": "1"}}})
    .to_string();
    let raw = http_request("POST", &victim.member_key, None, "", &initialize);
    let mut stream = tokio::net::TcpStream::connect(http).await.unwrap();
    stream.write_all(raw.as_bytes()).await.unwrap();
    let mut head = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut head))
        .await
        .unwrap()
        .unwrap();
    let head = String::from_utf8_lossy(&head[..read]).into_owned();
    let victim_session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("the victim's initialize names a session");
    drop(stream);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _) = raw_http(
        http,
        http_request(
            "POST",
            &victim.member_key,
            Some(&victim_session),
            "",
            &initialized,
        ),
    )
    .await;
    assert!(status == 202 || status == 200, "initialized: {status}");
    let tools_list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "recall", "arguments": {"repository": "shop", "query": "canary"}}})
    .to_string();
    for round in 0..10 {
        for (method, extra, body) in [
            ("GET", String::new(), String::new()),
            ("GET", format!("Last-Event-ID: {round}\r\n"), String::new()),
            ("POST", String::new(), tools_list.clone()),
            ("POST", String::new(), call.clone()),
            ("DELETE", String::new(), String::new()),
        ] {
            let request = http_request(
                method,
                &attacker.member_key,
                Some(&victim_session),
                &extra,
                &body,
            );
            let started = Instant::now();
            let (status, answer) = raw_http(http, request.clone()).await;
            tally.record("session", &request, &answer, started.elapsed(), &markers);
            assert_eq!(status, 404, "{method} on the victim's session: {answer}");
        }
    }
    // The victim's session survived every attempt.
    let (status, answer) = raw_http(
        http,
        http_request(
            "POST",
            &victim.member_key,
            Some(&victim_session),
            "",
            &tools_list,
        ),
    )
    .await;
    assert_eq!(status, 200, "{answer}");

    // 3. Admin: the attacker's org admin against the victim's organisation.
    let authz = stack.authz();
    let admin = &attacker.admin_key;
    let victim_grant = authz
        .list_grants(
            stack.admin_key(),
            pb::ListGrantsRequest {
                repository_id: victim.repository.id.clone(),
            },
        )
        .await
        .unwrap()
        .grants
        .remove(0);
    let victim_ids = [
        victim.repository.id.clone(),
        victim.context.graph_id().to_owned(),
        victim.organisation.id.clone(),
        "shop".to_owned(),
        victim.repository.name.clone(),
    ];
    for id in &victim_ids {
        let attempts: Vec<(&str, Result<String, codectx_errors::Error>)> = vec![
            (
                "create_repository",
                authz
                    .create_repository(
                        admin,
                        pb::CreateRepositoryRequest {
                            organisation_id: attacker.organisation.id.clone(),
                            name: format!("loot-{}", tally.attempts),
                            public_graph: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "create_repository in the victim's organisation",
                authz
                    .create_repository(
                        admin,
                        pb::CreateRepositoryRequest {
                            organisation_id: victim.organisation.id.clone(),
                            name: "loot".into(),
                            public_graph: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "create_grant",
                authz
                    .create_grant(
                        admin,
                        pb::CreateGrantRequest {
                            repository_id: id.clone(),
                            grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                                attacker.member.id.clone(),
                            )),
                            scopes: vec![Scope::ReadCode.to_proto() as i32],
                        },
                    )
                    .await
                    .map(|g| format!("{g:?}")),
            ),
            (
                "register_indexed_graph",
                authz
                    .register_indexed_graph(
                        admin,
                        pb::RegisterIndexedGraphRequest {
                            organisation_id: id.clone(),
                            name: "shop".into(),
                            ..Default::default()
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "share_graph",
                authz
                    .share_graph(
                        admin,
                        pb::ShareGraphRequest {
                            repository_id: id.clone(),
                            public_name: format!("stolen-{}", tally.attempts),
                        },
                    )
                    .await
                    .map(|g| format!("{g:?}")),
            ),
            (
                "list_repositories",
                authz
                    .list_repositories(
                        admin,
                        pb::ListRepositoriesRequest {
                            organisation_id: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "list_grants",
                authz
                    .list_grants(
                        admin,
                        pb::ListGrantsRequest {
                            repository_id: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "list_subjects",
                authz
                    .list_subjects(
                        admin,
                        pb::ListSubjectsRequest {
                            organisation_id: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "delete_repository",
                authz
                    .delete_repository(
                        admin,
                        pb::DeleteRepositoryRequest {
                            repository_id: id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "revoke_grant",
                authz
                    .revoke_grant(
                        admin,
                        pb::RevokeGrantRequest {
                            grant_id: victim_grant.id.clone(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "create_api_key for the victim's member",
                authz
                    .create_api_key(
                        admin,
                        pb::CreateApiKeyRequest {
                            subject_id: victim.member.id.clone(),
                            name: "stolen".into(),
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
            (
                "create_subject in the victim's organisation",
                authz
                    .create_subject(
                        admin,
                        pb::CreateSubjectRequest {
                            organisation_id: victim.organisation.id.clone(),
                            name: format!("mole-{}", tally.attempts),
                            role: pb::Role::OrgAdmin as i32,
                        },
                    )
                    .await
                    .map(|r| format!("{r:?}")),
            ),
        ];
        for (label, result) in attempts {
            let request = format!("{label} {id}");
            match result {
                Ok(answer) => {
                    // Only the attacker's own organisation may come back, and never a
                    // victim entry.
                    tally.record(label, &request, &answer, Duration::ZERO, &markers);
                    assert!(
                        !answer.contains(victim.repository.id.as_str())
                            && !answer.contains(victim.context.graph_id()),
                        "{label} {id} succeeded against the victim: {answer}"
                    );
                }
                Err(error) => {
                    tally.record(label, &request, error.message(), Duration::ZERO, &markers)
                }
            }
        }
    }

    // 4. Direct gRPC: the attacker's valid context with the victim's identifiers in the
    // request, no context, and a context whose claims were edited.
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let graph = GraphClient::connect(&PeerConfig::single(
        stack.endpoint(ServiceKind::GraphHydrator),
    ))
    .unwrap();
    let context = &attacker.context;
    for value in &hostile {
        let request = value.clone();
        let started = Instant::now();
        let answers = [
            format!(
                "{:?}",
                graph
                    .read_snippet(
                        context,
                        graph_pb::ReadSnippetRequest {
                            symbol_id: value.clone(),
                            fingerprint: fingerprint.clone()
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                graph
                    .get_symbol_cards(
                        context,
                        graph_pb::GetSymbolCardsRequest {
                            ids: vec![value.clone(), symbol_id.clone()]
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                graph
                    .lookup_symbols(
                        context,
                        graph_pb::LookupSymbolsRequest {
                            selector: value.clone(),
                            kinds: vec![],
                            limit: 10
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                graph
                    .hydrate_memory_entities(
                        context,
                        graph_pb::HydrateMemoryEntitiesRequest {
                            ids: vec![value.clone()]
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                assembler
                    .code_snippet(
                        context,
                        assembler_pb::CodeSnippetRequest {
                            target: Some(assembler_pb::code_snippet_request::Target::Id(
                                value.clone()
                            )),
                            fingerprint: String::new()
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                assembler
                    .recall(
                        context,
                        assembler_pb::RecallRequest {
                            query: value.clone(),
                            ..Default::default()
                        }
                    )
                    .await
            ),
            format!(
                "{:?}",
                assembler
                    .symbol_context(
                        context,
                        assembler_pb::SymbolContextRequest {
                            symbol: value.clone(),
                            include_ids: true,
                            ..Default::default()
                        }
                    )
                    .await
            ),
        ];
        let latency = started.elapsed();
        for answer in answers {
            // The symbol id was sent by the attacker in get_symbol_cards: count it as sent.
            tally.record(
                "grpc",
                &format!("{request} {symbol_id} {fingerprint}"),
                &answer,
                latency,
                &markers,
            );
        }
    }
    // No context, and edited claims with the original signature.
    let signed = context.signed_bytes().to_vec();
    let victim_graph = victim.context.graph_id().as_bytes();
    let attacker_graph = context.graph_id().as_bytes();
    let mut swapped = signed.clone();
    if let Some(at) = swapped
        .windows(attacker_graph.len())
        .position(|w| w == attacker_graph)
    {
        swapped[at..at + victim_graph.len()].copy_from_slice(victim_graph);
    }
    let mut flipped = signed.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x01;
    let mut hydrator = codectx_proto::graph::v1::graph_hydrator_service_client::GraphHydratorServiceClient::connect(
        stack.endpoint(ServiceKind::GraphHydrator),
    )
    .await
    .unwrap();
    for bytes in [
        Vec::new(),
        swapped,
        flipped,
        vec![0u8; 64],
        signed.repeat(2),
    ] {
        for _ in 0..4 {
            let request = with_context_bytes(
                &bytes,
                graph_pb::ReadSnippetRequest {
                    symbol_id: symbol_id.clone(),
                    fingerprint: String::new(),
                },
            );
            let started = Instant::now();
            let result = hydrator.read_snippet(request).await;
            let answer = format!("{result:?}");
            tally.record(
                "forged context",
                &symbol_id,
                &answer,
                started.elapsed(),
                &markers,
            );
            let status = result.expect_err("a forged or missing context is refused");
            assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
        }
    }

    stop.store(true, Ordering::SeqCst);
    let (victim_worst, victim_calls, victim_failures) = victim_load.await.unwrap();
    attacker_client.close().await;
    let panics = PANICS.load(Ordering::SeqCst);
    eprintln!(
        "adversarial: {} attempts, {} leaks, {} panics, {} deadline overruns; worst attacker latency {:?}; victim: {} calls, {} failed, worst latency {:?}",
        tally.attempts,
        tally.leaks.len(),
        panics,
        tally.overruns.len(),
        tally.worst_attacker,
        victim_calls,
        victim_failures,
        victim_worst
    );
    assert!(tally.attempts >= 1_000, "only {} attempts", tally.attempts);
    assert!(tally.leaks.is_empty(), "leaks:\n{}", tally.leaks.join("\n"));
    assert_eq!(panics, 0, "panics during the attack");
    assert!(
        tally.overruns.is_empty(),
        "over the deadline:\n{}",
        tally.overruns.join("\n")
    );
    assert_eq!(
        victim_failures, 0,
        "the victim's own calls failed during the attack"
    );

    // The victim's data is intact: its memory, its entry and its code.
    let after = McpClient::connect(&url, &victim.member_key).await.unwrap();
    let recalled = after
        .call(
            "recall",
            &object(json!({"repository": "shop", "query": "Payments canary service"})),
        )
        .await
        .unwrap();
    assert!(recalled.haystack.contains(&canary), "{}", recalled.haystack);
    // Control: the detector does flag the victim's data shown to a party that never sent
    // it (the check above is not one that cannot fail).
    let mut control = Tally::default();
    control.record("control", "", &recalled.haystack, Duration::ZERO, &markers);
    assert!(
        !control.leaks.is_empty(),
        "the leak detector missed the canary"
    );
    let snippet = after
        .call(
            "get_code_snippet",
            &object(json!({"repository": "shop", "symbol": "NewServer"})),
        )
        .await
        .unwrap();
    assert!(
        snippet.haystack.contains("db *store.DB"),
        "{}",
        snippet.haystack
    );
    after.close().await;
    stack.stack.stop().await.unwrap();
}
