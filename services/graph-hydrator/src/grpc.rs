//! Proto ⇄ domain conversions and the handlers. Every handler takes the graph from the
//! verified context.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use codectx_graph::notes::Notes;

use crate::freshness::{annotate, staleness};

use crate::corpus::{CORPUS_CHUNK, CodeCorpus};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_graph::memory::{EntityInput, FactInput, MemoryEntity};
use codectx_graph::query::{self, Directions, ExpandOptions, SYMBOL_KINDS};
use codectx_graph::{Confidence, Direction, EdgeKind, Neighbor, Node, NodeKind, Store};
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse, Omission, SourceSpan};
use codectx_proto::graph::v1::{self as pb, graph_hydrator_service_server::GraphHydratorService};
use codectx_proto::lexical::v1::ScopeKind;
use codectx_tenant::{Scope, TenantContext, from_request};
use tonic::{Request, Response, Status};

use crate::{NAME, snippet};

const CAPABILITIES: &[&str] = &["describe", "code_graph", "lexical_corpus", "memory"];

/// Ids per request.
const MAX_IDS: usize = 100;
/// Expansions per ExpandBatch.
const MAX_BATCH: usize = 16;
/// Default and largest node limit per direction.
const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 200;

pub(crate) struct GraphHydrator {
    pub(crate) store: Arc<dyn Store>,
    /// Repository records (policy notes, freshness), cached for a second.
    pub(crate) records: Arc<crate::freshness::Records>,
}

fn code_context<T>(request: &Request<T>) -> Result<TenantContext, Status> {
    let context = from_request(request)?;
    context.require_scope(Scope::ReadCode)?;
    Ok(context)
}

pub(crate) fn card(node: &Node) -> pb::SymbolCard {
    pb::SymbolCard {
        id: node.id.clone(),
        qualified_name: node.qualified_name.clone(),
        name: node.name.clone(),
        kind: node.kind.as_str().to_owned(),
        language: node.language.clone(),
        signature: node.signature.clone(),
        span: (!node.path.is_empty()).then(|| SourceSpan {
            path: node.path.clone(),
            start_line: node.start_line,
            end_line: node.end_line,
        }),
        summary: node.summary.clone(),
        fingerprint: node.fingerprint.clone(),
        notes: Vec::new(),
    }
}

fn edge_kind_to_proto(kind: EdgeKind) -> pb::EdgeKind {
    match kind {
        EdgeKind::Contains => pb::EdgeKind::Contains,
        EdgeKind::Imports => pb::EdgeKind::Imports,
        EdgeKind::Calls => pb::EdgeKind::Calls,
        EdgeKind::Implements => pb::EdgeKind::Implements,
        EdgeKind::TestedBy => pb::EdgeKind::TestedBy,
        EdgeKind::Mentions => pb::EdgeKind::Mentions,
        EdgeKind::Requires => pb::EdgeKind::Requires,
        EdgeKind::References => pb::EdgeKind::References,
        EdgeKind::Exports => pb::EdgeKind::Exports,
    }
}

fn edge_kinds(values: &[i32]) -> Result<Vec<EdgeKind>, Error> {
    if values.is_empty() {
        return Ok(EdgeKind::ALL.to_vec());
    }
    values
        .iter()
        .map(|value| match pb::EdgeKind::try_from(*value) {
            Ok(pb::EdgeKind::Contains) => Ok(EdgeKind::Contains),
            Ok(pb::EdgeKind::Imports) => Ok(EdgeKind::Imports),
            Ok(pb::EdgeKind::Calls) => Ok(EdgeKind::Calls),
            Ok(pb::EdgeKind::Implements) => Ok(EdgeKind::Implements),
            Ok(pb::EdgeKind::TestedBy) => Ok(EdgeKind::TestedBy),
            Ok(pb::EdgeKind::Mentions) => Ok(EdgeKind::Mentions),
            Ok(pb::EdgeKind::Requires) => Ok(EdgeKind::Requires),
            Ok(pb::EdgeKind::References) => Ok(EdgeKind::References),
            Ok(pb::EdgeKind::Exports) => Ok(EdgeKind::Exports),
            Ok(pb::EdgeKind::Affects) => Err(Error::invalid_argument(
                "edge_kinds",
                "AFFECTS edges (security findings) are not indexed yet",
            )),
            _ => Err(Error::invalid_argument(
                "edge_kinds",
                format!("unknown edge kind {value}"),
            )),
        })
        .collect()
}

