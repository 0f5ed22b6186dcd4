use std::task::{Context, Poll};

use futures::future::{BoxFuture, FutureExt};
use tower::{Layer, Service};
use tracing::Instrument;
use tracing_opentelemetry_ext::set_parent;

/// Opens one span per gRPC request, parented on the caller's W3C trace context, and
/// records its latency in the `rpc.server.duration` histogram.
///
/// Metric labels must stay a small, fixed set whatever callers send (this layer runs
/// before authentication): a service outside `services`, or a method the server did not
/// implement, is labelled `unknown`.
#[derive(Debug, Clone, Default)]
pub struct GrpcTraceLayer {
    services: std::sync::Arc<Vec<String>>,
}

impl GrpcTraceLayer {
    /// Labels requests to these gRPC services by name; everything else is `unknown`.
    pub fn new(services: Vec<String>) -> Self {
        Self {
            services: std::sync::Arc::new(services),
        }
    }
}

impl<S> Layer<S> for GrpcTraceLayer {
    type Service = GrpcTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcTrace {
            inner,
            services: self.services.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct GrpcTrace<S> {
    inner: S,
    services: std::sync::Arc<Vec<String>>,
}

/// The label for a request's service and method: the names when the service is known and
/// the method a plain identifier, `unknown` otherwise (decided again once the status is
/// known: an unimplemented method is `unknown` too).
fn labels(services: &[String], service: &str, method: &str) -> (String, String) {
    let plain = |name: &str| {
        !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    if services.iter().any(|known| known == service) && plain(method) {
        (service.to_owned(), method.to_owned())
    } else {
        ("unknown".to_owned(), "unknown".to_owned())
    }
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
        let (service_label, method_label) = labels(&self.services, service, method);
        let future = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        let recorder = span.clone();
        let started = std::time::Instant::now();
        let in_flight = codectx_telemetry::request_in_flight(&service_label);
        async move {
            let result = future.await;
            drop(in_flight);
            let code = result.as_ref().ok().map(|response| {
                response
                    .headers()
                    .get("grpc-status")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("0")
                    .to_owned()
            });
            // UNIMPLEMENTED (12) in the headers: no such method on a known service.
            let (service_label, method_label) = if code.as_deref() == Some("12") {
                ("unknown".to_owned(), "unknown".to_owned())
            } else {
                (service_label, method_label)
            };
            // The status code as a label only from the 17 gRPC codes (a bounded set).
            let status_label = match code.as_deref().map(str::parse::<u8>) {
                Some(Ok(code)) if code <= 16 => code.to_string(),
                None => "transport_error".to_owned(),
                _ => "unknown".to_owned(),
            };
            let attributes = [
                opentelemetry::KeyValue::new("rpc.service", service_label),
                opentelemetry::KeyValue::new("rpc.method", method_label),
                opentelemetry::KeyValue::new("rpc.grpc.status_code", status_label),
            ];
            codectx_telemetry::rpc_server_duration()
                .record(started.elapsed().as_secs_f64() * 1000.0, &attributes);
            if let Some(code) = code {
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

#[cfg(test)]
mod tests {
    use super::labels;

    #[test]
    fn metric_labels_are_bounded_whatever_the_path() {
        let known = vec!["codectx.authz.v1.AuthzService".to_owned()];
        assert_eq!(
            labels(&known, "codectx.authz.v1.AuthzService", "Authorize"),
            ("codectx.authz.v1.AuthzService".into(), "Authorize".into())
        );
        for (service, method) in [
            ("made.up.Service", "Authorize"),
            ("codectx.authz.v1.AuthzService", "Authorize/../../x"),
            ("codectx.authz.v1.AuthzService", &"a".repeat(65)),
            ("codectx.authz.v1.AuthzService", ""),
        ] {
            assert_eq!(
                labels(&known, service, method),
                ("unknown".into(), "unknown".into()),
                "{service} {method}"
            );
        }
    }
}
