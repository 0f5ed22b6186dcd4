//! The notes of a repository's policy (`.codectx.yaml` `annotations`, parsed and
//! validated by the indexer's `policy` module): short texts the team wants every agent to
//! see where they apply, attached to paths (globs) or symbols (selectors). The graph's
//! repository record keeps the normalized policy; the services that build answers read
//! the notes from it with [`Notes::from_policy_json`].

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::{lookup_key, selector_matches};

/// What an annotation is attached to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Files (and the symbols in them) whose repository-relative path matches a glob.
    Path(String),
    /// Symbols a selector names (`OldClient`, `payments.Charge`, `Cart#total`).
    Symbol(String),
}

/// A note and where it applies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Annotation {
    pub target: Target,
    pub note: String,
}

/// A glob as the policy means it: `*` stays within one path segment, `**` crosses them.
pub fn compile_glob(glob: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
}

/// Compiled annotations.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    annotations: Vec<Annotation>,
    selectors: Vec<Option<String>>,
    globs: Vec<Option<GlobMatcher>>,
}

#[derive(Deserialize)]
struct Stored {
    #[serde(default)]
    annotations: Vec<Annotation>,
}

impl Notes {
    /// Compiles annotations; one whose glob does not compile is left out (the indexer
    /// validated them, so only a hand-edited record can hold one).
    pub fn new(annotations: Vec<Annotation>) -> Notes {
        let globs = annotations
            .iter()
            .map(|a| match &a.target {
                Target::Path(glob) => compile_glob(glob).ok(),
                Target::Symbol(_) => None,
            })
            .collect();
        let selectors = annotations
            .iter()
            .map(|a| match &a.target {
                Target::Symbol(selector) => Some(lookup_key(selector)),
                Target::Path(_) => None,
            })
            .collect();
        Notes {
            annotations,
            selectors,
            globs,
        }
    }

    /// The notes of a policy stored with a graph (its normalized JSON); none when the
    /// graph has no policy or the record does not parse.
    pub fn from_policy_json(json: &str) -> Notes {
        if json.is_empty() {
            return Notes::default();
        }
        Notes::new(
            serde_json::from_str::<Stored>(json)
                .map(|s| s.annotations)
                .unwrap_or_default(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.annotations.is_empty()
    }

    pub fn annotations(&self) -> &[Annotation] {
        &self.annotations
    }

    /// Indexes of the annotations that apply to a symbol (or, with `qualified_name`
    /// empty, a file) at `path`.
    pub fn matching(&self, path: &str, qualified_name: &str) -> Vec<usize> {
        let key = (!qualified_name.is_empty()).then(|| lookup_key(qualified_name));
        (0..self.annotations.len())
            .filter(|&i| match (&self.globs[i], &self.selectors[i], &key) {
                (Some(glob), _, _) => !path.is_empty() && glob.is_match(path),
                (None, Some(selector), Some(key)) => selector_matches(selector, key),
                _ => false,
            })
            .collect()
    }

    /// The notes that apply to a symbol (or a file) at `path`, in policy order.
    pub fn notes_for(&self, path: &str, qualified_name: &str) -> Vec<String> {
        self.matching(path, qualified_name)
            .into_iter()
            .map(|i| self.annotations[i].note.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_apply_by_path_glob_and_by_symbol_selector_only() {
        let notes = Notes::new(vec![
            Annotation {
                target: Target::Path("payments/**".into()),
                note: "PCI scope".into(),
            },
            Annotation {
                target: Target::Symbol("OldClient".into()),
                note: "deprecated".into(),
            },
            Annotation {
                target: Target::Path("*.go".into()),
                note: "top-level go".into(),
            },
        ]);
        assert_eq!(
            notes.notes_for("payments/card.go", "pay.Charge"),
            ["PCI scope"]
        );
        assert_eq!(notes.notes_for("payments/card.go", ""), ["PCI scope"]);
        assert_eq!(
            notes.notes_for("api/client.go", "api.OldClient"),
            ["deprecated"]
        );
        assert!(notes.notes_for("api/client.go", "api.NewClient").is_empty());
        assert!(notes.notes_for("paymentsx/a.go", "").is_empty());
        // `*` does not cross a directory.
        assert_eq!(notes.notes_for("main.go", ""), ["top-level go"]);
        assert!(notes.notes_for("cmd/main.go", "").is_empty());
    }

    #[test]
    fn a_stored_policy_yields_its_notes_and_anything_else_none() {
        let json = r#"{"version":1,"exclude":[],"include":[],"languages_off":[],
            "annotations":[{"target":{"path":"a/**"},"note":"n"}]}"#;
        assert_eq!(Notes::from_policy_json(json).notes_for("a/b.rs", ""), ["n"]);
        assert!(Notes::from_policy_json("").is_empty());
        assert!(Notes::from_policy_json("not json").is_empty());
    }
}
