//! The one way every codectx service serves gRPC: [`serve`] with the standard tower stack
//! (W3C trace-context extraction, load shedding, a global concurrency limit, tenant
//! verification, a 10 s deadline), the gRPC health service (NOT_SERVING until the service
//! says it is ready), reflection, and graceful shutdown with a drain period.

mod deadline;
mod keys;
mod server;
pub mod tls;
mod trace;

pub use deadline::DeadlineLayer;
pub use keys::{TenantConfig, load_verifier, read_public_keys};
pub use server::{
    BuiltService, Readiness, RunningService, ServerConfig, bind, describe, describe_rpc, serve,
    shutdown_signal, spawn, spawn_in_process,
};
pub use trace::GrpcTraceLayer;
