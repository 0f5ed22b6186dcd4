//! The gRPC face of lexical-ranker: requests checked and turned into index lookups
//! for the scope the verified context names, candidates turned into protos.

use codectx_core::limits;
use codectx_errors::Error;
use codectx_lexical::{Candidate, Match};
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::lexical::v1::{self as pb, ScopeKind, lexical_ranker_service_server};
use codectx_tenant::from_request;
use tonic::{Request, Response, Status};

use crate::{CAPABILITIES, LexicalRanker, NAME, Served};

fn scope_kind(value: i32) -> Result<ScopeKind, Error> {
    match ScopeKind::try_from(value) {
        Ok(ScopeKind::Code) => Ok(ScopeKind::Code),
        Ok(ScopeKind::Memory) => Ok(ScopeKind::Memory),
        _ => Err(Error::invalid_argument(
            "scope",
            "scope must be CODE or MEMORY",
        )),
    }
}

fn matched_field(matched: Match) -> pb::MatchedField {
    use codectx_lexical::Field;
    match matched {
        Match::ExactQualifiedName => pb::MatchedField::ExactQualifiedName,
        Match::ExactName => pb::MatchedField::ExactName,
        Match::ExactAlias => pb::MatchedField::ExactAlias,
        Match::ExactErrorMessage => pb::MatchedField::ExactErrorMessage,
        Match::Ranked(Field::Name) => pb::MatchedField::Name,
        Match::Ranked(Field::Alias) => pb::MatchedField::Alias,
        Match::Ranked(Field::Type) => pb::MatchedField::Type,
        Match::Ranked(Field::QualifiedName) => pb::MatchedField::QualifiedName,
        Match::Ranked(Field::Signature) => pb::MatchedField::Signature,
        Match::Ranked(Field::Summary) => pb::MatchedField::Summary,
        // A predicate is part of a fact (and only ever strongest beside another match).
        Match::Ranked(Field::Fact | Field::Predicate) => pb::MatchedField::Fact,
        Match::Ranked(Field::Doc) => pb::MatchedField::Doc,
    }
}

fn candidates(found: Vec<Candidate>, served: &Served) -> pb::CandidateList {
    pb::CandidateList {
        candidates: found
            .into_iter()
            .map(|c| pb::Candidate {
                entity_id: c.id,
                name: c.name,
                kind: c.kind,
                score: c.score,
                matched_field: matched_field(c.matched) as i32,
                exact: c.matched.is_exact(),
            })
            .collect(),
        corpus_version: served.version.clone(),
        stale: served.stale,
    }
}

fn check_query(query: &str) -> Result<(), Error> {
    if query.trim().is_empty() {
        return Err(Error::invalid_argument("query", "query is empty"));
    }
    limits::check_bytes("query", query, limits::RECALL_QUERY_BYTES)
}

fn limit(requested: u32) -> usize {
    if requested == 0 {
        limits::CANDIDATES_PER_LEG
    } else {
        (requested as usize).min(limits::CANDIDATES_PER_LEG)
    }
}

#[tonic::async_trait]
impl lexical_ranker_service_server::LexicalRankerService for LexicalRanker {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, NAME, CAPABILITIES)
    }

    async fn exact_lookup(
        &self,
        request: Request<pb::ExactLookupRequest>,
    ) -> Result<Response<pb::CandidateList>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        check_query(&message.query)?;
        let served = self
            .index(
                &context,
                scope_kind(message.scope)?,
                &message.corpus_version,
            )
            .await?;
        Ok(Response::new(candidates(
            served
                .index
                .exact(&message.query, limit(message.limit), &[]),
            &served,
        )))
    }

    async fn rank(
        &self,
        request: Request<pb::RankRequest>,
    ) -> Result<Response<pb::CandidateList>, Status> {
        let context = from_request(&request)?;
        let message = request.into_inner();
        check_query(&message.query)?;
        let kinds = limits::normalize_kinds(message.kinds)?;
        let served = self
            .index(
                &context,
                scope_kind(message.scope)?,
                &message.corpus_version,
            )
            .await?;
        Ok(Response::new(candidates(
            served.index.rank_filtered(
                &message.query,
                limit(message.limit),
                &kinds,
                message.production_only,
            ),
            &served,
        )))
    }

    async fn invalidate_scope(
        &self,
        request: Request<pb::InvalidateScopeRequest>,
    ) -> Result<Response<pb::InvalidateScopeResponse>, Status> {
        let context = from_request(&request)?;
        let scope = scope_kind(request.get_ref().scope)?;
        let scope_key = match scope {
            ScopeKind::Code => format!("code:{}", context.graph_id()),
            _ => format!("memory:{}", context.namespace()),
        };
        let version = self
            .current
            .lock()
            .map_err(|_| Error::internal("version map lock poisoned"))?
            .remove(&scope_key);
        self.previous.forget(&scope_key)?;
        if let Some(version) = version {
            self.cache.invalidate(&(scope_key, version)).await;
        }
        Ok(Response::new(pb::InvalidateScopeResponse {}))
    }
}
