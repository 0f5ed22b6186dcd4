//! Answers about code, one module per tool (`symbol_context`, `call_graph`, `search`,
//! `minimal_context`, `pr_context`, `snippet`), the relations an entry carries
//! (`relations`), and what they share here: the symbol card, the envelope, resolving a
//! selector and packing under the budget. Each answer is canonical JSON with `status`,
//! `entries`, `omitted`, `provenance` and `tokens`, packed under the normalized token
//! budget (lowest-value detail dropped first, every omission listed).

mod call_graph;
mod minimal_context;
mod pr_context;
mod relations;
mod search;
mod snippet;
mod symbol_context;

pub use call_graph::call_graph;
pub use minimal_context::minimal_context;
pub use pr_context::{Change, pr_context};
pub use search::search;
pub use snippet::{SnippetTarget, code_snippet};
pub use symbol_context::symbol_context;

use codectx_assemble::{Removable, pack};
use codectx_clients::GraphClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

pub struct Answer {
    pub status: AnswerStatus,
    pub json: String,
    pub tokens: u32,
}

fn status_name(status: AnswerStatus) -> &'static str {
    match status {
        AnswerStatus::Ok => "ok",
        AnswerStatus::NotFound => "not_found",
        AnswerStatus::Ambiguous => "ambiguous",
        AnswerStatus::Denied => "denied",
        AnswerStatus::BudgetExceeded => "budget_exceeded",
        AnswerStatus::Truncated => "truncated",
        AnswerStatus::Unspecified => "unspecified",
    }
}

/// A symbol card as agents see it; ids only when asked for.
fn card(card: &graph::SymbolCard, include_ids: bool) -> Value {
    let span = card.span.clone().unwrap_or_default();
    let mut value = json!({
        "qualified_name": card.qualified_name,
        "kind": card.kind,
        "signature": card.signature,
        "path": span.path,
        "lines": [span.start_line, span.end_line],
        "summary": card.summary,
        "fingerprint": card.fingerprint,
    });
    if include_ids {
        value["id"] = Value::from(card.id.clone());
    }
    if card.signature.is_empty() {
        value.as_object_mut().expect("object").remove("signature");
    }
    if card.summary.is_empty() {
        value.as_object_mut().expect("object").remove("summary");
    }
    // The repository policy's notes on this symbol or its file (.codectx.yaml).
    if !card.notes.is_empty() {
        value["notes"] = Value::from(card.notes.clone());
    }
    value
}

/// A neighbour: where it is and how sure the edge is.
fn neighbor(n: &graph::Neighbor) -> Value {
    let card = n.card.clone().unwrap_or_default();
    let span = card.span.clone().unwrap_or_default();
    let mut value = json!({"qualified_name": card.qualified_name, "kind": card.kind});
    if !span.path.is_empty() {
        value["path"] = Value::from(span.path);
        value["line"] = Value::from(n.line.unwrap_or(span.start_line));
    }
    if n.depth > 1 {
        value["depth"] = Value::from(n.depth);
    }
    match graph::Confidence::try_from(n.confidence) {
        Ok(graph::Confidence::NameMatch) => value["confidence"] = Value::from("name_match"),
        Ok(graph::Confidence::Dispatch) => value["confidence"] = Value::from("dispatch"),
        Ok(graph::Confidence::Unresolved) => value["confidence"] = Value::from("unresolved"),
        _ => {}
    }
    value
}

fn envelope(status: AnswerStatus, entries: Vec<Value>, legs: &[&str]) -> Value {
    let mut answer = json!({"status": status_name(status), "entries": entries, "omitted": [], "provenance": {"legs": legs}, "tokens": 0});
    crate::freshness::stamp(&mut answer);
    answer
}

/// Packs an answer built outside [`envelope`] (not found, ambiguous, over budget),
/// stamped with the graph's index like every other.
fn finalize(mut answer: Value) -> (String, u32) {
    crate::freshness::stamp(&mut answer);
    codectx_assemble::finalize(answer)
}

