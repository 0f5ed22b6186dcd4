//! The indexer: walks a repository (honouring `.gitignore`, skipping vendored, generated
//! and binary files), parses Go, Python, Rust, JavaScript, TypeScript/TSX and Java with
//! tree-sitter, reads Markdown sections and manifests, resolves calls across files, and
//! writes the code graph through a [`GraphStore`]. Incremental: only added, changed and
//! deleted files are re-parsed (facts are cached by content hash), and only owners whose
//! content changed are rewritten.

pub mod cache;
pub mod facts;
pub mod lang;
pub mod layout;
pub mod manifest;
pub mod markdown;
pub mod policy;
pub mod redact;
pub mod resolve;
pub mod warm;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, UNIX_EPOCH};

use codectx_core::ids;
use codectx_errors::Error;
use codectx_graph::model::content_hash;
use codectx_graph::{GraphStore, RepositoryInfo};

use crate::cache::{Cache, CachedFile};
use crate::facts::FileFacts;
use crate::lang::Language;
use crate::layout::Layout;
use crate::policy::Policy;
pub use crate::warm::Warm;

const GENERATED: &str = "generated";

/// Files larger than this are not parsed (a minified bundle, a data dump).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Directories never indexed: vendored code, dependencies, build output, test data.
pub const SKIPPED_DIRECTORIES: &[&str] = &[
    "vendor",
    "node_modules",
    "third_party",
    "target",
    "dist",
    "build",
    "__pycache__",
    "testdata",
    ".git",
    ".hg",
    ".svn",
    "site-packages",
];

/// How to index.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// The checkout to index.
    pub root: PathBuf,
    /// The organisation that supplied the source: the graph belongs to it (a shared graph
    /// reaches other organisations only when a platform admin makes it public).
    pub owner: String,
    /// The repository key (`--name`); with the owner, the graph id derives from it.
    pub name: String,
    /// The facts cache file.
    pub cache: PathBuf,
    pub max_file_bytes: u64,
    /// Show a progress bar on long runs (only when stderr is a terminal).
    pub progress: bool,
    /// Parser threads (0: the number of cores).
    pub threads: usize,
}

/// A file that was not parsed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// What an index run did.
#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    pub graph_id: String,
    /// The checkout's commit (empty without git).
    pub commit: String,
    pub files: usize,
    pub parsed: usize,
    pub reused: usize,
    pub removed: usize,
    pub skipped: Vec<Skipped>,
    /// Files parsed with syntax errors (facts extracted from what did parse).
    pub syntax_errors: usize,
    /// Generated files (by name or a "Code generated ... DO NOT EDIT" header): listed as
    /// files, not parsed, not warned about.
    pub generated: usize,
    pub symbols: usize,
    pub edges: usize,
    pub owners_written: usize,
    /// Unchanged files parsed again because their language's extractor changed since
    /// they were read.
    pub refreshed: usize,
    /// The policy in effect and what it did.
    pub policy: PolicyReport,
    /// The cached facts came from this process's memory ([`Warm`]), not the disk cache.
    pub facts_from_memory: bool,
    pub seconds: f64,
}

