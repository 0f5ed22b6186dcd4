//! Scoring: evidence coverage and pass/fail of one answer, and aggregates from summed
//! counts (never averages of ratios), as `bench/WORKLOAD.md` defines them.

use serde::Serialize;
use serde_json::Value;

use super::workload::Expected;

/// ceil(bytes / 4): the `bytes/4` estimator.
pub fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// What an agent reads in a tool result: its text content, and the decoded string values
/// of its structured content (so evidence with quotes or backslashes is not missed
/// because the text copy escapes them).
pub fn haystack(texts: &[&str], structured: Option<&Value>) -> String {
    let mut out = texts.join("\n");
    if let Some(value) = structured {
        collect_strings(value, &mut out);
    }
    out
}

fn collect_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push('\n');
            out.push_str(text);
        }
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Evidence found in one answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    pub required: usize,
    pub found: usize,
    pub missing: Vec<String>,
    pub forbidden_present: Vec<String>,
}

pub fn evidence(haystack: &str, must_contain: &[String], must_not_contain: &[String]) -> Evidence {
    let missing: Vec<String> = must_contain
        .iter()
        .filter(|needle| !haystack.contains(needle.as_str()))
        .cloned()
        .collect();
    Evidence {
        required: must_contain.len(),
        found: must_contain.len() - missing.len(),
        missing,
        forbidden_present: must_not_contain
            .iter()
            .filter(|needle| haystack.contains(needle.as_str()))
            .cloned()
            .collect(),
    }
}

/// The answer's `status` and whether it offers candidates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerShape {
    pub is_error: bool,
    pub status: String,
    pub has_candidates: bool,
}

impl AnswerShape {
    /// From the structured JSON when the result carries it, else from the text (its
    /// first line is `status: <status>`; candidates and suggestions are lines of their
    /// own).
    pub fn of(is_error: bool, structured: Option<&Value>, text: &str) -> AnswerShape {
        let Some(structured) = structured else {
            let status = text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("status: "))
                .unwrap_or(if is_error { "error" } else { "" })
                .trim()
                .to_owned();
            let listed = |field: &str| {
                text.lines().any(|line| {
                    line.strip_prefix(field)
                        .and_then(|rest| rest.strip_prefix(':'))
                        .is_some()
                })
            };
            return AnswerShape {
                is_error,
                has_candidates: listed("candidates") || listed("suggestions"),
                status,
            };
        };
        let status = structured
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or(if is_error { "error" } else { "" })
            .to_owned();
        let non_empty = |field: &str| {
            structured
                .get(field)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        };
        AnswerShape {
            is_error,
            has_candidates: non_empty("candidates") || non_empty("suggestions"),
            status,
        }
    }
}

/// One tool result judged against the evidence its question or session call names.
#[derive(Debug, Clone)]
pub struct Judged {
    pub shape: AnswerShape,
    pub evidence: Evidence,
    pub passed: bool,
    pub returned_tokens: u64,
}

/// Judges `outcome` (the shape from its structured JSON or its text, the evidence in
/// what the agent reads, tokens from the bytes it received).
pub fn judge(
    outcome: &super::client::CallOutcome,
    expected: Expected,
    must_contain: &[String],
    must_not_contain: &[String],
) -> Judged {
    let shape = AnswerShape::of(outcome.is_error, outcome.structured.as_ref(), &outcome.text);
    let evidence = evidence(&outcome.haystack, must_contain, must_not_contain);
    Judged {
        passed: passed(expected, &shape, &evidence),
        returned_tokens: tokens(outcome.bytes),
        shape,
        evidence,
    }
}

/// Pass rule: `found` questions need a non-error answer other than not_found with every
/// required string and no forbidden one; `none` questions need status not_found with no
/// candidates (and no forbidden string).
pub fn passed(expected: Expected, shape: &AnswerShape, evidence: &Evidence) -> bool {
    let clean = evidence.forbidden_present.is_empty();
    match expected {
        Expected::Found => {
            !shape.is_error && shape.status != "not_found" && evidence.missing.is_empty() && clean
        }
        Expected::None => {
            shape.status == "not_found"
                && !shape.has_candidates
                && evidence.missing.is_empty()
                && clean
        }
    }
}

