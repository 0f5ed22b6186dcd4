//! One preorder walk of a syntax tree for several passes (references, string literals).
//!
//! Each pass sees the nodes outside the subtrees it declined, in the order a walk of
//! its own would visit them (depth first, children in order), with each node's parent
//! and the top-level node holding it. Moving a tree cursor over every node was a
//! third of what the extractors cost; walking once for the passes that run after a
//! language's extractor pays that once instead of once per pass.

use tree_sitter::Node as SyntaxNode;

/// Where a node sits in the walk.
#[derive(Debug, Clone, Copy)]
pub struct At<'t> {
    /// Its parent (`Node::parent` searches down from the root, which costs more than a
    /// pass on a long module); None for the root.
    pub parent: Option<SyntaxNode<'t>>,
    /// The root's child that holds it (the root for the root, a child for itself).
    pub top: SyntaxNode<'t>,
}

/// Which children of a node a pass wants to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Descend {
    /// Every child.
    All,
    /// None of them: the pass is done with this subtree.
    Skip,
    /// Every child but the one with this id (`Node::id`).
    AllBut(usize),
}

/// A pass over the nodes of one tree.
pub trait Pass<'t> {
    /// Called once for each node the pass has not declined, in preorder.
    fn enter(&mut self, node: SyntaxNode<'t>, at: At<'t>) -> Descend;
}

/// Most passes one walk drives (a bit each).
const MAX_PASSES: usize = 16;

/// A node whose children the walk is visiting: where it sits, the passes that want its
/// children, and where its declined children start in `Walker::but`.
struct Open<'t> {
    node: SyntaxNode<'t>,
    top: SyntaxNode<'t>,
    into: u16,
    but: usize,
}

/// Walks `root` once, calling every pass on the nodes it has not declined.
///
/// One tree cursor moves over the tree (first child, next sibling, parent), and a
/// stack holds only the nodes whose children are being visited: a walk of the children
/// gathered into a stack of their own copied every node twice.
pub fn walk<'t>(root: SyntaxNode<'t>, passes: &mut [&mut dyn Pass<'t>]) {
    assert!(passes.len() <= MAX_PASSES, "at most {MAX_PASSES} passes");
    if passes.is_empty() {
        return;
    }
    let everyone: u16 = ((1u32 << passes.len()) - 1) as u16;
    // The declined children of the open nodes, (pass bit, child id), innermost last.
    let mut but: Vec<(u16, usize)> = Vec::new();
    let root_at = At {
        parent: None,
        top: root,
    };
    let into = enter(root, root_at, everyone, passes, &mut but);
    let mut cursor = root.walk();
    if into == 0 || !cursor.goto_first_child() {
        return;
    }
    let mut open: Vec<Open<'t>> = vec![Open {
        node: root,
        top: root,
        into,
        but: 0,
    }];
    loop {
        let parent = open.last().expect("the cursor is below an open node");
        let child = cursor.node();
        let mut wanted = parent.into;
        for &(bit, id) in &but[parent.but..] {
            if child.id() == id {
                wanted &= !bit;
            }
        }
        let mut descended = false;
        if wanted != 0 {
            let top = if open.len() == 1 { child } else { parent.top };
            let at = At {
                parent: Some(parent.node),
                top,
            };
            let first_but = but.len();
            let into = enter(child, at, wanted, passes, &mut but);
            if into != 0 && cursor.goto_first_child() {
                open.push(Open {
                    node: child,
                    top,
                    into,
                    but: first_but,
                });
                descended = true;
            } else {
                but.truncate(first_but);
            }
        }
        if descended {
            continue;
        }
        // The next sibling, or the next sibling of the nearest open node that has one.
        while !cursor.goto_next_sibling() {
            cursor.goto_parent();
            let closed = open.pop().expect("an open node above the cursor");
            but.truncate(closed.but);
            if open.is_empty() {
                return;
            }
        }
    }
}

