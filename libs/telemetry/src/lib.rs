//! Logging and tracing for every codectx process: `tracing` to stderr always, OTLP export
//! of traces and metrics when an endpoint is configured, and W3C trace-context propagation
//! across gRPC hops.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde::{Deserialize, Serialize};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The `[telemetry]` section of every service's config.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// `tracing` filter directives, e.g. `info,codectx_authz=debug`. `RUST_LOG` wins.
    pub log_filter: String,
    /// OTLP/gRPC collector endpoint (e.g. `http://otel-collector:4317`); empty: the
    /// standard `OTEL_EXPORTER_OTLP_ENDPOINT` variable, else no export.
    pub otlp_endpoint: String,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            log_filter: "info".into(),
            otlp_endpoint: String::new(),
        }
    }
}

impl TelemetryConfig {
    /// Where spans and metrics go: the configured endpoint, else the standard variable.
    pub fn effective_endpoint(&self) -> String {
        if self.otlp_endpoint.is_empty() {
            std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default()
        } else {
            self.otlp_endpoint.clone()
        }
    }
}

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("cannot build the OTLP exporter for {endpoint}: {reason}")]
    Exporter { endpoint: String, reason: String },
}

/// Keeps exporters alive; flushes them when dropped.
#[must_use = "dropping the guard stops telemetry export"]
pub struct TelemetryGuard {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl std::fmt::Debug for TelemetryGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryGuard")
            .field("exporting", &self.tracer.is_some())
            .finish()
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(tracer) = self.tracer.take() {
            let _ = tracer.shutdown();
        }
        if let Some(meter) = self.meter.take() {
            let _ = meter.shutdown();
        }
    }
}

/// Starts logging (and OTLP export when configured) for `service_name`. Call once per
/// process; later calls (several services in one process) keep the first subscriber.
pub fn init(
    service_name: &str,
    config: &TelemetryConfig,
) -> Result<TelemetryGuard, TelemetryError> {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&config.log_filter));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(true);

    let endpoint = config.effective_endpoint();
    if endpoint.is_empty() {
        let _ = tracing_subscriber::registry()
            .with(fmt.with_filter(filter))
            .try_init();
        return Ok(TelemetryGuard {
            tracer: None,
            meter: None,
        });
    }

    let exporter_error = |reason: String| TelemetryError::Exporter {
        endpoint: endpoint.clone(),
        reason,
    };
    let resource = Resource::builder()
        .with_service_name(service_name.to_owned())
        .build();
    let span_exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(&endpoint)
        .build()
        .map_err(|e| exporter_error(e.to_string()))?;
    let tracer_provider = SdkTracerProvider::builder()
        .with_batch_exporter(span_exporter)
        .with_resource(resource.clone())
        .build();
    let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_tonic()
        .with_endpoint(&endpoint)
        .build()
        .map_err(|e| exporter_error(e.to_string()))?;
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metric_exporter)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    register_fallback_series();
    let tracer = tracer_provider.tracer(service_name.to_owned());
    // Spans go out under the same filter as the logs: without one, every trace-level
    // span of the HTTP/2 stack would be built and exported on every request.
    let span_filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&config.log_filter));
    let _ = tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(span_filter),
        )
        .try_init();
    Ok(TelemetryGuard {
        tracer: Some(tracer_provider),
        meter: Some(meter_provider),
    })
}

/// Name of the server-side RPC latency histogram every service records (milliseconds,
/// attributes `rpc.service`, `rpc.method` and `rpc.grpc.status_code`).
pub const RPC_SERVER_DURATION: &str = "rpc.server.duration";

/// Bucket bounds (ms) of [`RPC_SERVER_DURATION`]: fine below 100 ms, where codectx's
/// targets are, so percentiles read from the buckets are close to the raw ones.
pub const RPC_DURATION_BOUNDS_MS: &[f64] = &[
    0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0, 12.5, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 75.0, 100.0, 150.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0,
];

