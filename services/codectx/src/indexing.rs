//! `codectx index`: index a repository into the embedded SQLite graph, Neo4j or HugeGraph, for
//! the organisation that supplied it, and register the graph with authz (the only way an
//! organisation obtains an entry for its own repository; docs/security.md).

use std::path::PathBuf;
use std::sync::Arc;

use codectx_errors::Error;
use codectx_graph::GraphStore;
use codectx_index::{IndexOptions, IndexReport};

use crate::stack::GraphBackend;

/// Which graph store a command reads and writes: the embedded one in `--data` unless a
/// server is named (shared by `index`, `up` and `bench`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GraphArgs {
    /// Use the Neo4j 5.26 graph at this Bolt URI instead of the embedded graph.
    #[arg(long, value_name = "BOLT_URI", conflicts_with = "hugegraph")]
    pub neo4j: Option<String>,
    #[arg(long, default_value = "neo4j", requires = "neo4j")]
    pub neo4j_user: String,
    /// Name of the environment variable holding the Neo4j password.
    #[arg(long, default_value = "CODECTX_NEO4J_PASSWORD", requires = "neo4j")]
    pub neo4j_password_env: String,
    /// Use the HugeGraph 1.5 graph at this REST URL (`http://HOST:8080/GRAPH`, no
    /// credentials in it) instead of the embedded graph.
    #[arg(long, value_name = "URL")]
    pub hugegraph: Option<String>,
    #[arg(long, default_value = "admin", requires = "hugegraph")]
    pub hugegraph_user: String,
    /// Name of the environment variable holding the HugeGraph password.
    #[arg(
        long,
        default_value = "CODECTX_HUGEGRAPH_PASSWORD",
        requires = "hugegraph"
    )]
    pub hugegraph_password_env: String,
}

impl GraphArgs {
    /// The backend these arguments name (passwords read from their variables now).
    pub fn backend(&self) -> GraphBackend {
        let secret = |env: &str| std::env::var(env).unwrap_or_default();
        if let Some(uri) = &self.neo4j {
            GraphBackend::Neo4j {
                uri: uri.clone(),
                user: self.neo4j_user.clone(),
                password: secret(&self.neo4j_password_env),
            }
        } else if let Some(url) = &self.hugegraph {
            GraphBackend::HugeGraph {
                url: url.clone(),
                user: self.hugegraph_user.clone(),
                password: secret(&self.hugegraph_password_env),
            }
        } else {
            GraphBackend::Embedded
        }
    }
}

/// Arguments of `codectx index`.
#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// The repository checkout to index.
    pub path: PathBuf,
    /// The repository key agents use as `repository` (e.g. `gin`, `acme/api`); names are
    /// per organisation.
    #[arg(long)]
    pub name: String,
    /// The organisation that supplied the source (name or id): the graph belongs to it.
    /// Default: the data directory's development organisation (`dev`).
    #[arg(long)]
    pub org: Option<String>,
    /// Register the graph with this authz (e.g. `http://authz:50051`) instead of the access
    /// store under `--data`; the platform admin key comes from `--api-key-env`.
    #[arg(long)]
    pub authz: Option<String>,
    /// Name of the environment variable holding a platform admin API key (with `--authz`).
    #[arg(long, default_value = "CODECTX_API_KEY", requires = "authz")]
    pub api_key_env: String,
    /// PEM CA bundle that verifies an `https://` authz (turns TLS on).
    #[arg(long, requires = "authz")]
    pub authz_ca_file: Option<PathBuf>,
    /// This client's PEM certificate and key, for an authz that requires them (mTLS).
    #[arg(long, requires_all = ["authz_ca_file", "authz_key_file"])]
    pub authz_cert_file: Option<PathBuf>,
    #[arg(long, requires = "authz_cert_file")]
    pub authz_key_file: Option<PathBuf>,
    /// Data directory: the embedded graph (`graph.db`) and the index cache live here.
    #[arg(long, default_value = ".codectx")]
    pub data: PathBuf,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Files larger than this many bytes are skipped.
    #[arg(long, default_value_t = codectx_index::DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,
    /// Parser threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Do not show a progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// After indexing, print what the repository's policy (`.codectx.yaml`) did: files
    /// each exclude, include and language rule decided (with examples), and the files and
    /// symbols each annotation covers. docs/policy.md has the schema.
    #[arg(long)]
    pub explain_policy: bool,
}

