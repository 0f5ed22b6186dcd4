use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use codectx_clients::local::{LocalService, Registration};
use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_tenant::{TenantContext, TenantLayer, Verifier};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::body::Body;
use tonic::service::RecoverErrorLayer;
use tonic::service::Routes;
use tonic_health::ServingStatus;
use tower::ServiceBuilder;
use tower::ServiceExt;
use tower::layer::util::{Identity, Stack};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;

use crate::GrpcTraceLayer;
use crate::deadline::DeadlineLayer;

/// The `[server]` section shared by every service.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to serve gRPC on.
    pub listen: String,
    /// Deadline for every request, in milliseconds (DESIGN.md: 10 s per operation).
    pub request_timeout_ms: u64,
    /// Requests in flight at once across all connections; more are shed with
    /// RESOURCE_EXHAUSTED rather than queued.
    pub concurrency_limit: usize,
    /// After SIGTERM: report NOT_SERVING for this long before refusing new requests, so
    /// load balancers stop sending; then finish what is in flight.
    pub drain_seconds: u64,
    /// TLS for this listener (files reloaded on change); off: plaintext, which is meant
    /// for loopback only.
    pub tls: crate::tls::ServerTlsConfig,
    /// A second, plaintext listener that serves only the gRPC health service (e.g.
    /// `0.0.0.0:50061`): kubelet's gRPC probes cannot speak TLS. Empty: none.
    pub health_listen: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:0".into(),
            request_timeout_ms: 10_000,
            concurrency_limit: 256,
            drain_seconds: 5,
            tls: Default::default(),
            health_listen: String::new(),
        }
    }
}

impl ServerConfig {
    /// Defaults with a given listen address.
    pub fn listening_on(listen: impl Into<String>) -> Self {
        Self {
            listen: listen.into(),
            ..Self::default()
        }
    }
}

/// Lets a service say when its dependencies are ready; health reports NOT_SERVING until
/// then, and again from the moment shutdown starts.
#[derive(Debug, Clone)]
pub struct Readiness {
    sender: Arc<watch::Sender<bool>>,
}

impl Readiness {
    pub fn new(ready: bool) -> Self {
        Self {
            sender: Arc::new(watch::channel(ready).0),
        }
    }

    pub fn set_ready(&self, ready: bool) {
        self.sender.send_replace(ready);
    }

    pub fn is_ready(&self) -> bool {
        *self.sender.borrow()
    }

    fn subscribe(&self) -> watch::Receiver<bool> {
        self.sender.subscribe()
    }
}

/// What a service's `build()` returns: its gRPC routes and how it wants to be served.
pub struct BuiltService {
    /// Short service name (`graph-hydrator`), used in logs.
    pub name: &'static str,
    /// Fully qualified gRPC service name (`codectx.graph.v1.GraphHydratorService`), used
    /// by the health service.
    pub grpc_name: &'static str,
    pub routes: Routes,
    /// gRPC paths that authenticate callers without a tenant context (authz only).
    pub exempt_paths: Vec<String>,
    pub readiness: Readiness,
}

impl std::fmt::Debug for BuiltService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltService")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Binds the listen address (port 0 picks a free port).
pub async fn bind(listen: &str) -> Result<TcpListener, Error> {
    TcpListener::bind(listen)
        .await
        .map_err(|e| Error::unavailable(format!("cannot listen on {listen}: {e}")))
}

/// The layers every request to a service passes, over TCP or in process: its trace span,
/// the deadline, load shedding at the concurrency limit (one semaphore shared by every
/// clone), and verification of the tenant context.
type Layers = Stack<
    TenantLayer,
    Stack<
        GlobalConcurrencyLimitLayer,
        Stack<LoadShedLayer, Stack<DeadlineLayer, Stack<GrpcTraceLayer, Identity>>>,
    >,
>;

fn layers(service: &BuiltService, verifier: Arc<Verifier>, config: &ServerConfig) -> Layers {
    ServiceBuilder::new()
        .layer(GrpcTraceLayer::new(vec![
            service.grpc_name.to_owned(),
            "grpc.health.v1.Health".to_owned(),
            "grpc.reflection.v1.ServerReflection".to_owned(),
            "grpc.reflection.v1alpha.ServerReflection".to_owned(),
        ]))
        .layer(DeadlineLayer::new(Duration::from_millis(
            config.request_timeout_ms.max(1),
        )))
        .layer(LoadShedLayer::new())
        .layer(GlobalConcurrencyLimitLayer::new(
            config.concurrency_limit.max(1),
        ))
        .layer(TenantLayer::new(verifier).with_exempt_paths(service.exempt_paths.clone()))
        .into_inner()
}

