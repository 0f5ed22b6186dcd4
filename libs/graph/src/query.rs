//! Reads every backend answers identically, because they are written once, here, over
//! the [`GraphStore`] primitives: selector lookup, expansion with depth and per-direction
//! limits, call graphs, implementations, tests, outlines and change impact.

use std::collections::{BTreeMap, HashSet};

use codectx_core::limits;
use codectx_errors::Error;

use crate::GraphStore;
use crate::model::{Direction, EdgeKind, Neighbor, Node, NodeKind, lookup_key, selector_matches};

mod expand;
mod relevance;
mod window;

pub use expand::{Roots, expand, expand_many, expand_roots};
pub(crate) use relevance::{Key as RelevanceKey, Relevance};
pub use relevance::{file_subject, is_test_path};
pub use window::rank_window;

/// Candidates fetched by plain name before filtering by the full selector.
const NAME_CANDIDATES: usize = 500;

/// Symbol kinds searched when the caller names none.
pub const SYMBOL_KINDS: [NodeKind; 7] = [
    NodeKind::Function,
    NodeKind::Method,
    NodeKind::Type,
    NodeKind::Interface,
    NodeKind::Class,
    NodeKind::Constant,
    NodeKind::Variable,
];

/// What a selector matched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lookup {
    pub matches: Vec<Node>,
    /// Several nodes matched: the caller must pick.
    pub ambiguous: bool,
}

/// Finds the nodes a selector names: an exact qualified name, a plain name, or a trailing
/// part of a qualified name in the language's separators (`Engine.ServeHTTP`,
/// `(*Engine).ServeHTTP`, `routing::Router::route`, `Map.bind`).
pub async fn lookup(
    store: &dyn GraphStore,
    graph_id: &str,
    selector: &str,
    kinds: &[NodeKind],
    limit: usize,
) -> Result<Lookup, Error> {
    let selector = selector.trim();
    if selector.is_empty() {
        return Err(Error::invalid_argument(
            "symbol",
            "the symbol selector is empty: pass a name or qualified name",
        ));
    }
    limits::check_bytes("symbol", selector, limits::SELECTOR_BYTES)?;
    let kinds: Vec<NodeKind> = if kinds.is_empty() {
        SYMBOL_KINDS.to_vec()
    } else {
        kinds.to_vec()
    };
    let limit = limit.clamp(1, 100);

    let exact = store
        .nodes_by_qualified_name(graph_id, selector, NAME_CANDIDATES)
        .await?;
    let mut matches: Vec<Node> = exact
        .iter()
        .filter(|n| kinds.contains(&n.kind))
        .cloned()
        .collect();
    if matches.is_empty() {
        // A public path a re-export gives (`itertools::traits::IteratorIndex`).
        matches = exported(store, graph_id, exact.iter(), &kinds).await?;
    }
    if matches.is_empty() {
        let key = javascript_member_key(&lookup_key(selector));
        let last = key.rsplit('.').next().unwrap_or(&key).to_owned();
        // The nodes named by the selector's last part, read once for the three rules
        // below that ask for them.
        let named = if last.is_empty() {
            Vec::new()
        } else {
            store
                .nodes_by_name(graph_id, &last, NAME_CANDIDATES)
                .await?
        };
        // A trailing part of a public path (`traits::IteratorIndex`).
        let aliases = named.iter().filter(|n| {
            n.kind == NodeKind::Alias && selector_matches(&key, &lookup_key(&n.qualified_name))
        });
        matches = exported(store, graph_id, aliases, &kinds).await?;
        if matches.is_empty() {
            matches = named
                .iter()
                .filter(|n| {
                    kinds.contains(&n.kind)
                        && selector_matches(&key, &lookup_key(&n.qualified_name))
                })
                .cloned()
                .collect();
        }
        if matches.is_empty() && selector != last {
            // A name that is not a trailing part (e.g. a Rust path with generics).
            matches = store
                .nodes_by_name(graph_id, selector, NAME_CANDIDATES)
                .await?
                .into_iter()
                .filter(|n| kinds.contains(&n.kind))
                .collect();
        }
        if matches.is_empty() {
            // The public path users import it by: `requests.Session` for
            // `requests.sessions.Session`, `itertools::Interleave` for
            // `itertools::adaptors::Interleave` (package `__init__` and `pub use`
            // re-exports).
            matches = named
                .into_iter()
                .filter(|n| kinds.contains(&n.kind) && skips_only_modules(&key, n))
                .collect();
        }
    }
    if matches.is_empty() {
        // An alias of something outside the repository (Go `type Duration =
        // time.Duration`) is the best answer there is.
        matches = exact
            .into_iter()
            .filter(|n| n.kind == NodeKind::Alias)
            .collect();
    }
    matches.sort_by(|a, b| {
        (a.test, &a.path, a.start_line, &a.qualified_name, &a.id).cmp(&(
            b.test,
            &b.path,
            b.start_line,
            &b.qualified_name,
            &b.id,
        ))
    });
    let ambiguous = matches.len() > 1;
    matches.truncate(limit);
    Ok(Lookup { matches, ambiguous })
}

