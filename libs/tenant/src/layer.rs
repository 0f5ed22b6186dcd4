use std::sync::Arc;
use std::task::{Context, Poll};

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use codectx_errors::Error;
use futures::future::{BoxFuture, FutureExt};
use tower::{Layer, Service};

use crate::keys::{Verifier, VerifyError};
use crate::{METADATA_KEY, TenantContext};

/// gRPC binary metadata is base64, padded or not depending on the sender.
const METADATA_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Paths every service serves without a tenant context: health checks and reflection.
pub fn is_always_exempt(path: &str) -> bool {
    path.starts_with("/grpc.health.v1.Health/") || path.starts_with("/grpc.reflection.")
}

/// Tower layer that verifies the signed tenant context before any handler runs and puts
/// the [`TenantContext`] into the request extensions. Requests without a valid context get
/// `UNAUTHENTICATED` with a reason, and never reach the service.
#[derive(Clone)]
pub struct TenantLayer {
    verifier: Arc<Verifier>,
    exempt: Arc<[String]>,
}

impl TenantLayer {
    pub fn new(verifier: Arc<Verifier>) -> Self {
        Self {
            verifier,
            exempt: Arc::from(Vec::new()),
        }
    }

    /// Extra exact gRPC paths (e.g. `/codectx.authz.v1.AuthzService/Authorize`) served
    /// without a context because they authenticate the caller another way.
    pub fn with_exempt_paths(mut self, paths: impl IntoIterator<Item = String>) -> Self {
        self.exempt = paths.into_iter().collect::<Vec<_>>().into();
        self
    }
}

impl<S> Layer<S> for TenantLayer {
    type Service = TenantService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        TenantService {
            inner,
            verifier: self.verifier.clone(),
            exempt: self.exempt.clone(),
        }
    }
}

/// The service [`TenantLayer`] produces.
#[derive(Clone)]
pub struct TenantService<S> {
    inner: S,
    verifier: Arc<Verifier>,
    exempt: Arc<[String]>,
}

impl<S, RequestBody, ResponseBody> Service<http::Request<RequestBody>> for TenantService<S>
where
    S: Service<http::Request<RequestBody>, Response = http::Response<ResponseBody>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    RequestBody: Send + 'static,
    ResponseBody: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<RequestBody>) -> Self::Future {
        let path = request.uri().path();
        let exempt = is_always_exempt(path) || self.exempt.iter().any(|p| p == path);
        if !exempt || request.headers().contains_key(METADATA_KEY) {
            // Exempt paths may still carry a context (authz's DeriveSessionContext uses the
            // caller's); when one is present it must verify.
            match verify_headers(&self.verifier, request.headers()) {
                Ok(context) => {
                    request.extensions_mut().insert(context);
                }
                Err(error) if !exempt || error != VerifyError::Missing => {
                    tracing::debug!(path, reason = error.reason(), "tenant context rejected");
                    let status = Error::from(error).to_status();
                    return futures::future::ready(Ok(status.into_http())).boxed();
                }
                Err(_) => {}
            }
        }
        // Take the service that was polled ready and leave a fresh clone in its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        inner.call(request).boxed()
    }
}

fn verify_headers(
    verifier: &Verifier,
    headers: &http::HeaderMap,
) -> Result<TenantContext, VerifyError> {
    let mut values = headers.get_all(METADATA_KEY).iter();
    let value = values.next().ok_or(VerifyError::Missing)?;
    if values.next().is_some() {
        return Err(VerifyError::Malformed(
            "more than one context in metadata".into(),
        ));
    }
    if value.len() > crate::MAX_ENCODED_CONTEXT_BYTES * 4 / 3 + 4 {
        return Err(VerifyError::Malformed("metadata value is too large".into()));
    }
    let bytes = METADATA_BASE64
        .decode(value.as_bytes())
        .map_err(|_| VerifyError::Malformed("metadata value is not base64".into()))?;
    verifier.verify(&bytes)
}

/// The verified context of a request that passed the [`TenantLayer`]. `UNAUTHENTICATED`
/// if there is none (an exempt path, or a service built without the layer).
pub fn from_request<T>(request: &tonic::Request<T>) -> Result<TenantContext, tonic::Status> {
    request
        .extensions()
        .get::<TenantContext>()
        .cloned()
        .ok_or_else(|| Error::from(VerifyError::Missing).to_status())
}
