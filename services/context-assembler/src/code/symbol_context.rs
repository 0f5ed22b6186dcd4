//! `get_symbol_context`.

use super::relations::{
    CALLEES, CALLERS, EXPORTED_AS, IMPLEMENTATIONS, OVERVIEW_RELATION_LIMIT, STRINGS, TESTS,
    USED_BY, attach_with, nested_callees, nested_functions_request,
};
use super::{Answer, card, early, envelope, finish, resolve, shed};
use codectx_clients::GraphClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tenant::TenantContext;
use serde_json::Value;

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
