//! Per-tool compressors: what each context tool keeps at each level, and the highest
//! level each tool may be compressed to (its cap, found by measurement: see
//! `docs/compression.md`).

pub mod shape;

use serde_json::Value;

use crate::level::Level;
pub use shape::{Keep, Shape};

/// The tools whose answers are compressed. Snippets, writes and listings are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    MinimalContext,
    Search,
    SymbolContext,
    CallGraph,
    PrContext,
    Recall,
}

impl Tool {
    pub const ALL: [Tool; 6] = [
        Tool::MinimalContext,
        Tool::Search,
        Tool::SymbolContext,
        Tool::CallGraph,
        Tool::PrContext,
        Tool::Recall,
    ];

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Tool::MinimalContext => "minimal_context",
            Tool::Search => "search",
            Tool::SymbolContext => "get_symbol_context",
            Tool::CallGraph => "get_call_graph",
            Tool::PrContext => "get_pr_context",
            Tool::Recall => "recall",
        }
    }

    /// The highest level this tool is compressed to, whatever is asked: the highest
    /// at which every code workload kept 100% of its evidence (`docs/compression.md`
    /// has the measurements). Search never goes below summary (Infigraph found a
    /// quality cliff there; its results are the evidence). minimal_context stays at
    /// summary: at aggressive the task answers lost the source and the related results
    /// they were judged on (5 of 110 questions). The cards (symbol context, call graph,
    /// PR context) stop at aggressive: minimal turns their neighbour lists, which are
    /// the answers, into counts. Recall goes to minimal (the memory workload's
    /// evidence was the same at every level).
    pub fn cap(self) -> Level {
        match self {
            Tool::Search => Level::Summary,
            Tool::MinimalContext => Level::Summary,
            Tool::SymbolContext => Level::Aggressive,
            Tool::CallGraph => Level::Aggressive,
            Tool::PrContext => Level::Aggressive,
            Tool::Recall => Level::Minimal,
        }
    }

    /// What this tool keeps at `level` (already capped).
    pub fn shape(self, level: Level) -> Shape {
        let mut shape = match level {
            Level::Off => return Shape::OFF,
            Level::Summary => SUMMARY,
            Level::Aggressive => AGGRESSIVE,
            Level::Minimal => MINIMAL,
        };
        match self {
            // A search result is its head line (kind, name, place) and its one-line
            // summary, which is what tells two candidates apart; the signature only of
            // the top result (Infigraph's search summary: symbol and location per
            // result, snippets dropped). No fingerprints: a result is a pointer.
            Tool::Search => {
                shape.summary = Keep::All;
                shape.signature = Keep::First;
                shape.fingerprint = Keep::None;
            }
            // The subject's own lines are the point of a call graph or symbol card.
            Tool::CallGraph | Tool::SymbolContext => {
                shape.signature = Keep::First;
            }
            // Changed symbols are all subjects of a PR context.
            Tool::PrContext => {
                if level < Level::Minimal {
                    shape.signature = Keep::All;
                }
            }
            Tool::MinimalContext | Tool::Recall => {}
        }
        shape
    }
}

const SUMMARY: Shape = Shape {
    signature: Keep::All,
    summary: Keep::All,
    fingerprint: Keep::First,
    source_lines: 15,
    neighbours: None,
    neighbour_kind: false,
    neighbour_lines: true,
    unresolved: None,
    related: None,
    related_detail: true,
    entries: None,
    diagnostics: false,
    facts: None,
};

const AGGRESSIVE: Shape = Shape {
    signature: Keep::First,
    summary: Keep::First,
    fingerprint: Keep::None,
    source_lines: 0,
    neighbours: None,
    neighbour_kind: false,
    neighbour_lines: false,
    unresolved: None,
    related: Some(5),
    related_detail: false,
    entries: None,
    diagnostics: false,
    facts: Some(10),
};

const MINIMAL: Shape = Shape {
    signature: Keep::None,
    summary: Keep::None,
    fingerprint: Keep::None,
    source_lines: 0,
    neighbours: Some(0),
    neighbour_kind: false,
    neighbour_lines: false,
    unresolved: Some(0),
    related: Some(3),
    related_detail: false,
    entries: Some(4),
    diagnostics: false,
    facts: Some(5),
};