/// The definitions the alias nodes among `nodes` export (each once).
async fn exported(
    store: &dyn GraphStore,
    graph_id: &str,
    nodes: impl Iterator<Item = &Node>,
    kinds: &[NodeKind],
) -> Result<Vec<Node>, Error> {
    let aliases: Vec<String> = nodes
        .filter(|n| n.kind == NodeKind::Alias)
        .map(|n| n.id.clone())
        .collect();
    let mut out: Vec<Node> = Vec::new();
    if aliases.is_empty() {
        return Ok(out);
    }
    let pages = store
        .edges_each(
            graph_id,
            &aliases,
            &[EdgeKind::Exports],
            Direction::Outgoing,
            4,
        )
        .await?;
    for page in pages {
        for hit in page.hits {
            if kinds.contains(&hit.node.kind) && !out.iter().any(|n| n.id == hit.node.id) {
                out.push(hit.node);
            }
        }
    }
    Ok(out)
}

/// True when `selector_key` names `node` by leaving out module segments between its first
/// part and its tail: every left-out segment names a directory or the file of the
/// definition (`requests.sessions` in `src/requests/sessions.py`), never a type, so
/// `requests.get` finds `requests.api.get` but not the method `Session.get`.
fn skips_only_modules(selector_key: &str, node: &Node) -> bool {
    let node_key = lookup_key(&node.qualified_name);
    let Some((head, tail)) = selector_key.split_once('.') else {
        return false;
    };
    let prefix = format!("{head}.");
    let suffix = format!(".{tail}");
    if !node_key.starts_with(&prefix)
        || !node_key.ends_with(&suffix)
        || node_key.len() <= prefix.len() + suffix.len()
    {
        return false;
    }
    let middle = &node_key[prefix.len()..node_key.len() - suffix.len()];
    let path_parts: HashSet<&str> = node
        .path
        .split(['/', '.'])
        .filter(|p| !p.is_empty())
        .collect();
    middle
        .split('.')
        .all(|segment| path_parts.contains(segment))
}

/// A selector key with JavaScript's member spellings removed: `Layer.prototype.match` names
/// the method stored as `Layer.match`, and `exports.f` / `module.exports.f` the module's
/// function `f` (functions defined by assignment are stored under the object's local
/// name and the property).
fn javascript_member_key(key: &str) -> String {
    let mut parts: Vec<&str> = key.split('.').filter(|p| *p != "prototype").collect();
    if parts.len() > 2 && parts[0] == "module" && parts[1] == "exports" {
        parts.drain(..2);
    } else if parts.len() > 1 && parts[0] == "exports" {
        parts.remove(0);
    }
    if parts.is_empty() {
        key.to_owned()
    } else {
        parts.join(".")
    }
}

/// Which directions to expand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directions {
    Outgoing,
    Incoming,
    Both,
}

impl Directions {
    fn list(self) -> &'static [Direction] {
        match self {
            Directions::Outgoing => &[Direction::Outgoing],
            Directions::Incoming => &[Direction::Incoming],
            Directions::Both => &[Direction::Outgoing, Direction::Incoming],
        }
    }
}

/// What was left out of an expansion and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omitted {
    /// e.g. "outgoing CALLS", "incoming CALLS at depth 2".
    pub what: String,
    pub count: usize,
    /// `node_limit` (per-direction limit reached).
    pub reason: &'static str,
}

