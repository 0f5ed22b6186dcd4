//! graph-hydrator end to end: a fixture repository is indexed into the stack's data
//! directory, `codectx up`'s stack gives the development subject access to it, and the
//! code RPCs answer through real gRPC with contexts minted by authz.

use codectx::stack::ServiceKind;
use codectx_clients::{GraphClient, PeerConfig};
use codectx_proto::authz::v1 as authz_pb;
use codectx_proto::graph::v1 as pb;
use codectx_proto::lexical::v1::ScopeKind;
use codectx_tenant::{Scope, TenantContext};
use codectx_tests::{TestStack, authorize, create_tenant, start_indexed};
use tonic::Code;

struct Fixture {
    stack: TestStack,
    checkout: tempfile::TempDir,
    graph: GraphClient,
    context: TenantContext,
}

async fn start() -> Fixture {
    let indexed = start_indexed("go", "shop").await;
    let graph = GraphClient::connect(&PeerConfig::single(
        indexed.stack.endpoint(ServiceKind::GraphHydrator),
    ))
    .unwrap();
    Fixture {
        stack: indexed.stack,
        checkout: indexed.checkout,
        graph,
        context: indexed.context,
    }
}

async fn lookup_one(f: &Fixture, selector: &str) -> pb::SymbolCard {
    let found = f
        .graph
        .lookup_symbols(
            &f.context,
            pb::LookupSymbolsRequest {
                selector: selector.into(),
                kinds: vec![],
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!(found.matches.len(), 1, "{selector}: {:?}", found.matches);
    found.matches.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_rpcs_answer_from_the_indexed_graph() {
    let f = start().await;
    let serve = lookup_one(&f, "Server.Serve").await;
    assert_eq!(
        serve.qualified_name,
        "example.com/shop/server.(*Server).Serve"
    );
    assert_eq!(serve.span.as_ref().unwrap().path, "server/server.go");

    // Callers, depth 1.
    let callers = f
        .graph
        .get_call_graph(
            &f.context,
            pb::GetCallGraphRequest {
                symbol_id: serve.id.clone(),
                direction: pb::Direction::Incoming as i32,
                depth: 1,
                limit_per_direction: 10,
            },
        )
        .await
        .unwrap();
    let mut names: Vec<String> = callers.expansions[0]
        .neighbors
        .iter()
        .map(|n| n.card.as_ref().unwrap().qualified_name.clone())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "example.com/shop/server.Run",
            "example.com/shop/server.TestServe"
        ]
    );

    // Implementations and tests.
    let handler = lookup_one(&f, "server.Handler").await;
    let implementations = f
        .graph
        .get_implementations(
            &f.context,
            pb::SymbolRelationRequest {
                symbol_id: handler.id,
                limit: 10,
            },
        )
        .await
        .unwrap();
    // *Server, *DB and Cached (through its embedded *DB).
    assert_eq!(implementations.expansions[0].neighbors.len(), 3);
    let tests = f
        .graph
        .get_tests(
            &f.context,
            pb::SymbolRelationRequest {
                symbol_id: serve.id.clone(),
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        tests.expansions[0].neighbors[0].card.as_ref().unwrap().name,
        "TestServe"
    );

    // Outline and change impact of a diff touching Serve's body.
    let outline = f
        .graph
        .get_file_outline(
            &f.context,
            pb::GetFileOutlineRequest {
                path: "store/store.go".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        outline
            .symbols
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        vec!["MaxItems", "DB", "Open", "Get", "Serve", "Cached"]
    );
    let diff = "--- a/server/server.go\n+++ b/server/server.go\n@@ -29,1 +29,1 @@\n-\t}\n+\t} // changed\n";
    let impact = f
        .graph
        .get_change_impact(
            &f.context,
            pb::GetChangeImpactRequest {
                change: Some(pb::get_change_impact_request::Change::Diff(diff.into())),
                limit_per_symbol: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!(impact.changed.len(), 1);
    assert_eq!(impact.changed[0].symbol.as_ref().unwrap().id, serve.id);
    assert_eq!(impact.changed[0].callers.len(), 2);
    assert_eq!(impact.changed[0].tests.len(), 1);

    // The lexical corpus stream carries symbols and error messages with a version.
    let mut stream = f
        .graph
        .stream_lexical_corpus(
            &f.context,
            pb::StreamLexicalCorpusRequest {
                scope: ScopeKind::Code as i32,
                with_neighbours: true,
            },
        )
        .await
        .unwrap();
    let mut entries = Vec::new();
    let mut version = String::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        version = chunk.version;
        entries.extend(chunk.entries);
    }
    assert!(!version.is_empty());
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.kind != "error_message" && e.kind != "string")
            .count(),
        // 17 symbols and the Handler interface's method.
        18
    );
    // String literals (the tests' messages) travel as exact-only entries.
    let mut literals: Vec<&str> = entries
        .iter()
        .filter(|e| e.kind == "string")
        .map(|e| e.name.as_str())
        .collect();
    literals.sort();
    assert_eq!(literals, vec!["Open returned nil", "want error"]);
    assert!(
        entries
            .iter()
            .any(|e| e.error_messages == vec!["store is over capacity".to_owned()])
    );
    // With neighbours: what a function calls, in call order, resolved only (fmt.Println
    // is outside the graph); doc prose; test code marked.
    let entry = |qualified: &str| {
        entries
            .iter()
            .find(|e| e.qualified_name == qualified)
            .unwrap_or_else(|| panic!("{qualified} in the corpus"))
    };
    let run = entry("example.com/shop/server.Run");
    assert_eq!(run.uses, ["Open", "NewServer", "Serve", "Name"]);
    assert_eq!(run.doc, "Run starts a server and serves one path.");
    assert!(!run.in_tests);
    assert!(
        entries
            .iter()
            .any(|e| e.in_tests && e.name.starts_with("Test"))
    );
    // Every symbol of a test file is test code; nothing else is.
    assert!(
        entries
            .iter()
            .filter(|e| e.kind == "function" || e.kind == "method")
            .all(|e| e.in_tests == e.name.starts_with("Test"))
    );
    let current = f
        .graph
        .get_corpus_version(
            &f.context,
            pb::GetCorpusVersionRequest {
                scope: ScopeKind::Code as i32,
            },
        )
        .await
        .unwrap();
    assert_eq!(current.version, version);
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snippets_are_verified_and_fail_closed_when_stale() {
    let f = start().await;
    let format = lookup_one(&f, "server.format").await;
    let snippet = f
        .graph
        .read_snippet(
            &f.context,
            pb::ReadSnippetRequest {
                symbol_id: format.id.clone(),
                fingerprint: format.fingerprint.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        snippet.text,
        "func format(item string) string {\n\treturn \"<\" + item + \">\"\n}\n"
    );
    // A fingerprint the caller holds that no longer matches: stale.
    let old = f
        .graph
        .read_snippet(
            &f.context,
            pb::ReadSnippetRequest {
                symbol_id: format.id.clone(),
                fingerprint: "0000".into(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(old.reason(), "stale");
    // The checkout changes under the index: the span no longer hashes the same.
    let path = f.checkout.path().join("server/server.go");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("// moved\n{text}")).unwrap();
    let stale = f
        .graph
        .read_snippet(
            &f.context,
            pb::ReadSnippetRequest {
                symbol_id: format.id.clone(),
                fingerprint: String::new(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(stale.reason(), "stale");
    assert_eq!(stale.to_status().code(), Code::FailedPrecondition);
    assert!(
        !stale.message().contains("return"),
        "a stale error carries no source text"
    );
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_is_scoped_to_the_context_graph() {
    let f = start().await;
    let serve = lookup_one(&f, "Server.Serve").await;
    // Another tenant, whose entry names another graph: the same selector and even the
    // same id find nothing.
    let other = create_tenant(&f.stack, "other", "other/api").await.unwrap();
    let authorized = authorize(&f.stack, &other.api_key, "other/api")
        .await
        .unwrap();
    let foreign = f
        .stack
        .stack
        .verifier
        .verify(&authorized.signed_context)
        .unwrap();
    let found = f
        .graph
        .lookup_symbols(
            &foreign,
            pb::LookupSymbolsRequest {
                selector: "Server.Serve".into(),
                kinds: vec![],
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert!(found.matches.is_empty());
    let cards = f
        .graph
        .get_symbol_cards(
            &foreign,
            pb::GetSymbolCardsRequest {
                ids: vec![serve.id.clone()],
            },
        )
        .await
        .unwrap();
    assert!(cards.cards.is_empty());
    assert_eq!(cards.missing, vec![serve.id.clone()]);
    // A batch of expansions reads the caller's graph only, each like Expand, and is capped.
    let relation = |kind: pb::EdgeKind| pb::ExpandRequest {
        ids: vec![serve.id.clone()],
        edge_kinds: vec![kind as i32],
        direction: pb::Direction::Both as i32,
        depth: 1,
        limit_per_direction: 10,
    };
    let own = f
        .graph
        .expand_batch(
            &f.context,
            pb::ExpandBatchRequest {
                requests: vec![
                    relation(pb::EdgeKind::Calls),
                    relation(pb::EdgeKind::TestedBy),
                ],
            },
        )
        .await
        .unwrap();
    assert_eq!(own.responses.len(), 2);
    assert!(!own.responses[0].expansions[0].neighbors.is_empty());
    let batch = f
        .graph
        .expand_batch(
            &foreign,
            pb::ExpandBatchRequest {
                requests: vec![
                    relation(pb::EdgeKind::Calls),
                    relation(pb::EdgeKind::TestedBy),
                ],
            },
        )
        .await
        .unwrap();
    for response in &batch.responses {
        assert!(response.expansions.is_empty());
        assert_eq!(response.missing, vec![serve.id.clone()]);
    }
    let too_many = f
        .graph
        .expand_batch(
            &f.context,
            pb::ExpandBatchRequest {
                requests: vec![relation(pb::EdgeKind::Calls); 17],
            },
        )
        .await
        .unwrap_err();
    assert_eq!(too_many.to_status().code(), Code::InvalidArgument);
    assert!(too_many.to_string().contains("16"), "{too_many}");
    let snippet = f
        .graph
        .read_snippet(
            &foreign,
            pb::ReadSnippetRequest {
                symbol_id: serve.id.clone(),
                fingerprint: String::new(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(snippet.to_status().code(), Code::NotFound);

    // A session context narrowed to memory scopes cannot read code.
    let session = f
        .stack
        .authz()
        .derive_session_context(
            &f.context,
            authz_pb::DeriveSessionContextRequest {
                scopes: vec![Scope::ReadMemory.to_proto() as i32],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let memory_only = f
        .stack
        .stack
        .verifier
        .verify(&session.signed_context)
        .unwrap();
    let denied = f
        .graph
        .lookup_symbols(
            &memory_only,
            pb::LookupSymbolsRequest {
                selector: "Serve".into(),
                kinds: vec![],
                limit: 10,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(denied.to_status().code(), Code::PermissionDenied);

    // Caps are enforced with the limit named.
    let too_many = f
        .graph
        .get_symbol_cards(
            &f.context,
            pb::GetSymbolCardsRequest {
                ids: vec!["x".into(); 101],
            },
        )
        .await
        .unwrap_err();
    assert_eq!(too_many.limit(), Some(100));
    let bad_kind = f
        .graph
        .lookup_symbols(
            &f.context,
            pb::LookupSymbolsRequest {
                selector: "Serve".into(),
                kinds: vec!["widget".into()],
                limit: 10,
            },
        )
        .await
        .unwrap_err();
    assert!(
        bad_kind.message().contains("unknown kind"),
        "{}",
        bad_kind.message()
    );
    f.stack.stack.stop().await.unwrap();
}
