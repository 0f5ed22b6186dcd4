//! `get_pr_context`: the blast radius of a change.

use super::relations::{RELATION_LIMIT, is_own_member, tests_out_of_callers};
use super::{Answer, card, envelope, finalize, finish, neighbor};
use codectx_assemble::Removable;
use codectx_clients::GraphClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

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
