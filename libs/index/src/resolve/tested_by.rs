//! TESTED_BY edges: a test covers what it calls or refers to, and, by naming convention,
//! the symbol of its counterpart file it is named after (`test_merge` in `test_heapq.py`
//! covers `heapq.merge`, confidence `name_match`).

use rustc_hash::FxHashMap as HashMap;

use codectx_graph::query::{file_subject, is_test_path};
use codectx_graph::{Confidence, EdgeKind};

use super::FileOut;
use super::scope::Index;
use crate::facts::{FileFacts, SymbolFact};

/// (covered symbol id, test id) → the first line the test reaches it on.
#[derive(Default)]
pub(super) struct Tested(HashMap<(String, String), u32>);

impl Tested {
    pub(super) fn note(&mut self, symbol: &str, test: &str, line: u32) {
        let entry = self
            .0
            .entry((symbol.to_owned(), test.to_owned()))
            .or_insert(line);
        *entry = (*entry).min(line);
    }
}

/// Messages raised by non-test symbols, sorted, for tests that assert on them.
pub(super) struct Messages<'a> {
    sorted: Vec<(&'a str, usize, usize)>,
}

/// Shortest test literal matched against raised messages (shorter ones say too little).
const MESSAGE_MATCH_CHARS: usize = 12;

impl<'a> Messages<'a> {
    pub(super) fn new(files: &'a [FileFacts]) -> Self {
        let mut sorted: Vec<(&str, usize, usize)> = Vec::new();
        for (file_index, file) in files.iter().enumerate() {
            for error in file.errors.iter().filter(|e| e.raised && e.enclosing >= 0) {
                let symbol = &file.symbols[error.enclosing as usize];
                if !symbol.test && error.message.chars().count() >= MESSAGE_MATCH_CHARS {
                    sorted.push((error.message.as_str(), file_index, error.enclosing as usize));
                }
            }
        }
        sorted.sort_unstable();
        Self { sorted }
    }

    /// Symbols raising a message that equals `literal` or starts with it.
    fn raising(&self, literal: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
        let start = self.sorted.partition_point(|(m, _, _)| *m < literal);
        let literal = literal.to_owned();
        self.sorted[start..]
            .iter()
            .take_while(move |(m, _, _)| m.starts_with(literal.as_str()))
            .map(|(_, file, symbol)| (*file, *symbol))
    }
}

/// TESTED_BY edges of one file: what its tests call or refer to (`tested`, resolved),
/// the messages they assert on (`name_match`), then naming conventions, which reach what indirection hides (`self.module.merge(...)`
/// in test_heapq.py's `test_merge` covers heapq.merge): a test named after a symbol of its
/// file's counterpart covers that symbol, with confidence name_match.
pub(super) fn edges(
    index: &Index<'_>,
    files: &[FileFacts],
    counterparts: &Counterparts,
    messages: &Messages<'_>,
    out: &mut FileOut<'_>,
    tested: Tested,
) {
    let (file, file_index) = (out.file, out.file_index);
    let mut by_convention: HashMap<(String, String), u32> = HashMap::default();
    // A test that asserts on a message (`assert "x is missing" in str(e)`,
    // `err.Error() != "store: key is missing"`) covers the symbols raising it.
    for literal in file.errors.iter().filter(|e| {
        !e.raised
            && e.enclosing >= 0
            && file.symbols[e.enclosing as usize].test
            && e.message.chars().count() >= MESSAGE_MATCH_CHARS
    }) {
        let test = index.ids[file_index][literal.enclosing as usize].clone();
        for (other, symbol) in messages.raising(&literal.message) {
            let covered = index.ids[other][symbol].clone();
            if !tested.0.contains_key(&(covered.clone(), test.clone())) {
                by_convention.insert((covered, test.clone()), literal.line);
            }
        }
    }
    for (test_index, test) in file.symbols.iter().enumerate().filter(|(_, s)| s.test) {
        let targets = counterparts.of(file_index).iter().flat_map(|&other| {
            files[other]
                .symbols
                .iter()
                .enumerate()
                .map(move |(index, symbol)| (other, index, symbol))
        });
        let targets: Vec<(usize, usize, &SymbolFact)> = targets
            .filter(|(_, _, symbol)| !symbol.test && symbol.kind != "constant")
            .collect();
        for name in convention_names(&test.name) {
            let matched: Vec<String> = targets
                .iter()
                .filter(|(_, _, symbol)| symbol.name == name)
                .map(|(other, symbol_index, _)| index.ids[*other][*symbol_index].clone())
                .collect();
            if matched.is_empty() {
                continue;
            }
            let from = index.ids[file_index][test_index].clone();
            for symbol in matched {
                if !tested.0.contains_key(&(symbol.clone(), from.clone())) {
                    by_convention.insert((symbol, from.clone()), test.start_line);
                }
            }
            break;
        }
    }
    for ((symbol, test), line) in tested.0 {
        out.edge(symbol, test, EdgeKind::TestedBy, line, Confidence::Resolved);
    }
    for ((symbol, test), line) in by_convention {
        out.edge(
            symbol,
            test,
            EdgeKind::TestedBy,
            line,
            Confidence::NameMatch,
        );
    }
}

