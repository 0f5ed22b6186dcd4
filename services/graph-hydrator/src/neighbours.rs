//! The names next to each symbol that the dense leg's text carries (ADR 0011): what a
//! function calls, and what a type holds. Metadata from the graph's edges, never source.

use std::collections::HashMap;

use codectx_errors::Error;
use codectx_graph::{EdgeKind, Node, NodeKind, Store};

/// Names kept per symbol and relation: the first ones by line say most of what a
/// function does or a type offers; the dense leg's text is short on purpose.
pub const NAMES_PER_SYMBOL: usize = 12;

/// Callables that call, and what they call (a class is called to construct it).
const CALLERS: &[NodeKind] = &[NodeKind::Function, NodeKind::Method];
const CALLEES: &[NodeKind] = &[NodeKind::Function, NodeKind::Method, NodeKind::Class];
/// Types that hold members, and the members worth naming.
const HOLDERS: &[NodeKind] = &[NodeKind::Class, NodeKind::Type, NodeKind::Interface];
const MEMBERS: &[NodeKind] = &[
    NodeKind::Method,
    NodeKind::Function,
    NodeKind::Constant,
    NodeKind::Variable,
];

pub type Names = HashMap<String, Vec<String>>;

/// Per symbol id of `nodes` (one corpus page): the names it uses (resolved calls, in
/// call order) and its members, each at most [`NAMES_PER_SYMBOL`], each name once.
pub async fn names(
    store: &dyn Store,
    graph_id: &str,
    nodes: &[Node],
) -> Result<(Names, Names), Error> {
    let of_kinds = |kinds: &[NodeKind]| -> Vec<String> {
        nodes
            .iter()
            .filter(|n| kinds.contains(&n.kind))
            .map(|n| n.id.clone())
            .collect()
    };
    let uses = store
        .neighbour_names(graph_id, EdgeKind::Calls, &of_kinds(CALLERS), CALLEES)
        .await?;
    let members = store
        .neighbour_names(graph_id, EdgeKind::Contains, &of_kinds(HOLDERS), MEMBERS)
        .await?;
    Ok((group(uses), group(members)))
}

fn group(pairs: Vec<(String, String)>) -> Names {
    let mut out: Names = HashMap::new();
    for (source, name) in pairs {
        let names = out.entry(source).or_default();
        if names.len() < NAMES_PER_SYMBOL && !names.contains(&name) {
            names.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_once_each_and_capped() {
        let mut pairs = vec![
            ("a".to_owned(), "x".to_owned()),
            ("a".to_owned(), "x".to_owned()),
            ("b".to_owned(), "y".to_owned()),
        ];
        pairs.extend((0..20).map(|i| ("c".to_owned(), format!("n{i}"))));
        let grouped = group(pairs);
        assert_eq!(grouped["a"], ["x"]);
        assert_eq!(grouped["b"], ["y"]);
        assert_eq!(grouped["c"].len(), NAMES_PER_SYMBOL);
        assert_eq!(grouped["c"][0], "n0");
    }
}
