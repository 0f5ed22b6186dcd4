//! The engine's rules, through its public API: dedup never crosses subjects or tenants,
//! a changed answer is never replaced by a reference, bypasses and the focus set hold,
//! the quality monitor caps a tool, auto follows the budget, and a panicking compressor
//! yields the raw answer.

use std::sync::{Arc, Mutex};

use codectx_compress::{
    Bypass, Call, CompressionConfig, CrossSessionStore, Engine, Level, LevelSetting, LevelSource,
    Outcome, Principal, Session, Tool,
};
use serde_json::{Map, Value, json};

fn render(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("json")
}

fn engine(config: CompressionConfig) -> Engine {
    let store = Arc::new(CrossSessionStore::new(config.store_limits()));
    Engine::new(config, LevelSource::Config, store)
}

/// A symbol card big enough to compress (well over 100 tokens).
fn card(name: &str, version: u32) -> Value {
    json!({
        "status": "ok",
        "entries": [{
            "kind": "function", "qualified_name": format!("shop/server.{name}"),
            "path": "server/server.go", "lines": [10, 40 + version],
            "signature": format!("func {name}(path string) error"),
            "summary": "Handles one path.",
            "fingerprint": format!("{version:032x}"),
            "found_by": ["exact"],
            "callers": (0..12).map(|n| json!({"qualified_name": format!("shop/x.Caller{n}"), "kind": "function", "path": "x/x.go", "line": n + 1})).collect::<Vec<_>>(),
        }],
        "omitted": [],
        "provenance": {"legs": ["exact"]},
        "tokens": 0
    })
}

