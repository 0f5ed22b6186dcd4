//! The benchmark workload format of `bench/WORKLOAD.md` (read unchanged: outside
//! workloads run without edits), plus one optional extension, `setup`: tool calls run
//! once before the questions (e.g. `remember` for memory workloads).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Workload {
    pub name: String,
    #[serde(default = "default_estimator")]
    pub estimator: String,
    pub repos: Vec<WorkloadRepo>,
    pub questions: Vec<Question>,
    /// Extension: calls made once per stack before the questions, in order; each must
    /// succeed. WORKLOAD.md has no way to seed memory, which recall questions need.
    #[serde(default)]
    pub setup: Vec<SetupCall>,
    /// Extension (bench/SESSIONS.md): sequences of calls one agent makes in one MCP
    /// session, scored per call and summed per session.
    #[serde(default)]
    pub sessions: Vec<Session>,
}

/// One agent's MCP session on one change (bench/SESSIONS.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub id: String,
    pub repo: String,
    #[serde(default)]
    pub goal: String,
    pub calls: Vec<SessionCall>,
    #[serde(default)]
    pub baseline_files: Vec<String>,
    #[serde(default)]
    pub baseline_tokens: Option<u64>,
}

/// One call of a session, with the evidence its own answer must carry.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default)]
    pub must_contain: Vec<String>,
    #[serde(default)]
    pub must_not_contain: Vec<String>,
}

fn default_estimator() -> String {
    ESTIMATOR.into()
}

