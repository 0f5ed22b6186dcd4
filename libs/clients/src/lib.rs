//! Clients for calling codectx services. Every call that needs a tenant context takes
//! `&TenantContext` as its first argument and forwards the signed bytes unchanged, so a
//! service cannot forget to propagate it: the raw generated clients are not exposed.
//!
//! A peer's endpoints are a static list (addresses or DNS names) or the ready endpoints
//! of a Kubernetes Service's EndpointSlices ([`discovery`]); several endpoints are
//! balanced per request ([`balance`]). Idempotent reads are retried on another endpoint
//! when one answers UNAVAILABLE (a connection that failed, a pod that went away).

pub mod balance;
pub mod discovery;
pub mod local;

use std::time::Duration;

use codectx_errors::Error;
use codectx_proto::{assembler, authz, common, embedding, gateway, graph, lexical, vector};
use codectx_tenant::TenantContext;
use serde::{Deserialize, Serialize};
use tonic::transport::Endpoint;

pub use balance::PeerChannel;
pub use discovery::{Discovery, KubernetesService};

/// Where a peer service is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct PeerConfig {
    /// `static` (the `endpoints` list) or `kubernetes` (the `kubernetes` Service's
    /// EndpointSlices).
    pub discovery: Discovery,
    /// One or more `http://host:port` endpoints; several are balanced per request. Or one
    /// `inproc://NAME`: a service in this process ([`local`]; `codectx up` sets these).
    pub endpoints: Vec<String>,
    /// With `discovery = "kubernetes"`: the Service to watch.
    pub kubernetes: KubernetesService,
    /// Connect timeout in milliseconds (0: 2,000).
    pub connect_timeout_ms: u64,
    /// TLS to this peer (endpoints are then `https://`).
    pub tls: PeerTls,
}

/// TLS settings for calling a peer: the CA that signed its certificate, and this
/// service's own certificate when the peer asks for one (mTLS). Files are read when the
/// channel is built.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct PeerTls {
    /// PEM CA bundle that verifies the peer; set to turn TLS on.
    pub ca_file: String,
    /// This service's PEM certificate and key, for peers that require client certificates.
    pub cert_file: String,
    pub key_file: String,
    /// The name the peer's certificate must carry; empty: the endpoint's host.
    pub domain_name: String,
}

impl PeerTls {
    pub fn enabled(&self) -> bool {
        !self.ca_file.is_empty()
    }
}

/// An endpoint for `uri`, with TLS when `tls` is set.
pub fn endpoint(service: &str, uri: &str, tls: &PeerTls) -> Result<Endpoint, Error> {
    let invalid = |message: String| Error::invalid_argument("peers", message);
    let mut endpoint = Endpoint::from_shared(uri.to_owned())
        .map_err(|e| invalid(format!("{service} endpoint {uri:?}: {e}")))?;
    if tls.enabled() {
        let read = |path: &str| {
            std::fs::read(path).map_err(|e| invalid(format!("{service} TLS file {path}: {e}")))
        };
        let mut config = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(read(&tls.ca_file)?));
        if !tls.cert_file.is_empty() {
            config = config.identity(tonic::transport::Identity::from_pem(
                read(&tls.cert_file)?,
                read(&tls.key_file)?,
            ));
        }
        if !tls.domain_name.is_empty() {
            config = config.domain_name(tls.domain_name.clone());
        }
        endpoint = endpoint
            .tls_config(config)
            .map_err(|e| invalid(format!("{service} TLS: {e}")))?;
    }
    Ok(endpoint)
}

impl PeerConfig {
    pub fn single(endpoint: impl Into<String>) -> Self {
        Self {
            endpoints: vec![endpoint.into()],
            ..Self::default()
        }
    }
}

