//! The embedded backend: cosine search over normalized vectors (exact by default; by
//! choice, the nearest lists of a large scope only: [`Options`], ADR 0018), persisted in one
//! SQLite file (`synchronous = FULL`: a write acknowledged is on disk). Memory holds each
//! vector's 8-bit codes (a quarter of its floats' bytes), which prune the scan; the
//! floats of the few rows that can still be in the answer are read back from a scratch
//! file ([`Floats`]) (`scan`). So a graph's code vectors cost about 450 bytes each in
//! memory instead of 1.9 KiB (384 dimensions): 150 MB less for 100k symbols, and the
//! floats sit in the page cache, which the kernel can reclaim.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use codectx_errors::Error;
use rusqlite::{Connection, params};

use crate::{CollectionKey, Hit, VectorScope, VectorStore, ivf, scan};

pub use crate::ivf::EXACT_UP_TO;

/// One list of a scope's vectors as 8-bit codes, contiguous for cache-friendly scans
/// (`scan`: the codes prune; the floats, read back from [`Floats`], score).
#[derive(Default)]
struct List {
    ids: Vec<String>,
    /// Per row: where its floats are in [`Floats`].
    offsets: Vec<u64>,
    /// `ids.len() × dimension` codes, row by row, and per row their scale, residual, norm.
    codes: Vec<i8>,
    scales: Vec<f32>,
    residuals: Vec<f32>,
    norms: Vec<f32>,
}

impl List {
    fn rows(&self, dimension: usize) -> scan::Rows<'_> {
        scan::Rows {
            dimension,
            codes: &self.codes,
            scales: &self.scales,
            residuals: &self.residuals,
            norms: &self.norms,
        }
    }

    fn push(&mut self, id: String, coded: &scan::Codes, offset: u64) {
        self.ids.push(id);
        self.offsets.push(offset);
        self.codes.extend_from_slice(&coded.codes);
        self.scales.push(coded.scale);
        self.residuals.push(coded.residual);
        self.norms.push(coded.norm);
    }

    fn set(&mut self, at: usize, coded: &scan::Codes, offset: u64) {
        let dimension = coded.codes.len();
        self.offsets[at] = offset;
        self.codes[at * dimension..(at + 1) * dimension].copy_from_slice(&coded.codes);
        self.scales[at] = coded.scale;
        self.residuals[at] = coded.residual;
        self.norms[at] = coded.norm;
    }

    /// Removes row `at` by moving the last row into its place; returns the moved row's
    /// id, if one moved.
    fn swap_remove(&mut self, at: usize, dimension: usize) -> Option<&str> {
        let last = self.ids.len() - 1;
        if at != last {
            self.codes
                .copy_within(last * dimension..(last + 1) * dimension, at * dimension);
        }
        self.codes.truncate(last * dimension);
        self.ids.swap_remove(at);
        self.offsets.swap_remove(at);
        self.scales.swap_remove(at);
        self.residuals.swap_remove(at);
        self.norms.swap_remove(at);
        (at != last).then(|| self.ids[at].as_str())
    }
}

/// One scope's vectors: one list scanned whole while the scope holds at most
/// [`ivf::EXACT_UP_TO`] rows, else lists by learned centroids (ADR 0018).
struct Namespace {
    dimension: usize,
    /// [`Options::probe_share`]: lists are learned only below 1.
    probe_share: f64,
    lists: Vec<List>,
    /// Entity id → (list, row).
    positions: HashMap<String, (usize, usize)>,
    centroids: Option<ivf::Centroids>,
    /// Rows the centroids were learned at.
    trained_at: usize,
}

/// Which rows a search reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Probe {
    /// What [`VectorStore::nearest`] reads: the lists nearest the query holding at least
    /// [`Options::probe_share`] of the rows, or every row of a scope without lists.
    Index,
    /// The lists nearest the query holding at least this share of the rows (for
    /// measuring other shares than the configured one).
    Share(f64),
    /// Every row: the exact answer, the reference the index is measured against.
    Every,
}