/// Test files and the files they are named after: `test/test_heapq.py` and `heapq.py`,
/// `strings_test.go` and `strings.go`, `FooTest.java` and `Foo.java`. A counterpart in
/// the test's own directory wins; otherwise the one non-test file of that name and
/// language in the repository, if there is exactly one.
pub(crate) struct Counterparts {
    of: Vec<Vec<usize>>,
}

impl Counterparts {
    pub(crate) fn new(files: &[FileFacts]) -> Self {
        let mut by_subject: HashMap<(String, &str), Vec<usize>> = HashMap::default();
        for (index, file) in files.iter().enumerate() {
            if !is_test_file(file) {
                by_subject
                    .entry((file_subject(&file.path), file.language.as_str()))
                    .or_default()
                    .push(index);
            }
        }
        let of = files
            .iter()
            .map(|file| {
                if !is_test_file(file) {
                    return Vec::new();
                }
                let Some(candidates) =
                    by_subject.get(&(file_subject(&file.path), file.language.as_str()))
                else {
                    return Vec::new();
                };
                let directory =
                    |path: &str| path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
                let here = directory(&file.path);
                let local: Vec<usize> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| directory(&files[c].path) == here)
                    .collect();
                if !local.is_empty() {
                    local
                } else if candidates.len() == 1 {
                    candidates.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        Counterparts { of }
    }

    fn of(&self, file: usize) -> &[usize] {
        &self.of[file]
    }
}

/// A file holding tests: by its path's conventions, or because it defines a test.
pub(crate) fn is_test_file(file: &FileFacts) -> bool {
    is_test_path(&file.path) || file.symbols.iter().any(|s| s.test)
}

/// Names a test's name refers to, longest first: `test_merge_stability` ->
/// `merge_stability`, `merge`; `TestReadFileLarge` -> `ReadFileLarge`, `ReadFile`, `Read`;
/// `testParse` -> `parse`, `Parse`.
pub(crate) fn convention_names(test: &str) -> Vec<String> {
    let rest = test
        .strip_prefix("test_")
        .or_else(|| test.strip_prefix("Test_"))
        .or_else(|| test.strip_prefix("Test"))
        .or_else(|| test.strip_prefix("test"))
        .unwrap_or("");
    if rest.is_empty() {
        return Vec::new();
    }
    // Cut points: before '_' and before an upper-case letter that follows a lower-case one.
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    let mut cuts: Vec<usize> = Vec::new();
    for window in chars.windows(2) {
        let ((_, a), (at, b)) = (window[0], window[1]);
        if b == '_' || (a.is_lowercase() && b.is_uppercase()) {
            cuts.push(at);
        }
    }
    cuts.push(rest.len());
    let mut names: Vec<String> = Vec::new();
    for &cut in cuts.iter().rev() {
        let name = rest[..cut].trim_end_matches('_');
        if name.is_empty() {
            continue;
        }
        for candidate in [name.to_owned(), lower_first(name), upper_first(name)] {
            if !names.contains(&candidate) {
                names.push(candidate);
            }
        }
    }
    names
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_point_at_what_they_test() {
        assert_eq!(
            convention_names("test_merge_stability"),
            vec!["merge_stability", "Merge_stability", "merge", "Merge"]
        );
        assert_eq!(
            convention_names("TestReadFileLarge"),
            vec![
                "ReadFileLarge",
                "readFileLarge",
                "ReadFile",
                "readFile",
                "Read",
                "read"
            ]
        );
        assert_eq!(convention_names("testParse"), vec!["Parse", "parse"]);
        assert!(convention_names("test").is_empty());
        assert!(convention_names("helper").is_empty());
    }

    #[test]
    fn counterparts_prefer_the_same_directory_then_a_unique_file() {
        let file = |path: &str| FileFacts {
            path: path.into(),
            language: if path.ends_with(".go") {
                "go"
            } else {
                "python"
            }
            .into(),
            ..Default::default()
        };
        let files = vec![
            file("heapq.py"),
            file("test/test_heapq.py"),
            file("a/util.py"),
            file("b/util.py"),
            file("test/test_util.py"),
            file("strings/strings.go"),
            file("strings/strings_test.go"),
            file("other/strings.go"),
        ];
        let counterparts = Counterparts::new(&files);
        assert_eq!(counterparts.of(1), &[0]);
        // Two util.py elsewhere: no guess.
        assert!(counterparts.of(4).is_empty());
        // The same directory wins over other files of that name.
        assert_eq!(counterparts.of(6), &[5]);
        assert!(counterparts.of(0).is_empty());
    }
}
