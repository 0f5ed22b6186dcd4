//! Per-request balancing across a peer's endpoints.
//!
//! HTTP/2 keeps one long-lived connection per client, so a Kubernetes Service's virtual
//! IP pins every request of a client to one pod. A [`PeerChannel`] instead keeps one
//! lazily connecting channel per endpoint and picks one per request with tower's
//! power-of-two-choices balancer over the requests each endpoint has in flight. (Not
//! peak-EWMA latency: a new endpoint starts from an assumed latency, and when that is
//! above what the others measure it never wins a comparison, so a pod added by a
//! scale-up would get no traffic; in-flight counts start every endpoint equal.) The set of endpoints comes from a discovery source (a static list, or a
//! Kubernetes EndpointSlice watch, see [`crate::discovery`]) through a [`PeerSet`] task
//! that also ejects an endpoint whose connection fails, for a backoff that doubles from
//! 1 s to 30 s, so a dead pod stops drawing requests before discovery notices it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use tower::Service;
use tower::balance::p2c::Balance;
use tower::buffer::Buffer;
use tower::discover::Change;
use tower::load::{CompleteOnResponse, PendingRequestsDiscover};
use tower::util::BoxService;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ResponseFuture = BoxFuture<Result<http::Response<Body>, BoxError>>;

/// Requests queued in front of the balancer per client.
const BUFFER: usize = 1024;
const FIRST_EJECTION: Duration = Duration::from_secs(1);
const LONGEST_EJECTION: Duration = Duration::from_secs(30);

/// The channel every codectx client uses: one endpoint directly, or several balanced per
/// request. Cheap to clone; clones share the balancer.
#[derive(Clone)]
pub struct PeerChannel {
    inner: Inner,
    endpoints: watch::Receiver<Vec<String>>,
}

#[derive(Clone)]
enum Inner {
    Direct(Channel),
    Local(crate::local::LocalPeer),
    Balanced(Buffer<http::Request<Body>, ResponseFuture>),
}

impl std::fmt::Debug for PeerChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerChannel")
            .field("endpoints", &*self.endpoints.borrow())
            .finish()
    }
}

impl PeerChannel {
    /// A channel to exactly one endpoint (no balancer in the request path).
    pub fn direct(uri: &str, endpoint: Endpoint) -> Self {
        let (_, endpoints) = watch::channel(vec![uri.to_owned()]);
        Self {
            inner: Inner::Direct(endpoint.connect_lazy()),
            endpoints,
        }
    }

    /// A channel to the service registered in this process under `name`
    /// ([`crate::local`]): no socket, no HTTP/2, the same server layers.
    pub fn in_process(name: &str) -> Self {
        let (_, endpoints) = watch::channel(vec![format!("{}{name}", crate::local::SCHEME)]);
        Self {
            inner: Inner::Local(crate::local::LocalPeer::new(name)),
            endpoints,
        }
    }

    /// A balanced channel whose endpoints a discovery source sends to the returned
    /// [`PeerUpdates`]. Must be called inside a Tokio runtime.
    pub fn balanced(service: &str) -> (Self, PeerUpdates) {
        // Unbounded: the balancer reads changes only when a request arrives, and the set must
        // keep following discovery while no request does.
        let (changes_tx, changes_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (snapshot_tx, snapshot_rx) = watch::channel(Vec::new());
        let discover = PendingRequestsDiscover::new::<http::Request<Body>>(
            ChangeStream(changes_rx),
            CompleteOnResponse::default(),
        );
        let balance = Balance::new(discover);
        let (buffer, worker) = Buffer::pair(BoxService::new(balance), BUFFER);
        tokio::spawn(worker);
        let set = PeerSet {
            service: service.to_owned(),
            changes: changes_tx,
            events: events_tx.clone(),
            snapshot: snapshot_tx,
            desired: BTreeMap::new(),
            active: HashSet::new(),
            ejected: HashMap::new(),
        };
        tokio::spawn(set.run(events_rx));
        (
            Self {
                inner: Inner::Balanced(buffer),
                endpoints: snapshot_rx,
            },
            PeerUpdates { events: events_tx },
        )
    }

    /// The endpoints requests go to now (ready, not ejected), as URIs.
    pub fn endpoints(&self) -> Vec<String> {
        self.endpoints.borrow().clone()
    }

    /// Waits until the set of endpoints requests may go to satisfies `condition`.
    pub async fn wait_for_endpoints(&self, condition: impl Fn(&[String]) -> bool) {
        let mut endpoints = self.endpoints.clone();
        let _ = endpoints.wait_for(|list| condition(list)).await;
    }
}

impl Service<http::Request<Body>> for PeerChannel {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match &mut self.inner {
            Inner::Direct(channel) => channel.poll_ready(cx).map_err(Into::into),
            Inner::Local(_) => Poll::Ready(Ok(())),
            Inner::Balanced(buffer) => buffer.poll_ready(cx),
        }
    }

    fn call(&mut self, request: http::Request<Body>) -> ResponseFuture {
        match &mut self.inner {
            Inner::Direct(channel) => {
                let future = channel.call(request);
                Box::pin(async move { future.await.map_err(Into::into) })
            }
            Inner::Local(peer) => Box::pin(peer.clone().call(request)),
            Inner::Balanced(buffer) => Box::pin(buffer.call(request)),
        }
    }
}

/// Where a discovery source sends the endpoints it sees.
#[derive(Debug, Clone)]
pub struct PeerUpdates {
    events: mpsc::UnboundedSender<PeerEvent>,
}

impl PeerUpdates {
    /// Replaces the set of endpoints (URI -> endpoint) requests may go to.
    pub fn replace(&self, endpoints: BTreeMap<String, Endpoint>) {
        let _ = self.events.send(PeerEvent::Discovered(endpoints));
    }
}