/// What the repository's policy did in a run (`codectx index --explain-policy`).
#[derive(Debug, Clone, Default)]
pub struct PolicyReport {
    /// Whether the checkout has a `.codectx.yaml`.
    pub present: bool,
    pub fingerprint: String,
    /// Per rule that decided something: the rule, how many files it decided, and a few
    /// of them.
    pub rules: Vec<RuleEffect>,
    /// Per annotation: its target and note, and how many files and symbols it covers.
    pub annotations: Vec<AnnotationEffect>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEffect {
    /// `exclude "gen/**"`, `include "vendor/acme/**"`, `languages: java: false`.
    pub rule: String,
    /// `excluded` or `included` (an include rule counts the files it brought back).
    pub effect: &'static str,
    pub files: usize,
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationEffect {
    pub target: String,
    pub note: String,
    pub files: usize,
    pub symbols: usize,
}

impl IndexReport {
    pub fn files_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.files as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The graph id of an organisation's repository key.
pub fn graph_id_for(owner: &str, name: &str) -> String {
    ids::graph_for(owner, name)
}

struct Candidate {
    path: String,
    absolute: PathBuf,
    size: u64,
    modified_ns: i64,
    /// An include rule names it: default skips (generated headers) do not apply.
    forced: bool,
}

/// The language of a file without an extension whose `#!` line or editor mode line names
/// one the indexer reads (shell scripts, mostly): only its first and last bytes are read.
fn script_language(absolute: &Path, path: &str, size: u64) -> Option<Language> {
    use std::io::{Read, Seek, SeekFrom};
    if layout::file_name(path).contains('.') {
        return None;
    }
    let mut file = std::fs::File::open(absolute).ok()?;
    let mut head = [0u8; 160];
    let read = file.read(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head[..read]).into_owned();
    if let Some(language) = Language::from_shebang(head.lines().next().unwrap_or("")) {
        return Some(language);
    }
    let mut tail = [0u8; 256];
    let from = size.saturating_sub(tail.len() as u64);
    let read = file
        .seek(SeekFrom::Start(from))
        .and_then(|_| file.read(&mut tail))
        .ok()?;
    Language::from_mode_line(&head, &String::from_utf8_lossy(&tail[..read]))
}

/// Whether a change at `relative` (a path in the checkout) can change what an index run
/// reads: source, documents, manifests, files without an extension (scripts,
/// directories), the policy file and `.gitignore` files; not hidden paths, build output
/// or dependency directories. Watchers use it to ignore the noise of builds and editors.
pub fn may_affect_index(relative: &str) -> bool {
    let relative = relative.replace('\\', "/");
    if relative == policy::POLICY_FILE || layout::file_name(&relative) == ".gitignore" {
        return true;
    }
    let parts: Vec<&str> = relative.split('/').collect();
    if parts
        .iter()
        .any(|p| p.starts_with('.') || SKIPPED_DIRECTORIES.contains(p))
    {
        return false;
    }
    !layout::file_name(&relative).contains('.') || policy::language_of(&relative).is_some()
}

/// Whether a path lies under a directory the walk skips by default.
fn in_skipped_directory(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.iter().any(|p| SKIPPED_DIRECTORIES.contains(p))
}

/// What the walk left out or brought back because of the policy, per rule.
#[derive(Default)]
struct Effects {
    by_rule: BTreeMap<policy::Rule, (usize, Vec<String>)>,
}

impl Effects {
    fn count(&mut self, rule: policy::Rule, path: &str) {
        let entry = self.by_rule.entry(rule).or_default();
        entry.0 += 1;
        if entry.1.len() < 5 {
            entry.1.push(path.to_owned());
        }
    }

    fn report(self, policy: &Policy) -> Vec<RuleEffect> {
        self.by_rule
            .into_iter()
            .map(|(rule, (files, examples))| RuleEffect {
                rule: policy.describe(rule),
                effect: match rule {
                    policy::Rule::Include(_) => "included",
                    _ => "excluded",
                },
                files,
                examples,
            })
            .collect()
    }
}

/// Per annotation, the files and symbols it covers.
fn annotation_effects(policy: &Policy, files: &[FileFacts]) -> Vec<AnnotationEffect> {
    let notes = policy.notes();
    let mut counts = vec![(0usize, 0usize); notes.annotations().len()];
    if !notes.is_empty() {
        for file in files {
            for i in notes.matching(&file.path, "") {
                counts[i].0 += 1;
            }
            for symbol in &file.symbols {
                for i in notes.matching(&file.path, &symbol.qualified_name) {
                    counts[i].1 += 1;
                }
            }
        }
    }
    notes
        .annotations()
        .iter()
        .zip(counts)
        .map(|(annotation, (files, symbols))| AnnotationEffect {
            target: match &annotation.target {
                policy::Target::Path(glob) => format!("path {glob:?}"),
                policy::Target::Symbol(selector) => format!("symbol {selector:?}"),
            },
            note: annotation.note.clone(),
            files,
            symbols,
        })
        .collect()
}

fn is_generated_name(path: &str) -> bool {
    let name = layout::file_name(path);
    name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with("_pb2_grpc.py")
        || name.ends_with(".min.js")
        || name.ends_with(".d.ts")
        || name.ends_with(".d.cts")
        || name.ends_with(".d.mts")
        || name.contains(".generated.")
}

/// The files to index: `.gitignore` honoured, default skips (vendored, dependency and
/// build directories, generated names) applied, then the policy's rules (an include rule
/// brings back what a default skip or an exclude rule left out; a language switched off
/// wins over both).
fn walk(root: &Path, policy: &Policy) -> Result<(Vec<Candidate>, Effects), Error> {
    let mut out = Vec::new();
    let mut effects = Effects::default();
    let walk_policy = policy.clone();
    let walk_root = root.to_path_buf();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if !(is_dir
                && entry.depth() > 0
                && SKIPPED_DIRECTORIES.contains(&entry.file_name().to_string_lossy().as_ref()))
            {
                return true;
            }
            // A skipped directory is walked only when an include rule may name a file in it.
            entry
                .path()
                .strip_prefix(&walk_root)
                .ok()
                .and_then(|p| p.to_str())
                .is_some_and(|p| walk_policy.may_include_under(&p.replace('\\', "/")))
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                tracing::warn!(%error, "skipping an unreadable path");
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            tracing::warn!(path = %entry.path().display(), "skipping a path that is not UTF-8");
            continue;
        };
        let path = relative.replace('\\', "/");
        if path == policy::POLICY_FILE {
            continue;
        }
        let included = policy.included_by(&path);
        let skipped_by_default = is_generated_name(&path) || in_skipped_directory(&path);
        if skipped_by_default && included.is_none() {
            continue;
        }
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let language = match policy::language_of(&path) {
            Some(language) => Some(language),
            None => match script_language(entry.path(), &path, metadata.len()) {
                Some(language) => Some(language.name()),
                None => continue,
            },
        };
        if let Some(rule) = policy.excluded(&path, language) {
            effects.count(rule, &path);
            continue;
        }
        if let Some(rule) = included
            && (skipped_by_default || policy.excluded_ignoring_includes(&path))
        {
            effects.count(rule, &path);
        }
        let modified_ns = metadata
            .modified()
            .ok()
            .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        out.push(Candidate {
            path,
            absolute: entry.path().to_path_buf(),
            size: metadata.len(),
            modified_ns,
            forced: included.is_some(),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((out, effects))
}

/// Reads a file and says why it cannot be indexed, if it cannot.
fn read_source(candidate: &Candidate, max_bytes: u64) -> Result<String, String> {
    if candidate.size > max_bytes {
        return Err(format!(
            "{} bytes is over the {} byte limit",
            candidate.size, max_bytes
        ));
    }
    let bytes = std::fs::read(&candidate.absolute).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return Err("binary".into());
    }
    let text = String::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_owned())?;
    let head: String = text.lines().take(5).collect::<Vec<_>>().join("\n");
    if !candidate.forced
        && ((head.contains("Code generated") && head.contains("DO NOT EDIT"))
            || head.contains("@generated"))
    {
        return Err(GENERATED.into());
    }
    let lines = text.lines().count().max(1);
    if text.len() / lines > 1_000 && text.len() > 20_000 {
        return Err("minified (average line over 1,000 bytes)".into());
    }
    Ok(text)
}

/// Parses one file into facts. Never panics on bad input: problems become `skipped`.
fn parse_file(
    candidate: &Candidate,
    layout: &Layout,
    max_bytes: u64,
    parsers: &mut HashMap<Language, tree_sitter::Parser>,
) -> (FileFacts, Option<bool>) {
    let mut facts = FileFacts {
        path: candidate.path.clone(),
        size: candidate.size,
        included: candidate.forced,
        ..Default::default()
    };
    let text = match read_source(candidate, max_bytes) {
        Ok(text) => text,
        Err(reason) => {
            facts.language = Language::from_path(&candidate.path)
                .map(|l| l.name().to_owned())
                .unwrap_or_default();
            facts.skipped = reason;
            return (facts, None);
        }
    };
    facts.content_hash = content_hash(text.as_bytes());
    facts.lines = text.lines().count() as u32;
    if manifest::is_manifest(&candidate.path) {
        facts.language = "manifest".into();
        facts.dependencies = manifest::dependencies(&candidate.path, &text);
        return (facts, Some(false));
    }
    if candidate.path.ends_with(".md") {
        facts.language = "markdown".into();
        facts.sections = markdown::sections(&text);
        return (facts, Some(false));
    }
    let Some(language) = Language::for_source(&candidate.path, &text) else {
        return (facts, None);
    };
    facts.language = language.name().to_owned();
    let parser = parsers.entry(language).or_insert_with(|| {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&language.grammar())
            .expect("grammar version matches tree-sitter");
        parser
    });
    let Some(tree) = parser.parse(&text, None) else {
        facts.skipped = "the parser gave up".into();
        return (facts, None);
    };
    let had_errors = tree.root_node().has_error();
    lang::extract(language, &tree, &text, &mut facts, layout);
    (facts, Some(had_errors))
}

fn layout_of(root: &Path, candidates: &[Candidate]) -> Layout {
    let mut layout = Layout::default();
    for candidate in candidates {
        layout.files.insert(candidate.path.clone());
        let name = layout::file_name(&candidate.path);
        if name == "go.mod" || name == "Cargo.toml" {
            let Ok(text) = std::fs::read_to_string(root.join(&candidate.path)) else {
                continue;
            };
            let dir = layout::parent_dir(&candidate.path).to_owned();
            if name == "go.mod" {
                if let Some(module) = manifest::go_module(&text) {
                    layout.go_modules.insert(dir, module);
                }
            } else if let Some(crate_name) = manifest::cargo_crate(&text) {
                layout.rust_crates.insert(dir, crate_name);
            }
        }
    }
    layout
}

/// The version of resolution (`resolve.rs`): bump it whenever a change alters the edges
/// or nodes built from unchanged facts, so the next run rebuilds every owner. Extraction
/// is versioned per language and per file instead (`lang::extractor_version`).
const RESOLVER_VERSION: u32 = 13;

/// A hash of what qualified names depend on besides the file itself (and the resolver
/// version).
fn layout_hash(layout: &Layout) -> String {
    let mut text = format!("resolver {RESOLVER_VERSION}\n");
    for (dir, module) in &layout.go_modules {
        text.push_str(&format!("go {dir} {module}\n"));
    }
    for (dir, name) in &layout.rust_crates {
        text.push_str(&format!("rust {dir} {name}\n"));
    }
    let packages: BTreeSet<&String> = layout
        .files
        .iter()
        .filter(|f| f.ends_with("__init__.py"))
        .collect();
    for package in packages {
        text.push_str(&format!("py {package}\n"));
    }
    text.push_str(&format!("facts-version {}\n", FACTS_VERSION));
    content_hash(text.as_bytes())
}

/// Bump when extraction changes, so caches from older builds are not reused.
const FACTS_VERSION: u32 = 1;

fn git_commit(root: &Path) -> String {
    codectx_core::checkout::head(root)
        .map(|h| h.commit)
        .unwrap_or_default()
}

fn count_skipped(report: &mut IndexReport, files: &[FileFacts]) {
    for facts in files.iter().filter(|f| !f.skipped.is_empty()) {
        if facts.skipped == GENERATED {
            report.generated += 1;
        } else {
            report.skipped.push(Skipped {
                path: facts.path.clone(),
                reason: facts.skipped.clone(),
            });
        }
    }
}

/// The part of a symbol other files' resolution depends on.
fn symbol_key(symbol: &facts::SymbolFact) -> String {
    format!(
        "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{:?}\u{1}{:?}\u{1}{:?}\u{1}{}",
        symbol.kind,
        symbol.qualified_name,
        symbol.discriminator,
        symbol.signature,
        symbol.owner_type,
        symbol.bases,
        symbol.required_methods,
        symbol.embedded,
        symbol.test
    )
}

const SEGMENT_SEPARATORS: [char; 3] = ['.', ':', '/'];

fn last_segment(text: &str) -> &str {
    text.rsplit(SEGMENT_SEPARATORS).next().unwrap_or(text)
}

/// `last_segment(text) == name` for a `name` without separators, without splitting
/// `text` (a suffix comparison: the affected-files search asks it of every call,
/// reference and binding of the repository).
fn ends_with_segment(text: &str, name: &str) -> bool {
    text.strip_suffix(name)
        .is_some_and(|head| head.is_empty() || head.ends_with(SEGMENT_SEPARATORS))
}

/// Files whose owners a change can alter: the changed files themselves, and every file
/// that mentions by name a symbol that appeared, disappeared or changed its interface
/// (signature, kind, bases, required methods, test flag). A body-only edit affects only
/// its own file: ids do not depend on line numbers.
fn affected_files(
    all: &[FileFacts],
    parsed: &std::collections::HashSet<String>,
    previous: &HashMap<String, FileFacts>,
) -> std::collections::HashSet<String> {
    use std::collections::HashSet;
    let mut affected: HashSet<String> = parsed.clone();
    let mut names: HashSet<String> = HashSet::new();
    let now: HashMap<&str, &FileFacts> = all
        .iter()
        .filter(|f| parsed.contains(&f.path))
        .map(|f| (f.path.as_str(), f))
        .collect();
    let mut touched: Vec<&str> = previous.keys().map(String::as_str).collect();
    touched.extend(parsed.iter().map(String::as_str));
    let touched_paths: Vec<String> = touched.iter().map(|p| (*p).to_owned()).collect();
    for path in touched {
        let before: HashMap<String, &facts::SymbolFact> = previous
            .get(path)
            .map(|f| f.symbols.iter().map(|s| (symbol_key(s), s)).collect())
            .unwrap_or_default();
        let after: HashMap<String, &facts::SymbolFact> = now
            .get(path)
            .map(|f| f.symbols.iter().map(|s| (symbol_key(s), s)).collect())
            .unwrap_or_default();
        for (key, symbol) in before.iter().chain(after.iter()) {
            if before.contains_key(key) != after.contains_key(key) {
                names.insert(symbol.name.clone());
                names.extend(symbol.required_methods.iter().cloned());
            }
        }
    }
    // Tests named after a counterpart file (test_heapq.py for heapq.py) resolve by
    // convention against it: a counterpart that appears, goes or changes affects them.
    let subjects: HashSet<String> = touched_paths
        .iter()
        .map(|p| codectx_graph::query::file_subject(p))
        .collect();
    for file in all {
        if !affected.contains(&file.path)
            && resolve::is_test_file(file)
            && subjects.contains(&codectx_graph::query::file_subject(&file.path))
        {
            affected.insert(file.path.clone());
        }
    }
    if names.is_empty() {
        return affected;
    }
    // Every call, reference, binding and symbol of every file is looked up: a few names
    // are compared directly (hashing each text cost more than the comparisons).
    let few: Vec<&str> = names.iter().map(String::as_str).collect();
    let many: rustc_hash::FxHashSet<&str> = few.iter().copied().collect();
    let named = |text: &str| {
        if few.len() <= 8 {
            few.contains(&text)
        } else {
            many.contains(text)
        }
    };
    // A name with a separator is never a last segment.
    let segments: Vec<&str> = few
        .iter()
        .copied()
        .filter(|n| !n.contains(SEGMENT_SEPARATORS))
        .collect();
    let hit = |text: &str| {
        if few.len() <= 8 {
            segments.iter().any(|n| ends_with_segment(text, n))
        } else {
            many.contains(last_segment(text))
        }
    };
    // A test's convention names are its name's parts with the first letter in either
    // case, so an ASCII name can only be one of them when the test's name holds the rest
    // of it (other names are always checked: case mapping may change their length).
    let may_be_convention = |test: &str| {
        few.iter()
            .any(|n| !n.is_ascii() || n.is_empty() || test.contains(&n[1..]))
    };
    for file in all {
        if affected.contains(&file.path) {
            continue;
        }
        let mentions = file.calls.iter().any(|c| hit(&c.name) || hit(&c.receiver))
            || file.references.iter().any(|r| hit(&r.name))
            || file.bindings.iter().any(|b| {
                hit(&lang::clean_type(b.type_name.trim_start_matches("call:")))
                    || hit(b.type_name.trim_start_matches("call:"))
            })
            || file.symbols.iter().any(|s| {
                named(&s.name)
                    || (s.test
                        && may_be_convention(&s.name)
                        && resolve::convention_names(&s.name).iter().any(|n| named(n)))
                    || s.bases.iter().any(|b| hit(&lang::clean_type(b)))
                    || s.embedded.iter().any(|e| hit(e))
            })
            || file.impls.iter().any(|i| {
                hit(&lang::clean_type(&i.type_name)) || hit(&lang::clean_type(&i.trait_name))
            })
            || file
                .sections
                .iter()
                .any(|s| s.mentions.iter().any(|m| hit(m.trim_end_matches("()"))))
            || file.imports.iter().any(|i| hit(&i.target));
        if mentions {
            affected.insert(file.path.clone());
        }
    }
    affected
}

/// The whole graph of a checkout, built in memory without a store or a cache: every file
/// parsed, every owner resolved. For offline analysis (the SCIP oracle benchmark) and
/// tests; `index` is the incremental path that writes a store.
pub fn snapshot(options: &IndexOptions) -> Result<Vec<codectx_graph::OwnerGraph>, Error> {
    let root = options.root.canonicalize().map_err(|e| {
        Error::invalid_argument(
            "path",
            format!("cannot index {}: {e}", options.root.display()),
        )
    })?;
    let policy = Policy::load(&root)?;
    let (candidates, _) = walk(&root, &policy)?;
    let layout = layout_of(&root, &candidates);
    let to_parse: Vec<&Candidate> = candidates.iter().collect();
    let report = Mutex::new(IndexReport::default());
    let mut all = parse_all(&to_parse, &layout, options, &report);
    all.sort_by(|a, b| a.path.cmp(&b.path));
    let graph_id = graph_id_for(&options.owner, &options.name);
    Ok(resolve::build(
        &graph_id,
        &options.name,
        &all,
        resolve::BuildScope {
            threads: worker_threads(options.threads),
            ..Default::default()
        },
    )
    .owners)
}

/// Indexes `options.root` into `store` as the graph of `options.name`.
pub async fn index(store: &dyn GraphStore, options: &IndexOptions) -> Result<IndexReport, Error> {
    index_with(store, options, None).await
}

/// [`index`], keeping every file's facts in `warm` for this process's next run of the
/// same graph (a watcher re-indexing after edits reads no cached facts back).
pub async fn index_with(
    store: &dyn GraphStore,
    options: &IndexOptions,
    warm: Option<&Warm>,
) -> Result<IndexReport, Error> {
    let started = Instant::now();
    let root = options.root.canonicalize().map_err(|e| {
        Error::invalid_argument(
            "path",
            format!("cannot index {}: {e}", options.root.display()),
        )
    })?;
    if !root.is_dir() {
        return Err(Error::invalid_argument(
            "path",
            format!("{} is not a directory", root.display()),
        ));
    }
    crate::validate_name(&options.name)?;
    if !ids::has_prefix(&options.owner, ids::prefix::ORGANISATION) {
        return Err(Error::invalid_argument(
            "owner",
            format!(
                "{:?} is not an organisation id (org_...): every graph belongs to the organisation that indexed it",
                options.owner
            ),
        ));
    }
    let graph_id = graph_id_for(&options.owner, &options.name);
    // A malformed policy stops the run before anything is written: the graph keeps
    // what the last good policy produced.
    let policy = Policy::load(&root)?;
    let policy_present = root.join(policy::POLICY_FILE).is_file();
    let commit = git_commit(&root);
    let walk_root = root.clone();
    let walk_policy = policy.clone();
    let (candidates, effects) = tokio::task::spawn_blocking(move || walk(&walk_root, &walk_policy))
        .await
        .map_err(|e| Error::internal(format!("walker: {e}")))??;
    let policy_report = |files: &[FileFacts], effects: Effects| PolicyReport {
        present: policy_present,
        fingerprint: policy.fingerprint().to_owned(),
        rules: effects.report(&policy),
        annotations: annotation_effects(&policy, files),
    };
    let layout = layout_of(&root, &candidates);
    let layout_hash = layout_hash(&layout);

    let mut cache = Cache::open(&options.cache)?;
    if cache.meta(&graph_id, "layout")?.as_deref() != Some(layout_hash.as_str()) {
        cache.clear(&graph_id)?;
    }
    let held = warm.and_then(|w| w.take(&graph_id, &layout_hash));
    let from_memory = held.is_some();
    let mut cached = match held {
        Some(files) => files,
        None => cache.load(&graph_id)?,
    };
    tracing::debug!(elapsed = ?started.elapsed(), cached = cached.len(), from_memory, "walked and loaded the cache");
    // What each file is on disk now, for the facts kept in memory after the run (with
    // their symbols' ids, aligned with `all`; empty where unknown).
    let keep = |all: Vec<FileFacts>, symbol_ids: Vec<Vec<String>>| {
        if let Some(warm) = warm {
            let stats: HashMap<&str, (u64, i64)> = candidates
                .iter()
                .map(|c| (c.path.as_str(), (c.size, c.modified_ns)))
                .collect();
            let files = all
                .into_iter()
                .zip(
                    symbol_ids
                        .into_iter()
                        .chain(std::iter::repeat_with(Vec::new)),
                )
                .filter_map(|(facts, symbol_ids)| {
                    let (size, modified_ns) = *stats.get(facts.path.as_str())?;
                    Some((
                        facts.path.clone(),
                        CachedFile {
                            size,
                            modified_ns,
                            facts,
                            symbol_ids,
                        },
                    ))
                })
                .collect();
            warm.put(&graph_id, &layout_hash, files);
        }
    };

    // Decide what to parse: unchanged size and mtime reuse facts without reading.
    let cache_was_empty = cached.is_empty();
    let mut reused: Vec<FileFacts> = Vec::new();
    // Symbol ids the facts kept in memory came with, by path.
    let mut known_ids: HashMap<String, Vec<String>> = HashMap::new();
    let mut reuse = |path: &str, entry: CachedFile| {
        if !entry.symbol_ids.is_empty() {
            known_ids.insert(path.to_owned(), entry.symbol_ids);
        }
        reused.push(entry.facts);
    };
    let mut to_parse: Vec<&Candidate> = Vec::new();
    // What re-parsed files looked like before, to tell which other files they affect.
    let mut previous: HashMap<String, FileFacts> = HashMap::new();
    let mut refreshed = 0;
    for candidate in &candidates {
        match cached.remove(&candidate.path) {
            // Read by an extractor that has changed since: parsed again.
            Some(entry)
                if entry.facts.extractor != lang::extractor_version(&entry.facts.language) =>
            {
                refreshed += 1;
                previous.insert(candidate.path.clone(), entry.facts);
                to_parse.push(candidate)
            }
            // An include rule came or went: default skips apply differently now.
            Some(entry) if entry.facts.included != candidate.forced => {
                previous.insert(candidate.path.clone(), entry.facts);
                to_parse.push(candidate)
            }
            Some(entry)
                if entry.size == candidate.size && entry.modified_ns == candidate.modified_ns =>
            {
                reuse(&candidate.path, entry)
            }
            Some(entry) => {
                // Touched but maybe unchanged: compare content hashes.
                match std::fs::read(&candidate.absolute) {
                    Ok(bytes)
                        if content_hash(&bytes) == entry.facts.content_hash
                            && entry.facts.skipped.is_empty() =>
                    {
                        reuse(&candidate.path, entry)
                    }
                    _ => {
                        previous.insert(candidate.path.clone(), entry.facts);
                        to_parse.push(candidate)
                    }
                }
            }
            None => to_parse.push(candidate),
        }
    }
    let removed_paths: Vec<String> = cached.keys().cloned().collect();
    previous.extend(cached.into_iter().map(|(path, entry)| (path, entry.facts)));

    // Nothing changed on disk, and the store still holds what the last run wrote under
    // the same policy, with no change pending: done.
    if to_parse.is_empty() && removed_paths.is_empty() {
        let written = cache.meta(&graph_id, "version")?;
        let stored = store.repository(&graph_id).await?;
        if let (Some(written), Some(stored)) = (written, stored)
            && written == stored.version
            && stored.root == root.display().to_string()
            && stored.policy_fingerprint == policy.fingerprint()
            && stored.commit == commit
            && stored.dirty_since == 0
        {
            let mut report = IndexReport {
                graph_id: graph_id.clone(),
                commit: commit.clone(),
                files: reused.len(),
                reused: reused.len(),
                ..Default::default()
            };
            count_skipped(&mut report, &reused);
            report.symbols = reused.iter().map(|f| f.symbols.len()).sum();
            report.policy = policy_report(&reused, effects);
            report.facts_from_memory = from_memory;
            let symbol_ids = reused
                .iter()
                .map(|f| known_ids.remove(&f.path).unwrap_or_default())
                .collect();
            keep(reused, symbol_ids);
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
    }

    let report = Mutex::new(IndexReport {
        graph_id: graph_id.clone(),
        ..Default::default()
    });
    let parsed = parse_all(&to_parse, &layout, options, &report);
    tracing::debug!(elapsed = ?started.elapsed(), parsed = parsed.len(), "parsed");

    // What the disk cache gets for each parsed file: encoded from `all` once the graph
    // is written (the facts are not copied).
    let changed_files: Vec<(String, u64, i64)> = to_parse
        .iter()
        .map(|c| (c.path.clone(), c.size, c.modified_ns))
        .collect();
    let parsed_paths: std::collections::HashSet<String> =
        parsed.iter().map(|f| f.path.clone()).collect();
    let mut all: Vec<FileFacts> = reused;
    let reused_count = all.len();
    all.extend(parsed);
    all.sort_by(|a, b| a.path.cmp(&b.path));

    // Rebuild only the owners a change can affect, when the store holds the others.
    let stored = store.owner_hashes(&graph_id).await?;
    let mut scope = resolve::BuildScope {
        symbol_ids: known_ids,
        threads: worker_threads(options.threads),
        ..Default::default()
    };
    if !cache_was_empty {
        let affected = affected_files(&all, &parsed_paths, &previous);
        let complete = all
            .iter()
            .all(|f| affected.contains(&f.path) || stored.contains_key(&f.path))
            && stored.contains_key(resolve::REPOSITORY_OWNER);
        if complete {
            scope.cached_externals = cache.load_externals(&graph_id)?;
            if all
                .iter()
                .all(|f| affected.contains(&f.path) || scope.cached_externals.contains_key(&f.path))
            {
                tracing::debug!(
                    affected = affected.len(),
                    files = all.len(),
                    "partial rebuild"
                );
                scope.affected = Some(affected);
            } else {
                scope.cached_externals.clear();
            }
        }
    }

    let name = options.name.clone();
    let graph = graph_id.clone();
    let (all, mut build) = tokio::task::spawn_blocking(move || {
        let build = resolve::build(&graph, &name, &all, scope);
        (all, build)
    })
    .await
    .map_err(|e| Error::internal(format!("resolver: {e}")))?;
    tracing::debug!(elapsed = ?started.elapsed(), owners = build.owners.len(), "resolved");

    let current: std::collections::HashSet<&str> = all
        .iter()
        .map(|f| f.path.as_str())
        .chain(std::iter::once(resolve::REPOSITORY_OWNER))
        .collect();
    let removed_owners: Vec<String> = stored
        .keys()
        .filter(|o| !current.contains(o.as_str()))
        .cloned()
        .collect();
    // Every owner's hash and edge count, before the changed owners move to the store.
    let built: Vec<(String, String)> = build
        .owners
        .iter()
        .map(|o| (o.owner.clone(), o.hash.clone()))
        .collect();
    let edges_built: usize = build.owners.iter().map(|o| o.edges.len()).sum();
    let symbol_ids = std::mem::take(&mut build.symbol_ids);
    let changed: Vec<_> = std::mem::take(&mut build.owners)
        .into_iter()
        .filter(|o| stored.get(&o.owner) != Some(&o.hash))
        .collect();
    let changed_count = changed.len();

    // The version covers every owner: rebuilt ones by their new hash, others as stored.
    let mut hashes: BTreeMap<&str, &str> = stored
        .iter()
        .filter(|(owner, _)| current.contains(owner.as_str()))
        .map(|(owner, hash)| (owner.as_str(), hash.as_str()))
        .collect();
    for (owner, hash) in &built {
        hashes.insert(owner.as_str(), hash.as_str());
    }
    // Annotations are read with the graph: a policy change is a content change.
    let mut version_text = format!("policy\u{1}{}\n", policy.fingerprint());
    for (owner, hash) in &hashes {
        version_text.push_str(owner);
        version_text.push('\u{1}');
        version_text.push_str(hash);
        version_text.push('\n');
    }
    let version = content_hash(version_text.as_bytes());
    drop(current);

    // The cache records this run while the graph is written (another file, on another
    // core), and commits only once the graph write has succeeded.
    let all = std::sync::Arc::new(all);
    let (written_tx, written_rx) = std::sync::mpsc::channel::<bool>();
    let recorder = {
        let all = all.clone();
        let graph_id = graph_id.clone();
        let removed = removed_paths.clone();
        let externals = std::mem::take(&mut build.externals);
        let meta = [
            ("layout", layout_hash.clone()),
            ("version", version.clone()),
        ];
        tokio::task::spawn_blocking(move || {
            let changed_refs: Vec<(&str, u64, i64, &FileFacts)> = changed_files
                .iter()
                .filter_map(|(path, size, modified_ns)| {
                    let at = all.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
                    Some((path.as_str(), *size, *modified_ns, &all[at]))
                })
                .collect();
            let meta: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (*k, v.as_str())).collect();
            cache.record(
                &graph_id,
                &changed_refs,
                &removed,
                &externals,
                &meta,
                || written_rx.recv().unwrap_or(false),
            )
        })
    };
    let written = async {
        // One call: edges may point at nodes of any owner in the batch (backends batch
        // internally).
        if !changed.is_empty() || !removed_owners.is_empty() {
            store
                .replace_owners(&graph_id, &removed_owners, changed)
                .await?;
        }
        tracing::debug!(elapsed = ?started.elapsed(), owners = changed_count, "written");
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        store
            .put_repository(&RepositoryInfo {
                graph_id: graph_id.clone(),
                name: options.name.clone(),
                root: root.display().to_string(),
                commit: commit.clone(),
                indexed_at: now,
                version: version.clone(),
                policy: if policy.is_empty() {
                    String::new()
                } else {
                    policy.to_json()
                },
                policy_fingerprint: policy.fingerprint().to_owned(),
                dirty_since: 0,
            })
            .await
    }
    .await;
    // A dropped sender reads as a failed write: the cache rolls back.
    let _ = written_tx.send(written.is_ok());
    let recorded = recorder
        .await
        .map_err(|e| Error::internal(format!("index cache: {e}")));
    written?;
    recorded??;
    let all = std::sync::Arc::try_unwrap(all).unwrap_or_else(|shared| (*shared).clone());

    let mut report = report
        .into_inner()
        .map_err(|_| Error::internal("report lock poisoned"))?;
    report.files = all.len();
    for facts in all.iter().filter(|f| !f.skipped.is_empty()) {
        if facts.skipped == GENERATED {
            report.generated += 1;
        } else {
            report.skipped.push(Skipped {
                path: facts.path.clone(),
                reason: facts.skipped.clone(),
            });
        }
    }
    report.reused = reused_count;
    report.removed = removed_paths.len();
    report.symbols = all.iter().map(|f| f.symbols.len()).sum();
    report.edges = edges_built;
    report.owners_written = changed_count + removed_owners.len();
    report.refreshed = refreshed;
    report.commit = commit;
    report.policy = policy_report(&all, effects);
    report.facts_from_memory = from_memory;
    keep(all, symbol_ids);
    report.seconds = started.elapsed().as_secs_f64();
    for skipped in &report.skipped {
        tracing::warn!(path = %skipped.path, reason = %skipped.reason, "not parsed");
    }
    Ok(report)
}

/// Threads for the parser and the resolver: `requested`, or one per core for 0.
fn worker_threads(requested: usize) -> usize {
    if requested == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    } else {
        requested
    }
}

