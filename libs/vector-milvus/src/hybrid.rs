//! Milvus native hybrid search: one versioned collection per model holding the approved
//! text (under Milvus's standard analyzer, with a BM25 function producing the sparse
//! field) beside the dense vector, searched by `hybrid_search` with both legs filtered
//! by the scope and fused on the server by RRF (k = 60).
//!
//! The collection is new and separate (`hybrid_v1_<model hash>_<dimension>`): the dense
//! collection (`vectors_...`) is never changed in place, so dropping the hybrid one is
//! the rollback and the in-house fusion (shared BM25 ranker plus dense) keeps working.
//! Entities whose vector is not computed yet are still written (text only): they carry a
//! placeholder vector and `has_vector = false`, which the dense leg filters out, so the
//! BM25 leg finds them from the first write. Rows are keyed by scope and entity id (the
//! stable id), so an upsert replaces an entity's text (aliases, merges) and
//! [`VectorStore::delete`](codectx_vector::VectorStore::delete) reaches these
//! collections as it reaches every registered one.

use codectx_errors::Error;
use codectx_vector::{CollectionKey, Hit, VectorScope};
use milvus::v2 as sdk;
use milvus::v2::prelude::*;
use serde_json::json;
use std::result::Result;

use crate::{ENTITY, MilvusVectorStore, NAMESPACE, PRIMARY, TENANT, VECTOR, backend, primary_key};

/// The hybrid collection's schema version: a change of fields, analyzer or function is
/// a new version (a new collection, backfilled), never an in-place change.
pub const HYBRID_SCHEMA_VERSION: u32 = 1;
/// RRF's k, as the in-house fusion (DESIGN.md section 3).
pub const RRF_K: i64 = 60;
/// Longest approved text kept, in bytes (cut at a character boundary).
pub const MAX_TEXT_BYTES: usize = 8_192;

const TEXT: &str = "text";
const SPARSE: &str = "sparse";
const HAS_VECTOR: &str = "has_vector";

/// One entity for the hybrid collection: its approved text and, once computed, its
/// vector.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridRecord {
    pub entity_id: String,
    pub text: String,
    pub vector: Option<Vec<f32>>,
}

/// The hybrid collection of a model.
pub fn hybrid_name(collection: &CollectionKey) -> String {
    let dense = collection.name();
    let rest = dense.trim_start_matches("vectors_");
    format!("hybrid_v{HYBRID_SCHEMA_VERSION}_{rest}")
}

