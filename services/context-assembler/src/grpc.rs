//! The gRPC face of context-assembler: each RPC verifies the caller's context, turns
//! the request into the domain call (`code`, `memory`, `describe`) under the operation
//! deadline, and the answer into its proto. The domain modules never see tonic.

use codectx_errors::Error;
use codectx_proto::assembler::v1::{self as pb, context_assembler_service_server};
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::graph::v1::Direction as GraphDirection;
use codectx_tenant::{Scope, from_request};
use tonic::{Request, Response, Status};

use crate::{CAPABILITIES, ContextAssembler, NAME, code, deadline, describe, memory};

fn respond(answer: code::Answer) -> Response<pb::ContextAnswer> {
    Response::new(pb::ContextAnswer {
        status: answer.status as i32,
        tokens: answer.tokens,
        json: answer.json,
    })
}

#[tonic::async_trait]
impl context_assembler_service_server::ContextAssemblerService for ContextAssembler {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, NAME, CAPABILITIES)
    }

    async fn minimal_context(
        &self,
        request: Request<pb::MinimalContextRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let legs = self.legs();
        // The agent's notes about this repository join the answer when it may read them.
        let memory = context.has_scope(Scope::ReadMemory).then_some(&legs);
        let dense = self.dense_code();
        let answer = self
            .code(
                &context,
                code::minimal_context(
                    &self.lexical,
                    self.retrieval,
                    Some(&dense),
                    &self.graph,
                    memory,
                    &context,
                    &message.task,
                    message.max_tokens,
                ),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn symbol_context(
        &self,
        request: Request<pb::SymbolContextRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let answer = self
            .code(
                &context,
                code::symbol_context(
                    &self.graph,
                    &context,
                    &message.symbol,
                    message.max_tokens,
                    message.include_ids,
                ),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn call_graph(
        &self,
        request: Request<pb::CallGraphRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let direction = match pb::CallDirection::try_from(message.direction) {
            Ok(pb::CallDirection::Callers) => GraphDirection::Incoming,
            Ok(pb::CallDirection::Callees) => GraphDirection::Outgoing,
            _ => GraphDirection::Both,
        };
        let answer = self
            .code(
                &context,
                code::call_graph(
                    &self.graph,
                    &context,
                    &message.symbol,
                    direction,
                    message.depth,
                    message.max_tokens,
                ),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn pr_context(
        &self,
        request: Request<pb::PrContextRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let change = match message.change {
            Some(pb::pr_context_request::Change::Diff(diff)) => code::Change::Diff(diff),
            Some(pb::pr_context_request::Change::Files(files)) => code::Change::Files(files.paths),
            None => {
                return Err(Error::invalid_argument(
                    "change",
                    "pass a unified diff (git diff) or the changed files",
                )
                .into());
            }
        };
        let answer = self
            .code(
                &context,
                code::pr_context(&self.graph, &context, change, message.max_tokens),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn search(
        &self,
        request: Request<pb::SearchRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let dense = self.dense_code();
        let answer = self
            .code(
                &context,
                code::search(
                    &self.lexical,
                    self.retrieval,
                    Some(&dense),
                    &self.graph,
                    &context,
                    &message.query,
                    codectx_core::limits::normalize_kinds(message.kinds)?,
                    message.limit,
                ),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn code_snippet(
        &self,
        request: Request<pb::CodeSnippetRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let message = request.into_inner();
        let target = match message.target {
            Some(pb::code_snippet_request::Target::Symbol(symbol)) => {
                code::SnippetTarget::Symbol(symbol)
            }
            Some(pb::code_snippet_request::Target::Id(id)) => code::SnippetTarget::Id(id),
            None => {
                return Err(Error::invalid_argument(
                    "target",
                    "name the symbol (or pass the id an earlier answer gave)",
                )
                .into());
            }
        };
        let answer = self
            .code(
                &context,
                code::code_snippet(&self.graph, &context, target, &message.fingerprint),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn describe_repository(
        &self,
        request: Request<pb::DescribeRepositoryRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadCode)?;
        let answer = self
            .code(
                &context,
                describe::describe_repository(&self.graph, &context),
            )
            .await?;
        Ok(respond(answer))
    }

    async fn recall(
        &self,
        request: Request<pb::RecallRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadMemory)?;
        let message = request.into_inner();
        let answer = deadline(memory::recall(
            &self.legs(),
            &context,
            &message.query,
            message.max_entries,
            message.hops,
        ))
        .await?;
        Ok(respond(answer))
    }

    async fn remember(
        &self,
        request: Request<pb::RememberRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::WriteMemory)?;
        let answer = deadline(memory::remember(
            &self.legs(),
            &context,
            request.into_inner(),
        ))
        .await?;
        Ok(respond(answer))
    }

    async fn forget(
        &self,
        request: Request<pb::ForgetRequest>,
    ) -> Result<Response<pb::ContextAnswer>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::WriteMemory)?;
        let name = request.into_inner().entity;
        if name.trim().is_empty() {
            return Err(Error::invalid_argument("entity", "name the entity to forget").into());
        }
        let answer = deadline(memory::forget(&self.legs(), &context, &name)).await?;
        Ok(respond(answer))
    }
}