/// How the store searches (ADR 0018).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The least share of a large scope's rows a search reads, in (0, 1]. 1 (the
    /// default): every row, exact answers, and no lists are learned. Below 1, a scope of
    /// more than [`EXACT_UP_TO`] rows is grouped into lists by learned centroids and a
    /// search reads the lists nearest the query until they hold this share of the rows:
    /// approximate answers (`codectx bench recall` measures how approximate).
    pub probe_share: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { probe_share: 1.0 }
    }
}

impl Options {
    /// Refuses a share outside (0, 1].
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.probe_share > 0.0 && self.probe_share <= 1.0) {
            return Err(Error::invalid_argument(
                "vectors.embedded_probe_share",
                format!(
                    "vectors.embedded_probe_share = {} is not a share of the rows: use a number in (0, 1]; 1 searches every row (exact)",
                    self.probe_share
                ),
            ));
        }
        Ok(())
    }
}

/// A search's answer and how many rows it read.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub hits: Vec<Hit>,
    pub rows_read: usize,
}

/// The size of one scope of a collection, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSize {
    pub collection: String,
    pub scope: VectorScope,
    pub rows: usize,
    /// 1 for a scope scanned whole.
    pub lists: usize,
}

impl Namespace {
    fn new(dimension: usize, options: Options) -> Namespace {
        Namespace {
            dimension,
            probe_share: options.probe_share,
            lists: vec![List::default()],
            positions: HashMap::new(),
            centroids: None,
            trained_at: 0,
        }
    }

    fn len(&self) -> usize {
        self.positions.len()
    }

    fn insert(&mut self, id: String, vector: &[f32], offset: u64) {
        let coded = scan::quantize(vector);
        let list = self
            .centroids
            .as_ref()
            .map_or(0, |centroids| centroids.assign(&coded.codes));
        match self.positions.get(&id).copied() {
            Some((at_list, at)) if at_list == list => self.lists[list].set(at, &coded, offset),
            Some(_) => {
                self.remove(&id);
                self.push(list, id, &coded, offset);
            }
            None => self.push(list, id, &coded, offset),
        }
    }

    fn push(&mut self, list: usize, id: String, coded: &scan::Codes, offset: u64) {
        self.positions
            .insert(id.clone(), (list, self.lists[list].ids.len()));
        self.lists[list].push(id, coded, offset);
    }

    fn remove(&mut self, id: &str) {
        let Some((list, at)) = self.positions.remove(id) else {
            return;
        };
        if let Some(moved) = self.lists[list].swap_remove(at, self.dimension) {
            let moved = moved.to_owned();
            self.positions.insert(moved, (list, at));
        }
    }

    /// Learns centroids and regroups the rows when the scope has outgrown scanning whole
    /// or its lists (twice the rows they were learned at, or a quarter), and goes back to
    /// one list when it has shrunk to half of [`ivf::EXACT_UP_TO`].
    fn reorganize(&mut self) {
        let rows = self.len();
        let indexed = self.centroids.is_some();
        if self.probe_share >= 1.0 {
            return;
        }
        if indexed && rows <= ivf::EXACT_UP_TO / 2 {
            self.centroids = None;
            self.trained_at = 0;
            self.regroup();
            return;
        }
        let outgrown = rows > ivf::EXACT_UP_TO
            && (!indexed || rows >= 2 * self.trained_at || 4 * rows <= self.trained_at);
        if !outgrown {
            return;
        }
        let started = std::time::Instant::now();
        let order: Vec<(usize, usize)> = self
            .lists
            .iter()
            .enumerate()
            .flat_map(|(list, rows)| (0..rows.ids.len()).map(move |at| (list, at)))
            .collect();
        let dimension = self.dimension;
        let lists = &self.lists;
        let centroids = ivf::Centroids::train(dimension, order.len(), ivf::lists_for(rows), |i| {
            let (list, at) = order[i];
            let list = &lists[list];
            (
                &list.codes[at * dimension..(at + 1) * dimension],
                list.scales[at],
            )
        });
        tracing::debug!(
            rows,
            lists = centroids.len(),
            took_ms = started.elapsed().as_millis() as u64,
            "vector store (embedded): learned a scope's lists"
        );
        self.centroids = Some(centroids);
        self.trained_at = rows;
        self.regroup();
    }

