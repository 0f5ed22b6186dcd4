//! authz: authenticates credentials, resolves repository selectors through access
//! entries and grants, and mints the signed TenantContext every other service verifies.
//! The access store is one SQLite file in the data directory (embedded by default, see
//! ADR 0003); the Ed25519 signing keys live beside it, and only authz holds them.

mod grpc;
pub mod oidc;
pub mod policy;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use codectx_errors::Error;
use codectx_proto::authz::v1::authz_service_server::{AuthzServiceServer, SERVICE_NAME};
use codectx_runtime::{BuiltService, Readiness, ServerConfig};
use codectx_telemetry::TelemetryConfig;
use codectx_tenant::{Minter, Scope, SigningKey, VerificationKey, Verifier};
use serde::{Deserialize, Serialize};
use tonic::service::Routes;

pub use policy::Authority;
pub use store::{GraphIndex, Store};

/// Service name in logs, spans and the environment prefix `CODECTX_AUTHZ__`.
pub const NAME: &str = "authz";

/// Default gRPC port.
pub const DEFAULT_PORT: u16 = 50051;

/// RPCs that authenticate the caller by credential rather than by tenant context.
const CREDENTIAL_RPCS: &[&str] = &[
    "Authenticate",
    "Authorize",
    "ListAccessibleRepositories",
    "GetVerificationKeys",
    "CreateOrganisation",
    "ListOrganisations",
    "CreateTeam",
    "ListTeams",
    "AddTeamMember",
    "RemoveTeamMember",
    "CreateSubject",
    "ListSubjects",
    "CreateApiKey",
    "ListApiKeys",
    "RevokeApiKey",
    "CreateRepository",
    "ListRepositories",
    "DeleteRepository",
    "CreateGrant",
    "ListGrants",
    "RevokeGrant",
    "RegisterIndexedGraph",
    "ShareGraph",
    "ListPublicGraphs",
    "LinkIdentity",
    "UnlinkIdentity",
];

/// Configuration: defaults, then the TOML file, then `CODECTX_AUTHZ__*`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub telemetry: TelemetryConfig,
    /// Directory of the access store (`access.db`) and, by default, the signing keys.
    pub data_dir: String,
    pub signing: SigningConfig,
    /// JWT bearer tokens from an OpenID Connect issuer (off while `issuer` is empty).
    pub oidc: oidc::OidcConfig,
}

/// The `[signing]` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct SigningConfig {
    /// Key ring file (`<key id> <base64 seed>` lines, last one signs). Empty:
    /// `<data_dir>/signing-keys`, generated on first start. The chart mounts a Secret.
    pub key_file: String,
    /// Lifetime of minted contexts in seconds (DESIGN.md: 60).
    pub ttl_seconds: i64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: ServerConfig::listening_on(format!("127.0.0.1:{DEFAULT_PORT}")),
            telemetry: TelemetryConfig::default(),
            data_dir: ".codectx/authz".into(),
            signing: SigningConfig::default(),
            oidc: oidc::OidcConfig::default(),
        }
    }
}

impl Default for SigningConfig {
    fn default() -> Self {
        Self {
            key_file: String::new(),
            ttl_seconds: codectx_tenant::DEFAULT_TTL_SECONDS,
        }
    }
}

/// A built authz: its gRPC service and the authority behind it.
#[derive(Debug)]
pub struct Authz {
    pub service: BuiltService,
    pub authority: Arc<Authority>,
}

impl Authz {
    /// A verifier that trusts every key this authz signs with.
    pub fn verifier(&self) -> Result<Arc<Verifier>, Error> {
        Ok(Arc::new(Verifier::new(
            self.authority.verification_keys().iter().cloned(),
        )?))
    }
}

/// Opens the store and the signing keys (creating both on first start) and builds the
/// service.
pub fn build(config: &Config) -> Result<Authz, Error> {
    let data_dir = PathBuf::from(&config.data_dir);
    let store = Arc::new(Store::open(&data_dir.join("access.db"))?);
    let key_file = if config.signing.key_file.is_empty() {
        data_dir.join("signing-keys")
    } else {
        PathBuf::from(&config.signing.key_file)
    };
    let mut ring = load_or_create_ring(&key_file)?;
    let verification_keys: Vec<VerificationKey> =
        ring.iter().map(SigningKey::verification_key).collect();
    let active = ring.pop().expect("a key ring is never empty");
    tracing::info!(
        key_id = active.key_id(),
        trusted = verification_keys.len(),
        "authz signing key loaded"
    );
    let minter = Minter::new(active).with_ttl_seconds(config.signing.ttl_seconds);
    let authority = Arc::new(Authority::new(store, minter, verification_keys));
    let oidc = if config.oidc.enabled() {
        tracing::info!(issuer = %config.oidc.issuer, "JWT bearer tokens accepted");
        Some(Arc::new(oidc::OidcValidator::new(config.oidc.clone())?))
    } else {
        None
    };
    let handler = grpc::AuthzHandler {
        authority: authority.clone(),
        oidc,
    };
    let service = BuiltService {
        name: NAME,
        grpc_name: SERVICE_NAME,
        routes: Routes::new(
            AuthzServiceServer::new(handler)
                .max_decoding_message_size(codectx_core::limits::GRPC_MESSAGE_BYTES),
        ),
        exempt_paths: CREDENTIAL_RPCS
            .iter()
            .map(|rpc| format!("/{SERVICE_NAME}/{rpc}"))
            .collect(),
        readiness: Readiness::new(true),
    };
    Ok(Authz { service, authority })
}

