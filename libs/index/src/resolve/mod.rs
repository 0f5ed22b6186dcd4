//! Turns every file's facts into graph nodes and edges. Each edge family has its own
//! module, so a rule is found where its family lives:
//!
//! | module | produces |
//! |---|---|
//! | [`scope`] | the symbol table: qualified and short names, scopes, imports, bindings |
//! | [`definitions`] | symbol nodes and CONTAINS edges |
//! | [`calls`] | CALLS edges (scope, imports, receivers, fields, `name_match`) |
//! | [`references`] | REFERENCES edges (reads, writes and type uses that are not calls) |
//! | [`implementations`] | IMPLEMENTS edges (declared bases, Rust impls, Go structural typing) |
//! | [`dispatch`] | CALLS to the implementations of a called interface/trait/base method (`dispatch`) |
//! | [`tested_by`] | TESTED_BY edges (calls, references, naming conventions) |
//! | [`imports`] | IMPORTS edges to in-repo packages or modules by name |
//! | [`exports`] | alias nodes for re-exports' public paths, EXPORTS edges |
//! | [`strings`] | error-message nodes (exact lookup of messages) |
//! | [`docs`] | Markdown sections and MENTIONS edges |
//!
//! What cannot be resolved is kept as an `external` target with confidence `unresolved`
//! (never dropped, never guessed).

mod calls;
mod definitions;
mod dispatch;
mod docs;
mod exports;
mod implementations;
mod imports;
mod references;
mod scope;
mod strings;
mod tested_by;

use std::collections::BTreeMap;

use rustc_hash::FxHashSet as HashSet;

use codectx_graph::{Confidence, Edge, EdgeKind, Node, NodeKind, OwnerGraph, node_id, owner_hash};

use crate::facts::FileFacts;

pub(crate) use tested_by::{convention_names, is_test_file};

/// The repository-level owner.
pub const REPOSITORY_OWNER: &str = "";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SymbolRef {
    file: usize,
    index: usize,
}

enum Target {
    Symbol(SymbolRef),
    External(String),
}

fn separator(language: &str) -> &'static str {
    if language == "rust" {
        return "::";
    }
    crate::lang::Tagged::by_name(language).map_or(".", |tagged| tagged.spec().scope_separator)
}

fn is_callable(kind: &str) -> bool {
    matches!(kind, "function" | "method" | "class" | "type")
}

fn is_type(kind: &str) -> bool {
    matches!(kind, "type" | "class" | "interface" | "alias")
}

/// Which files to build owners for. Owners of other files are left as stored; their
/// external and module references (from the last run, cached) keep the repository owner
/// complete.
#[derive(Debug, Default)]
pub struct BuildScope {
    /// None: every file.
    pub affected: Option<std::collections::HashSet<String>>,
    /// Per file: the external and module nodes its owner points at.
    pub cached_externals: std::collections::HashMap<String, Vec<(NodeKind, String)>>,
    /// Per file: its symbols' node ids from an earlier run of this process over the same
    /// facts ([`Build::symbol_ids`]); files not here get theirs computed.
    pub symbol_ids: std::collections::HashMap<String, Vec<String>>,
    /// Threads that build owners (0 or 1: the calling thread only).
    pub threads: usize,
}

impl BuildScope {
    fn builds(&self, path: &str) -> bool {
        self.affected.as_ref().is_none_or(|a| a.contains(path))
    }
}

/// Owners built, and the external references of each built file (to cache).
#[derive(Debug, Default)]
pub struct Build {
    pub owners: Vec<OwnerGraph>,
    pub externals: BTreeMap<String, Vec<(NodeKind, String)>>,
    /// Every file's symbol node ids, in the order of the files given (to keep in memory
    /// for the next run, [`BuildScope::symbol_ids`]).
    pub symbol_ids: Vec<Vec<String>>,
}

fn plain_node(id: String, kind: NodeKind, name: &str, qualified_name: &str) -> Node {
    Node {
        id,
        kind,
        name: name.to_owned(),
        qualified_name: qualified_name.to_owned(),
        language: String::new(),
        path: String::new(),
        start_line: 0,
        end_line: 0,
        signature: String::new(),
        summary: String::new(),
        doc: String::new(),
        fingerprint: String::new(),
        test: false,
    }
}

/// The repository owner's nodes and edges: the repository, packages, modules and external
/// targets (each once).
struct Repo<'g> {
    graph_id: &'g str,
    nodes: BTreeMap<String, Node>,
    edges: HashSet<Edge>,
}

