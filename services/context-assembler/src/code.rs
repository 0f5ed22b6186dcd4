//! Answers about code: symbol context, call graphs and search. Each answer is canonical
//! JSON with `status`, `entries`, `omitted`, `provenance` and `tokens`, packed under the
//! normalized token budget (lowest-value detail dropped first, every omission listed).

use std::collections::HashMap;

use crate::RetrievalLegs;
use crate::ranking::{DenseCode, ranked_cards};
use codectx_assemble::{Removable, pack};
use codectx_clients::{GraphClient, LexicalClient};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

/// Per-direction node limit for expansions inside an answer.
const RELATION_LIMIT: u32 = 20;
/// Neighbours per relation in the symbol-context overview: the most relevant ten (see
/// the graph's ranking); `get_call_graph` lists up to 20.
const OVERVIEW_RELATION_LIMIT: u32 = 10;

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

/// Packs the answer under its budget. Packing is CPU work proportional to the answer, so it
/// runs on the blocking pool: the request's deadline can fire while it runs instead of
/// waiting for it.
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
    let packed = tokio::task::spawn_blocking(move || pack(answer, max_tokens, &order))
        .await
        .map_err(|e| Error::internal(format!("packer: {e}")))?;
    match packed {
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

/// One relation an entry carries: the field it goes in, the edge kind and direction.
#[derive(Clone, Copy)]
struct Wanted {
    field: &'static str,
    kind: graph::EdgeKind,
    direction: graph::Direction,
    /// Neighbour kinds kept (empty: all).
    only: &'static [&'static str],
    /// Neighbours listed, when not the answer's default.
    limit: Option<u32>,
}

const CALLERS: Wanted = Wanted {
    field: "callers",
    kind: graph::EdgeKind::Calls,
    direction: graph::Direction::Incoming,
    only: &[],
    limit: None,
};
const CALLEES: Wanted = Wanted {
    field: "callees",
    kind: graph::EdgeKind::Calls,
    direction: graph::Direction::Outgoing,
    only: &[],
    limit: None,
};
/// An interface's implementations are what is asked about it: up to 20 (own package first).
const IMPLEMENTATIONS: Wanted = Wanted {
    field: "implementations",
    kind: graph::EdgeKind::Implements,
    direction: graph::Direction::Both,
    only: &[],
    limit: Some(RELATION_LIMIT),
};
const USED_BY: Wanted = Wanted {
    field: "used_by",
    kind: graph::EdgeKind::References,
    direction: graph::Direction::Incoming,
    only: &[],
    limit: None,
};
/// Whether `member` is declared inside the type `owner`: `pkg.T.m`, `pkg.(*T).m`,
/// `pkg.(T).m`, `crate::T::m`.
fn is_own_member(owner: &str, member: &str) -> bool {
    if member.starts_with(&format!("{owner}.")) || member.starts_with(&format!("{owner}::")) {
        return true;
    }
    // Go receivers: `example.com/x.T` owns `example.com/x.(*T).M` and `example.com/x.(T).M`.
    let Some((package, name)) = owner.rsplit_once('.') else {
        return false;
    };
    member.starts_with(&format!("{package}.(*{name})."))
        || member.starts_with(&format!("{package}.({name})."))
}

/// Relations an answer leaves out when they are empty (compact answers).
const QUIET: &[&str] = &["used_by", "strings", "exported_as"];

/// The public paths re-exports give the symbol (`pub use`, package `__init__` imports).
const EXPORTED_AS: Wanted = Wanted {
    field: "exported_as",
    kind: graph::EdgeKind::Exports,
    direction: graph::Direction::Incoming,
    only: &["alias"],
    limit: None,
};
/// The messages a symbol raises and the strings it writes (CONTAINS, string kinds only).
const STRINGS: Wanted = Wanted {
    field: "strings",
    kind: graph::EdgeKind::Contains,
    direction: graph::Direction::Outgoing,
    only: &["error_message", "string"],
    limit: None,
};
const TESTS: Wanted = Wanted {
    field: "tests",
    kind: graph::EdgeKind::TestedBy,
    direction: graph::Direction::Outgoing,
    only: &[],
    limit: None,
};

/// A test that calls the symbol is listed once, under tests: it leaves the callers, and
/// the omission says how many moved.
fn tests_out_of_callers(entry: &mut Value) -> Option<Value> {
    let tests = entry.get("tests").and_then(Value::as_array).cloned()?;
    let callers = entry.get_mut("callers").and_then(Value::as_array_mut)?;
    let before = callers.len();
    callers.retain(|caller| {
        !tests
            .iter()
            .any(|test| test["qualified_name"] == caller["qualified_name"])
    });
    let moved = before - callers.len();
    (moved > 0).then(|| {
        json!({
            "what": "callers that are tests (listed under tests)",
            "count": moved,
            "reason": "listed_under_tests",
        })
    })
}

/// Expansions graph-hydrator takes per ExpandBatch.
const EXPAND_BATCH: usize = 16;

/// Expands `id` along each wanted relation (`limit` per direction, `depth` 1..2) into the
/// entry's fields; returns the graph's omissions.
async fn attach(
    graph: &GraphClient,
    context: &TenantContext,
    id: &str,
    depth: u32,
    entry: &mut Value,
    wanted: &[Wanted],
    limit: u32,
) -> Result<Vec<Value>, Error> {
    let (omitted, _) =
        attach_with(graph, context, id, depth, entry, wanted, limit, Vec::new()).await?;
    Ok(omitted)
}