/// Packs the answer under its budget, on the calling task. Packing is linear in the
/// answer, which `max_tokens` caps at 20,000 tokens (about 80 KB of JSON; an answer that
/// fits is measured once and serialized once): well under a millisecond, less than the blocking pool's hand-off and wake-up
/// cost a loaded stack for every call.
async fn finish(
    status: AnswerStatus,
    mut answer: Value,
    max_tokens: u32,
    removable: &[Removable],
) -> Result<Answer, Error> {
    crate::freshness::stamp(&mut answer);
    // Unresolved names are the least useful detail: they go first.
    let entries = answer["entries"].as_array().map_or(0, Vec::len);
    let mut order: Vec<Removable> = (0..entries)
        .flat_map(|index| {
            ["callees", "callers", "implementations", "tests"].map(|field| Removable {
                pointer: format!("/entries/{index}/unresolved_{field}"),
                what: format!("unresolved {field}"),
                priority: 0,
            })
        })
        .collect();
    order.extend(removable.iter().cloned());
    match pack(answer, max_tokens, &order) {
        Ok((json, tokens)) => Ok(Answer {
            status,
            json,
            tokens,
        }),
        Err(error) if error.reason() == "budget_exceeded" => {
            let (json, tokens) = finalize(json!({
                "status": "budget_exceeded",
                "entries": [],
                "omitted": [],
                "message": error.message(),
                "tokens": 0
            }));
            Ok(Answer {
                status: AnswerStatus::BudgetExceeded,
                json,
                tokens,
            })
        }
        Err(error) => Err(error),
    }
}

/// Detail the packer may drop: the subject entry's `field` list, at `priority`.
fn shed(field: &str, name: &str, priority: u32) -> Removable {
    Removable {
        pointer: format!("/entries/0/{field}"),
        what: format!("{field} of {name}"),
        priority,
    }
}

/// A selector resolved to one symbol, and the other definitions of the same qualified
/// name (build variants: `file_unix.go` and `file_windows.go`, build-tagged files).
struct Resolved {
    symbol: graph::SymbolCard,
    variants: Vec<Value>,
}

impl Resolved {
    /// Lists the other definitions in the entry, so the agent knows they exist.
    fn note_variants(&self, entry: &mut Value) {
        if !self.variants.is_empty() {
            entry["variants"] = Value::from(self.variants.clone());
        }
    }
}

/// Resolves a selector to one symbol, or answers not_found / ambiguous. Matches that all
/// share one qualified name are one symbol defined per build variant: the first (by
/// path) answers and the others are listed as variants, since no selector could tell
/// them apart.
async fn resolve(
    graph: &GraphClient,
    context: &TenantContext,
    selector: &str,
) -> Result<Result<Resolved, Value>, Error> {
    if selector.trim().is_empty() {
        return Err(Error::invalid_argument(
            "symbol",
            "symbol is empty: pass a name or qualified name",
        ));
    }
    limits::check_bytes("symbol", selector, limits::SELECTOR_BYTES)?;
    let found = graph
        .lookup_symbols(
            context,
            graph::LookupSymbolsRequest {
                selector: selector.into(),
                kinds: vec![],
                limit: 10,
            },
        )
        .await?;
    match found.matches.len() {
        0 => Ok(Err(json!({
            "status": "not_found",
            "entries": [],
            "omitted": [],
            "suggestion": format!("no symbol named {selector:?}; try the search tool with words from its name"),
            "tokens": 0
        }))),
        1 => Ok(Ok(Resolved {
            symbol: found.matches.into_iter().next().expect("one"),
            variants: Vec::new(),
        })),
        _ if found
            .matches
            .iter()
            .all(|m| m.qualified_name == found.matches[0].qualified_name) =>
        {
            let mut matches = found.matches.into_iter();
            let symbol = matches.next().expect("several");
            let variants = matches
                .map(|m| {
                    let span = m.span.clone().unwrap_or_default();
                    json!({"id": m.id, "path": span.path, "line": span.start_line})
                })
                .collect();
            Ok(Ok(Resolved { symbol, variants }))
        }
        _ => {
            let candidates: Vec<Value> = found
                .matches
                .iter()
                .map(|m| {
                    let span = m.span.clone().unwrap_or_default();
                    json!({"qualified_name": m.qualified_name, "kind": m.kind, "path": span.path, "line": span.start_line})
                })
                .collect();
            Ok(Err(json!({
                "status": "ambiguous",
                "entries": [],
                "candidates": candidates,
                "omitted": [],
                "suggestion": "pass one of the candidates' qualified names as symbol",
                "tokens": 0
            })))
        }
    }
}

