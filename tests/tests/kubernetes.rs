//! Peer discovery against a real Kubernetes API server: `make test-k8s` builds this file
//! (feature `kubernetes` of codectx-tests) and runs it inside `deploy/k8s/cluster.sh`
//! (etcd + kube-apiserver in a private network namespace, the chart installed by
//! `deploy/k8s/cluster-test.sh`).
//!
//! Three real authz processes listen on namespace-private addresses. The test writes the
//! EndpointSlices of a Service for them, as the EndpointSlice controller would, and a
//! client configured with `discovery = "kubernetes"` (authenticated as the chart's
//! context-assembler ServiceAccount, so the chart's RBAC is what lets it watch) must
//! follow every change: requests spread over the ready endpoints, none goes to one that
//! is not ready or is terminating, and a killed process costs no failed read. Each authz
//! generates its own signing key, so the key id in an answer names the instance.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use codectx_clients::{AuthzClient, Discovery, KubernetesService, PeerConfig, PeerTls};
use codectx_proto::authz::v1::GetVerificationKeysRequest;
use k8s_openapi::api::core::v1::{Service, ServiceAccount};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

const PORT: u16 = 7443;
const SERVICE: &str = "codectx-discovery-test";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run this test through `make test-k8s` (deploy/k8s/cluster.sh)")
    })
}

struct Authz {
    child: Child,
    address: String,
    _data: tempfile::TempDir,
}

