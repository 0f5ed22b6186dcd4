//! How relevant a depth-1 neighbour is to the root of an expansion: the rank that
//! decides which neighbours a window keeps.

use crate::model::{EdgeKind, Node, NodeKind};

/// Sort key of a depth-1 neighbour (lower first; ties keep the store's path order):
/// symbols of the repository before external (unresolved) targets, which have no path
/// and would otherwise sort first and crowd them out; production code before tests; for
/// IMPLEMENTS, types in the root's own directory (package) first; among tests, those in
/// the root's conventional test file (`test_textwrap.py`, `heapq_test.go`,
/// `FooTest.java` for `Foo.java`) first, then those whose name mentions the root's name
/// (`test_dedent_tabs` for `dedent`).
pub(crate) type Key = (bool, bool, bool, bool, bool);

/// What the key compares of the root, computed once per root; each neighbour's key is
/// computed once per window, from its fields borrowed (a store can rank rows it has not
/// turned into nodes: [`Relevance::key_of`]).
pub(crate) struct Relevance {
    root_path: String,
    root_named: bool,
    directory: String,
    subject: String,
    /// The root's name, lowercased.
    name: String,
}

impl Relevance {
    pub(crate) fn new(root_path: &str, root_name: &str) -> Self {
        Self {
            root_path: root_path.to_owned(),
            root_named: !root_name.is_empty(),
            directory: directory(root_path).to_owned(),
            subject: file_subject(root_path),
            name: root_name.to_lowercase(),
        }
    }

    pub(crate) fn key(&self, neighbor: &Node, kind: EdgeKind) -> Key {
        self.key_of(
            neighbor.kind == NodeKind::External,
            neighbor.test,
            &neighbor.path,
            &neighbor.name,
            kind,
        )
    }

    /// The key of a neighbour of node kind external or not, its test flag, path and
    /// plain name, reached by an edge of `kind`. Allocates only for names and paths that
    /// are not ASCII.
    pub(crate) fn key_of(
        &self,
        external: bool,
        test: bool,
        path: &str,
        name: &str,
        kind: EdgeKind,
    ) -> Key {
        let elsewhere = kind == EdgeKind::Implements && directory(path) != self.directory;
        let counterpart =
            path != self.root_path && !self.root_path.is_empty() && subject_is(path, &self.subject);
        let named = self.root_named && lowercase_contains(name, &self.name);
        (
            external,
            test || is_test_path(path),
            elsewhere,
            !counterpart,
            !named,
        )
    }
}

/// The directory part of a path (`""` at the root).
fn directory(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether `name.to_lowercase()` contains `needle` (itself lowercase), without the
/// lowercased copy when `name` is ASCII.
fn lowercase_contains(name: &str, needle: &str) -> bool {
    if !name.is_ascii() {
        return name.to_lowercase().contains(needle);
    }
    // An ASCII name lowercases to ASCII: a needle that is not ASCII is not in it.
    if !needle.is_ascii() {
        return false;
    }
    needle.is_empty()
        || name
            .as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Whether `file_subject(path) == subject` (itself lowercase), without the lowercased
/// copy when the file's stem is ASCII.
fn subject_is(path: &str, subject: &str) -> bool {
    let stem = subject_stem(path);
    if !stem.is_ascii() {
        return stem.to_lowercase() == subject;
    }
    subject.is_ascii() && stem.eq_ignore_ascii_case(subject)
}

/// Files that hold tests by their language's conventions (helpers in them included).
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    path.starts_with("test/")
        || path.starts_with("tests/")
        || path.contains("/test/")
        || path.contains("/tests/")
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// A file's stem without test markers, lowercased: `test/test_textwrap.py`,
/// `textwrap_test.py` and `textwrap.py` all give `textwrap`.
pub fn file_subject(path: &str) -> String {
    subject_stem(path).to_lowercase()
}

/// [`file_subject`] before lowercasing.
fn subject_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    // `foo.test.ts` and `foo.spec.ts` stop at the first dot.
    let stem = file.split('.').next().unwrap_or(file);
    stem.strip_prefix("test_")
        .or_else(|| stem.strip_prefix("tests_"))
        .or_else(|| stem.strip_suffix("_test"))
        .or_else(|| stem.strip_suffix("_tests"))
        .or_else(|| stem.strip_suffix("Tests"))
        .or_else(|| stem.strip_suffix("Test"))
        .unwrap_or(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_comparisons_agree_with_lowercased_copies() {
        let names = [
            "",
            "dedent",
            "Dedent",
            "test_dedent_tabs",
            "TEST_DEDENT",
            "ΣΊΣΥΦΟΣ",
            "σίσυφος",
            "straße",
            "STRASSE",
            "\u{212A}elvin",
            "kelvin",
            "İstanbul",
            "i̇stanbul",
            "a",
        ];
        for name in names {
            for root in names {
                let needle = root.to_lowercase();
                assert_eq!(
                    lowercase_contains(name, &needle),
                    name.to_lowercase().contains(&needle),
                    "{name:?} contains {needle:?}"
                );
            }
        }
        let paths = [
            "",
            "a/textwrap.py",
            "test/test_textwrap.py",
            "TextWrap_test.go",
            "FooTest.java",
            "x/Foo.java",
            "ΣΊΣΥΦΟΣ.py",
            "σίσυφος_test.py",
            "\u{212A}elvin.go",
            "kelvin_test.go",
            "a.test.ts",
            "tests_a.py",
        ];
        for path in paths {
            for root in paths {
                let subject = file_subject(root);
                assert_eq!(
                    subject_is(path, &subject),
                    file_subject(path) == subject,
                    "{path:?} against {root:?}"
                );
            }
        }
    }
}
