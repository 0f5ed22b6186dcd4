//! What an answer keeps at a level: one [`Shape`] per tool and level, applied to the
//! assembled envelope (`status`, `entries`, `related`, `omitted`, ...) before rendering.
//!
//! Fields are named by role, not by tool, so a field the assembler adds later is kept
//! (an unknown field is never dropped by a shape).

use serde_json::{Map, Value, json};

/// Neighbour lists an entry may carry (callers, callees, ...): capped or counted.
pub const NEIGHBOUR_FIELDS: &[&str] = &[
    "callers",
    "callees",
    "implementations",
    "used_by",
    "exported_as",
    "strings",
    "tests",
    "overrides",
];

/// Name-only lists beside a relation (library calls the index could not resolve).
pub const UNRESOLVED_PREFIX: &str = "unresolved_";

/// Whether a field of an entry is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    All,
    /// Only on the answer's first entry (the subject of the question).
    First,
    None,
}

impl Keep {
    fn keeps(self, first: bool) -> bool {
        match self {
            Keep::All => true,
            Keep::First => first,
            Keep::None => false,
        }
    }
}

/// What one level of one tool keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub signature: Keep,
    pub summary: Keep,
    pub fingerprint: Keep,
    /// Source text (`text`): at most this many lines (the rest counted); 0 drops it.
    pub source_lines: usize,
    /// Per neighbour list: at most this many (None: all). 0 turns the list into a count.
    pub neighbours: Option<usize>,
    /// Neighbours keep their `kind`.
    pub neighbour_kind: bool,
    /// Neighbours keep their line (the call site, the reference): names only without.
    pub neighbour_lines: bool,
    /// Unresolved (library) names beside a relation: at most this many.
    pub unresolved: Option<usize>,
    /// `related` results (minimal_context): at most this many (None: all).
    pub related: Option<usize>,
    /// Related results keep their signature and summary.
    pub related_detail: bool,
    /// Entries beyond the first: at most this many (None: all).
    pub entries: Option<usize>,
    /// `found_by`, `provenance` and the `next` hint.
    pub diagnostics: bool,
    /// Memory facts: at most this many (None: all); facts of the first hop come first.
    pub facts: Option<usize>,
}

impl Shape {
    /// Everything kept: the answer as assembled.
    pub const OFF: Shape = Shape {
        signature: Keep::All,
        summary: Keep::All,
        fingerprint: Keep::All,
        source_lines: usize::MAX,
        neighbours: None,
        neighbour_kind: true,
        neighbour_lines: true,
        unresolved: None,
        related: None,
        related_detail: true,
        entries: None,
        diagnostics: true,
        facts: None,
    };
}

/// Counts of what a shape left out, reported in the answer's `omitted`.
#[derive(Debug, Default)]
struct Dropped {
    signatures: u64,
    summaries: u64,
    neighbours: u64,
    source_lines: u64,
    related: u64,
    entries: u64,
    facts: u64,
}

/// What the `omitted` item of a compressed answer gives as its reason: why, and how to
/// get the rest.
pub const OMITTED_REASON: &str = "compression; detail: true sends them";

