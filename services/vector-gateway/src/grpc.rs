//! The gRPC face of vector-gateway: requests checked and bound to the scope the
//! verified context names, turned into vector-store calls; hits into protos.

use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::vector::v1::{self as pb, vector_gateway_service_server};
use codectx_tenant::{Scope, TenantContext, from_request};
use codectx_vector::{CollectionKey, VectorScope, check_entity_id, isolate, prepare};
use codectx_vector_milvus::HybridRecord;
use tonic::{Request, Response, Status};

use crate::{CAPABILITIES, MAX_RECORDS, NAME, VectorGateway};

#[tonic::async_trait]
impl vector_gateway_service_server::VectorGatewayService for VectorGateway {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let mut capabilities = CAPABILITIES.to_vec();
        if self.hybrid.is_some() {
            capabilities.push("hybrid");
        }
        codectx_runtime::describe_rpc(&request, NAME, &capabilities)
    }

    async fn upsert(
        &self,
        request: Request<pb::UpsertRequest>,
    ) -> Result<Response<pb::UpsertResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, true)?;
        let key = collection(message.model)?;
        limits::check_count("records", message.records.len(), MAX_RECORDS, "records")?;
        let mut records = Vec::with_capacity(message.records.len());
        let mut texts = Vec::new();
        for record in message.records {
            check_entity_id(&record.entity_id)?;
            limits::check_bytes("records.text", &record.text, limits::TASK_BYTES)?;
            let values = prepare(&record.values, &key)?;
            if !record.text.trim().is_empty() {
                texts.push(HybridRecord {
                    entity_id: record.entity_id.clone(),
                    text: record.text,
                    vector: Some(values.clone()),
                });
            }
            records.push((record.entity_id, values));
        }
        let upserted = self.store.upsert(&scope, &key, &records).await?;
        // The hybrid collection after the dense one: an id listed by both is complete.
        if let Some(hybrid) = &self.hybrid {
            hybrid.hybrid_upsert(&scope, &key, &texts).await?;
        }
        Ok(Response::new(pb::UpsertResponse {
            upserted: upserted as u32,
        }))
    }

    async fn delete(
        &self,
        request: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, true)?;
        let ids = message.entity_ids;
        limits::check_count("entity_ids", ids.len(), MAX_RECORDS, "ids")?;
        for id in &ids {
            check_entity_id(id)?;
        }
        let deleted = self.store.delete(&scope, &ids).await?;
        Ok(Response::new(pb::DeleteResponse {
            deleted: deleted as u32,
        }))
    }

    async fn nearest(
        &self,
        request: Request<pb::NearestRequest>,
    ) -> Result<Response<pb::NearestResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        let query = prepare(&message.query, &key)?;
        let hits = isolate(
            &scope,
            self.store
                .nearest(&scope, &key, &query, depth(message.limit))
                .await?,
        );
        Ok(Response::new(answer(hits)))
    }

    async fn hybrid(
        &self,
        request: Request<pb::HybridRequest>,
    ) -> Result<Response<pb::NearestResponse>, Status> {
        let context = from_request(&request)?;
        let Some(hybrid) = &self.hybrid else {
            return Err(Error::new(
                codectx_errors::ErrorKind::Unimplemented,
                "native hybrid search is off: set vectors.milvus_native_hybrid with the Milvus backend",
            )
            .into());
        };
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        limits::check_bytes("text", &message.text, limits::TASK_BYTES)?;
        let query = if message.query.is_empty() {
            None
        } else {
            Some(prepare(&message.query, &key)?)
        };
        let hits = isolate(
            &scope,
            hybrid
                .hybrid_search(
                    &scope,
                    &key,
                    &message.text,
                    query.as_deref(),
                    depth(message.limit),
                )
                .await?,
        );
        Ok(Response::new(answer(hits)))
    }

    async fn list_ids(
        &self,
        request: Request<pb::ListIdsRequest>,
    ) -> Result<Response<pb::ListIdsResponse>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        let scope = scope(&context, message.scope, false)?;
        let key = collection(message.model)?;
        let mut entity_ids = self.store.ids(&scope, &key, &message.prefix).await?;
        // With native hybrid on, a code symbol is stored when both collections hold it:
        // the caller's plan then writes (backfills) what the hybrid collection lacks.
        // Memory records carry no text and are listed as before.
        let code = pb::VectorScopeKind::try_from(message.scope) == Ok(pb::VectorScopeKind::Code);
        if let (Some(hybrid), true) = (&self.hybrid, code) {
            let held: std::collections::HashSet<String> = hybrid
                .hybrid_ids(&scope, &key, &message.prefix)
                .await?
                .into_iter()
                .collect();
            entity_ids.retain(|id| held.contains(id));
        }
        Ok(Response::new(pb::ListIdsResponse { entity_ids }))
    }
}

/// How many hits a search reads: 0 means the leg's 10; a caller may read deeper than it
/// fuses, to filter (limits.rs).
fn depth(limit: u32) -> usize {
    if limit == 0 {
        limits::CANDIDATES_PER_LEG
    } else {
        (limit as usize).min(limits::VECTOR_FETCH_DEPTH)
    }
}

fn answer(hits: Vec<codectx_vector::Hit>) -> pb::NearestResponse {
    pb::NearestResponse {
        hits: hits
            .into_iter()
            .map(|h| pb::VectorHit {
                entity_id: h.entity_id,
                score: f64::from(h.score),
            })
            .collect(),
    }
}

/// The scope a request reaches, from the verified context alone, and the permission it
/// needs: memory is the context's tenant and namespace (`read_memory` to read,
/// `write_memory` to write); code is the context's graph, shared by every tenant entitled
/// to it (`read_code` for both: code vectors are derived from the graph's metadata by
/// context-assembler, the only caller NetworkPolicy lets in).
fn scope(context: &TenantContext, kind: i32, write: bool) -> Result<VectorScope, Error> {
    match pb::VectorScopeKind::try_from(kind).unwrap_or(pb::VectorScopeKind::Unspecified) {
        pb::VectorScopeKind::Code => {
            context.require_scope(Scope::ReadCode)?;
            Ok(VectorScope {
                tenant_id: context.graph_id().to_owned(),
                namespace: context.graph_id().to_owned(),
            })
        }
        pb::VectorScopeKind::Memory | pb::VectorScopeKind::Unspecified => {
            context.require_scope(if write {
                Scope::WriteMemory
            } else {
                Scope::ReadMemory
            })?;
            Ok(VectorScope {
                tenant_id: context.tenant_id().to_owned(),
                namespace: context.namespace().to_owned(),
            })
        }
    }
}

fn collection(
    model: Option<codectx_proto::embedding::v1::ModelIdentity>,
) -> Result<CollectionKey, Error> {
    let model = model.ok_or_else(|| {
        Error::invalid_argument("model", "pass the model identity the vectors come from")
    })?;
    let key = CollectionKey {
        model_hash: model.content_hash,
        dimension: model.dimension,
    };
    key.validate()?;
    Ok(key)
}