    /// Puts every row in its list by the current centroids (one list without them).
    fn regroup(&mut self) {
        let count = self.centroids.as_ref().map_or(1, ivf::Centroids::len);
        let old = std::mem::replace(
            &mut self.lists,
            (0..count).map(|_| List::default()).collect(),
        );
        self.positions.clear();
        let dimension = self.dimension;
        for list in old {
            for (at, id) in list.ids.into_iter().enumerate() {
                let coded = scan::Codes {
                    codes: list.codes[at * dimension..(at + 1) * dimension].to_vec(),
                    scale: list.scales[at],
                    residual: list.residuals[at],
                    norm: list.norms[at],
                };
                let to = self
                    .centroids
                    .as_ref()
                    .map_or(0, |centroids| centroids.assign(&coded.codes));
                self.push(to, id, &coded, list.offsets[at]);
            }
        }
    }

    /// The lists a search for `coded` reads.
    fn probed(&self, coded: &scan::Codes, probe: Probe) -> Vec<usize> {
        let share = match probe {
            Probe::Index => self.probe_share,
            Probe::Share(share) => share,
            Probe::Every => 1.0,
        };
        let Some(centroids) = self.centroids.as_ref().filter(|_| share < 1.0) else {
            return (0..self.lists.len()).collect();
        };
        let wanted = (self.len() as f64 * share).ceil() as usize;
        let mut read = 0;
        let mut lists = Vec::new();
        for list in centroids.ranked(&coded.codes) {
            if read >= wanted {
                break;
            }
            read += self.lists[list].ids.len();
            lists.push(list);
        }
        lists
    }
}

#[derive(Default)]
struct Memory {
    /// collection → (tenant, namespace) → entity → vector.
    collections: HashMap<String, HashMap<(String, String), Namespace>>,
}

/// The embedded vector store.
#[derive(Clone)]
pub struct EmbeddedVectorStore {
    options: Options,
    connection: Arc<Mutex<Connection>>,
    floats: Arc<Floats>,
    memory: Arc<RwLock<Memory>>,
}

/// Every vector's floats, appended to a scratch file beside the store: written at open
/// from the SQLite file (the truth) and on each upsert, read back by offset for the rows
/// a search scores exactly. The file is unlinked as soon as it is created, so it is this
/// process's alone, needs no recovery, and is gone when the process is. A replaced vector
/// is appended anew (readers holding the old offset still read the old floats); the
/// space is reclaimed at the next open.
struct Floats {
    file: std::fs::File,
    end: AtomicU64,
}

impl Floats {
    fn create(directory: &Path) -> Result<Floats, Error> {
        let file = tempfile::tempfile_in(directory).map_err(|e| {
            Error::internal(format!(
                "vector store (embedded): cannot create a scratch file in {}: {e}",
                directory.display()
            ))
        })?;
        Ok(Floats {
            file,
            end: AtomicU64::new(0),
        })
    }

    /// Appends `bytes` (one or more rows of little-endian floats); returns their offset.
    fn append(&self, bytes: &[u8]) -> Result<u64, Error> {
        let offset = self.end.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.file
            .write_all_at(bytes, offset)
            .map_err(|e| Error::internal(format!("vector store (embedded): scratch write: {e}")))?;
        Ok(offset)
    }

    fn read(&self, offset: u64, dimension: usize) -> Result<Vec<f32>, Error> {
        let mut bytes = vec![0u8; dimension * 4];
        self.file
            .read_exact_at(&mut bytes, offset)
            .map_err(|e| Error::internal(format!("vector store (embedded): scratch read: {e}")))?;
        Ok(from_blob(&bytes))
    }
}