fn arguments(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn call<'a>(tool: &'a str, arguments: &'a Map<String, Value>, principal: Principal) -> Call<'a> {
    Call {
        tool,
        arguments,
        structured: false,
        principal: Some(principal),
        scope: "repo-1",
    }
}

#[test]
fn session_dedup_references_only_unchanged_answers() {
    let engine = engine(CompressionConfig::default());
    let session = Mutex::new(Session::new());
    let alice = Principal::new("acme", "alice");
    let args = arguments(&[("symbol", json!("Serve"))]);
    let first = engine.deliver(
        &session,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(first.outcome, Outcome::Compressed);
    let again = engine.deliver(
        &session,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(again.outcome, Outcome::SessionReference);
    assert!(
        again.text.contains("the same answer as call 1"),
        "{}",
        again.text
    );
    // The symbol changed (its lines): sent in full, never a reference.
    let changed = engine.deliver(
        &session,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 2),
        render,
    );
    assert_eq!(changed.outcome, Outcome::Compressed);
    assert!(changed.text.contains("42"), "{}", changed.text);
    // fresh: the full answer.
    let fresh = arguments(&[("symbol", json!("Serve")), ("fresh", json!(true))]);
    let full = engine.deliver(
        &session,
        &call("get_symbol_context", &fresh, alice),
        &card("Serve", 2),
        render,
    );
    assert_eq!(full.outcome, Outcome::Compressed);
}

#[test]
fn cross_session_dedup_is_per_tenant_and_subject_and_content_verified() {
    let engine = engine(CompressionConfig::default());
    let alice = Principal::new("acme", "alice");
    let args = arguments(&[("symbol", json!("Serve"))]);
    let first = Mutex::new(Session::new());
    engine.deliver(
        &first,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    // Another subject of the same tenant, and the same subject name in another tenant:
    // full answers.
    for other in [
        Principal::new("acme", "bob"),
        Principal::new("globex", "alice"),
    ] {
        let session = Mutex::new(Session::new());
        let delivered = engine.deliver(
            &session,
            &call("get_symbol_context", &args, other),
            &card("Serve", 1),
            render,
        );
        assert_eq!(
            delivered.outcome,
            Outcome::Compressed,
            "crossed to another principal"
        );
    }
    // Alice again, in a new session: a reference naming the earlier session.
    let second = Mutex::new(Session::new());
    let repeat = engine.deliver(
        &second,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(repeat.outcome, Outcome::CrossSessionReference);
    assert!(repeat.text.contains("earlier session") && repeat.text.contains("\"fresh\": true"));
    // The code changed since: verified against the content, sent in full.
    let third = Mutex::new(Session::new());
    let changed = engine.deliver(
        &third,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 3),
        render,
    );
    assert_eq!(changed.outcome, Outcome::Compressed);
    // Another repository (scope) with the same arguments is another request.
    let fourth = Mutex::new(Session::new());
    let elsewhere = Call {
        scope: "repo-2",
        ..call("get_symbol_context", &args, alice)
    };
    assert_eq!(
        engine
            .deliver(&fourth, &elsewhere, &card("Serve", 3), render)
            .outcome,
        Outcome::Compressed
    );
    // Switched off: nothing crosses sessions.
    let off = self::engine(CompressionConfig {
        cross_session: false,
        ..Default::default()
    });
    for _ in 0..2 {
        let session = Mutex::new(Session::new());
        assert_eq!(
            off.deliver(
                &session,
                &call("get_symbol_context", &args, alice),
                &card("Serve", 1),
                render
            )
            .outcome,
            Outcome::Compressed
        );
    }
}

#[test]
fn bypass_rules_hold() {
    let engine = engine(CompressionConfig::default());
    let alice = Principal::new("acme", "alice");
    let cases: Vec<(&str, Map<String, Value>, bool, Bypass)> = vec![
        (
            "get_symbol_context",
            arguments(&[("symbol", json!("A")), ("detail", json!(true))]),
            false,
            Bypass::Detail,
        ),
        (
            "get_symbol_context",
            arguments(&[("symbol", json!("A")), ("for_edit", json!(true))]),
            false,
            Bypass::ForEdit,
        ),
        (
            "get_symbol_context",
            arguments(&[("symbol", json!("A"))]),
            true,
            Bypass::Structured,
        ),
        (
            "get_code_snippet",
            arguments(&[("symbol", json!("A"))]),
            false,
            Bypass::Snippet,
        ),
        (
            "remember",
            arguments(&[("entity", json!("A"))]),
            false,
            Bypass::Write,
        ),
    ];
    for (tool, args, structured, expected) in cases {
        let session = Mutex::new(Session::new());
        let raw = render(&card("A", 1));
        for _ in 0..2 {
            let delivered = engine.deliver(
                &session,
                &Call {
                    structured,
                    ..call(tool, &args, alice)
                },
                &card("A", 1),
                render,
            );
            assert_eq!(delivered.outcome, Outcome::Bypassed(expected), "{tool}");
            assert_eq!(
                delivered.text, raw,
                "{tool}: bypassed answers are never references"
            );
        }
    }
    let small = json!({"status": "not_found", "entries": [], "omitted": []});
    let session = Mutex::new(Session::new());
    let args = arguments(&[("symbol", json!("Nope"))]);
    for _ in 0..2 {
        let delivered = engine.deliver(
            &session,
            &call("get_symbol_context", &args, alice),
            &small,
            render,
        );
        assert_eq!(delivered.outcome, Outcome::Bypassed(Bypass::Small));
    }
}

#[test]
fn the_focus_set_lasts_six_calls() {
    let engine = engine(CompressionConfig::default());
    let alice = Principal::new("acme", "alice");
    let session = Mutex::new(Session::new());
    let snippet = arguments(&[("symbol", json!("Serve"))]);
    engine.deliver(
        &session,
        &call("get_code_snippet", &snippet, alice),
        &card("Serve", 1),
        render,
    );
    // The next six calls about the focused symbol (by any name that resolves to it) go
    // uncompressed and are never references.
    let by_other_name = arguments(&[("symbol", json!("server.Serve"))]);
    for n in 1..=6 {
        let delivered = engine.deliver(
            &session,
            &call("get_call_graph", &by_other_name, alice),
            &card("Serve", 1),
            render,
        );
        assert_eq!(
            delivered.outcome,
            Outcome::Bypassed(Bypass::Focus),
            "call {n} after the snippet"
        );
    }
    // Other symbols are compressed meanwhile; after the window, so is this one.
    let seventh = engine.deliver(
        &session,
        &call("get_call_graph", &by_other_name, alice),
        &card("Serve", 1),
        render,
    );
    assert_ne!(seventh.outcome, Outcome::Bypassed(Bypass::Focus));
    let stats = engine.stats(&session);
    assert!(stats.focus.is_empty(), "{stats:?}");
}

#[test]
fn the_quality_monitor_caps_a_tool_at_summary() {
    let engine = engine(CompressionConfig {
        level: LevelSetting::Aggressive,
        ..Default::default()
    });
    let alice = Principal::new("acme", "alice");
    let session = Mutex::new(Session::new());
    let plain = arguments(&[("symbol", json!("Serve")), ("fresh", json!(true))]);
    let detail = arguments(&[("symbol", json!("Serve")), ("detail", json!(true))]);
    assert_eq!(
        engine
            .deliver(
                &session,
                &call("get_call_graph", &plain, alice),
                &card("Serve", 1),
                render
            )
            .level,
        Level::Aggressive
    );
    engine.deliver(
        &session,
        &call("get_call_graph", &detail, alice),
        &card("Serve", 1),
        render,
    );
    engine.deliver(
        &session,
        &call("get_call_graph", &detail, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(
        engine
            .deliver(
                &session,
                &call("get_call_graph", &plain, alice),
                &card("Serve", 1),
                render
            )
            .level,
        Level::Aggressive,
        "4 calls: not judged yet"
    );
    // Fifth call: 2 of 5 asked for detail (40% > 30%).
    assert_eq!(
        engine
            .deliver(
                &session,
                &call("get_call_graph", &plain, alice),
                &card("Serve", 1),
                render
            )
            .level,
        Level::Summary
    );
    // Other tools keep their level.
    let other = arguments(&[("symbol", json!("Serve")), ("fresh", json!(true))]);
    assert_eq!(
        engine
            .deliver(
                &session,
                &call("get_symbol_context", &other, alice),
                &card("Serve", 1),
                render
            )
            .level,
        Level::Aggressive
    );
    let stats = engine.stats(&session);
    assert!(stats.tools["get_call_graph"].capped_at_summary);
    assert_eq!(stats.tools["get_call_graph"].detail_rate_percent, 40);
}

#[test]
fn auto_raises_the_level_as_the_budget_fills() {
    let engine = engine(CompressionConfig {
        level: LevelSetting::Auto,
        token_budget: 1_000,
        ..Default::default()
    });
    let alice = Principal::new("acme", "alice");
    let session = Mutex::new(Session::new());
    let mut levels = Vec::new();
    for n in 0..12 {
        let args = arguments(&[("symbol", json!(format!("S{n}")))]);
        levels.push(
            engine
                .deliver(
                    &session,
                    &call("recall", &args, alice),
                    &card(&format!("S{n}"), 1),
                    render,
                )
                .level,
        );
    }
    assert_eq!(levels[0], Level::Off, "the budget is untouched: raw");
    assert!(levels.windows(2).all(|w| w[0] <= w[1]), "{levels:?}");
    assert_eq!(*levels.last().unwrap(), Level::Minimal, "{levels:?}");
    // A per-call argument overrides the configuration.
    let args = arguments(&[("symbol", json!("X")), ("compression", json!("off"))]);
    assert_eq!(
        engine
            .deliver(
                &session,
                &call("minimal_context", &args, alice),
                &card("X", 1),
                render
            )
            .level,
        Level::Off
    );
}

#[test]
fn tool_caps_hold_whatever_is_asked() {
    let engine = engine(CompressionConfig {
        level: LevelSetting::Minimal,
        ..Default::default()
    });
    let alice = Principal::new("acme", "alice");
    for tool in Tool::ALL {
        let session = Mutex::new(Session::new());
        let args = arguments(&[("query", json!("serve"))]);
        let delivered = engine.deliver(
            &session,
            &call(tool.name(), &args, alice),
            &card("Serve", 1),
            render,
        );
        assert_eq!(delivered.level, tool.cap(), "{}", tool.name());
    }
}

fn panicking(_: Tool, _: Level, _: &Value) -> Value {
    panic!("a compressor bug")
}

#[test]
fn a_panicking_compressor_yields_the_raw_answer_and_is_counted() {
    let engine = engine(CompressionConfig::default()).with_compressor(panicking);
    let alice = Principal::new("acme", "alice");
    let session = Mutex::new(Session::new());
    let args = arguments(&[("symbol", json!("Serve"))]);
    let delivered = engine.deliver(
        &session,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(delivered.outcome, Outcome::Failed);
    assert_eq!(delivered.text, render(&card("Serve", 1)));
    assert_eq!(engine.stats(&session).failures, 1);
    assert_eq!(engine.store().totals(alice).failures, 1);
    // The session still works afterwards.
    let next = engine.deliver(
        &session,
        &call("get_symbol_context", &args, alice),
        &card("Serve", 1),
        render,
    );
    assert_eq!(next.outcome, Outcome::Failed);
}

#[test]
fn parts_already_sent_are_references_and_a_changed_symbol_never_is() {
    let engine = engine(CompressionConfig::default());
    let session = Mutex::new(Session::new());
    let alice = Principal::new("acme", "alice");
    let card_args = arguments(&[("symbol", json!("Serve"))]);
    engine.deliver(
        &session,
        &call("get_symbol_context", &card_args, alice),
        &card("Serve", 1),
        render,
    );
    // The same symbol inside another tool's answer: its parts are references.
    let task = arguments(&[("task", json!("change how Serve handles paths"))]);
    let mut task_answer = card("Serve", 1);
    task_answer["related"] = json!([{"kind": "function", "qualified_name": "shop/server.Run", "path": "server/server.go", "lines": [50, 56]}]);
    let again = engine.deliver(
        &session,
        &call("minimal_context", &task, alice),
        &task_answer,
        render,
    );
    assert_eq!(again.outcome, Outcome::Compressed);
    assert!(again.text.contains("as sent in call 1"), "{}", again.text);
    assert!(!again.text.contains("shop/x.Caller3"), "{}", again.text);
    // The symbol changed (its span): the entry is sent, never a reference as a whole;
    // what did not change (its callers) may still be one, and says so.
    let changed = engine.deliver(
        &session,
        &call("minimal_context", &task, alice),
        &card("Serve", 2),
        render,
    );
    let sent: Value = serde_json::from_str(&changed.text).expect("the test renders JSON");
    let entry = &sent["entries"][0];
    assert_eq!(entry["lines"], json!([10, 42]), "{}", changed.text);
    assert_eq!(entry["fingerprint"], json!(format!("{:032x}", 2)));
    assert_eq!(
        entry["unchanged"], "callers as sent in call 1",
        "only what did not change"
    );
    // fresh: everything in full.
    let fresh = arguments(&[
        ("task", json!("change how Serve handles paths")),
        ("fresh", json!(true)),
    ]);
    let full = engine.deliver(
        &session,
        &call("minimal_context", &fresh, alice),
        &card("Serve", 2),
        render,
    );
    assert!(
        full.text.contains("shop/x.Caller3") && !full.text.contains("as sent in call"),
        "{}",
        full.text
    );
}