/// [`attach`], with `extra` expansions the caller needs answered in the same round trip
/// (their responses come back in order).
#[allow(clippy::too_many_arguments)]
async fn attach_with(
    graph: &GraphClient,
    context: &TenantContext,
    id: &str,
    depth: u32,
    entry: &mut Value,
    wanted: &[Wanted],
    limit: u32,
    extra: Vec<graph::ExpandRequest>,
) -> Result<(Vec<Value>, Vec<graph::ExpandResponse>), Error> {
    let mut omitted = Vec::new();
    // Every relation in one round trip (graph-hydrator answers them in order).
    let mut requests: Vec<graph::ExpandRequest> = wanted
        .iter()
        .map(|relation| {
            expand_request(
                id,
                *relation,
                depth,
                relation.limit.unwrap_or(limit).max(limit),
            )
        })
        .collect();
    let expected = requests.len() + extra.len();
    requests.extend(extra);
    let mut responses = Vec::with_capacity(requests.len());
    for batch in requests.chunks(EXPAND_BATCH) {
        responses.extend(
            graph
                .expand_batch(
                    context,
                    graph::ExpandBatchRequest {
                        requests: batch.to_vec(),
                    },
                )
                .await?
                .responses,
        );
    }
    if responses.len() != expected {
        return Err(Error::internal(format!(
            "graph-hydrator answered {} of {} expansions",
            responses.len(),
            expected
        )));
    }
    let extra_responses = responses.split_off(wanted.len());
    for (relation, response) in wanted.iter().zip(responses) {
        let (neighbors, more) = expansion_of(response);
        // Targets the index could not resolve to a symbol of the repository (library
        // calls, dynamic receivers) are names only: a compact list beside the relation.
        let (external, mut known): (Vec<Value>, Vec<Value>) =
            neighbors.into_iter().partition(|n| n["kind"] == "external");
        if !relation.only.is_empty() {
            known.retain(|n| relation.only.iter().any(|k| n["kind"] == *k));
        }
        // A type's own methods name it (their receiver): not news about who uses it.
        if relation.field == USED_BY.field
            && let Some(root) = entry["qualified_name"].as_str().map(str::to_owned)
        {
            let before = known.len();
            known.retain(|n| !is_own_member(&root, n["qualified_name"].as_str().unwrap_or("")));
            if known.len() < before {
                omitted.push(json!({
                    "what": format!("members of {root} that refer to it"),
                    "count": before - known.len(),
                    "reason": "own_members",
                }));
            }
        }
        // Relations added after the first answer shape are left out when empty.
        if known.is_empty() && external.is_empty() && QUIET.contains(&relation.field) {
            omitted.extend(more);
            continue;
        }
        entry[relation.field] = Value::from(known);
        if !external.is_empty() {
            entry[format!("unresolved_{}", relation.field)] = Value::from(
                external
                    .into_iter()
                    .map(|n| n["qualified_name"].clone())
                    .collect::<Vec<_>>(),
            );
        }
        omitted.extend(more);
    }
    omitted.extend(tests_out_of_callers(entry));
    Ok((omitted, extra_responses))
}

fn expand_request(id: &str, relation: Wanted, depth: u32, limit: u32) -> graph::ExpandRequest {
    graph::ExpandRequest {
        ids: vec![id.to_owned()],
        edge_kinds: vec![relation.kind as i32],
        direction: relation.direction as i32,
        depth,
        limit_per_direction: limit,
    }
}

/// A relation's neighbours and the graph's omissions, from its expansion.
fn expansion_of(expanded: graph::ExpandResponse) -> (Vec<Value>, Vec<Value>) {
    let Some(expansion) = expanded.expansions.into_iter().next() else {
        return (Vec::new(), Vec::new());
    };
    let omitted = expansion
        .omitted
        .iter()
        .map(|o| json!({"what": o.what, "count": o.count, "reason": o.reason}))
        .collect();
    (expansion.neighbors.iter().map(neighbor).collect(), omitted)
}

/// `get_symbol_context`: the symbol's card with callers, callees, implementations and tests.
pub async fn symbol_context(
    graph: &GraphClient,
    context: &TenantContext,
    selector: &str,
    max_tokens: u32,
    include_ids: bool,
) -> Result<Answer, Error> {
    let max_tokens = limits::normalize_max_tokens(max_tokens, limits::DEFAULT_TOKENS_CONTEXT);
    let resolved = match resolve(graph, context, selector).await? {
        Ok(resolved) => resolved,
        Err(answer) => return Ok(early(answer)),
    };
    let symbol = &resolved.symbol;
    let mut entry = card(symbol, include_ids);
    resolved.note_variants(&mut entry);
    let (mut omitted, contained) = attach_with(
        graph,
        context,
        &symbol.id,
        1,
        &mut entry,
        &[
            CALLERS,
            CALLEES,
            USED_BY,
            IMPLEMENTATIONS,
            TESTS,
            STRINGS,
            EXPORTED_AS,
        ],
        OVERVIEW_RELATION_LIMIT,
        vec![nested_functions_request(&symbol.id)],
    )
    .await?;
    if let Some(contained) = contained.into_iter().next() {
        omitted.extend(nested_callees(graph, context, contained, &mut entry).await?);
    }
    let mut answer = envelope(AnswerStatus::Ok, vec![entry], &["exact"]);
    answer["omitted"] = Value::from(omitted);
    let name = &symbol.qualified_name;
    let removable = [
        shed("strings", name, 1),
        shed("callees", name, 1),
        shed("implementations", name, 2),
        shed("tests", name, 3),
        shed("used_by", name, 4),
        shed("callers", name, 5),
    ];
    finish(AnswerStatus::Ok, answer, max_tokens, &removable).await
}

