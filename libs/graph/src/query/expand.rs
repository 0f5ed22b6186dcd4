//! Expansion: the neighbours of roots by edge kind and direction, depth 1 or 2, ranked and
//! limited per direction, with what was left out.
//!
//! Every (root, direction) of every expansion asked together is one step. The steps'
//! depth-1 windows are read in one store call ([`GraphStore::edge_pages`]), the whole
//! nodes of light windows' kept neighbours in one more, and each step's depth-2 frontier
//! in one call ([`GraphStore::edges_each`]): a symbol's relations cost the store a few
//! round trips, not a few per relation.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use codectx_core::limits;
use codectx_errors::Error;

use super::{ExpandOptions, Expansion, Omitted, describe_direction, kinds_label};
use crate::model::{Direction, Neighbor, Node, NodeKind};
use crate::{EdgeHit, EdgeRequest, GraphStore, WindowRequest};

/// Edges read per root and direction before ranking; the limit applies after ranking.
const RANK_WINDOW: usize = 500;

/// The root nodes of one or more expansions, read in one store call (a batch of
/// expansions of the same symbol along several relations reads it once).
#[derive(Debug, Default)]
pub struct Roots(HashMap<String, Node>);

impl FromIterator<Node> for Roots {
    fn from_iter<I: IntoIterator<Item = Node>>(nodes: I) -> Self {
        Roots(nodes.into_iter().map(|n| (n.id.clone(), n)).collect())
    }
}

impl Roots {
    pub async fn read(
        store: &dyn GraphStore,
        graph_id: &str,
        ids: &[String],
    ) -> Result<Self, Error> {
        let mut wanted: Vec<String> = ids.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        Ok(store.nodes(graph_id, &wanted).await?.into_iter().collect())
    }
}

/// Expands each root by edge kind and direction. Roots that do not exist in the graph are
/// returned in `missing`, never guessed.
pub async fn expand(
    store: &dyn GraphStore,
    graph_id: &str,
    root_ids: &[String],
    options: &ExpandOptions,
) -> Result<(Vec<Expansion>, Vec<String>), Error> {
    let roots = Roots::read(store, graph_id, root_ids).await?;
    expand_roots(store, graph_id, root_ids, &roots, options).await
}

/// [`expand`] from roots already read (`roots` holds at least every found one of
/// `root_ids`; a root asked twice is expanded once).
pub async fn expand_roots(
    store: &dyn GraphStore,
    graph_id: &str,
    root_ids: &[String],
    roots: &Roots,
    options: &ExpandOptions,
) -> Result<(Vec<Expansion>, Vec<String>), Error> {
    let mut answers = expand_many(store, graph_id, &[(root_ids, options)], roots).await?;
    Ok(answers.pop().unwrap_or_default())
}

/// One root in one direction of one expansion.
struct Step<'a> {
    root: &'a Node,
    direction: Direction,
    options: &'a ExpandOptions,
    /// The per-direction limit, clamped.
    limit: usize,
    depth: u32,
}

/// One ask's missing ids and, per root found, the range of its steps.
type Plan<'a> = (Vec<String>, Vec<(&'a Node, Range<usize>)>);

/// A step's depth-1 neighbours after ranking.
struct Ranked {
    kept: Vec<EdgeHit>,
    not_shown: usize,
    seen: HashSet<String>,
    light: bool,
}

/// Several expansions answered together, each as [`expand_roots`] answers it alone.
pub async fn expand_many(
    store: &dyn GraphStore,
    graph_id: &str,
    asks: &[(&[String], &ExpandOptions)],
    roots: &Roots,
) -> Result<Vec<(Vec<Expansion>, Vec<String>)>, Error> {
    // Plan: each ask's missing ids and, per root, the range of its steps.
    let mut steps: Vec<Step<'_>> = Vec::new();
    let mut plans: Vec<Plan<'_>> = Vec::new();
    for (ids, options) in asks {
        let depth = limits::clamp_depth(options.depth);
        let limit = options.limit_per_direction.clamp(1, 200);
        let missing: Vec<String> = ids
            .iter()
            .filter(|id| !roots.0.contains_key(id.as_str()))
            .cloned()
            .collect();
        let mut started: HashSet<&str> = HashSet::new();
        let mut expansions = Vec::new();
        for id in ids.iter() {
            let Some(root) = roots.0.get(id) else {
                continue;
            };
            if !started.insert(id.as_str()) {
                continue;
            }
            let first = steps.len();
            for &direction in options.directions.list() {
                steps.push(Step {
                    root,
                    direction,
                    options,
                    limit,
                    depth,
                });
            }
            expansions.push((root, first..steps.len()));
        }
        plans.push((missing, expansions));
    }

    // Depth 1: every window in one store call, ranked there: one edge per neighbour (the
    // store's first: lowest line), by relevance to the root, then the limit.
    let requests: Vec<WindowRequest> = steps
        .iter()
        .map(|step| WindowRequest {
            edges: EdgeRequest {
                root: step.root.id.clone(),
                kinds: step.options.kinds.clone(),
                direction: step.direction,
                limit: RANK_WINDOW.max(step.limit),
                keep: Some(step.limit),
            },
            root_path: step.root.path.clone(),
            root_name: step.root.name.clone(),
            seen: step.depth >= 2,
        })
        .collect();
    let windows = store.ranked_windows(graph_id, &requests).await?;
    check_count("ranked windows", windows.len(), steps.len())?;
    let mut ranked: Vec<Ranked> = steps
        .iter()
        .zip(windows)
        .map(|(step, window)| {
            let mut seen = window.seen;
            seen.insert(step.root.id.clone());
            let beyond_window = window.total.saturating_sub(window.window);
            Ranked {
                kept: window.kept,
                not_shown: window.distinct.saturating_sub(step.limit) + beyond_window,
                seen,
                light: window.light,
            }
        })
        .collect();
    fill(store, graph_id, &mut ranked).await?;

    // Neighbours, omissions and depth 2, per step.
    let mut answered: Vec<(Vec<Neighbor>, Vec<Omitted>)> = Vec::with_capacity(steps.len());
    for (step, ranked) in steps.iter().zip(ranked) {
        answered.push(finish(store, graph_id, step, ranked).await?);
    }

    // Each ask's expansions, each root's steps in direction order.
    let mut answered = answered.into_iter();
    let mut answers = Vec::with_capacity(plans.len());
    for (missing, expansions) in plans {
        let mut out = Vec::with_capacity(expansions.len());
        for (root, range) in expansions {
            let mut neighbors = Vec::new();
            let mut omitted = Vec::new();
            for _ in range {
                let (n, o) = answered
                    .next()
                    .ok_or_else(|| Error::internal("expansion: a step was not answered"))?;
                neighbors.extend(n);
                omitted.extend(o);
            }
            out.push(Expansion {
                root: root.clone(),
                neighbors,
                omitted,
            });
        }
        answers.push((out, missing));
    }
    Ok(answers)
}

