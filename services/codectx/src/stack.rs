//! Starts any subset of the seven services in one process, each on its own loopback port,
//! talking real gRPC to each other through the same `build()` the binaries use. By
//! default the services of one stack call each other in process (`inproc://`, ADR 0016):
//! the same requests, metadata and server layers, without the loopback socket and HTTP/2.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use codectx_authz::{Authority, DevIdentity};
use codectx_clients::PeerConfig;
use codectx_errors::Error;
use codectx_graph::Store;
use codectx_graph::sqlite::SqliteGraphStore;
use codectx_runtime::{RunningService, ServerConfig, TenantConfig};
use codectx_tenant::Verifier;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The services of codectx, in start order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServiceKind {
    Authz,
    LexicalRanker,
    Embedding,
    VectorGateway,
    GraphHydrator,
    ContextAssembler,
    Gateway,
}

impl ServiceKind {
    pub const ALL: [ServiceKind; 7] = [
        ServiceKind::Authz,
        ServiceKind::LexicalRanker,
        ServiceKind::Embedding,
        ServiceKind::VectorGateway,
        ServiceKind::GraphHydrator,
        ServiceKind::ContextAssembler,
        ServiceKind::Gateway,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ServiceKind::Authz => codectx_authz::NAME,
            ServiceKind::LexicalRanker => codectx_lexical_ranker::NAME,
            ServiceKind::Embedding => codectx_embedding::NAME,
            ServiceKind::VectorGateway => codectx_vector_gateway::NAME,
            ServiceKind::GraphHydrator => codectx_graph_hydrator::NAME,
            ServiceKind::ContextAssembler => codectx_context_assembler::NAME,
            ServiceKind::Gateway => codectx_gateway::NAME,
        }
    }

    /// Offset from the base port when fixed ports are asked for.
    fn port_offset(self) -> u16 {
        self as u16
    }
}

/// Where the code graph and memory live.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GraphBackend {
    /// SQLite in the data directory (`graph.db`).
    #[default]
    Embedded,
    /// A Neo4j 5.26 server.
    Neo4j {
        uri: String,
        user: String,
        password: String,
    },
    /// A HugeGraph 1.5 server (REST URL ending in the graph's name).
    HugeGraph {
        url: String,
        user: String,
        password: String,
    },
}

impl GraphBackend {
    /// Opens the store (the embedded one in `data_dir`).
    pub async fn open(&self, data_dir: &std::path::Path) -> Result<Arc<dyn Store>, Error> {
        Ok(match self {
            GraphBackend::Embedded => Arc::new(SqliteGraphStore::open(&data_dir.join("graph.db"))?),
            GraphBackend::Neo4j {
                uri,
                user,
                password,
            } => {
                Arc::new(codectx_graph::neo4j::Neo4jGraphStore::connect(uri, user, password).await?)
            }
            GraphBackend::HugeGraph {
                url,
                user,
                password,
            } => Arc::new(
                codectx_graph::hugegraph::HugeGraphStore::connect(url, user, password).await?,
            ),
        })
    }
}

/// Where the vectors live.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum VectorBackend {
    /// The embedded store in the data directory (`vectors.db`).
    #[default]
    Embedded,
    /// A Milvus server (milvus-lite included), filters as literals (servers without
    /// filter templates, such as milvus-lite) or templates.
    Milvus {
        uri: String,
        literal_filters: bool,
        /// Keep the approved text in a hybrid collection and answer native hybrid search
        /// (`vectors.milvus_native_hybrid`, ADR 0015).
        native_hybrid: bool,
    },
}

/// How the services of one stack call each other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerTransport {
    /// Through each service's layered routes in this process (`inproc://`, ADR 0016).
    #[default]
    InProcess,
    /// gRPC over HTTP/2 on loopback TCP, as separate processes or pods call each other.
    Loopback,
}

impl PeerTransport {
    /// How reports name it.
    pub fn describe(self) -> &'static str {
        match self {
            PeerTransport::InProcess => "in process",
            PeerTransport::Loopback => "over loopback gRPC",
        }
    }
}