/// `get_call_graph`: callers and/or callees, depth 1..2.
pub async fn call_graph(
    graph: &GraphClient,
    context: &TenantContext,
    selector: &str,
    direction: graph::Direction,
    depth: u32,
    max_tokens: u32,
) -> Result<Answer, Error> {
    let max_tokens = limits::normalize_max_tokens(max_tokens, limits::DEFAULT_TOKENS_CONTEXT);
    let resolved = match resolve(graph, context, selector).await? {
        Ok(resolved) => resolved,
        Err(answer) => return Ok(early(answer)),
    };
    let symbol = &resolved.symbol;
    let depth = limits::clamp_depth(depth);
    let name = &symbol.qualified_name;
    let (wanted, removable): (Vec<Wanted>, Vec<Removable>) = [(CALLERS, 2), (CALLEES, 1)]
        .into_iter()
        .filter(|(relation, _)| {
            direction == graph::Direction::Both
                || direction == graph::Direction::Unspecified
                || direction == relation.direction
        })
        .map(|(relation, priority)| {
            let removable = Removable {
                pointer: format!("/entries/0/{}", relation.field),
                what: format!("{} of {name}", relation.field),
                priority,
            };
            (relation, removable)
        })
        .unzip();
    let mut entry = card(symbol, false);
    resolved.note_variants(&mut entry);
    // The symbol's nested functions come in the same round trip as its relations.
    let with_callees = wanted.iter().any(|w| w.field == CALLEES.field);
    let extra = if with_callees {
        vec![nested_functions_request(&symbol.id)]
    } else {
        Vec::new()
    };
    let (mut omitted, contained) = attach_with(
        graph,
        context,
        &symbol.id,
        depth,
        &mut entry,
        &wanted,
        RELATION_LIMIT,
        extra,
    )
    .await?;
    if let Some(contained) = contained.into_iter().next() {
        omitted.extend(nested_callees(graph, context, contained, &mut entry).await?);
    }
    let mut answer = envelope(AnswerStatus::Ok, vec![entry], &["exact"]);
    answer["omitted"] = Value::from(omitted);
    finish(AnswerStatus::Ok, answer, max_tokens, &removable).await
}

/// The expansion that finds a symbol's nested functions (sent with its relations).
fn nested_functions_request(id: &str) -> graph::ExpandRequest {
    graph::ExpandRequest {
        ids: vec![id.to_owned()],
        edge_kinds: vec![graph::EdgeKind::Contains as i32],
        direction: graph::Direction::Outgoing as i32,
        depth: 2,
        limit_per_direction: RELATION_LIMIT,
    }
}

/// What a symbol's nested functions (closures, local helpers such as the `next` inside
/// Express's `proto.handle`) call is part of what the symbol does: their callees join the
/// symbol's, each with `via` naming the nested function, up to [`RELATION_LIMIT`] in all.
/// `contained` is the answer to [`nested_functions_request`].
async fn nested_callees(
    graph: &GraphClient,
    context: &TenantContext,
    contained: graph::ExpandResponse,
    entry: &mut Value,
) -> Result<Vec<Value>, Error> {
    let nested: Vec<graph::SymbolCard> = contained
        .expansions
        .into_iter()
        .flat_map(|e| e.neighbors)
        .filter_map(|n| n.card)
        .filter(|c| matches!(c.kind.as_str(), "function" | "method"))
        .collect();
    if nested.is_empty() {
        return Ok(Vec::new());
    }
    let expanded = graph
        .expand(
            context,
            graph::ExpandRequest {
                ids: nested.iter().map(|c| c.id.clone()).collect(),
                edge_kinds: vec![graph::EdgeKind::Calls as i32],
                direction: graph::Direction::Outgoing as i32,
                depth: 1,
                limit_per_direction: RELATION_LIMIT,
            },
        )
        .await?;
    let Some(callees) = entry["callees"].as_array_mut() else {
        return Ok(Vec::new());
    };
    let mut seen: std::collections::HashSet<String> = callees
        .iter()
        .filter_map(|c| c["qualified_name"].as_str().map(str::to_owned))
        .chain(nested.iter().map(|c| c.qualified_name.clone()))
        .collect();
    let mut left_out = 0;
    for expansion in expanded.expansions {
        let via = expansion.root.map(|r| r.name).unwrap_or_default();
        for n in &expansion.neighbors {
            let mut value = neighbor(n);
            let Some(name) = value["qualified_name"].as_str().map(str::to_owned) else {
                continue;
            };
            if value["kind"] == "external" || !seen.insert(name) {
                continue;
            }
            if callees.len() >= RELATION_LIMIT as usize {
                left_out += 1;
                continue;
            }
            value["via"] = Value::from(via.clone());
            callees.push(value);
        }
    }
    Ok((left_out > 0)
        .then(|| json!({"what": "callees of nested functions", "count": left_out, "reason": "node_limit"}))
        .into_iter()
        .collect())
}

