//! Layered configuration: defaults, then a TOML file, then environment variables named
//! `CODECTX_<SERVICE>__SECTION__KEY` (service upper-cased, `-` as `_`; keys lower-cased).
//!
//! Environment values are read as TOML scalars or arrays when they parse as one
//! (`10`, `true`, `["a","b"]`) and as plain strings otherwise. `docs/config.md` lists
//! every key of every service.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use toml::{Table, Value};

/// Why configuration could not be loaded; each message names the file or variable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config file {path} is not valid TOML: {source}")]
    Parse {
        path: String,
        source: toml::de::Error,
    },
    #[error("environment variable {name}: {reason}")]
    Env { name: String, reason: String },
    #[error("invalid configuration for {service}: {source}")]
    Invalid {
        service: String,
        source: toml::de::Error,
    },
}

/// The environment prefix of a service, e.g. `CODECTX_GRAPH_HYDRATOR__`.
pub fn env_prefix(service: &str) -> String {
    format!(
        "CODECTX_{}__",
        service.to_ascii_uppercase().replace('-', "_")
    )
}

/// Loads `T` for `service` from its defaults, an optional TOML file and the process
/// environment.
pub fn load<T>(service: &str, file: Option<&Path>) -> Result<T, ConfigError>
where
    T: Default + Serialize + DeserializeOwned,
{
    load_with_env(service, file, std::env::vars())
}

/// [`load`] with an explicit environment, for tests and for embedding several services in
/// one process.
pub fn load_with_env<T>(
    service: &str,
    file: Option<&Path>,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<T, ConfigError>
where
    T: Default + Serialize + DeserializeOwned,
{
    let mut merged = Table::try_from(T::default()).map_err(|e| ConfigError::Env {
        name: "(defaults)".into(),
        reason: format!("defaults do not serialize: {e}"),
    })?;
    if let Some(path) = file {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let table: Table = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: shown,
            source,
        })?;
        merge(&mut merged, table);
    }
    let prefix = env_prefix(service);
    let mut overrides: Vec<(String, String)> = env
        .into_iter()
        .filter(|(name, _)| name.starts_with(&prefix))
        .collect();
    overrides.sort();
    for (name, raw) in overrides {
        let path: Vec<String> = name[prefix.len()..]
            .split("__")
            .map(|part| part.to_ascii_lowercase())
            .collect();
        if path.iter().any(|part| part.is_empty()) {
            return Err(ConfigError::Env {
                name,
                reason: "expected SECTION__KEY after the prefix, with no empty parts".into(),
            });
        }
        set_path(&mut merged, &path, parse_env_value(&raw)).map_err(|reason| ConfigError::Env {
            name: name.clone(),
            reason,
        })?;
    }
    Value::Table(merged)
        .try_into()
        .map_err(|source| ConfigError::Invalid {
            service: service.to_owned(),
            source,
        })
}

fn parse_env_value(raw: &str) -> Value {
    let wrapped = format!("value = {raw}");
    match toml::from_str::<Table>(&wrapped) {
        Ok(mut table) => table
            .remove("value")
            .unwrap_or_else(|| Value::String(raw.to_owned())),
        Err(_) => Value::String(raw.to_owned()),
    }
}

fn set_path(table: &mut Table, path: &[String], value: Value) -> Result<(), String> {
    let (last, parents) = path.split_last().expect("non-empty path");
    let mut current = table;
    for part in parents {
        let entry = current
            .entry(part.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        current = match entry {
            Value::Table(inner) => inner,
            _ => return Err(format!("`{part}` is a value, not a section")),
        };
    }
    // A string that looks like a number stays a string when the default is a string.
    let value = match (current.get(last), value) {
        (Some(Value::String(_)), Value::Integer(i)) => Value::String(i.to_string()),
        (Some(Value::String(_)), Value::Float(f)) => Value::String(f.to_string()),
        (Some(Value::String(_)), Value::Boolean(b)) => Value::String(b.to_string()),
        (_, value) => value,
    };
    current.insert(last.clone(), value);
    Ok(())
}

fn merge(base: &mut Table, overlay: Table) {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(base_inner)), Value::Table(overlay_inner)) => {
                merge(base_inner, overlay_inner)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct Config {
        listen: String,
        server: Server,
    }

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct Server {
        concurrency: u32,
        name: String,
        peers: Vec<String>,
    }

    impl Default for Config {
        fn default() -> Self {
            Self {
                listen: "127.0.0.1:0".into(),
                server: Server::default(),
            }
        }
    }

    impl Default for Server {
        fn default() -> Self {
            Self {
                concurrency: 64,
                name: "default".into(),
                peers: vec![],
            }
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_then_file_then_env() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        writeln!(
            file,
            "listen = \"0.0.0.0:9000\"\n[server]\nconcurrency = 8\nname = \"file\""
        )
        .unwrap();
        let config: Config = load_with_env(
            "graph-hydrator",
            Some(file.path()),
            env(&[
                ("CODECTX_GRAPH_HYDRATOR__SERVER__CONCURRENCY", "16"),
                (
                    "CODECTX_GRAPH_HYDRATOR__SERVER__PEERS",
                    "[\"a:1\", \"b:2\"]",
                ),
                ("CODECTX_GRAPH_HYDRATOR__SERVER__NAME", "123"),
                ("CODECTX_AUTHZ__LISTEN", "ignored"),
            ]),
        )
        .unwrap();
        assert_eq!(config.listen, "0.0.0.0:9000");
        assert_eq!(config.server.concurrency, 16);
        assert_eq!(config.server.name, "123");
        assert_eq!(config.server.peers, vec!["a:1", "b:2"]);
    }

    #[test]
    fn unknown_key_is_an_error_naming_the_service() {
        let error = load_with_env::<Config>(
            "authz",
            None,
            env(&[("CODECTX_AUTHZ__SERVER__CONCURENCY", "1")]),
        )
        .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("authz") && text.contains("concurency"),
            "{text}"
        );
    }

    #[test]
    fn wrong_type_is_an_error() {
        let error = load_with_env::<Config>(
            "authz",
            None,
            env(&[("CODECTX_AUTHZ__SERVER__CONCURRENCY", "many")]),
        )
        .unwrap_err();
        assert!(matches!(error, ConfigError::Invalid { .. }), "{error}");
    }

    #[test]
    fn missing_file_names_the_path() {
        let error =
            load_with_env::<Config>("authz", Some(Path::new("/nonexistent/c.toml")), env(&[]))
                .unwrap_err();
        assert!(error.to_string().contains("/nonexistent/c.toml"));
    }
}