/// One root and what surrounds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    pub root: Node,
    pub neighbors: Vec<Neighbor>,
    pub omitted: Vec<Omitted>,
}

/// How far and how wide to expand.
#[derive(Debug, Clone)]
pub struct ExpandOptions {
    pub kinds: Vec<EdgeKind>,
    pub directions: Directions,
    /// Clamped to 1..2.
    pub depth: u32,
    /// Node limit per direction per root, over all depths (1..=200).
    pub limit_per_direction: usize,
}

fn describe_direction(direction: Direction) -> &'static str {
    match direction {
        Direction::Outgoing => "outgoing",
        Direction::Incoming => "incoming",
    }
}

fn kinds_label(kinds: &[EdgeKind]) -> String {
    kinds
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join("|")
}

/// Changed line ranges per path, from a unified diff (new-side line numbers; a deletion
/// counts at the line where it happened).
pub fn parse_unified_diff(diff: &str) -> Result<BTreeMap<String, Vec<(u32, u32)>>, Error> {
    limits::check_bytes("diff", diff, limits::DIFF_BYTES)?;
    let mut files: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut old_path: Option<String> = None;
    let mut line = 0u32;
    let mut hunks = 0usize;
    for text in diff.lines() {
        if let Some(path) = text.strip_prefix("--- ") {
            old_path = strip_diff_prefix(path);
            continue;
        }
        if let Some(path) = text.strip_prefix("+++ ") {
            current = strip_diff_prefix(path).or_else(|| old_path.clone());
            if let Some(path) = &current {
                files.entry(path.clone()).or_default();
            }
            continue;
        }
        if let Some(header) = text.strip_prefix("@@ ") {
            // @@ -a,b +c,d @@
            hunks += 1;
            limits::check_count("diff hunks", hunks, limits::DIFF_HUNKS, "hunks")?;
            let new_start = header
                .split_whitespace()
                .find_map(|part| part.strip_prefix('+'))
                .and_then(|range| range.split(',').next())
                .and_then(|n| n.parse::<u32>().ok());
            match new_start {
                Some(start) if start <= limits::DIFF_MAX_LINE => line = start,
                Some(start) => {
                    return Err(Error::limit_exceeded(
                        "diff line",
                        u64::from(start),
                        u64::from(limits::DIFF_MAX_LINE),
                        "lines",
                    ));
                }
                None => {
                    return Err(Error::invalid_argument(
                        "diff",
                        format!(
                            "malformed hunk header: {}",
                            text.chars().take(120).collect::<String>()
                        ),
                    ));
                }
            }
            continue;
        }
        let Some(path) = &current else { continue };
        if text.starts_with('+') {
            push_line(files.entry(path.clone()).or_default(), line.max(1));
            line = next_line(line)?;
        } else if text.starts_with('-') {
            push_line(files.entry(path.clone()).or_default(), line.max(1));
        } else if text.starts_with(' ') || text.is_empty() {
            line = next_line(line)?;
        }
    }
    if files.is_empty() {
        return Err(Error::invalid_argument(
            "diff",
            "no file headers (`--- a/...` / `+++ b/...`) found: pass a unified diff",
        ));
    }
    limits::check_count(
        "diff files",
        files.len(),
        limits::FILE_LIST_ENTRIES,
        "files",
    )?;
    Ok(files)
}

/// The next new-side line, refusing hunks that run past the highest line a diff may name.
fn next_line(line: u32) -> Result<u32, Error> {
    match line.checked_add(1) {
        Some(next) if next <= limits::DIFF_MAX_LINE + 1 => Ok(next),
        _ => Err(Error::limit_exceeded(
            "diff line",
            u64::from(line) + 1,
            u64::from(limits::DIFF_MAX_LINE),
            "lines",
        )),
    }
}

fn strip_diff_prefix(path: &str) -> Option<String> {
    let path = path.split('\t').next().unwrap_or(path).trim();
    if path == "/dev/null" {
        return None;
    }
    let path = path
        .strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path);
    Some(path.to_owned())
}