/// `search`: exact matches first, then BM25, fused by rank, hydrated (stale ids dropped),
/// at most 8 entries.
#[allow(clippy::too_many_arguments)]
pub async fn search(
    lexical_client: &LexicalClient,
    retrieval: RetrievalLegs,
    dense: Option<&DenseCode>,
    graph: &GraphClient,
    context: &TenantContext,
    query: &str,
    kinds: Vec<String>,
    limit: u32,
) -> Result<Answer, Error> {
    if query.trim().is_empty() {
        return Err(Error::invalid_argument("query", "query is empty"));
    }
    limits::check_bytes("query", query, limits::TASK_BYTES)?;
    let limit = if limit == 0 {
        limits::ENTRIES_AFTER_HYDRATION
    } else {
        (limit as usize).min(limits::ENTRIES_AFTER_HYDRATION)
    };
    let ranked = ranked_cards(
        lexical_client,
        retrieval,
        dense,
        graph,
        context,
        query,
        kinds,
        limit,
        Vec::new(),
    )
    .await?;
    let found = ranked.cards;
    let used_by = used_by_of(graph, context, &found).await?;
    let entries: Vec<Value> = found
        .into_iter()
        .zip(used_by)
        .map(|((found, legs), used_by)| {
            let mut entry = card(&found, false);
            entry["found_by"] = Value::from(legs);
            if !used_by.is_empty() {
                entry["used_by"] = Value::from(used_by);
            }
            entry
        })
        .collect();
    if entries.is_empty() {
        let (json, tokens) = finalize(json!({
            "status": "not_found",
            "entries": [],
            "omitted": [],
            "suggestion": "no symbol matches; try other words, a qualified name, or an error message",
            "provenance": {"degraded": ranked.degraded, "scores": scores(ranked.dense_top, ranked.lexical_strength)},
            "tokens": 0
        }));
        return Ok(Answer {
            status: AnswerStatus::NotFound,
            json,
            tokens,
        });
    }
    let mut answer = envelope(AnswerStatus::Ok, entries, &["exact", "name", "vector"]);
    answer["provenance"]["degraded"] = Value::from(ranked.degraded);
    answer["provenance"]["scores"] = scores(ranked.dense_top, ranked.lexical_strength);
    finish(
        AnswerStatus::Ok,
        answer,
        limits::DEFAULT_TOKENS_CONTEXT,
        &[],
    )
    .await
}

/// What the ranked legs saw (the best dense similarity, the best BM25 score per word of
/// the query), for calibrating the no-match floors (`bench/calibration/code.json`).
fn scores(dense_top: Option<f64>, lexical_strength: Option<f64>) -> Value {
    let round = |v: Option<f64>| v.map(|v| (v * 1000.0).round() / 1000.0);
    json!({"dense_top": round(dense_top), "lexical_strength": round(lexical_strength)})
}

/// Where search hits are used without being called, per hit (qualified names, at most
/// [`SEARCH_USED_BY`] each): a rare variable or type found by search shows where it is
/// used, not only where it is defined. One expansion for all hits.
const SEARCH_USED_BY: u32 = 5;

async fn used_by_of(
    graph: &GraphClient,
    context: &TenantContext,
    found: &[(graph::SymbolCard, Vec<String>)],
) -> Result<Vec<Vec<Value>>, Error> {
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let expanded = graph
        .expand(
            context,
            graph::ExpandRequest {
                ids: found.iter().map(|(c, _)| c.id.clone()).collect(),
                edge_kinds: vec![graph::EdgeKind::References as i32],
                direction: graph::Direction::Incoming as i32,
                depth: 1,
                limit_per_direction: SEARCH_USED_BY,
            },
        )
        .await?;
    let mut by_root: HashMap<String, Vec<Value>> = expanded
        .expansions
        .into_iter()
        .filter_map(|e| {
            let root = e.root?.id;
            let names = e
                .neighbors
                .iter()
                .filter_map(|n| {
                    n.card
                        .as_ref()
                        .map(|c| Value::from(c.qualified_name.clone()))
                })
                .collect();
            Some((root, names))
        })
        .collect();
    Ok(found
        .iter()
        .map(|(c, _)| by_root.remove(&c.id).unwrap_or_default())
        .collect())
}

/// Longest subject (lines) whose source `minimal_context` includes.
const TASK_SOURCE_LINES: u32 = 30;

/// A message's context: the symbol that raises or holds it (`in`), and what uses or calls
/// that symbol (a sentinel error variable is returned by the functions that use it).
async fn message_context(
    graph: &GraphClient,
    context: &TenantContext,
    id: &str,
    entry: &mut Value,
) -> Result<Vec<Value>, Error> {
    let holders = graph
        .expand(
            context,
            graph::ExpandRequest {
                ids: vec![id.to_owned()],
                edge_kinds: vec![graph::EdgeKind::Contains as i32],
                direction: graph::Direction::Incoming as i32,
                depth: 1,
                limit_per_direction: 2,
            },
        )
        .await?;
    let Some(holder) = holders
        .expansions
        .into_iter()
        .flat_map(|e| e.neighbors)
        .find(|n| n.card.as_ref().is_some_and(|c| c.kind != "file"))
    else {
        return Ok(Vec::new());
    };
    let holder_id = holder
        .card
        .as_ref()
        .map(|c| c.id.clone())
        .unwrap_or_default();
    entry["in"] = neighbor(&holder);
    attach(
        graph,
        context,
        &holder_id,
        1,
        entry,
        &[CALLERS, USED_BY],
        OVERVIEW_RELATION_LIMIT,
    )
    .await
}

