//! Session mode (bench/SESSIONS.md): each session's calls in order through one MCP
//! session, and again each call in a fresh MCP session of its own ("isolated"), so what
//! the session itself saves (answers already sent, symbols just opened) is measured
//! against the same calls made without it. Every call is scored on its own evidence;
//! tokens are what the client receives, summed per session.

use serde::Serialize;

use super::client::{CallOutcome, McpClient};
use super::score::{self, Evidence};
use super::workload::{Expected, Session};

/// One call of a session as the agent received it.
#[derive(Debug, Clone, Serialize)]
pub struct SessionCallResult {
    pub tool: String,
    /// The same tool and arguments as an earlier call of the session.
    pub repeat: bool,
    pub status: String,
    pub returned_tokens: u64,
    pub evidence: Evidence,
    pub passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The text received, written to `<workload>.answers.jsonl` for diagnosis.
    #[serde(skip)]
    pub answer: Option<String>,
}

/// One session, run in one MCP session and call by call in isolated ones.
#[derive(Debug, Clone, Serialize)]
pub struct SessionResult {
    pub id: String,
    pub repo: String,
    pub arm: String,
    pub calls: Vec<SessionCallResult>,
    /// Summed over the calls made in one MCP session.
    pub returned_tokens: u64,
    /// Summed over the same calls, each in a fresh MCP session.
    pub isolated_tokens: u64,
    pub baseline_tokens: u64,
    /// Every call's evidence found (in the one-session run).
    pub passed: bool,
    pub evidence_required: usize,
    pub evidence_found: usize,
    /// Calls of the isolated run that failed their evidence (the session run's are in
    /// `calls`).
    pub isolated_failures: usize,
}

/// Aggregate over sessions, from summed counts.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SessionAggregate {
    pub arm: String,
    pub sessions: usize,
    pub passed: usize,
    pub calls: usize,
    pub returned_tokens: u64,
    pub isolated_tokens: u64,
    pub baseline_tokens: u64,
    /// (baseline - returned) / baseline.
    pub reduction_pct: Option<f64>,
    /// (isolated - returned) / isolated: what running the calls in one session saved.
    pub session_saving_pct: Option<f64>,
    pub evidence_coverage_pct: Option<f64>,
}

fn score_call(
    call: &super::workload::SessionCall,
    repeat: bool,
    outcome: Result<CallOutcome, super::client::CallError>,
) -> SessionCallResult {
    match outcome {
        Ok(outcome) => {
            let judged = score::judge(
                &outcome,
                Expected::Found,
                &call.must_contain,
                &call.must_not_contain,
            );
            SessionCallResult {
                tool: call.tool.clone(),
                repeat,
                passed: judged.passed,
                status: judged.shape.status,
                returned_tokens: judged.returned_tokens,
                evidence: judged.evidence,
                error: None,
                answer: Some(outcome.text.clone()),
            }
        }
        Err(error) => SessionCallResult {
            tool: call.tool.clone(),
            repeat,
            status: "error".into(),
            returned_tokens: 0,
            evidence: Evidence {
                required: call.must_contain.len(),
                missing: call.must_contain.clone(),
                ..Evidence::default()
            },
            passed: false,
            error: Some(error.to_string()),
            answer: None,
        },
    }
}

/// Runs `session` against the gateway at `url`.
pub async fn run(
    url: &str,
    api_key: &str,
    arm: &str,
    session: &Session,
    baseline_tokens: u64,
) -> anyhow::Result<SessionResult> {
    let client = McpClient::connect(url, api_key).await?;
    let mut calls = Vec::with_capacity(session.calls.len());
    // What the agent holds: each call's text, by call number (1-based, as the gateway
    // numbers a session's calls).
    let mut received: Vec<String> = Vec::new();
    for (index, call) in session.calls.iter().enumerate() {
        let repeat = session.calls[..index]
            .iter()
            .any(|earlier| earlier.tool == call.tool && earlier.arguments == call.arguments);
        let outcome = client
            .call(&call.tool, &call.arguments)
            .await
            .map(|mut outcome| {
                // A reference to an earlier call is that call's answer, byte for byte (the
                // gateway only refers to an identical text): the agent already holds its
                // evidence. Tokens stay those of the reference.
                if let Some(earlier) =
                    referenced_call(&outcome.text).and_then(|n| received.get(n.checked_sub(1)?))
                {
                    outcome.haystack = earlier.clone();
                }
                // An entry, or fields of one, "as sent in call N" are that call's,
                // unchanged (the gateway refers only to identical parts): the agent
                // holds them there. Only those parts count as received, not the rest of
                // call N. Tokens stay those of the reference.
                let held = referenced_parts(&outcome.text, &received);
                if !held.is_empty() {
                    outcome.haystack.push('\n');
                    outcome.haystack.push_str(&held);
                }
                outcome
            });
        received.push(
            outcome
                .as_ref()
                .map(|o| o.haystack.clone())
                .unwrap_or_default(),
        );
        calls.push(score_call(call, repeat, outcome));
    }
    client.close().await;

    let mut isolated_tokens = 0;
    let mut isolated_failures = 0;
    for call in &session.calls {
        let client = McpClient::connect(url, api_key).await?;
        let scored = score_call(call, false, client.call(&call.tool, &call.arguments).await);
        client.close().await;
        isolated_tokens += scored.returned_tokens;
        isolated_failures += usize::from(!scored.passed);
    }

    Ok(SessionResult {
        id: session.id.clone(),
        repo: session.repo.clone(),
        arm: arm.into(),
        returned_tokens: calls.iter().map(|c| c.returned_tokens).sum(),
        isolated_tokens,
        baseline_tokens,
        passed: calls.iter().all(|c| c.passed),
        evidence_required: calls.iter().map(|c| c.evidence.required).sum(),
        evidence_found: calls.iter().map(|c| c.evidence.found).sum(),
        isolated_failures,
        calls,
    })
}