/// A lazily connecting channel for `peer`: creating it never blocks on the network.
/// Several endpoints, or Kubernetes discovery, need a Tokio runtime (the balancer and
/// the watch run as tasks).
pub fn channel(service: &str, peer: &PeerConfig) -> Result<PeerChannel, Error> {
    let timeout = Duration::from_millis(if peer.connect_timeout_ms == 0 {
        2_000
    } else {
        peer.connect_timeout_ms
    });
    match peer.discovery {
        Discovery::Static => {
            if peer.endpoints.is_empty() {
                return Err(Error::invalid_argument(
                    "peers",
                    format!(
                        "no endpoint configured for {service}; set peers.<service>.endpoints \
                         (or discovery = \"kubernetes\" with kubernetes.service)"
                    ),
                ));
            }
            if let Some(name) = peer.endpoints.iter().find_map(|uri| local::name_of(uri)) {
                if peer.endpoints.len() > 1 || peer.tls.enabled() {
                    return Err(Error::invalid_argument(
                        "peers",
                        format!(
                            "{service}: an in-process endpoint ({}{name}) must be the only \
                             endpoint, without TLS",
                            local::SCHEME
                        ),
                    ));
                }
                return Ok(PeerChannel::in_process(name));
            }
            let mut endpoints = std::collections::BTreeMap::new();
            for uri in &peer.endpoints {
                endpoints.insert(
                    uri.clone(),
                    configured_endpoint(service, uri, &peer.tls, timeout)?,
                );
            }
            if endpoints.len() == 1 {
                let (uri, endpoint) = endpoints.into_iter().next().expect("one endpoint");
                return Ok(PeerChannel::direct(&uri, endpoint));
            }
            let (channel, updates) = PeerChannel::balanced(service);
            updates.replace(endpoints);
            Ok(channel)
        }
        Discovery::Kubernetes => {
            if peer.kubernetes.service.is_empty() {
                return Err(Error::invalid_argument(
                    "peers",
                    format!(
                        "{service} uses discovery = \"kubernetes\" but names no Service; \
                         set peers.<service>.kubernetes.service"
                    ),
                ));
            }
            // Certificates name the Service, not the pod address that is dialled.
            let mut tls = peer.tls.clone();
            if tls.enabled() && tls.domain_name.is_empty() {
                tls.domain_name = peer.kubernetes.service.clone();
            }
            let scheme = if tls.enabled() { "https" } else { "http" };
            let service_name = service.to_owned();
            let configure = move |uri: &str| configured_endpoint(&service_name, uri, &tls, timeout);
            let (channel, updates) = PeerChannel::balanced(service);
            discovery::spawn_kubernetes_watch(
                service.to_owned(),
                peer.kubernetes.clone(),
                scheme,
                configure,
                updates,
            );
            Ok(channel)
        }
    }
}

fn configured_endpoint(
    service: &str,
    uri: &str,
    tls: &PeerTls,
    timeout: Duration,
) -> Result<Endpoint, Error> {
    Ok(endpoint(service, uri, tls)?
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_while_idle(true))
}

/// How many times an idempotent read is sent when an endpoint answers UNAVAILABLE.
const READ_ATTEMPTS: usize = 3;

/// Sends `call` once, or for idempotent reads up to [`READ_ATTEMPTS`] times while the
/// answer is UNAVAILABLE (the balancer has ejected the failed endpoint by then), except
/// a peer's own "still loading" answer ([`Error::loading`]), which is returned at once.
/// Each call is one client span (`otel.kind = client`, named `Client.method`); the
/// request carries its W3C context, so the peer's server span is its child.
async fn send<Req, T, F, Fut>(
    idempotent: bool,
    name: &'static str,
    request: Req,
    call: F,
) -> Result<T, Error>
where
    Req: Clone,
    F: FnMut(Req) -> Fut,
    Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    use tracing::Instrument;
    let span = tracing::info_span!(
        "grpc.client",
        otel.name = name,
        otel.kind = "client",
        rpc.system = "grpc",
        error.kind = tracing::field::Empty,
        attempts = tracing::field::Empty,
    );
    let recorder = span.clone();
    let result = attempt(idempotent, request, call).instrument(span).await;
    if let Err(error) = &result {
        recorder.record("error.kind", tracing::field::debug(error.kind()));
    }
    result
}

async fn attempt<Req, T, F, Fut>(idempotent: bool, request: Req, mut call: F) -> Result<T, Error>
where
    Req: Clone,
    F: FnMut(Req) -> Fut,
    Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    let attempts = if idempotent { READ_ATTEMPTS } else { 1 };
    let mut request = Some(request);
    let mut attempt = 1;
    loop {
        // The last attempt sends the request itself; earlier ones a copy.
        let this = match request.take() {
            Some(r) if attempt < attempts => {
                request = Some(r.clone());
                r
            }
            Some(r) => r,
            None => unreachable!("the request is kept until the last attempt"),
        };
        match call(this).await {
            Ok(response) => return Ok(response.into_inner()),
            // A live peer that answered "still loading" already waited for its load and
            // said when to ask again: sending the request again would wait as long again,
            // past the caller's deadline. Only a failed endpoint is worth another attempt.
            Err(status)
                if status.code() == tonic::Code::Unavailable
                    && attempt < attempts
                    && !Error::from_status(&status).is_loading() =>
            {
                tracing::debug!(%status, attempt, "peer unavailable; retrying the read");
                attempt += 1;
                tracing::Span::current().record("attempts", attempt);
            }
            Err(status) => return Err(status.into()),
        }
    }
}

