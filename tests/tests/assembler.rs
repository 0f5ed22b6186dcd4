//! context-assembler end to end on the Go fixture: symbol context, call graph and search
//! answers, their statuses, token estimates and budgets.

use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_proto::assembler::v1 as pb;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tests::start_indexed;
use serde_json::Value;

fn parse(answer: &pb::ContextAnswer) -> Value {
    let value: Value = serde_json::from_str(&answer.json).unwrap();
    // The estimate is ceil(bytes / 4) of the complete JSON, counting itself.
    assert_eq!(
        answer.tokens as usize,
        answer.json.len().div_ceil(4),
        "{}",
        answer.json
    );
    assert_eq!(value["tokens"], answer.tokens);
    value
}

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["qualified_name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symbol_context_call_graph_and_search() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();

    let answer = assembler
        .symbol_context(
            &f.context,
            pb::SymbolContextRequest {
                symbol: "Server.Serve".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    let entry = &value["entries"][0];
    assert_eq!(
        entry["qualified_name"],
        "example.com/shop/server.(*Server).Serve"
    );
    assert_eq!(entry["path"], "server/server.go");
    assert_eq!(entry["lines"], serde_json::json!([26, 35]));
    // TestServe calls Serve too: it is listed once, under tests, and the omission says so.
    assert_eq!(
        names(&entry["callers"]),
        vec!["example.com/shop/server.Run"]
    );
    assert_eq!(
        names(&entry["tests"]),
        vec!["example.com/shop/server.TestServe"]
    );
    assert!(
        value["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["reason"] == "listed_under_tests" && o["count"] == 1),
        "{value}"
    );
    assert!(entry.get("id").is_none(), "ids only when asked for");

    // Two symbols named Serve: ambiguous, with candidates to pick from.
    let answer = assembler
        .symbol_context(
            &f.context,
            pb::SymbolContextRequest {
                symbol: "Serve".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ambiguous);
    // (*Server).Serve, (*DB).Serve and the Handler interface's Serve.
    assert_eq!(parse(&answer)["candidates"].as_array().unwrap().len(), 3);
    // Nothing: not_found, no entries, a bounded suggestion.
    let answer = assembler
        .symbol_context(
            &f.context,
            pb::SymbolContextRequest {
                symbol: "NoSuchThing".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);
    let value = parse(&answer);
    assert!(value["entries"].as_array().unwrap().is_empty());
    assert!(value["suggestion"].as_str().is_some());

    // A tight budget drops detail and lists it.
    let answer = assembler
        .symbol_context(
            &f.context,
            pb::SymbolContextRequest {
                symbol: "Server.Serve".into(),
                max_tokens: 256,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let value = parse(&answer);
    assert!(answer.tokens <= 256, "{}", answer.tokens);
    if answer.status() == AnswerStatus::Ok {
        assert!(!value["omitted"].as_array().unwrap().is_empty(), "{value}");
    } else {
        assert_eq!(answer.status(), AnswerStatus::BudgetExceeded);
    }

    let answer = assembler
        .call_graph(
            &f.context,
            pb::CallGraphRequest {
                symbol: "server.Run".into(),
                direction: pb::CallDirection::Callees as i32,
                depth: 1,
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    let value = parse(&answer);
    let callees = names(&value["entries"][0]["callees"]);
    assert!(
        callees.contains(&"example.com/shop/server.NewServer".to_owned()),
        "{callees:?}"
    );
    assert!(value["entries"][0].get("callers").is_none());

    let answer = assembler
        .search(
            &f.context,
            pb::SearchRequest {
                query: "new server".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let value = parse(&answer);
    assert_eq!(
        value["entries"][0]["qualified_name"],
        "example.com/shop/server.NewServer"
    );
    assert!(value["entries"].as_array().unwrap().len() <= 8);
    let answer = assembler
        .search(
            &f.context,
            pb::SearchRequest {
                query: "zzzqqq".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);
    assert!(parse(&answer)["entries"].as_array().unwrap().is_empty());
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_context_for_a_task() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let task = |task: &str, max_tokens: u32| pb::MinimalContextRequest {
        task: task.into(),
        max_tokens,
    };

    // The named symbol is the subject, with its callers; the default budget is 1,500.
    let answer = assembler
        .minimal_context(&f.context, task("add a timeout option to NewServer", 0))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    assert!(answer.tokens <= 1_500);
    let subject = &value["entries"][0];
    assert_eq!(
        subject["qualified_name"],
        "example.com/shop/server.NewServer"
    );
    assert_eq!(subject["path"], "server/server.go");
    assert_eq!(
        names(&subject["callers"]),
        vec![
            "example.com/shop/server.Run",
            "example.com/shop/server.TestServe"
        ]
    );
    assert!(
        subject["found_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "exact")
    );
    assert!(
        value["next"]
            .as_str()
            .unwrap()
            .contains("get_symbol_context")
    );
    assert!(value["related"].as_array().unwrap().len() <= 7);

    // The smallest budget sheds related symbols and relations first, and lists them.
    let wide = assembler
        .minimal_context(
            &f.context,
            task("server serve store open get render format", 0),
        )
        .await
        .unwrap();
    let wide_value = parse(&wide);
    assert!(!wide_value["related"].as_array().unwrap().is_empty());
    let narrow = assembler
        .minimal_context(
            &f.context,
            task("server serve store open get render format", 1),
        )
        .await
        .unwrap();
    let narrow_value = parse(&narrow);
    assert!(narrow.tokens <= 256, "{}", narrow.json);
    assert_eq!(narrow_value["status"], "ok");
    assert!(
        narrow_value["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["what"] == "related symbols" && o["reason"] == "budget"),
        "{}",
        narrow.json
    );

    // No match: not_found with a bounded suggestion, no dump.
    let answer = assembler
        .minimal_context(&f.context, task("zzzqqq", 0))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);
    let value = parse(&answer);
    assert!(value["entries"].as_array().unwrap().is_empty());
    assert!(value["suggestion"].as_str().unwrap().len() < 200);

    // A 9 KiB task is refused, naming the limit.
    let error = assembler
        .minimal_context(&f.context, task(&"word ".repeat(9 * 1024 / 5), 0))
        .await
        .unwrap_err();
    assert_eq!(error.field(), "task");
    assert_eq!(error.limit(), Some(8 * 1024));
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_snippets_are_verified_and_fail_closed() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let by_symbol = |symbol: &str, fingerprint: &str| pb::CodeSnippetRequest {
        target: Some(pb::code_snippet_request::Target::Symbol(symbol.into())),
        fingerprint: fingerprint.into(),
    };

    let answer = assembler
        .code_snippet(&f.context, by_symbol("NewServer", ""))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok);
    let value = parse(&answer);
    let entry = &value["entries"][0];
    assert_eq!(entry["qualified_name"], "example.com/shop/server.NewServer");
    assert_eq!(
        entry["text"],
        "func NewServer(db *store.DB) *Server {\n\treturn &Server{db: db}\n}\n"
    );
    let fingerprint = entry["fingerprint"].as_str().unwrap().to_owned();

    // By the opaque id an earlier answer gave, with the fingerprint held.
    let card = assembler
        .symbol_context(
            &f.context,
            pb::SymbolContextRequest {
                symbol: "NewServer".into(),
                include_ids: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let id = parse(&card)["entries"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = assembler
        .code_snippet(
            &f.context,
            pb::CodeSnippetRequest {
                target: Some(pb::code_snippet_request::Target::Id(id.clone())),
                fingerprint: fingerprint.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(parse(&answer)["entries"][0]["text"], entry["text"]);

    // Ambiguous and unknown selectors answer without source.
    let answer = assembler
        .code_snippet(&f.context, by_symbol("Serve", ""))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ambiguous);
    assert!(!answer.json.contains("func "));
    let answer = assembler
        .code_snippet(&f.context, by_symbol("NoSuchThing", ""))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);

    // A fingerprint the caller holds from an older index fails closed.
    let error = assembler
        .code_snippet(&f.context, by_symbol("NewServer", "0000"))
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "stale");
    // The checkout changes under the index: stale too, with no source in the error.
    let path = f.checkout.path().join("server/server.go");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("&Server{db: db}", "&Server{db: nil}")).unwrap();
    let error = assembler
        .code_snippet(&f.context, by_symbol("NewServer", &fingerprint))
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "stale");
    assert!(!error.message().contains("Server{"));

    // No target is a clear error.
    let error = assembler
        .code_snippet(
            &f.context,
            pb::CodeSnippetRequest {
                target: None,
                fingerprint: String::new(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.field(), "target");

    // The checkout is gone: stale, and the error never names where it was on the server.
    let checkout = f.checkout.path().canonicalize().unwrap();
    std::fs::remove_dir_all(&checkout).unwrap();
    let error = assembler
        .code_snippet(&f.context, by_symbol("NewServer", ""))
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "stale");
    let shown = checkout.display().to_string();
    assert!(!error.message().contains(&shown), "{}", error.message());
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pr_context_names_the_blast_radius() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let diff = |text: &str, max_tokens: u32| pb::PrContextRequest {
        change: Some(pb::pr_context_request::Change::Diff(text.into())),
        max_tokens,
    };
    let files = |paths: Vec<String>, max_tokens: u32| pb::PrContextRequest {
        change: Some(pb::pr_context_request::Change::Files(pb::PathList {
            paths,
        })),
        max_tokens,
    };

    let change = "--- a/server/server.go\n+++ b/server/server.go\n@@ -21,3 +21,3 @@\n func NewServer(db *store.DB) *Server {\n-\treturn &Server{db: db}\n+\treturn &Server{db: db} // changed\n }\n";
    let answer = assembler
        .pr_context(&f.context, diff(change, 0))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok, "{}", answer.json);
    let value = parse(&answer);
    let entries = value["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{value}");
    assert_eq!(
        entries[0]["qualified_name"],
        "example.com/shop/server.NewServer"
    );
    assert_eq!(
        names(&entries[0]["callers"]),
        vec!["example.com/shop/server.Run"]
    );
    assert_eq!(
        names(&entries[0]["tests"]),
        vec!["example.com/shop/server.TestServe"]
    );

    // Whole files: every symbol in them; a small budget sheds callers first and says so.
    let wide = assembler
        .pr_context(&f.context, files(vec!["server/server.go".into()], 0))
        .await
        .unwrap();
    let wide_value = parse(&wide);
    assert!(wide_value["entries"].as_array().unwrap().len() > 3);
    let narrow = assembler
        .pr_context(&f.context, files(vec!["server/server.go".into()], 256))
        .await
        .unwrap();
    assert!(narrow.tokens <= 256, "{}", narrow.json);
    let narrow_value = parse(&narrow);
    assert_eq!(narrow_value["status"], "ok", "{}", narrow.json);
    assert!(
        narrow_value["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["what"] == "callers of changed symbols"),
        "{}",
        narrow.json
    );

    // Paths the graph does not know: not_found, naming them.
    let answer = assembler
        .pr_context(&f.context, files(vec!["nope/missing.go".into()], 0))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::NotFound);
    assert_eq!(
        parse(&answer)["unknown_paths"],
        serde_json::json!(["nope/missing.go"])
    );

    // Oversize input is refused, naming the limit.
    let error = assembler
        .pr_context(
            &f.context,
            files((0..101).map(|i| format!("f{i}.go")).collect(), 0),
        )
        .await
        .unwrap_err();
    assert_eq!(error.field(), "files");
    assert_eq!(error.limit(), Some(100));
    // 5 MiB of diff passes transport and meets the typed check.
    let big = format!("{change}{}", "+x\n".repeat(5 * 1024 * 1024 / 3));
    let error = assembler
        .pr_context(&f.context, diff(&big, 0))
        .await
        .unwrap_err();
    assert_eq!(error.field(), "diff");
    assert_eq!(error.limit(), Some(4 * 1024 * 1024));
    assert!(error.message().contains("4,194,304"), "{}", error.message());
    let error = assembler
        .pr_context(&f.context, diff("", 0))
        .await
        .unwrap_err();
    assert_eq!(error.field(), "diff");
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budget_exceeded_when_the_subject_cannot_fit() {
    // The fixture's module path is over 1 KiB, so the card alone needs more than 256
    // tokens.
    let f = start_indexed("deep", "deep").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let request = |max_tokens: u32| pb::SymbolContextRequest {
        symbol: "Leaf".into(),
        max_tokens,
        ..Default::default()
    };
    let answer = assembler
        .symbol_context(&f.context, request(256))
        .await
        .unwrap();
    assert_eq!(
        answer.status(),
        AnswerStatus::BudgetExceeded,
        "{}",
        answer.json
    );
    let value = parse(&answer);
    assert!(value["entries"].as_array().unwrap().is_empty());
    assert!(value["message"].as_str().unwrap().contains("max_tokens"));
    assert!(answer.tokens <= 256);
    // The default budget holds it.
    let answer = assembler
        .symbol_context(&f.context, request(0))
        .await
        .unwrap();
    assert_eq!(answer.status(), AnswerStatus::Ok, "{}", answer.json);
    f.stack.stack.stop().await.unwrap();
}
