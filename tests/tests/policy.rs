//! The repository policy's annotations in answers: symbol context, search and PR context
//! show a note on the symbols and files it covers, and nowhere else (not on neighbours,
//! not on other files); every code answer names the graph it was read from.

use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_proto::assembler::v1 as pb;
use codectx_tests::start_indexed_with;
use serde_json::Value;

const STORE_NOTE: &str = "store/ is the persistence boundary: writes go through DB only.";
const CONSTRUCTOR_NOTE: &str = "Construct servers with NewServer only.";

fn policy(root: &std::path::Path) {
    std::fs::write(
        root.join(".codectx.yaml"),
        format!(
            "annotations:\n  - path: store/\n    note: \"{STORE_NOTE}\"\n  - symbol: NewServer\n    note: {CONSTRUCTOR_NOTE}\n"
        ),
    )
    .unwrap();
}

fn json(answer: &pb::ContextAnswer) -> Value {
    serde_json::from_str(&answer.json).unwrap()
}

/// The notes of each entry (and of each changed symbol's callers), by qualified name.
fn notes_by_entry(answer: &Value) -> Vec<(String, Vec<String>)> {
    answer["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let notes = e["notes"]
                .as_array()
                .map(|n| n.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            (e["qualified_name"].as_str().unwrap_or("").to_owned(), notes)
        })
        .collect()
}

/// How often a note appears anywhere in the answer.
fn count(answer: &pb::ContextAnswer, note: &str) -> usize {
    answer.json.matches(note).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn annotations_reach_the_answers_that_touch_them_and_no_others() {
    let f = start_indexed_with("go", "shop", policy).await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let c = &f.context;
    let symbol = |name: &str| pb::SymbolContextRequest {
        symbol: name.into(),
        ..Default::default()
    };

    // A symbol in store/: its entry carries the path note, once.
    let get = assembler.symbol_context(c, symbol("DB.Get")).await.unwrap();
    let entries = notes_by_entry(&json(&get));
    assert_eq!(entries[0].1, [STORE_NOTE], "{}", get.json);
    assert_eq!(count(&get, STORE_NOTE), 1);
    assert_eq!(count(&get, CONSTRUCTOR_NOTE), 0);
    let text = codectx_gateway::render::render(&json(&get));
    assert!(text.contains(&format!("  note: {STORE_NOTE}")), "{text}");

    // A symbol in server/ that calls into store/: no note; its store/ callee is a
    // neighbour, and neighbours carry none.
    let serve = assembler
        .symbol_context(c, symbol("Server.Serve"))
        .await
        .unwrap();
    assert!(serve.json.contains("Get"), "{}", serve.json);
    assert_eq!(count(&serve, STORE_NOTE), 0, "{}", serve.json);
    assert_eq!(count(&serve, CONSTRUCTOR_NOTE), 0);

    // A symbol selector: that symbol only.
    let new_server = assembler
        .symbol_context(c, symbol("NewServer"))
        .await
        .unwrap();
    assert_eq!(notes_by_entry(&json(&new_server))[0].1, [CONSTRUCTOR_NOTE]);
    assert_eq!(count(&new_server, STORE_NOTE), 0);

    // Search: each result by its own path and name.
    let search = assembler
        .search(
            c,
            pb::SearchRequest {
                query: "server store serve".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let value = json(&search);
    let results = notes_by_entry(&value);
    assert!(results.len() > 2, "{}", search.json);
    for (entry, (name, notes)) in value["entries"].as_array().unwrap().iter().zip(&results) {
        let path = entry["path"].as_str().unwrap_or("");
        let mut expected: Vec<&str> = Vec::new();
        if path.starts_with("store/") {
            expected.push(STORE_NOTE);
        }
        if name.ends_with(".NewServer") {
            expected.push(CONSTRUCTOR_NOTE);
        }
        assert_eq!(notes, &expected, "{name} at {path}");
    }
    assert!(
        results.iter().any(|(_, n)| !n.is_empty()),
        "{}",
        search.json
    );

    // PR context: the changed symbols of a store/ file carry the note; their callers in
    // server/ do not.
    let pr = |path: &str| pb::PrContextRequest {
        change: Some(pb::pr_context_request::Change::Files(pb::PathList {
            paths: vec![path.into()],
        })),
        max_tokens: 0,
    };
    let changed = assembler.pr_context(c, pr("store/store.go")).await.unwrap();
    let value = json(&changed);
    let entries = notes_by_entry(&value);
    assert!(!entries.is_empty());
    for (name, notes) in &entries {
        assert_eq!(notes, &[STORE_NOTE], "{name}");
    }
    assert_eq!(
        count(&changed, STORE_NOTE),
        entries.len(),
        "{}",
        changed.json
    );
    let changed = assembler
        .pr_context(c, pr("server/server.go"))
        .await
        .unwrap();
    assert_eq!(count(&changed, STORE_NOTE), 0, "{}", changed.json);
    assert_eq!(count(&changed, CONSTRUCTOR_NOTE), 1, "{}", changed.json);

    // Every code answer names the graph it was read from, and none is stale.
    for answer in [&get, &serve, &search, &changed] {
        let index = &json(answer)["index"];
        assert!(
            index["version"].as_str().is_some_and(|v| v.len() == 12),
            "{index}"
        );
        assert!(index.get("stale").is_none(), "{index}");
    }
    // describe_repository states the policy.
    let described = json(
        &assembler
            .describe_repository(c, pb::DescribeRepositoryRequest {})
            .await
            .unwrap(),
    );
    assert_eq!(described["repository"]["annotations"], 2);
    assert_eq!(
        described["repository"]["policy_fingerprint"]
            .as_str()
            .unwrap()
            .len(),
        32
    );
}
