//! The Milvus adapter of the vector store, over gRPC with the official Rust SDK
//! (`milvus-sdk-rust`, which brings tonic/prost 0.13: this is the only crate that depends
//! on it, so the rest of the workspace keeps one version of tonic, prost, hyper, http, h2
//! and tower).
//!
//! One collection per (model hash, dimension): a VarChar primary key, `tenant_id` as the
//! partition key, `namespace` and `entity_id` scalar fields, the dense vector (HNSW,
//! cosine). Reads are strongly consistent. Filters bind tenant and namespace as
//! expression template parameters; for servers without template support (milvus-lite)
//! the `literal` mode accepts only values in the strict formats authz mints and quotes
//! them, so no request value can change the expression's structure.

mod hybrid;

use std::collections::HashMap;

use async_trait::async_trait;
use codectx_core::ids;
use codectx_errors::Error;
use codectx_vector::{CollectionKey, Hit, VectorScope, VectorStore};
use milvus::v2 as sdk;
use milvus::v2::prelude::*;
use serde_json::json;
use std::result::Result;

pub use hybrid::{HYBRID_SCHEMA_VERSION, HybridRecord, hybrid_name};

/// How filters carry tenant and namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    /// `tenant_id == {tenant}` with the values as template parameters (Milvus 2.5+).
    Template,
    /// Values written into the expression, accepted only in minted-id formats.
    Literal,
}

/// The Milvus vector store.
pub struct MilvusVectorStore {
    client: ClientV2,
    mode: FilterMode,
    /// Collections known to exist and to be registered.
    known: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for MilvusVectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MilvusVectorStore")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

pub(crate) fn backend(error: impl std::fmt::Display) -> Error {
    Error::unavailable(format!("vector store (milvus): {error}"))
}

pub(crate) const PRIMARY: &str = "pk";
pub(crate) const TENANT: &str = "tenant_id";
pub(crate) const NAMESPACE: &str = "namespace";
pub(crate) const ENTITY: &str = "entity_id";
pub(crate) const VECTOR: &str = "vector";
/// Names of the collections this adapter created, so a delete can reach every model's
/// collection without ListCollections (whose milvus-lite response the SDK rejects).
const REGISTRY: &str = "codectx_vector_collections";

/// A literal-mode value: a minted id, or a namespace of two minted ids.
fn literal(value: &str, field: &str) -> Result<String, Error> {
    let valid = ids::is_minted(value)
        || value
            .split_once('|')
            .is_some_and(|(a, b)| ids::is_minted(a) && ids::is_minted(b));
    if !valid {
        return Err(Error::invalid_argument(
            field,
            format!(
                "{field} is not in a minted id format; the literal filter mode (for servers without filter templates) accepts no other values"
            ),
        ));
    }
    // Minted ids are [a-z0-9_|]: quoting cannot be escaped out of.
    Ok(format!("\"{value}\""))
}

impl MilvusVectorStore {
    pub async fn connect(uri: &str, token: &str, mode: FilterMode) -> Result<Self, Error> {
        let mut config = ConnectConfig::new().uri(uri);
        if !token.is_empty() {
            config = config.token(token);
        }
        let client = ClientV2::new(&config).await.map_err(backend)?;
        Ok(Self {
            client,
            mode,
            known: std::sync::Mutex::new(std::collections::HashSet::new()),
        })
    }

    /// The scope filter and its parameters.
    pub(crate) fn scope_filter(
        &self,
        scope: &VectorScope,
    ) -> Result<(String, HashMap<String, FilterTemplateValue>), Error> {
        match self.mode {
            FilterMode::Template => Ok((
                format!("{TENANT} == {{tenant}} and {NAMESPACE} == {{namespace}}"),
                HashMap::from([
                    (
                        "tenant".to_owned(),
                        FilterTemplateValue::String(scope.tenant_id.clone()),
                    ),
                    (
                        "namespace".to_owned(),
                        FilterTemplateValue::String(scope.namespace.clone()),
                    ),
                ]),
            )),
            FilterMode::Literal => Ok((
                format!(
                    "{TENANT} == {} and {NAMESPACE} == {}",
                    literal(&scope.tenant_id, "tenant_id")?,
                    literal(&scope.namespace, "namespace")?
                ),
                HashMap::new(),
            )),
        }
    }

