//! Session dedup of answer parts: a result entry, or a field of one (its signature,
//! summary, a neighbour list: callers, callees, tests, ...), that this MCP session
//! already received unchanged in an earlier answer comes back as a reference to that
//! call instead of in full (`unchanged: signature, callers as sent in call 2`). Agents exploring a
//! change meet the same symbol in several tools (a search hit, its card, its call graph,
//! the task context); whole-answer dedup ([`crate::ledger`]) only catches exact repeats.
//!
//! Keyed by the SHA-256 of the part's canonical JSON (and, for a field, of the entry it
//! belongs to and its name), so a part that changed in any value is sent in full. A
//! part is remembered only when it went out in full; an entry is remembered whole only
//! when none of its fields was a reference. Bounded per session.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Parts remembered per session.
pub const MAX_PARTS: usize = 4_096;
/// Fields smaller than this (as JSON) are sent again: a reference would save too little.
pub const MIN_PART_BYTES: usize = 32;
/// The field a referenced entry carries: where its full text is.
pub const UNCHANGED_FIELD: &str = "unchanged";
/// The `omitted` reason of referenced parts.
pub const PARTS_REASON: &str = "session dedup; fresh: true resends them";

/// Fields of an entry that identify it and stay in a reference.
const HEAD: &[&str] = &[
    "kind",
    "type",
    "qualified_name",
    "name",
    "path",
    "lines",
    "line",
];