impl Drop for Authz {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_authz(address: &str) -> Authz {
    let data = tempfile::tempdir().unwrap();
    let child = Command::new(codectx_tests::workspace_binary("authz"))
        .env("CODECTX_AUTHZ__SERVER__LISTEN", format!("{address}:{PORT}"))
        .env("CODECTX_AUTHZ__DATA_DIR", data.path())
        .env("CODECTX_AUTHZ__SERVER__DRAIN_SECONDS", "0")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .expect("authz starts (make test-k8s builds it)");
    Authz {
        child,
        address: address.to_owned(),
        _data: data,
    }
}

/// The key id an authz instance signs with, asked of that instance directly.
async fn key_id_of(address: &str) -> String {
    let client =
        AuthzClient::connect(&PeerConfig::single(format!("http://{address}:{PORT}"))).unwrap();
    for _ in 0..100 {
        if let Ok(response) = client
            .get_verification_keys(GetVerificationKeysRequest {})
            .await
        {
            return active_key(&response);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("authz at {address} did not answer within 10 s");
}

fn active_key(response: &codectx_proto::authz::v1::GetVerificationKeysResponse) -> String {
    response
        .keys
        .iter()
        .find(|key| key.active)
        .expect("an active key")
        .key_id
        .clone()
}

/// One EndpointSlice of the test Service, as the EndpointSlice controller writes them.
fn slice(name: &str, endpoints: &[(&str, bool, bool)]) -> EndpointSlice {
    EndpointSlice {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([(
                "kubernetes.io/service-name".to_owned(),
                SERVICE.to_owned(),
            )])),
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints: endpoints
            .iter()
            .map(|(address, ready, terminating)| Endpoint {
                addresses: vec![(*address).into()],
                conditions: Some(EndpointConditions {
                    ready: Some(*ready),
                    serving: Some(*ready),
                    terminating: Some(*terminating),
                }),
                ..Default::default()
            })
            .collect(),
        ports: Some(vec![EndpointPort {
            name: Some("grpc".into()),
            port: Some(PORT as i32),
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
    }
}

async fn apply(api: &Api<EndpointSlice>, slice: EndpointSlice) {
    let name = slice.metadata.name.clone().unwrap();
    api.patch(
        &name,
        &PatchParams::apply("codectx-test").force(),
        &Patch::Apply(&slice),
    )
    .await
    .unwrap();
}

/// A kubeconfig that authenticates as `account` with a token the API server issues
/// (TokenRequest), so the watcher has exactly that ServiceAccount's permissions.
async fn kubeconfig_for(client: &kube::Client, namespace: &str, account: &str) -> String {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request = k8s_openapi::api::authentication::v1::TokenRequest {
        spec: k8s_openapi::api::authentication::v1::TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(3600),
            bound_object_ref: None,
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request(account, &PostParams::default(), &request)
        .await
        .unwrap_or_else(|e| panic!("TokenRequest for {namespace}/{account}: {e}"))
        .status
        .expect("token status")
        .token;
    let admin = std::fs::read_to_string(env("KUBECONFIG")).unwrap();
    let admin_token = std::fs::read_to_string(env("CODECTX_TEST_KUBE_TOKEN_FILE")).unwrap();
    let config = admin
        .replace(admin_token.trim(), &token)
        .replace("namespace: default", &format!("namespace: {namespace}"));
    assert!(config.contains(&token));
    let path = std::env::temp_dir().join(format!("codectx-{account}.kubeconfig"));
    std::fs::write(&path, config).unwrap();
    path.display().to_string()
}

/// Sends `count` reads through `client` and counts the instances (key ids) that answered.
async fn spread(client: &AuthzClient, count: usize) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for _ in 0..count {
        let response = client
            .get_verification_keys(GetVerificationKeysRequest {})
            .await
            .expect("every read succeeds");
        *seen.entry(active_key(&response)).or_default() += 1;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpointslice_watch_balances_over_ready_endpoints_only() {
    let addresses: Vec<String> = env("CODECTX_TEST_KUBE_ADDRESSES")
        .split_whitespace()
        .take(3)
        .map(str::to_owned)
        .collect();
    let namespace = env("CODECTX_TEST_K8S_NAMESPACE");
    let account = env("CODECTX_TEST_K8S_CALLER_ACCOUNT");
    let admin = kube::Client::try_default().await.unwrap();

    let mut instances: Vec<Authz> = addresses.iter().map(|a| start_authz(a)).collect();
    let mut key_of = BTreeMap::new();
    for instance in &instances {
        key_of.insert(instance.address.clone(), key_id_of(&instance.address).await);
    }
    let keys: BTreeSet<&String> = key_of.values().collect();
    assert_eq!(keys.len(), 3, "each instance has its own key: {key_of:?}");
    let (a, b, c) = (&addresses[0], &addresses[1], &addresses[2]);
    let uri = |address: &str| format!("http://{address}:{PORT}");
    let key = |address: &str| key_of[address].clone();

    // A Service whose selector matches nothing: its slices are the test's to write.
    let services: Api<Service> = Api::namespaced(admin.clone(), &namespace);
    let _ = services.delete(SERVICE, &DeleteParams::default()).await;
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({
                "metadata": {"name": SERVICE},
                "spec": {"ports": [{"name": "grpc", "port": PORT, "appProtocol": "grpc"}],
                         "selector": {"app": "none"}}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let slices: Api<EndpointSlice> = Api::namespaced(admin.clone(), &namespace);
    apply(
        &slices,
        slice("discovery-a", &[(a, true, false), (b, true, false)]),
    )
    .await;

    // The client watches as the chart's caller ServiceAccount.
    let kubeconfig = kubeconfig_for(&admin, &namespace, &account).await;
    let peer = PeerConfig {
        discovery: Discovery::Kubernetes,
        kubernetes: KubernetesService {
            service: SERVICE.into(),
            namespace: namespace.clone(),
            port: "grpc".into(),
            kubeconfig,
        },
        endpoints: vec![],
        connect_timeout_ms: 500,
        tls: PeerTls::default(),
    };
    let channel = codectx_clients::channel("authz", &peer).unwrap();
    let client = AuthzClient::new(channel.clone());
    let wait_for = |expected: Vec<String>| {
        let channel = channel.clone();
        async move {
            tokio::time::timeout(
                Duration::from_secs(20),
                channel.wait_for_endpoints(|now| {
                    let mut want = expected.clone();
                    want.sort();
                    now == want.as_slice()
                }),
            )
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the watch did not reach {expected:?}; it has {:?}",
                    channel.endpoints()
                )
            })
        }
    };

    // Added: requests spread over both ready endpoints.
    wait_for(vec![uri(a), uri(b)]).await;
    let seen = spread(&client, 60).await;
    assert_eq!(
        seen.keys().cloned().collect::<BTreeSet<_>>(),
        BTreeSet::from([key(a), key(b)]),
        "{seen:?}"
    );

    // A second slice adds a third endpoint.
    apply(&slices, slice("discovery-b", &[(c, true, false)])).await;
    wait_for(vec![uri(a), uri(b), uri(c)]).await;
    let seen = spread(&client, 90).await;
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.values().all(|n| *n >= 5), "spread unevenly: {seen:?}");

    // Not ready: b gets nothing.
    apply(
        &slices,
        slice("discovery-a", &[(a, true, false), (b, false, false)]),
    )
    .await;
    wait_for(vec![uri(a), uri(c)]).await;
    let seen = spread(&client, 60).await;
    assert!(!seen.contains_key(&key(b)), "not-ready b was sent {seen:?}");

    // Terminating (still ready, as during a drain): c gets nothing.
    apply(&slices, slice("discovery-b", &[(c, true, true)])).await;
    wait_for(vec![uri(a)]).await;
    let seen = spread(&client, 30).await;
    assert_eq!(seen.keys().collect::<Vec<_>>(), [&key(a)], "{seen:?}");

    // Back to three; then a is killed without any slice change: no read fails, and the
    // balancer ejects it before discovery would notice.
    apply(
        &slices,
        slice("discovery-a", &[(a, true, false), (b, true, false)]),
    )
    .await;
    apply(&slices, slice("discovery-b", &[(c, true, false)])).await;
    wait_for(vec![uri(a), uri(b), uri(c)]).await;
    spread(&client, 30).await;
    let killed = instances.remove(0);
    assert_eq!(&killed.address, a);
    drop(killed); // SIGKILL
    let seen = spread(&client, 100).await;
    assert!(!seen.contains_key(&key(a)), "{seen:?}");
    assert_eq!(seen.values().sum::<usize>(), 100);
    // Ejected for a backoff (1 s, doubling): if re-admitted meanwhile, the next request
    // it draws ejects it again, without failing.
    let mut reads = 0;
    while channel.endpoints().contains(&uri(a)) {
        reads += 1;
        assert!(reads <= 50, "the killed endpoint stays in the set");
        spread(&client, 1).await;
    }

    // Deleted: the slice's endpoints leave the set.
    slices
        .delete("discovery-b", &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(20),
        channel.wait_for_endpoints(|now| !now.contains(&uri(c))),
    )
    .await
    .expect("the deleted slice's endpoint leaves the set");
    let seen = spread(&client, 20).await;
    assert_eq!(seen.keys().collect::<Vec<_>>(), [&key(b)], "{seen:?}");

    slices
        .delete("discovery-a", &DeleteParams::default())
        .await
        .unwrap();
    services
        .delete(SERVICE, &DeleteParams::default())
        .await
        .unwrap();
}

/// `codectx reindex` creates a Job from the chart's indexer CronJob (installed by
/// cluster-test.sh from charts/codectx/ci/indexer-values.yaml), owned by it, with its
/// template; and a CronJob that does not exist is a clear error that says how to list
/// the real ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reindex_runs_the_indexer_cronjob_now() {
    use k8s_openapi::api::batch::v1::{CronJob, Job};
    let namespace = env("CODECTX_TEST_K8S_INDEXER_NAMESPACE");
    let cronjob_name = env("CODECTX_TEST_K8S_INDEXER_CRONJOB");
    let admin = kube::Client::try_default().await.unwrap();
    let cronjob = Api::<CronJob>::namespaced(admin.clone(), &namespace)
        .get(&cronjob_name)
        .await
        .unwrap();

    let reindex = |cronjob: &str| {
        Command::new(codectx_tests::codectx_binary())
            .args(["reindex", "--cronjob", cronjob, "--namespace", &namespace])
            .output()
            .unwrap()
    };
    let output = reindex(&cronjob_name);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let job_name = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let job = Api::<Job>::namespaced(admin.clone(), &namespace)
        .get(&job_name)
        .await
        .unwrap_or_else(|e| panic!("the Job {job_name} exists: {e}"));
    let owner = &job.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("CronJob", cronjob_name.as_str())
    );
    assert_eq!(owner.uid, cronjob.metadata.uid.clone().unwrap());
    let containers = |spec: &k8s_openapi::api::batch::v1::JobSpec| {
        serde_json::to_value(&spec.template.spec.as_ref().unwrap().containers).unwrap()
    };
    assert_eq!(
        containers(job.spec.as_ref().unwrap()),
        containers(
            cronjob
                .spec
                .as_ref()
                .unwrap()
                .job_template
                .spec
                .as_ref()
                .unwrap()
        ),
        "the Job runs the CronJob's indexer"
    );

    let missing = reindex("no-such-indexer");
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("no CronJob no-such-indexer") && stderr.contains("kubectl get cronjobs"),
        "{stderr}"
    );
}
