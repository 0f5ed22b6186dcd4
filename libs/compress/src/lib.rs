//! codectx-compress: the compression engine of the agent-facing edge.
//!
//! Every tool answer passes through [`Engine::deliver`] where the MCP session lives
//! (the gateway): bypass rules (`detail`, `for_edit`, snippets, writes, errors, small
//! answers, the focus set, structured content), the tool's compressor at the session's
//! [`Level`] (fixed, or `auto` from the token budget; capped per tool and by the
//! quality monitor), then session dedup ([`ledger`]) and cross-session dedup per tenant
//! and subject ([`store`]); header lines the session already holds are stated once
//! ([`stated`]). A panic inside returns the raw answer and is counted.
//! [`generic`] holds the compressors of the `compress` tool. `docs/compression.md`
//! describes the levels and their measured quality.

pub mod engine;
pub mod generic;
pub mod ledger;
pub mod level;
pub mod parts;
pub mod session;
pub mod stated;
pub mod store;
pub mod tools;

pub use engine::{Bypass, Call, CallOptions, CompressionConfig, Delivered, Engine, Outcome};
pub use generic::{Compressed, ContentKind, compress_text};
pub use level::{Level, LevelSetting, LevelSource};
pub use session::{Session, Stats};
pub use store::{CrossSessionStore, Principal, Totals};
pub use tools::Tool;