/// One scored question in one arm and mode (the unit the aggregates sum).
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub expected: Expected,
    pub baseline_tokens: u64,
    pub returned_tokens: u64,
    pub evidence: Evidence,
    pub passed: bool,
    pub round_trips: u32,
    pub latency_ms: f64,
}

/// Aggregates over one arm and mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Aggregate {
    pub questions: usize,
    pub passed: usize,
    /// Questions with a non-zero baseline that expect an answer (the reduction's base).
    pub with_baseline: usize,
    pub baseline_tokens: u64,
    pub returned_tokens: u64,
    /// (baseline - returned) / baseline x 100; None when no question has a baseline.
    pub reduction_pct: Option<f64>,
    /// The same with every failed question charged returned + its full baseline.
    pub effective_reduction_pct: Option<f64>,
    /// Median of the per-question reductions (for comparison with published runs).
    pub median_reduction_pct: Option<f64>,
    pub evidence_required: usize,
    pub evidence_found: usize,
    /// evidence_found / evidence_required x 100; None when nothing is required.
    pub evidence_coverage_pct: Option<f64>,
    pub round_trips: u64,
    pub latency_p50_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
}

pub fn aggregate(items: &[Scored]) -> Aggregate {
    let mut total = Aggregate {
        questions: items.len(),
        ..Aggregate::default()
    };
    let mut charged = 0u64;
    let mut per_question = Vec::new();
    let mut latencies = Vec::new();
    for item in items {
        total.passed += usize::from(item.passed);
        total.evidence_required += item.evidence.required;
        total.evidence_found += item.evidence.found;
        total.round_trips += u64::from(item.round_trips);
        latencies.push(item.latency_ms);
        // No-match questions count toward the pass rate only.
        if item.expected == Expected::None || item.baseline_tokens == 0 {
            continue;
        }
        total.with_baseline += 1;
        total.baseline_tokens += item.baseline_tokens;
        total.returned_tokens += item.returned_tokens;
        charged += item.returned_tokens + if item.passed { 0 } else { item.baseline_tokens };
        per_question.push(reduction(item.baseline_tokens, item.returned_tokens));
    }
    if total.baseline_tokens > 0 {
        total.reduction_pct = Some(reduction(total.baseline_tokens, total.returned_tokens));
        total.effective_reduction_pct = Some(reduction(total.baseline_tokens, charged));
        total.median_reduction_pct = percentile(&mut per_question, 0.5);
    }
    if total.evidence_required > 0 {
        total.evidence_coverage_pct =
            Some(100.0 * total.evidence_found as f64 / total.evidence_required as f64);
    }
    total.latency_p50_ms = percentile(&mut latencies, 0.5);
    total.latency_p95_ms = percentile(&mut latencies.clone(), 0.95);
    total
}

fn reduction(baseline: u64, returned: u64) -> f64 {
    (baseline as f64 - returned as f64) / baseline as f64 * 100.0
}

