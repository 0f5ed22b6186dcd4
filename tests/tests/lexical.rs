//! lexical-ranker end to end: its corpus comes from graph-hydrator's stream for the
//! context's graph, exact matches come first, and a re-index replaces the cached index.

use codectx::stack::ServiceKind;
use codectx_clients::{LexicalClient, PeerConfig};
use codectx_errors::ErrorKind;
use codectx_proto::lexical::v1::{self as pb, MatchedField, ScopeKind};
use codectx_tests::{authorize, create_tenant, start_indexed};
use tonic::Code;

/// Appends `code` to the shop fixture's `store/store.go` and re-indexes it in place (the
/// corpus gets a new version).
async fn append_and_reindex(f: &codectx_tests::IndexedStack, code: &str) {
    let path = f.checkout.path().join("store/store.go");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}{code}")).unwrap();
    let args = codectx::indexing::IndexArgs {
        threads: 2,
        quiet: true,
        ..codectx::indexing::IndexArgs::embedded(
            f.checkout.path().to_path_buf(),
            "shop".into(),
            f.stack.data.path().to_path_buf(),
        )
    };
    codectx::indexing::run(&args, &*f.stack.stack.graph_store)
        .await
        .unwrap();
}

fn rank(query: &str) -> pb::RankRequest {
    pb::RankRequest {
        scope: ScopeKind::Code as i32,
        query: query.into(),
        limit: 10,
        kinds: vec![],
        production_only: false,
        corpus_version: String::new(),
    }
}

/// Adds `count` generated functions with a doc line each to the shop fixture's store
/// package, so its lexical index is large enough for a load to take time.
fn generate_functions(checkout: &std::path::Path, count: usize, doc: &str) {
    let mut text = String::from("package store\n");
    for n in 0..count {
        text.push_str(&format!(
            "\n// Generated{n} {doc}.\nfunc Generated{n}() int {{ return {n} }}\n"
        ));
    }
    std::fs::write(checkout.join("store/generated.go"), text).unwrap();
}