    pub(crate) async fn has(&self, name: &str) -> Result<bool, Error> {
        Ok(self
            .client
            .has_collection(
                sdk::request::collection::HasCollectionRequest::builder()
                    .collection_name(name)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?
            .exists())
    }

    /// Creates a collection with an HNSW (cosine) index on the dense vector and any
    /// `more` indexes, and loads it.
    pub(crate) async fn create(
        &self,
        name: &str,
        schema: CollectionSchema,
        more: Vec<IndexParam>,
    ) -> Result<(), Error> {
        self.client
            .create_collection(
                sdk::request::collection::CreateCollectionRequest::builder()
                    .collection_name(name)
                    .schema(schema)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        let dense = IndexParam::new()
            .field_name(VECTOR)
            .index_type(IndexType::Hnsw)
            .metric_type(MetricType::Cosine)
            .extra_params(HashMap::from([
                ("M".into(), "16".into()),
                ("efConstruction".into(), "100".into()),
            ]));
        for index in std::iter::once(dense).chain(more) {
            self.client
                .create_index(
                    sdk::request::index::CreateIndexRequest::builder()
                        .collection_name(name)
                        .index_param(index)
                        // milvus-lite does not answer synchronous index waits.
                        .sync(false)
                        .build()
                        .map_err(backend)?,
                )
                .await
                .map_err(backend)?;
        }
        self.client
            .load_collection(
                sdk::request::collection::LoadCollectionRequest::builder()
                    .collection_name(name)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    pub(crate) async fn register(&self, name: &str) -> Result<(), Error> {
        if !self.has(REGISTRY).await? {
            let schema = CollectionSchema::new()
                .add_field(
                    FieldSchema::new()
                        .name(PRIMARY)
                        .data_type(DataType::VarChar)
                        .max_length(512)
                        .primary_key(true),
                )
                .add_field(
                    FieldSchema::new()
                        .name(VECTOR)
                        .data_type(DataType::FloatVector)
                        .dimension(2),
                );
            self.create(REGISTRY, schema, Vec::new()).await?;
        }
        let row = json!({PRIMARY: name, VECTOR: [1.0, 0.0]});
        self.client
            .upsert(
                UpsertRequest::builder()
                    .insert(
                        InsertRequest::builder()
                            .collection_name(REGISTRY)
                            .rows(vec![row])
                            .build()
                            .map_err(backend)?,
                    )
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Removes a dropped collection from the registry, so deletes stop visiting it.
    pub(crate) async fn unregister(&self, name: &str) -> Result<(), Error> {
        // Collection names are built here from hex digits, digits and '_': safe quoted.
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(Error::internal(format!(
                "unexpected collection name {name:?}"
            )));
        }
        if !self.has(REGISTRY).await? {
            return Ok(());
        }
        self.client
            .delete(
                DeleteRequest::builder()
                    .collection_name(REGISTRY)
                    .filter(format!("{PRIMARY} in [\"{name}\"]"))
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    fn known(&self) -> Result<std::sync::MutexGuard<'_, std::collections::HashSet<String>>, Error> {
        self.known
            .lock()
            .map_err(|_| Error::internal("collection set lock poisoned"))
    }

    pub(crate) fn is_known(&self, name: &str) -> Result<bool, Error> {
        Ok(self.known()?.contains(name))
    }

    pub(crate) fn remember_known(&self, name: &str) -> Result<(), Error> {
        self.known()?.insert(name.to_owned());
        Ok(())
    }

    pub(crate) fn forget_known(&self, name: &str) -> Result<(), Error> {
        self.known()?.remove(name);
        Ok(())
    }

    async fn ensure_collection(&self, collection: &CollectionKey) -> Result<String, Error> {
        let name = collection.name();
        if self.is_known(&name)? {
            return Ok(name);
        }
        if self.has(&name).await? {
            // Registered on every first use, so collections made elsewhere are found too.
            self.register(&name).await?;
            self.remember_known(&name)?;
            return Ok(name);
        }
        let schema = scoped_schema().add_field(
            FieldSchema::new()
                .name(VECTOR)
                .data_type(DataType::FloatVector)
                .dimension(collection.dimension),
        );
        self.create(&name, schema, Vec::new()).await?;
        self.register(&name).await?;
        self.remember_known(&name)?;
        Ok(name)
    }

    async fn collections(&self) -> Result<Vec<String>, Error> {
        if !self.has(REGISTRY).await? {
            return Ok(Vec::new());
        }
        let response = self
            .client
            .query(
                QueryRequest::builder()
                    .collection_name(REGISTRY)
                    .filter(format!("{PRIMARY} != \"\""))
                    .output_fields([PRIMARY])
                    .limit(10_000)
                    .consistency_level(sdk::ConsistencyLevel::Strong)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        let mut names = Vec::new();
        for row in response.results().rows().map_err(backend)? {
            let row = row.to_entity_row().map_err(backend)?;
            if let Some(name) = row.get(PRIMARY).and_then(|v| v.as_str()) {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }
}

/// The fields every scoped collection has: the primary key (scope and id), the tenant
/// as the partition key, the namespace and the entity id.
pub(crate) fn scoped_schema() -> CollectionSchema {
    CollectionSchema::new()
        .add_field(
            FieldSchema::new()
                .name(PRIMARY)
                .data_type(DataType::VarChar)
                .max_length(8192)
                .primary_key(true),
        )
        .add_field(
            FieldSchema::new()
                .name(TENANT)
                .data_type(DataType::VarChar)
                .max_length(256)
                .partition_key(true),
        )
        .add_field(
            FieldSchema::new()
                .name(NAMESPACE)
                .data_type(DataType::VarChar)
                .max_length(512),
        )
        .add_field(
            FieldSchema::new()
                .name(ENTITY)
                .data_type(DataType::VarChar)
                .max_length(4096),
        )
}

pub(crate) fn primary_key(scope: &VectorScope, id: &str) -> String {
    format!("{}\u{1f}{}\u{1f}{id}", scope.tenant_id, scope.namespace)
}

#[async_trait]
impl VectorStore for MilvusVectorStore {
    fn backend(&self) -> &'static str {
        "milvus"
    }

    async fn upsert(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        records: &[(String, Vec<f32>)],
    ) -> Result<usize, Error> {
        if records.is_empty() {
            return Ok(0);
        }
        if self.mode == FilterMode::Literal {
            self.scope_filter(scope)?;
        }
        let name = self.ensure_collection(collection).await?;
        let rows: Vec<serde_json::Value> = records
            .iter()
            .map(|(id, vector)| {
                json!({PRIMARY: primary_key(scope, id), TENANT: scope.tenant_id, NAMESPACE: scope.namespace, ENTITY: id, VECTOR: vector})
            })
            .collect();
        self.client
            .upsert(
                UpsertRequest::builder()
                    .insert(
                        InsertRequest::builder()
                            .collection_name(&name)
                            .rows(rows)
                            .build()
                            .map_err(backend)?,
                    )
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        Ok(records.len())
    }

    async fn delete(&self, scope: &VectorScope, entity_ids: &[String]) -> Result<usize, Error> {
        if entity_ids.is_empty() {
            return Ok(0);
        }
        let (filter, mut templates) = self.scope_filter(scope)?;
        // Primary keys derive from scope and id: deleting by them cannot reach another scope.
        let keys: Vec<String> = entity_ids.iter().map(|id| primary_key(scope, id)).collect();
        let expression = match self.mode {
            FilterMode::Template => {
                templates.insert("keys".into(), FilterTemplateValue::StringArray(keys));
                format!("{filter} and {PRIMARY} in {{keys}}")
            }
            FilterMode::Literal => {
                let quoted: Result<Vec<String>, Error> = entity_ids
                    .iter()
                    .map(|id| literal(id, "entity_id"))
                    .collect();
                format!("{filter} and {ENTITY} in [{}]", quoted?.join(", "))
            }
        };
        let mut deleted = 0usize;
        for name in self.collections().await? {
            // A collection dropped by another process may still be registered.
            if !self.has(&name).await? {
                continue;
            }
            let response = self
                .client
                .delete(
                    DeleteRequest::builder()
                        .collection_name(&name)
                        .filter(expression.clone())
                        .filter_templates(templates.clone())
                        .build()
                        .map_err(backend)?,
                )
                .await
                .map_err(backend)?;
            deleted += response.delete_count().max(0) as usize;
        }
        Ok(deleted)
    }

    async fn nearest(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<Hit>, Error> {
        let (filter, templates) = self.scope_filter(scope)?;
        let name = collection.name();
        if limit == 0 || !self.has(&name).await? {
            return Ok(Vec::new());
        }
        let response = self
            .client
            .search(
                SearchRequest::builder()
                    .collection_name(&name)
                    .vector_field(VECTOR)
                    .vectors(SearchVectors::Float(vec![query.to_vec()]))
                    .filter(filter)
                    .filter_templates(templates)
                    .output_fields([TENANT, NAMESPACE, ENTITY])
                    .limit(limit as i64)
                    .consistency_level(sdk::ConsistencyLevel::Strong)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        hits(&response)
    }

    async fn ids(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        prefix: &str,
    ) -> Result<Vec<String>, Error> {
        self.ids_in(scope, &collection.name(), prefix).await
    }
}

/// The hits of a search response, best first (ties by entity id).
pub(crate) fn hits(response: &SearchResponse) -> Result<Vec<Hit>, Error> {
    let mut hits = Vec::new();
    for result in response.results() {
        for row in result.rows().map_err(backend)? {
            let row = row.to_entity_row().map_err(backend)?;
            let text = |key: &str| {
                row.get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let score = ["score", "distance"]
                .iter()
                .find_map(|k| row.get(*k).and_then(|v| v.as_f64()))
                .unwrap_or(0.0) as f32;
            hits.push(Hit {
                entity_id: text(ENTITY),
                score,
                tenant_id: text(TENANT),
                namespace: text(NAMESPACE),
            });
        }
    }
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.entity_id.cmp(&b.entity_id))
    });
    Ok(hits)
}

impl MilvusVectorStore {
    /// The scope's ids in collection `name` that start with `prefix`.
    pub(crate) async fn ids_in(
        &self,
        scope: &VectorScope,
        name: &str,
        prefix: &str,
    ) -> Result<Vec<String>, Error> {
        codectx_vector::check_prefix(prefix)?;
        let (filter, templates) = self.scope_filter(scope)?;
        if !self.has(name).await? {
            return Ok(Vec::new());
        }
        // check_prefix allows letters, '_' and hex digits only: safe in a literal.
        let expression = if prefix.is_empty() {
            filter
        } else {
            format!("{filter} and {ENTITY} like \"{prefix}%\"")
        };
        let response = self
            .client
            .query(
                QueryRequest::builder()
                    .collection_name(name)
                    .filter(expression)
                    .filter_templates(templates)
                    .output_fields([TENANT, NAMESPACE, ENTITY])
                    .limit(codectx_vector::MAX_LISTED_IDS as i64)
                    .consistency_level(sdk::ConsistencyLevel::Strong)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        let mut ids = Vec::new();
        for row in response.results().rows().map_err(backend)? {
            let row = row.to_entity_row().map_err(backend)?;
            let text = |key: &str| row.get(key).and_then(|v| v.as_str()).unwrap_or_default();
            // Defence in depth, as for hits: only the scope's own rows.
            if text(TENANT) == scope.tenant_id && text(NAMESPACE) == scope.namespace {
                ids.push(text(ENTITY).to_owned());
            }
        }
        // A full window may have more behind it.
        if ids.len() >= codectx_vector::MAX_LISTED_IDS {
            return Err(codectx_vector::too_many_ids(prefix));
        }
        Ok(ids)
    }
}
