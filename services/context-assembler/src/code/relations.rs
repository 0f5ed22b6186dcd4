//! The relations an entry carries (callers, callees, implementations, used-by, strings,
//! tests, ...): which edges each one reads, the ranking of neighbours, and the batched
//! expansions that attach them, with a symbol's nested functions' callees.

use super::neighbor;
use codectx_clients::GraphClient;
use codectx_errors::Error;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

/// Per-direction node limit for expansions inside an answer.
pub(super) const RELATION_LIMIT: u32 = 20;
/// Neighbours per relation in the symbol-context overview: the most relevant ten (see
/// the graph's ranking); `get_call_graph` lists up to 20.
pub(super) const OVERVIEW_RELATION_LIMIT: u32 = 10;

/// One relation an entry carries: the field it goes in, the edge kind and direction.
#[derive(Clone, Copy)]
pub(super) struct Wanted {
    pub(super) field: &'static str,
    pub(super) kind: graph::EdgeKind,
    pub(super) direction: graph::Direction,
    /// Neighbour kinds kept (empty: all).
    pub(super) only: &'static [&'static str],
    /// Neighbours listed, when not the answer's default.
    pub(super) limit: Option<u32>,
}

pub(super) const CALLERS: Wanted = Wanted {
    field: "callers",
    kind: graph::EdgeKind::Calls,
    direction: graph::Direction::Incoming,
    only: &[],
    limit: None,
};
pub(super) const CALLEES: Wanted = Wanted {
    field: "callees",
    kind: graph::EdgeKind::Calls,
    direction: graph::Direction::Outgoing,
    only: &[],
    limit: None,
};
/// An interface's implementations are what is asked about it: up to 20 (own package first).
pub(super) const IMPLEMENTATIONS: Wanted = Wanted {
    field: "implementations",
    kind: graph::EdgeKind::Implements,
    direction: graph::Direction::Both,
    only: &[],
    limit: Some(RELATION_LIMIT),
};
pub(super) const USED_BY: Wanted = Wanted {
    field: "used_by",
    kind: graph::EdgeKind::References,
    direction: graph::Direction::Incoming,
    only: &[],
    limit: None,
};
/// Whether `member` is declared inside the type `owner`: `pkg.T.m`, `pkg.(*T).m`,
/// `pkg.(T).m`, `crate::T::m`.
pub(super) fn is_own_member(owner: &str, member: &str) -> bool {
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
pub(super) const QUIET: &[&str] = &["used_by", "strings", "exported_as"];

/// The public paths re-exports give the symbol (`pub use`, package `__init__` imports).
pub(super) const EXPORTED_AS: Wanted = Wanted {
    field: "exported_as",
    kind: graph::EdgeKind::Exports,
    direction: graph::Direction::Incoming,
    only: &["alias"],
    limit: None,
};
/// The messages a symbol raises and the strings it writes (CONTAINS, string kinds only).
pub(super) const STRINGS: Wanted = Wanted {
    field: "strings",
    kind: graph::EdgeKind::Contains,
    direction: graph::Direction::Outgoing,
    only: &["error_message", "string"],
    limit: None,
};
pub(super) const TESTS: Wanted = Wanted {
    field: "tests",
    kind: graph::EdgeKind::TestedBy,
    direction: graph::Direction::Outgoing,
    only: &[],
    limit: None,
};

/// A test that calls the symbol is listed once, under tests: it leaves the callers, and
/// the omission says how many moved.
pub(super) fn tests_out_of_callers(entry: &mut Value) -> Option<Value> {
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
pub(super) const EXPAND_BATCH: usize = 16;

/// Expands `id` along each wanted relation (`limit` per direction, `depth` 1..2) into the
/// entry's fields; returns the graph's omissions.
pub(super) async fn attach(
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
pub(super) async fn attach_with(
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

pub(super) fn expand_request(
    id: &str,
    relation: Wanted,
    depth: u32,
    limit: u32,
) -> graph::ExpandRequest {
    graph::ExpandRequest {
        ids: vec![id.to_owned()],
        edge_kinds: vec![relation.kind as i32],
        direction: relation.direction as i32,
        depth,
        limit_per_direction: limit,
    }
}

/// A relation's neighbours and the graph's omissions, from its expansion.
pub(super) fn expansion_of(expanded: graph::ExpandResponse) -> (Vec<Value>, Vec<Value>) {
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

/// The expansion that finds a symbol's nested functions (sent with its relations).
pub(super) fn nested_functions_request(id: &str) -> graph::ExpandRequest {
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
pub(super) async fn nested_callees(
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
