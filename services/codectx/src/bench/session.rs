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
                // An entry or a neighbour list sent "as sent in call N" is that call's,
                // unchanged (the gateway refers only to identical parts): the agent
                // holds it there. Its tokens stay those of the reference.
                for n in referenced_parts(&outcome.text) {
                    if let Some(earlier) = n.checked_sub(1).and_then(|i| received.get(i)) {
                        outcome.haystack.push('\n');
                        outcome.haystack.push_str(earlier);
                    }
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

/// The calls whose parts a text refers to (`as sent in call N`), each once.
fn referenced_parts(text: &str) -> Vec<usize> {
    let mut calls: Vec<usize> = text
        .match_indices("as sent in call ")
        .filter_map(|(at, marker)| {
            let digits: String = text[at + marker.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect();
    calls.sort_unstable();
    calls.dedup();
    calls
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
        assert_eq!(
            referenced_parts(
                "status: ok\nfunction a.b a.py:1\n  callers: 4, as sent in call 2\n  unchanged: as sent in call 12\n  callees: 3, as sent in call 2\n"
            ),
            vec![2, 12]
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
