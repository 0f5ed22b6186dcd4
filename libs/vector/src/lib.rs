//! Dense vector storage and exact/approximate nearest-neighbour search, always scoped by a
//! tenant and namespace that come from the verified context. One collection per (model
//! content hash, dimension). Backends: the embedded index (default; exact unless an
//! operator chooses lists that read a share of a large scope, ADR 0018) and Milvus (an
//! adapter crate of its own). Both pass one contract suite.

pub mod contract;
pub mod embedded;
mod ivf;
mod scan;
#[cfg(test)]
mod testing;

use async_trait::async_trait;
use codectx_core::limits;
use codectx_errors::Error;

/// The only scope a vector operation may touch: from the TenantContext, never a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VectorScope {
    pub tenant_id: String,
    pub namespace: String,
}

/// A model's collection: vectors of different models or dimensions never mix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CollectionKey {
    pub model_hash: String,
    pub dimension: u32,
}

impl CollectionKey {
    /// `vectors_<hash>_<dimension>`: the hash is hex, so the name is always safe.
    pub fn name(&self) -> String {
        let hash: String = self
            .model_hash
            .chars()
            .filter(|c| c.is_ascii_hexdigit())
            .take(32)
            .collect();
        format!("vectors_{hash}_{}", self.dimension)
    }

    pub fn validate(&self) -> Result<(), Error> {
        if self.model_hash.is_empty()
            || !self.model_hash.chars().all(|c| c.is_ascii_hexdigit())
            || self.model_hash.len() > 64
        {
            return Err(Error::invalid_argument(
                "model",
                "model.content_hash must be 1-64 hex characters",
            ));
        }
        if self.dimension == 0 || self.dimension > 4096 {
            return Err(Error::invalid_argument(
                "model",
                "model.dimension must be 1-4096",
            ));
        }
        Ok(())
    }
}

/// A search result with the scope the backend says it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub entity_id: String,
    /// Cosine similarity.
    pub score: f32,
    pub tenant_id: String,
    pub namespace: String,
}

/// The storage contract.
#[async_trait]
pub trait VectorStore: Send + Sync + std::fmt::Debug + 'static {
    fn backend(&self) -> &'static str;
    /// Inserts or replaces vectors by entity id. Returns how many were written.
    async fn upsert(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        records: &[(String, Vec<f32>)],
    ) -> Result<usize, Error>;
    /// Deletes the ids from every collection. Returns how many rows went.
    async fn delete(&self, scope: &VectorScope, entity_ids: &[String]) -> Result<usize, Error>;
    /// The most similar vectors in the scope, best first, at most `limit`.
    async fn nearest(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<Hit>, Error>;
    /// The ids stored in the scope for the model that start with `prefix` ([`check_prefix`]),
    /// in no particular order; more than [`MAX_LISTED_IDS`] is an error naming a longer
    /// prefix.
    async fn ids(
        &self,
        scope: &VectorScope,
        collection: &CollectionKey,
        prefix: &str,
    ) -> Result<Vec<String>, Error>;
}

/// Most ids one listing returns (Milvus's query window).
pub const MAX_LISTED_IDS: usize = 16_384;

/// An id prefix for listing: empty, or a minted id's prefix (`cv_`, 2-4 lowercase
/// letters and `_`) followed by lowercase hex digits. Anything else is refused, so the
/// prefix is safe in a literal filter.
pub fn check_prefix(prefix: &str) -> Result<(), Error> {
    if prefix.is_empty() {
        return Ok(());
    }
    let valid = prefix.split_once('_').is_some_and(|(kind, hex)| {
        (2..=4).contains(&kind.len())
            && kind.bytes().all(|b| b.is_ascii_lowercase())
            && hex.len() <= 32
            && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    });
    if !valid {
        return Err(Error::invalid_argument(
            "prefix",
            "prefix is empty or a minted id's start: 2-4 lowercase letters, '_', hex digits",
        ));
    }
    Ok(())
}

/// The error when a listing is over [`MAX_LISTED_IDS`].
pub fn too_many_ids(prefix: &str) -> Error {
    Error::invalid_argument(
        "prefix",
        format!("more than {MAX_LISTED_IDS} ids start with {prefix:?}; list by longer prefixes"),
    )
}

/// Checks and L2-normalizes a vector for a collection.
pub fn prepare(vector: &[f32], collection: &CollectionKey) -> Result<Vec<f32>, Error> {
    if vector.len() != collection.dimension as usize {
        return Err(Error::invalid_argument(
            "values",
            format!(
                "a vector has {} values; the model's dimension is {}",
                vector.len(),
                collection.dimension
            ),
        ));
    }
    if vector.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid_argument(
            "values",
            "vectors must not contain NaN or infinity",
        ));
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm == 0.0 {
        return Err(Error::invalid_argument(
            "values",
            "all-zero vectors are rejected",
        ));
    }
    Ok(vector.iter().map(|v| v / norm).collect())
}

/// Entity ids: non-empty, at most 4 KiB, no control characters.
pub fn check_entity_id(id: &str) -> Result<(), Error> {
    if id.is_empty() || id.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            "entity_id",
            "entity ids must be non-empty and without control characters",
        ));
    }
    limits::check_bytes("entity_id", id, limits::SELECTOR_BYTES)
}

/// Defence in depth: drops every hit whose tenant or namespace is not the scope's, even
/// though the backend was asked to filter (DESIGN.md: `vector.Isolate`).
pub fn isolate(scope: &VectorScope, hits: Vec<Hit>) -> Vec<Hit> {
    let before = hits.len();
    let kept: Vec<Hit> = hits
        .into_iter()
        .filter(|h| h.tenant_id == scope.tenant_id && h.namespace == scope.namespace)
        .collect();
    if kept.len() != before {
        tracing::error!(
            dropped = before - kept.len(),
            "vector backend returned hits outside the caller's scope; dropped"
        );
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_drops_foreign_hits() {
        let scope = VectorScope {
            tenant_id: "org_a".into(),
            namespace: "org_a|g".into(),
        };
        let hit = |tenant: &str, namespace: &str| Hit {
            entity_id: "e".into(),
            score: 1.0,
            tenant_id: tenant.into(),
            namespace: namespace.into(),
        };
        let kept = isolate(
            &scope,
            vec![
                hit("org_a", "org_a|g"),
                hit("org_b", "org_a|g"),
                hit("org_a", "org_a|h"),
            ],
        );
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn preparation() {
        let key = CollectionKey {
            model_hash: "ab".into(),
            dimension: 2,
        };
        assert_eq!(prepare(&[3.0, 4.0], &key).unwrap(), vec![0.6, 0.8]);
        assert!(prepare(&[0.0, 0.0], &key).is_err());
        assert!(prepare(&[f32::NAN, 1.0], &key).is_err());
        assert!(prepare(&[1.0], &key).is_err());
        assert_eq!(key.name(), "vectors_ab_2");
        assert!(
            CollectionKey {
                model_hash: "x'; drop".into(),
                dimension: 2
            }
            .validate()
            .is_err()
        );
    }
}