/// The process-wide RPC latency histogram, created on first use from the global meter
/// provider (OTLP when configured, [`InProcessMetrics`] in `codectx bench`).
pub fn rpc_server_duration() -> &'static opentelemetry::metrics::Histogram<f64> {
    static HISTOGRAM: std::sync::OnceLock<opentelemetry::metrics::Histogram<f64>> =
        std::sync::OnceLock::new();
    HISTOGRAM.get_or_init(|| {
        opentelemetry::global::meter("codectx")
            .f64_histogram(RPC_SERVER_DURATION)
            .with_unit("ms")
            .with_description("gRPC server latency per method, measured by the service")
            .with_boundaries(RPC_DURATION_BOUNDS_MS.to_vec())
            .build()
    })
}

/// Latency of one MCP tool call at the gateway, in milliseconds; attributes `mcp.tool`
/// (a known tool name or `unknown`) and `outcome` (`ok` or an error kind).
pub const TOOL_DURATION: &str = "codectx.tool.duration";
/// Tokens returned to agents, per tool (attribute `mcp.tool`).
pub const TOOL_TOKENS: &str = "codectx.tool.tokens";
/// Answers given without one of their legs (attribute `leg`: `vector`, `memory_notes`,
/// ...): the leg failed or timed out and the answer says so in its provenance.
pub const RETRIEVAL_FALLBACKS: &str = "codectx.retrieval.fallbacks";

/// Requests a service is handling now (attribute `rpc.service`): the load signal a
/// HorizontalPodAutoscaler can scale a leg on, through a custom-metrics adapter.
pub const RPC_SERVER_ACTIVE_REQUESTS: &str = "rpc.server.active_requests";

/// Counts one request in flight until the returned guard is dropped (answered, failed or
/// cancelled alike). `service` must come from a fixed set of names.
pub fn request_in_flight(service: &str) -> InFlight {
    static GAUGE: std::sync::OnceLock<opentelemetry::metrics::UpDownCounter<i64>> =
        std::sync::OnceLock::new();
    let gauge = GAUGE.get_or_init(|| {
        opentelemetry::global::meter("codectx")
            .i64_up_down_counter(RPC_SERVER_ACTIVE_REQUESTS)
            .with_unit("{request}")
            .with_description("gRPC requests being handled")
            .build()
    });
    let attributes = [opentelemetry::KeyValue::new(
        "rpc.service",
        service.to_owned(),
    )];
    gauge.add(1, &attributes);
    InFlight { gauge, attributes }
}

/// See [`request_in_flight`].
#[derive(Debug)]
pub struct InFlight {
    gauge: &'static opentelemetry::metrics::UpDownCounter<i64>,
    attributes: [opentelemetry::KeyValue; 1],
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.gauge.add(-1, &self.attributes);
    }
}

/// The process-wide tool latency histogram (see [`TOOL_DURATION`]).
pub fn tool_duration() -> &'static opentelemetry::metrics::Histogram<f64> {
    static HISTOGRAM: std::sync::OnceLock<opentelemetry::metrics::Histogram<f64>> =
        std::sync::OnceLock::new();
    HISTOGRAM.get_or_init(|| {
        opentelemetry::global::meter("codectx")
            .f64_histogram(TOOL_DURATION)
            .with_unit("ms")
            .with_description("MCP tool call latency at the gateway")
            .with_boundaries(RPC_DURATION_BOUNDS_MS.to_vec())
            .build()
    })
}

/// The process-wide count of tokens returned (see [`TOOL_TOKENS`]).
pub fn tool_tokens() -> &'static opentelemetry::metrics::Counter<u64> {
    static COUNTER: std::sync::OnceLock<opentelemetry::metrics::Counter<u64>> =
        std::sync::OnceLock::new();
    COUNTER.get_or_init(|| {
        opentelemetry::global::meter("codectx")
            .u64_counter(TOOL_TOKENS)
            .with_unit("{token}")
            .with_description("Tokens returned to agents by MCP tools")
            .build()
    })
}

/// A retrieval leg an answer can go out without (the `leg` label of
/// [`RETRIEVAL_FALLBACKS`]): a fixed set, so the label stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackLeg {
    /// The dense (vector) leg of memory recall.
    Vector,
    /// The memory notes `minimal_context` adds to code answers.
    MemoryNotes,
    /// The lexical (BM25) leg of code ranking, while its index loads.
    Lexical,
}

