//! Session dedup through the real MCP path (the gateway over Streamable HTTP): an
//! answer the session already received, unchanged, comes back as a reference to the
//! call that carried it (and, in a later session of the same subject, a reference to
//! that session's answer); `fresh`, a program asking for the JSON, and an answer that
//! changed all get the full text.

use codectx::bench::client::McpClient;
use codectx_tests::start_indexed;
use serde_json::{Map, Value, json};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_unchanged_answer_is_a_reference_and_programs_get_it_in_full() {
    let f = start_indexed("go", "shop").await;
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    let key = f.stack.admin_key().to_owned();
    let card = object(json!({"repository": "shop", "symbol": "Server.Serve"}));

    let agent = McpClient::connect(&url, &key).await.unwrap();
    let first = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(first.text.starts_with("status: ok\n"), "{}", first.text);
    assert!(first.text.contains("server/server.go"), "{}", first.text);
    let second = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(
        second
            .text
            .starts_with("status: ok\nunchanged: the same answer as call 1 (get_symbol_context"),
        "{}",
        second.text
    );
    assert!(second.bytes < first.bytes, "the reference is smaller");

    // `fresh` asks for it in full; the full text is the same as the first time.
    let mut fresh = card.clone();
    fresh.insert("fresh".into(), Value::Bool(true));
    let again = agent.call("get_symbol_context", &fresh).await.unwrap();
    assert_eq!(again.text, first.text);
    // `fresh` must be a boolean, like every argument.
    let mut bad = card.clone();
    bad.insert("fresh".into(), Value::from("yes"));
    let refused = agent.call("get_symbol_context", &bad).await.unwrap();
    assert!(
        refused.is_error && refused.text.contains("fresh"),
        "{}",
        refused.text
    );

    // Snippets are always sent in full.
    let snippet = object(json!({"repository": "shop", "symbol": "NewServer"}));
    let source = agent.call("get_code_snippet", &snippet).await.unwrap();
    let source_again = agent.call("get_code_snippet", &snippet).await.unwrap();
    // (The first, after answers that stated a prefix, says its names are written in
    // full; the line is stated once.)
    assert_eq!(
        source.text.replace("names as written (no prefix)\n", ""),
        source_again.text
    );

    // Memory: an answer that changed is sent in full, never replaced by a reference.
    let recall = object(json!({"repository": "shop", "query": "payments database"}));
    let remember = |facts: Value| {
        object(json!({"repository": "shop", "entity": "Payments database",
                      "type": "database", "facts": facts}))
    };
    let stored = agent
        .call(
            "remember",
            &remember(
                json!([{"predicate": "engine", "object": "PostgreSQL 16 on the primary cluster"}]),
            ),
        )
        .await
        .unwrap();
    assert!(!stored.is_error, "{}", stored.text);
    let before = agent.call("recall", &recall).await.unwrap();
    agent
        .call(
            "remember",
            &remember(
                json!([{"predicate": "replicas", "object": "three read replicas in two zones"}]),
            ),
        )
        .await
        .unwrap();
    let after = agent.call("recall", &recall).await.unwrap();
    assert!(!after.text.contains("unchanged:"), "{}", after.text);
    assert_ne!(before.text, after.text);
    agent.close().await;

    // Another session of the same subject: the unchanged answer is a cross-session
    // reference (tests/tests/compression.rs covers who may receive one); `fresh` gives
    // the full text.
    let other = McpClient::connect(&url, &key).await.unwrap();
    let reference = other.call("get_symbol_context", &card).await.unwrap();
    assert!(
        reference.text.contains("in an earlier session"),
        "{}",
        reference.text
    );
    let full = other.call("get_symbol_context", &fresh).await.unwrap();
    assert_eq!(full.text, first.text);
    other.close().await;

    // A program asking for the JSON always gets the full, uncompressed answer.
    let program = McpClient::connect_structured(&url, &key).await.unwrap();
    let mut texts = Vec::new();
    for _ in 0..2 {
        let answer = program.call("get_symbol_context", &card).await.unwrap();
        assert!(answer.structured.is_some());
        assert!(!answer.text.contains("unchanged:"), "{}", answer.text);
        assert!(!answer.text.contains("compressed:"), "{}", answer.text);
        texts.push(answer.text);
    }
    assert_eq!(texts[0], texts[1]);
    program.close().await;
}
