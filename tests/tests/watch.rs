//! Freshness of a local stack: a watched checkout is re-indexed when its files change,
//! and answers say `stale` until the re-index lands.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use codectx::stack::ServiceKind;
use codectx::watch::{WatchOptions, watch_stack};
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_proto::assembler::v1 as pb;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tests::start_indexed;
use serde_json::Value;

fn symbol(name: &str) -> pb::SymbolContextRequest {
    pb::SymbolContextRequest {
        symbol: name.into(),
        ..Default::default()
    }
}

/// Polls `check` until it holds or `within` passes; returns how long it took.
async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let began = Instant::now();
    loop {
        if check().await {
            return began.elapsed();
        }
        assert!(
            began.elapsed() < within,
            "{what}: not reflected within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_additions_renames_and_deletions_are_answered_within_two_seconds() {
    let f = start_indexed("python", "shop").await;
    let _watching = watch_stack(&f.stack.stack, f.stack.data.path())
        .await
        .unwrap()
        .expect("the fixture's checkout is watched");
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let c = f.context.clone();
    let root = f.checkout.path().to_path_buf();

    // Requests run throughout; none may fail while the graph is rewritten.
    let stop = Arc::new(AtomicBool::new(false));
    let (calls, failures) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load = tokio::spawn({
        let (assembler, c, stop) = (assembler.clone(), c.clone(), stop.clone());
        let (calls, failures) = (calls.clone(), failures.clone());
        async move {
            while !stop.load(Ordering::Relaxed) {
                let ok = match assembler.symbol_context(&c, symbol("Cart.add")).await {
                    Ok(answer) => answer.status == AnswerStatus::Ok as i32,
                    Err(_) => false,
                };
                calls.fetch_add(1, Ordering::Relaxed);
                if !ok {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    });
    let found = |name: &'static str| {
        let (assembler, c) = (assembler.clone(), c.clone());
        move || {
            let (assembler, c) = (assembler.clone(), c.clone());
            async move {
                let answer = assembler.symbol_context(&c, symbol(name)).await.unwrap();
                (answer.status == AnswerStatus::Ok as i32)
                    .then(|| serde_json::from_str::<Value>(&answer.json).unwrap())
            }
        }
    };
    let within = Duration::from_secs(2);
    let mut took = Vec::new();

    // Edit: a function appended to an existing file.
    let cart = root.join("shop/cart.py");
    let mut text = std::fs::read_to_string(&cart).unwrap();
    text.push_str("\n\ndef discount(cart: Cart) -> int:\n    return 0\n");
    std::fs::write(&cart, text).unwrap();
    let lookup = found("discount");
    took.push(eventually(within, "edit", || async { lookup().await.is_some() }).await);

    // Add: a new file.
    std::fs::write(
        root.join("shop/coupons.py"),
        "def apply_coupon(code: str) -> int:\n    return len(code)\n",
    )
    .unwrap();
    let lookup = found("apply_coupon");
    took.push(eventually(within, "add", || async { lookup().await.is_some() }).await);

    // Rename: the symbol follows its file.
    std::fs::rename(root.join("shop/coupons.py"), root.join("shop/vouchers.py")).unwrap();
    took.push(
        eventually(within, "rename", || async {
            lookup()
                .await
                .is_some_and(|answer| answer["entries"][0]["path"] == "shop/vouchers.py")
        })
        .await,
    );

    // Delete: gone from answers.
    std::fs::remove_file(root.join("shop/vouchers.py")).unwrap();
    took.push(eventually(within, "delete", || async { lookup().await.is_none() }).await);

    stop.store(true, Ordering::Relaxed);
    load.await.unwrap();
    eprintln!(
        "reflected after {took:?}; {} requests during re-indexing",
        calls.load(Ordering::Relaxed)
    );
    assert!(calls.load(Ordering::Relaxed) > 20);
    assert_eq!(failures.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_say_stale_until_the_change_is_indexed() {
    let f = start_indexed("python", "shop").await;
    let store: Arc<dyn codectx_graph::GraphStore> = f.stack.stack.graph_store.clone();
    let targets = codectx::watch::local_targets(&*store, f.stack.stack.authority.store())
        .await
        .unwrap();
    assert_eq!(targets.len(), 1);
    // A slow re-index, so the stale window is long enough to see.
    let _watching = codectx::watch::start(
        store,
        None,
        targets,
        f.stack.data.path(),
        WatchOptions {
            quiet: Duration::from_secs(4),
            max_delay: Duration::from_secs(4),
        },
    )
    .unwrap();
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let c = f.context.clone();
    let index = || {
        let (assembler, c) = (assembler.clone(), c.clone());
        async move {
            let answer = assembler
                .symbol_context(&c, symbol("Cart.add"))
                .await
                .unwrap();
            serde_json::from_str::<Value>(&answer.json).unwrap()["index"].clone()
        }
    };
    let before = index().await;
    assert!(before.get("stale").is_none(), "{before}");

    let models = f.checkout.path().join("shop/models.py");
    let mut text = std::fs::read_to_string(&models).unwrap();
    text.push_str("\n\ndef restock() -> None:\n    pass\n");
    std::fs::write(&models, text).unwrap();

    eventually(Duration::from_secs(3), "stale flag", || async {
        let index = index().await;
        index["stale"] == true
            && index["stale_reason"] == "files changed"
            && index["stale_seconds"]
                .as_i64()
                .is_some_and(|s| (0..10).contains(&s))
    })
    .await;
    let text = codectx_gateway::render::render(
        &serde_json::from_str::<Value>(
            &assembler
                .symbol_context(&c, symbol("Cart.add"))
                .await
                .unwrap()
                .json,
        )
        .unwrap(),
    );
    assert!(text.contains("stale: files changed"), "{text}");

    // The re-index lands: fresh again, with the new content version.
    eventually(Duration::from_secs(8), "fresh again", || async {
        let index = index().await;
        index.get("stale").is_none() && index["version"] != before["version"]
    })
    .await;
}