/// The call number a session-dedup reference names (`unchanged: the same answer as
/// call N (...)` on its second line), if the text is one.
fn referenced_call(text: &str) -> Option<usize> {
    let line = text.lines().nth(1)?;
    let rest = line.strip_prefix("unchanged: the same answer as call ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// An entry of a rendered answer: its head line (`kind name path:lines`, at no
/// indentation) and the lines indented under it.
struct Block<'a> {
    head: &'a str,
    body: Vec<&'a str>,
}

impl Block<'_> {
    /// What identifies the entry across answers: its kind and its `path:lines` (the
    /// first and last words of the head line; the name between may be written relative
    /// to another prefix).
    fn key(&self) -> (&str, &str) {
        let mut words = self.head.split_whitespace();
        let kind = words.next().unwrap_or("");
        (kind, words.next_back().unwrap_or(""))
    }

    /// The lines of `field`: `  field: value`, or `  field:` / `  field (confidence):`
    /// and the lines indented under it.
    fn field(&self, field: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut inside = false;
        for line in &self.body {
            if let Some(rest) = line.strip_prefix("  ")
                && !rest.starts_with(' ')
            {
                inside = rest
                    .strip_prefix(field)
                    .is_some_and(|after| after.starts_with(':') || after.starts_with(" ("));
            }
            if inside {
                out.push(*line);
            }
        }
        out
    }
}

/// The entries of a rendered answer.
fn blocks(text: &str) -> Vec<Block<'_>> {
    const TOP: &[&str] = &[
        "status:",
        "notice:",
        "index:",
        "names relative to ",
        "related:",
        "omitted:",
        "next:",
        "legs:",
        "degraded:",
        "scores:",
        "unchanged:",
        "memory:",
        "repository:",
    ];
    let mut out: Vec<Block<'_>> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.starts_with(' ') {
            if open && let Some(block) = out.last_mut() {
                block.body.push(line);
            }
        } else if line.is_empty() || TOP.iter().any(|top| line.starts_with(top)) {
            open = false;
        } else {
            out.push(Block {
                head: line,
                body: Vec::new(),
            });
            open = true;
        }
    }
    out
}

