//! Scores a code graph against a SCIP index: definition recall per category, reference
//! recall and precision, call-edge precision. Pure: no I/O, unit-tested on hand-built
//! inputs.
//!
//! - A definition matches when the graph holds a symbol of the same name in the same file
//!   whose span contains the oracle's definition line (decorators and doc comments may
//!   start a span above the name).
//! - An oracle reference becomes a pair (enclosing symbol, target): the enclosing symbol
//!   is the graph's innermost symbol around the occurrence, the target the graph symbol
//!   the referenced oracle definition matched. Pairs whose target the graph does not hold
//!   are counted apart (`unmodelled_targets`), as are references from module level.
//! - Module-level variables bound by an import (`const x = require('x')`, which
//!   scip-typescript defines as a variable) are import bindings, not definitions: the
//!   caller's `is_import` tells them apart and they are not counted.
//! - `dispatch` CALLS edges (to implementations of a called interface method) are
//!   inferred, not written: they are never judged.
//! - Precision: a CALLS or REFERENCES edge between two symbols is judged only when the
//!   oracle defines its target (targets the oracle is blind to, such as CommonJS
//!   properties, are counted as `unjudged`); it is right when the oracle has that pair.
//!   When the oracle resolved that name, inside that symbol, to a symbol of the project
//!   that is not a modelled definition (a re-export alias in a package `__init__`, a
//!   field), the edge is `unjudged` too: the oracle names the path, not the definition.
//!   A name the oracle resolved to another package (`dict.update`) judges the edge wrong.
//!   A name the oracle could not resolve (a `local` with no definition in the file: the
//!   import it came from did not resolve), or has no occurrence of at all inside that
//!   symbol (a member of an untyped receiver, which pyright and the TypeScript checker
//!   leave silent), leaves the edge `unjudged` as well: the judge cannot say. Silence
//!   counts only for oracles of dynamically typed languages; scip-go types every
//!   expression, so there a reference it does not have is wrong.

use std::collections::{BTreeMap, HashMap, HashSet};

use codectx_graph::{Confidence, Edge, EdgeKind, Node, NodeKind};
use serde::Serialize;

use super::scip::{self, Descriptor};

/// What an oracle definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Function,
    Method,
    /// Classes, structs, interfaces, traits, enums, aliases.
    Type,
    /// Package- or module-level variables and constants.
    Variable,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Function => "function",
            Category::Method => "method",
            Category::Type => "type",
            Category::Variable => "variable",
        }
    }

    /// Of a parsed symbol; `None` for what the graph does not model as a definition
    /// (namespaces, parameters, fields, locals, synthetic symbols).
    pub fn of(descriptors: &[Descriptor]) -> Option<(Category, &str)> {
        let (last, parents) = descriptors.split_last()?;
        let parent = parents.last();
        let top = parent.is_none_or(|p| matches!(p, Descriptor::Namespace(_)));
        if parents
            .iter()
            .any(|d| matches!(d, Descriptor::Meta(_) | Descriptor::Parameter(_)))
        {
            return None;
        }
        match last {
            Descriptor::Method(n) if top => Some((Category::Function, n)),
            Descriptor::Method(n) if matches!(parent, Some(Descriptor::Type(_))) => {
                Some((Category::Method, n))
            }
            Descriptor::Type(n)
                if parents
                    .iter()
                    .all(|d| matches!(d, Descriptor::Namespace(_) | Descriptor::Type(_))) =>
            {
                Some((Category::Type, n))
            }
            Descriptor::Term(n) if top => Some((Category::Variable, n)),
            _ => None,
        }
    }
}

/// found of total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Ratio {
    pub found: usize,
    pub total: usize,
}

impl Ratio {
    pub fn add(&mut self, hit: bool) {
        self.total += 1;
        self.found += usize::from(hit);
    }

    pub fn merge(&mut self, other: Ratio) {
        self.found += other.found;
        self.total += other.total;
    }