fn early(answer: Value) -> Answer {
    let status = match answer["status"].as_str() {
        Some("ambiguous") => AnswerStatus::Ambiguous,
        _ => AnswerStatus::NotFound,
    };
    let (json, tokens) = finalize(answer);
    Answer {
        status,
        json,
        tokens,
    }
}

/// What the ranked legs saw (the best dense similarity, the best BM25 score per word of
/// the query), for calibrating the no-match floors (`bench/calibration/code.json`).
fn scores(dense_top: Option<f64>, lexical_strength: Option<f64>) -> Value {
    let round = |v: Option<f64>| v.map(|v| (v * 1000.0).round() / 1000.0);
    json!({"dense_top": round(dense_top), "lexical_strength": round(lexical_strength)})
}

#[cfg(test)]
mod tests {
    use super::minimal_context::{code_like, identifiers};
    use super::relations::is_own_member;

    #[test]
    fn identifiers_are_told_from_prose() {
        assert_eq!(
            identifiers("Add a timeout to NewServer, then fix Server.Serve and store::open_db."),
            vec!["NewServer", "Server.Serve", "store::open_db"]
        );
        assert_eq!(
            identifiers("why does run() fail in parse_args"),
            vec!["run", "parse_args"]
        );
        assert!(identifiers("the server does not start. Why?").is_empty());
        assert!(identifiers("HTTP API URL").is_empty());
        assert_eq!(
            identifiers("Show me (*Context).Next: how does it advance?"),
            vec!["(*Context).Next"]
        );
    }

    #[test]
    fn code_words_are_told_from_product_names() {
        // One capitalised word and an acronym (`ServeHTTP`) reads like `PostgreSQL`: only
        // unresolved names are judged, and an existing one resolves exactly anyway.
        for code in [
            "RateLimiter",
            "initFormCache",
            "os.path.join",
            "parse_args",
            "run()",
        ] {
            assert!(code_like(code), "{code}");
        }
        for product in ["macOS", "SQLite", "PostgreSQL", "JSON", "OAuth"] {
            assert!(!code_like(product), "{product}");
        }
    }

    #[test]
    fn own_members_are_told_apart() {
        assert!(is_own_member("example.com/x.DB", "example.com/x.(*DB).Get"));
        assert!(is_own_member(
            "example.com/x.DB",
            "example.com/x.(DB).Serve"
        ));
        assert!(is_own_member("pkg.impl.Config", "pkg.impl.Config.items"));
        assert!(is_own_member(
            "itertools::Interleave",
            "itertools::Interleave::next"
        ));
        assert!(!is_own_member("example.com/x.DB", "example.com/x.Open"));
        assert!(!is_own_member(
            "example.com/x.DB",
            "example.com/x.(*DBx).Get"
        ));
        assert!(!is_own_member("pkg.Config", "pkg.ConfigLoader.load"));
    }

    #[test]
    fn at_most_five_identifiers_each_once() {
        let task = "getA getA getB getC getD getE getF";
        assert_eq!(
            identifiers(task),
            vec!["getA", "getB", "getC", "getD", "getE"]
        );
    }
}
