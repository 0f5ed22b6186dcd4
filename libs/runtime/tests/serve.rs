//! The standard stack of `serve()`, exercised over real gRPC on loopback: deadline, load
//! shedding, readiness-driven health, and reflection.

use std::sync::Arc;
use std::time::Duration;

use codectx_errors::Error;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::gateway::v1::gateway_service_client::GatewayServiceClient;
use codectx_proto::gateway::v1::gateway_service_server::{
    GatewayService, GatewayServiceServer, SERVICE_NAME,
};
use codectx_proto::gateway::v1::{CompressionStats, GetCompressionStatsRequest};
use codectx_runtime::{BuiltService, Readiness, RunningService, ServerConfig};
use codectx_tenant::{Claims, Minter, Scope, SigningKey, TenantContext, Verifier, from_request};
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status};

/// A service whose Describe takes as long as the test says.
struct Slow {
    delay: Duration,
}

#[tonic::async_trait]
impl GatewayService for Slow {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let context = from_request(&request)?;
        tokio::time::sleep(self.delay).await;
        Ok(Response::new(codectx_runtime::describe(
            "slow",
            &[],
            &context,
        )))
    }

    async fn get_compression_stats(
        &self,
        _request: Request<GetCompressionStatsRequest>,
    ) -> Result<Response<CompressionStats>, Status> {
        Ok(Response::new(CompressionStats::default()))
    }
}

struct Fixture {
    running: RunningService,
    context: TenantContext,
    channel: Channel,
}

async fn start(delay: Duration, config: ServerConfig, readiness: Readiness) -> Fixture {
    let key = SigningKey::from_seed("test", [3u8; 32]);
    let verifier = Arc::new(Verifier::new([key.verification_key()]).unwrap());
    let context = Minter::new(key)
        .mint(&Claims {
            tenant_id: "org_a".into(),
            subject_id: "sub_a".into(),
            repository_id: "repo_a".into(),
            graph_id: "gph_a".into(),
            scopes: vec![Scope::ReadCode],
            policy_revision: 1,
        })
        .unwrap();
    let service = BuiltService {
        name: "slow",
        grpc_name: SERVICE_NAME,
        routes: tonic::service::Routes::new(GatewayServiceServer::new(Slow { delay })),
        exempt_paths: Vec::new(),
        readiness,
    };
    let listener = codectx_runtime::bind("127.0.0.1:0").await.unwrap();
    let running =
        codectx_runtime::spawn(service, listener, verifier, &config, std::future::pending())
            .unwrap();
    let channel = Channel::from_shared(running.endpoint())
        .unwrap()
        .connect()
        .await
        .unwrap();
    Fixture {
        running,
        context,
        channel,
    }
}

fn describe_request(context: &TenantContext) -> Request<DescribeRequest> {
    let mut request = Request::new(DescribeRequest {});
    context.attach(&mut request);
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_end_at_the_deadline() {
    let config = ServerConfig {
        request_timeout_ms: 200,
        drain_seconds: 0,
        ..ServerConfig::default()
    };
    let fixture = start(Duration::from_secs(3), config, Readiness::new(true)).await;
    let started = std::time::Instant::now();
    let status = GatewayServiceClient::new(fixture.channel.clone())
        .describe(describe_request(&fixture.context))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(Error::from_status(&status).reason(), "deadline_exceeded");
    assert!(status.message().contains("200 ms"), "{}", status.message());
    assert!(started.elapsed() < Duration::from_secs(2));
    fixture.running.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_the_concurrency_limit_are_shed() {
    let config = ServerConfig {
        concurrency_limit: 1,
        drain_seconds: 0,
        ..ServerConfig::default()
    };
    let fixture = start(Duration::from_millis(600), config, Readiness::new(true)).await;
    let mut first_client = GatewayServiceClient::new(fixture.channel.clone());
    let first_request = describe_request(&fixture.context);
    let first = tokio::spawn(async move { first_client.describe(first_request).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    // A second connection, so HTTP/2 flow control is not what limits it.
    let other = Channel::from_shared(fixture.running.endpoint())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let shed = GatewayServiceClient::new(other)
        .describe(describe_request(&fixture.context))
        .await
        .unwrap_err();
    assert_eq!(shed.code(), Code::ResourceExhausted, "{shed:?}");
    assert!(
        first.await.unwrap().is_ok(),
        "the request in flight completes"
    );
    fixture.running.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_readiness() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;

    let readiness = Readiness::new(false);
    let fixture = start(
        Duration::ZERO,
        ServerConfig {
            drain_seconds: 0,
            ..ServerConfig::default()
        },
        readiness.clone(),
    )
    .await;
    let mut health = HealthClient::new(fixture.channel.clone());
    let check = HealthCheckRequest {
        service: SERVICE_NAME.into(),
    };
    let status = |response: Result<Response<tonic_health::pb::HealthCheckResponse>, Status>| {
        response
            .map(|r| r.into_inner().status())
            .unwrap_or(ServingStatus::Unknown)
    };
    // The reporter task sets the first status right after the server starts.
    let mut seen = ServingStatus::Unknown;
    for _ in 0..20 {
        seen = status(health.check(check.clone()).await);
        if seen != ServingStatus::Unknown {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, ServingStatus::NotServing);
    readiness.set_ready(true);
    for _ in 0..20 {
        seen = status(health.check(check.clone()).await);
        if seen == ServingStatus::Serving {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, ServingStatus::Serving);
    fixture.running.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_service_without_a_context() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let fixture = start(
        Duration::ZERO,
        ServerConfig {
            drain_seconds: 0,
            ..ServerConfig::default()
        },
        Readiness::new(true),
    )
    .await;
    let mut client = ServerReflectionClient::new(fixture.channel.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = client
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = stream.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("unexpected reflection answer");
    };
    let names: Vec<_> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&SERVICE_NAME.to_owned()), "{names:?}");
    assert!(
        names.iter().any(|n| n == "grpc.health.v1.Health"),
        "{names:?}"
    );
    fixture.running.stop().await.unwrap();
}

/// `server.health_listen`: a second, plaintext listener that serves the health service
/// and nothing else (kubelet's gRPC probes cannot speak TLS), following readiness.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_listener_serves_health_only() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let readiness = Readiness::new(false);
    let config = ServerConfig {
        drain_seconds: 0,
        health_listen: format!("127.0.0.1:{port}"),
        ..ServerConfig::default()
    };
    let fixture = start(Duration::ZERO, config, readiness.clone()).await;
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(2));
    let mut channel_ready = None;
    for _ in 0..50 {
        if let Ok(connected) = channel.connect().await {
            channel_ready = Some(connected);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let channel = channel_ready.expect("the health listener accepts connections");
    let status = |channel: Channel| async move {
        HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .status()
    };
    assert_eq!(status(channel.clone()).await, ServingStatus::NotServing);
    readiness.set_ready(true);
    let mut serving = false;
    for _ in 0..50 {
        if status(channel.clone()).await == ServingStatus::Serving {
            serving = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(serving, "the health listener follows readiness");
    // Nothing but health there: the service's own RPCs are not served.
    let denied = GatewayServiceClient::new(channel)
        .describe(describe_request(&fixture.context))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::Unimplemented);
}
