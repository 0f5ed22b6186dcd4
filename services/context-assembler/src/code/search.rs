//! `search`.

use std::collections::HashMap;

use super::{Answer, card, envelope, finalize, finish, scores};
use crate::RetrievalLegs;
use crate::ranking::{DenseCode, ranked_cards};
use codectx_clients::GraphClient;
use codectx_clients::LexicalClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

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