/// Symbols one identifier in a task may resolve to.
const IDENTIFIER_MATCHES: u32 = 3;
/// Identifiers looked up exactly per task.
const TASK_IDENTIFIERS: usize = 5;
/// Words beyond which a task is prose, not a question about a name.
const TASK_NAMES_ONLY_WORDS: usize = 8;

/// Words of a task that look like code identifiers rather than prose: qualified
/// (`Server.Serve`, `a::b`), snake_case, camelCase or PascalCase, or called (`run()`).
/// Plain words (`server`, `The`) are left to the ranked legs.
fn identifiers(task: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let is_name = |s: &str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    for raw in task
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '(' | ')' | '*')))
    {
        // A Go method by its receiver: `(*Context).Next`, `(Server).Serve`.
        let trimmed = raw.trim_end_matches(['.', ':', ',']);
        if let Some((receiver, method)) = trimmed
            .strip_prefix('(')
            .and_then(|rest| rest.split_once(")."))
            && is_name(receiver.trim_start_matches('*'))
            && is_name(method)
        {
            if !found.iter().any(|f| f == trimmed) {
                found.push(trimmed.to_owned());
            }
            if found.len() == TASK_IDENTIFIERS {
                break;
            }
            continue;
        }
        let raw = raw.trim_start_matches('*');
        let called = raw.contains("()");
        let word = raw
            .trim_end_matches(['(', ')'])
            .trim_matches(|c: char| matches!(c, '.' | ':' | '(' | ')'));
        if word.len() < 3
            || word.contains(['(', ')'])
            || !word.starts_with(|c: char| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        let qualified = word.contains('.') || word.contains("::");
        let snake = word.contains('_');
        let inner_upper = word.chars().skip(1).any(|c| c.is_uppercase())
            && word.chars().any(|c| c.is_lowercase());
        if (called || qualified || snake || inner_upper) && !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
            if found.len() == TASK_IDENTIFIERS {
                break;
            }
        }
    }
    found
}

/// Symbols the identifiers named in free text resolve to, exactly (up to
/// [`IDENTIFIER_MATCHES`] each, in order, once).
async fn resolve_identifiers(
    graph: &GraphClient,
    context: &TenantContext,
    identifiers: &[String],
    kinds: &[String],
) -> Result<Vec<String>, Error> {
    let mut exact: Vec<String> = Vec::new();
    for identifier in identifiers {
        let found = graph
            .lookup_symbols(
                context,
                graph::LookupSymbolsRequest {
                    selector: identifier.clone(),
                    kinds: kinds.to_vec(),
                    limit: IDENTIFIER_MATCHES,
                },
            )
            .await?;
        for symbol in found.matches {
            if !exact.contains(&symbol.id) {
                exact.push(symbol.id);
            }
        }
    }
    Ok(exact)
}