fn push_line(ranges: &mut Vec<(u32, u32)>, line: u32) {
    match ranges.last_mut() {
        Some(last) if line <= last.1 + 1 && line >= last.0 => last.1 = last.1.max(line),
        _ => ranges.push((line, line)),
    }
}

/// The symbols that overlap a changed line range, innermost only (a symbol that contains
/// another changed symbol is left out). O(n log n) in symbols and ranges, plus the nesting
/// each symbol has: a diff of thousands of hunks over a large file stays cheap.
fn innermost_changed(symbols: Vec<Node>, ranges: &[(u32, u32)]) -> Vec<Node> {
    // Disjoint, sorted ranges, so one binary search tells whether a span overlaps any.
    let mut merged: Vec<(u32, u32)> = ranges.to_vec();
    merged.sort_unstable();
    let mut disjoint: Vec<(u32, u32)> = Vec::with_capacity(merged.len());
    for (start, end) in merged {
        match disjoint.last_mut() {
            Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
            _ => disjoint.push((start, end)),
        }
    }
    let overlaps = |start: u32, end: u32| {
        let first_ending_after = disjoint.partition_point(|(_, e)| *e < start);
        disjoint
            .get(first_ending_after)
            .is_some_and(|(s, _)| *s <= end)
    };
    let mut hit: Vec<Node> = symbols
        .into_iter()
        .filter(|n| overlaps(n.start_line, n.end_line))
        .collect();
    // By start, then widest first: whatever a symbol contains follows it, until a start
    // passes its end.
    hit.sort_by(|a, b| crate::model::outline_key(a).cmp(&crate::model::outline_key(b)));
    let mut outer = vec![false; hit.len()];
    for i in 0..hit.len() {
        let (start, end) = (hit[i].start_line, hit[i].end_line);
        for inner in &hit[i + 1..] {
            if inner.start_line > end {
                break;
            }
            if inner.end_line <= end && (inner.start_line, inner.end_line) != (start, end) {
                outer[i] = true;
                break;
            }
        }
    }
    hit.into_iter()
        .zip(outer)
        .filter(|(_, outer)| !outer)
        .map(|(node, _)| node)
        .collect()
}

/// A changed symbol with its callers and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedSymbol {
    pub symbol: Node,
    pub callers: Vec<Neighbor>,
    /// Symbols that refer to it without calling it.
    pub used_by: Vec<Neighbor>,
    pub tests: Vec<Neighbor>,
    pub omitted: Vec<Omitted>,
}

