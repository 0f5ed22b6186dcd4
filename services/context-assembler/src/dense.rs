//! The dense leg's one query: embed the text as a query, then ask the vector store for
//! its nearest vectors in one scope (memory entities or the graph's code symbols), under
//! the caller's context. Shared by recall (memory.rs) and code ranking (code_vectors.rs).

use codectx_clients::{EmbeddingClient, VectorClient};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::embedding::v1::{EmbedPurpose, EmbedRequest, ModelIdentity};
use codectx_proto::vector::v1::{self as vector, VectorScopeKind};
use codectx_tenant::TenantContext;

/// The query's vector and the model that made it (the model names the collection).
pub async fn embed_query(
    embedding: &EmbeddingClient,
    context: &TenantContext,
    query: &str,
) -> Result<(Option<ModelIdentity>, Vec<f32>), Error> {
    let embedded = embedding
        .embed(
            context,
            EmbedRequest {
                texts: vec![query.into()],
                purpose: EmbedPurpose::Query as i32,
            },
        )
        .await?;
    let values = embedded
        .embeddings
        .into_iter()
        .next()
        .map(|e| e.values)
        .unwrap_or_default();
    Ok((embedded.model, values))
}

/// The nearest vectors to `query` in `scope`, best first, at most `depth` (at most
/// [`limits::VECTOR_FETCH_DEPTH`]; a caller that does not filter asks for
/// [`limits::CANDIDATES_PER_LEG`]).
pub async fn nearest(
    embedding: &EmbeddingClient,
    vectors: &VectorClient,
    context: &TenantContext,
    query: &str,
    scope: VectorScopeKind,
    depth: usize,
) -> Result<Vec<vector::VectorHit>, Error> {
    let (model, query_vector) = embed_query(embedding, context, query).await?;
    nearest_to(vectors, context, model, query_vector, scope, depth).await
}

/// [`nearest`] for a query already embedded.
pub async fn nearest_to(
    vectors: &VectorClient,
    context: &TenantContext,
    model: Option<ModelIdentity>,
    query_vector: Vec<f32>,
    scope: VectorScopeKind,
    depth: usize,
) -> Result<Vec<vector::VectorHit>, Error> {
    Ok(vectors
        .nearest(
            context,
            vector::NearestRequest {
                model,
                query: query_vector,
                limit: depth.min(limits::VECTOR_FETCH_DEPTH) as u32,
                scope: scope as i32,
            },
        )
        .await?
        .hits)
}