/// Applies `shape` to an answer envelope. Everything it leaves out is counted in one
/// `omitted` item (reason [`OMITTED_REASON`]); an answer it leaves whole is unchanged.
pub fn apply(answer: &Value, shape: &Shape) -> Value {
    let Some(top) = answer.as_object() else {
        return answer.clone();
    };
    let mut out = top.clone();
    let mut dropped = Dropped::default();
    if let Some(Value::Array(entries)) = out.get_mut("entries") {
        if let Some(limit) = shape.entries {
            let keep = limit.saturating_add(1);
            if entries.len() > keep {
                dropped.entries += (entries.len() - keep) as u64;
                entries.truncate(keep);
            }
        }
        for (index, entry) in entries.iter_mut().enumerate() {
            if let Value::Object(fields) = entry {
                shape_entry(fields, shape, index == 0, false, &mut dropped);
            }
        }
    }
    if let Some(Value::Array(related)) = out.get_mut("related") {
        if let Some(limit) = shape.related
            && related.len() > limit
        {
            dropped.related += (related.len() - limit) as u64;
            related.truncate(limit);
        }
        for entry in related.iter_mut() {
            if let Value::Object(fields) = entry {
                shape_entry(fields, shape, false, true, &mut dropped);
            }
        }
    }
    if let Some(Value::Array(facts)) = out.get_mut("facts")
        && let Some(limit) = shape.facts
        && facts.len() > limit
    {
        // First-hop facts (about the entities found) before second-hop ones.
        facts.sort_by_key(|fact| fact.get("hop").and_then(Value::as_u64).unwrap_or(1));
        dropped.facts += (facts.len() - limit) as u64;
        facts.truncate(limit);
    }
    if !shape.diagnostics {
        out.remove("next");
        if let Some(Value::Object(provenance)) = out.get_mut("provenance") {
            // What failed stays: a degraded leg changes how far to trust the answer.
            provenance.retain(|key, value| key == "degraded" && !is_quiet(value));
        }
    }
    let mut omitted: Vec<Value> = match out.remove("omitted") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let parts: Vec<String> = [
        (dropped.entries, "results"),
        (dropped.related, "related results"),
        (dropped.neighbours, "neighbours"),
        (dropped.facts, "facts"),
        (dropped.source_lines, "source lines"),
        (dropped.signatures, "signatures"),
        (dropped.summaries, "summaries"),
    ]
    .into_iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, what)| format!("{count} {what}"))
    .collect();
    if !parts.is_empty() {
        omitted.push(json!({"what": parts.join(", "), "reason": OMITTED_REASON}));
    }
    if !omitted.is_empty() || top.contains_key("omitted") {
        out.insert("omitted".into(), Value::Array(omitted));
    }
    Value::Object(out)
}

fn is_quiet(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

/// Removes a field; whether it held anything.
fn remove(fields: &mut Map<String, Value>, key: &str) -> bool {
    fields.remove(key).is_some_and(|value| !is_quiet(&value))
}

fn shape_entry(
    fields: &mut Map<String, Value>,
    shape: &Shape,
    first: bool,
    related: bool,
    dropped: &mut Dropped,
) {
    let detail = !related || shape.related_detail;
    if !(detail && shape.signature.keeps(first)) && remove(fields, "signature") {
        dropped.signatures += 1;
    }
    if !(detail && shape.summary.keeps(first)) && remove(fields, "summary") {
        dropped.summaries += 1;
    }
    if !shape.fingerprint.keeps(first) {
        fields.remove("fingerprint");
    }
    if !shape.diagnostics {
        fields.remove("found_by");
    }
    if let Some(Value::String(text)) = fields.get("text") {
        let lines = text.lines().count();
        if shape.source_lines == 0 {
            dropped.source_lines += lines as u64;
            fields.remove("text");
        } else if lines > shape.source_lines {
            dropped.source_lines += (lines - shape.source_lines) as u64;
            let kept: Vec<&str> = text.lines().take(shape.source_lines).collect();
            let text = format!("{}\n…", kept.join("\n"));
            fields.insert("text".into(), Value::String(text));
        }
    }
    for field in NEIGHBOUR_FIELDS {
        let Some(Value::Array(list)) = fields.get_mut(*field) else {
            continue;
        };
        if list.is_empty() {
            continue;
        }
        match shape.neighbours {
            Some(0) => {
                let count = list.len();
                fields.insert((*field).into(), Value::from(count));
                continue;
            }
            Some(limit) if list.len() > limit => {
                dropped.neighbours += (list.len() - limit) as u64;
                list.truncate(limit);
            }
            _ => {}
        }
        for neighbour in list.iter_mut() {
            if let Value::Object(neighbour) = neighbour {
                if !shape.neighbour_kind {
                    neighbour.remove("kind");
                }
                if !shape.neighbour_lines {
                    neighbour.remove("line");
                    neighbour.remove("lines");
                }
            }
        }
    }
    let unresolved: Vec<String> = fields
        .keys()
        .filter(|key| key.starts_with(UNRESOLVED_PREFIX))
        .cloned()
        .collect();
    for key in unresolved {
        if let Some(Value::Array(list)) = fields.get_mut(&key) {
            match shape.unresolved {
                Some(0) => {
                    dropped.neighbours += list.len() as u64;
                    fields.remove(&key);
                }
                Some(limit) if list.len() > limit => {
                    dropped.neighbours += (list.len() - limit) as u64;
                    list.truncate(limit);
                }
                _ => {}
            }
        }
    }
}
