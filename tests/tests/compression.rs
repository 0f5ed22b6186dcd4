//! Compression through the real MCP path (the gateway over Streamable HTTP, all seven
//! services): answers are compressed at the configured level, `detail` bypasses it,
//! cross-session dedup is per tenant and subject and never crosses subjects, a changed
//! answer is never a reference, `compress` keeps every error line and says what it
//! detected, and `get_compression_stats` reports the session.

use codectx::bench::client::McpClient;
use codectx_proto::authz::v1 as pb;
use codectx_tests::start_indexed;
use serde_json::{Map, Value, json};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// A second member subject of the development organisation with every scope on the
/// indexed repository: the same graph, another subject.
async fn second_subject(f: &codectx_tests::IndexedStack) -> String {
    let authz = f.stack.authz();
    let admin = f.stack.admin_key();
    let subject = authz
        .create_subject(
            admin,
            pb::CreateSubjectRequest {
                organisation_id: f.context.tenant_id().to_owned(),
                name: "bob".into(),
                role: pb::Role::Member as i32,
            },
        )
        .await
        .unwrap();
    authz
        .create_grant(
            admin,
            pb::CreateGrantRequest {
                repository_id: f.context.repository_id().to_owned(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    subject.id.clone(),
                )),
                scopes: codectx_tenant::Scope::ALL
                    .iter()
                    .map(|s| s.to_proto() as i32)
                    .collect(),
            },
        )
        .await
        .unwrap();
    authz
        .create_api_key(
            admin,
            pb::CreateApiKeyRequest {
                subject_id: subject.id,
                name: "bob".into(),
            },
        )
        .await
        .unwrap()
        .secret
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_compressed_and_detail_bypasses() {
    let f = start_indexed("go", "shop").await;
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    let agent = McpClient::connect(&url, f.stack.admin_key()).await.unwrap();
    let card = object(json!({"repository": "shop", "symbol": "Server.Serve"}));
    let compact = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(!compact.is_error, "{}", compact.text);
    let mut detail = card.clone();
    detail.insert("detail".into(), Value::Bool(true));
    let full = agent.call("get_symbol_context", &detail).await.unwrap();
    let mut off = card.clone();
    off.insert("compression".into(), Value::from("off"));
    off.insert("fresh".into(), Value::Bool(true));
    let raw = agent.call("get_symbol_context", &off).await.unwrap();
    // detail is the uncompressed answer, the same as level off.
    assert_eq!(full.text, raw.text);
    assert!(
        compact.bytes < full.bytes,
        "{}\n---\n{}",
        compact.text,
        full.text
    );
    // Every neighbour survives the default level.
    for name in ["server.(*Server).render", "store.(*DB).Get", "server.Run"] {
        assert!(compact.text.contains(name), "{name}: {}", compact.text);
    }

    let stats = agent
        .call("get_compression_stats", &Map::new())
        .await
        .unwrap();
    assert!(!stats.is_error, "{}", stats.text);
    assert!(
        stats.text.contains("level: summary (from config"),
        "{}",
        stats.text
    );
    assert!(stats.text.contains("calls: 3"), "{}", stats.text);
    assert!(
        stats
            .text
            .contains("tool get_symbol_context: 3 calls, detail 1"),
        "{}",
        stats.text
    );

    // The header lines the session holds are stated once: the first answer carried
    // them, the next one of the same repository and version leaves them out, and
    // `fresh` (as `detail`, above) sends them again.
    let header = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("index:") || l.starts_with("names relative to "))
            .count()
    };
    assert_eq!(header(&compact.text), 2, "{}", compact.text);
    assert_eq!(header(&full.text), 2, "{}", full.text);
    let graph =
        object(json!({"repository": "shop", "symbol": "Server.Serve", "direction": "callers"}));
    let stated = agent.call("get_call_graph", &graph).await.unwrap();
    assert!(!stated.is_error, "{}", stated.text);
    assert_eq!(header(&stated.text), 0, "{}", stated.text);
    assert!(stated.text.contains("server.Run"), "{}", stated.text);
    let mut fresh = graph.clone();
    fresh.insert("fresh".into(), Value::Bool(true));
    let again = agent.call("get_call_graph", &fresh).await.unwrap();
    assert_eq!(header(&again.text), 2, "{}", again.text);
    let stats = agent
        .call("get_compression_stats", &Map::new())
        .await
        .unwrap();
    assert!(
        stats.text.contains("2 header lines left out"),
        "{}",
        stats.text
    );
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_session_dedup_is_per_subject_and_content_verified() {
    let f = start_indexed("go", "shop").await;
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    let alice = f.stack.admin_key().to_owned();
    let bob = second_subject(&f).await;
    let callers = object(json!({"repository": "shop", "symbol": "Server.Serve"}));

    let first = McpClient::connect(&url, &alice).await.unwrap();
    let full = first.call("get_symbol_context", &callers).await.unwrap();
    assert!(full.text.contains("server/server.go"), "{}", full.text);
    first.close().await;

    // A new session of the same subject: the unchanged answer is a reference.
    let second = McpClient::connect(&url, &alice).await.unwrap();
    let again = second.call("get_symbol_context", &callers).await.unwrap();
    assert!(
        again.text.contains("in an earlier session"),
        "{}",
        again.text
    );
    assert!(again.bytes < full.bytes, "{}", again.text);
    // fresh: the full answer, byte for byte.
    let mut fresh = callers.clone();
    fresh.insert("fresh".into(), Value::Bool(true));
    assert_eq!(
        second
            .call("get_symbol_context", &fresh)
            .await
            .unwrap()
            .text,
        full.text
    );
    second.close().await;

    // Another subject of the same organisation, on the same graph: never a reference.
    let other = McpClient::connect(&url, &bob).await.unwrap();
    let theirs = other.call("get_symbol_context", &callers).await.unwrap();
    assert_eq!(theirs.text, full.text);
    other.close().await;

    // The symbol changes and is re-indexed: the next answer is sent in full.
    let path = f.checkout.path().join("server/server.go");
    let source = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        source.replacen(
            "func (s *Server) Serve(",
            "// Serve answers one path.\nfunc (s *Server) Serve(",
            1,
        ),
    )
    .unwrap();
    use codectx::indexing::{self, IndexArgs};
    let args = IndexArgs {
        threads: 2,
        quiet: true,
        ..IndexArgs::embedded(
            f.checkout.path().to_path_buf(),
            "shop".into(),
            f.stack.data.path().to_path_buf(),
        )
    };
    indexing::run(&args, &*f.stack.stack.graph_store)
        .await
        .unwrap();
    let third = McpClient::connect(&url, &alice).await.unwrap();
    let changed = third.call("get_symbol_context", &callers).await.unwrap();
    assert!(!changed.text.contains("unchanged:"), "{}", changed.text);
    assert_ne!(changed.text, full.text);
    third.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compress_keeps_every_problem_and_names_the_kind() {
    let f = start_indexed("go", "shop").await;
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    let agent = McpClient::connect(&url, f.stack.admin_key()).await.unwrap();
    let mut log = String::new();
    for n in 0..400 {
        log.push_str(&format!(
            "2026-12-01T10:{:02}:{:02}Z INFO request id={n} path=/items/{n} status=200 in {}ms\n",
            n / 60,
            n % 60,
            n % 17
        ));
        if n == 123 {
            log.push_str(
                "2026-12-01T10:02:03Z ERROR payment gateway refused the charge: card expired\n",
            );
        }
        if n == 311 {
            log.push_str("2026-12-01T10:05:11Z WARN pool at 90% of its connections\n");
        }
    }
    let out = agent
        .call("compress", &object(json!({"text": log})))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("kind: log (detected)"), "{}", out.text);
    assert!(out.text.contains("card expired"), "{}", out.text);
    assert!(out.text.contains("pool at 90%"), "{}", out.text);
    assert!(out.bytes * 5 < log.len(), "{} of {}", out.bytes, log.len());

    // Over the limit its schema states: an error naming the field, nothing compressed.
    let huge = "x".repeat(256 * 1024 + 1);
    let refused = agent
        .call("compress", &object(json!({"text": huge})))
        .await
        .unwrap();
    assert!(refused.is_error, "{}", refused.text);
    assert!(refused.text.contains("text"), "{}", refused.text);
    agent.close().await;
}