/// The parts one MCP session has received.
#[derive(Debug, Default)]
pub struct PartsLedger {
    sent: HashMap<[u8; 32], u64>,
    order: VecDeque<[u8; 32]>,
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                canonical(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn digest(parts: &[&str], value: &Value) -> [u8; 32] {
    let mut text = String::new();
    canonical(value, &mut text);
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.update(text.as_bytes());
    hasher.finalize().into()
}

fn identity(entry: &Map<String, Value>) -> String {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("");
    format!(
        "{}\0{}\0{}",
        text("qualified_name"),
        text("name"),
        text("path")
    )
}

impl PartsLedger {
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    fn remember(&mut self, key: [u8; 32], call: u64) {
        if self.sent.contains_key(&key) {
            return;
        }
        if self.order.len() >= MAX_PARTS
            && let Some(oldest) = self.order.pop_front()
        {
            self.sent.remove(&oldest);
        }
        self.order.push_back(key);
        self.sent.insert(key, call);
    }

    /// The answer for call number `call`: with `replace`, every entry and list this
    /// session already received unchanged becomes a reference to the call that carried
    /// it; parts sent in full are remembered either way. Returns the answer and how
    /// many parts became references.
    pub fn apply(&mut self, answer: &Value, call: u64, replace: bool) -> (Value, usize) {
        let mut out = answer.clone();
        let mut referenced = 0;
        for list in ["entries", "related"] {
            let Some(Value::Array(entries)) = out.get_mut(list) else {
                continue;
            };
            for entry in entries.iter_mut() {
                let Value::Object(fields) = entry else {
                    continue;
                };
                referenced += self.entry(fields, call, replace);
            }
        }
        if referenced > 0
            && let Value::Object(top) = &mut out
        {
            let omitted = top
                .entry("omitted")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = omitted {
                items.push(json!({
                    "what": format!("{referenced} parts already sent in this session"),
                    "reason": PARTS_REASON,
                }));
            }
        }
        (out, referenced)
    }

    /// One entry: whole, or field by field (its signature, summary, each neighbour
    /// list, ...). Returns the references made.
    fn entry(&mut self, fields: &mut Map<String, Value>, call: u64, replace: bool) -> usize {
        let whole = digest(&["entry"], &Value::Object(fields.clone()));
        if replace && let Some(&earlier) = self.sent.get(&whole) {
            fields.retain(|key, _| HEAD.contains(&key.as_str()));
            fields.insert(
                UNCHANGED_FIELD.into(),
                Value::from(format!("as sent in call {earlier}")),
            );
            return 1;
        }
        let identity = identity(fields);
        // Fields already held, by the call that carried them.
        let mut held: Vec<(u64, String)> = Vec::new();
        let keys: Vec<String> = fields.keys().cloned().collect();
        for key in keys {
            if HEAD.contains(&key.as_str()) || key == UNCHANGED_FIELD {
                continue;
            }
            let value = &fields[&key];
            if value.to_string().len() < MIN_PART_BYTES {
                continue;
            }
            let part = digest(&["field", &identity, &key], value);
            match self.sent.get(&part) {
                Some(&earlier) if replace => {
                    fields.remove(&key);
                    held.push((earlier, key));
                }
                _ => self.remember(part, call),
            }
        }
        if held.is_empty() {
            self.remember(whole, call);
            return 0;
        }
        held.sort();
        let mut groups: Vec<String> = Vec::new();
        let mut index = 0;
        while index < held.len() {
            let earlier = held[index].0;
            let names: Vec<&str> = held[index..]
                .iter()
                .take_while(|(n, _)| *n == earlier)
                .map(|(_, name)| name.as_str())
                .collect();
            index += names.len();
            groups.push(format!("{} as sent in call {earlier}", names.join(", ")));
        }
        fields.insert(UNCHANGED_FIELD.into(), Value::from(groups.join("; ")));
        held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(callers: usize, summary: &str) -> Value {
        json!({
            "status": "ok",
            "entries": [{
                "kind": "function", "qualified_name": "shop.Run", "path": "shop/run.go", "lines": [3, 9],
                "summary": summary,
                "callers": (0..callers).map(|n| json!({"qualified_name": format!("shop.C{n}"), "path": "c.go", "line": n})).collect::<Vec<_>>(),
            }],
        })
    }

    #[test]
    fn an_entry_or_list_already_sent_becomes_a_reference() {
        let mut ledger = PartsLedger::default();
        let (first, n) = ledger.apply(&card(4, "Runs."), 1, true);
        assert_eq!((first, n), (card(4, "Runs."), 0));
        // The same entry again: a reference to call 1.
        let (again, n) = ledger.apply(&card(4, "Runs."), 2, true);
        assert_eq!(n, 1);
        assert_eq!(again["entries"][0]["unchanged"], "as sent in call 1");
        assert!(again["entries"][0].get("callers").is_none());
        assert_eq!(again["entries"][0]["path"], "shop/run.go");
        // Another summary, the same callers: only the list is a reference.
        let (other, n) = ledger.apply(&card(4, "Runs the shop, and more."), 3, true);
        assert_eq!(n, 1);
        assert!(other["entries"][0].get("callers").is_none());
        assert_eq!(
            other["entries"][0]["unchanged"],
            "callers as sent in call 1"
        );
        assert_eq!(other["entries"][0]["summary"], "Runs the shop, and more.");
    }

    #[test]
    fn a_changed_part_is_sent_in_full_and_small_ones_always() {
        let mut ledger = PartsLedger::default();
        ledger.apply(&card(4, "Runs."), 1, true);
        let (changed, n) = ledger.apply(&card(5, "Runs."), 2, true);
        assert_eq!(n, 0);
        assert_eq!(changed, card(5, "Runs."));
        let mut small = PartsLedger::default();
        small.apply(&card(0, "A."), 1, true);
        let (again, n) = small.apply(&card(0, "B."), 2, true);
        assert_eq!(
            (again, n),
            (card(0, "B."), 0),
            "an empty list is sent again"
        );
    }

    #[test]
    fn without_replace_parts_are_remembered_not_replaced() {
        let mut ledger = PartsLedger::default();
        ledger.apply(&card(4, "Runs."), 1, false);
        let (again, n) = ledger.apply(&card(4, "Runs."), 2, false);
        assert_eq!((again, n), (card(4, "Runs."), 0));
        let (third, n) = ledger.apply(&card(4, "Runs."), 3, true);
        assert_eq!(n, 1);
        assert_eq!(third["entries"][0]["unchanged"], "as sent in call 1");
    }
}