    pub fn percent(self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.found as f64 / self.total as f64
        }
    }
}

/// One project's score.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Score {
    pub definitions: BTreeMap<Category, Ratio>,
    pub references: Ratio,
    pub reference_precision: Ratio,
    pub call_precision: Ratio,
    /// Call-edge precision per edge confidence (resolved, name_match).
    pub call_precision_by_confidence: BTreeMap<String, Ratio>,
    /// Oracle reference pairs whose target the graph does not hold.
    pub unmodelled_targets: usize,
    /// Graph edges whose target the oracle does not define (not judged).
    pub unjudged_edges: usize,
    /// Oracle documents the graph holds no file for (skipped by design: tests data,
    /// vendored or generated code), with their definition count.
    pub files_not_indexed: BTreeMap<String, usize>,
    /// Up to 40 of each, for reading.
    pub missed_definitions: Vec<String>,
    pub missed_references: Vec<String>,
    pub wrong_edges: Vec<String>,
}

impl Score {
    pub fn merge(&mut self, other: &Score) {
        for (category, ratio) in &other.definitions {
            self.definitions.entry(*category).or_default().merge(*ratio);
        }
        self.references.merge(other.references);
        self.reference_precision.merge(other.reference_precision);
        self.call_precision.merge(other.call_precision);
        for (confidence, ratio) in &other.call_precision_by_confidence {
            self.call_precision_by_confidence
                .entry(confidence.clone())
                .or_default()
                .merge(*ratio);
        }
        self.unmodelled_targets += other.unmodelled_targets;
        self.unjudged_edges += other.unjudged_edges;
        for (path, n) in &other.files_not_indexed {
            self.files_not_indexed.insert(path.clone(), *n);
        }
    }

    /// Definition recall over every category.
    pub fn definition_recall(&self) -> Ratio {
        let mut all = Ratio::default();
        for ratio in self.definitions.values() {
            all.merge(*ratio);
        }
        all
    }
}

const SAMPLES: usize = 40;

/// Symbols, and alias nodes (a Go `type A = B` is a definition of `A` in SCIP; a re-export
/// alias sits on its import line, where the oracle defines nothing).
fn is_symbol(kind: NodeKind) -> bool {
    kind.is_symbol() || kind == NodeKind::Alias
}

/// The graph's symbols of one file, for span lookups.
struct FileSymbols<'a> {
    symbols: Vec<&'a Node>,
}

impl<'a> FileSymbols<'a> {
    /// The innermost symbol whose span holds `line`, optionally with this name. Alias
    /// nodes answer only by name (a definition): a re-export's import line encloses no
    /// references.
    fn innermost(&self, line: u32, name: Option<&str>) -> Option<&'a Node> {
        self.symbols
            .iter()
            .filter(|n| n.start_line <= line && line <= n.end_line)
            .filter(|n| name.is_some() || n.kind != NodeKind::Alias)
            .filter(|n| name.is_none_or(|name| n.name == name))
            .min_by_key(|n| n.end_line - n.start_line)
            .copied()
    }
}

/// Reads the checkout for the judge.
pub trait Source {
    /// Whether a source line (1-based) binds an import.
    fn is_import(&self, path: &str, line: u32) -> bool;
    /// The text an occurrence's range covers, on one line.
    fn text(&self, path: &str, range: &[i32]) -> Option<String>;
}

