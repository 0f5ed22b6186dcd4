//! The `codectx` command line: `up` (the whole stack in one process), `admin` (authz
//! administration), `keys` (signing-key rotation), `reindex` (a cluster's indexer, now)
//! and `bench` (the benchmark harness); [`watch`] keeps a local stack's graphs fresh.
//! The [`stack`] module is also the in-process cluster the end-to-end tests start, so
//! tests run the code that ships.

pub mod admin;
pub mod bench;
pub mod indexing;
pub mod memory;
pub mod reindex;
pub mod stack;
pub mod watch;
