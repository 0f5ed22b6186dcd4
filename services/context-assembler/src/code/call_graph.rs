//! `get_call_graph`.

use super::relations::{
    CALLEES, CALLERS, RELATION_LIMIT, Wanted, attach_with, nested_callees, nested_functions_request,
};
use super::{Answer, card, early, envelope, finish, resolve};
use codectx_assemble::Removable;
use codectx_clients::GraphClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::Value;

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