fn parse_all(
    to_parse: &[&Candidate],
    layout: &Layout,
    options: &IndexOptions,
    report: &Mutex<IndexReport>,
) -> Vec<FileFacts> {
    let threads = worker_threads(options.threads).min(to_parse.len().max(1));
    let progress = if options.progress && to_parse.len() > 200 {
        let bar = indicatif::ProgressBar::new(to_parse.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} parsing {pos}/{len} files [{bar:30}] {per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileFacts>>> = Mutex::new(vec![None; to_parse.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut parsers = HashMap::new();
                loop {
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    let Some(candidate) = to_parse.get(at) else {
                        break;
                    };
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        parse_file(candidate, layout, options.max_file_bytes, &mut parsers)
                    }));
                    let (mut facts, status) = match outcome {
                        Ok(result) => result,
                        Err(_) => {
                            parsers.clear();
                            let facts = FileFacts {
                                path: candidate.path.clone(),
                                size: candidate.size,
                                skipped: "the extractor failed on this file".into(),
                                ..Default::default()
                            };
                            (facts, None)
                        }
                    };
                    facts.extractor = lang::extractor_version(&facts.language).to_owned();
                    {
                        let mut report = report.lock().expect("report lock");
                        match status {
                            None => {}
                            Some(errors) => {
                                report.parsed += 1;
                                if errors {
                                    report.syntax_errors += 1;
                                }
                            }
                        }
                    }
                    results.lock().expect("results lock")[at] = Some(facts);
                    if let Some(bar) = &progress {
                        bar.inc(1);
                    }
                }
            });
        }
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .flatten()
        .collect()
}