/// `minimal_context`: the smallest useful answer for a task. The best-ranked symbol is
/// the subject (card, callers, callees); the next ones are listed as related cards.
/// Packed under the budget (default 1,500): related cards go first (lowest ranked first),
/// then callees, then callers; every omission is listed, and the answer names the next
/// call to make for more.
#[allow(clippy::too_many_arguments)]
pub async fn minimal_context(
    lexical_client: &LexicalClient,
    retrieval: RetrievalLegs,
    dense: Option<&DenseCode>,
    graph: &GraphClient,
    memory: Option<&crate::memory::Legs<'_>>,
    context: &TenantContext,
    task: &str,
    max_tokens: u32,
) -> Result<Answer, Error> {
    if task.trim().is_empty() {
        return Err(Error::invalid_argument(
            "task",
            "task is empty: describe what you are working on, with the names you know",
        ));
    }
    limits::check_bytes("task", task, limits::TASK_BYTES)?;
    let max_tokens =
        limits::normalize_max_tokens(max_tokens, limits::DEFAULT_TOKENS_MINIMAL_CONTEXT);
    let named = identifiers(task);
    // Whether the names exist decides what is asked in every arm; only the exact leg
    // answers with them.
    let resolved = resolve_identifiers(graph, context, &named, &[]).await?;
    // A task that names identifiers none of which exists asks about those names, not
    // about its other words: rank by the names alone, so prose ("where is the function")
    // cannot pass unrelated symbols off as an answer. Unless the task is mostly prose and
    // its only unresolved names read like product names (macOS, SQLite, PostgreSQL), not
    // code (RateLimiter, initFormCache, os.path.join, parse_args): then the prose is what
    // is asked.
    let strong = named.iter().any(|n| code_like(n));
    let prose = task.split_whitespace().count() > TASK_NAMES_ONLY_WORDS;
    let unresolved = !named.is_empty() && resolved.is_empty() && (strong || !prose);
    let exact = if retrieval.exact() {
        resolved
    } else {
        Vec::new()
    };
    let query = if unresolved {
        // The last part of a qualified name is what is asked for (`os.path.frobnicate`
        // asks for `frobnicate`, not for everything under `os.path`).
        named.iter().map(|n| leaf(n)).collect::<Vec<_>>().join(" ")
    } else {
        task.to_owned()
    };
    // The agent's notes are looked up while the code ranks.
    let (found, notes) = tokio::join!(
        ranked_cards(
            lexical_client,
            retrieval,
            dense,
            graph,
            context,
            &query,
            vec![],
            limits::ENTRIES_AFTER_HYDRATION,
            exact,
        ),
        async {
            match memory {
                // The same rule for the notes: names nobody has are what is asked.
                Some(legs) => {
                    memory_notes(legs, context, if unresolved { &query } else { task }).await
                }
                None => None,
            }
        }
    );
    let ranked = found?;
    let (degraded, ranked_scores) = (
        ranked.degraded,
        scores(ranked.dense_top, ranked.lexical_strength),
    );
    let mut found = ranked.cards;
    if unresolved {
        // Ranked on the names alone, hits must still carry one of them (BM25 also
        // matches their parts: `Server` in `FrobnicateServer`).
        let leaves: Vec<String> = named.iter().map(|n| leaf(n).to_lowercase()).collect();
        found.retain(|(card, _)| {
            let name = card.qualified_name.to_lowercase();
            leaves.iter().any(|leaf| name.contains(leaf.as_str()))
        });
    }
    if found.is_empty()
        && let Some(notes) = notes
    {
        // Only the agent's notes match: they are the answer.
        let answer = json!({
            "status": "ok",
            "entries": [],
            "memory": notes,
            "omitted": [],
            "provenance": {"legs": ["exact", "name", "vector"], "degraded": degraded, "scores": ranked_scores},
            "tokens": 0
        });
        return finish(AnswerStatus::Ok, answer, max_tokens, &memory_notes_shed()).await;
    }
    if found.is_empty() {
        // The agent knows what it asked: the names are not repeated back.
        let suggestion = if unresolved {
            "no symbol has the names this task gives; check their spelling, or describe the behaviour instead".to_owned()
        } else {
            "nothing in the repository matches the task's words; name a symbol, file or error message".to_owned()
        };
        let (json, tokens) = finalize(json!({
            "status": "not_found",
            "entries": [],
            "omitted": [],
            "suggestion": suggestion,
            "provenance": {"degraded": degraded, "scores": ranked_scores},
            "tokens": 0
        }));
        return Ok(Answer {
            status: AnswerStatus::NotFound,
            json,
            tokens,
        });
    }
    let (subject, legs) = found.remove(0);
    let name = subject.qualified_name.clone();
    let mut entry = card(&subject, false);
    entry["found_by"] = Value::from(legs);
    // Types are understood through what implements or extends them; functions through
    // their calls.
    // Variables and constants through what uses them.
    let is_type = !matches!(subject.kind.as_str(), "function" | "method");
    let wanted: &[Wanted] = if is_type {
        &[CALLERS, CALLEES, USED_BY, IMPLEMENTATIONS]
    } else {
        &[CALLERS, CALLEES, USED_BY]
    };
    let (mut omitted, contained) = attach_with(
        graph,
        context,
        &subject.id,
        1,
        &mut entry,
        wanted,
        // The 1,500-token budget trims these; 20 leave the packer a choice.
        RELATION_LIMIT,
        if is_type {
            Vec::new()
        } else {
            vec![nested_functions_request(&subject.id)]
        },
    )
    .await?;
    if let Some(contained) = contained.into_iter().next() {
        omitted.extend(nested_callees(graph, context, contained, &mut entry).await?);
    }
    if matches!(subject.kind.as_str(), "error_message" | "string") {
        omitted.extend(message_context(graph, context, &subject.id, &mut entry).await?);
    }
    // A short subject is read in full: its source answers most questions about it.
    let span = subject.span.clone().unwrap_or_default();
    if !is_type || matches!(subject.kind.as_str(), "type" | "class") {
        let lines = span.end_line.saturating_sub(span.start_line) + 1;
        if span.start_line > 0 && lines <= TASK_SOURCE_LINES {
            let snippet = graph
                .read_snippet(
                    context,
                    graph::ReadSnippetRequest {
                        symbol_id: subject.id.clone(),
                        fingerprint: String::new(),
                    },
                )
                .await;
            if let Ok(snippet) = snippet {
                entry["text"] = Value::from(snippet.text);
            }
        }
    }
    let related: Vec<Value> = found
        .iter()
        .map(|(c, legs)| {
            let mut value = card(c, false);
            value.as_object_mut().expect("object").remove("fingerprint");
            value["found_by"] = Value::from(legs.clone());
            value
        })
        .collect();
    let mut answer = envelope(AnswerStatus::Ok, vec![entry], &["exact", "name", "vector"]);
    answer["provenance"]["degraded"] = Value::from(degraded);
    answer["provenance"]["scores"] = ranked_scores;
    answer["related"] = Value::from(related);
    if let Some(notes) = notes {
        answer["memory"] = notes;
    }
    answer["omitted"] = Value::from(omitted);
    answer["next"] = Value::from(format!(
        "get_symbol_context {name:?} for its implementations and tests; get_code_snippet for its source"
    ));
    let related = Removable {
        pointer: "/related".into(),
        what: "related symbols".into(),
        priority: 1,
    };
    let removable: Vec<Removable> = std::iter::once(related)
        .chain(memory_notes_shed())
        .chain([
            shed("text", &name, 3),
            shed("callees", &name, 4),
            shed("used_by", &name, 5),
            shed("callers", &name, 6),
            shed("implementations", &name, 7),
        ])
        .collect();
    finish(AnswerStatus::Ok, answer, max_tokens, &removable).await
}