/// `service`'s routes behind `layers`, as an in-process peer calls them: errors a layer
/// returns (shed load, a refused context) become gRPC statuses, as the TCP server's
/// error recovery makes them.
fn local_service(routes: Routes, layers: Layers) -> LocalService {
    let service = ServiceBuilder::new()
        .layer(RecoverErrorLayer::new())
        .layer(layers)
        .service(routes);
    LocalService::new(ServiceExt::<http::Request<Body>>::map_response(
        service,
        |response| response.map(Body::new),
    ))
}

/// Serves `service` on `listener` until `shutdown` resolves, then drains and returns.
pub async fn serve(
    service: BuiltService,
    listener: TcpListener,
    verifier: Arc<Verifier>,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let stack = layers(&service, verifier, config);
    serve_layered(service, stack, listener, config, shutdown).await
}

async fn serve_layered(
    service: BuiltService,
    stack: Layers,
    listener: TcpListener,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let address = listener.local_addr().ok();
    let (reporter, health) = tonic_health::server::health_reporter();
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(codectx_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| Error::internal(format!("reflection: {e}")))?;

    // Health follows readiness until shutdown, then stays NOT_SERVING.
    let (draining_tx, mut draining_rx) = watch::channel(false);
    let mut ready = service.readiness.subscribe();
    let grpc_name = service.grpc_name;
    // Registered before the first connection is accepted: a check that arrives at once
    // gets a status, never "service not registered".
    let initial = if *ready.borrow() {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    };
    reporter.set_service_status(grpc_name, initial).await;
    reporter.set_service_status("", initial).await;
    let health_reporter = reporter.clone();
    tokio::spawn(async move {
        loop {
            let serving = *ready.borrow_and_update() && !*draining_rx.borrow_and_update();
            let status = if serving {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            health_reporter.set_service_status(grpc_name, status).await;
            health_reporter.set_service_status("", status).await;
            tokio::select! {
                changed = ready.changed() => if changed.is_err() { break },
                changed = draining_rx.changed() => if changed.is_err() { break },
            }
        }
    });

    let drain = Duration::from_secs(config.drain_seconds);
    let name = service.name;
    let signal = async move {
        shutdown.await;
        tracing::info!(service = name, drain_seconds = drain.as_secs(), "draining");
        let _ = draining_tx.send(true);
        tokio::time::sleep(drain).await;
        // Keep the sender alive until the server stops so health stays NOT_SERVING.
        drop(draining_tx);
    };

    // Health alone on its own plaintext port, stopped with the service.
    let health_only = if config.health_listen.is_empty() {
        None
    } else {
        let listener = TcpListener::bind(&config.health_listen)
            .await
            .map_err(|e| {
                Error::invalid_argument(
                    "server.health_listen",
                    format!("cannot listen on {}: {e}", config.health_listen),
                )
            })?;
        let health = health.clone();
        Some(tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(health)
                .serve_with_incoming(TcpListenerStream::new(listener))
                .await
        }))
    };

    let router = tonic::transport::Server::builder()
        .layer(stack)
        .add_routes(service.routes)
        .add_service(health)
        .add_service(reflection);
    // Without TCP_NODELAY a response written in several segments waits for the peer's
    // delayed ACK (about 40 ms per call on Linux loopback).
    let tcp = TcpListenerStream::new(listener).map(|stream| {
        if let Ok(stream) = &stream {
            let _ = stream.set_nodelay(true);
        }
        stream
    });
    let served = if config.tls.enabled() {
        let acceptor = tokio_rustls::TlsAcceptor::from(crate::tls::server_config(&config.tls)?);
        tracing::info!(service = name, address = ?address, "serving gRPC over TLS");
        router
            .serve_with_incoming_shutdown(tls_incoming(tcp, acceptor), signal)
            .await
    } else {
        if !address.is_some_and(|a| a.ip().is_loopback()) {
            tracing::warn!(
                service = name,
                address = ?address,
                "serving plaintext gRPC on a non-loopback address: set server.tls (docs/security.md)"
            );
        }
        tracing::info!(service = name, address = ?address, "serving gRPC (plaintext)");
        router.serve_with_incoming_shutdown(tcp, signal).await
    };
    if let Some(task) = health_only {
        task.abort();
    }
    served.map_err(|e| Error::internal(format!("{name} server failed: {e}")))?;
    tracing::info!(service = name, "stopped");
    Ok(())
}