impl std::fmt::Debug for EmbeddedVectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedVectorStore")
            .finish_non_exhaustive()
    }
}

/// Bytes of floats gathered before one write to the scratch file while opening.
const LOAD_BUFFER: usize = 1 << 20;

fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("vector store (embedded): {error}"))
}

fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl EmbeddedVectorStore {
    /// Opens (creating if needed) the store and loads every vector into memory; searches
    /// read every row (exact).
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_with(path, Options::default())
    }

    /// [`open`](Self::open) with search options; learns the lists of every large scope
    /// before it returns when `options.probe_share` is below 1.
    pub fn open_with(path: &Path, options: Options) -> Result<Self, Error> {
        options.validate()?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        let connection = Connection::open(path).map_err(storage)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
                 CREATE TABLE IF NOT EXISTS vectors (
                     collection TEXT NOT NULL, tenant_id TEXT NOT NULL, namespace TEXT NOT NULL,
                     entity_id TEXT NOT NULL, vector BLOB NOT NULL,
                     PRIMARY KEY (collection, tenant_id, namespace, entity_id)
                 ) WITHOUT ROWID;
                 CREATE INDEX IF NOT EXISTS vectors_by_entity ON vectors (tenant_id, namespace, entity_id);",
            )
            .map_err(storage)?;
        let directory = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let floats = Floats::create(directory)?;
        let mut memory = Memory::default();
        {
            let mut statement = connection
                .prepare("SELECT collection, tenant_id, namespace, entity_id, vector FROM vectors")
                .map_err(storage)?;
            let mut rows = statement.query([]).map_err(storage)?;
            // Floats go to the scratch file in large writes.
            let mut pending: Vec<u8> = Vec::with_capacity(LOAD_BUFFER);
            let mut written = 0u64;
            while let Some(row) = rows.next().map_err(storage)? {
                let collection: String = row.get(0).map_err(storage)?;
                let tenant: String = row.get(1).map_err(storage)?;
                let namespace: String = row.get(2).map_err(storage)?;
                let entity: String = row.get(3).map_err(storage)?;
                let blob = row
                    .get_ref(4)
                    .map_err(storage)?
                    .as_blob()
                    .map_err(|e| storage(e.into()))?;
                let offset = written + pending.len() as u64;
                pending.extend_from_slice(blob);
                let dimension = blob.len() / 4;
                memory
                    .collections
                    .entry(collection)
                    .or_default()
                    .entry((tenant, namespace))
                    .or_insert_with(|| Namespace::new(dimension, options))
                    .insert(entity, &from_blob(blob), offset);
                if pending.len() >= LOAD_BUFFER {
                    floats.append(&pending)?;
                    written += pending.len() as u64;
                    pending.clear();
                }
            }
            floats.append(&pending)?;
        }
        for namespace in memory
            .collections
            .values_mut()
            .flat_map(HashMap::values_mut)
        {
            namespace.reorganize();
        }
        Ok(Self {
            options,
            connection: Arc::new(Mutex::new(connection)),
            floats: Arc::new(floats),
            memory: Arc::new(RwLock::new(memory)),
        })
    }

    /// The nearest vectors to `query` in the scope, best first, at most `limit`, reading
    /// the rows `probe` says: [`Probe::Index`] is what [`VectorStore::nearest`] answers,
    /// [`Probe::Every`] the exact answer it is measured against (`codectx bench recall`).
    pub fn search(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        query: &[f32],
        limit: usize,
        probe: Probe,
    ) -> Result<Search, Error> {
        let dimension = collection.dimension as usize;
        let nothing = Search {
            hits: Vec::new(),
            rows_read: 0,
        };
        if query.len() != dimension || limit == 0 {
            return Ok(nothing);
        }
        let name = collection.name();
        let coded = scan::quantize(query);
        // Pass 1 over the codes in memory: the rows that can be in the answer, with where
        // their floats are (an offset stays valid after the lock is released: a replaced
        // vector is appended elsewhere).
        let (candidates, rows_read): (Vec<(String, u64)>, usize) = {
            let memory = self
                .memory
                .read()
                .map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let key = (scope.tenant_id.clone(), scope.namespace.clone());
            let Some(namespace) = memory.collections.get(&name).and_then(|c| c.get(&key)) else {
                return Ok(nothing);
            };
            let lists: Vec<&List> = namespace
                .probed(&coded, probe)
                .into_iter()
                .map(|list| &namespace.lists[list])
                .collect();
            let segments: Vec<scan::Rows<'_>> =
                lists.iter().map(|list| list.rows(dimension)).collect();
            let candidates = scan::candidates(&segments, &coded, limit)
                .into_iter()
                .map(|(list, row)| (lists[list].ids[row].clone(), lists[list].offsets[row]))
                .collect();
            (candidates, lists.iter().map(|list| list.ids.len()).sum())
        };
        // Pass 2 over their floats, read back from the scratch file.
        let floats: Vec<Vec<f32>> = candidates
            .iter()
            .map(|(_, offset)| self.floats.read(*offset, dimension))
            .collect::<Result<_, _>>()?;
        let best = scan::best(
            query,
            limit,
            floats.iter().enumerate().map(|(at, v)| (at, v.as_slice())),
        );
        Ok(Search {
            hits: best
                .into_iter()
                .map(|(score, at)| Hit {
                    entity_id: candidates[at].0.clone(),
                    score,
                    tenant_id: scope.tenant_id.clone(),
                    namespace: scope.namespace.clone(),
                })
                .collect(),
            rows_read,
        })
    }

    /// Every scope of every collection, with its rows and lists, largest first.
    pub fn scopes(&self) -> Result<Vec<ScopeSize>, Error> {
        let memory = self
            .memory
            .read()
            .map_err(|_| Error::internal("vector memory lock poisoned"))?;
        let mut sizes: Vec<ScopeSize> = memory
            .collections
            .iter()
            .flat_map(|(collection, scopes)| {
                scopes
                    .iter()
                    .map(|((tenant_id, namespace), rows)| ScopeSize {
                        collection: collection.clone(),
                        scope: VectorScope {
                            tenant_id: tenant_id.clone(),
                            namespace: namespace.clone(),
                        },
                        rows: rows.len(),
                        lists: rows.lists.len(),
                    })
            })
            .collect();
        sizes.sort_by(|a, b| {
            b.rows
                .cmp(&a.rows)
                .then_with(|| a.collection.cmp(&b.collection))
        });
        Ok(sizes)
    }

    /// The stored vectors of `count` rows of a scope spread evenly over it, in a fixed
    /// order (queries for `codectx bench recall`).
    pub fn sample(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        count: usize,
    ) -> Result<Vec<Vec<f32>>, Error> {
        let dimension = collection.dimension as usize;
        let offsets: Vec<u64> = {
            let memory = self
                .memory
                .read()
                .map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let key = (scope.tenant_id.clone(), scope.namespace.clone());
            let Some(namespace) = memory
                .collections
                .get(&collection.name())
                .and_then(|c| c.get(&key))
            else {
                return Ok(Vec::new());
            };
            let mut ids: Vec<&String> = namespace.positions.keys().collect();
            ids.sort();
            let step = (ids.len() / count.max(1)).max(1);
            ids.iter()
                .step_by(step)
                .take(count)
                .map(|id| {
                    let (list, at) = namespace.positions[*id];
                    namespace.lists[list].offsets[at]
                })
                .collect()
        };
        offsets
            .into_iter()
            .map(|offset| self.floats.read(offset, dimension))
            .collect()
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&EmbeddedVectorStore) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || work(&store))
            .await
            .map_err(|e| Error::internal(format!("vector worker: {e}")))?
    }
}

