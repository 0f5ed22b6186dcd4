//! Which graph store backs the service, from configuration.

use std::sync::Arc;

use codectx_errors::Error;
use codectx_graph::Store;
use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::sqlite::SqliteGraphStore;
use serde::{Deserialize, Serialize};

/// The `[graph]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct GraphConfig {
    /// `sqlite` (embedded, default) or `neo4j`.
    pub backend: String,
    /// SQLite file (with `backend = "sqlite"`).
    pub sqlite_path: String,
    /// Bolt URI, e.g. `bolt://neo4j:7687` (with `backend = "neo4j"`).
    pub neo4j_uri: String,
    pub neo4j_user: String,
    /// Name of the environment variable that holds the Neo4j password.
    pub neo4j_password_env: String,
}

impl Default for GraphConfig {
    fn default() -> Self {
        Self {
            backend: "sqlite".into(),
            sqlite_path: ".codectx/graph.db".into(),
            neo4j_uri: String::new(),
            neo4j_user: "neo4j".into(),
            neo4j_password_env: "CODECTX_NEO4J_PASSWORD".into(),
        }
    }
}

/// Opens the configured store.
pub async fn open(config: &GraphConfig) -> Result<Arc<dyn Store>, Error> {
    match config.backend.as_str() {
        "sqlite" => Ok(Arc::new(SqliteGraphStore::open(std::path::Path::new(
            &config.sqlite_path,
        ))?)),
        "neo4j" => {
            if config.neo4j_uri.is_empty() {
                return Err(Error::invalid_argument(
                    "graph.neo4j_uri",
                    "graph.backend is neo4j but graph.neo4j_uri is empty",
                ));
            }
            let password = if config.neo4j_password_env.is_empty() {
                String::new()
            } else {
                std::env::var(&config.neo4j_password_env).unwrap_or_default()
            };
            Ok(Arc::new(
                Neo4jGraphStore::connect(&config.neo4j_uri, &config.neo4j_user, &password).await?,
            ))
        }
        other => Err(Error::invalid_argument(
            "graph.backend",
            format!("unknown graph backend {other:?}: use sqlite or neo4j"),
        )),
    }
}
