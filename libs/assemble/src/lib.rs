//! The pure parts of context assembly, shared by every answer: reciprocal rank fusion of
//! the retrieval legs (k = 60, over ranks, never raw scores; exact matches first) and
//! packing a structured answer under a token budget, where the estimate is
//! ceil(bytes of the complete JSON / 4) including the token field itself, lowest-value
//! detail goes first, and every omission is listed.

use std::collections::HashMap;

use codectx_core::limits;
use codectx_errors::{Error, ErrorKind};
use serde::Serialize;
use serde_json::Value;

/// Which leg found a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Leg {
    Exact,
    Name,
    Vector,
}

/// A fused candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fused {
    pub id: String,
    /// Sum over legs of 1 / (k + rank), rank starting at 1.
    pub score: f64,
    pub legs: Vec<Leg>,
    pub exact: bool,
}

/// Fuses ranked legs with RRF (k = 60). Exact matches come first (in their own order),
/// then the rest by fused score; a tie goes to the candidate seen first (the legs in the
/// order given, each by rank), never to an id: ids differ between two graphs of the same
/// code, and the answer must not. Duplicates across legs merge into one entity with every
/// leg that found it.
pub fn fuse(exact: &[String], legs: &[(Leg, Vec<String>)], limit: usize) -> Vec<Fused> {
    let weighted: Vec<(Leg, &[String], f64)> = legs
        .iter()
        .map(|(leg, ids)| (*leg, ids.as_slice(), 1.0))
        .collect();
    fuse_weighted(exact, &weighted, limit)
}

/// [`fuse`] with a weight per leg: a candidate's score from a leg is
/// weight / (k + rank). A weight of 1 is plain RRF.
pub fn fuse_weighted(exact: &[String], legs: &[(Leg, &[String], f64)], limit: usize) -> Vec<Fused> {
    let mut fused: HashMap<&str, Fused> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (rank, id) in exact.iter().enumerate() {
        let entry = fused.entry(id.as_str()).or_insert_with(|| {
            order.push(id.as_str());
            Fused {
                id: id.clone(),
                score: 0.0,
                legs: vec![],
                exact: true,
            }
        });
        entry.score += 1.0 / (limits::RRF_K + rank as f64 + 1.0);
        if !entry.legs.contains(&Leg::Exact) {
            entry.legs.push(Leg::Exact);
        }
    }
    for (leg, ids, weight) in legs {
        let mut seen = std::collections::HashSet::new();
        for (rank, id) in ids.iter().filter(|id| seen.insert(id.as_str())).enumerate() {
            let entry = fused.entry(id.as_str()).or_insert_with(|| {
                order.push(id.as_str());
                Fused {
                    id: id.clone(),
                    score: 0.0,
                    legs: vec![],
                    exact: false,
                }
            });
            entry.score += weight / (limits::RRF_K + rank as f64 + 1.0);
            if !entry.legs.contains(leg) {
                entry.legs.push(*leg);
            }
        }
    }
    let exact_order: HashMap<&str, usize> = exact
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let seen_at: HashMap<&str, usize> = order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut out: Vec<Fused> = order.iter().filter_map(|id| fused.remove(id)).collect();
    out.sort_by(|a, b| {
        match (
            exact_order.get(a.id.as_str()),
            exact_order.get(b.id.as_str()),
        ) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b
                .score
                .total_cmp(&a.score)
                .then_with(|| seen_at[a.id.as_str()].cmp(&seen_at[b.id.as_str()])),
        }
    });
    for entry in &mut out {
        entry.legs.sort();
    }
    out.truncate(limit);
    out
}

/// ceil(bytes / 4) of a JSON text.
pub fn estimate(json: &str) -> u32 {
    json.len().div_ceil(4) as u32
}

/// Serializes `answer` with its own estimate in `answer["tokens"]`, so the number counts
/// itself. The estimate is stable after at most a few passes (digits change length).
pub fn finalize(mut answer: Value) -> (String, u32) {
    let tokens = settle(&mut answer).0;
    (answer.to_string(), tokens)
}

/// Sets `answer["tokens"]` to the answer's own estimate, as [`finalize`] serializes it,
/// and returns it with the length of the text. Measures the answer once, without
/// writing its text: only the number's digits change between the passes, so each pass
/// after the first is arithmetic.
fn settle(answer: &mut Value) -> (u32, usize) {
    answer["tokens"] = Value::from(0u32);
    // The text with `"tokens":t` is this long, one digit of it the 0 measured here.
    let base = json_len(answer) - 1;
    let length = |tokens: u32| base + digits(tokens);
    let mut tokens = 0u32;
    for _ in 0..4 {
        let next = length(tokens).div_ceil(4) as u32;
        if next == tokens {
            answer["tokens"] = Value::from(tokens);
            return (tokens, length(tokens));
        }
        tokens = next;
    }
    let settled = length(tokens).div_ceil(4) as u32;
    answer["tokens"] = Value::from(settled);
    (settled, length(settled))
}