/// The only token estimator implemented: ceil(bytes / 4), as DESIGN.md defines it.
pub const ESTIMATOR: &str = "bytes/4";

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct WorkloadRepo {
    pub key: String,
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    SymbolExplanation,
    Callers,
    Callees,
    ChangeImpact,
    ExactLookup,
    RareIdentifier,
    Implementations,
    Tests,
    NoMatch,
    MemoryRecall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    Found,
    None,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Question {
    pub id: String,
    pub repo: String,
    pub category: Category,
    pub expected_result: Expected,
    pub question: String,
    #[serde(default)]
    pub call: Option<ToolCall>,
    #[serde(default)]
    pub must_contain: Vec<String>,
    #[serde(default)]
    pub must_not_contain: Vec<String>,
    #[serde(default)]
    pub baseline_files: Vec<String>,
    #[serde(default)]
    pub baseline_tokens: Option<u64>,
    /// Extension: the tenant that asks (default: the development subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct ToolCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SetupCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Extension: the tenant that makes the call (default: the development subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

/// Why a workload file cannot run.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("cannot read workload {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("workload {path} is not in the WORKLOAD.md format: {reason}")]
    Format { path: String, reason: String },
    #[error("workload {path}: {reason}")]
    Invalid { path: String, reason: String },
}

impl Workload {
    pub fn load(path: &Path) -> Result<Workload, WorkloadError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let workload: Workload =
            serde_json::from_str(&text).map_err(|e| WorkloadError::Format {
                path: shown.clone(),
                reason: e.to_string(),
            })?;
        workload
            .validate()
            .map_err(|reason| WorkloadError::Invalid {
                path: shown,
                reason,
            })?;
        Ok(workload)
    }

    /// Checks what serde cannot: unique ids, known repositories, the estimator.
    pub fn validate(&self) -> Result<(), String> {
        if self.estimator != ESTIMATOR {
            return Err(format!(
                "estimator {:?} is not implemented; use {ESTIMATOR:?}",
                self.estimator
            ));
        }
        if self.questions.is_empty() && self.sessions.is_empty() {
            return Err("it has no questions and no sessions".into());
        }
        let keys: BTreeSet<&str> = self.repos.iter().map(|r| r.key.as_str()).collect();
        let mut ids = BTreeSet::new();
        for session in &self.sessions {
            if !ids.insert(session.id.as_str()) {
                return Err(format!("session id {} appears twice", session.id));
            }
            if !keys.contains(session.repo.as_str()) {
                return Err(format!(
                    "session {} names repo {:?}, which `repos` does not list",
                    session.id, session.repo
                ));
            }
            if session.calls.is_empty() {
                return Err(format!("session {} has no calls", session.id));
            }
        }
        for question in &self.questions {
            if !ids.insert(question.id.as_str()) {
                return Err(format!("question id {} appears twice", question.id));
            }
            if !keys.contains(question.repo.as_str()) {
                return Err(format!(
                    "question {} names repo {:?}, which `repos` does not list",
                    question.id, question.repo
                ));
            }
            if question.question.trim().is_empty() {
                return Err(format!("question {} has an empty question", question.id));
            }
        }
        Ok(())
    }

    /// The questions and sessions whose id is in `only` (all when empty); unknown ids
    /// are an error.
    pub fn select(&self, only: &[String]) -> Result<(Vec<Question>, Vec<Session>), String> {
        if only.is_empty() {
            return Ok((self.questions.clone(), self.sessions.clone()));
        }
        let questions: BTreeMap<&str, &Question> =
            self.questions.iter().map(|q| (q.id.as_str(), q)).collect();
        let sessions: BTreeMap<&str, &Session> =
            self.sessions.iter().map(|s| (s.id.as_str(), s)).collect();
        let mut chosen = (Vec::new(), Vec::new());
        for id in only {
            if let Some(question) = questions.get(id.as_str()) {
                chosen.0.push((*question).clone());
            } else if let Some(session) = sessions.get(id.as_str()) {
                chosen.1.push((*session).clone());
            } else {
                return Err(format!("--questions names {id}, which the workload lacks"));
            }
        }
        Ok(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{
      "name": "python-stdlib-v1",
      "estimator": "bytes/4",
      "repos": [{"key": "cpython-lib", "language": "python", "source": "how to obtain the checkout"}],
      "questions": [
        {
          "id": "PY-01",
          "repo": "cpython-lib",
          "category": "callers",
          "expected_result": "found",
          "question": "Who calls json.dumps inside the standard library?",
          "call": {"tool": "get_call_graph",
                   "arguments": {"repository": "cpython-lib", "symbol": "json.dumps", "direction": "callers"}},
          "must_contain": ["json/__init__.py", "dumps"],
          "must_not_contain": [],
          "baseline_files": ["json/__init__.py", "json/encoder.py"],
          "baseline_tokens": 5123
        }
      ]
    }"#;

    #[test]
    fn reads_the_workload_md_example_unchanged() {
        let workload: Workload = serde_json::from_str(EXAMPLE).unwrap();
        workload.validate().unwrap();
        let question = &workload.questions[0];
        assert_eq!(question.category, Category::Callers);
        assert_eq!(question.expected_result, Expected::Found);
        let call = question.call.as_ref().unwrap();
        assert_eq!(call.tool, "get_call_graph");
        assert_eq!(call.arguments["symbol"], "json.dumps");
        assert_eq!(question.baseline_tokens, Some(5123));
        assert!(workload.setup.is_empty());
    }

    #[test]
    fn rejects_what_cannot_run() {
        let mut workload: Workload = serde_json::from_str(EXAMPLE).unwrap();
        workload.questions[0].repo = "elsewhere".into();
        assert!(workload.validate().unwrap_err().contains("elsewhere"));
        let mut workload: Workload = serde_json::from_str(EXAMPLE).unwrap();
        workload.estimator = "tiktoken".into();
        assert!(workload.validate().unwrap_err().contains("bytes/4"));
        let mut workload: Workload = serde_json::from_str(EXAMPLE).unwrap();
        workload.questions.push(workload.questions[0].clone());
        assert!(workload.validate().unwrap_err().contains("twice"));
        let bad_category = EXAMPLE.replace("\"callers\",", "\"gossip\",");
        assert!(serde_json::from_str::<Workload>(&bad_category).is_err());
    }

    #[test]
    fn selects_questions_by_id() {
        let workload: Workload = serde_json::from_str(EXAMPLE).unwrap();
        assert_eq!(workload.select(&[]).unwrap().0.len(), 1);
        assert_eq!(workload.select(&["PY-01".into()]).unwrap().0.len(), 1);
        assert!(workload.select(&["PY-99".into()]).is_err());
    }

    const SESSIONS: &str = r#"{
      "name": "sessions",
      "repos": [{"key": "gin", "language": "go"}],
      "questions": [],
      "sessions": [
        {"id": "S-1", "repo": "gin", "goal": "change FormFile",
         "calls": [
           {"tool": "search", "arguments": {"repository": "gin", "query": "form file"},
            "must_contain": ["FormFile"], "must_not_contain": []},
           {"tool": "search", "arguments": {"repository": "gin", "query": "form file"},
            "must_contain": ["FormFile"]}
         ],
         "baseline_files": ["context.go"], "baseline_tokens": 10}
      ]
    }"#;

    #[test]
    fn reads_sessions_and_checks_them() {
        let workload: Workload = serde_json::from_str(SESSIONS).unwrap();
        workload.validate().unwrap();
        assert_eq!(workload.sessions[0].calls.len(), 2);
        let (questions, sessions) = workload.select(&["S-1".into()]).unwrap();
        assert!(questions.is_empty());
        assert_eq!(sessions.len(), 1);
        let mut empty = workload.clone();
        empty.sessions[0].calls.clear();
        assert!(empty.validate().unwrap_err().contains("no calls"));
        let mut elsewhere = workload.clone();
        elsewhere.sessions[0].repo = "express".into();
        assert!(elsewhere.validate().unwrap_err().contains("express"));
        let mut nothing = workload;
        nothing.sessions.clear();
        assert!(nothing.validate().unwrap_err().contains("no questions"));
        // A misspelt field is an error, not a silently empty list.
        let typo = SESSIONS.replace(
            "\"must_contain\": [\"FormFile\"], \"must_not",
            "\"must_contains\": [\"FormFile\"], \"must_not",
        );
        assert!(serde_json::from_str::<Workload>(&typo).is_err());
    }
}