impl Repo<'_> {
    /// The id of the external (or module) node `name`, created on first use; `sink`
    /// records it for the file that points at it.
    fn external(
        &mut self,
        name: &str,
        kind: NodeKind,
        sink: &mut Vec<(NodeKind, String)>,
    ) -> String {
        sink.push((kind, name.to_owned()));
        let id = node_id(self.graph_id, kind, "", name, "");
        self.nodes.entry(id.clone()).or_insert_with(|| {
            let short = name.rsplit(['.', ':', '/']).next().unwrap_or(name);
            plain_node(id.clone(), kind, short, name)
        });
        id
    }
}

/// One file's owner while it is built.
struct FileOut<'f> {
    file_index: usize,
    file: &'f FileFacts,
    path: &'f str,
    file_id: String,
    nodes: Vec<Node>,
    edges: HashSet<Edge>,
    /// External and module nodes this file points at.
    sink: Vec<(NodeKind, String)>,
}

impl<'f> FileOut<'f> {
    fn new(file_index: usize, file: &'f FileFacts) -> Self {
        FileOut {
            file_index,
            file,
            path: file.path.as_str(),
            file_id: String::new(),
            nodes: Vec::new(),
            edges: HashSet::default(),
            sink: Vec::new(),
        }
    }

    fn edge(
        &mut self,
        from: String,
        to: String,
        kind: EdgeKind,
        line: u32,
        confidence: Confidence,
    ) {
        self.edges.insert(Edge {
            from,
            to,
            kind,
            line,
            confidence,
        });
    }

    /// The node id of symbol `index` of this file, or the file's for -1.
    fn symbol_or_file(&self, index: &scope::Index<'_>, symbol: i32) -> String {
        if symbol >= 0 {
            index.ids[self.file_index][symbol as usize].clone()
        } else {
            self.file_id.clone()
        }
    }
}

/// Fewest files to build before the owners are built on more than one thread (a watcher's
/// re-index of a few files stays on one).
const PARALLEL_MIN_FILES: usize = 64;

/// What every file's owner is built from: read-only, shared by the workers.
struct Shared<'a> {
    graph_id: &'a str,
    repository_id: &'a str,
    index: &'a scope::Index<'a>,
    files: &'a [FileFacts],
    package_modules: &'a HashSet<&'a str>,
    mentions: docs::Mentions,
    counterparts: tested_by::Counterparts,
    messages: tested_by::Messages<'a>,
}

/// One file's owner, built, with the external and module nodes it points at.
struct BuiltOwner {
    owner: OwnerGraph,
    externals: Vec<(NodeKind, String)>,
}

/// Builds owners of `to_build` (indexes into the files) until none is left: each worker
/// takes the next file from `next`, so a long file does not hold the others back.
fn build_owners<'a>(
    shared: &Shared<'a>,
    to_build: &[usize],
    next: &std::sync::atomic::AtomicUsize,
) -> (Repo<'a>, Vec<BuiltOwner>) {
    let mut repo = Repo {
        graph_id: shared.graph_id,
        nodes: BTreeMap::new(),
        edges: HashSet::default(),
    };
    let mut built = Vec::new();
    loop {
        let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&file_index) = to_build.get(at) else {
            break;
        };
        let index = shared.index;
        let mut out = FileOut::new(file_index, &shared.files[file_index]);
        definitions::file_node(shared.graph_id, shared.repository_id, &mut out, &mut repo);
        definitions::symbols(index, &mut out);
        implementations::declared(index, &mut out, &mut repo);
        let mut tested = tested_by::Tested::default();
        calls::edges(index, &mut out, &mut repo, &mut tested);
        references::edges(index, &mut out, &mut tested);
        tested_by::edges(
            index,
            shared.files,
            &shared.counterparts,
            &shared.messages,
            &mut out,
            tested,
        );
        imports::edges(shared.graph_id, shared.package_modules, &mut out, &mut repo);
        exports::aliases(shared.graph_id, index, &mut out);
        exports::type_aliases(index, &mut out, &mut repo);
        strings::nodes(shared.graph_id, index, &mut out);
        shared.mentions.sections(shared.graph_id, index, &mut out);

        let mut externals = out.sink;
        externals.sort();
        externals.dedup();
        let mut edges: Vec<Edge> = out.edges.into_iter().collect();
        edges.sort_by(|a, b| {
            (&a.from, &a.to, a.kind, a.line).cmp(&(&b.from, &b.to, b.kind, b.line))
        });
        built.push(BuiltOwner {
            owner: OwnerGraph {
                hash: owner_hash(&out.nodes, &edges),
                owner: out.path.to_owned(),
                nodes: out.nodes,
                edges,
            },
            externals,
        });
    }
    (repo, built)
}

