//! Where a peer's endpoints come from: a static list (addresses or DNS names), or the
//! EndpointSlices of a Kubernetes Service, watched through the API server.
//!
//! The watch keeps every endpoint whose `ready` condition is not false and whose
//! `terminating` condition is not true (the EndpointSlice API's own reading of unset
//! conditions), takes its first address and the Service port named in the config, and
//! hands the whole set to the [`PeerChannel`](crate::PeerChannel)'s balancer on every
//! change. Watch errors are retried with backoff; meanwhile the last known set stays.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use codectx_errors::Error;
use futures::TryStreamExt;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde::{Deserialize, Serialize};
use tonic::transport::Endpoint;

use crate::balance::PeerUpdates;

/// How a peer's endpoints are found.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Discovery {
    /// The `endpoints` list, as written (addresses or DNS names).
    #[default]
    Static,
    /// The ready endpoints of a Kubernetes Service, from its EndpointSlices.
    Kubernetes,
}

/// The Kubernetes Service whose EndpointSlices name a peer's endpoints.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct KubernetesService {
    /// Service name (the `kubernetes.io/service-name` label of its slices).
    pub service: String,
    /// Namespace; empty: this pod's own (or the kubeconfig context's).
    pub namespace: String,
    /// Name of the Service port to call; empty: the slice's only port.
    pub port: String,
    /// A kubeconfig file to reach the API server with; empty: the pod's ServiceAccount
    /// (in a cluster) or `KUBECONFIG` / `~/.kube/config` (outside one).
    pub kubeconfig: String,
}

/// Watches `target`'s EndpointSlices until the balancer is gone. `endpoint_for` turns a
/// `scheme://address:port` URI into a configured endpoint.
pub(crate) fn spawn_kubernetes_watch(
    peer_name: String,
    target: KubernetesService,
    scheme: &'static str,
    endpoint_for: impl Fn(&str) -> Result<Endpoint, Error> + Send + Sync + 'static,
    updates: PeerUpdates,
) {
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(500);
        loop {
            match watch(&peer_name, &target, scheme, &endpoint_for, &updates).await {
                Ok(()) => return,
                Err(error) => tracing::warn!(
                    peer = %peer_name, service = %target.service, %error,
                    retry_ms = delay.as_millis() as u64,
                    "cannot watch the peer's EndpointSlices; keeping the last known endpoints"
                ),
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(30));
        }
    });
}

