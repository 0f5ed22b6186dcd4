//! The embedded backend: exact cosine search over normalized vectors, persisted in one
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

use crate::{CollectionKey, Hit, VectorScope, VectorStore, scan};

/// One scope's vectors as 8-bit codes, contiguous for cache-friendly scans (`scan`: the
/// codes prune; the floats, read back from [`Floats`], score).
#[derive(Default)]
struct Namespace {
    ids: Vec<String>,
    positions: HashMap<String, usize>,
    /// Per row: where its floats are in [`Floats`].
    offsets: Vec<u64>,
    /// `ids.len() × dimension` codes, row by row, and per row their scale, residual, norm.
    codes: Vec<i8>,
    scales: Vec<f32>,
    residuals: Vec<f32>,
    norms: Vec<f32>,
}

impl Namespace {
    fn insert(&mut self, id: String, vector: &[f32], offset: u64) {
        let dimension = vector.len();
        let coded = scan::quantize(vector);
        match self.positions.get(&id) {
            Some(&at) => {
                self.offsets[at] = offset;
                self.codes[at * dimension..(at + 1) * dimension].copy_from_slice(&coded.codes);
                self.scales[at] = coded.scale;
                self.residuals[at] = coded.residual;
                self.norms[at] = coded.norm;
            }
            None => {
                self.positions.insert(id.clone(), self.ids.len());
                self.ids.push(id);
                self.offsets.push(offset);
                self.codes.extend_from_slice(&coded.codes);
                self.scales.push(coded.scale);
                self.residuals.push(coded.residual);
                self.norms.push(coded.norm);
            }
        }
    }

    fn remove(&mut self, id: &str, dimension: usize) {
        let Some(at) = self.positions.remove(id) else {
            return;
        };
        let last = self.ids.len() - 1;
        if at != last {
            let moved = self.ids[last].clone();
            self.codes
                .copy_within(last * dimension..(last + 1) * dimension, at * dimension);
            self.ids.swap(at, last);
            self.offsets.swap(at, last);
            self.scales.swap(at, last);
            self.residuals.swap(at, last);
            self.norms.swap(at, last);
            self.positions.insert(moved, at);
        }
        self.ids.pop();
        self.offsets.pop();
        self.scales.pop();
        self.residuals.pop();
        self.norms.pop();
        self.codes.truncate(last * dimension);
    }
}

fn dimension_of(collection: &str) -> usize {
    collection
        .rsplit('_')
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0)
}

#[derive(Default)]
struct Memory {
    /// collection → (tenant, namespace) → entity → vector.
    collections: HashMap<String, HashMap<(String, String), Namespace>>,
}

/// The embedded vector store.
#[derive(Clone)]
pub struct EmbeddedVectorStore {
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
    /// Opens (creating if needed) the store and loads every vector into memory.
    pub fn open(path: &Path) -> Result<Self, Error> {
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
                memory
                    .collections
                    .entry(collection)
                    .or_default()
                    .entry((tenant, namespace))
                    .or_default()
                    .insert(entity, &from_blob(blob), offset);
                if pending.len() >= LOAD_BUFFER {
                    floats.append(&pending)?;
                    written += pending.len() as u64;
                    pending.clear();
                }
            }
            floats.append(&pending)?;
        }
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            floats: Arc::new(floats),
            memory: Arc::new(RwLock::new(memory)),
        })
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
            let namespace = memory.collections.entry(name).or_default().entry((scope.tenant_id, scope.namespace)).or_default();
            for ((id, vector), offset) in records.iter().zip(offsets) {
                namespace.insert(id.clone(), vector, offset);
            }
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
            for (name, collection) in memory.collections.iter_mut() {
                let dimension = dimension_of(name);
                if let Some(namespace) = collection.get_mut(&key) {
                    for id in &ids {
                        namespace.remove(id, dimension);
                    }
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
        let dimension = collection.dimension as usize;
        if query.len() != dimension || limit == 0 {
            return Ok(Vec::new());
        }
        let name = collection.name();
        // Pass 1 over the codes in memory: the rows that can be in the answer, with where
        // their floats are (an offset stays valid after the lock is released: a replaced
        // vector is appended elsewhere).
        let candidates: Vec<(String, u64)> = {
            let memory = self
                .memory
                .read()
                .map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let key = (scope.tenant_id.clone(), scope.namespace.clone());
            let Some(namespace) = memory.collections.get(&name).and_then(|c| c.get(&key)) else {
                return Ok(Vec::new());
            };
            scan::candidates(
                scan::Rows {
                    dimension,
                    codes: &namespace.codes,
                    scales: &namespace.scales,
                    residuals: &namespace.residuals,
                    norms: &namespace.norms,
                },
                query,
                limit,
            )
            .into_iter()
            .map(|row| (namespace.ids[row].clone(), namespace.offsets[row]))
            .collect()
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
        Ok(best
            .into_iter()
            .map(|(score, at)| Hit {
                entity_id: candidates[at].0.clone(),
                score,
                tenant_id: scope.tenant_id.clone(),
                namespace: scope.namespace.clone(),
            })
            .collect())
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
                    .ids
                    .iter()
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