fn load_or_create_ring(path: &Path) -> Result<Vec<SigningKey>, Error> {
    if !path.exists() {
        let key = SigningKey::generate("authz");
        tracing::info!(path = %path.display(), key_id = key.key_id(), "generated a new signing key");
        SigningKey::write_ring(path, &[key]).map_err(|e| Error::internal(e.to_string()))?;
    }
    SigningKey::read_ring(path).map_err(|e| Error::internal(e.to_string()))
}

/// Appends a fresh key to the ring file; authz signs with it after its next start, and
/// keeps trusting the older keys until they are removed from the file.
pub fn rotate_signing_key(path: &Path) -> Result<String, Error> {
    let mut ring = load_or_create_ring(path)?;
    let key = SigningKey::generate("authz");
    let key_id = key.key_id().to_owned();
    ring.push(key);
    SigningKey::write_ring(path, &ring).map_err(|e| Error::internal(e.to_string()))?;
    Ok(key_id)
}

/// The public half of every key in the ring file, as `<key id> <base64 public key>` lines
/// (the `tenant.verification_keys_file` format), oldest first. The ring must exist: this
/// never creates keys.
pub fn public_keys_text(path: &Path) -> Result<String, Error> {
    if !path.exists() {
        return Err(Error::invalid_argument(
            "key_file",
            format!(
                "no key ring at {}: pass --key-file (or --data) where authz keeps it, or create one with `codectx keys rotate`",
                path.display()
            ),
        ));
    }
    let ring = SigningKey::read_ring(path).map_err(|e| Error::internal(e.to_string()))?;
    let mut text = String::new();
    for key in &ring {
        let public = key.verification_key();
        text.push_str(&format!(
            "{} {}\n",
            public.key_id,
            STANDARD.encode(public.public_key)
        ));
    }
    Ok(text)
}

/// The development identity `codectx up` creates on first start.
#[derive(Debug, Clone)]
pub struct DevIdentity {
    pub organisation: store::Organisation,
    pub subject: store::Subject,
    pub api_key: String,
}

/// Ensures a `dev` organisation and a platform-admin `dev` subject with an API key: the
/// given one, else the one saved in `<data_dir>/dev-api-key` (mode 0600, development
/// only), else a new one saved there.
pub fn bootstrap_dev(
    store: &Store,
    data_dir: &Path,
    api_key: Option<&str>,
) -> Result<DevIdentity, Error> {
    let organisation = dev_organisation(store)?;
    let subject = match store.subject_by_name(&organisation.id, "dev")? {
        Some(subject) => subject,
        None => store.create_subject(&organisation.id, "dev", store::Role::PlatformAdmin)?,
    };
    let saved = data_dir.join("dev-api-key");
    let api_key = match api_key {
        Some(key) => key.to_owned(),
        None => match std::fs::read_to_string(&saved) {
            Ok(text) if !text.trim().is_empty() => text.trim().to_owned(),
            _ => {
                let (_, secret) = store.create_api_key(&subject.id, "codectx up")?;
                write_secret_file(&saved, &secret)?;
                secret
            }
        },
    };
    store.import_api_key(&subject.id, "codectx up", &api_key)?;
    Ok(DevIdentity {
        organisation,
        subject,
        api_key,
    })
}

fn write_secret_file(path: &Path, secret: &str) -> Result<(), Error> {
    let error =
        |e: std::io::Error| Error::internal(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(error)?;
    }
    codectx_tenant::write_private_file(path, secret.as_bytes()).map_err(error)
}

/// Grants the subject every scope on each of its organisation's entries whose graph the
/// organisation indexed itself. Used by `codectx up` for the development subject, after
/// local index runs registered their graphs ([`Store::register_indexed_graph`]).
pub fn grant_indexed_repositories(
    store: &Store,
    subject_id: &str,
) -> Result<Vec<store::Repository>, Error> {
    let subject = store.require_subject(subject_id)?;
    let granted = store.accessible_repositories(&subject)?;
    let mut entries = Vec::new();
    for repository in store.list_repositories(&subject.organisation_id)? {
        let owned = store
            .graph(&repository.graph_id)?
            .is_some_and(|graph| graph.owner_id == subject.organisation_id);
        if !owned {
            continue;
        }
        let has_grant = granted.iter().any(|a| {
            a.repository.id == repository.id && Scope::ALL.iter().all(|s| a.scopes.contains(s))
        });
        if !has_grant {
            store.create_grant(
                &repository.id,
                &store::Grantee::Subject(subject_id.to_owned()),
                &Scope::ALL,
            )?;
        }
        entries.push(store.require_repository(&repository.id)?);
    }
    Ok(entries)
}

/// The `dev` organisation of a local data directory, created on first use.
pub fn dev_organisation(store: &Store) -> Result<store::Organisation, Error> {
    match store.organisation_by_name(DEV_ORGANISATION)? {
        Some(organisation) => Ok(organisation),
        None => match store.create_organisation(DEV_ORGANISATION) {
            Ok(organisation) => Ok(organisation),
            // Another process (an index run beside `codectx up`) created it meanwhile.
            Err(e) if e.kind() == codectx_errors::ErrorKind::AlreadyExists => store
                .organisation_by_name(DEV_ORGANISATION)?
                .ok_or_else(|| Error::internal("the dev organisation vanished")),
            Err(e) => Err(e),
        },
    }
}

/// Name of the local development organisation.
pub const DEV_ORGANISATION: &str = "dev";