/// Decimal digits of `n`.
fn digits(n: u32) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// A removable piece of an answer: a JSON pointer to an array and how valuable each
/// element is (lower goes first).
#[derive(Debug, Clone)]
pub struct Removable {
    /// Array to shrink, as a JSON pointer (`/entries/0/callers`).
    pub pointer: String,
    /// What the omission list calls it (`callers of X`).
    pub what: String,
    /// Lower is dropped first.
    pub priority: u32,
}

/// Packs `answer` under `max_tokens`: drops the last elements of the removable arrays,
/// lowest priority first, recording each omission in `answer["omitted"]`. Fails with
/// `budget_exceeded` when even the answer without every removable detail does not fit.
///
/// Linear in the answer's size: each element's serialized length is measured once, and
/// each round drops as many elements as the measured excess needs before serializing
/// again (a few rounds: the omission list and the token field change length too). The
/// result is the one dropping elements one by one would reach.
pub fn pack(
    mut answer: Value,
    max_tokens: u32,
    removable: &[Removable],
) -> Result<(String, u32), Error> {
    let mut order: Vec<&Removable> = removable.iter().collect();
    order.sort_by_key(|r| r.priority);
    // Serialized length of each element (plus its separator), per removable array:
    // measured once, and only when the answer does not fit as it is.
    let mut lengths: Option<Vec<Vec<usize>>> = None;
    let existing_omitted = answer
        .get("omitted")
        .and_then(|o| o.as_array())
        .cloned()
        .unwrap_or_default();
    // An answer without a token count gets it last, after any omission list added here.
    let counted = answer.get("tokens").is_some();
    let budget_bytes = max_tokens as usize * 4;
    let mut omitted: Vec<(String, usize)> = Vec::new();
    loop {
        if !omitted.is_empty() {
            let list = omitted.iter().map(|(what, count)| {
                serde_json::json!({"what": what, "count": count, "reason": "budget"})
            });
            answer["omitted"] =
                Value::Array(existing_omitted.iter().cloned().chain(list).collect());
        }
        let (tokens, length) = settle(&mut answer);
        if tokens <= max_tokens {
            return Ok((answer.to_string(), tokens));
        }
        if !counted && let Some(fields) = answer.as_object_mut() {
            // The last field (settle added it): removing it moves no other field, with
            // `preserve_order` or without.
            fields.remove("tokens");
        }
        let lengths = lengths.get_or_insert_with(|| {
            order
                .iter()
                .map(|r| {
                    answer
                        .pointer(&r.pointer)
                        .and_then(|v| v.as_array())
                        .map(|items| items.iter().map(|item| json_len(item) + 1).collect())
                        .unwrap_or_default()
                })
                .collect()
        });
        // Drop, lowest priority first, at least one element and as many as the excess
        // bytes need; ceil(bytes / 4) <= max_tokens exactly when bytes <= 4 * max_tokens.
        let mut excess = length.saturating_sub(budget_bytes).max(1);
        let mut dropped_any = false;
        for (index, target) in order.iter().enumerate() {
            if excess == 0 {
                break;
            }
            let Some(array) = answer
                .pointer_mut(&target.pointer)
                .and_then(|v| v.as_array_mut())
            else {
                continue;
            };
            let mut dropped = 0usize;
            while excess > 0 && !array.is_empty() {
                array.pop();
                let length = lengths[index].pop().unwrap_or(1);
                excess = excess.saturating_sub(length);
                dropped += 1;
            }
            if dropped > 0 {
                dropped_any = true;
                match omitted.iter_mut().find(|(what, _)| *what == target.what) {
                    Some((_, count)) => *count += dropped,
                    None => omitted.push((target.what.clone(), dropped)),
                }
            }
        }
        if !dropped_any {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("the smallest answer needs {tokens} tokens; max_tokens is {max_tokens}: raise max_tokens"),
            )
            .with_reason("budget_exceeded")
            .with_field("max_tokens"));
        }
    }
}