/// Tells stacks in one process apart in their in-process names.
static STACKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// How to start a stack.
#[derive(Debug, Clone)]
pub struct StackOptions {
    /// Data directory: authz keeps `authz/` in it; later stores keep theirs beside it.
    pub data_dir: PathBuf,
    /// Which services to start (authz always starts: nothing runs without contexts).
    pub services: Vec<ServiceKind>,
    /// authz's port; the others follow in [`ServiceKind::ALL`] order. 0: free ports.
    pub grpc_base_port: u16,
    /// Where the gateway serves agents over HTTP.
    pub gateway_http: String,
    /// Use this development API key instead of the saved or generated one.
    pub dev_api_key: Option<String>,
    /// Drain period on stop, in seconds.
    pub drain_seconds: u64,
    /// Embedding runtime and model directory (`make models`); None: the default cache.
    pub model_directory: Option<PathBuf>,
    /// Ranking legs the context-assembler uses for free text (hybrid unless measuring).
    pub retrieval: codectx_context_assembler::RetrievalLegs,
    /// The code no-match floors (None: the calibrated defaults).
    pub code_floors: Option<codectx_context_assembler::CodeFloors>,
    /// JWT bearer tokens authz accepts (off by default).
    pub oidc: codectx_authz::oidc::OidcConfig,
    /// The gateway's compression (levels, dedup, focus; docs/compression.md).
    pub compression: codectx_compress::CompressionConfig,
    /// The graph store (embedded unless measuring a cluster backend).
    pub graph: GraphBackend,
    /// The vector store (embedded unless measuring a cluster backend).
    pub vectors: VectorBackend,
    /// The embedded vector store's `embedded_probe_share` (1: exact; ADR 0018).
    pub vector_probe_share: f64,
    /// How long a request waits for a lexical index to load before it answers
    /// `unavailable` (lexical-ranker's `load_wait_ms`).
    pub lexical_load_wait_ms: u64,
    /// How long a code request waits for a new version's lexical index before it is
    /// answered from the previous one (lexical-ranker's `stale_wait_ms`).
    pub lexical_stale_wait_ms: u64,
    /// Memory for lexical-ranker's cached indexes, in MiB (its `cache_mib`).
    pub lexical_cache_mib: u64,
    /// How the started services call each other (a peer this stack does not start is
    /// always called over loopback TCP).
    pub transport: PeerTransport,
}

impl StackOptions {
    /// Every service on free loopback ports: for tests.
    pub fn ephemeral(data_dir: PathBuf) -> Self {
        Self {
            data_dir,
            services: ServiceKind::ALL.to_vec(),
            grpc_base_port: 0,
            gateway_http: "127.0.0.1:0".into(),
            dev_api_key: None,
            drain_seconds: 0,
            model_directory: std::env::var_os("CODECTX_TEST_MODEL_DIR").map(PathBuf::from),
            retrieval: codectx_context_assembler::RetrievalLegs::Hybrid,
            code_floors: None,
            oidc: Default::default(),
            compression: Default::default(),
            graph: GraphBackend::Embedded,
            vectors: VectorBackend::Embedded,
            vector_probe_share: 1.0,
            lexical_load_wait_ms: codectx_core::limits::INDEX_LOAD_WAIT_SECONDS * 1000,
            lexical_stale_wait_ms: codectx_lexical_ranker::STALE_WAIT_MS,
            lexical_cache_mib: codectx_lexical_ranker::Config::default().cache_mib,
            transport: PeerTransport::default(),
        }
    }
}

/// A running stack.
#[derive(Debug)]
pub struct Stack {
    running: Vec<RunningService>,
    /// The `inproc://` endpoint of each started service, with the in-process transport.
    in_process: BTreeMap<ServiceKind, String>,
    pub graph_store: Arc<dyn Store>,
    endpoints: BTreeMap<ServiceKind, String>,
    gateway_http: Option<SocketAddr>,
    http_task: Option<tokio::task::JoinHandle<Result<(), Error>>>,
    stop: watch::Sender<bool>,
    pub dev: DevIdentity,
    pub authority: Arc<Authority>,
    pub verifier: Arc<Verifier>,
}

fn server_config(address: &str, drain_seconds: u64) -> ServerConfig {
    ServerConfig {
        drain_seconds,
        ..ServerConfig::listening_on(address)
    }
}

