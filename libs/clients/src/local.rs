//! In-process peers: services that share one process call each other without a socket.
//!
//! `codectx up` and `codectx bench` run all seven services in one process. Over loopback
//! TCP every hop still pays for HTTP/2 framing, a socket write and read on each side, and
//! the wake-ups of the client's and the server's connection tasks. A peer endpoint
//! `inproc://NAME` instead names a service registered in this process under `NAME`: the
//! client hands its `http::Request` (the encoded message, the signed tenant context and
//! the trace context in its metadata) straight to that service's layered routes, the
//! same stack the TCP listener serves (trace, deadline, load shedding, the shared
//! concurrency limit, tenant verification), and reads the `http::Response` back. Only the
//! transport is skipped; the gRPC contract, its codecs and every check stay (ADR 0016).
//!
//! The registry is process-wide. A name is looked up on every call, so a channel can be
//! made before its service is registered (the stack builds services in any order), and a
//! call after the service stopped gets UNAVAILABLE, as a refused connection would.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use tonic::body::Body;
use tower::ServiceExt;
use tower::util::BoxCloneService;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The URI scheme of an in-process peer.
pub const SCHEME: &str = "inproc://";

/// A service as an in-process peer calls it: its routes behind the server's layers, with
/// errors already turned into gRPC statuses.
pub type LocalService = BoxCloneService<http::Request<Body>, http::Response<Body>, BoxError>;

/// A mutex, not a read-write lock: the layered service is `Send` but not `Sync` (the
/// concurrency limit's pending acquire), and it is held only to clone the service.
type Slot = Arc<Mutex<Option<LocalService>>>;

static REGISTRY: LazyLock<Mutex<HashMap<String, Slot>>> = LazyLock::new(Default::default);

fn slot(name: &str) -> Slot {
    let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    registry.entry(name.to_owned()).or_default().clone()
}

/// `NAME` of an `inproc://NAME` endpoint; `None` for any other endpoint.
pub fn name_of(endpoint: &str) -> Option<&str> {
    endpoint.strip_prefix(SCHEME)
}

/// Registers `service` under `name` until the returned registration is dropped.
/// A name already registered is refused: two services must not answer for one peer.
pub fn register(name: &str, service: LocalService) -> Result<Registration, String> {
    let slot = slot(name);
    let mut current = slot.lock().unwrap_or_else(|e| e.into_inner());
    if current.is_some() {
        return Err(format!("in-process service {name:?} is already registered"));
    }
    *current = Some(service);
    drop(current);
    Ok(Registration {
        name: name.to_owned(),
        slot,
    })
}

/// Keeps a service registered; dropping it unregisters the service.
#[derive(Debug)]
pub struct Registration {
    name: String,
    slot: Slot,
}

impl Registration {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The client side of an in-process peer.
#[derive(Clone)]
pub(crate) struct LocalPeer {
    name: Arc<str>,
    slot: Slot,
}

impl LocalPeer {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            slot: slot(name),
        }
    }

    /// Calls the registered service; UNAVAILABLE when none is (not yet, or no longer).
    pub(crate) async fn call(
        self,
        request: http::Request<Body>,
    ) -> Result<http::Response<Body>, BoxError> {
        let service = self.slot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match service {
            Some(service) => service.oneshot(request).await,
            None => Err(Box::new(tonic::Status::unavailable(format!(
                "in-process peer {:?} is not running",
                self.name
            )))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answering(status: u16) -> LocalService {
        BoxCloneService::new(tower::service_fn(
            move |_: http::Request<Body>| async move {
                Ok::<_, BoxError>(
                    http::Response::builder()
                        .status(status)
                        .body(Body::empty())
                        .expect("response"),
                )
            },
        ))
    }

    fn request() -> http::Request<Body> {
        http::Request::new(Body::empty())
    }

    #[tokio::test]
    async fn a_peer_reaches_the_service_registered_under_its_name_while_it_is() {
        let peer = LocalPeer::new("local-tests/a");
        let error = peer.clone().call(request()).await.expect_err("nothing yet");
        let status = error.downcast::<tonic::Status>().expect("a status");
        assert_eq!(status.code(), tonic::Code::Unavailable);

        let registration = register("local-tests/a", answering(200)).expect("registered");
        assert_eq!(registration.name(), "local-tests/a");
        let other = register("local-tests/b", answering(404)).expect("registered");
        let response = peer.clone().call(request()).await.expect("answered");
        assert_eq!(response.status(), 200);
        assert!(
            register("local-tests/a", answering(500)).is_err(),
            "a second service under one name is refused"
        );

        drop(registration);
        let error = peer.call(request()).await.expect_err("stopped");
        let status = error.downcast::<tonic::Status>().expect("a status");
        assert_eq!(status.code(), tonic::Code::Unavailable);
        drop(other);
    }

    #[test]
    fn only_the_inproc_scheme_names_a_local_peer() {
        assert_eq!(
            name_of("inproc://stack-1/graph-hydrator"),
            Some("stack-1/graph-hydrator")
        );
        assert_eq!(name_of("http://127.0.0.1:50051"), None);
        assert_eq!(name_of("inproc:/x"), None);
    }
}