/// Scores `nodes`/`edges` (one graph) against `index`.
pub fn score(
    index: &scip::Index,
    nodes: &[Node],
    edges: &[Edge],
    source: &dyn Source,
    silence_is_blind: bool,
) -> Score {
    let mut files: HashMap<&str, FileSymbols<'_>> = HashMap::new();
    let mut indexed_files: HashSet<&str> = HashSet::new();
    for node in nodes {
        if node.kind == NodeKind::File {
            indexed_files.insert(node.path.as_str());
        } else if is_symbol(node.kind) {
            files
                .entry(node.path.as_str())
                .or_insert_with(|| FileSymbols {
                    symbols: Vec::new(),
                })
                .symbols
                .push(node);
        }
    }
    let empty = FileSymbols {
        symbols: Vec::new(),
    };
    let mut score = Score::default();

    // Definitions: oracle symbol -> graph node id.
    let mut defined: HashMap<&str, Option<&str>> = HashMap::new();
    for document in &index.documents {
        let path = document.relative_path.as_str();
        if !indexed_files.contains(path) {
            let n = document
                .occurrences
                .iter()
                .filter(|o| o.is_definition())
                .filter(|o| {
                    scip::descriptors(&o.symbol).is_some_and(|d| Category::of(&d).is_some())
                })
                .count();
            if n > 0 {
                score.files_not_indexed.insert(path.to_owned(), n);
            }
            continue;
        }
        let symbols = files.get(path).unwrap_or(&empty);
        for occurrence in document.occurrences.iter().filter(|o| o.is_definition()) {
            let Some(descriptors) = scip::descriptors(&occurrence.symbol) else {
                continue;
            };
            let Some((category, name)) = Category::of(&descriptors) else {
                continue;
            };
            if defined.contains_key(occurrence.symbol.as_str()) {
                continue; // a second definition site (Python redefinition, TS overload)
            }
            if category == Category::Variable && source.is_import(path, occurrence.line()) {
                continue;
            }
            // scip-typescript names constructors `<constructor>`.
            let name = if name == "<constructor>" {
                "constructor"
            } else {
                name
            };
            let node = symbols.innermost(occurrence.line(), Some(name));
            score
                .definitions
                .entry(category)
                .or_default()
                .add(node.is_some());
            if node.is_none() && score.missed_definitions.len() < SAMPLES {
                score.missed_definitions.push(format!(
                    "{} {path}:{} {name}",
                    category.as_str(),
                    occurrence.line()
                ));
            }
            defined.insert(occurrence.symbol.as_str(), node.map(|n| n.id.as_str()));
        }
    }

    // Reference pairs from the oracle.
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let project: HashSet<&str> = index
        .documents
        .iter()
        .flat_map(|d| d.occurrences.iter())
        .filter(|o| o.is_definition())
        .filter_map(|o| scip::package(&o.symbol))
        .collect();
    // (enclosing symbol, referenced name) whose oracle target is in the project but not
    // a modelled definition.
    let mut unmodelled_names: HashSet<(&str, String)> = HashSet::new();
    // (enclosing symbol, referenced name) of every oracle reference.
    let mut named: HashSet<(&str, String)> = HashSet::new();
    let mut pairs: HashSet<(&str, &str)> = HashSet::new();
    let mut first_line: HashMap<(&str, &str), (String, u32)> = HashMap::new();
    for document in &index.documents {
        let path = document.relative_path.as_str();
        let Some(symbols) = files.get(path) else {
            continue;
        };
        let defined_locals: HashSet<&str> = document
            .occurrences
            .iter()
            .filter(|o| o.is_definition() && o.symbol.starts_with("local "))
            .map(|o| o.symbol.as_str())
            .collect();
        for occurrence in &document.occurrences {
            if occurrence.is_definition() || occurrence.is_import() {
                continue;
            }
            if occurrence.symbol.starts_with("local ")
                && !defined_locals.contains(occurrence.symbol.as_str())
            {
                // Unresolved by the oracle: the name is blind in its scope.
                if let Some(from) = symbols.innermost(occurrence.line(), None)
                    && let Some(name) = source.text(path, &occurrence.range)
                {
                    unmodelled_names.insert((from.id.as_str(), name));
                }
                continue;
            }
            let Some(from) = symbols.innermost(occurrence.line(), None) else {
                continue; // module level
            };
            if let Some(name) = scip::descriptors(&occurrence.symbol)
                .as_deref()
                .and_then(scip::last_name)
            {
                let name = if name == "<constructor>" {
                    "constructor"
                } else {
                    name
                };
                named.insert((from.id.as_str(), name.to_owned()));
            }
            let Some(target) = defined.get(occurrence.symbol.as_str()) else {
                // External, local, or the project's but unmodelled (alias, field).
                if scip::package(&occurrence.symbol).is_some_and(|p| project.contains(p))
                    && let Some(name) = scip::descriptors(&occurrence.symbol)
                        .as_deref()
                        .and_then(scip::last_name)
                {
                    unmodelled_names.insert((from.id.as_str(), name.to_owned()));
                }
                continue;
            };
            let Some(target) = target else {
                score.unmodelled_targets += 1;
                continue;
            };
            if from.id == *target {
                continue; // a symbol's own name inside its span (recursion aside)
            }
            let pair = (from.id.as_str(), *target);
            if pairs.insert(pair) {
                first_line.insert(pair, (path.to_owned(), occurrence.line()));
            }
        }
    }

    // The graph's symbol-to-symbol edges.
    let judged_targets: HashSet<&str> = defined.values().flatten().copied().collect();
    let mut ours: HashSet<(&str, &str)> = HashSet::new();
    for edge in edges {
        if !matches!(edge.kind, EdgeKind::Calls | EdgeKind::References) {
            continue;
        }
        let (Some(from), Some(to)) = (by_id.get(edge.from.as_str()), by_id.get(edge.to.as_str()))
        else {
            continue;
        };
        if !is_symbol(from.kind) || !is_symbol(to.kind) {
            continue;
        }
        let pair = (from.id.as_str(), to.id.as_str());
        // Dispatch edges are inferred (the runtime type decides); a static indexer
        // records only the interface method, so it cannot judge them.
        if !judged_targets.contains(pair.1) || edge.confidence == Confidence::Dispatch {
            score.unjudged_edges += 1;
            continue;
        }
        let right = pairs.contains(&pair);
        let key = (pair.0, to.name.clone());
        if !right
            && (unmodelled_names.contains(&key) || (silence_is_blind && !named.contains(&key)))
        {
            score.unjudged_edges += 1;
            continue;
        }
        if edge.kind == EdgeKind::Calls {
            score.call_precision.add(right);
            score
                .call_precision_by_confidence
                .entry(edge.confidence.as_str().to_owned())
                .or_default()
                .add(right);
        }
        if ours.insert(pair) {
            score.reference_precision.add(right);
            if !right && score.wrong_edges.len() < SAMPLES {
                score.wrong_edges.push(format!(
                    "{} ({}) {}:{} {} -> {}",
                    edge.kind.as_str(),
                    edge.confidence.as_str(),
                    from.path,
                    edge.line,
                    from.qualified_name,
                    to.qualified_name
                ));
            }
        }
    }
    let mut sorted: Vec<_> = pairs.iter().collect();
    sorted.sort();
    for pair in sorted {
        let hit = ours.contains(pair);
        score.references.add(hit);
        if !hit && score.missed_references.len() < SAMPLES {
            let (path, line) = &first_line[pair];
            score.missed_references.push(format!(
                "{path}:{line} {} -> {}",
                by_id[pair.0].qualified_name, by_id[pair.1].qualified_name
            ));
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::oracle::scip::{Document, Index, Occurrence};

    fn node(id: &str, kind: NodeKind, name: &str, path: &str, lines: (u32, u32)) -> Node {
        Node {
            id: id.into(),
            kind,
            name: name.into(),
            qualified_name: format!("m.{name}"),
            language: "go".into(),
            path: path.into(),
            start_line: lines.0,
            end_line: lines.1,
            signature: String::new(),
            summary: String::new(),
            doc: String::new(),
            fingerprint: String::new(),
            test: false,
        }
    }

    fn occ(line: i32, symbol: &str, roles: i32) -> Occurrence {
        Occurrence {
            range: vec![line - 1, 5, 9],
            symbol: symbol.into(),
            symbol_roles: roles,
        }
    }

    fn edge(from: &str, to: &str, kind: EdgeKind) -> Edge {
        Edge {
            from: from.into(),
            to: to.into(),
            kind,
            line: 1,
            confidence: Confidence::Resolved,
        }
    }

    const A: &str = "scip-go gomod m v1 `m`/A().";
    const B: &str = "scip-go gomod m v1 `m`/B().";
    const T: &str = "scip-go gomod m v1 `m`/T#";
    const F: &str = "scip-go gomod m v1 `m`/T#field.";
    const C: &str = "scip-go gomod m v1 `m`/C().";

    #[test]
    fn counts_definitions_references_and_wrong_edges() {
        let index = Index {
            metadata: None,
            documents: vec![
                Document {
                    relative_path: "a.go".into(),
                    language: "go".into(),
                    occurrences: vec![
                        occ(1, A, 1),
                        occ(2, B, 0), // A calls B
                        occ(3, T, 0), // A uses T (a reference, not a call)
                        occ(3, F, 0), // a field: not a modelled target
                        occ(5, B, 1),
                        occ(8, T, 1),
                        occ(9, F, 1),
                        occ(12, C, 1), // missing from the graph
                        occ(20, "local 1", 0),
                    ],
                },
                Document {
                    relative_path: "testdata/x.go".into(),
                    language: "go".into(),
                    occurrences: vec![occ(1, "scip-go gomod m v1 `m`/X().", 1)],
                },
            ],
        };
        let nodes = vec![
            node("f", NodeKind::File, "a.go", "a.go", (1, 30)),
            node("a", NodeKind::Function, "A", "a.go", (1, 4)),
            node("b", NodeKind::Function, "B", "a.go", (5, 7)),
            node("t", NodeKind::Type, "T", "a.go", (8, 10)),
        ];
        let edges = vec![
            edge("a", "b", EdgeKind::Calls),
            edge("b", "t", EdgeKind::Calls), // the oracle has no such reference
            edge("f", "a", EdgeKind::Contains),
        ];
        struct NoSource;
        impl Source for NoSource {
            fn is_import(&self, _: &str, _: u32) -> bool {
                false
            }
            fn text(&self, _: &str, _: &[i32]) -> Option<String> {
                None
            }
        }
        let score = score(&index, &nodes, &edges, &NoSource, false);
        assert_eq!(
            score.definitions[&Category::Function],
            Ratio { found: 2, total: 3 }
        );
        assert_eq!(
            score.definitions[&Category::Type],
            Ratio { found: 1, total: 1 }
        );
        assert!(!score.definitions.contains_key(&Category::Variable));
        assert_eq!(score.missed_definitions, vec!["function a.go:12 C"]);
        // A->B found, A->T missed (no REFERENCES edge); the field is not modelled.
        assert_eq!(score.references, Ratio { found: 1, total: 2 });
        assert_eq!(score.unmodelled_targets, 0);
        assert_eq!(score.call_precision, Ratio { found: 1, total: 2 });
        assert_eq!(score.wrong_edges.len(), 1);
        assert_eq!(score.files_not_indexed.get("testdata/x.go"), Some(&1));
    }

    #[test]
    fn categories_follow_the_last_descriptor_and_its_parent() {
        let of =
            |s: &str| Category::of(&scip::descriptors(s).unwrap()).map(|(c, n)| (c, n.to_owned()));
        assert_eq!(of(A), Some((Category::Function, "A".into())));
        assert_eq!(
            of("a b c d `m`/T#M()."),
            Some((Category::Method, "M".into()))
        );
        assert_eq!(of(T), Some((Category::Type, "T".into())));
        assert_eq!(
            of("a b c d `m`/ErrX."),
            Some((Category::Variable, "ErrX".into()))
        );
        assert_eq!(of(F), None);
        assert_eq!(of("a b c d `m`/A().(x)"), None);
        assert_eq!(of("a b c d `m`/obj0:f()."), None);
        assert_eq!(of("a b c d `m`/"), None);
    }
}