/// Ranks `query` until the scope's index has loaded (`unavailable` until then).
async fn rank_once_loaded(
    lexical: &LexicalClient,
    context: &codectx_tenant::TenantContext,
    query: &str,
) -> pb::CandidateList {
    let began = std::time::Instant::now();
    loop {
        match lexical.rank(context, rank(query)).await {
            Ok(found) => return found,
            Err(error) if error.kind() == ErrorKind::Unavailable => {
                assert!(began.elapsed().as_secs() < 30, "never loaded: {error:?}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(error) => panic!("{error:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_first_then_bm25_over_the_indexed_graph() {
    let f = start_indexed("go", "shop").await;
    let lexical = LexicalClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::LexicalRanker),
    ))
    .unwrap();

    // A plain name matches exactly; its trailing-qualified form too.
    let found = lexical.rank(&f.context, rank("NewServer")).await.unwrap();
    assert!(found.candidates[0].exact);
    assert_eq!(found.candidates[0].name, "NewServer");
    assert_eq!(found.candidates[0].matched_field(), MatchedField::ExactName);
    assert!(!found.corpus_version.is_empty());
    let found = lexical
        .rank(&f.context, rank("(*Server).Serve"))
        .await
        .unwrap();
    assert_eq!(
        found.candidates[0].matched_field(),
        MatchedField::ExactQualifiedName
    );
    // Error messages, exact with their punctuation.
    let found = lexical
        .exact_lookup(
            &f.context,
            pb::ExactLookupRequest {
                scope: ScopeKind::Code as i32,
                query: "store is over capacity".into(),
                limit: 5,
                corpus_version: String::new(),
            },
        )
        .await
        .unwrap();
    assert_eq!(found.candidates.len(), 1);
    assert_eq!(found.candidates[0].kind, "error_message");
    // BM25 over identifier tokens: "new server" finds NewServer without exact spelling.
    let found = lexical.rank(&f.context, rank("new server")).await.unwrap();
    assert_eq!(found.candidates[0].name, "NewServer");
    assert!(!found.candidates[0].exact);
    assert!(found.candidates.len() <= 10);
    // Kinds filter.
    let types = lexical
        .rank(
            &f.context,
            pb::RankRequest {
                kinds: vec!["type".into()],
                ..rank("server")
            },
        )
        .await
        .unwrap();
    assert!(types.candidates.iter().all(|c| c.kind == "type"));

    // Re-indexing changes the version; the next query serves the new corpus.
    append_and_reindex(&f, "\n// Flush writes nothing.\nfunc Flush() {}\n").await;
    let after = lexical.rank(&f.context, rank("Flush")).await.unwrap();
    assert_ne!(after.corpus_version, found.corpus_version);
    assert_eq!(after.candidates[0].name, "Flush");
    // A caller's known version is used only while an index at that version is held: the
    // version before the re-index (evicted) and a made-up one are asked about, and the
    // answer is the current corpus.
    let knowing = |version: &str| pb::RankRequest {
        corpus_version: version.into(),
        ..rank("Flush")
    };
    for known in [found.corpus_version.as_str(), "v-made-up", ""] {
        let answer = lexical.rank(&f.context, knowing(known)).await.unwrap();
        assert_eq!(
            answer.corpus_version, after.corpus_version,
            "known {known:?}"
        );
        assert_eq!(answer.candidates[0].name, "Flush");
    }
    let current = lexical
        .rank(&f.context, knowing(&after.corpus_version))
        .await
        .unwrap();
    assert_eq!(current.corpus_version, after.corpus_version);
    assert_eq!(current.candidates[0].name, "Flush");
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scope_comes_from_the_context_only() {
    let f = start_indexed("go", "shop").await;
    let lexical = LexicalClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::LexicalRanker),
    ))
    .unwrap();
    // Another tenant's repository has no graph: its context finds nothing of shop's.
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
    let error = lexical.rank(&foreign, rank("NewServer")).await.unwrap_err();
    assert_eq!(error.to_status().code(), Code::NotFound);
    // Naming the version of shop's index changes nothing: it selects only among the
    // caller's own scope's indexes.
    let shop = lexical.rank(&f.context, rank("NewServer")).await.unwrap();
    let error = lexical
        .rank(
            &foreign,
            pb::RankRequest {
                corpus_version: shop.corpus_version.clone(),
                ..rank("NewServer")
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.to_status().code(), Code::NotFound);
    // Oversized and empty queries are rejected with the limit named.
    let huge = lexical
        .rank(&f.context, rank(&"x".repeat(5000)))
        .await
        .unwrap_err();
    assert_eq!(huge.limit(), Some(4096));
    assert_eq!(
        lexical
            .rank(&f.context, rank("  "))
            .await
            .unwrap_err()
            .to_status()
            .code(),
        Code::InvalidArgument
    );
    f.stack.stack.stop().await.unwrap();
}

/// The shop fixture with 4,000 generated functions (so that every lexical load outlasts
/// a wait of 0), lexical-ranker waiting 0 for a load (and for a new version's index when
/// `stale_now`), and clients of lexical-ranker and the assembler.
async fn start_loading(
    stale_now: bool,
) -> (
    codectx_tests::IndexedStack,
    LexicalClient,
    codectx_clients::AssemblerClient,
) {
    let f = codectx_tests::start_indexed_on(
        "go",
        "shop",
        |checkout| generate_functions(checkout, 4_000, "returns its number"),
        |options| codectx::stack::StackOptions {
            lexical_load_wait_ms: 0,
            lexical_stale_wait_ms: if stale_now {
                0
            } else {
                options.lexical_stale_wait_ms
            },
            ..options
        },
    )
    .await;
    let lexical = LexicalClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::LexicalRanker),
    ))
    .unwrap();
    let assembler = codectx_clients::AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    (f, lexical, assembler)
}

