//! graph-hydrator: The only service that reads and writes the code and memory graph.
//!
//! This build serves `Describe` (the scope the service verified for the caller); the
//! other RPCs belong to the code graph capability and answer UNIMPLEMENTED, after the
//! tenant context has been verified, until that capability lands.

use codectx_errors::Error;

use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::graph::v1::{self as pb, graph_hydrator_service_server};
use codectx_runtime::{BuiltService, Readiness, ServerConfig, TenantConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::from_request;
use serde::{Deserialize, Serialize};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// Service name in logs, spans and the environment prefix `CODECTX_GRAPH_HYDRATOR__`.
pub const NAME: &str = "graph-hydrator";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50055;

const CAPABILITY: &str = "code graph";

/// Capabilities this build implements (reported by `Describe`).
const CAPABILITIES: &[&str] = &["describe"];

/// Configuration: defaults, then the TOML file, then `CODECTX_GRAPH_HYDRATOR__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    pub tenant: TenantConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            tenant: TenantConfig::default(),
        }
    }
}

/// Builds the service's routes; it is ready as soon as it is built.
pub async fn build(config: Config) -> Result<BuiltService, Error> {
    let _ = config;
    let service = GraphHydrator {};
    Ok(BuiltService {
        name: NAME,
        grpc_name: graph_hydrator_service_server::SERVICE_NAME,
        routes: Routes::new(
            graph_hydrator_service_server::GraphHydratorServiceServer::new(service),
        ),
        exempt_paths: Vec::new(),
        readiness: Readiness::new(true),
    })
}

struct GraphHydrator {}

#[tonic::async_trait]
impl graph_hydrator_service_server::GraphHydratorService for GraphHydrator {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let context = from_request(&request)?;
        Ok(Response::new(codectx_runtime::describe(
            NAME,
            CAPABILITIES,
            &context,
        )))
    }

    async fn lookup_symbols(
        &self,
        request: Request<pb::LookupSymbolsRequest>,
    ) -> Result<Response<pb::LookupSymbolsResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("LookupSymbols", CAPABILITY).into())
    }

    async fn get_symbol_cards(
        &self,
        request: Request<pb::GetSymbolCardsRequest>,
    ) -> Result<Response<pb::GetSymbolCardsResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetSymbolCards", CAPABILITY).into())
    }

    async fn expand(
        &self,
        request: Request<pb::ExpandRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("Expand", CAPABILITY).into())
    }

    async fn get_call_graph(
        &self,
        request: Request<pb::GetCallGraphRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetCallGraph", CAPABILITY).into())
    }

    async fn get_implementations(
        &self,
        request: Request<pb::SymbolRelationRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetImplementations", CAPABILITY).into())
    }

    async fn get_tests(
        &self,
        request: Request<pb::SymbolRelationRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetTests", CAPABILITY).into())
    }

    async fn get_file_outline(
        &self,
        request: Request<pb::GetFileOutlineRequest>,
    ) -> Result<Response<pb::GetFileOutlineResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetFileOutline", CAPABILITY).into())
    }

    async fn get_change_impact(
        &self,
        request: Request<pb::GetChangeImpactRequest>,
    ) -> Result<Response<pb::GetChangeImpactResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetChangeImpact", CAPABILITY).into())
    }

    async fn read_snippet(
        &self,
        request: Request<pb::ReadSnippetRequest>,
    ) -> Result<Response<pb::ReadSnippetResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("ReadSnippet", CAPABILITY).into())
    }

    async fn get_corpus_version(
        &self,
        request: Request<pb::GetCorpusVersionRequest>,
    ) -> Result<Response<pb::GetCorpusVersionResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("GetCorpusVersion", CAPABILITY).into())
    }

    async fn upsert_memory_entities(
        &self,
        request: Request<pb::UpsertMemoryEntitiesRequest>,
    ) -> Result<Response<pb::UpsertMemoryEntitiesResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("UpsertMemoryEntities", CAPABILITY).into())
    }

    async fn forget_memory_entity(
        &self,
        request: Request<pb::ForgetMemoryEntityRequest>,
    ) -> Result<Response<pb::ForgetMemoryEntityResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("ForgetMemoryEntity", CAPABILITY).into())
    }

    async fn hydrate_memory_entities(
        &self,
        request: Request<pb::HydrateMemoryEntitiesRequest>,
    ) -> Result<Response<pb::HydrateMemoryEntitiesResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("HydrateMemoryEntities", CAPABILITY).into())
    }

    async fn expand_facts(
        &self,
        request: Request<pb::ExpandFactsRequest>,
    ) -> Result<Response<pb::ExpandFactsResponse>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("ExpandFacts", CAPABILITY).into())
    }

    type StreamLexicalCorpusStream =
        std::pin::Pin<Box<dyn futures::Stream<Item = Result<pb::CorpusChunk, Status>> + Send>>;

    async fn stream_lexical_corpus(
        &self,
        request: Request<pb::StreamLexicalCorpusRequest>,
    ) -> Result<Response<Self::StreamLexicalCorpusStream>, Status> {
        let _context = from_request(&request)?;
        Err(Error::unimplemented("StreamLexicalCorpus", CAPABILITY).into())
    }
}