/// Builds the owners of the files `scope` asks for: the symbol table first, then each
/// file's owner (on `scope.threads` workers when there are many), then the rules that
/// need every owner (Go's implicit interfaces, dispatch).
pub fn build(
    graph_id: &str,
    repository_name: &str,
    files: &[FileFacts],
    mut scope: BuildScope,
) -> Build {
    let started = std::time::Instant::now();
    let index = scope::Index::new(graph_id, files, std::mem::take(&mut scope.symbol_ids));
    let scope = &scope;
    tracing::debug!(elapsed = ?started.elapsed(), "symbol index built");
    let mut repo = Repo {
        graph_id,
        nodes: BTreeMap::new(),
        edges: HashSet::default(),
    };

    let repository_id = node_id(graph_id, NodeKind::Repository, "", repository_name, "");
    repo.nodes.insert(
        repository_id.clone(),
        plain_node(
            repository_id.clone(),
            NodeKind::Repository,
            repository_name,
            repository_name,
        ),
    );
    let package_modules = imports::packages(graph_id, files, &repository_id, &mut repo);
    let shared = Shared {
        graph_id,
        repository_id: &repository_id,
        index: &index,
        files,
        package_modules: &package_modules,
        mentions: docs::Mentions::new(files, scope),
        counterparts: tested_by::Counterparts::new(files),
        messages: tested_by::Messages::new(files),
    };

    // In file order, on this thread: what the repository owner gets from every file
    // (manifest dependencies: the first manifest to name a module describes it), and
    // the files whose owners are kept as stored (their file node's containment, and the
    // externals they still point at, each once).
    let mut kept_externals: HashSet<&(NodeKind, String)> = HashSet::default();
    let mut to_build: Vec<usize> = Vec::new();
    for (file_index, file) in files.iter().enumerate() {
        imports::dependencies(file, &repository_id, &mut repo);
        if scope.builds(&file.path) {
            to_build.push(file_index);
            continue;
        }
        let mut out = FileOut::new(file_index, file);
        definitions::file_node(graph_id, &repository_id, &mut out, &mut repo);
        for entry in scope.cached_externals.get(&file.path).into_iter().flatten() {
            if kept_externals.insert(entry) {
                repo.external(&entry.1, entry.0, &mut out.sink);
            }
        }
    }

    // The owners to build, on worker threads: each file's owner reads only the shared
    // tables, and what a worker adds to the repository owner (externals, containment)
    // is the same whichever worker adds it, so the merge below gives the answer one
    // thread would.
    let workers = if to_build.len() < PARALLEL_MIN_FILES {
        1
    } else {
        scope.threads.clamp(1, to_build.len())
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let built: Vec<(Repo<'_>, Vec<BuiltOwner>)> = if workers == 1 {
        vec![build_owners(&shared, &to_build, &next)]
    } else {
        std::thread::scope(|threads| {
            let handles: Vec<_> = (0..workers)
                .map(|_| threads.spawn(|| build_owners(&shared, &to_build, &next)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a resolver worker panicked"))
                .collect()
        })
    };
    let mut owners: BTreeMap<String, OwnerGraph> = BTreeMap::new();
    let mut built_externals: BTreeMap<String, Vec<(NodeKind, String)>> = BTreeMap::new();
    for (worker_repo, worker_owners) in built {
        for (id, node) in worker_repo.nodes {
            repo.nodes.entry(id).or_insert(node);
        }
        repo.edges.extend(worker_repo.edges);
        for built in worker_owners {
            built_externals.insert(built.owner.owner.clone(), built.externals);
            owners.insert(built.owner.owner.clone(), built.owner);
        }
    }

    let mut result: Vec<OwnerGraph> = Vec::with_capacity(owners.len() + 1);
    let repo_nodes: Vec<Node> = repo.nodes.into_values().collect();
    let mut repo_edges: Vec<Edge> = repo.edges.into_iter().collect();
    repo_edges.sort_by(|a, b| (&a.from, &a.to, a.kind).cmp(&(&b.from, &b.to, b.kind)));
    result.push(OwnerGraph {
        owner: REPOSITORY_OWNER.to_owned(),
        hash: owner_hash(&repo_nodes, &repo_edges),
        nodes: repo_nodes,
        edges: repo_edges,
    });
    result.extend(owners.into_values());
    tracing::debug!(elapsed = ?started.elapsed(), "owners built");
    implementations::go_implements(&index, files, &mut result);
    tracing::debug!(elapsed = ?started.elapsed(), "implicit interfaces resolved");
    let dispatch_threads = if result.len() < PARALLEL_MIN_FILES {
        1
    } else {
        scope.threads.max(1)
    };
    dispatch::edges(&index, &mut result, dispatch_threads);
    tracing::debug!(elapsed = ?started.elapsed(), "dispatch edges added");
    Build {
        owners: result,
        externals: built_externals,
        symbol_ids: index.ids,
    }
}

/// Set of a file's symbols by index, for rules that need "is this one a test".
fn is_test_symbol(file: &FileFacts, symbol: i32) -> bool {
    symbol >= 0 && file.symbols[symbol as usize].test
}