fn directions(value: i32) -> Directions {
    match pb::Direction::try_from(value) {
        Ok(pb::Direction::Outgoing) => Directions::Outgoing,
        Ok(pb::Direction::Incoming) => Directions::Incoming,
        _ => Directions::Both,
    }
}

fn node_kinds(values: &[String]) -> Result<Vec<NodeKind>, Error> {
    values
        .iter()
        .map(|value| {
            NodeKind::parse(value).ok_or_else(|| {
                let known: Vec<&str> = NodeKind::ALL.iter().map(|k| k.as_str()).collect();
                Error::invalid_argument(
                    "kinds",
                    format!("unknown kind {value:?}; use one of {}", known.join(", ")),
                )
            })
        })
        .collect()
}

fn limit(requested: u32) -> usize {
    if requested == 0 {
        DEFAULT_LIMIT as usize
    } else {
        requested.min(MAX_LIMIT) as usize
    }
}

fn neighbor(n: &Neighbor) -> pb::Neighbor {
    pb::Neighbor {
        card: Some(card(&n.node)),
        edge: edge_kind_to_proto(n.kind) as i32,
        direction: match n.direction {
            Direction::Outgoing => pb::Direction::Outgoing,
            Direction::Incoming => pb::Direction::Incoming,
        } as i32,
        depth: n.depth,
        line: (n.line > 0).then_some(n.line),
        confidence: match n.confidence {
            Confidence::Resolved => pb::Confidence::Resolved,
            Confidence::NameMatch => pb::Confidence::NameMatch,
            Confidence::Dispatch => pb::Confidence::Dispatch,
            Confidence::Unresolved => pb::Confidence::Unresolved,
        } as i32,
        unresolved_name: if n.confidence == Confidence::Unresolved {
            n.node.qualified_name.clone()
        } else {
            String::new()
        },
    }
}

fn omissions(omitted: &[query::Omitted]) -> Vec<Omission> {
    omitted
        .iter()
        .map(|o| Omission {
            what: o.what.clone(),
            count: o.count as u32,
            reason: o.reason.to_owned(),
        })
        .collect()
}

/// A card an answer is about, with the policy's notes that apply to it.
fn annotated(node: &Node, notes: &Notes) -> pb::SymbolCard {
    let mut card = card(node);
    annotate(&mut card, notes);
    card
}

/// An expansion request's options, its ids checked.
fn expand_options(message: &pb::ExpandRequest) -> Result<ExpandOptions, Error> {
    check_ids(&message.ids)?;
    Ok(ExpandOptions {
        kinds: edge_kinds(&message.edge_kinds)?,
        directions: directions(message.direction),
        depth: message.depth,
        limit_per_direction: limit(message.limit_per_direction),
    })
}

fn expand_response(
    expansions: Vec<query::Expansion>,
    missing: Vec<String>,
    notes: &Notes,
) -> pb::ExpandResponse {
    pb::ExpandResponse {
        expansions: expansions
            .iter()
            .map(|e| pb::Expansion {
                root: Some(annotated(&e.root, notes)),
                neighbors: e.neighbors.iter().map(neighbor).collect(),
                omitted: omissions(&e.omitted),
            })
            .collect(),
        missing,
    }
}

fn check_ids(ids: &[String]) -> Result<(), Error> {
    limits::check_count("ids", ids.len(), MAX_IDS, "ids")?;
    for id in ids {
        limits::check_bytes("ids", id, limits::SELECTOR_BYTES)?;
    }
    Ok(())
}

fn check_symbol_id(id: &str) -> Result<(), Error> {
    if id.is_empty() {
        return Err(Error::invalid_argument(
            "symbol_id",
            "symbol_id is empty: pass an id from a symbol card",
        ));
    }
    limits::check_bytes("symbol_id", id, limits::SELECTOR_BYTES)
}

impl GraphHydrator {
    async fn require_graph(
        &self,
        context: &TenantContext,
    ) -> Result<codectx_graph::RepositoryInfo, Error> {
        self.store
            .repository(context.graph_id())
            .await?
            .ok_or_else(|| {
                Error::not_found(format!(
                    "repository {} has no indexed code graph yet; index it with `codectx index`",
                    context.repository_id()
                ))
            })
    }

    /// One expansion, checked as Expand checks it.
    async fn expand_message(
        &self,
        context: &TenantContext,
        message: pb::ExpandRequest,
        notes: &Notes,
    ) -> Result<pb::ExpandResponse, Error> {
        let options = expand_options(&message)?;
        let (expansions, missing) =
            query::expand(&*self.store, context.graph_id(), &message.ids, &options).await?;
        Ok(expand_response(expansions, missing, notes))
    }

