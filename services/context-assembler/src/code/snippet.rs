//! `get_code_snippet`: lazy detail, verified against the content hash.

use super::{Answer, card, early, envelope, finalize, finish, resolve};
use codectx_clients::GraphClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

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