/// Change impact: the innermost symbols overlapping changed lines (all symbols of a file
/// when only its path is given), their callers, what refers to them, and their tests.
pub async fn change_impact(
    store: &dyn GraphStore,
    graph_id: &str,
    changes: &BTreeMap<String, Vec<(u32, u32)>>,
    limit_per_symbol: usize,
) -> Result<(Vec<ChangedSymbol>, Vec<String>), Error> {
    limits::check_count("files", changes.len(), limits::FILE_LIST_ENTRIES, "files")?;
    // First which symbols changed, in every file; the cap holds before any expansion.
    let mut unknown = Vec::new();
    let mut touched: Vec<Node> = Vec::new();
    for (path, ranges) in changes {
        let nodes = store.nodes_in_path(graph_id, path).await?;
        if !nodes.iter().any(|n| n.kind == NodeKind::File) {
            unknown.push(path.clone());
            continue;
        }
        let symbols: Vec<Node> = nodes.into_iter().filter(|n| n.kind.is_symbol()).collect();
        let mut hit = if ranges.is_empty() {
            symbols
        } else {
            innermost_changed(symbols, ranges)
        };
        hit.sort_by(|a, b| {
            (a.start_line, &a.qualified_name, &a.id).cmp(&(b.start_line, &b.qualified_name, &b.id))
        });
        touched.extend(hit);
        limits::check_count(
            "changed symbols",
            touched.len(),
            limits::CHANGED_SYMBOLS,
            "symbols (split the change, or pass fewer files)",
        )?;
    }
    let mut changed = Vec::with_capacity(touched.len());
    // The touched symbols are the roots: read already, not again per relation.
    let roots: Roots = touched.iter().cloned().collect();
    // Each touched symbol's callers, users and tests: every expansion in one batch.
    let relation = |kinds, directions| ExpandOptions {
        kinds: vec![kinds],
        directions,
        depth: 1,
        limit_per_direction: limit_per_symbol,
    };
    let relations = [
        relation(EdgeKind::Calls, Directions::Incoming),
        relation(EdgeKind::References, Directions::Incoming),
        relation(EdgeKind::TestedBy, Directions::Outgoing),
    ];
    let ids: Vec<[String; 1]> = touched.iter().map(|s| [s.id.clone()]).collect();
    let asks: Vec<(&[String], &ExpandOptions)> = ids
        .iter()
        .flat_map(|id| relations.iter().map(move |r| (id.as_slice(), r)))
        .collect();
    let mut answers = expand_many(store, graph_id, &asks, &roots)
        .await?
        .into_iter();
    let mut next = || {
        answers
            .next()
            .and_then(|(expansions, _)| expansions.into_iter().next())
            .map(|e| (e.neighbors, e.omitted))
            .unwrap_or_default()
    };
    for symbol in touched {
        let (callers, mut omitted) = next();
        let (used_by, used_omitted) = next();
        let (tests, test_omitted) = next();
        omitted.extend(test_omitted);
        omitted.extend(used_omitted);
        changed.push(ChangedSymbol {
            symbol,
            callers,
            used_by,
            tests,
            omitted,
        });
    }
    Ok((changed, unknown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relevance(root: &Node, neighbor: &Node, kind: EdgeKind) -> (bool, bool, bool, bool, bool) {
        Relevance::new(&root.path, &root.name).key(neighbor, kind)
    }

    #[test]
    fn relevance_orders_neighbours() {
        let node = |path: &str, name: &str, test: bool| Node {
            id: format!("{path}#{name}"),
            kind: NodeKind::Function,
            name: name.into(),
            qualified_name: name.into(),
            language: "go".into(),
            path: path.into(),
            start_line: 1,
            end_line: 1,
            signature: String::new(),
            summary: String::new(),
            doc: String::new(),
            fingerprint: String::new(),
            test,
        };
        let root = node("flag/flag.go", "Value", false);
        let local = node("flag/flag.go", "boolFlag", false);
        let far = node("cmd/go/flags.go", "tagsFlag", false);
        let test = node("flag/flag_test.go", "TestValue", true);
        // Implementations: the root's package first; tests last.
        assert!(
            relevance(&root, &local, EdgeKind::Implements)
                < relevance(&root, &far, EdgeKind::Implements)
        );
        assert!(
            relevance(&root, &far, EdgeKind::Implements)
                < relevance(&root, &test, EdgeKind::Implements)
        );
        // Calls: no directory preference (path order decides), tests last.
        assert_eq!(
            relevance(&root, &local, EdgeKind::Calls),
            relevance(&root, &far, EdgeKind::Calls)
        );
        // Unresolved (external) targets after every symbol of the repository.
        let mut external = node("", "Println", false);
        external.kind = NodeKind::External;
        assert!(
            relevance(&root, &test, EdgeKind::Calls) < relevance(&root, &external, EdgeKind::Calls)
        );
        // Tests: the conventional test file and a name that mentions the root first.
        let helper_test = node("cmd/go/main_test.go", "TestMain", true);
        assert!(
            relevance(&root, &test, EdgeKind::TestedBy)
                < relevance(&root, &helper_test, EdgeKind::TestedBy)
        );
    }

    #[test]
    fn test_files_map_to_the_file_they_test() {
        for (path, subject) in [
            ("textwrap.py", "textwrap"),
            ("test/test_textwrap.py", "textwrap"),
            ("pkg/heapq_test.go", "heapq"),
            ("src/main/java/Foo.java", "foo"),
            ("src/test/java/FooTest.java", "foo"),
            ("src/foo.spec.ts", "foo"),
            ("latest.py", "latest"),
        ] {
            assert_eq!(file_subject(path), subject, "{path}");
        }
        assert!(is_test_path("strings/strings_test.go"));
        assert!(is_test_path("test/test_heapq.py"));
        assert!(is_test_path("src/foo.spec.ts"));
        assert!(!is_test_path("strings/strings.go"));
        assert!(!is_test_path("latest.py"));
    }

    #[test]
    fn diff_ranges_use_new_side_lines() {
        let diff = "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -10,4 +10,5 @@ func f() {\n a\n-b\n+c\n+d\n e\n@@ -40,1 +41,1 @@\n-x\n+y\n";
        let files = parse_unified_diff(diff).unwrap();
        assert_eq!(files["x.go"], vec![(11, 12), (41, 41)]);
    }

    #[test]
    fn new_and_deleted_files() {
        let diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n--- a/old.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-gone\n";
        let files = parse_unified_diff(diff).unwrap();
        assert_eq!(files["new.py"], vec![(1, 2)]);
        assert_eq!(files["old.py"], vec![(1, 1)]);
    }

    #[test]
    fn not_a_diff() {
        assert!(parse_unified_diff("hello").is_err());
    }

    #[test]
    fn hunk_line_numbers_are_checked_not_wrapped() {
        // Would overflow u32 on the first added line (a panic in debug builds).
        let diff = "--- a/x.go\n+++ b/x.go\n@@ -1 +4294967295 @@\n+a\n+b\n";
        let error = parse_unified_diff(diff).unwrap_err();
        assert_eq!(error.field(), "diff line");
        assert_eq!(error.limit(), Some(u64::from(limits::DIFF_MAX_LINE)));
        // A start under the cap that runs past it is refused too.
        let start = limits::DIFF_MAX_LINE;
        let diff = format!("--- a/x.go\n+++ b/x.go\n@@ -1 +{start} @@\n+a\n+b\n");
        assert_eq!(parse_unified_diff(&diff).unwrap_err().field(), "diff line");
    }

    #[test]
    fn hunks_are_capped() {
        let mut diff = String::from("--- a/x.go\n+++ b/x.go\n");
        for i in 0..=limits::DIFF_HUNKS {
            diff.push_str(&format!("@@ -{i} +{i} @@\n+x\n"));
        }
        let error = parse_unified_diff(&diff).unwrap_err();
        assert_eq!(error.field(), "diff hunks");
        assert_eq!(error.limit(), Some(limits::DIFF_HUNKS as u64));
    }

    #[test]
    fn public_paths_skip_only_module_segments() {
        let node = |qualified: &str, path: &str| Node {
            id: qualified.into(),
            kind: NodeKind::Function,
            name: qualified.rsplit('.').next().unwrap().into(),
            qualified_name: qualified.into(),
            language: "python".into(),
            path: path.into(),
            start_line: 1,
            end_line: 1,
            signature: String::new(),
            summary: String::new(),
            doc: String::new(),
            fingerprint: String::new(),
            test: false,
        };
        let get = node("requests.api.get", "src/requests/api.py");
        let method = node("requests.sessions.Session.get", "src/requests/sessions.py");
        assert!(skips_only_modules("requests.get", &get));
        assert!(!skips_only_modules("requests.get", &method));
        let request = node(
            "requests.sessions.Session.request",
            "src/requests/sessions.py",
        );
        assert!(skips_only_modules("requests.Session.request", &request));
        let interleave = node("itertools::adaptors::Interleave", "src/adaptors/mod.rs");
        assert!(skips_only_modules("itertools.Interleave", &interleave));
        // A plain trailing match is not this rule's business, nor another package.
        assert!(!skips_only_modules("api.get", &get));
        assert!(!skips_only_modules("other.get", &get));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any text, and any diff-shaped text, parses or fails with a typed error: no panic,
        /// and every range is ordered and within the line cap.
        #[test]
        fn the_diff_parser_never_panics(
            noise in "\\PC{0,200}",
            start in proptest::prelude::any::<u32>(),
            lines in proptest::collection::vec("[ +\\-@]{0,3}[a-z]{0,5}", 0..40),
        ) {
            let _ = parse_unified_diff(&noise);
            let diff = format!("--- a/f.go\n+++ b/f.go\n@@ -1 +{start} @@\n{}\n", lines.join("\n"));
            if let Ok(files) = parse_unified_diff(&diff) {
                for ranges in files.values() {
                    for (first, last) in ranges {
                        proptest::prop_assert!(first <= last);
                        proptest::prop_assert!(*last <= limits::DIFF_MAX_LINE + 1);
                    }
                }
            }
        }
    }
}