impl FallbackLeg {
    pub const ALL: [FallbackLeg; 3] = [
        FallbackLeg::Vector,
        FallbackLeg::MemoryNotes,
        FallbackLeg::Lexical,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FallbackLeg::Vector => "vector",
            FallbackLeg::MemoryNotes => "memory_notes",
            FallbackLeg::Lexical => "lexical",
        }
    }
}

fn fallbacks() -> &'static opentelemetry::metrics::Counter<u64> {
    static COUNTER: std::sync::OnceLock<opentelemetry::metrics::Counter<u64>> =
        std::sync::OnceLock::new();
    COUNTER.get_or_init(|| {
        opentelemetry::global::meter("codectx")
            .u64_counter(RETRIEVAL_FALLBACKS)
            .with_description("Answers given without a failed or late retrieval leg")
            .build()
    })
}

/// Records that an answer went out without `leg` (see [`RETRIEVAL_FALLBACKS`]).
pub fn record_fallback(leg: FallbackLeg) {
    fallbacks().add(1, &[opentelemetry::KeyValue::new("leg", leg.as_str())]);
}

/// Starts every fallback series at zero, so a rate reads 0 rather than "no data" until
/// the first fallback (called once the meter provider is installed).
fn register_fallback_series() {
    for leg in FallbackLeg::ALL {
        fallbacks().add(0, &[opentelemetry::KeyValue::new("leg", leg.as_str())]);
    }
}

/// One method's server-side latency histogram, as a service recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcLatency {
    /// gRPC service, e.g. `codectx.graph.v1.GraphHydratorService`.
    pub service: String,
    pub method: String,
    pub count: u64,
    pub sum_ms: f64,
    /// Upper bounds of the buckets (the last bucket is unbounded).
    pub bounds: Vec<f64>,
    pub bucket_counts: Vec<u64>,
}

impl RpcLatency {
    /// The `quantile` (0..1) read from the buckets, interpolating linearly inside the
    /// bucket that holds it; None without samples.
    pub fn quantile_ms(&self, quantile: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = quantile.clamp(0.0, 1.0) * self.count as f64;
        let mut seen = 0u64;
        for (index, &in_bucket) in self.bucket_counts.iter().enumerate() {
            if in_bucket == 0 {
                continue;
            }
            if (seen + in_bucket) as f64 >= rank {
                let lower = if index == 0 {
                    0.0
                } else {
                    self.bounds[index - 1]
                };
                let upper = self.bounds.get(index).copied().unwrap_or(lower);
                let within = (rank - seen as f64) / in_bucket as f64;
                return Some(lower + (upper - lower) * within.clamp(0.0, 1.0));
            }
            seen += in_bucket;
        }
        self.bounds.last().copied()
    }
}

/// Collects the metrics of every service running in this process (the all-in-one stack
/// of `codectx bench`), so a benchmark reports each service's latency as the service
/// measured it. Install before the services start: the histogram binds to the global
/// meter provider on first use.
#[derive(Debug, Clone)]
pub struct InProcessMetrics {
    provider: SdkMeterProvider,
    latest: std::sync::Arc<std::sync::Mutex<Vec<RpcLatency>>>,
}

impl InProcessMetrics {
    pub fn install() -> Self {
        let latest = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let exporter = SnapshotExporter {
            latest: latest.clone(),
        };
        // Exports only when asked (`snapshot`): the interval is longer than any run.
        let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(exporter)
            .with_interval(std::time::Duration::from_secs(24 * 3600))
            .build();
        let provider = SdkMeterProvider::builder().with_reader(reader).build();
        opentelemetry::global::set_meter_provider(provider.clone());
        Self { provider, latest }
    }

