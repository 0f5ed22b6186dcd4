//! The repository's own policy: `.codectx.yaml` at the checkout's root says what is
//! indexed (exclude and include globs on top of `.gitignore` and the default skips,
//! languages switched off) and which notes agents must see (annotations on paths or
//! symbols). docs/policy.md has the schema and an example.
//!
//! A policy is validated (unknown keys, bad globs, unknown languages, empty or long notes
//! are errors that name the line), normalized (sorted, deduplicated, `dir/` read as
//! `dir/**`), and fingerprinted: equivalent policies (order, quoting, comments) share a
//! fingerprint, any change in meaning changes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use codectx_errors::Error;
use globset::GlobMatcher;
use serde::{Deserialize, Serialize};

use crate::lang::{Language, Tagged};

/// The file, at the checkout's root.
pub const POLICY_FILE: &str = ".codectx.yaml";
/// Largest policy file read.
pub const MAX_POLICY_BYTES: usize = 64 * 1024;
/// Longest note, in characters: it travels in answers.
pub const MAX_NOTE_CHARS: usize = 300;
/// Most rules of each list.
pub const MAX_RULES: usize = 200;
/// The only schema version so far.
pub const VERSION: u32 = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    languages: BTreeMap<String, bool>,
    #[serde(default)]
    annotations: Vec<RawAnnotation>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnnotation {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    symbol: Option<String>,
    note: String,
}

pub use codectx_graph::notes::{Annotation, Notes, Target};

/// The policy as stored with the graph: normalized, so equal meanings are equal text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Normalized {
    pub version: u32,
    pub exclude: Vec<String>,
    pub include: Vec<String>,
    /// Languages switched off (the only switch that changes anything).
    pub languages_off: Vec<String>,
    pub annotations: Vec<Annotation>,
}

/// A loaded policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub normalized: Normalized,
    exclude: Vec<GlobMatcher>,
    include: Vec<GlobMatcher>,
    notes: Notes,
    fingerprint: String,
}

/// Why a file is left out, for `--explain-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    Exclude(usize),
    Include(usize),
    LanguageOff(usize),
}

fn error(line: Option<usize>, message: impl std::fmt::Display) -> Error {
    let place = line.map(|l| format!(" line {l}:")).unwrap_or_default();
    Error::invalid_argument("policy", format!("{POLICY_FILE}{place} {message}"))
}

/// The 1-based line where `needle` is first written in `text`, for errors found after
/// parsing (a glob that does not compile, an unknown language).
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines()
        .position(|line| line.contains(needle))
        .map(|i| i + 1)
}

/// Every language name the indexer gives a file.
pub fn language_names() -> Vec<&'static str> {
    let mut names = vec![
        "go",
        "python",
        "rust",
        "javascript",
        "typescript",
        "java",
        "markdown",
        "manifest",
    ];
    names.extend(Tagged::ALL.iter().map(|t| t.spec().name));
    names
}