impl IndexArgs {
    /// Indexing `path` as `name` into the embedded graph under `data`, with defaults.
    pub fn embedded(path: PathBuf, name: String, data: PathBuf) -> Self {
        Self {
            path,
            name,
            data,
            org: None,
            authz: None,
            api_key_env: String::new(),
            authz_ca_file: None,
            authz_cert_file: None,
            authz_key_file: None,
            graph: GraphArgs::default(),
            max_file_bytes: codectx_index::DEFAULT_MAX_FILE_BYTES,
            threads: 0,
            quiet: false,
            explain_policy: false,
        }
    }
}

/// Opens the store `args` names.
pub async fn open_store(args: &IndexArgs) -> Result<Arc<dyn GraphStore>, Error> {
    let store: Arc<dyn GraphStore> = args.graph.backend().open(&args.data).await?;
    Ok(store)
}

/// Where the graph is registered once written.
enum Registry {
    Local(codectx_authz::Store),
    Remote {
        client: codectx_clients::AuthzClient,
        api_key: String,
    },
}

impl Registry {
    fn open(args: &IndexArgs) -> Result<Registry, Error> {
        match &args.authz {
            Some(endpoint) => {
                let api_key = std::env::var(&args.api_key_env).map_err(|_| {
                    Error::invalid_argument(
                        "api-key-env",
                        format!(
                            "--authz needs a platform admin API key in ${}, which is not set",
                            args.api_key_env
                        ),
                    )
                })?;
                let path = |p: &Option<PathBuf>| {
                    p.as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                };
                let peer = codectx_clients::PeerConfig {
                    tls: codectx_clients::PeerTls {
                        ca_file: path(&args.authz_ca_file),
                        cert_file: path(&args.authz_cert_file),
                        key_file: path(&args.authz_key_file),
                        domain_name: String::new(),
                    },
                    ..codectx_clients::PeerConfig::single(endpoint.clone())
                };
                let client = codectx_clients::AuthzClient::connect(&peer).map_err(|e| {
                    Error::invalid_argument("authz", format!("--authz {endpoint}: {e}"))
                })?;
                Ok(Registry::Remote { client, api_key })
            }
            None => Ok(Registry::Local(codectx_authz::Store::open(
                &args.data.join("authz").join("access.db"),
            )?)),
        }
    }

    /// The id of the organisation `--org` names (an id or a name), or the local `dev` one.
    async fn owner(&self, org: Option<&str>) -> Result<String, Error> {
        let not_found = |org: &str| {
            Error::not_found(format!(
                "--org {org}: no organisation with that name or id (create it with `codectx admin org create`)"
            ))
            .with_field("org")
        };
        match self {
            Registry::Local(store) => match org {
                None => Ok(codectx_authz::dev_organisation(store)?.id),
                Some(org) => {
                    if let Some(found) = store.organisation_by_name(org)? {
                        return Ok(found.id);
                    }
                    if codectx_core::ids::has_prefix(org, codectx_core::ids::prefix::ORGANISATION)
                        && let Some(found) = store.organisation(org)?
                    {
                        return Ok(found.id);
                    }
                    Err(not_found(org))
                }
            },
            Registry::Remote { client, api_key } => {
                let org = org.ok_or_else(|| {
                    Error::invalid_argument(
                        "org",
                        "--authz needs --org: the organisation that supplied the source",
                    )
                })?;
                let organisations = client
                    .list_organisations(
                        api_key,
                        codectx_proto::authz::v1::ListOrganisationsRequest {},
                    )
                    .await?
                    .organisations;
                organisations
                    .into_iter()
                    .find(|o| o.id == org || o.name == org)
                    .map(|o| o.id)
                    .ok_or_else(|| not_found(org))
            }
        }
    }

