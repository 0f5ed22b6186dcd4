//! `minimal_context`: the smallest useful answer for a task.

use super::relations::{
    CALLEES, CALLERS, IMPLEMENTATIONS, OVERVIEW_RELATION_LIMIT, RELATION_LIMIT, USED_BY, Wanted,
    attach, attach_with, nested_callees, nested_functions_request,
};
use super::{Answer, card, envelope, finalize, finish, neighbor, scores, shed};
use crate::RetrievalLegs;
use crate::ranking::{DenseCode, ranked_cards};
use codectx_assemble::Removable;
use codectx_clients::GraphClient;
use codectx_clients::LexicalClient;
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

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
pub(super) fn identifiers(task: &str) -> Vec<String> {
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
pub(super) fn code_like(word: &str) -> bool {
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