fn cut(text: &str) -> &str {
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    let mut end = MAX_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl MilvusVectorStore {
    async fn ensure_hybrid(&self, collection: &CollectionKey) -> Result<String, Error> {
        collection.validate()?;
        let name = hybrid_name(collection);
        if self.is_known(&name)? {
            return Ok(name);
        }
        if !self.has(&name).await? {
            let schema = crate::scoped_schema()
                .add_field(
                    FieldSchema::new()
                        .name(TEXT)
                        .data_type(DataType::VarChar)
                        .max_length(MAX_TEXT_BYTES as u32)
                        .enable_analyzer(true),
                )
                .add_field(
                    FieldSchema::new()
                        .name(SPARSE)
                        .data_type(DataType::SparseFloatVector),
                )
                .add_field(
                    FieldSchema::new()
                        .name(VECTOR)
                        .data_type(DataType::FloatVector)
                        .dimension(collection.dimension),
                )
                .add_field(
                    FieldSchema::new()
                        .name(HAS_VECTOR)
                        .data_type(DataType::Bool),
                )
                .add_function(
                    Function::new()
                        .name("text_bm25")
                        .function_type(FunctionType::Bm25)
                        .input_fields([TEXT])
                        .output_fields([SPARSE]),
                );
            let sparse = IndexParam::new()
                .field_name(SPARSE)
                .index_type(IndexType::SparseInvertedIndex)
                .metric_type(MetricType::Bm25);
            self.create(&name, schema, vec![sparse]).await?;
        }
        // Registered, so `delete` removes a deleted entity from it too.
        self.register(&name).await?;
        self.remember_known(&name)?;
        Ok(name)
    }

    /// Writes (or replaces, by scope and entity id) the entities' text and vectors in the
    /// model's hybrid collection; returns how many were written.
    pub async fn hybrid_upsert(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        records: &[HybridRecord],
    ) -> Result<usize, Error> {
        if records.is_empty() {
            return Ok(0);
        }
        self.scope_filter(scope)?;
        let mut rows = Vec::with_capacity(records.len());
        let mut placeholder = vec![0.0f32; collection.dimension as usize];
        if let Some(first) = placeholder.first_mut() {
            *first = 1.0;
        }
        for record in records {
            codectx_vector::check_entity_id(&record.entity_id)?;
            let (vector, has_vector) = match &record.vector {
                Some(values) => (codectx_vector::prepare(values, collection)?, true),
                None => (placeholder.clone(), false),
            };
            rows.push(json!({
                PRIMARY: primary_key(scope, &record.entity_id),
                TENANT: scope.tenant_id,
                NAMESPACE: scope.namespace,
                ENTITY: record.entity_id,
                TEXT: cut(&record.text),
                VECTOR: vector,
                HAS_VECTOR: has_vector,
            }));
        }
        let name = self.ensure_hybrid(collection).await?;
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

    /// Native hybrid search in the scope: BM25 over the text and (with a query vector)
    /// the dense leg over entities that have a vector, each leg filtered by the scope and
    /// reading `limit`, fused by RRF (k = 60) on the server; best first, at most `limit`,
    /// hits outside the scope dropped again.
    pub async fn hybrid_search(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        text: &str,
        query: Option<&[f32]>,
        limit: usize,
    ) -> Result<Vec<Hit>, Error> {
        let (filter, templates) = self.scope_filter(scope)?;
        let name = hybrid_name(collection);
        let text = cut(text.trim());
        if limit == 0 || (text.is_empty() && query.is_none()) || !self.has(&name).await? {
            return Ok(Vec::new());
        }
        let mut legs = Vec::new();
        if !text.is_empty() {
            legs.push(
                SubSearchRequest::builder()
                    .vector_field(SPARSE)
                    .vectors(SearchVectors::EmbeddedText(vec![text.to_owned()]))
                    .metric_type(MetricType::Bm25)
                    .filter(filter.clone())
                    .filter_templates(templates.clone())
                    .limit(limit as i64)
                    .build()
                    .map_err(backend)?,
            );
        }
        if let Some(query) = query {
            let query = codectx_vector::prepare(query, collection)?;
            legs.push(
                SubSearchRequest::builder()
                    .vector_field(VECTOR)
                    .vectors(SearchVectors::Float(vec![query]))
                    .metric_type(MetricType::Cosine)
                    .filter(format!("{filter} and {HAS_VECTOR} == true"))
                    .filter_templates(templates.clone())
                    .limit(limit as i64)
                    .build()
                    .map_err(backend)?,
            );
        }
        let response = self
            .client
            .hybrid_search(
                HybridSearchRequest::builder()
                    .collection_name(&name)
                    .sub_requests(legs)
                    .rerank(RRFRerank::new().k(RRF_K).get_function().clone())
                    .limit(limit as i64)
                    .output_fields([TENANT, NAMESPACE, ENTITY])
                    .consistency_level(sdk::ConsistencyLevel::Strong)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        let hits = crate::hits(&response)?;
        Ok(codectx_vector::isolate(scope, hits))
    }

    /// The ids the scope holds in the model's hybrid collection that start with `prefix`
    /// (reconciliation against the graph, the authority).
    pub async fn hybrid_ids(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        prefix: &str,
    ) -> Result<Vec<String>, Error> {
        self.ids_in(scope, &hybrid_name(collection), prefix).await
    }

    /// Drops the model's hybrid collection (the rollback: the dense collection and the
    /// in-house fusion are untouched). Returns whether there was one.
    pub async fn drop_hybrid(&self, collection: &CollectionKey) -> Result<bool, Error> {
        collection.validate()?;
        let name = hybrid_name(collection);
        if !self.has(&name).await? {
            return Ok(false);
        }
        self.client
            .drop_collection(
                sdk::request::collection::DropCollectionRequest::builder()
                    .collection_name(&name)
                    .build()
                    .map_err(backend)?,
            )
            .await
            .map_err(backend)?;
        self.unregister(&name).await?;
        self.forget_known(&name)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hybrid_collection_is_versioned_per_model() {
        let key = |hash: &str| CollectionKey {
            model_hash: hash.into(),
            dimension: 384,
        };
        assert_eq!(hybrid_name(&key("ab12")), "hybrid_v1_ab12_384");
        assert_ne!(hybrid_name(&key("ab12")), hybrid_name(&key("cd34")));
        assert_ne!(hybrid_name(&key("ab12")), key("ab12").name());
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let text = "é".repeat(MAX_TEXT_BYTES);
        let kept = cut(&text);
        assert!(kept.len() <= MAX_TEXT_BYTES);
        assert!(kept.chars().all(|c| c == 'é'));
    }
}