impl Stack {
    pub async fn start(options: StackOptions) -> Result<Stack, Error> {
        let mut kinds = options.services.clone();
        if !kinds.contains(&ServiceKind::Authz) {
            kinds.push(ServiceKind::Authz);
        }
        kinds.sort();
        kinds.dedup();

        // Bind every listener first so each service can be told where its peers are.
        let mut listeners = BTreeMap::new();
        let mut endpoints = BTreeMap::new();
        for kind in &kinds {
            let port = if options.grpc_base_port == 0 {
                0
            } else {
                options.grpc_base_port + kind.port_offset()
            };
            let listener = codectx_runtime::bind(&format!("127.0.0.1:{port}")).await?;
            let address = listener
                .local_addr()
                .map_err(|e| Error::internal(e.to_string()))?;
            endpoints.insert(*kind, format!("http://{address}"));
            listeners.insert(*kind, listener);
        }
        let stack_id = STACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let in_process: BTreeMap<ServiceKind, String> = match options.transport {
            PeerTransport::InProcess => kinds
                .iter()
                .map(|kind| (*kind, format!("stack-{stack_id}/{}", kind.name())))
                .collect(),
            PeerTransport::Loopback => BTreeMap::new(),
        };
        let peer = |kind: ServiceKind| -> PeerConfig {
            if let Some(name) = in_process.get(&kind) {
                return PeerConfig::single(format!("{}{name}", codectx_clients::local::SCHEME));
            }
            let port = if options.grpc_base_port == 0 {
                0
            } else {
                options.grpc_base_port + kind.port_offset()
            };
            PeerConfig::single(
                endpoints
                    .get(&kind)
                    .cloned()
                    .unwrap_or_else(|| format!("http://127.0.0.1:{port}")),
            )
        };

        let authz_dir = options.data_dir.join("authz");
        let authz_config = codectx_authz::Config {
            server: server_config("", options.drain_seconds),
            data_dir: authz_dir.display().to_string(),
            oidc: options.oidc.clone(),
            ..codectx_authz::Config::default()
        };
        let authz = codectx_authz::build(&authz_config)?;
        let verifier = authz.verifier()?;
        let authority = authz.authority.clone();
        let mut authz_service = Some(authz.service);
        let dev = codectx_authz::bootstrap_dev(
            authority.store(),
            &authz_dir,
            options.dev_api_key.as_deref(),
        )?;

        // The embedded graph store. The development subject reads what the development
        // organisation indexed (index runs registered those graphs with authz); graphs other
        // organisations indexed into the same store stay theirs.
        let graph_store: Arc<dyn Store> = options.graph.open(&options.data_dir).await?;
        codectx_authz::grant_indexed_repositories(authority.store(), &dev.subject.id)?;

        let (stop, stop_rx) = watch::channel(false);
        let stopped = move || {
            let mut receiver = stop_rx.clone();
            async move {
                let _ = receiver.wait_for(|stopped| *stopped).await;
            }
        };
        let tenant = TenantConfig::default();
        let mut running = Vec::new();
        let mut gateway_http = None;
        let mut http_task = None;
        let mut take =
            |kind: ServiceKind| -> TcpListener { listeners.remove(&kind).expect("bound above") };
        let kinds_started = kinds.clone();
        for kind in kinds {
            let server = server_config(&endpoints[&kind], options.drain_seconds);
            let service = match kind {
                ServiceKind::Authz => None,
                ServiceKind::LexicalRanker => Some(
                    codectx_lexical_ranker::build(codectx_lexical_ranker::Config {
                        server: server.clone(),
                        tenant: tenant.clone(),
                        peers: codectx_lexical_ranker::Peers {
                            graph_hydrator: peer(ServiceKind::GraphHydrator),
                        },
                        load_wait_ms: options.lexical_load_wait_ms,
                        stale_wait_ms: options.lexical_stale_wait_ms,
                        cache_mib: options.lexical_cache_mib,
                        ..Default::default()
                    })
                    .await?,
                ),
                ServiceKind::Embedding => {
                    let mut model = codectx_embedding::ModelConfig::default();
                    if let Some(directory) = &options.model_directory {
                        model.directory = directory.display().to_string();
                    }
                    Some(
                        codectx_embedding::build(codectx_embedding::Config {
                            server: server.clone(),
                            model,
                            ..Default::default()
                        })
                        .await?,
                    )
                }
                ServiceKind::VectorGateway => Some(
                    codectx_vector_gateway::build(codectx_vector_gateway::Config {
                        server: server.clone(),
                        vectors: match &options.vectors {
                            VectorBackend::Embedded => codectx_vector_gateway::VectorsConfig {
                                backend: "embedded".into(),
                                embedded_path: options
                                    .data_dir
                                    .join("vectors.db")
                                    .display()
                                    .to_string(),
                                embedded_probe_share: options.vector_probe_share,
                                ..Default::default()
                            },
                            VectorBackend::Milvus {
                                uri,
                                literal_filters,
                                native_hybrid,
                            } => codectx_vector_gateway::VectorsConfig {
                                backend: "milvus".into(),
                                milvus_uri: uri.clone(),
                                milvus_native_hybrid: *native_hybrid,
                                milvus_filter_mode: if *literal_filters {
                                    "literal".into()
                                } else {
                                    "template".into()
                                },
                                ..Default::default()
                            },
                        },
                        ..Default::default()
                    })
                    .await?,
                ),
                ServiceKind::GraphHydrator => Some(codectx_graph_hydrator::build_with_store(
                    graph_store.clone(),
                )),
                ServiceKind::ContextAssembler => Some(
                    codectx_context_assembler::build(codectx_context_assembler::Config {
                        server: server.clone(),
                        peers: codectx_context_assembler::Peers {
                            lexical_ranker: peer(ServiceKind::LexicalRanker),
                            embedding: peer(ServiceKind::Embedding),
                            vector_gateway: peer(ServiceKind::VectorGateway),
                            graph_hydrator: peer(ServiceKind::GraphHydrator),
                        },
                        retrieval: codectx_context_assembler::RetrievalConfig {
                            legs: options.retrieval,
                            code_floors: options.code_floors.unwrap_or_default(),
                        },
                        ..Default::default()
                    })
                    .await?,
                ),
                ServiceKind::Gateway => {
                    let gateway = codectx_gateway::build(
                        codectx_gateway::Config {
                            server: server.clone(),
                            http: codectx_gateway::HttpConfig {
                                listen: options.gateway_http.clone(),
                                ..Default::default()
                            },
                            peers: codectx_gateway::Peers {
                                authz: peer(ServiceKind::Authz),
                                context_assembler: peer(ServiceKind::ContextAssembler),
                            },
                            mcp: codectx_gateway::McpConfig {
                                compression: options.compression.clone(),
                                ..Default::default()
                            },
                            ..Default::default()
                        },
                        verifier.clone(),
                    )
                    .await?;
                    let http_listener = codectx_runtime::bind(&options.gateway_http).await?;
                    gateway_http = Some(
                        http_listener
                            .local_addr()
                            .map_err(|e| Error::internal(e.to_string()))?,
                    );
                    http_task = Some(tokio::spawn(codectx_gateway::serve_http(
                        gateway.http,
                        http_listener,
                        stopped(),
                    )));
                    Some(gateway.service)
                }
            };
            // authz is built before the loop (the others need its keys); serve it here.
            let service = match service {
                Some(service) => service,
                None => authz_service.take().expect("authz is served once"),
            };
            running.push(match in_process.get(&kind) {
                Some(name) => codectx_runtime::spawn_in_process(
                    service,
                    take(kind),
                    verifier.clone(),
                    &server,
                    stopped(),
                    name,
                )?,
                None => codectx_runtime::spawn(
                    service,
                    take(kind),
                    verifier.clone(),
                    &server,
                    stopped(),
                )?,
            });
        }
        let in_process = running
            .iter()
            .zip(&kinds_started)
            .filter_map(|(service, kind)| Some((*kind, service.in_process_endpoint()?)))
            .collect();
        Ok(Stack {
            running,
            in_process,
            graph_store,
            endpoints,
            gateway_http,
            http_task,
            stop,
            dev,
            authority,
            verifier,
        })
    }

