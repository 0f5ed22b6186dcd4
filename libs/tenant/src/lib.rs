//! The signed, immutable tenant context that travels with every request.
//!
//! Only authz holds a [`SigningKey`] and mints contexts ([`Minter`]); every other service
//! verifies them with a [`Verifier`] in the [`TenantLayer`] before any handler runs, and
//! hands handlers a [`TenantContext`]. A `TenantContext` has private fields and no
//! `Default`: the only ways to get one are verifying signed bytes or minting with the key.
//! Outgoing clients take `&TenantContext` and forward the original signed bytes
//! unchanged, so a downstream service sees exactly what authz signed.

mod context;
mod keys;
mod layer;

pub use context::{Claims, Scope, TenantContext};
pub use keys::{
    KeyFileError, Minter, SessionRequest, SigningKey, VerificationKey, Verifier, VerifyError,
    write_private_file,
};
pub use layer::{TenantLayer, TenantService, from_request};

/// The binary gRPC metadata key that carries the encoded `SignedTenantContext`.
pub const METADATA_KEY: &str = "codectx-context-bin";

/// Prefix of the signed message, so a signature over a context can never be replayed as a
/// signature over anything else.
pub const SIGNATURE_DOMAIN: &[u8] = b"codectx-tenant-context-v1\0";

/// Default lifetime of a minted context (DESIGN.md section 3: short, 60 s).
pub const DEFAULT_TTL_SECONDS: i64 = 60;

/// Tolerated clock difference between authz and a verifying service.
pub const CLOCK_SKEW_SECONDS: i64 = 5;

/// Larger metadata values are rejected before decoding.
pub const MAX_ENCODED_CONTEXT_BYTES: usize = 4096;

pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