/// Whether a word the task names reads as code: qualified, snake_case, called, or camel
/// case with two capitalised words (`RateLimiter`) or after a lower-case start
/// (`initFormCache`); product names (`macOS`, `SQLite`, `PostgreSQL`) have one or none.
fn code_like(word: &str) -> bool {
    if word.contains('.') || word.contains("::") || word.contains('_') || word.contains('(') {
        return true;
    }
    let chars: Vec<char> = word.chars().collect();
    let humps = chars
        .windows(2)
        .filter(|pair| pair[0].is_uppercase() && pair[1].is_lowercase())
        .count();
    let lower_start = chars.first().is_some_and(|c| c.is_lowercase());
    humps >= 2 || (lower_start && humps >= 1)
}

/// The last part of a qualified name: `frobnicate` of `os.path.frobnicate`.
fn leaf(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

/// How memory notes shrink under the budget: facts first, then entries (the notice stays).
fn memory_notes_shed() -> [Removable; 2] {
    [
        Removable {
            pointer: "/memory/facts".into(),
            what: "memory facts".into(),
            priority: 2,
        },
        Removable {
            pointer: "/memory/entries".into(),
            what: "memory entries".into(),
            priority: 3,
        },
    ]
}

/// Memory entries kept in a minimal context.
const MEMORY_NOTES: u32 = 3;

/// The agent's own notes that match the task (hybrid recall, 3 entries, 1 hop), or None
/// when nothing matches or memory cannot be read; never fails the code answer.
async fn memory_notes(
    legs: &crate::memory::Legs<'_>,
    context: &TenantContext,
    task: &str,
) -> Option<Value> {
    let mut end = task.len().min(limits::RECALL_QUERY_BYTES);
    while !task.is_char_boundary(end) {
        end -= 1;
    }
    let recalled = crate::memory::recall(legs, context, &task[..end], MEMORY_NOTES, 1)
        .await
        .map_err(|error| {
            codectx_telemetry::record_fallback(codectx_telemetry::FallbackLeg::MemoryNotes);
            tracing::debug!(%error, "memory notes skipped")
        })
        .ok()?;
    if recalled.status != AnswerStatus::Ok {
        return None;
    }
    let value: Value = serde_json::from_str(&recalled.json).ok()?;
    Some(json!({
        "entries": value["entries"],
        "facts": value["facts"],
        "notice": crate::memory::NOTICE,
    }))
}

/// What `get_pr_context` is asked about.
pub enum Change {
    Diff(String),
    Files(Vec<String>),
}

/// `get_pr_context`: the symbols a change touches, each with its callers and tests (the
/// blast radius), and the changed paths the graph does not know. Budget default 20,000:
/// callers go first (last symbol first), then tests, then whole symbols from the end;
/// if not even the first changed symbol fits, `budget_exceeded`.
pub async fn pr_context(
    graph: &GraphClient,
    context: &TenantContext,
    change: Change,
    max_tokens: u32,
) -> Result<Answer, Error> {
    let max_tokens = limits::normalize_max_tokens(max_tokens, limits::DEFAULT_TOKENS_CONTEXT);
    let change = match change {
        Change::Diff(diff) => {
            if diff.trim().is_empty() {
                return Err(Error::invalid_argument(
                    "diff",
                    "diff is empty: pass a unified diff (git diff) or the changed files",
                ));
            }
            limits::check_bytes("diff", &diff, limits::DIFF_BYTES)?;
            graph::get_change_impact_request::Change::Diff(diff)
        }
        Change::Files(paths) => {
            if paths.is_empty() {
                return Err(Error::invalid_argument(
                    "files",
                    "files is empty: pass the changed paths or a unified diff",
                ));
            }
            limits::check_count("files", paths.len(), limits::FILE_LIST_ENTRIES, "files")?;
            for path in &paths {
                limits::check_bytes("files", path, limits::SELECTOR_BYTES)?;
            }
            graph::get_change_impact_request::Change::Files(graph::FileList { paths })
        }
    };
    let impact = graph
        .get_change_impact(
            context,
            graph::GetChangeImpactRequest {
                change: Some(change),
                limit_per_symbol: RELATION_LIMIT,
            },
        )
        .await?;
    if impact.changed.is_empty() {
        let (json, tokens) = finalize(json!({
            "status": "not_found",
            "entries": [],
            "unknown_paths": impact.unknown_paths,
            "omitted": [],
            "suggestion": "the change touches no indexed symbol; check the paths are relative to the repository root, or re-index",
            "tokens": 0
        }));
        return Ok(Answer {
            status: AnswerStatus::NotFound,
            json,
            tokens,
        });
    }
    let mut omitted = Vec::new();
    let mut entries = Vec::new();
    for changed in &impact.changed {
        let symbol = changed.symbol.clone().unwrap_or_default();
        let mut entry = card(&symbol, false);
        entry["callers"] = Value::from(changed.callers.iter().map(neighbor).collect::<Vec<_>>());
        let used_by: Vec<Value> = changed
            .used_by
            .iter()
            .map(neighbor)
            .filter(|n| {
                !is_own_member(
                    &symbol.qualified_name,
                    n["qualified_name"].as_str().unwrap_or(""),
                )
            })
            .collect();
        if !used_by.is_empty() {
            entry["used_by"] = Value::from(used_by);
        }
        entry["tests"] = Value::from(changed.tests.iter().map(neighbor).collect::<Vec<_>>());
        omitted.extend(tests_out_of_callers(&mut entry));
        entries.push(entry);
        omitted.extend(
            changed
                .omitted
                .iter()
                .map(|o| json!({"what": o.what, "count": o.count, "reason": o.reason})),
        );
    }
    let count = entries.len();
    let mut answer = envelope(AnswerStatus::Ok, entries, &["exact"]);
    answer["unknown_paths"] = Value::from(impact.unknown_paths);
    answer["omitted"] = Value::from(omitted);
    let mut removable = Vec::new();
    for index in (0..count).rev() {
        removable.push(Removable {
            pointer: format!("/entries/{index}/used_by"),
            what: "symbols that use changed symbols without calling them".into(),
            priority: 1,
        });
    }
    for index in (0..count).rev() {
        removable.push(Removable {
            pointer: format!("/entries/{index}/callers"),
            what: "callers of changed symbols".into(),
            priority: 1,
        });
    }
    for index in (0..count).rev() {
        removable.push(Removable {
            pointer: format!("/entries/{index}/tests"),
            what: "tests of changed symbols".into(),
            priority: 2,
        });
    }
    removable.push(Removable {
        pointer: "/entries".into(),
        what: "changed symbols".into(),
        priority: 3,
    });
    let packed = finish(AnswerStatus::Ok, answer, max_tokens, &removable).await?;
    if packed.status == AnswerStatus::Ok
        && serde_json::from_str::<Value>(&packed.json)
            .map_err(|e| Error::internal(format!("packed answer: {e}")))?["entries"]
            .as_array()
            .is_none_or(|e| e.is_empty())
    {
        let (json, tokens) = finalize(json!({
            "status": "budget_exceeded",
            "entries": [],
            "omitted": [],
            "message": format!("not even the first changed symbol fits in {max_tokens} tokens: raise max_tokens"),
            "tokens": 0
        }));
        return Ok(Answer {
            status: AnswerStatus::BudgetExceeded,
            json,
            tokens,
        });
    }
    Ok(packed)
}

/// What `get_code_snippet` is asked for: a selector or an opaque id from an earlier answer.
pub enum SnippetTarget {
    Symbol(String),
    Id(String),
}

/// `get_code_snippet`: lazy detail. The source is read from the checkout now and verified
/// against the symbol's content hash (and against the fingerprint the caller holds, when
/// given): a mismatch fails closed as `stale`, never returning text that changed. Ids
/// resolve only within the caller's graph. Snippets above the 20,000-token ceiling answer
/// `budget_exceeded` with the symbol's card, so the agent can narrow its question.
pub async fn code_snippet(
    graph: &GraphClient,
    context: &TenantContext,
    target: SnippetTarget,
    fingerprint: &str,
) -> Result<Answer, Error> {
    limits::check_bytes("fingerprint", fingerprint, limits::SELECTOR_BYTES)?;
    let id = match target {
        SnippetTarget::Symbol(selector) => match resolve(graph, context, &selector).await? {
            Ok(resolved) => resolved.symbol.id,
            Err(answer) => return Ok(early(answer)),
        },
        SnippetTarget::Id(id) => {
            if id.trim().is_empty() {
                return Err(Error::invalid_argument("id", "id is empty"));
            }
            limits::check_bytes("id", &id, limits::SELECTOR_BYTES)?;
            id
        }
    };
    let snippet = graph
        .read_snippet(
            context,
            graph::ReadSnippetRequest {
                symbol_id: id,
                fingerprint: fingerprint.into(),
            },
        )
        .await?;
    let symbol = snippet.symbol.unwrap_or_default();
    let mut entry = card(&symbol, false);
    entry["text"] = Value::from(snippet.text);
    let answer = envelope(AnswerStatus::Ok, vec![entry], &["exact"]);
    let answer = finish(AnswerStatus::Ok, answer, limits::MAX_TOKENS, &[]).await?;
    if answer.status == AnswerStatus::BudgetExceeded {
        let (json, tokens) = finalize(json!({
            "status": "budget_exceeded",
            "entries": [card(&symbol, false)],
            "omitted": [{"what": format!("source of {}", symbol.qualified_name), "count": 1, "reason": "budget"}],
            "suggestion": "the source is larger than 20,000 tokens; ask get_symbol_context or get_call_graph about its parts",
            "tokens": 0
        }));
        return Ok(Answer {
            status: AnswerStatus::BudgetExceeded,
            json,
            tokens,
        });
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::{code_like, identifiers, is_own_member};

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
