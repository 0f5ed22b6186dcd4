//! The gRPC face of embedding: requests checked (scope, batch and text limits) and
//! turned into model runs, vectors into protos.

use std::sync::Arc;

use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::embedding::v1::{self as pb, EmbedPurpose, embedding_service_server};
use codectx_tenant::from_request;
use tonic::{Request, Response, Status};

use crate::{CAPABILITIES, EmbeddingService, MAX_TEXTS, NAME, Priority};

#[tonic::async_trait]
impl embedding_service_server::EmbeddingService for EmbeddingService {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, NAME, CAPABILITIES)
    }

    async fn get_model_info(
        &self,
        request: Request<pb::GetModelInfoRequest>,
    ) -> Result<Response<pb::ModelIdentity>, Status> {
        let _context = from_request(&request)?;
        let (_, identity) = self.ready()?;
        Ok(Response::new(identity_to_proto(&identity)))
    }

    async fn embed(
        &self,
        request: Request<pb::EmbedRequest>,
    ) -> Result<Response<pb::EmbedResponse>, Status> {
        let _context = from_request(&request)?;
        let message = request.into_inner();
        if message.texts.is_empty() {
            return Err(Error::invalid_argument("texts", "pass at least one text").into());
        }
        limits::check_count("texts", message.texts.len(), MAX_TEXTS, "texts")?;
        for text in &message.texts {
            limits::check_bytes("texts", text, limits::RECALL_QUERY_BYTES)?;
            if text.trim().is_empty() {
                return Err(Error::invalid_argument("texts", "texts must not be empty").into());
            }
        }
        let (sender, identity) = self.ready()?;
        let vectors = if message.purpose == EmbedPurpose::Query as i32 {
            let mut out = Vec::with_capacity(message.texts.len());
            for text in message.texts {
                let key = format!("{}\u{1}{text}", identity.content_hash);
                let sender = sender.clone();
                let vector = self
                    .queries
                    .try_get_with(key, async {
                        let mut vectors = self.run(&sender, Priority::Query, vec![text]).await?;
                        Ok::<_, Error>(Arc::new(vectors.remove(0)))
                    })
                    .await
                    .map_err(|e: Arc<Error>| (*e).clone())?;
                out.push((*vector).clone());
            }
            out
        } else {
            self.run(&sender, Priority::Bulk, message.texts).await?
        };
        Ok(Response::new(pb::EmbedResponse {
            model: Some(identity_to_proto(&identity)),
            embeddings: vectors
                .into_iter()
                .map(|values| pb::Embedding { values })
                .collect(),
        }))
    }
}

fn identity_to_proto(identity: &codectx_embed::ModelIdentity) -> pb::ModelIdentity {
    pb::ModelIdentity {
        name: identity.name.clone(),
        content_hash: identity.content_hash.clone(),
        dimension: identity.dimension,
    }
}