/// A compressor: the answer at a level. Replaceable per tool ([`crate::Engine`]), which
/// is how the tests prove that a failing compressor yields the raw answer.
pub type Compressor = fn(Tool, Level, &Value) -> Value;

/// The built-in compressor: the tool's [`Shape`] at `level`.
pub fn compress(tool: Tool, level: Level, answer: &Value) -> Value {
    if level == Level::Off {
        return answer.clone();
    }
    shape::apply(answer, &tool.shape(level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card() -> Value {
        json!({
            "status": "ok",
            "entries": [{
                "kind": "method", "qualified_name": "shop/server.(*Server).Serve",
                "path": "server/server.go", "lines": [26, 35],
                "signature": "func (s *Server) Serve(path string) (string, error)",
                "summary": "Serve handles a path.",
                "fingerprint": "be2ef3f85f020fe1dced2d1d227cac91",
                "found_by": ["exact"],
                "callers": (0..9).map(|n| json!({"qualified_name": format!("shop/x.F{n}"), "kind": "function", "path": "x.go", "line": n})).collect::<Vec<_>>(),
                "unresolved_callees": ["errors.New", "fmt.Errorf"],
                "text": (1..=40).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n"),
            }],
            "omitted": [{"what": "callers that are tests", "count": 1, "reason": "listed_under_tests"}],
            "next": "get_code_snippet for its source",
            "provenance": {"legs": ["exact"]},
            "tokens": 0
        })
    }

    #[test]
    fn off_is_the_answer_unchanged() {
        assert_eq!(compress(Tool::SymbolContext, Level::Off, &card()), card());
    }

    #[test]
    fn summary_keeps_every_neighbour_and_drops_diagnostics() {
        let out = compress(Tool::MinimalContext, Level::Summary, &card());
        let entry = &out["entries"][0];
        assert_eq!(entry["callers"].as_array().unwrap().len(), 9);
        assert!(entry["callers"][0].get("kind").is_none());
        assert_eq!(entry["fingerprint"], card()["entries"][0]["fingerprint"]);
        assert!(entry.get("found_by").is_none());
        assert!(out.get("next").is_none());
        assert_eq!(entry["text"].as_str().unwrap().lines().count(), 16);
        let omitted = out["omitted"].as_array().unwrap();
        assert_eq!(
            omitted[0]["reason"], "listed_under_tests",
            "earlier omissions stay"
        );
        assert_eq!(
            omitted[1],
            json!({"what": "25 source lines", "reason": shape::OMITTED_REASON})
        );
    }

    #[test]
    fn aggressive_keeps_every_neighbour_by_name_and_counts_what_it_dropped() {
        let out = compress(Tool::SymbolContext, Level::Aggressive, &card());
        let entry = &out["entries"][0];
        let callers = entry["callers"].as_array().unwrap();
        assert_eq!(callers.len(), 9, "every neighbour: they are the evidence");
        assert!(
            callers
                .iter()
                .all(|c| c.get("line").is_none() && c.get("qualified_name").is_some())
        );
        assert!(entry.get("text").is_none());
        assert!(entry.get("fingerprint").is_none());
        assert!(
            entry.get("signature").is_some(),
            "the subject keeps its signature"
        );
        assert_eq!(
            out["omitted"][1],
            json!({"what": "40 source lines", "reason": shape::OMITTED_REASON})
        );
    }

    #[test]
    fn minimal_counts_neighbours() {
        let out = compress(Tool::MinimalContext, Level::Minimal, &card());
        assert_eq!(out["entries"][0]["callers"], json!(9));
        assert!(out["entries"][0].get("unresolved_callees").is_none());
        assert!(out["entries"][0].get("signature").is_none());
    }

    #[test]
    fn an_unknown_field_is_kept_at_every_level() {
        let mut answer = card();
        answer["entries"][0]["annotation"] = json!("payments/ is PCI scope");
        for level in Level::ALL {
            let out = compress(Tool::MinimalContext, level, &answer);
            assert_eq!(
                out["entries"][0]["annotation"], "payments/ is PCI scope",
                "{level}"
            );
        }
    }

    #[test]
    fn caps_hold() {
        assert_eq!(Tool::Search.cap(), Level::Summary);
        for tool in Tool::ALL {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
            assert!(tool.cap() > Level::Off);
        }
    }
}
