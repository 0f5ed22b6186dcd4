//! A write's edges as the rows the SQLite store inserts: both endpoints' `nid`s, the
//! kind's and confidence's codes.
//!
//! The endpoints are looked up in the `nid`s the write just gave its nodes, which takes
//! no connection: a bulk write does it on a second thread while SQLite builds the node
//! indexes on the connection's, and sorts the rows into the order of `edges_from`, so
//! that index's build reads its input already sorted (docs/BENCHMARKS.md, "Session of
//! 2026-12-07 (sixth)"). An endpoint the write did not give a `nid` (a node another
//! owner holds, stored before) is left for the connection to find.

use rustc_hash::FxHashMap;

use crate::model::{Edge, OwnerGraph};

/// An edge row as stored, in the order of `edges_from`'s key: src, kind, dst, line,
/// confidence, then oid.
pub(crate) type EdgeRow = [i64; 6];

/// An edge with an endpoint the write gave no `nid`; `owner` indexes the write's owners.
pub(crate) struct Miss<'a> {
    pub src: Option<i64>,
    pub dst: Option<i64>,
    pub owner: usize,
    pub edge: &'a Edge,
    pub row: EdgeRow,
}

/// A write's edges: the rows whose endpoints were found, and the others.
pub(crate) struct EdgeRows<'a> {
    pub rows: Vec<EdgeRow>,
    pub misses: Vec<Miss<'a>>,
}

/// Every edge of `owners` (their `oids` aligned), endpoints looked up in `nids`, in the
/// owners' and their edges' order, or sorted when `sorted`; `codes` gives an edge's
/// kind and confidence codes.
pub(crate) fn edge_rows<'a>(
    owners: &'a [OwnerGraph],
    oids: &[i64],
    nids: &FxHashMap<&str, i64>,
    codes: impl Fn(&Edge) -> (i64, i64),
    sorted: bool,
) -> EdgeRows<'a> {
    let mut rows = Vec::with_capacity(owners.iter().map(|o| o.edges.len()).sum());
    let mut misses = Vec::new();
    for (owner, (graph, &oid)) in owners.iter().zip(oids).enumerate() {
        for edge in &graph.edges {
            let (kind, confidence) = codes(edge);
            let src = nids.get(edge.from.as_str()).copied();
            let dst = nids.get(edge.to.as_str()).copied();
            let row = [
                src.unwrap_or(0),
                kind,
                dst.unwrap_or(0),
                i64::from(edge.line),
                confidence,
                oid,
            ];
            match (src, dst) {
                (Some(_), Some(_)) => rows.push(row),
                _ => misses.push(Miss {
                    src,
                    dst,
                    owner,
                    edge,
                    row,
                }),
            }
        }
    }
    if sorted {
        rows.sort_unstable();
    }
    EdgeRows { rows, misses }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Confidence, EdgeKind};

    fn edge(from: &str, to: &str, line: u32) -> Edge {
        Edge {
            from: from.into(),
            to: to.into(),
            kind: EdgeKind::Calls,
            line,
            confidence: Confidence::Resolved,
        }
    }

    fn owners() -> Vec<OwnerGraph> {
        vec![
            OwnerGraph {
                owner: "a.py".into(),
                edges: vec![
                    edge("b", "a", 3),
                    edge("a", "elsewhere", 4),
                    edge("a", "b", 9),
                ],
                ..Default::default()
            },
            OwnerGraph {
                owner: "b.py".into(),
                edges: vec![edge("b", "a", 2)],
                ..Default::default()
            },
        ]
    }

    #[test]
    fn rows_keep_the_owners_order_or_edges_froms_and_leave_unknown_endpoints_to_the_store() {
        let owners = owners();
        let nids: FxHashMap<&str, i64> = [("a", 1), ("b", 2)].into_iter().collect();
        let codes = |e: &Edge| (if e.line == 9 { 20 } else { 10 }, 5);
        let written = edge_rows(&owners, &[10, 20], &nids, codes, false);
        assert_eq!(
            written.rows,
            vec![
                [2, 10, 1, 3, 5, 10],
                [1, 20, 2, 9, 5, 10],
                [2, 10, 1, 2, 5, 20]
            ]
        );
        let misses: Vec<_> = written
            .misses
            .iter()
            .map(|m| (m.src, m.dst, m.owner, m.edge.to.as_str(), m.row))
            .collect();
        assert_eq!(
            misses,
            vec![(Some(1), None, 0, "elsewhere", [1, 10, 0, 4, 5, 10])]
        );
        let sorted = edge_rows(&owners, &[10, 20], &nids, codes, true);
        assert_eq!(
            sorted.rows,
            vec![
                [1, 20, 2, 9, 5, 10],
                [2, 10, 1, 2, 5, 20],
                [2, 10, 1, 3, 5, 10]
            ]
        );
        assert_eq!(sorted.misses.len(), 1);
    }
}
