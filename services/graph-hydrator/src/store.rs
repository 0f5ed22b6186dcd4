//! Which graph store backs the service, from configuration.

use std::sync::Arc;

use codectx_errors::Error;
use codectx_graph::Store;
use codectx_graph::hugegraph::HugeGraphStore;
use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::sqlite::SqliteGraphStore;
use serde::{Deserialize, Serialize};

/// The graph backends (`graph.backend`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GraphBackendKind {
    /// One SQLite file (embedded, the default).
    #[default]
    Sqlite,
    /// A Neo4j 5.26 server over Bolt.
    Neo4j,
    /// A HugeGraph 1.5 server over its REST API.
    Hugegraph,
}

/// The `[graph]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct GraphConfig {
    /// `sqlite` (embedded, default), `neo4j` or `hugegraph`.
    pub backend: GraphBackendKind,
    /// SQLite file (with `backend = "sqlite"`).
    pub sqlite_path: String,
    /// Bolt URI, e.g. `bolt://neo4j:7687` (with `backend = "neo4j"`).
    pub neo4j_uri: String,
    pub neo4j_user: String,
    /// Name of the environment variable that holds the Neo4j password.
    pub neo4j_password_env: String,
    /// REST URL and graph, e.g. `http://hugegraph:8080/hugegraph` (with
    /// `backend = "hugegraph"`).
    pub hugegraph_url: String,
    pub hugegraph_user: String,
    /// Name of the environment variable that holds the HugeGraph password.
    pub hugegraph_password_env: String,
}

impl Default for GraphConfig {
    fn default() -> Self {
        Self {
            backend: GraphBackendKind::Sqlite,
            sqlite_path: ".codectx/graph.db".into(),
            neo4j_uri: String::new(),
            neo4j_user: "neo4j".into(),
            neo4j_password_env: "CODECTX_NEO4J_PASSWORD".into(),
            hugegraph_url: String::new(),
            hugegraph_user: "admin".into(),
            hugegraph_password_env: "CODECTX_HUGEGRAPH_PASSWORD".into(),
        }
    }
}

fn password(env: &str) -> String {
    if env.is_empty() {
        String::new()
    } else {
        std::env::var(env).unwrap_or_default()
    }
}

/// Opens the configured store.
pub async fn open(config: &GraphConfig) -> Result<Arc<dyn Store>, Error> {
    match config.backend {
        GraphBackendKind::Sqlite => Ok(Arc::new(SqliteGraphStore::open(std::path::Path::new(
            &config.sqlite_path,
        ))?)),
        GraphBackendKind::Neo4j => {
            if config.neo4j_uri.is_empty() {
                return Err(Error::invalid_argument(
                    "graph.neo4j_uri",
                    "graph.backend is neo4j but graph.neo4j_uri is empty",
                ));
            }
            Ok(Arc::new(
                Neo4jGraphStore::connect(
                    &config.neo4j_uri,
                    &config.neo4j_user,
                    &password(&config.neo4j_password_env),
                )
                .await?,
            ))
        }
        GraphBackendKind::Hugegraph => {
            if config.hugegraph_url.is_empty() {
                return Err(Error::invalid_argument(
                    "graph.hugegraph_url",
                    "graph.backend is hugegraph but graph.hugegraph_url is empty",
                ));
            }
            Ok(Arc::new(
                HugeGraphStore::connect(
                    &config.hugegraph_url,
                    &config.hugegraph_user,
                    &password(&config.hugegraph_password_env),
                )
                .await?,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(env: &[(&str, &str)]) -> Result<crate::Config, codectx_config::ConfigError> {
        codectx_config::load_with_env(
            "graph-hydrator",
            None,
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    #[test]
    fn the_backend_is_one_of_three_names() {
        let config = load(&[
            ("CODECTX_GRAPH_HYDRATOR__GRAPH__BACKEND", "hugegraph"),
            (
                "CODECTX_GRAPH_HYDRATOR__GRAPH__HUGEGRAPH_URL",
                "http://hugegraph:8080/codectx",
            ),
        ])
        .unwrap();
        assert_eq!(config.graph.backend, GraphBackendKind::Hugegraph);
        assert_eq!(config.graph.hugegraph_user, "admin");
        assert_eq!(
            config.graph.hugegraph_password_env,
            "CODECTX_HUGEGRAPH_PASSWORD"
        );
        let error = load(&[("CODECTX_GRAPH_HYDRATOR__GRAPH__BACKEND", "postgres")]).unwrap_err();
        assert!(error.to_string().contains("hugegraph"), "{error}");
    }

    #[tokio::test]
    async fn a_server_backend_needs_its_address() {
        let config = GraphConfig {
            backend: GraphBackendKind::Hugegraph,
            ..GraphConfig::default()
        };
        let error = open(&config).await.unwrap_err();
        assert_eq!(error.field(), "graph.hugegraph_url");
    }
}
