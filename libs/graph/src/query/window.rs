//! The ranking of an expansion's window: its distinct neighbours, best first by
//! [`Relevance`], at most the number kept. Every backend's
//! [`GraphStore::ranked_windows`](crate::GraphStore::ranked_windows) answers what
//! [`rank_window`] makes of its page.

use std::collections::HashSet;

use super::Relevance;
use crate::{EdgePage, RankedWindow, WindowRequest};

/// `page` (the window of `request`) ranked: one edge per neighbour (the first in the
/// page's order), the root left out, sorted by relevance to the root (a stable sort: equal
/// ranks keep the page's order), cut to `request.edges.keep`.
pub fn rank_window(request: &WindowRequest, page: EdgePage) -> RankedWindow {
    let root = &request.edges.root;
    let window = page.hits.len();
    let mut seen: HashSet<String> = HashSet::with_capacity(window);
    let mut kept = Vec::with_capacity(window);
    for hit in page.hits {
        if hit.node.id != *root && seen.insert(hit.node.id.clone()) {
            kept.push(hit);
        }
    }
    let relevance = Relevance::new(&request.root_path, &request.root_name);
    kept.sort_by_cached_key(|hit| relevance.key(&hit.node, hit.kind));
    let distinct = kept.len();
    if let Some(keep) = request.edges.keep {
        kept.truncate(keep);
    }
    if !request.seen {
        seen = HashSet::new();
    }
    RankedWindow {
        kept,
        distinct,
        window,
        total: page.total,
        light: page.light,
        seen,
    }
}