    async fn notes(&self, context: &TenantContext) -> Result<Arc<Notes>, Error> {
        self.records.notes(&*self.store, context.graph_id()).await
    }

    async fn expand_one(
        &self,
        context: &TenantContext,
        id: &str,
        options: ExpandOptions,
    ) -> Result<pb::ExpandResponse, Status> {
        check_symbol_id(id)?;
        let (expansions, missing) =
            query::expand(&*self.store, context.graph_id(), &[id.to_owned()], &options).await?;
        let notes = self.notes(context).await?;
        Ok(expand_response(expansions, missing, &notes))
    }
}

type CorpusStream = Pin<Box<dyn futures::Stream<Item = Result<pb::CorpusChunk, Status>> + Send>>;

#[tonic::async_trait]
impl GraphHydratorService for GraphHydrator {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, NAME, CAPABILITIES)
    }

    async fn lookup_symbols(
        &self,
        request: Request<pb::LookupSymbolsRequest>,
    ) -> Result<Response<pb::LookupSymbolsResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        let kinds = node_kinds(&message.kinds)?;
        let found = query::lookup(
            &*self.store,
            context.graph_id(),
            &message.selector,
            &kinds,
            limit(message.limit).min(100),
        )
        .await?;
        let notes = self.notes(&context).await?;
        Ok(Response::new(pb::LookupSymbolsResponse {
            matches: found.matches.iter().map(|n| annotated(n, &notes)).collect(),
            ambiguous: found.ambiguous,
        }))
    }

    async fn get_symbol_cards(
        &self,
        request: Request<pb::GetSymbolCardsRequest>,
    ) -> Result<Response<pb::GetSymbolCardsResponse>, Status> {
        let context = code_context(&request)?;
        let ids = request.into_inner().ids;
        check_ids(&ids)?;
        let nodes = self.store.nodes(context.graph_id(), &ids).await?;
        let by_id: BTreeMap<&str, &Node> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
        // In request order; ids not in this graph are missing (never looked up elsewhere).
        let notes = self.notes(&context).await?;
        let cards = ids
            .iter()
            .filter_map(|id| by_id.get(id.as_str()).map(|n| annotated(n, &notes)))
            .collect();
        let missing = ids
            .iter()
            .filter(|id| !by_id.contains_key(id.as_str()))
            .cloned()
            .collect();
        Ok(Response::new(pb::GetSymbolCardsResponse { cards, missing }))
    }

    async fn expand(
        &self,
        request: Request<pb::ExpandRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let context = code_context(&request)?;
        let notes = self.notes(&context).await?;
        Ok(Response::new(
            self.expand_message(&context, request.into_inner(), &notes)
                .await?,
        ))
    }

    async fn expand_batch(
        &self,
        request: Request<pb::ExpandBatchRequest>,
    ) -> Result<Response<pb::ExpandBatchResponse>, Status> {
        let context = code_context(&request)?;
        let requests = request.into_inner().requests;
        limits::check_count("requests", requests.len(), MAX_BATCH, "expansions")?;
        // Every request is checked before any is answered; the roots of all of them are
        // read in one store call (a symbol's relations share their root).
        let options = requests
            .iter()
            .map(expand_options)
            .collect::<Result<Vec<_>, Error>>()?;
        let ids: Vec<String> = requests
            .iter()
            .flat_map(|m| m.ids.iter().cloned())
            .collect();
        let roots = query::Roots::read(&*self.store, context.graph_id(), &ids).await?;
        let notes = self.notes(&context).await?;
        let asks: Vec<(&[String], &ExpandOptions)> = requests
            .iter()
            .zip(&options)
            .map(|(message, options)| (message.ids.as_slice(), options))
            .collect();
        let answers = query::expand_many(&*self.store, context.graph_id(), &asks, &roots).await?;
        let responses = answers
            .into_iter()
            .map(|(expansions, missing)| expand_response(expansions, missing, &notes))
            .collect();
        Ok(Response::new(pb::ExpandBatchResponse { responses }))
    }

    async fn get_call_graph(
        &self,
        request: Request<pb::GetCallGraphRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        let options = ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: directions(message.direction),
            depth: message.depth,
            limit_per_direction: limit(message.limit_per_direction),
        };
        Ok(Response::new(
            self.expand_one(&context, &message.symbol_id, options)
                .await?,
        ))
    }

    async fn get_implementations(
        &self,
        request: Request<pb::SymbolRelationRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        let options = ExpandOptions {
            kinds: vec![EdgeKind::Implements],
            directions: Directions::Both,
            depth: 1,
            limit_per_direction: limit(message.limit),
        };
        Ok(Response::new(
            self.expand_one(&context, &message.symbol_id, options)
                .await?,
        ))
    }

    async fn get_tests(
        &self,
        request: Request<pb::SymbolRelationRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        let options = ExpandOptions {
            kinds: vec![EdgeKind::TestedBy],
            directions: Directions::Outgoing,
            depth: 1,
            limit_per_direction: limit(message.limit),
        };
        Ok(Response::new(
            self.expand_one(&context, &message.symbol_id, options)
                .await?,
        ))
    }

    async fn get_file_outline(
        &self,
        request: Request<pb::GetFileOutlineRequest>,
    ) -> Result<Response<pb::GetFileOutlineResponse>, Status> {
        let context = code_context(&request)?;
        let path = request.into_inner().path;
        limits::check_bytes("path", &path, limits::SELECTOR_BYTES)?;
        let nodes = self
            .store
            .nodes_in_path(context.graph_id(), path.trim_start_matches("./"))
            .await?;
        let Some(file) = nodes.iter().find(|n| n.kind == NodeKind::File) else {
            return Err(
                Error::not_found(format!("{path} is not in the indexed graph"))
                    .with_field("path")
                    .into(),
            );
        };
        let symbols = nodes
            .iter()
            .filter(|n| SYMBOL_KINDS.contains(&n.kind))
            .map(card)
            .collect();
        Ok(Response::new(pb::GetFileOutlineResponse {
            file: Some(card(file)),
            symbols,
        }))
    }

    async fn get_change_impact(
        &self,
        request: Request<pb::GetChangeImpactRequest>,
    ) -> Result<Response<pb::GetChangeImpactResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        let changes: BTreeMap<String, Vec<(u32, u32)>> = match message.change {
            Some(pb::get_change_impact_request::Change::Diff(diff)) => {
                query::parse_unified_diff(&diff)?
            }
            Some(pb::get_change_impact_request::Change::Files(files)) => {
                limits::check_count(
                    "files",
                    files.paths.len(),
                    limits::FILE_LIST_ENTRIES,
                    "files",
                )?;
                let mut changes = BTreeMap::new();
                for path in files.paths {
                    limits::check_bytes("files", &path, limits::SELECTOR_BYTES)?;
                    changes.insert(path.trim_start_matches("./").to_owned(), Vec::new());
                }
                changes
            }
            None => {
                return Err(Error::invalid_argument(
                    "change",
                    "pass a unified diff or a list of files",
                )
                .into());
            }
        };
        let (changed, unknown_paths) = query::change_impact(
            &*self.store,
            context.graph_id(),
            &changes,
            limit(message.limit_per_symbol),
        )
        .await?;
        let notes = self.notes(&context).await?;
        Ok(Response::new(pb::GetChangeImpactResponse {
            changed: changed
                .iter()
                .map(|c| pb::ChangedSymbol {
                    symbol: Some(annotated(&c.symbol, &notes)),
                    callers: c.callers.iter().map(neighbor).collect(),
                    used_by: c.used_by.iter().map(neighbor).collect(),
                    tests: c.tests.iter().map(neighbor).collect(),
                    omitted: omissions(&c.omitted),
                })
                .collect(),
            unknown_paths,
        }))
    }

    async fn read_snippet(
        &self,
        request: Request<pb::ReadSnippetRequest>,
    ) -> Result<Response<pb::ReadSnippetResponse>, Status> {
        let context = code_context(&request)?;
        let message = request.into_inner();
        check_symbol_id(&message.symbol_id)?;
        let repository = self.require_graph(&context).await?;
        let node = self
            .store
            .nodes(context.graph_id(), std::slice::from_ref(&message.symbol_id))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::not_found(format!(
                    "no symbol {} in this repository",
                    message.symbol_id
                ))
                .with_field("symbol_id")
            })?;
        let root = repository.root.clone();
        let fingerprint = message.fingerprint.clone();
        let checked = node.clone();
        let text =
            tokio::task::spawn_blocking(move || snippet::read(&root, &checked, &fingerprint))
                .await
                .map_err(|e| Error::internal(format!("snippet reader: {e}")))??;
        let notes = Notes::from_policy_json(&repository.policy);
        Ok(Response::new(pb::ReadSnippetResponse {
            symbol: Some(annotated(&node, &notes)),
            text,
        }))
    }

    type StreamLexicalCorpusStream = CorpusStream;

    async fn stream_lexical_corpus(
        &self,
        request: Request<pb::StreamLexicalCorpusRequest>,
    ) -> Result<Response<Self::StreamLexicalCorpusStream>, Status> {
        if request.get_ref().scope == ScopeKind::Memory as i32 {
            let context = from_request(&request)?;
            context.require_scope(Scope::ReadMemory)?;
            let version = self
                .store
                .memory_version(context.tenant_id(), context.namespace())
                .await?;
            let entities = self
                .store
                .memory_corpus(context.tenant_id(), context.namespace())
                .await?;
            let mut chunks: Vec<Result<pb::CorpusChunk, Status>> = entities
                .chunks(CORPUS_CHUNK)
                .map(|chunk| {
                    Ok(pb::CorpusChunk {
                        version: version.clone(),
                        entries: chunk
                            .iter()
                            .map(|d| pb::CorpusEntry {
                                entity_id: d.entity.id.clone(),
                                name: d.entity.name.clone(),
                                qualified_name: d.entity.name.clone(),
                                kind: d.entity.entity_type.clone(),
                                signature: String::new(),
                                aliases: d.entity.aliases.clone(),
                                error_messages: Vec::new(),
                                summary: String::new(),
                                facts: d.facts.clone(),
                                predicates: d.predicates.clone(),
                                ..Default::default()
                            })
                            .collect(),
                    })
                })
                .collect();
            if chunks.is_empty() {
                chunks.push(Ok(pb::CorpusChunk {
                    version,
                    entries: Vec::new(),
                }));
            }
            return Ok(Response::new(Box::pin(tokio_stream::iter(chunks))));
        }
        let context = code_context(&request)?;
        let with_neighbours = request.get_ref().with_neighbours;
        let repository = self.require_graph(&context).await?;
        let corpus = CodeCorpus::new(
            self.store.clone(),
            context.graph_id(),
            repository.version,
            with_neighbours,
        );
        Ok(Response::new(Box::pin(corpus.stream())))
    }

    async fn describe_graph(
        &self,
        request: Request<pb::DescribeGraphRequest>,
    ) -> Result<Response<pb::DescribeGraphResponse>, Status> {
        let context = code_context(&request)?;
        let with_languages = request.get_ref().languages;
        let repository = self.require_graph(&context).await?;
        let languages = if with_languages {
            self.store.language_counts(context.graph_id()).await?
        } else {
            Vec::new()
        };
        let staleness = tokio::task::spawn_blocking({
            let repository = repository.clone();
            move || staleness(&repository)
        })
        .await
        .map_err(|e| Error::internal(format!("freshness: {e}")))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let annotations = Notes::from_policy_json(&repository.policy)
            .annotations()
            .len();
        Ok(Response::new(pb::DescribeGraphResponse {
            version: repository.version,
            policy_fingerprint: repository.policy_fingerprint,
            annotations: annotations as u32,
            stale: staleness.since().is_some(),
            stale_seconds: staleness.since().map_or(0, |at| (now - at).max(0)),
            stale_reason: staleness.reason().to_owned(),
            name: repository.name,
            commit: repository.commit,
            indexed_at: repository.indexed_at,
            languages: languages
                .into_iter()
                .map(|l| pb::LanguageCount {
                    language: l.language,
                    files: l.files,
                    symbols: l.symbols,
                    tests: l.tests,
                })
                .collect(),
        }))
    }

    async fn get_corpus_version(
        &self,
        request: Request<pb::GetCorpusVersionRequest>,
    ) -> Result<Response<pb::GetCorpusVersionResponse>, Status> {
        if request.get_ref().scope == ScopeKind::Memory as i32 {
            let context = from_request(&request)?;
            context.require_scope(Scope::ReadMemory)?;
            let version = self
                .store
                .memory_version(context.tenant_id(), context.namespace())
                .await?;
            return Ok(Response::new(pb::GetCorpusVersionResponse { version }));
        }
        let context = code_context(&request)?;
        let repository = self.require_graph(&context).await?;
        Ok(Response::new(pb::GetCorpusVersionResponse {
            version: repository.version,
        }))
    }

    async fn upsert_memory_entities(
        &self,
        request: Request<pb::UpsertMemoryEntitiesRequest>,
    ) -> Result<Response<pb::UpsertMemoryEntitiesResponse>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::WriteMemory)?;
        let message = request.into_inner();
        limits::check_count("entities", message.entities.len(), 32, "entities")?;
        let inputs: Vec<EntityInput> = message
            .entities
            .into_iter()
            .map(|e| EntityInput {
                name: e.name,
                entity_type: e.r#type,
                aliases: e.aliases,
                facts: e
                    .facts
                    .into_iter()
                    .map(|f| FactInput {
                        predicate: f.predicate,
                        object: f.object,
                        subject: f.subject,
                    })
                    .collect(),
            })
            .collect();
        let source = if message.source_client.is_empty() {
            "unknown".to_owned()
        } else {
            message.source_client
        };
        limits::check_bytes("source_client", &source, 256)?;
        let entities = self
            .store
            .remember(
                context.tenant_id(),
                context.namespace(),
                &inputs,
                &source,
                now(),
            )
            .await?;
        Ok(Response::new(pb::UpsertMemoryEntitiesResponse {
            entities: entities.iter().map(memory_entity).collect(),
        }))
    }

    async fn forget_memory_entity(
        &self,
        request: Request<pb::ForgetMemoryEntityRequest>,
    ) -> Result<Response<pb::ForgetMemoryEntityResponse>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::WriteMemory)?;
        let name = request.into_inner().name;
        if name.trim().is_empty() {
            return Err(Error::invalid_argument("name", "name the entity to forget").into());
        }
        limits::check_bytes("name", &name, codectx_graph::memory::MAX_NAME_BYTES)?;
        let forgotten = self
            .store
            .forget(context.tenant_id(), context.namespace(), &name)
            .await?;
        let (entity_id, facts_removed) = forgotten.unwrap_or_default();
        Ok(Response::new(pb::ForgetMemoryEntityResponse {
            entity_id,
            facts_removed: facts_removed as u32,
        }))
    }

    async fn hydrate_memory_entities(
        &self,
        request: Request<pb::HydrateMemoryEntitiesRequest>,
    ) -> Result<Response<pb::HydrateMemoryEntitiesResponse>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadMemory)?;
        let ids = request.into_inner().ids;
        check_ids(&ids)?;
        let entities = self
            .store
            .memory_entities(context.tenant_id(), context.namespace(), &ids)
            .await?;
        let found: std::collections::HashSet<&str> =
            entities.iter().map(|e| e.id.as_str()).collect();
        let missing = ids
            .iter()
            .filter(|id| !found.contains(id.as_str()))
            .cloned()
            .collect();
        Ok(Response::new(pb::HydrateMemoryEntitiesResponse {
            entities: entities.iter().map(memory_entity).collect(),
            missing,
        }))
    }

    async fn expand_facts(
        &self,
        request: Request<pb::ExpandFactsRequest>,
    ) -> Result<Response<pb::ExpandFactsResponse>, Status> {
        let context = from_request(&request)?;
        context.require_scope(Scope::ReadMemory)?;
        let message = request.into_inner();
        check_ids(&message.ids)?;
        let hops = message.hops.clamp(1, limits::RECALL_MAX_HOPS);
        let limit = if message.fact_limit == 0 {
            limits::RECALL_MAX_FACTS
        } else {
            (message.fact_limit as usize).min(limits::RECALL_MAX_FACTS)
        };
        let (facts, truncated) = self
            .store
            .memory_facts(
                context.tenant_id(),
                context.namespace(),
                &message.ids,
                hops,
                limit,
            )
            .await?;
        Ok(Response::new(pb::ExpandFactsResponse {
            facts: facts
                .into_iter()
                .map(|f| pb::FactEdge {
                    subject_id: f.subject_id,
                    subject: f.subject,
                    hop: f.hop,
                    fact: Some(pb::MemoryFact {
                        predicate: f.predicate,
                        object: f.object,
                        confidence: f.confidence,
                        source_client: f.source_client,
                        created_at: f.created_at,
                        updated_at: f.updated_at,
                        valid_to: f.valid_to,
                    }),
                })
                .collect(),
            truncated,
        }))
    }
}

fn memory_entity(e: &MemoryEntity) -> pb::MemoryEntity {
    pb::MemoryEntity {
        id: e.id.clone(),
        name: e.name.clone(),
        r#type: e.entity_type.clone(),
        aliases: e.aliases.clone(),
        created_at: e.created_at,
        updated_at: e.updated_at,
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