/// Globs read as in `.gitignore`: one without a `/` (other than a trailing one) matches a
/// file or directory name at any depth (`*_test.go`, `testdata/`); a leading `/` or `./`
/// anchors to the root; a trailing `/` means everything under the directory.
fn normalize_glob(glob: &str) -> String {
    let glob = glob.trim();
    let anchored = glob.starts_with('/') || glob.starts_with("./");
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    let glob = glob.strip_prefix('/').unwrap_or(glob);
    let (body, directory) = match glob.strip_suffix('/') {
        Some(body) => (body, true),
        None => (glob, false),
    };
    let mut out = if anchored || body.contains('/') || body.starts_with("**") {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    if directory {
        out.push_str("/**");
    }
    out
}

fn compile(text: &str, glob: &str) -> Result<GlobMatcher, Error> {
    codectx_graph::notes::compile_glob(glob).map_err(|e| {
        error(
            line_of(text, glob.trim_end_matches("**")),
            format!("{glob:?} is not a glob: {e}"),
        )
    })
}

/// Checks a glob as the user wrote it (errors name it and its line), and returns its
/// normalized form.
fn check_glob(text: &str, raw: &str) -> Result<String, Error> {
    let glob = normalize_glob(raw);
    codectx_graph::notes::compile_glob(&glob).map_err(|e| {
        let raw = raw.trim();
        let reason = e.kind().to_string();
        error(
            line_of(text, raw),
            format!("{raw:?} is not a glob: {reason}"),
        )
    })?;
    Ok(glob)
}

impl Policy {
    /// The checkout's policy, or the empty policy when it has none.
    pub fn load(root: &Path) -> Result<Policy, Error> {
        let path = root.join(POLICY_FILE);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::empty()),
            Err(e) => Err(error(None, format!("cannot be read: {e}"))),
            Ok(meta) if meta.len() as usize > MAX_POLICY_BYTES => Err(error(
                None,
                format!("is {} bytes; the limit is {MAX_POLICY_BYTES}", meta.len()),
            )),
            Ok(_) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| error(None, format!("is not UTF-8 text: {e}")))?;
                Policy::parse(&text)
            }
        }
    }

    pub fn empty() -> Policy {
        Policy::from_normalized(Normalized {
            version: VERSION,
            ..Normalized::default()
        })
        .expect("the empty policy compiles")
    }

    /// Parses and validates a policy's text.
    pub fn parse(text: &str) -> Result<Policy, Error> {
        if text.trim().is_empty() {
            return Ok(Policy::empty());
        }
        let raw: Raw = serde_norway::from_str(text).map_err(|e| {
            let line = e.location().map(|l| l.line());
            // The library's message ends with its own position; the line says it.
            let message = e.to_string();
            let message = message
                .split(" at line ")
                .next()
                .unwrap_or(&message)
                .to_owned();
            error(line, message)
        })?;
        let version = raw.version.unwrap_or(VERSION);
        if version != VERSION {
            return Err(error(
                line_of(text, "version"),
                format!("version {version} is not known; write version: {VERSION}"),
            ));
        }
        for (field, list) in [("exclude", &raw.exclude), ("include", &raw.include)] {
            if list.len() > MAX_RULES {
                return Err(error(
                    line_of(text, field),
                    format!("{field} has {} rules; the limit is {MAX_RULES}", list.len()),
                ));
            }
            for glob in list {
                if glob.trim().is_empty() {
                    return Err(error(
                        line_of(text, field),
                        format!("{field} has an empty glob"),
                    ));
                }
                check_glob(text, glob)?;
            }
        }
        let known = language_names();
        let mut languages_off = BTreeSet::new();
        for (language, on) in &raw.languages {
            if !known.contains(&language.as_str()) {
                return Err(error(
                    line_of(text, language),
                    format!(
                        "{language:?} is not a language the indexer reads; use one of {}",
                        known.join(", ")
                    ),
                ));
            }
            if !on {
                languages_off.insert(language.clone());
            }
        }
        if raw.annotations.len() > MAX_RULES {
            return Err(error(
                line_of(text, "annotations"),
                format!(
                    "{} annotations; the limit is {MAX_RULES}",
                    raw.annotations.len()
                ),
            ));
        }
        let mut annotations = BTreeSet::new();
        for annotation in raw.annotations {
            let line = line_of(text, annotation.note.lines().next().unwrap_or(""));
            let target = match (annotation.path, annotation.symbol) {
                (Some(path), None) if !path.trim().is_empty() => {
                    Target::Path(check_glob(text, &path)?)
                }
                (None, Some(symbol)) if !symbol.trim().is_empty() => {
                    Target::Symbol(symbol.trim().to_owned())
                }
                _ => {
                    return Err(error(
                        line,
                        "an annotation needs exactly one of path (a glob) or symbol (a name)",
                    ));
                }
            };
            let note = annotation
                .note
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if note.is_empty() {
                return Err(error(line, "an annotation's note is empty"));
            }
            if note.chars().count() > MAX_NOTE_CHARS {
                return Err(error(
                    line,
                    format!(
                        "a note is {} characters; the limit is {MAX_NOTE_CHARS}",
                        note.chars().count()
                    ),
                ));
            }
            // Notes travel in answers: the secret rules apply to them as to any string.
            let note = crate::redact::text(&note).into_owned();
            annotations.insert(Annotation { target, note });
        }
        let sorted = |list: Vec<String>| -> Vec<String> {
            list.iter()
                .map(|g| normalize_glob(g))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        Policy::from_normalized(Normalized {
            version,
            exclude: sorted(raw.exclude),
            include: sorted(raw.include),
            languages_off: languages_off.into_iter().collect(),
            annotations: annotations.into_iter().collect(),
        })
    }

    /// A policy from its stored form (the graph keeps it for annotations).
    pub fn from_normalized(normalized: Normalized) -> Result<Policy, Error> {
        let matchers = |globs: &[String]| -> Result<Vec<GlobMatcher>, Error> {
            globs.iter().map(|g| compile("", g)).collect()
        };
        let exclude = matchers(&normalized.exclude)?;
        let include = matchers(&normalized.include)?;
        for annotation in &normalized.annotations {
            if let Target::Path(glob) = &annotation.target {
                compile("", glob)?;
            }
        }
        let notes = Notes::new(normalized.annotations.clone());
        let canonical = serde_json::to_string(&normalized).expect("a policy serializes");
        let fingerprint = codectx_graph::model::content_hash(canonical.as_bytes());
        Ok(Policy {
            normalized,
            exclude,
            include,
            notes,
            fingerprint,
        })
    }

    /// The stored form, as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.normalized).expect("a policy serializes")
    }

    /// A policy stored with a graph; an empty or unreadable one is the empty policy.
    pub fn from_json(json: &str) -> Policy {
        serde_json::from_str::<Normalized>(json)
            .ok()
            .and_then(|n| Policy::from_normalized(n).ok())
            .unwrap_or_else(Policy::empty)
    }

    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub fn is_empty(&self) -> bool {
        self.normalized.exclude.is_empty()
            && self.normalized.include.is_empty()
            && self.normalized.languages_off.is_empty()
            && self.normalized.annotations.is_empty()
    }

    /// The include rule that names `path`, if any.
    pub fn included_by(&self, path: &str) -> Option<Rule> {
        first_match(&self.include, path).map(Rule::Include)
    }

    /// Whether a default-skipped directory (`vendor`, `node_modules`, ...) at
    /// `directory` (repository-relative) may hold a file an include rule names: only
    /// then is it walked. A rule's literal prefix (up to its first wildcard) must lead
    /// into the directory or start inside it; a rule that starts with a wildcard may
    /// match anywhere.
    pub fn may_include_under(&self, directory: &str) -> bool {
        let directory = format!("{}/", directory.trim_end_matches('/'));
        self.normalized.include.iter().any(|glob| {
            let prefix = glob.split(['*', '?', '[', '{']).next().unwrap_or_default();
            prefix.starts_with(&directory) || directory.starts_with(prefix)
        })
    }

    /// Why `path` (of `language`, when known) is left out, or None to index it. An
    /// include rule wins over exclude rules; a language switched off wins over both.
    pub fn excluded(&self, path: &str, language: Option<&str>) -> Option<Rule> {
        if let Some(language) = language
            && let Some(at) = self
                .normalized
                .languages_off
                .iter()
                .position(|l| l == language)
        {
            return Some(Rule::LanguageOff(at));
        }
        if self.included_by(path).is_some() {
            return None;
        }
        first_match(&self.exclude, path).map(Rule::Exclude)
    }

    /// Whether an exclude rule matches `path`, include rules aside (to tell whether an
    /// include rule brought the file back).
    pub fn excluded_ignoring_includes(&self, path: &str) -> bool {
        first_match(&self.exclude, path).is_some()
    }

    /// The notes that apply to a symbol (or a file: `qualified_name` empty) at `path`.
    pub fn notes_for(&self, path: &str, qualified_name: &str) -> Vec<String> {
        self.notes.notes_for(path, qualified_name)
    }

    pub fn notes(&self) -> &Notes {
        &self.notes
    }

    /// What a rule is, for `--explain-policy`.
    pub fn describe(&self, rule: Rule) -> String {
        match rule {
            Rule::Exclude(i) => format!("exclude {:?}", self.normalized.exclude[i]),
            Rule::Include(i) => format!("include {:?}", self.normalized.include[i]),
            Rule::LanguageOff(i) => {
                format!("languages: {}: false", self.normalized.languages_off[i])
            }
        }
    }
}