/// Nearest-rank percentile (q in 0..1) of raw samples.
pub fn percentile(samples: &mut [f64], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let rank = (q * samples.len() as f64).ceil().max(1.0) as usize;
    Some(samples[rank.min(samples.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scored(expected: Expected, baseline: u64, returned: u64, passed: bool) -> Scored {
        Scored {
            expected,
            baseline_tokens: baseline,
            returned_tokens: returned,
            evidence: Evidence {
                required: 2,
                found: if passed { 2 } else { 1 },
                ..Evidence::default()
            },
            passed,
            round_trips: 1,
            latency_ms: 1.0,
        }
    }

    #[test]
    fn the_estimator_rounds_up() {
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(1), 1);
        assert_eq!(tokens(4), 1);
        assert_eq!(tokens(5), 2);
    }

    #[test]
    fn aggregates_sum_counts_and_charge_failures_their_baseline() {
        let items = [
            scored(Expected::Found, 10_000, 500, true),
            scored(Expected::Found, 1_000, 100, false),
            // No-match: pass rate only, never the reduction.
            scored(Expected::None, 0, 50, true),
        ];
        let total = aggregate(&items);
        assert_eq!(total.questions, 3);
        assert_eq!(total.passed, 2);
        assert_eq!(total.with_baseline, 2);
        assert_eq!(total.baseline_tokens, 11_000);
        assert_eq!(total.returned_tokens, 600);
        let reduction = total.reduction_pct.unwrap();
        assert!((reduction - (10_400.0 / 11_000.0 * 100.0)).abs() < 1e-9);
        // The failed question is charged 100 + 1,000.
        let effective = total.effective_reduction_pct.unwrap();
        assert!((effective - ((11_000.0 - 1_600.0) / 11_000.0 * 100.0)).abs() < 1e-9);
        assert_eq!(total.evidence_required, 6);
        assert_eq!(total.evidence_found, 5);
    }

    #[test]
    fn no_baseline_means_not_applicable() {
        let total = aggregate(&[scored(Expected::None, 0, 10, true)]);
        assert_eq!(total.reduction_pct, None);
        assert_eq!(total.effective_reduction_pct, None);
    }

    #[test]
    fn pass_rules() {
        let evidence_ok = evidence("a json/__init__.py dumps", &["dumps".into()], &[]);
        let found = AnswerShape::of(false, Some(&json!({"status": "ok", "entries": [1]})), "");
        assert!(passed(Expected::Found, &found, &evidence_ok));
        let missing = evidence("nothing", &["dumps".into()], &[]);
        assert!(!passed(Expected::Found, &found, &missing));
        let forbidden = evidence("dumps secret", &["dumps".into()], &["secret".into()]);
        assert!(!passed(Expected::Found, &found, &forbidden));
        let error = AnswerShape::of(true, Some(&json!({"status": "error"})), "");
        assert!(!passed(Expected::Found, &error, &evidence_ok));

        let none = AnswerShape::of(
            false,
            Some(&json!({"status": "not_found", "entries": []})),
            "",
        );
        let empty = evidence("", &[], &[]);
        assert!(passed(Expected::None, &none, &empty));
        assert!(!passed(Expected::Found, &none, &empty));
        let with_candidates = AnswerShape::of(
            false,
            Some(&json!({"status": "not_found", "candidates": [{"name": "x"}]})),
            "",
        );
        assert!(!passed(Expected::None, &with_candidates, &empty));
        assert!(!passed(Expected::None, &found, &empty));
    }

    #[test]
    fn the_shape_of_a_text_only_answer_is_read_from_its_text() {
        let none = AnswerShape::of(false, None, "status: not_found\nnotice: nothing\n");
        assert_eq!(none.status, "not_found");
        assert!(!none.has_candidates);
        let offered = AnswerShape::of(false, None, "status: not_found\nsuggestions: a, b\n");
        assert!(offered.has_candidates);
        let listed = AnswerShape::of(false, None, "status: ambiguous\ncandidates:\n  a.py: 1 f\n");
        assert!(listed.has_candidates);
        // A field that merely starts with the word is not a candidates list.
        let other = AnswerShape::of(false, None, "status: ok\ncandidates_seen: 3\n");
        assert!(!other.has_candidates);
        let error = AnswerShape::of(true, None, "");
        assert_eq!(error.status, "error");
    }

    #[test]
    fn evidence_reads_decoded_structured_strings() {
        let structured = json!({"entries": [{"signature": "raise ValueError(\"bad\")"}]});
        let text = serde_json::to_string(&structured).unwrap();
        let haystack = haystack(&[&text], Some(&structured));
        let found = evidence(&haystack, &["ValueError(\"bad\")".into()], &[]);
        assert_eq!(found.found, 1);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut samples, 0.5), Some(50.0));
        assert_eq!(percentile(&mut samples, 0.95), Some(95.0));
        assert_eq!(percentile(&mut samples, 0.99), Some(99.0));
        assert_eq!(percentile(&mut [], 0.5), None);
    }
}