/// Bytes of `value` serialized as compact JSON, without allocating the text.
fn json_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn rrf_uses_ranks_and_puts_exact_first() {
        let fused = fuse(
            &ids(&["exact"]),
            &[
                (Leg::Name, ids(&["a", "b", "c"])),
                (Leg::Vector, ids(&["c", "a", "d"])),
            ],
            10,
        );
        let order: Vec<&str> = fused.iter().map(|f| f.id.as_str()).collect();
        // a: 1/61 + 1/62; c: 1/63 + 1/61; b: 1/62; d: 1/63.
        assert_eq!(order, vec!["exact", "a", "c", "b", "d"]);
        assert_eq!(fused[1].legs, vec![Leg::Name, Leg::Vector]);
        assert!((fused[1].score - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
        assert!(fused[0].exact);
        assert_eq!(fuse(&[], &[(Leg::Name, ids(&["a", "b", "c"]))], 2).len(), 2);
    }

    #[test]
    fn a_light_leg_reorders_and_does_not_displace() {
        let dense = ids(&["a", "b", "c"]);
        let lexical = ids(&["x", "c"]);
        // Half weight: the lexical leg lifts what both found, its own best comes last.
        let fused = fuse_weighted(
            &[],
            &[(Leg::Vector, &dense, 1.0), (Leg::Name, &lexical, 0.5)],
            10,
        );
        let order: Vec<&str> = fused.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(order, ["c", "a", "b", "x"]);
        // Full weight is plain RRF: the lexical leg's best ties the dense leg's.
        let plain = fuse(
            &[],
            &[(Leg::Vector, dense.clone()), (Leg::Name, lexical.clone())],
            10,
        );
        assert_eq!(plain[0].id, "c");
        assert_eq!(plain[1].score, plain[2].score);
    }

    #[test]
    fn an_exact_match_also_found_by_a_leg_keeps_both_legs_once() {
        let fused = fuse(&ids(&["a"]), &[(Leg::Name, ids(&["a", "a", "b"]))], 10);
        assert_eq!(fused.len(), 2);
        assert_eq!(fused[0].legs, vec![Leg::Exact, Leg::Name]);
    }

    #[test]
    fn a_tie_goes_to_the_candidate_seen_first_not_to_an_id() {
        // `z` and `a` score the same (ranks 1 and 2 each); `z` was seen first.
        let fused = fuse(
            &[],
            &[
                (Leg::Name, ids(&["z", "a"])),
                (Leg::Vector, ids(&["a", "z"])),
            ],
            10,
        );
        assert_eq!(fused[0].score, fused[1].score);
        assert_eq!(fused[0].id, "z");
    }

    #[test]
    fn the_estimate_counts_itself() {
        let (text, tokens) = finalize(json!({"status": "ok", "entries": ["x".repeat(4000)]}));
        assert_eq!(tokens, estimate(&text));
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["tokens"], tokens);
    }

    /// The finalizer this replaced, serializing at every pass: the reference.
    fn finalize_by_serializing(mut answer: Value) -> (String, u32) {
        let mut tokens = 0u32;
        for _ in 0..4 {
            answer["tokens"] = Value::from(tokens);
            let text = answer.to_string();
            let next = estimate(&text);
            if next == tokens {
                return (text, tokens);
            }
            tokens = next;
        }
        answer["tokens"] = Value::from(tokens);
        let settled = estimate(&answer.to_string());
        answer["tokens"] = Value::from(settled);
        (answer.to_string(), settled)
    }

    #[test]
    fn finalizing_matches_serializing_at_every_pass() {
        // Answers of every length around the token counts that gain a digit (10, 100,
        // 1,000, 10,000), with the count absent, first, or among the fields.
        let lengths = (0..200)
            .chain(340..440)
            .chain(3_940..4_060)
            .chain(39_940..40_060);
        for length in lengths {
            let body = "x".repeat(length);
            for answer in [
                json!({"status": "ok", "body": body}),
                json!({"tokens": 0, "status": "ok", "body": body}),
                json!({"status": "ok", "tokens": 7, "body": body, "omitted": []}),
            ] {
                assert_eq!(
                    finalize(answer.clone()),
                    finalize_by_serializing(answer),
                    "{length} bytes"
                );
            }
        }
    }

    #[test]
    fn packing_drops_low_value_detail_first_and_lists_it() {
        let answer = json!({
            "status": "ok",
            "entries": [{"name": "Serve", "callers": (0..50).map(|i| format!("caller number {i}")).collect::<Vec<_>>(),
                         "tests": (0..50).map(|i| format!("test number {i}")).collect::<Vec<_>>()}],
            "omitted": []
        });
        let removable = vec![
            Removable {
                pointer: "/entries/0/tests".into(),
                what: "tests of Serve".into(),
                priority: 1,
            },
            Removable {
                pointer: "/entries/0/callers".into(),
                what: "callers of Serve".into(),
                priority: 2,
            },
        ];
        let (text, tokens) = pack(answer, 300, &removable).unwrap();
        assert!(tokens <= 300);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert!(parsed["entries"][0]["tests"].as_array().unwrap().len() < 50);
        let omitted = parsed["omitted"].as_array().unwrap();
        assert_eq!(omitted[0]["what"], "tests of Serve");
        assert_eq!(omitted[0]["reason"], "budget");
        // Tests go entirely before any caller is dropped.
        if parsed["entries"][0]["callers"].as_array().unwrap().len() < 50 {
            assert!(parsed["entries"][0]["tests"].as_array().unwrap().is_empty());
        }
    }

    #[test]
    fn a_subject_that_cannot_fit_is_budget_exceeded() {
        let answer = json!({"status": "ok", "subject": "x".repeat(2000), "omitted": []});
        let error = pack(answer, 256, &[]).unwrap_err();
        assert_eq!(error.reason(), "budget_exceeded");
        assert!(error.message().contains("raise max_tokens"));
    }

    /// The one-element-at-a-time packer this replaced: the reference for the result.
    fn pack_one_by_one(
        mut answer: Value,
        max_tokens: u32,
        removable: &[Removable],
    ) -> Option<String> {
        let mut order: Vec<&Removable> = removable.iter().collect();
        order.sort_by_key(|r| r.priority);
        let mut omitted: Vec<(String, usize)> = Vec::new();
        loop {
            let mut candidate = answer.clone();
            if !omitted.is_empty() {
                let list: Vec<Value> = omitted
                    .iter()
                    .map(|(what, count)| json!({"what": what, "count": count, "reason": "budget"}))
                    .collect();
                let existing = candidate["omitted"].as_array().cloned().unwrap_or_default();
                candidate["omitted"] = Value::Array(existing.into_iter().chain(list).collect());
            }
            let (text, tokens) = finalize(candidate);
            if tokens <= max_tokens {
                return Some(text);
            }
            let target = order.iter().find(|r| {
                answer
                    .pointer(&r.pointer)
                    .and_then(|v| v.as_array())
                    .is_some_and(|a| !a.is_empty())
            })?;
            answer
                .pointer_mut(&target.pointer)
                .and_then(|v| v.as_array_mut())?
                .pop();
            match omitted.iter_mut().find(|(what, _)| *what == target.what) {
                Some((_, count)) => *count += 1,
                None => omitted.push((target.what.clone(), 1)),
            }
        }
    }

    #[test]
    fn packing_matches_dropping_one_element_at_a_time() {
        for budget in [256, 300, 420, 700, 1_000, 2_000, 5_000] {
            for width in [1usize, 7, 40] {
                let mut answer = json!({
                    "status": "ok",
                    "entries": [{"name": "Serve",
                                 "callers": (0..60).map(|i| "c".repeat(i % width + 3)).collect::<Vec<_>>(),
                                 "tests": (0..60).map(|i| json!({"n": i, "t": "t".repeat(i % 11)})).collect::<Vec<_>>()}],
                    "omitted": [{"what": "earlier", "count": 1, "reason": "node_limit"}]
                });
                // Without an omission list of its own, or with a token count among the
                // fields: the fields keep the reference's order.
                match width {
                    1 => drop(answer.as_object_mut().unwrap().remove("omitted")),
                    7 => {
                        let fields = answer.as_object_mut().unwrap();
                        let entries = fields.remove("entries").unwrap();
                        fields.insert("tokens".into(), json!(3));
                        fields.insert("entries".into(), entries);
                    }
                    _ => {}
                }
                let removable = vec![
                    Removable {
                        pointer: "/entries/0/tests".into(),
                        what: "tests".into(),
                        priority: 1,
                    },
                    Removable {
                        pointer: "/entries/0/callers".into(),
                        what: "callers".into(),
                        priority: 2,
                    },
                ];
                let fast = pack(answer.clone(), budget, &removable)
                    .ok()
                    .map(|(text, _)| text);
                let reference = pack_one_by_one(answer, budget, &removable);
                assert_eq!(fast, reference, "budget {budget}, width {width}");
            }
        }
    }

    #[test]
    fn packing_a_large_answer_serializes_a_few_times_not_once_per_element() {
        // 200,000 small elements: one-by-one packing would serialize ~200,000 times.
        let answer = json!({
            "status": "ok",
            "entries": [{"callers": (0..200_000).map(|i| format!("caller {i}")).collect::<Vec<_>>()}],
            "omitted": []
        });
        let removable = vec![Removable {
            pointer: "/entries/0/callers".into(),
            what: "callers".into(),
            priority: 1,
        }];
        let (text, tokens) = pack(answer, 500, &removable).unwrap();
        assert!(tokens <= 500);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let kept = parsed["entries"][0]["callers"].as_array().unwrap().len();
        assert_eq!(parsed["omitted"][0]["count"], 200_000 - kept);
    }
}