async fn watch(
    peer_name: &str,
    target: &KubernetesService,
    scheme: &'static str,
    endpoint_for: &impl Fn(&str) -> Result<Endpoint, Error>,
    updates: &PeerUpdates,
) -> Result<(), kube::Error> {
    let client = if target.kubeconfig.is_empty() {
        kube::Client::try_default().await?
    } else {
        let file = kube::config::Kubeconfig::read_from(&target.kubeconfig)
            .map_err(kube::Error::InferKubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(file, &Default::default())
            .await
            .map_err(kube::Error::InferKubeconfig)?;
        kube::Client::try_from(config)?
    };
    let namespace = if target.namespace.is_empty() {
        client.default_namespace().to_owned()
    } else {
        target.namespace.clone()
    };
    let api: kube::Api<EndpointSlice> = kube::Api::namespaced(client, &namespace);
    let config = watcher::Config::default()
        .labels(&format!("kubernetes.io/service-name={}", target.service));
    let mut events = std::pin::pin!(watcher::watcher(api, config).default_backoff());
    let mut slices: HashMap<String, EndpointSlice> = HashMap::new();
    let mut listing: Option<HashMap<String, EndpointSlice>> = None;
    loop {
        let event = match events.try_next().await {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(error) => {
                // The backoff already waits between attempts; the stream goes on.
                tracing::warn!(peer = %peer_name, service = %target.service, %error,
                    "EndpointSlice watch failed; retrying");
                continue;
            }
        };
        let name = |slice: &EndpointSlice| slice.metadata.name.clone().unwrap_or_default();
        match event {
            Event::Init => {
                listing = Some(HashMap::new());
                continue;
            }
            Event::InitApply(slice) => {
                if let Some(listing) = listing.as_mut() {
                    listing.insert(name(&slice), slice);
                }
                continue;
            }
            Event::InitDone => slices = listing.take().unwrap_or_default(),
            Event::Apply(slice) => {
                slices.insert(name(&slice), slice);
            }
            Event::Delete(slice) => {
                slices.remove(&name(&slice));
            }
        }
        let mut endpoints = BTreeMap::new();
        for uri in ready_uris(slices.values(), &target.port, scheme) {
            match endpoint_for(&uri) {
                Ok(endpoint) => {
                    endpoints.insert(uri, endpoint);
                }
                Err(error) => tracing::warn!(peer = %peer_name, %uri, %error,
                    "skipping an endpoint that cannot be configured"),
            }
        }
        updates.replace(endpoints);
    }
}

/// `scheme://address:port` of every endpoint that may take requests.
pub fn ready_uris<'a>(
    slices: impl IntoIterator<Item = &'a EndpointSlice>,
    port_name: &str,
    scheme: &str,
) -> Vec<String> {
    let mut uris = Vec::new();
    for slice in slices {
        let ports = slice.ports.as_deref().unwrap_or_default();
        let port = if port_name.is_empty() {
            match ports {
                [only] => only.port,
                _ => None,
            }
        } else {
            ports
                .iter()
                .find(|p| p.name.as_deref() == Some(port_name))
                .and_then(|p| p.port)
        };
        let Some(port) = port else { continue };
        for endpoint in &slice.endpoints {
            let conditions = endpoint.conditions.as_ref();
            let ready = conditions.and_then(|c| c.ready).unwrap_or(true);
            let terminating = conditions.and_then(|c| c.terminating).unwrap_or(false);
            if !ready || terminating {
                continue;
            }
            let Some(address) = endpoint.addresses.first() else {
                continue;
            };
            let host = if slice.address_type == "IPv6" {
                format!("[{address}]")
            } else {
                address.clone()
            };
            uris.push(format!("{scheme}://{host}:{port}"));
        }
    }
    uris.sort();
    uris.dedup();
    uris
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::discovery::v1::EndpointPort;
    use k8s_openapi::api::discovery::v1::{Endpoint as SliceEndpoint, EndpointConditions};

    fn endpoint(address: &str, ready: Option<bool>, terminating: Option<bool>) -> SliceEndpoint {
        SliceEndpoint {
            addresses: vec![address.into()],
            conditions: Some(EndpointConditions {
                ready,
                serving: None,
                terminating,
            }),
            ..Default::default()
        }
    }

    fn slice(kind: &str, ports: &[(&str, i32)], endpoints: Vec<SliceEndpoint>) -> EndpointSlice {
        EndpointSlice {
            address_type: kind.into(),
            endpoints,
            ports: Some(
                ports
                    .iter()
                    .map(|(name, port)| EndpointPort {
                        name: Some((*name).into()),
                        port: Some(*port),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn keeps_ready_endpoints_that_are_not_terminating() {
        let slices = [slice(
            "IPv4",
            &[("metrics", 9090), ("grpc", 50055)],
            vec![
                endpoint("10.0.0.1", Some(true), Some(false)),
                endpoint("10.0.0.2", None, None),
                endpoint("10.0.0.3", Some(false), None),
                endpoint("10.0.0.4", Some(true), Some(true)),
            ],
        )];
        assert_eq!(
            ready_uris(&slices, "grpc", "http"),
            ["http://10.0.0.1:50055", "http://10.0.0.2:50055"]
        );
    }

    #[test]
    fn names_the_port_and_brackets_ipv6() {
        let slices = [
            slice(
                "IPv6",
                &[("grpc", 443)],
                vec![endpoint("fd00::1", None, None)],
            ),
            slice(
                "IPv4",
                &[("other", 1)],
                vec![endpoint("10.0.0.9", None, None)],
            ),
        ];
        assert_eq!(
            ready_uris(&slices, "grpc", "https"),
            ["https://[fd00::1]:443"]
        );
        // No port name: only a slice with exactly one port is usable.
        assert_eq!(
            ready_uris(&slices, "", "http"),
            ["http://10.0.0.9:1", "http://[fd00::1]:443"]
        );
    }
}
