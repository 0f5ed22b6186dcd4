//! How deeply the indexer reads each language (docs/indexing.md), for the answers that
//! tell an agent when to fall back to reading files (`describe_repository`).

/// How a language is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// A hand-written extractor: definitions, calls resolved through scopes, imports,
    /// receivers and declared types, references that are not calls, re-exports, tests,
    /// error messages and string literals.
    Deep,
    /// A query file (`libs/index/queries`): definitions, calls resolved through scopes,
    /// the receiver's own type and imports or matched by a unique name, imports, tests,
    /// string literals; no references that are not calls, no typed receivers.
    Tagged,
    /// Markdown sections and the code spans they mention.
    Sections,
    /// Manifests: declared dependencies.
    Dependencies,
}

impl Depth {
    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Deep => "deep",
            Depth::Tagged => "definitions and calls",
            Depth::Sections => "sections",
            Depth::Dependencies => "dependencies",
        }
    }

    /// What an agent can ask about code in a language of this depth.
    pub fn reads(self) -> &'static str {
        match self {
            Depth::Deep => {
                "definitions, calls resolved through imports and types, references, tests, messages"
            }
            Depth::Tagged => {
                "definitions, calls (resolved by scope or unique name), imports, tests, strings; \
                 no references that are not calls: read the file for those"
            }
            Depth::Sections => "headings and the symbols they mention",
            Depth::Dependencies => "declared dependencies",
        }
    }
}

/// The depth of a language as the graph names it (`Node::language`).
pub fn depth(language: &str) -> Depth {
    match language {
        "go" | "python" | "rust" | "javascript" | "typescript" | "java" => Depth::Deep,
        "markdown" => Depth::Sections,
        "manifest" => Depth::Dependencies,
        _ => Depth::Tagged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_depth() {
        assert_eq!(depth("go"), Depth::Deep);
        assert_eq!(depth("kotlin"), Depth::Tagged);
        assert_eq!(depth("markdown").as_str(), "sections");
        assert!(Depth::Tagged.reads().contains("no references"));
    }
}