/// The assembler's `search` for `query`, which must fail.
async fn search_error(
    assembler: &codectx_clients::AssemblerClient,
    f: &codectx_tests::IndexedStack,
    query: &str,
) -> codectx_errors::Error {
    assembler
        .search(
            &f.context,
            codectx_proto::assembler::v1::SearchRequest {
                query: query.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err()
}

/// A request that finds its scope's index still loading (a large corpus, the first read
/// after a start) is told so, as `unavailable` with reason `loading` and when to ask
/// again, and the load goes on so a later request is answered; through the assembler the
/// agent hears the same instead of a `deadline_exceeded` that tells it to narrow its
/// request. (The wait is 0 here, and the repository gains 4,000 generated functions, so
/// that every load outlasts it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loading_index_answers_unavailable_and_keeps_loading() {
    let (f, lexical, assembler) = start_loading(false).await;
    // The first request after the start: nothing is held, so a load starts.
    let search = search_error(&assembler, &f, "NewServer").await;
    assert_eq!(search.kind(), ErrorKind::Unavailable, "{search:?}");
    assert_eq!(search.reason(), "loading", "{search:?}");
    assert!(
        search.message().contains("still loading") && search.message().contains("retry"),
        "{}",
        search.message()
    );
    // The load went on: a later request is answered from it.
    let found = rank_once_loaded(&lexical, &f.context, "NewServer").await;
    assert_eq!(found.candidates[0].name, "NewServer");
    f.stack.stack.stop().await.unwrap();
}

/// After a re-index, a code call is answered from the previous version's index while the
/// new one loads (after `stale_wait_ms`, 0 here), marked `stale` with the version it
/// ranked: a large repository's re-index after every save does not make each search
/// wait or fail for the whole rebuild. Through the assembler a stale list that finds
/// nothing is `loading` (retry), never `not_found`: a symbol added by the re-index is
/// not in it. Once the new index is loaded, it answers, fresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reindexed_repository_is_served_from_the_previous_index_while_the_new_one_loads() {
    let (f, lexical, assembler) = start_loading(true).await;
    // The first request after the start finds nothing held: a task that names a symbol
    // the graph resolves is answered all the same (the exact leg does not need the
    // lexical index, which is named as degraded).
    let answer = assembler
        .minimal_context(
            &f.context,
            codectx_proto::assembler::v1::MinimalContextRequest {
                task: "add a timeout option to NewServer".into(),
                max_tokens: 0,
            },
        )
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&answer.json).unwrap();
    assert_eq!(value["status"], "ok", "{value}");
    assert_eq!(
        value["entries"][0]["qualified_name"],
        "example.com/shop/server.NewServer"
    );
    let degraded = value["provenance"]["degraded"].to_string();
    assert!(degraded.contains("still loading"), "{value}");
    let first = rank_once_loaded(&lexical, &f.context, "NewServer").await;
    assert!(!first.stale);
    // The first call after a re-index (the assembler reads the graph's version at most
    // once a second): the symbol it added is not in the previous index.
    append_and_reindex(&f, "\nfunc FlushAddedLater() {}\n").await;
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let search = search_error(&assembler, &f, "FlushAddedLater").await;
    assert_eq!(search.reason(), "loading", "{search:?}");
    // The new version, once loaded, has it.
    let began = std::time::Instant::now();
    let fresh = loop {
        let found = lexical
            .rank(&f.context, rank("FlushAddedLater"))
            .await
            .unwrap();
        if !found.stale {
            break found;
        }
        assert_eq!(found.corpus_version, first.corpus_version);
        assert!(began.elapsed().as_secs() < 30, "never loaded");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_ne!(fresh.corpus_version, first.corpus_version);
    assert_eq!(fresh.candidates[0].name, "FlushAddedLater");
    // Another re-index: the first call after it is answered at once from the index just
    // loaded, marked stale, with that index's version.
    append_and_reindex(&f, "\nfunc FlushAddedLast() {}\n").await;
    let during = lexical.rank(&f.context, rank("NewServer")).await.unwrap();
    assert!(during.stale, "{during:?}");
    assert_eq!(during.corpus_version, fresh.corpus_version);
    assert_eq!(during.candidates[0].name, "NewServer");
    f.stack.stack.stop().await.unwrap();
}

/// An index heavier than lexical-ranker's whole cache (`cache_mib`) is still kept once
/// built (alone, outside the cache): the next request is answered from it instead of
/// streaming the corpus and building it again, which for a large repository meant every
/// search waited for a full rebuild. (The cache is 1 MiB and the repository gains 8,000
/// generated functions, so its index is heavier; the wait is 0, so a request that would
/// start a load answers `unavailable` at once and a rebuild would show.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_heavier_than_the_cache_is_kept_and_served() {
    let f = codectx_tests::start_indexed_on(
        "go",
        "shop",
        |checkout| generate_functions(checkout, 8_000, "returns the number of widgets in bin"),
        |options| codectx::stack::StackOptions {
            lexical_load_wait_ms: 0,
            lexical_cache_mib: 1,
            ..options
        },
    )
    .await;
    let lexical = LexicalClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::LexicalRanker),
    ))
    .unwrap();
    let first = rank_once_loaded(&lexical, &f.context, "NewServer").await;
    assert_eq!(first.candidates[0].name, "NewServer");
    // Every later request, at the version it knows or not, is answered from the index
    // held: none waits for a load. (Spaced out, so the cache's own housekeeping, which
    // evicts what exceeds its capacity, has run between them.)
    for query in ["Generated7", "NewServer", "widgets in bin", "Generated42"] {
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        let found = lexical.rank(&f.context, rank(query)).await.unwrap();
        assert!(!found.candidates.is_empty(), "{query}");
        let known = pb::RankRequest {
            corpus_version: first.corpus_version.clone(),
            ..rank(query)
        };
        lexical.rank(&f.context, known).await.unwrap();
    }
    f.stack.stack.stop().await.unwrap();
}