    /// Cumulative latency per (service, method) since install.
    pub fn snapshot(&self) -> Vec<RpcLatency> {
        let _ = self.provider.force_flush();
        self.latest.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

struct SnapshotExporter {
    latest: std::sync::Arc<std::sync::Mutex<Vec<RpcLatency>>>,
}

impl opentelemetry_sdk::metrics::exporter::PushMetricExporter for SnapshotExporter {
    async fn export(
        &self,
        metrics: &opentelemetry_sdk::metrics::data::ResourceMetrics,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
        let mut found = Vec::new();
        for scope in metrics.scope_metrics() {
            for metric in scope.metrics() {
                if metric.name() != RPC_SERVER_DURATION {
                    continue;
                }
                let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                    continue;
                };
                for point in histogram.data_points() {
                    let attribute = |key: &str| {
                        point
                            .attributes()
                            .find(|kv| kv.key.as_str() == key)
                            .map(|kv| kv.value.as_str().into_owned())
                            .unwrap_or_default()
                    };
                    let (service, method) = (attribute("rpc.service"), attribute("rpc.method"));
                    let buckets: Vec<u64> = point.bucket_counts().collect();
                    // One series per status code: a method's latency sums them.
                    match found
                        .iter_mut()
                        .find(|l: &&mut RpcLatency| l.service == service && l.method == method)
                    {
                        Some(latency) => {
                            latency.count += point.count();
                            latency.sum_ms += point.sum();
                            for (total, add) in latency.bucket_counts.iter_mut().zip(buckets) {
                                *total += add;
                            }
                        }
                        None => found.push(RpcLatency {
                            service,
                            method,
                            count: point.count(),
                            sum_ms: point.sum(),
                            bounds: point.bounds().collect(),
                            bucket_counts: buckets,
                        }),
                    }
                }
            }
        }
        if let Ok(mut latest) = self.latest.lock() {
            *latest = found;
        }
        Ok(())
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(
        &self,
        _timeout: std::time::Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn temporality(&self) -> opentelemetry_sdk::metrics::Temporality {
        opentelemetry_sdk::metrics::Temporality::Cumulative
    }
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|key| key.as_str()).collect()
    }
}

struct HeaderInjector<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

/// The remote parent carried in W3C `traceparent`/`tracestate` headers, if any.
pub fn extract_parent(headers: &http::HeaderMap) -> opentelemetry::Context {
    // From an empty context: `extract` would start from the current one, so a request
    // without `traceparent` would inherit whatever span happens to be entered.
    TraceContextPropagator::new()
        .extract_with_context(&opentelemetry::Context::new(), &HeaderExtractor(headers))
}

/// Makes the W3C trace context in `headers` (if any) the parent of `span`.
pub fn set_remote_parent(span: &tracing::Span, headers: &http::HeaderMap) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let parent = extract_parent(headers);
    if parent.span().span_context().is_valid()
        && let Err(error) = span.set_parent(parent)
    {
        tracing::debug!(%error, "the remote trace parent was not applied");
    }
}

/// Writes the current span's W3C trace context into outgoing headers.
pub fn inject_current(headers: &mut http::HeaderMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    TraceContextPropagator::new().inject_context(&context, &mut HeaderInjector(headers));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_a_w3c_parent() {
        use opentelemetry::trace::TraceContextExt;
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        let context = extract_parent(&headers);
        let span = context.span();
        let span_context = span.span_context();
        assert!(span_context.is_valid());
        assert_eq!(
            span_context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(span_context.is_remote());
    }

    #[test]
    fn quantiles_interpolate_inside_the_bucket() {
        let latency = RpcLatency {
            service: "s".into(),
            method: "m".into(),
            count: 100,
            sum_ms: 0.0,
            bounds: vec![1.0, 2.0, 4.0],
            bucket_counts: vec![50, 40, 10, 0],
        };
        assert_eq!(latency.quantile_ms(0.5), Some(1.0));
        assert_eq!(latency.quantile_ms(0.7), Some(1.5));
        assert_eq!(latency.quantile_ms(0.95), Some(3.0));
        let empty = RpcLatency {
            count: 0,
            bucket_counts: vec![0, 0, 0, 0],
            ..latency
        };
        assert_eq!(empty.quantile_ms(0.5), None);
    }

    #[test]
    fn no_header_no_parent() {
        use opentelemetry::trace::TraceContextExt;
        let context = extract_parent(&http::HeaderMap::new());
        assert!(!context.span().span_context().is_valid());
    }
}