/// Repository keys: 1-200 printable characters.
pub fn validate_name(name: &str) -> Result<(), Error> {
    if name.trim().is_empty() || name.chars().count() > 128 || name.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            "name",
            "the repository name must be 1-128 printable characters (the limit of authz's repository entries)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{ends_with_segment, last_segment};

    #[test]
    fn a_suffix_match_is_the_last_segment_match() {
        let texts = [
            "",
            ".",
            "a",
            "a.b",
            "x.dumps",
            "json.dumps",
            "dumps",
            "undumps",
            "a::b::dumps",
            "pkg/dumps",
            "dumps.",
            "a.b:",
            "é.dumps",
            "xé",
        ];
        let names = ["", "dumps", "b", "a", "é", "xé", "s"];
        for text in texts {
            for name in names {
                assert_eq!(
                    ends_with_segment(text, name),
                    last_segment(text) == name,
                    "{text:?} / {name:?}"
                );
            }
        }
    }

    #[test]
    fn watchers_ignore_build_output_hidden_paths_and_unread_files() {
        for path in [
            "src/a.py",
            "README.md",
            "go.mod",
            "bin/tool",
            ".codectx.yaml",
            "pkg/.gitignore",
            "deep/dir",
        ] {
            assert!(super::may_affect_index(path), "{path}");
        }
        for path in [
            ".git/index",
            ".codectx/graph.db",
            "target/debug/x.rs",
            "node_modules/a/index.js",
            "src/.a.py.swp",
            "data/graph.db-wal",
            "notes.txt",
        ] {
            assert!(!super::may_affect_index(path), "{path}");
        }
    }
}
