//! Node kinds by id. A walk over every node of a file that asks `Node::kind()` and
//! compares the name with a list pays for a C string length, a UTF-8 check and several
//! string comparisons per node; here a grammar's kind names are resolved once to the
//! ids its trees carry, and a node's kind is tested with one table lookup.
//!
//! A name stands for every id that bears it (a grammar can give a named node and an
//! anonymous token, or an alias and its symbol, the same name), so a table answers
//! exactly as comparing `kind()` with the name did.

use std::sync::Mutex;

use tree_sitter::Node as SyntaxNode;

use super::Language;

/// Flags by kind id of one grammar.
pub struct KindTable {
    flags: Vec<u16>,
}

impl KindTable {
    /// A table of `grammar` with `flag` set on every kind named in its list.
    pub fn new(grammar: &tree_sitter::Language, sets: &[(u16, &[&str])]) -> KindTable {
        let count = grammar.node_kind_count();
        let flags = (0..count)
            .map(|id| {
                let Some(name) = grammar.node_kind_for_id(id as u16) else {
                    return 0;
                };
                sets.iter()
                    .filter(|(_, names)| names.contains(&name))
                    .fold(0, |flags, (flag, _)| flags | flag)
            })
            .collect();
        KindTable { flags }
    }

    /// The flags of `node`'s kind (0 for a kind the table does not know).
    pub fn flags(&self, node: SyntaxNode<'_>) -> u16 {
        self.flags
            .get(node.kind_id() as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Whether `node`'s kind has `flag`.
    pub fn is(&self, node: SyntaxNode<'_>, flag: u16) -> bool {
        self.flags(node) & flag != 0
    }
}

/// One value per language, built on first use and kept for the process (one per
/// grammar a run meets, so a few dozen at most).
pub struct PerLanguage<T: 'static> {
    built: Mutex<Vec<(Language, &'static T)>>,
}

impl<T: Send + Sync + 'static> PerLanguage<T> {
    pub const fn new() -> Self {
        PerLanguage {
            built: Mutex::new(Vec::new()),
        }
    }

    /// The value for `language`, built from its grammar the first time.
    pub fn get(
        &self,
        language: Language,
        build: impl FnOnce(&tree_sitter::Language) -> T,
    ) -> &'static T {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = built.iter().find(|(l, _)| *l == language) {
            return value;
        }
        let value: &'static T = Box::leak(Box::new(build(&language.grammar())));
        built.push((language, value));
        value
    }
}

impl<T: Send + Sync + 'static> Default for PerLanguage<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDENTIFIER: u16 = 1;
    const STRING: u16 = 2;

    #[test]
    fn a_table_answers_as_the_kind_names_do_for_every_node_of_a_tree() {
        let source = "def f(x: 'T') -> str:\n    return f\"{x} and 'y'\" + g(x.y)\n";
        let grammar = Language::Python.grammar();
        let table = KindTable::new(
            &grammar,
            &[
                (IDENTIFIER, &["identifier"]),
                (STRING, &["string", "identifier"]),
            ],
        );
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&grammar).unwrap();
        let tree = parser.parse(source, None).unwrap();
        let mut stack = vec![tree.root_node()];
        let (mut identifiers, mut strings) = (0, 0);
        while let Some(node) = stack.pop() {
            let kind = node.kind();
            assert_eq!(table.is(node, IDENTIFIER), kind == "identifier", "{kind}");
            assert_eq!(
                table.is(node, STRING),
                kind == "string" || kind == "identifier",
                "{kind}"
            );
            identifiers += usize::from(kind == "identifier");
            strings += usize::from(kind == "string");
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        assert!(identifiers >= 6 && strings >= 2, "{identifiers} {strings}");
    }

    #[test]
    fn each_language_is_built_once() {
        static BUILT: PerLanguage<usize> = PerLanguage::new();
        let first = BUILT.get(Language::Go, |g| g.node_kind_count());
        let again = BUILT.get(Language::Go, |_| unreachable!("built once"));
        assert!(std::ptr::eq(first, again));
        assert_ne!(*BUILT.get(Language::Python, |g| g.node_kind_count()), 0);
    }
}