#[derive(Debug)]
enum PeerEvent {
    Discovered(BTreeMap<String, Endpoint>),
    ConnectionFailed(String),
}

/// The discovered endpoints as the balancer's `Discover` stream; never ends (an ended
/// stream is an error to the balancer), it only stops changing.
struct ChangeStream(mpsc::UnboundedReceiver<Change<String, Ejecting>>);

impl futures::Stream for ChangeStream {
    type Item = Result<Change<String, Ejecting>, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.0.poll_recv(cx) {
            Poll::Ready(Some(change)) => Poll::Ready(Some(Ok(change))),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}

/// One endpoint's channel; reports a failed connection so the endpoint is ejected.
struct Ejecting {
    uri: Arc<str>,
    channel: Channel,
    events: mpsc::UnboundedSender<PeerEvent>,
}

impl Service<http::Request<Body>> for Ejecting {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // A failed channel is dropped by the balancer: the set must learn of it, to
        // re-admit the endpoint (with a new channel) after its backoff.
        self.channel.poll_ready(cx).map_err(|error| {
            let _ = self
                .events
                .send(PeerEvent::ConnectionFailed(self.uri.to_string()));
            BoxError::from(error)
        })
    }

    fn call(&mut self, request: http::Request<Body>) -> ResponseFuture {
        let future = self.channel.call(request);
        let uri = self.uri.clone();
        let events = self.events.clone();
        Box::pin(async move {
            // An `Err` here is the transport's (refused, reset, TLS): gRPC statuses
            // arrive as responses.
            future.await.map_err(|error| {
                let _ = events.send(PeerEvent::ConnectionFailed(uri.to_string()));
                BoxError::from(error)
            })
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Ejection {
    until: Instant,
    backoff: Duration,
}

/// Owns which endpoints the balancer holds: the discovered ones minus those ejected.
struct PeerSet {
    service: String,
    changes: mpsc::UnboundedSender<Change<String, Ejecting>>,
    events: mpsc::UnboundedSender<PeerEvent>,
    snapshot: watch::Sender<Vec<String>>,
    desired: BTreeMap<String, Endpoint>,
    active: HashSet<String>,
    ejected: HashMap<String, Ejection>,
}

impl PeerSet {
    async fn run(mut self, mut events: mpsc::UnboundedReceiver<PeerEvent>) {
        loop {
            let next_readmission = self
                .ejected
                .values()
                .map(|e| e.until)
                .filter(|until| *until > Instant::now())
                .min();
            let event = match next_readmission {
                Some(until) => tokio::select! {
                    event = events.recv() => event,
                    () = tokio::time::sleep_until(until) => {
                        if self.apply().is_err() { return; }
                        continue;
                    }
                },
                None => events.recv().await,
            };
            let Some(event) = event else { return };
            match event {
                PeerEvent::Discovered(endpoints) => {
                    self.ejected.retain(|uri, _| endpoints.contains_key(uri));
                    self.desired = endpoints;
                }
                PeerEvent::ConnectionFailed(uri) => self.eject(uri),
            }
            if self.apply().is_err() {
                return; // the balancer is gone: every client was dropped
            }
        }
    }

    fn eject(&mut self, uri: String) {
        if !self.active.contains(&uri) {
            return;
        }
        let now = Instant::now();
        let backoff = match self.ejected.get(&uri) {
            // Failed again soon after being readmitted: wait twice as long.
            Some(previous) if now.duration_since(previous.until) < LONGEST_EJECTION => {
                (previous.backoff * 2).min(LONGEST_EJECTION)
            }
            _ => FIRST_EJECTION,
        };
        tracing::warn!(
            service = %self.service, endpoint = %uri, backoff_ms = backoff.as_millis() as u64,
            "connection to a peer endpoint failed; ejected from balancing"
        );
        self.ejected.insert(
            uri,
            Ejection {
                until: now + backoff,
                backoff,
            },
        );
    }

    /// Brings the balancer to the discovered endpoints minus the ejected ones. When every
    /// endpoint is ejected none is (better a slim chance than certain failure).
    fn apply(&mut self) -> Result<(), ()> {
        let now = Instant::now();
        let mut target: HashSet<&String> = self
            .desired
            .keys()
            .filter(|uri| self.ejected.get(*uri).is_none_or(|e| e.until <= now))
            .collect();
        if target.is_empty() {
            target = self.desired.keys().collect();
        }
        let removed: Vec<String> = self
            .active
            .iter()
            .filter(|uri| !target.contains(uri))
            .cloned()
            .collect();
        for uri in removed {
            self.changes
                .send(Change::Remove(uri.clone()))
                .map_err(|_| ())?;
            self.active.remove(&uri);
        }
        let added: Vec<String> = target
            .into_iter()
            .filter(|uri| !self.active.contains(*uri))
            .cloned()
            .collect();
        for uri in added {
            let endpoint = self.desired[&uri].clone();
            let service = Ejecting {
                uri: Arc::from(uri.as_str()),
                channel: endpoint.connect_lazy(),
                events: self.events.clone(),
            };
            self.changes
                .send(Change::Insert(uri.clone(), service))
                .map_err(|_| ())?;
            self.active.insert(uri);
        }
        let mut now_active: Vec<String> = self.active.iter().cloned().collect();
        now_active.sort();
        self.snapshot.send_if_modified(|current| {
            let changed = *current != now_active;
            if changed {
                tracing::info!(service = %self.service, endpoints = ?now_active, "peer endpoints");
                *current = now_active;
            }
            changed
        });
        Ok(())
    }
}