/// Shows `node` to the passes in `wanted`; returns the passes that want its children,
/// and pushes the children they declined onto `but`.
fn enter<'t>(
    node: SyntaxNode<'t>,
    at: At<'t>,
    wanted: u16,
    passes: &mut [&mut dyn Pass<'t>],
    but: &mut Vec<(u16, usize)>,
) -> u16 {
    let mut into = 0u16;
    for (i, pass) in passes.iter_mut().enumerate() {
        let bit = 1u16 << i;
        if wanted & bit == 0 {
            continue;
        }
        match pass.enter(node, at) {
            Descend::All => into |= bit,
            Descend::Skip => {}
            Descend::AllBut(id) => {
                into |= bit;
                but.push((bit, id));
            }
        }
    }
    into
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str) -> tree_sitter::Tree {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .expect("python grammar");
        parser.parse(source, None).expect("parses")
    }

    /// Records what it is shown; declines subtrees of one kind, and one field's child
    /// of another kind.
    struct Recorder<'s> {
        source: &'s str,
        skip_kind: &'static str,
        but_field: Option<(&'static str, &'static str)>,
        seen: Vec<(String, String, Option<String>, String)>,
    }

    impl<'t> Pass<'t> for Recorder<'_> {
        fn enter(&mut self, node: SyntaxNode<'t>, at: At<'t>) -> Descend {
            let text = |n: SyntaxNode<'_>| n.utf8_text(self.source.as_bytes()).unwrap().to_owned();
            self.seen.push((
                node.kind().to_owned(),
                text(node),
                at.parent.map(|p| p.kind().to_owned()),
                text(at.top),
            ));
            if node.kind() == self.skip_kind {
                return Descend::Skip;
            }
            if let Some((kind, field)) = self.but_field
                && node.kind() == kind
                && let Some(child) = node.child_by_field_name(field)
            {
                return Descend::AllBut(child.id());
            }
            Descend::All
        }
    }

    /// What a walk of the pass's own (the stack walk the passes used before) shows it.
    fn alone(root: SyntaxNode<'_>, pass: &mut Recorder<'_>) {
        let mut stack = vec![(
            root,
            At {
                parent: None,
                top: root,
            },
        )];
        let mut cursor = root.walk();
        while let Some((node, at)) = stack.pop() {
            let but = match pass.enter(node, at) {
                Descend::Skip => continue,
                Descend::All => None,
                Descend::AllBut(id) => Some(id),
            };
            let first = stack.len();
            let is_root = node.id() == root.id();
            stack.extend(
                node.children(&mut cursor)
                    .filter(|c| Some(c.id()) != but)
                    .map(|c| {
                        (
                            c,
                            At {
                                parent: Some(node),
                                top: if is_root { c } else { at.top },
                            },
                        )
                    }),
            );
            stack[first..].reverse();
        }
    }

    /// Python sources with most of the grammar's nesting: the small one below and the
    /// repository's Python fixtures.
    const SOURCES: [&str; 6] = [
        "import os\n\nclass A:\n    def f(self, x):\n        return self.g(x).h + 'text'\n\nvalue = os.path.join('a', 'b')\n",
        include_str!("../../../../tests/fixtures/python/shop/cart.py"),
        include_str!("../../../../tests/fixtures/python/shop/models.py"),
        include_str!("../../../../tests/fixtures/python/tests/test_cart.py"),
        include_str!("../../../../tests/fixtures/references/python/main.py"),
        include_str!("../../../../tests/fixtures/strings/py/app.py"),
    ];

    #[test]
    fn each_pass_sees_what_a_walk_of_its_own_shows_it() {
        for source in SOURCES {
            each_pass_sees_what_a_walk_of_its_own_shows_it_in(source);
        }
    }

    fn each_pass_sees_what_a_walk_of_its_own_shows_it_in(source: &str) {
        let tree = parse(source);
        let root = tree.root_node();
        let recorder = |skip_kind, but_field| Recorder {
            source,
            skip_kind,
            but_field,
            seen: Vec::new(),
        };
        let mut imports = recorder("import_statement", Some(("attribute", "attribute")));
        let mut strings = recorder("string", None);
        let mut classes = recorder("class_definition", Some(("call", "arguments")));
        walk(root, &mut [&mut imports, &mut strings, &mut classes]);
        for (walked, skip_kind, but_field) in [
            (
                imports,
                "import_statement",
                Some(("attribute", "attribute")),
            ),
            (strings, "string", None),
            (classes, "class_definition", Some(("call", "arguments"))),
        ] {
            let mut own = recorder(skip_kind, but_field);
            alone(root, &mut own);
            assert_eq!(walked.seen, own.seen, "pass declining {skip_kind}");
            assert!(walked.seen.len() > 10);
        }
    }

    #[test]
    fn a_declined_subtree_or_child_is_not_shown() {
        let source = "import os\nx = a.b.c\n";
        let tree = parse(source);
        let mut pass = Recorder {
            source,
            skip_kind: "import_statement",
            but_field: Some(("attribute", "attribute")),
            seen: Vec::new(),
        };
        walk(tree.root_node(), &mut [&mut pass]);
        let texts: Vec<&str> = pass.seen.iter().map(|(_, t, _, _)| t.as_str()).collect();
        // The import statement is shown, nothing inside it.
        assert!(texts.contains(&"import os"));
        assert!(!texts.contains(&"os"));
        // `a.b.c`: the objects `a.b` and `a` are shown, the attributes `c` and `b` not.
        assert!(texts.contains(&"a.b"));
        assert!(texts.contains(&"a"));
        assert!(!texts.contains(&"c"));
        assert!(!texts.contains(&"b"));
        // The top of `a` is the statement holding it; the root's is itself.
        let a = pass.seen.iter().find(|(_, t, _, _)| t == "a").unwrap();
        assert_eq!(a.3, "x = a.b.c");
        assert_eq!(pass.seen[0].2, None);
    }
}
