//! The embedded backend: exact cosine search over normalized vectors held in memory
//! (8-bit codes prune the scan, the floats score: `scan`),
//! persisted in one SQLite file (`synchronous = FULL`: a write acknowledged is on disk).
//! Fine for the 5,000 entities a namespace may hold; larger corpora use Milvus.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use codectx_errors::Error;
use rusqlite::{Connection, params};

use crate::{CollectionKey, Hit, VectorScope, VectorStore, scan};

/// One scope's vectors, contiguous for cache-friendly scans, with their 8-bit codes
/// (`scan`: the codes prune, the floats score).
#[derive(Default)]
struct Namespace {
    ids: Vec<String>,
    positions: HashMap<String, usize>,
    /// `ids.len() × dimension` values, row by row.
    data: Vec<f32>,
    /// `ids.len() × dimension` codes, row by row, and per row their scale, residual, norm.
    codes: Vec<i8>,
    scales: Vec<f32>,
    residuals: Vec<f32>,
    norms: Vec<f32>,
}

impl Namespace {
    fn insert(&mut self, id: String, vector: Vec<f32>) {
        let dimension = vector.len();
        let coded = scan::quantize(&vector);
        match self.positions.get(&id) {
            Some(&at) => {
                self.data[at * dimension..(at + 1) * dimension].copy_from_slice(&vector);
                self.codes[at * dimension..(at + 1) * dimension].copy_from_slice(&coded.codes);
                self.scales[at] = coded.scale;
                self.residuals[at] = coded.residual;
                self.norms[at] = coded.norm;
            }
            None => {
                self.positions.insert(id.clone(), self.ids.len());
                self.ids.push(id);
                self.data.extend_from_slice(&vector);
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
            self.data
                .copy_within(last * dimension..(last + 1) * dimension, at * dimension);
            self.codes
                .copy_within(last * dimension..(last + 1) * dimension, at * dimension);
            self.ids.swap(at, last);
            self.scales.swap(at, last);
            self.residuals.swap(at, last);
            self.norms.swap(at, last);
            self.positions.insert(moved, at);
        }
        self.ids.pop();
        self.scales.pop();
        self.residuals.pop();
        self.norms.pop();
        self.data.truncate(last * dimension);
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
    memory: Arc<RwLock<Memory>>,
}

impl std::fmt::Debug for EmbeddedVectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedVectorStore")
            .finish_non_exhaustive()
    }
}

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
        let mut memory = Memory::default();
        {
            let mut statement = connection
                .prepare("SELECT collection, tenant_id, namespace, entity_id, vector FROM vectors")
                .map_err(storage)?;
            let rows = statement
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, Vec<u8>>(4)?,
                    ))
                })
                .map_err(storage)?;
            for row in rows {
                let (collection, tenant, namespace, entity, blob) = row.map_err(storage)?;
                memory
                    .collections
                    .entry(collection)
                    .or_default()
                    .entry((tenant, namespace))
                    .or_default()
                    .insert(entity, from_blob(&blob));
            }
        }
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
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
            let mut memory = store.memory.write().map_err(|_| Error::internal("vector memory lock poisoned"))?;
            let namespace = memory.collections.entry(name).or_default().entry((scope.tenant_id, scope.namespace)).or_default();
            for (id, vector) in records.iter() {
                namespace.insert(id.clone(), vector.clone());
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
        let dimension = collection.dimension as usize;
        if query.len() != dimension || namespace.ids.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        // Exact answer; the 8-bit codes skip the rows that cannot be in it.
        let best = scan::nearest(
            scan::Rows {
                dimension,
                values: &namespace.data,
                codes: &namespace.codes,
                scales: &namespace.scales,
                residuals: &namespace.residuals,
                norms: &namespace.norms,
            },
            query,
            limit,
        );
        let scored: Vec<(f32, &String)> = best
            .into_iter()
            .map(|(score, row)| (score, &namespace.ids[row]))
            .collect();
        Ok(scored
            .into_iter()
            .map(|(score, id)| Hit {
                entity_id: id.clone(),
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