#[async_trait]
impl VectorStore for EmbeddedVectorStore {
    fn backend(&self) -> &'static str {
        "embedded"
    }

    async fn upsert(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        records: &[(String, Vec<f32>)],
    ) -> Result<usize, Error> {
        let scope = scope.clone();
        let name = collection.name();
        let records = records.to_vec();
        let collection_dimension = collection.dimension as usize;
        let options = self.options;
        self.blocking(move |store| {
            {
                let mut connection = store.connection.lock().map_err(|_| Error::internal("vector store lock poisoned"))?;
                let tx = connection.transaction().map_err(storage)?;
                {
                    let mut put = tx
                        .prepare_cached(
                            "INSERT OR REPLACE INTO vectors (collection, tenant_id, namespace, entity_id, vector) VALUES (?1, ?2, ?3, ?4, ?5)",
                        )
                        .map_err(storage)?;
                    for (id, vector) in &records {
                        put.execute(params![name, scope.tenant_id, scope.namespace, id, to_blob(vector)]).map_err(storage)?;
                    }
                }
                tx.commit().map_err(storage)?;
            }
            let mut offsets = Vec::with_capacity(records.len());
            for (_, vector) in &records {
                offsets.push(store.floats.append(&to_blob(vector))?);
            }
            let mut memory = store.memory.write().map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let dimension = collection_dimension;
            let namespace = memory
                .collections
                .entry(name)
                .or_default()
                .entry((scope.tenant_id, scope.namespace))
                .or_insert_with(|| Namespace::new(dimension, options));
            for ((id, vector), offset) in records.iter().zip(offsets) {
                namespace.insert(id.clone(), vector, offset);
            }
            namespace.reorganize();
            Ok(records.len())
        })
        .await
    }

    async fn delete(&self, scope: &VectorScope, entity_ids: &[String]) -> Result<usize, Error> {
        let scope = scope.clone();
        let ids = entity_ids.to_vec();
        self.blocking(move |store| {
            let mut deleted = 0;
            {
                let mut connection = store.connection.lock().map_err(|_| Error::internal("vector store lock poisoned"))?;
                let tx = connection.transaction().map_err(storage)?;
                {
                    let mut remove = tx
                        .prepare_cached("DELETE FROM vectors WHERE tenant_id = ?1 AND namespace = ?2 AND entity_id = ?3")
                        .map_err(storage)?;
                    for id in &ids {
                        deleted += remove.execute(params![scope.tenant_id, scope.namespace, id]).map_err(storage)?;
                    }
                }
                tx.commit().map_err(storage)?;
            }
            let mut memory = store.memory.write().map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let key = (scope.tenant_id.clone(), scope.namespace.clone());
            for collection in memory.collections.values_mut() {
                if let Some(namespace) = collection.get_mut(&key) {
                    for id in &ids {
                        namespace.remove(id);
                    }
                    namespace.reorganize();
                }
            }
            Ok(deleted)
        })
        .await
    }

    async fn nearest(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<Hit>, Error> {
        Ok(self
            .search(scope, collection, query, limit, Probe::Index)?
            .hits)
    }

    async fn ids(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        prefix: &str,
    ) -> Result<Vec<String>, Error> {
        crate::check_prefix(prefix)?;
        let memory = self
            .memory
            .read()
            .map_err(|_| Error::internal("vector memory lock poisoned"))?;
        let key = (scope.tenant_id.clone(), scope.namespace.clone());
        let ids: Vec<String> = memory
            .collections
            .get(&collection.name())
            .and_then(|c| c.get(&key))
            .map(|namespace| {
                namespace
                    .positions
                    .keys()
                    .filter(|id| id.starts_with(prefix))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if ids.len() > crate::MAX_LISTED_IDS {
            return Err(crate::too_many_ids(prefix));
        }
        Ok(ids)
    }
}
