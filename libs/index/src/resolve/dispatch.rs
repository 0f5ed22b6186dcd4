//! Dispatch: a call resolved to a method of an interface, trait or base class also
//! reaches the implementations that override it (CALLS, confidence `dispatch`), so the
//! callers of an implementation and the change impact of a trait method see through the
//! interface. Runs after every owner is built and Go's implicit IMPLEMENTS edges exist.
//! A method with more than [`MAX_IMPLEMENTATIONS`] implementations (`io.Writer.Write`)
//! is left at the interface: listing them all would say nothing.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use codectx_graph::{Confidence, Edge, EdgeKind, OwnerGraph, owner_hash};

use super::SymbolRef;
use super::scope::Index;

/// Most implementations one call is dispatched to.
const MAX_IMPLEMENTATIONS: usize = 10;

pub(super) fn edges(index: &Index<'_>, owners: &mut [OwnerGraph], threads: usize) {
    // Implementing types of each type (transitively: subclasses of subclasses).
    let mut implementors: HashMap<String, Vec<String>> = HashMap::default();
    for owner in owners.iter() {
        for edge in owner
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Implements && e.confidence == Confidence::Resolved)
        {
            implementors
                .entry(edge.to.clone())
                .or_default()
                .push(edge.from.clone());
        }
    }
    if implementors.is_empty() {
        return;
    }
    let mut by_id: HashMap<&str, SymbolRef> = HashMap::default();
    for (file, ids) in index.ids.iter().enumerate() {
        for (symbol, id) in ids.iter().enumerate() {
            by_id.insert(
                id.as_str(),
                SymbolRef {
                    file,
                    index: symbol,
                },
            );
        }
    }
    let tables = Tables {
        index,
        implementors: &implementors,
        by_id: &by_id,
    };
    // Each owner on its own: on `threads` workers, each with its own cache of the
    // implementations of the methods it met, taking the next owner from a shared queue.
    let queue = std::sync::Mutex::new(owners.iter_mut());
    let work = || {
        let mut cache: HashMap<String, Vec<String>> = HashMap::default();
        loop {
            let Some(owner) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                break;
            };
            dispatch_owner(owner, &mut |method_id| {
                tables.implementations(method_id, &mut cache)
            });
        }
    };
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
}

/// What dispatch reads: the symbol table, the implementing types of each type, and
/// symbols by id.
struct Tables<'a, 'i> {
    index: &'a Index<'i>,
    implementors: &'a HashMap<String, Vec<String>>,
    by_id: &'a HashMap<&'a str, SymbolRef>,
}

impl Tables<'_, '_> {
    /// The implementations of a method, by its id (computed once per method and cache).
    fn implementations(
        &self,
        method_id: &str,
        cache: &mut HashMap<String, Vec<String>>,
    ) -> Vec<String> {
        if let Some(found) = cache.get(method_id) {
            return found.clone();
        }
        let index = self.index;
        let mut out = Vec::new();
        if let Some(&method) = self.by_id.get(method_id) {
            let symbol = index.symbol(method);
            if symbol.kind == "method"
                && let Some(owner) = index.qualified(&symbol.owner_type, |s| {
                    matches!(s.kind.as_str(), "type" | "class" | "interface")
                })
            {
                let mut seen: HashSet<&str> = HashSet::default();
                let mut queue: Vec<&str> = vec![index.id(owner)];
                while let Some(current) = queue.pop() {
                    for implementor in self.implementors.get(current).into_iter().flatten() {
                        let implementor = implementor.as_str();
                        if !seen.insert(implementor) {
                            continue;
                        }
                        queue.push(implementor);
                        let Some(&type_ref) = self.by_id.get(implementor) else {
                            continue;
                        };
                        let qualified = &index.symbol(type_ref).qualified_name;
                        for &candidate in
                            index.methods.get(qualified.as_str()).into_iter().flatten()
                        {
                            if index.symbol(candidate).name == symbol.name {
                                out.push(index.id(candidate).to_owned());
                            }
                        }
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        if out.len() > MAX_IMPLEMENTATIONS {
            out.clear();
        }
        cache.insert(method_id.to_owned(), out.clone());
        out
    }
}

/// Adds one owner's dispatch edges, and hashes it again when it gained any.
fn dispatch_owner(owner: &mut OwnerGraph, implementations: &mut dyn FnMut(&str) -> Vec<String>) {
    let mut added: Vec<Edge> = Vec::new();
    for edge in owner
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls && e.confidence == Confidence::Resolved)
    {
        for target in implementations(&edge.to) {
            if target != edge.from {
                added.push(Edge {
                    from: edge.from.clone(),
                    to: target,
                    kind: EdgeKind::Calls,
                    line: edge.line,
                    confidence: Confidence::Dispatch,
                });
            }
        }
    }
    if added.is_empty() {
        return;
    }
    // One edge per caller and implementation, at the first call that reaches it (not
    // the first in the order of the called methods' ids, which differs between graphs).
    added.sort_by(|a, b| (&a.from, &a.to, a.line).cmp(&(&b.from, &b.to, b.line)));
    let existing: HashSet<(String, String)> = owner
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls)
        .map(|e| (e.from.clone(), e.to.clone()))
        .collect();
    let mut seen: HashSet<(String, String)> = HashSet::default();
    for edge in added {
        let key = (edge.from.clone(), edge.to.clone());
        if !existing.contains(&key) && seen.insert(key) {
            owner.edges.push(edge);
        }
    }
    owner
        .edges
        .sort_by(|a, b| (&a.from, &a.to, a.kind, a.line).cmp(&(&b.from, &b.to, b.kind, b.line)));
    owner.hash = owner_hash(&owner.nodes, &owner.edges);
}