/// A request carrying the signed context and the current W3C trace context.
pub fn request_with_context<T>(context: &TenantContext, message: T) -> tonic::Request<T> {
    let mut request = plain_request(message);
    context.attach(&mut request);
    request
}

fn plain_request<T>(message: T) -> tonic::Request<T> {
    let mut headers = http::HeaderMap::new();
    codectx_telemetry::inject_current(&mut headers);
    let mut request = tonic::Request::new(message);
    for (name, value) in headers.iter() {
        if let Ok(value) = value.to_str()
            && let (Ok(key), Ok(value)) = (
                tonic::metadata::MetadataKey::from_bytes(name.as_str().as_bytes()),
                value.parse::<tonic::metadata::MetadataValue<_>>(),
            )
        {
            request.metadata_mut().insert(key, value);
        }
    }
    request
}

/// `read` calls change nothing and may be sent again; `write` calls are sent once.
macro_rules! idempotent {
    (read) => {
        true
    };
    (write) => {
        false
    };
}

/// Declares a client whose every RPC takes `&TenantContext`.
macro_rules! context_client {
    (
        $(#[$doc:meta])*
        $name:ident($generated:ty) {
            $( $kind:ident $method:ident($request:ty) -> $response:ty; )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name {
            inner: $generated,
        }

        impl $name {
            pub fn new(channel: PeerChannel) -> Self {
                Self {
                    inner: <$generated>::new(channel)
                        .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
                }
            }

            pub fn connect(peer: &PeerConfig) -> Result<Self, Error> {
                Ok(Self::new(channel(stringify!($name), peer)?))
            }

            $(
                pub async fn $method(
                    &self,
                    context: &TenantContext,
                    request: $request,
                ) -> Result<$response, Error> {
                    send(idempotent!($kind), concat!(stringify!($name), ".", stringify!($method)), request, |request| {
                        let mut inner = self.inner.clone();
                        let request = request_with_context(context, request);
                        async move { inner.$method(request).await }
                    })
                    .await
                }
            )*
        }
    };
}

type LexicalGenerated =
    lexical::v1::lexical_ranker_service_client::LexicalRankerServiceClient<PeerChannel>;
type EmbeddingGenerated =
    embedding::v1::embedding_service_client::EmbeddingServiceClient<PeerChannel>;
type VectorGenerated =
    vector::v1::vector_gateway_service_client::VectorGatewayServiceClient<PeerChannel>;
type GraphGenerated =
    graph::v1::graph_hydrator_service_client::GraphHydratorServiceClient<PeerChannel>;
type AssemblerGenerated =
    assembler::v1::context_assembler_service_client::ContextAssemblerServiceClient<PeerChannel>;
type GatewayGenerated = gateway::v1::gateway_service_client::GatewayServiceClient<PeerChannel>;
type AuthzGenerated = authz::v1::authz_service_client::AuthzServiceClient<PeerChannel>;

context_client! {
    /// lexical-ranker: exact lookup and BM25.
    LexicalClient(LexicalGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        read exact_lookup(lexical::v1::ExactLookupRequest) -> lexical::v1::CandidateList;
        read rank(lexical::v1::RankRequest) -> lexical::v1::CandidateList;
        write invalidate_scope(lexical::v1::InvalidateScopeRequest) -> lexical::v1::InvalidateScopeResponse;
    }
}

context_client! {
    /// embedding: local sentence embeddings.
    EmbeddingClient(EmbeddingGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        read get_model_info(embedding::v1::GetModelInfoRequest) -> embedding::v1::ModelIdentity;
        read embed(embedding::v1::EmbedRequest) -> embedding::v1::EmbedResponse;
    }
}

context_client! {
    /// vector-gateway: dense nearest neighbours.
    VectorClient(VectorGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        write upsert(vector::v1::UpsertRequest) -> vector::v1::UpsertResponse;
        write delete(vector::v1::DeleteRequest) -> vector::v1::DeleteResponse;
        read nearest(vector::v1::NearestRequest) -> vector::v1::NearestResponse;
        read list_ids(vector::v1::ListIdsRequest) -> vector::v1::ListIdsResponse;
        read hybrid(vector::v1::HybridRequest) -> vector::v1::NearestResponse;
    }
}

context_client! {
    /// graph-hydrator: the code and memory graph.
    GraphClient(GraphGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        read lookup_symbols(graph::v1::LookupSymbolsRequest) -> graph::v1::LookupSymbolsResponse;
        read get_symbol_cards(graph::v1::GetSymbolCardsRequest) -> graph::v1::GetSymbolCardsResponse;
        read describe_graph(graph::v1::DescribeGraphRequest) -> graph::v1::DescribeGraphResponse;
        read expand(graph::v1::ExpandRequest) -> graph::v1::ExpandResponse;
        read expand_batch(graph::v1::ExpandBatchRequest) -> graph::v1::ExpandBatchResponse;
        read get_call_graph(graph::v1::GetCallGraphRequest) -> graph::v1::ExpandResponse;
        read get_implementations(graph::v1::SymbolRelationRequest) -> graph::v1::ExpandResponse;
        read get_tests(graph::v1::SymbolRelationRequest) -> graph::v1::ExpandResponse;
        read get_file_outline(graph::v1::GetFileOutlineRequest) -> graph::v1::GetFileOutlineResponse;
        read get_change_impact(graph::v1::GetChangeImpactRequest) -> graph::v1::GetChangeImpactResponse;
        read read_snippet(graph::v1::ReadSnippetRequest) -> graph::v1::ReadSnippetResponse;
        read get_corpus_version(graph::v1::GetCorpusVersionRequest) -> graph::v1::GetCorpusVersionResponse;
        write upsert_memory_entities(graph::v1::UpsertMemoryEntitiesRequest) -> graph::v1::UpsertMemoryEntitiesResponse;
        write forget_memory_entity(graph::v1::ForgetMemoryEntityRequest) -> graph::v1::ForgetMemoryEntityResponse;
        read hydrate_memory_entities(graph::v1::HydrateMemoryEntitiesRequest) -> graph::v1::HydrateMemoryEntitiesResponse;
        read expand_facts(graph::v1::ExpandFactsRequest) -> graph::v1::ExpandFactsResponse;
    }
}

impl GraphClient {
    /// The lexical corpus of the caller's scope, as a stream of chunks.
    pub async fn stream_lexical_corpus(
        &self,
        context: &TenantContext,
        request: graph::v1::StreamLexicalCorpusRequest,
    ) -> Result<tonic::Streaming<graph::v1::CorpusChunk>, Error> {
        let mut inner = self.inner.clone();
        Ok(inner
            .stream_lexical_corpus(request_with_context(context, request))
            .await?
            .into_inner())
    }
}

context_client! {
    /// context-assembler: budgeted answers.
    AssemblerClient(AssemblerGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        read minimal_context(assembler::v1::MinimalContextRequest) -> assembler::v1::ContextAnswer;
        read symbol_context(assembler::v1::SymbolContextRequest) -> assembler::v1::ContextAnswer;
        read call_graph(assembler::v1::CallGraphRequest) -> assembler::v1::ContextAnswer;
        read pr_context(assembler::v1::PrContextRequest) -> assembler::v1::ContextAnswer;
        read search(assembler::v1::SearchRequest) -> assembler::v1::ContextAnswer;
        read code_snippet(assembler::v1::CodeSnippetRequest) -> assembler::v1::ContextAnswer;
        read describe_repository(assembler::v1::DescribeRepositoryRequest) -> assembler::v1::ContextAnswer;
        read recall(assembler::v1::RecallRequest) -> assembler::v1::ContextAnswer;
        write remember(assembler::v1::RememberRequest) -> assembler::v1::ContextAnswer;
        write forget(assembler::v1::ForgetRequest) -> assembler::v1::ContextAnswer;
    }
}

context_client! {
    /// gateway's internal gRPC surface.
    GatewayClient(GatewayGenerated) {
        read describe(common::v1::DescribeRequest) -> common::v1::DescribeResponse;
        read get_compression_stats(gateway::v1::GetCompressionStatsRequest) -> gateway::v1::CompressionStats;
    }
}

/// authz. Authentication calls carry the agent's credential in the request; admin calls
/// carry an admin API key as `authorization: Bearer`; only DeriveSessionContext and
/// Describe need a context.
#[derive(Debug, Clone)]
pub struct AuthzClient {
    inner: AuthzGenerated,
}

macro_rules! authz_calls {
    (plain { $( $method:ident($request:ty) -> $response:ty; )* }
     admin { $( $admin:ident($admin_request:ty) -> $admin_response:ty; )* }) => {
        impl AuthzClient {
            $(
                pub async fn $method(&self, request: $request) -> Result<$response, Error> {
                    send(true, concat!("AuthzClient.", stringify!($method)), request, |request| {
                        let mut inner = self.inner.clone();
                        async move { inner.$method(plain_request(request)).await }
                    })
                    .await
                }
            )*
            $(
                /// Admin call, authorized by `admin_api_key`.
                pub async fn $admin(&self, admin_api_key: &str, request: $admin_request) -> Result<$admin_response, Error> {
                    let mut inner = self.inner.clone();
                    Ok(inner.$admin(admin_request(admin_api_key, request)?).await?.into_inner())
                }
            )*
        }
    };
}

fn admin_request<T>(api_key: &str, message: T) -> Result<tonic::Request<T>, Error> {
    let mut request = plain_request(message);
    let value = format!("Bearer {api_key}").parse().map_err(|_| {
        Error::invalid_argument(
            "api_key",
            "the API key has characters not allowed in a header",
        )
    })?;
    request.metadata_mut().insert("authorization", value);
    Ok(request)
}

impl AuthzClient {
    pub fn new(channel: PeerChannel) -> Self {
        Self {
            inner: AuthzGenerated::new(channel),
        }
    }

    pub fn connect(peer: &PeerConfig) -> Result<Self, Error> {
        Ok(Self::new(channel("authz", peer)?))
    }

    pub async fn describe(
        &self,
        context: &TenantContext,
    ) -> Result<common::v1::DescribeResponse, Error> {
        send(
            true,
            "AuthzClient.describe",
            common::v1::DescribeRequest {},
            |request| {
                let mut inner = self.inner.clone();
                let request = request_with_context(context, request);
                async move { inner.describe(request).await }
            },
        )
        .await
    }

    pub async fn derive_session_context(
        &self,
        context: &TenantContext,
        request: authz::v1::DeriveSessionContextRequest,
    ) -> Result<authz::v1::AuthorizeResponse, Error> {
        send(
            true,
            "AuthzClient.derive_session_context",
            request,
            |request| {
                let mut inner = self.inner.clone();
                let request = request_with_context(context, request);
                async move { inner.derive_session_context(request).await }
            },
        )
        .await
    }
}

authz_calls! {
    plain {
        authenticate(authz::v1::AuthenticateRequest) -> authz::v1::AuthenticateResponse;
        authorize(authz::v1::AuthorizeRequest) -> authz::v1::AuthorizeResponse;
        list_accessible_repositories(authz::v1::ListAccessibleRepositoriesRequest) -> authz::v1::ListAccessibleRepositoriesResponse;
        get_verification_keys(authz::v1::GetVerificationKeysRequest) -> authz::v1::GetVerificationKeysResponse;
    }
    admin {
        create_organisation(authz::v1::CreateOrganisationRequest) -> authz::v1::Organisation;
        list_organisations(authz::v1::ListOrganisationsRequest) -> authz::v1::ListOrganisationsResponse;
        create_team(authz::v1::CreateTeamRequest) -> authz::v1::Team;
        list_teams(authz::v1::ListTeamsRequest) -> authz::v1::ListTeamsResponse;
        add_team_member(authz::v1::TeamMemberRequest) -> authz::v1::Team;
        remove_team_member(authz::v1::TeamMemberRequest) -> authz::v1::Team;
        create_subject(authz::v1::CreateSubjectRequest) -> authz::v1::Subject;
        list_subjects(authz::v1::ListSubjectsRequest) -> authz::v1::ListSubjectsResponse;
        create_api_key(authz::v1::CreateApiKeyRequest) -> authz::v1::CreateApiKeyResponse;
        list_api_keys(authz::v1::ListApiKeysRequest) -> authz::v1::ListApiKeysResponse;
        revoke_api_key(authz::v1::RevokeApiKeyRequest) -> authz::v1::ApiKey;
        create_repository(authz::v1::CreateRepositoryRequest) -> authz::v1::AccessRepository;
        list_repositories(authz::v1::ListRepositoriesRequest) -> authz::v1::ListRepositoriesResponse;
        delete_repository(authz::v1::DeleteRepositoryRequest) -> authz::v1::AccessRepository;
        create_grant(authz::v1::CreateGrantRequest) -> authz::v1::Grant;
        list_grants(authz::v1::ListGrantsRequest) -> authz::v1::ListGrantsResponse;
        revoke_grant(authz::v1::RevokeGrantRequest) -> authz::v1::Grant;
        register_indexed_graph(authz::v1::RegisterIndexedGraphRequest) -> authz::v1::AccessRepository;
        share_graph(authz::v1::ShareGraphRequest) -> authz::v1::PublicGraph;
        list_public_graphs(authz::v1::ListPublicGraphsRequest) -> authz::v1::ListPublicGraphsResponse;
        link_identity(authz::v1::IdentityRequest) -> authz::v1::Identity;
        unlink_identity(authz::v1::IdentityRequest) -> authz::v1::Identity;
    }
}

/// The credential an `Authorization: Bearer` value carries: a JWT when it has the shape
/// of a compact JWS (a base64url JSON header `eyJ...` and exactly three dot-separated
/// parts), an API key otherwise (`cxk_...`, or a key imported with any other spelling).
pub fn bearer_credential(bearer: &str) -> authz::v1::Credential {
    let looks_like_jwt = bearer.starts_with("eyJ") && bearer.split('.').count() == 3;
    if looks_like_jwt {
        authz::v1::Credential {
            kind: Some(authz::v1::credential::Kind::BearerToken(bearer.to_owned())),
        }
    } else {
        api_key_credential(bearer)
    }
}

/// A credential for an API key.
pub fn api_key_credential(api_key: &str) -> authz::v1::Credential {
    authz::v1::Credential {
        kind: Some(authz::v1::credential::Kind::ApiKey(api_key.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the calls `attempt` makes while every one answers `status`.
    fn attempts_for(status: tonic::Status) -> usize {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let result: Result<(), Error> = runtime.block_on(attempt(true, (), |()| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let status = status.clone();
            async move { Err(status) }
        }));
        assert!(result.is_err());
        calls.into_inner()
    }

    /// A read is sent again when its endpoint failed (a transport status, without codectx
    /// detail: the balancer ejects the endpoint), but not when a live peer answered that
    /// what the read needs is still loading: that answer already waited its peer's load
    /// wait and says when to ask again, and sending it twice more made a 6 s wait into
    /// 18 s, past the 10 s operation deadline (the agent heard "narrow the request").
    #[test]
    fn a_failed_endpoint_is_retried_and_a_loading_answer_is_not() {
        assert_eq!(
            attempts_for(tonic::Status::unavailable("tcp connect error")),
            READ_ATTEMPTS
        );
        let loading =
            Error::unavailable("the lexical index is still loading; retry in a few seconds")
                .with_reason("loading");
        assert_eq!(attempts_for(loading.to_status()), 1);
    }

    #[test]
    fn an_in_process_endpoint_stands_alone_and_without_tls() {
        let local = PeerConfig::single("inproc://clients-tests/graph-hydrator");
        let local_channel = channel("graph-hydrator", &local).expect("an in-process channel");
        assert_eq!(
            local_channel.endpoints(),
            vec!["inproc://clients-tests/graph-hydrator".to_owned()]
        );
        let mixed = PeerConfig {
            endpoints: vec![
                "inproc://clients-tests/graph-hydrator".into(),
                "http://127.0.0.1:1".into(),
            ],
            ..PeerConfig::default()
        };
        let error = channel("graph-hydrator", &mixed).expect_err("mixed endpoints");
        assert!(
            error.to_string().contains("must be the only endpoint"),
            "{error}"
        );
        let tls = PeerConfig {
            tls: PeerTls {
                ca_file: "/nonexistent/ca.pem".into(),
                ..PeerTls::default()
            },
            ..local
        };
        assert!(channel("graph-hydrator", &tls).is_err());
    }

    #[test]
    fn bearers_are_jwts_only_in_jws_shape() {
        let kind = |bearer: &str| bearer_credential(bearer).kind.unwrap();
        assert!(matches!(
            kind("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"),
            authz::v1::credential::Kind::BearerToken(_)
        ));
        for key in [
            "cxk_abcdefghijklmnop",
            "my-own-dev-key-0123456789",
            "eyJ-but-no-dots",
        ] {
            assert!(
                matches!(kind(key), authz::v1::credential::Kind::ApiKey(_)),
                "{key}"
            );
        }
    }
}