/// The text of the parts `text` refers to (`unchanged: as sent in call N`: the whole
/// entry; `unchanged: signature, callers as sent in call N; summary as sent in call M`:
/// those fields of the entry), taken from the answers already `received` (by call
/// number, 1-based). A part not found there adds nothing.
fn referenced_parts(text: &str, received: &[String]) -> String {
    const MARKER: &str = " as sent in call ";
    let mut out = String::new();
    for block in blocks(text) {
        let Some(unchanged) = block
            .body
            .iter()
            .find_map(|line| line.strip_prefix("  unchanged: "))
        else {
            continue;
        };
        for group in unchanged.split("; ") {
            let group = format!(" {group}");
            let Some(at) = group.rfind(MARKER) else {
                continue;
            };
            let digits: String = group[at + MARKER.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Some(earlier) = digits
                .parse::<usize>()
                .ok()
                .and_then(|n| received.get(n.checked_sub(1)?))
            else {
                continue;
            };
            let Some(source) = blocks(earlier).into_iter().find(|b| b.key() == block.key()) else {
                continue;
            };
            let fields = group[..at].trim();
            if fields.is_empty() {
                out.push_str(source.head);
                out.push('\n');
                for line in &source.body {
                    out.push_str(line);
                    out.push('\n');
                }
                continue;
            }
            for field in fields.split(", ") {
                for line in source.field(field) {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    out
}

fn percent(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| 100.0 * part / whole)
}

/// Sums `results` of one arm.
pub fn aggregate(arm: &str, results: &[SessionResult]) -> SessionAggregate {
    let mut out = SessionAggregate {
        arm: arm.into(),
        ..SessionAggregate::default()
    };
    let mut required = 0;
    let mut found = 0;
    for result in results.iter().filter(|r| r.arm == arm) {
        out.sessions += 1;
        out.passed += usize::from(result.passed);
        out.calls += result.calls.len();
        out.returned_tokens += result.returned_tokens;
        out.isolated_tokens += result.isolated_tokens;
        out.baseline_tokens += result.baseline_tokens;
        required += result.evidence_required;
        found += result.evidence_found;
    }
    out.reduction_pct = percent(
        out.baseline_tokens as f64 - out.returned_tokens as f64,
        out.baseline_tokens as f64,
    );
    out.session_saving_pct = percent(
        out.isolated_tokens as f64 - out.returned_tokens as f64,
        out.isolated_tokens as f64,
    );
    out.evidence_coverage_pct = percent(found as f64, required as f64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(
        arm: &str,
        returned: u64,
        isolated: u64,
        baseline: u64,
        passed: bool,
    ) -> SessionResult {
        SessionResult {
            id: "S".into(),
            repo: "r".into(),
            arm: arm.into(),
            calls: vec![],
            returned_tokens: returned,
            isolated_tokens: isolated,
            baseline_tokens: baseline,
            passed,
            evidence_required: 4,
            evidence_found: if passed { 4 } else { 3 },
            isolated_failures: 0,
        }
    }

    #[test]
    fn reads_the_call_a_reference_names() {
        assert_eq!(
            referenced_call(
                "status: ok\nunchanged: the same answer as call 3 (search, 2 s ago) in this session\n"
            ),
            Some(3)
        );
        assert_eq!(referenced_call("status: ok\nfunction a.b a.py:1\n"), None);
        assert_eq!(referenced_call("status: ok"), None);
    }

    #[test]
    fn a_part_reference_holds_that_part_only() {
        let first = "status: ok\nnames relative to example.com/\nfunction a.b a.py:1-9\n  callers:\n    c.py: 3 c.run; 7 c.go\n  signature: def b(x)\n  summary: Bees.\n  strings:\n    (here): 4 ZEBRA\nfunction a.c a.py:11-12\n  summary: Sees.\n";
        let received = vec![first.to_owned(), "status: ok\n".to_owned()];
        // Fields: those fields of that entry, not the rest of the call.
        let held = referenced_parts(
            "status: ok\nfunction b a.py:1-9\n  unchanged: callers, summary as sent in call 1\n",
            &received,
        );
        assert_eq!(
            held,
            "  callers:\n    c.py: 3 c.run; 7 c.go\n  summary: Bees.\n"
        );
        assert!(!held.contains("ZEBRA") && !held.contains("Sees"));
        // The whole entry; two calls in one line; a call or entry that is not there.
        let held = referenced_parts(
            "status: ok\nfunction a.c a.py:11-12\n  unchanged: as sent in call 1\nfunction a.b a.py:1-9\n  unchanged: signature as sent in call 1; strings as sent in call 2\nfunction a.d a.py:20\n  unchanged: as sent in call 1\nfunction a.c a.py:11-12\n  unchanged: as sent in call 9\n",
            &received,
        );
        assert_eq!(
            held,
            "function a.c a.py:11-12\n  summary: Sees.\n  signature: def b(x)\n"
        );
    }

    #[test]
    fn aggregates_from_summed_counts() {
        let results = [
            result("hybrid", 100, 200, 1_000, true),
            result("hybrid", 300, 300, 9_000, false),
            result("lexical", 1, 1, 1, true),
        ];
        let aggregate = aggregate("hybrid", &results);
        assert_eq!(aggregate.sessions, 2);
        assert_eq!(aggregate.passed, 1);
        assert_eq!(aggregate.returned_tokens, 400);
        // (10,000 - 400) / 10,000, not the mean of 90% and 96.7%.
        assert_eq!(aggregate.reduction_pct, Some(96.0));
        // (500 - 400) / 500.
        assert_eq!(aggregate.session_saving_pct, Some(20.0));
        assert_eq!(aggregate.evidence_coverage_pct, Some(87.5));
    }
}
