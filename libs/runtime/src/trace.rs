use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use tower::{Layer, Service};
use tracing::Instrument;
use tracing_opentelemetry_ext::set_parent;

/// Opens one span per gRPC request, parented on the caller's W3C trace context, and
/// records its latency in the `rpc.server.duration` histogram.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcTraceLayer;

impl<S> Layer<S> for GrpcTraceLayer {
    type Service = GrpcTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcTrace { inner }
    }
}

#[derive(Debug, Clone)]
pub struct GrpcTrace<S> {
    inner: S,
}

impl<S, Body, ResponseBody> Service<http::Request<Body>> for GrpcTrace<S>
where
    S: Service<http::Request<Body>, Response = http::Response<ResponseBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let path = request.uri().path();
        let (service, method) = path
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or((path, ""));
        let span = tracing::info_span!(
            "grpc.request",
            otel.name = %path,
            otel.kind = "server",
            rpc.system = "grpc",
            rpc.service = %service,
            rpc.method = %method,
            rpc.grpc.status_code = tracing::field::Empty,
        );
        set_parent(&span, codectx_telemetry::extract_parent(request.headers()));
        let attributes = [
            opentelemetry::KeyValue::new("rpc.service", service.to_owned()),
            opentelemetry::KeyValue::new("rpc.method", method.to_owned()),
        ];
        let future = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        let recorder = span.clone();
        let started = std::time::Instant::now();
        async move {
            let result = future.await;
            codectx_telemetry::rpc_server_duration()
                .record(started.elapsed().as_secs_f64() * 1000.0, &attributes);
            if let Ok(response) = &result {
                let code = response
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("0")
                    .to_owned();
                recorder.record("rpc.grpc.status_code", code.as_str());
            }
            result
        }
        .instrument(span)
        .boxed()
    }
}

mod tracing_opentelemetry_ext {
    pub fn set_parent(span: &tracing::Span, parent: opentelemetry::Context) {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let _ = span.set_parent(parent);
    }
}
