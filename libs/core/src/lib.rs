//! Domain vocabulary shared by every codectx crate: the limits of DESIGN.md section 5,
//! id formats, and the checks that enforce them at the edge.

pub mod auth;
pub mod checkout;
pub mod conventions;
pub mod embedding_text;
pub mod ids;
pub mod languages;
pub mod limits;