/// The first rule matching `path` or a directory above it: a rule that names a directory
/// names everything in it.
fn first_match(globs: &[GlobMatcher], path: &str) -> Option<usize> {
    let ancestors = path
        .match_indices('/')
        .map(|(at, _)| &path[..at])
        .chain(std::iter::once(path));
    let ancestors: Vec<&str> = ancestors.collect();
    globs
        .iter()
        .position(|g| ancestors.iter().any(|a| g.is_match(a)))
}

/// The language name of a path, as the walk can tell it (by extension).
pub fn language_of(path: &str) -> Option<&'static str> {
    if path.ends_with(".md") {
        return Some("markdown");
    }
    if crate::manifest::is_manifest(path) {
        return Some("manifest");
    }
    Language::from_path(path).map(Language::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "\
# The team's policy.
version: 1
exclude:
  - gen/
  - \"**/*_mock.go\"
include:
  - gen/keep.go
languages:
  java: false
  go: true
annotations:
  - path: payments/**
    note: PCI scope, never log card data.
  - symbol: OldClient
    note: Deprecated; use NewClient.
";

    #[test]
    fn rules_decide_what_is_indexed() {
        let policy = Policy::parse(EXAMPLE).unwrap();
        // Rules are numbered in their normalized (sorted) order.
        assert_eq!(policy.normalized.exclude, ["**/*_mock.go", "**/gen/**"]);
        assert_eq!(
            policy.excluded("gen/api.go", Some("go")),
            Some(Rule::Exclude(1))
        );
        // A name without a slash matches at any depth, as in .gitignore.
        assert_eq!(
            policy.excluded("sub/gen/api.go", Some("go")),
            Some(Rule::Exclude(1))
        );
        assert_eq!(policy.excluded("gen/keep.go", Some("go")), None);
        assert_eq!(
            policy.excluded("x/y_mock.go", Some("go")),
            Some(Rule::Exclude(0))
        );
        assert_eq!(
            policy.excluded("src/A.java", Some("java")),
            Some(Rule::LanguageOff(0))
        );
        assert_eq!(policy.excluded("main.go", Some("go")), None);
        assert_eq!(
            policy.notes_for("payments/charge.go", ""),
            ["PCI scope, never log card data."]
        );
        assert_eq!(
            policy.notes_for("client/old.go", "example.com/app/client.OldClient"),
            ["Deprecated; use NewClient."]
        );
        assert!(
            policy
                .notes_for("client/new.go", "example.com/app/client.NewClient")
                .is_empty()
        );
    }

    #[test]
    fn a_rule_naming_a_directory_covers_what_is_in_it() {
        let policy = Policy::parse(
            "exclude: [/docs, 'pkg/*/internal', '*_test.go']\ninclude: [vendor/acme/, 'third_party/**/*.h']\n",
        )
        .unwrap();
        assert!(policy.excluded("docs/a/b.md", Some("markdown")).is_some());
        assert!(policy.excluded("sub/docs/a.md", Some("markdown")).is_none());
        assert!(policy.excluded("a/b/c_test.go", Some("go")).is_some());
        assert!(policy.excluded("c_test.go", Some("go")).is_some());
        assert!(policy.excluded("pkg/x/internal/y.go", Some("go")).is_some());
        assert!(
            policy
                .excluded("pkg/x/y/internal/z.go", Some("go"))
                .is_none()
        );
        assert!(policy.excluded("docsite/a.md", Some("markdown")).is_none());
        assert!(policy.may_include_under("vendor"));
        assert!(policy.may_include_under("vendor/acme"));
        assert!(policy.may_include_under("third_party"));
        assert!(!policy.may_include_under("node_modules"));
        assert!(!policy.may_include_under("vendor/other"));
        assert!(policy.included_by("vendor/acme/lib.go").is_some());
        assert!(policy.included_by("third_party/z/a.h").is_some());
    }

    #[test]
    fn equivalent_policies_share_a_fingerprint_and_others_do_not() {
        let a = Policy::parse(EXAMPLE).unwrap();
        let reordered = "\
annotations:
  - note: 'Deprecated; use NewClient.'
    symbol: OldClient
  - path: 'payments/**'
    note: PCI   scope, never log card data.
languages: {go: true, java: false}
include: [./gen/keep.go]
exclude: ['**/*_mock.go', gen/, gen/]
";
        let b = Policy::parse(reordered).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        let changed = Policy::parse(&EXAMPLE.replace("gen/keep.go", "gen/other.go")).unwrap();
        assert_ne!(a.fingerprint(), changed.fingerprint());
        assert_eq!(
            Policy::parse("").unwrap().fingerprint(),
            Policy::empty().fingerprint()
        );
        assert_eq!(
            Policy::from_json(&a.to_json()).fingerprint(),
            a.fingerprint()
        );
    }

    #[test]
    fn mistakes_name_their_line() {
        let cases = [
            (
                "exclude:\n  - a\nexcludes:\n  - b\n",
                "line 3",
                "unknown field `excludes`",
            ),
            ("exclude:\n  - \"a[\"\n", "line 2", "is not a glob"),
            ("languages:\n  cobol: false\n", "line 2", "not a language"),
            (
                "annotations:\n  - note: no target\n",
                "line 2",
                "exactly one of path",
            ),
            (
                "annotations:\n  - path: a/**\n    note: ''\n",
                "",
                "note is empty",
            ),
            ("version: 2\n", "line 1", "version 2 is not known"),
            ("exclude: [a\n", "line", ""),
        ];
        for (text, line, message) in cases {
            let error = Policy::parse(text).unwrap_err().to_string();
            assert!(
                error.contains(line) && error.contains(message),
                "{text:?}: {error}"
            );
        }
        let long = format!("annotations:\n  - path: a\n    note: {}\n", "x".repeat(400));
        assert!(
            Policy::parse(&long)
                .unwrap_err()
                .to_string()
                .contains("300")
        );
    }

    #[test]
    fn windows_line_endings_and_a_byte_order_mark_read_the_same() {
        let unix = Policy::parse("exclude:\n  - gen/\n").unwrap();
        let windows = Policy::parse("\u{feff}exclude:\r\n  - gen/\r\n").unwrap();
        assert_eq!(unix.fingerprint(), windows.fingerprint());
    }

    #[test]
    fn notes_are_redacted() {
        let policy = Policy::parse(
            "annotations:\n  - path: a/**\n    note: the token is ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
        )
        .unwrap();
        assert!(
            !policy.notes_for("a/b", "")[0].contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789")
        );
    }
}