/// TLS handshakes for accepted connections, each in its own task so a slow or hostile
/// client cannot hold up the accept loop; failed handshakes are logged and dropped.
fn tls_incoming(
    tcp: impl futures::Stream<Item = std::io::Result<tokio::net::TcpStream>> + Send + 'static,
    acceptor: tokio_rustls::TlsAcceptor,
) -> impl futures::Stream<Item = std::io::Result<tokio_rustls::server::TlsStream<tokio::net::TcpStream>>>
{
    let (sender, receiver) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut tcp = std::pin::pin!(tcp);
        while let Some(accepted) = tcp.next().await {
            let Ok(stream) = accepted else { continue };
            let acceptor = acceptor.clone();
            let sender = sender.clone();
            tokio::spawn(async move {
                let handshake =
                    tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await;
                match handshake {
                    Ok(Ok(stream)) => {
                        let _ = sender.send(Ok(stream)).await;
                    }
                    Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
                    Err(_) => tracing::debug!("TLS handshake timed out"),
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(receiver)
}

/// A service started in the background (tests, `codectx up`).
#[derive(Debug)]
pub struct RunningService {
    pub name: &'static str,
    pub address: SocketAddr,
    pub readiness: Readiness,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), Error>>,
    /// Present while in-process peers may call it; dropped with the service.
    in_process: Option<Registration>,
}

impl RunningService {
    /// `http://<address>`, for clients.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// `inproc://NAME` when in-process peers can call it ([`spawn_in_process`]).
    pub fn in_process_endpoint(&self) -> Option<String> {
        self.in_process.as_ref().map(|registration| {
            format!("{}{}", codectx_clients::local::SCHEME, registration.name())
        })
    }

    /// Starts the drain and waits for the server to stop.
    pub async fn stop(mut self) -> Result<(), Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.task)
            .await
            .map_err(|e| Error::internal(format!("{} task: {e}", self.name)))?
    }

    /// Waits until the server stops by itself (it never does without a stop or error).
    pub async fn wait(mut self) -> Result<(), Error> {
        (&mut self.task)
            .await
            .map_err(|e| Error::internal(format!("{} task: {e}", self.name)))?
    }
}

/// Serves `service` on an already bound `listener` in a background task.
pub fn spawn(
    service: BuiltService,
    listener: TcpListener,
    verifier: Arc<Verifier>,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<RunningService, Error> {
    start(service, listener, verifier, config, shutdown, None)
}

/// Like [`spawn`], and also answers in-process peers that name it `inproc://NAME`
/// ([`codectx_clients::local`]) until the returned service is dropped. Both paths pass
/// the same layers, one concurrency limit included.
pub fn spawn_in_process(
    service: BuiltService,
    listener: TcpListener,
    verifier: Arc<Verifier>,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    name: &str,
) -> Result<RunningService, Error> {
    start(service, listener, verifier, config, shutdown, Some(name))
}

fn start(
    service: BuiltService,
    listener: TcpListener,
    verifier: Arc<Verifier>,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    in_process: Option<&str>,
) -> Result<RunningService, Error> {
    let stack = layers(&service, verifier, config);
    let in_process = match in_process {
        Some(name) => Some(
            codectx_clients::local::register(
                name,
                local_service(service.routes.clone(), stack.clone()),
            )
            .map_err(Error::internal)?,
        ),
        None => None,
    };
    let address = listener
        .local_addr()
        .map_err(|e| Error::internal(format!("listener address: {e}")))?;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let name = service.name;
    let readiness = service.readiness.clone();
    let config = config.clone();
    let task = tokio::spawn(async move {
        let signal = async move {
            tokio::select! {
                _ = shutdown => {},
                _ = stop_rx => {},
            }
        };
        serve_layered(service, stack, listener, &config, signal).await
    });
    Ok(RunningService {
        name,
        address,
        readiness,
        stop: Some(stop_tx),
        task,
        in_process,
    })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
}

/// The `Describe` answer every service gives: what it is, what it implements, and the
/// scope it verified for the caller.
pub fn describe(service: &str, capabilities: &[&str], context: &TenantContext) -> DescribeResponse {
    DescribeResponse {
        service: service.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
        caller: Some(context.caller_scope()),
    }
}

/// The `Describe` RPC every service serves: the caller's verified context, then
/// [`describe`].
pub fn describe_rpc(
    request: &tonic::Request<DescribeRequest>,
    service: &str,
    capabilities: &[&str],
) -> Result<tonic::Response<DescribeResponse>, tonic::Status> {
    let context = codectx_tenant::from_request(request)?;
    Ok(tonic::Response::new(describe(
        service,
        capabilities,
        &context,
    )))
}