    /// `http://127.0.0.1:PORT` of a started service.
    pub fn endpoint(&self, kind: ServiceKind) -> Option<&str> {
        self.endpoints.get(&kind).map(String::as_str)
    }

    pub fn endpoints(&self) -> &BTreeMap<ServiceKind, String> {
        &self.endpoints
    }

    /// How a client in this process reaches `kind`: in process when the stack's services
    /// call each other so, otherwise over loopback.
    pub fn peer(&self, kind: ServiceKind) -> Option<PeerConfig> {
        self.in_process
            .get(&kind)
            .or_else(|| self.endpoints.get(&kind))
            .map(PeerConfig::single)
    }

    /// Waits up to `timeout` for `kind` to report SERVING on the gRPC health service
    /// (embedding does once its model is loaded). False if it did not.
    pub async fn wait_serving(&self, kind: ServiceKind, timeout: std::time::Duration) -> bool {
        use tonic_health::pb::HealthCheckRequest;
        use tonic_health::pb::health_check_response::ServingStatus;
        use tonic_health::pb::health_client::HealthClient;
        let Some(endpoint) = self.endpoint(kind) else {
            return false;
        };
        let Ok(channel) = tonic::transport::Channel::from_shared(endpoint.to_owned()) else {
            return false;
        };
        let mut health = HealthClient::new(channel.connect_lazy());
        let deadline = tokio::time::Instant::now() + timeout;
        while tokio::time::Instant::now() < deadline {
            let status = health
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .map(|r| r.into_inner().status());
            if status.ok() == Some(ServingStatus::Serving) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    }

    /// The gateway's agent-facing HTTP address, when the gateway runs.
    pub fn gateway_http(&self) -> Option<SocketAddr> {
        self.gateway_http
    }

    /// Stops every service (drain included) and waits for them.
    pub async fn stop(self) -> Result<(), Error> {
        let _ = self.stop.send(true);
        for service in self.running {
            service.wait().await?;
        }
        if let Some(task) = self.http_task {
            task.await.map_err(|e| Error::internal(e.to_string()))??;
        }
        Ok(())
    }
}