    async fn register(&self, owner: &str, name: &str, report: &IndexReport) -> Result<(), Error> {
        match self {
            Registry::Local(store) => {
                store.register_indexed_graph(
                    owner,
                    name,
                    &codectx_authz::GraphIndex {
                        commit: report.commit.clone(),
                        policy_fingerprint: report.policy.fingerprint.clone(),
                    },
                )?;
            }
            Registry::Remote { client, api_key } => {
                client
                    .register_indexed_graph(
                        api_key,
                        codectx_proto::authz::v1::RegisterIndexedGraphRequest {
                            organisation_id: owner.to_owned(),
                            name: name.to_owned(),
                            commit: report.commit.clone(),
                            policy_fingerprint: report.policy.fingerprint.clone(),
                        },
                    )
                    .await?;
            }
        }
        Ok(())
    }
}

/// Indexes for the owning organisation, registers the graph with authz, and returns the
/// report.
pub async fn run(args: &IndexArgs, store: &dyn GraphStore) -> Result<IndexReport, Error> {
    let registry = Registry::open(args)?;
    let owner = registry.owner(args.org.as_deref()).await?;
    let report = codectx_index::index(
        store,
        &IndexOptions {
            root: args.path.clone(),
            owner: owner.clone(),
            name: args.name.clone(),
            cache: args.data.join("index-cache.db"),
            max_file_bytes: args.max_file_bytes,
            progress: !args.quiet,
            threads: args.threads,
        },
    )
    .await?;
    registry.register(&owner, &args.name, &report).await?;
    Ok(report)
}

/// The one-paragraph summary printed after a run.
pub fn summary(name: &str, report: &IndexReport) -> String {
    let mut text = format!(
        "indexed {name} ({}): {} files ({} parsed, {} unchanged, {} removed, {} generated, {} skipped), {} symbols, {} edges in {:.2} s ({:.0} files/s)",
        report.graph_id,
        report.files,
        report.parsed,
        report.reused,
        report.removed,
        report.generated,
        report.skipped.len(),
        report.symbols,
        report.edges,
        report.seconds,
        report.files_per_second()
    );
    if report.refreshed > 0 {
        text.push_str(&format!(
            "; {} unchanged files read again by a newer extractor",
            report.refreshed
        ));
    }
    if report.policy.present {
        let excluded: usize = report
            .policy
            .rules
            .iter()
            .filter(|r| r.effect == "excluded")
            .map(|r| r.files)
            .sum();
        text.push_str(&format!(
            "; policy {} ({excluded} files excluded, {} annotations)",
            short(&report.policy.fingerprint),
            report.policy.annotations.len()
        ));
    }
    if report.syntax_errors > 0 {
        text.push_str(&format!(
            "; {} files had syntax errors (indexed what parsed)",
            report.syntax_errors
        ));
    }
    text
}

fn short(fingerprint: &str) -> &str {
    &fingerprint[..fingerprint.len().min(12)]
}

/// `--explain-policy`: what the policy decided, rule by rule.
pub fn explain_policy(report: &IndexReport) -> String {
    let policy = &report.policy;
    if !policy.present {
        return format!(
            "no {} at the repository root: the defaults apply (.gitignore, vendored, \
             dependency and build directories, generated files); docs/policy.md has the schema",
            codectx_index::policy::POLICY_FILE
        );
    }
    let mut text = format!(
        "policy {} (fingerprint {})\n",
        codectx_index::policy::POLICY_FILE,
        policy.fingerprint
    );
    if policy.rules.is_empty() {
        text.push_str("rules: none decided anything in this checkout\n");
    }
    for rule in &policy.rules {
        text.push_str(&format!(
            "{}: {} {} file{}",
            rule.rule,
            rule.effect,
            rule.files,
            if rule.files == 1 { "" } else { "s" }
        ));
        if !rule.examples.is_empty() {
            let more = rule.files.saturating_sub(rule.examples.len());
            text.push_str(&format!(" (e.g. {}", rule.examples.join(", ")));
            if more > 0 {
                text.push_str(&format!(", and {more} more"));
            }
            text.push(')');
        }
        text.push('\n');
    }
    for annotation in &policy.annotations {
        text.push_str(&format!(
            "annotation on {}: {} files, {} symbols: {}\n",
            annotation.target, annotation.files, annotation.symbols, annotation.note
        ));
    }
    text.trim_end().to_owned()
}
