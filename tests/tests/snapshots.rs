//! Snapshot tests (insta): the MCP tool list, and one assembled answer per tool on the Go
//! fixture, as JSON (for programs) and as the compact text a model reads. A change to a tool's contract or an answer's shape shows up as a snapshot
//! diff to review (`INSTA_UPDATE=always cargo test --test snapshots` rewrites them).

use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_proto::assembler::v1 as pb;
use codectx_tests::start_indexed;
use serde_json::Value;

/// The answer's JSON, with the graph's index (its content version: a hash of every
/// owner the indexer wrote) redacted: it is checked in its own test, and would otherwise
/// change every snapshot whenever any extraction detail changes.
fn json(answer: &pb::ContextAnswer) -> Value {
    let mut value: Value = serde_json::from_str(&answer.json).unwrap();
    if let Some(index) = value.get_mut("index").and_then(Value::as_object_mut) {
        for key in ["commit", "version"] {
            if index.contains_key(key) {
                index.insert(key.into(), Value::from("[index]"));
            }
        }
    }
    value
}

/// The text a model reads at each compression level (each capped as the tool is).
fn levels(tool: &str, answer: &Value) -> String {
    use codectx_compress::{Level, Tool};
    let tool = Tool::from_name(tool).expect("a compressed tool");
    let mut out = String::new();
    for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
        let level = level.min(tool.cap());
        out.push_str(&format!("== {level}\n"));
        out.push_str(&codectx_gateway::render::render(
            &codectx_compress::tools::compress(tool, level, answer),
        ));
    }
    out
}

#[test]
fn tool_list() {
    let tools: Vec<Value> = codectx_gateway::mcp::tools()
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    insta::assert_json_snapshot!(tools);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_answer_per_tool() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let c = &f.context;

    let answer = assembler
        .minimal_context(
            c,
            pb::MinimalContextRequest {
                task: "add a timeout option to NewServer".into(),
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("minimal_context", json(&answer));
    insta::assert_snapshot!(
        "minimal_context_text",
        codectx_gateway::render::render(&json(&answer))
    );
    insta::assert_snapshot!(
        "minimal_context_levels",
        levels("minimal_context", &json(&answer))
    );

    let answer = assembler
        .describe_repository(c, pb::DescribeRepositoryRequest {})
        .await
        .unwrap();
    let mut value = json(&answer);
    // The commit and time of the fixture's index run are not part of the contract.
    value["repository"]["indexed_at"] = Value::from("[time]");
    value["repository"]["commit"] = Value::from("[commit]");
    value["repository"]["version"] = Value::from("[version]");
    value["repository"]["policy_fingerprint"] = Value::from("[policy]");
    insta::assert_json_snapshot!("describe_repository", value);
    insta::assert_snapshot!(
        "describe_repository_text",
        codectx_gateway::render::render(&value)
    );

    let answer = assembler
        .search(
            c,
            pb::SearchRequest {
                query: "new server".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("search", json(&answer));
    insta::assert_snapshot!(
        "search_text",
        codectx_gateway::render::render(&json(&answer))
    );
    insta::assert_snapshot!("search_levels", levels("search", &json(&answer)));

    let answer = assembler
        .symbol_context(
            c,
            pb::SymbolContextRequest {
                symbol: "Server.Serve".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("get_symbol_context", json(&answer));
    insta::assert_snapshot!(
        "get_symbol_context_text",
        codectx_gateway::render::render(&json(&answer))
    );
    insta::assert_snapshot!(
        "get_symbol_context_levels",
        levels("get_symbol_context", &json(&answer))
    );

    let answer = assembler
        .call_graph(
            c,
            pb::CallGraphRequest {
                symbol: "NewServer".into(),
                direction: pb::CallDirection::Callers as i32,
                depth: 2,
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("get_call_graph", json(&answer));
    insta::assert_snapshot!(
        "get_call_graph_text",
        codectx_gateway::render::render(&json(&answer))
    );
    insta::assert_snapshot!(
        "get_call_graph_levels",
        levels("get_call_graph", &json(&answer))
    );

    let answer = assembler
        .pr_context(
            c,
            pb::PrContextRequest {
                change: Some(pb::pr_context_request::Change::Files(pb::PathList {
                    paths: vec!["store/store.go".into()],
                })),
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("get_pr_context", json(&answer));
    insta::assert_snapshot!(
        "get_pr_context_text",
        codectx_gateway::render::render(&json(&answer))
    );
    insta::assert_snapshot!(
        "get_pr_context_levels",
        levels("get_pr_context", &json(&answer))
    );

    let answer = assembler
        .code_snippet(
            c,
            pb::CodeSnippetRequest {
                target: Some(pb::code_snippet_request::Target::Symbol("NewServer".into())),
                fingerprint: String::new(),
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("get_code_snippet", json(&answer));
    insta::assert_snapshot!(
        "get_code_snippet_text",
        codectx_gateway::render::render(&json(&answer))
    );

    let answer = assembler
        .remember(
            c,
            pb::RememberRequest {
                entity: "Payments service".into(),
                r#type: "service".into(),
                aliases: vec!["billing engine".into()],
                facts: vec![pb::FactInput {
                    predicate: "owned_by".into(),
                    object: "Team Ledger".into(),
                    subject: String::new(),
                }],
                source_client: "snapshot".into(),
            },
        )
        .await
        .unwrap();
    let mut value = json(&answer);
    // Whether the vector was stored depends on the model being loaded yet.
    value["embedding"] = Value::from("[stored or pending]");
    value["tokens"] = Value::from("[tokens]");
    insta::assert_snapshot!("remember_text", codectx_gateway::render::render(&value));
    insta::assert_json_snapshot!("remember", value);

    let answer = assembler
        .recall(
            c,
            pb::RecallRequest {
                query: "billing engine".into(),
                max_entries: 0,
                hops: 0,
            },
        )
        .await
        .unwrap();
    let mut value = json(&answer);
    // The dense leg may or may not have the vector yet (see above); its finding is not
    // part of this snapshot (tests/tests/recall.rs checks it).
    value["entries"][0]["found_by"] = Value::from("[legs]");
    value["tokens"] = Value::from("[tokens]");
    value["provenance"]["degraded"] = Value::from("[degraded]");
    insta::assert_snapshot!("recall_text", codectx_gateway::render::render(&value));
    insta::assert_snapshot!("recall_levels", levels("recall", &value));
    insta::assert_json_snapshot!("recall", value);

    let answer = assembler
        .forget(
            c,
            pb::ForgetRequest {
                entity: "billing engine".into(),
            },
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("forget", json(&answer));
    insta::assert_snapshot!(
        "forget_text",
        codectx_gateway::render::render(&json(&answer))
    );
    f.stack.stack.stop().await.unwrap();
}
