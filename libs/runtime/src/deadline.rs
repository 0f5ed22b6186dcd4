use std::task::{Context, Poll};
use std::time::Duration;

use codectx_errors::{Error, ErrorKind};
use futures::future::{BoxFuture, FutureExt};
use tower::{Layer, Service};

/// Ends every request after the server's deadline, or the caller's `grpc-timeout` if that
/// is sooner, with `DEADLINE_EXCEEDED` (reason `deadline_exceeded`) naming the limit.
#[derive(Debug, Clone, Copy)]
pub struct DeadlineLayer {
    limit: Duration,
}

impl DeadlineLayer {
    pub fn new(limit: Duration) -> Self {
        Self { limit }
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline {
            inner,
            limit: self.limit,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Deadline<S> {
    inner: S,
    limit: Duration,
}

/// Parses gRPC's `grpc-timeout` header: up to 8 digits and a unit (H, M, S, m, u, n).
fn grpc_timeout(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount.saturating_mul(3600)),
        "M" => Duration::from_secs(amount.saturating_mul(60)),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

impl<S, Body, ResponseBody> Service<http::Request<Body>> for Deadline<S>
where
    S: Service<http::Request<Body>, Response = http::Response<ResponseBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResponseBody: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let limit =
            grpc_timeout(request.headers()).map_or(self.limit, |asked| asked.min(self.limit));
        let path = request.uri().path().to_owned();
        let future = self.inner.call(request);
        async move {
            match tokio::time::timeout(limit, future).await {
                Ok(result) => result,
                Err(_) => {
                    let error = Error::new(
                        ErrorKind::DeadlineExceeded,
                        format!(
                            "{path} did not finish within its deadline of {} ms",
                            limit.as_millis()
                        ),
                    );
                    Ok(error.to_status().into_http())
                }
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_grpc_timeouts() {
        let mut headers = http::HeaderMap::new();
        for (value, expected) in [
            ("5S", Some(Duration::from_secs(5))),
            ("250m", Some(Duration::from_millis(250))),
            ("1H", Some(Duration::from_secs(3600))),
            ("x", None),
            ("12345678901S", None),
            ("10Q", None),
        ] {
            headers.insert("grpc-timeout", value.parse().unwrap());
            assert_eq!(grpc_timeout(&headers), expected, "{value}");
        }
    }
}