fn check_count(what: &str, answered: usize, asked: usize) -> Result<(), Error> {
    if answered == asked {
        Ok(())
    } else {
        Err(Error::internal(format!(
            "graph store answered {answered} of {asked} {what}"
        )))
    }
}

/// Replaces the ranking-only nodes of light windows' kept hits with the full nodes, all
/// in one store call (a node deleted in between keeps its light copy: the answer still
/// names it).
async fn fill(store: &dyn GraphStore, graph_id: &str, ranked: &mut [Ranked]) -> Result<(), Error> {
    let mut ids: Vec<String> = ranked
        .iter()
        .filter(|r| r.light)
        .flat_map(|r| r.kept.iter().map(|h| h.node.id.clone()))
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    ids.sort_unstable();
    ids.dedup();
    let full: HashMap<String, Node> = store
        .nodes(graph_id, &ids)
        .await?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    for hit in ranked
        .iter_mut()
        .filter(|r| r.light)
        .flat_map(|r| r.kept.iter_mut())
    {
        if let Some(node) = full.get(&hit.node.id) {
            hit.node = node.clone();
        }
    }
    Ok(())
}

/// A step's neighbours at depth 1 and 2, and what was left out.
async fn finish(
    store: &dyn GraphStore,
    graph_id: &str,
    step: &Step<'_>,
    ranked: Ranked,
) -> Result<(Vec<Neighbor>, Vec<Omitted>), Error> {
    let Ranked {
        kept,
        not_shown,
        mut seen,
        ..
    } = ranked;
    let root = step.root;
    let (direction, limit) = (step.direction, step.limit);
    let mut neighbors = Vec::new();
    let mut omitted = Vec::new();
    let mut frontier = Vec::new();
    for hit in kept {
        frontier.push(hit.node.id.clone());
        neighbors.push(Neighbor {
            root: root.id.clone(),
            node: hit.node,
            kind: hit.kind,
            direction,
            depth: 1,
            line: hit.line,
            confidence: hit.confidence,
            via: root.id.clone(),
        });
    }
    let mut used = frontier.len();
    if not_shown > 0 {
        omitted.push(Omitted {
            what: format!(
                "{} {}",
                describe_direction(direction),
                kinds_label(&step.options.kinds)
            ),
            count: not_shown,
            reason: "node_limit",
        });
    }
    if step.depth < 2 {
        return Ok((neighbors, omitted));
    }
    let mut left_out = 0usize;
    // The whole frontier in one store call, each page as long as the most any neighbour
    // could still take; cut below to what remains when its turn comes (pages are
    // ordered, so that is the page a smaller limit reads).
    let pages = store
        .edges_each(graph_id, &frontier, &step.options.kinds, direction, limit)
        .await?;
    check_count("edge pages", pages.len(), frontier.len())?;
    for (via, page) in frontier.into_iter().zip(pages) {
        let remaining = limit.saturating_sub(used);
        let mut taken = 0usize;
        for hit in page.hits.into_iter().take(remaining.max(1)) {
            if remaining == 0 || taken >= remaining {
                break;
            }
            if hit.node.kind == NodeKind::External || !seen.insert(hit.node.id.clone()) {
                continue;
            }
            taken += 1;
            neighbors.push(Neighbor {
                root: root.id.clone(),
                node: hit.node,
                kind: hit.kind,
                direction,
                depth: 2,
                line: hit.line,
                confidence: hit.confidence,
                via: via.clone(),
            });
        }
        used += taken;
        left_out += page.total.saturating_sub(taken);
    }
    if left_out > 0 {
        omitted.push(Omitted {
            what: format!(
                "{} {} at depth 2",
                describe_direction(direction),
                kinds_label(&step.options.kinds)
            ),
            count: left_out,
            reason: "node_limit",
        });
    }
    Ok((neighbors, omitted))
}
