use std::fmt;

use codectx_errors::Error;
use codectx_proto::common::v1 as pb;
use prost::bytes::Bytes;
use tonic::metadata::{BinaryMetadataValue, MetadataKey};

use crate::METADATA_KEY;

/// What a context allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    ReadCode,
    ReadMemory,
    WriteMemory,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::ReadCode, Scope::ReadMemory, Scope::WriteMemory];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ReadCode => "read_code",
            Scope::ReadMemory => "read_memory",
            Scope::WriteMemory => "write_memory",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn to_proto(self) -> pb::Scope {
        match self {
            Scope::ReadCode => pb::Scope::ReadCode,
            Scope::ReadMemory => pb::Scope::ReadMemory,
            Scope::WriteMemory => pb::Scope::WriteMemory,
        }
    }

    pub fn from_proto(value: i32) -> Option<Scope> {
        match pb::Scope::try_from(value).ok()? {
            pb::Scope::ReadCode => Some(Scope::ReadCode),
            pb::Scope::ReadMemory => Some(Scope::ReadMemory),
            pb::Scope::WriteMemory => Some(Scope::WriteMemory),
            pb::Scope::Unspecified => None,
        }
    }
}

/// What authz decided for one authorization: the input to [`crate::Minter::mint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub tenant_id: String,
    pub subject_id: String,
    pub repository_id: String,
    pub graph_id: String,
    pub scopes: Vec<Scope>,
    pub policy_revision: u64,
}

/// A verified tenant context. Immutable: there are getters, no setters, no `Default`, and
/// no public constructor.
#[derive(Clone, PartialEq, Eq)]
pub struct TenantContext {
    pub(crate) context_id: String,
    pub(crate) tenant_id: String,
    pub(crate) subject_id: String,
    pub(crate) repository_id: String,
    pub(crate) graph_id: String,
    pub(crate) namespace: String,
    pub(crate) session_id: Option<String>,
    pub(crate) parent_context_id: Option<String>,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) policy_revision: u64,
    pub(crate) issued_at: i64,
    pub(crate) expires_at: i64,
    pub(crate) key_id: String,
    /// The encoded `SignedTenantContext` exactly as authz signed it.
    pub(crate) signed: Bytes,
}

impl TenantContext {
    pub fn context_id(&self) -> &str {
        &self.context_id
    }
    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }
    pub fn subject_id(&self) -> &str {
        &self.subject_id
    }
    pub fn repository_id(&self) -> &str {
        &self.repository_id
    }
    pub fn graph_id(&self) -> &str {
        &self.graph_id
    }
    /// Memory namespace, `tenant_id|graph_id`.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
    pub fn parent_context_id(&self) -> Option<&str> {
        self.parent_context_id.as_deref()
    }
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }
    pub fn policy_revision(&self) -> u64 {
        self.policy_revision
    }
    pub fn issued_at(&self) -> i64 {
        self.issued_at
    }
    pub fn expires_at(&self) -> i64 {
        self.expires_at
    }
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    pub fn has_scope(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// `PERMISSION_DENIED` unless the context carries `scope`.
    pub fn require_scope(&self, scope: Scope) -> Result<(), Error> {
        if self.has_scope(scope) {
            Ok(())
        } else {
            Err(Error::permission_denied(format!(
                "this request needs the {} scope; the caller's context for repository {} does not grant it",
                scope.as_str(),
                self.repository_id
            )))
        }
    }

    /// The encoded `SignedTenantContext`, as carried in metadata.
    pub fn signed_bytes(&self) -> &Bytes {
        &self.signed
    }

    /// Puts the signed context into an outgoing request's metadata, replacing any other.
    pub fn attach<T>(&self, request: &mut tonic::Request<T>) {
        let key = MetadataKey::from_static(METADATA_KEY);
        request
            .metadata_mut()
            .insert_bin(key, BinaryMetadataValue::from_bytes(&self.signed));
    }

    /// The context as a protobuf message (for display; it carries no signature).
    pub fn to_proto(&self) -> pb::TenantContext {
        pb::TenantContext {
            context_id: self.context_id.clone(),
            tenant_id: self.tenant_id.clone(),
            subject_id: self.subject_id.clone(),
            repository_id: self.repository_id.clone(),
            graph_id: self.graph_id.clone(),
            namespace: self.namespace.clone(),
            session_id: self.session_id.clone(),
            parent_context_id: self.parent_context_id.clone(),
            scopes: self.scopes.iter().map(|s| s.to_proto() as i32).collect(),
            policy_revision: self.policy_revision,
            issued_at: self.issued_at,
            expires_at: self.expires_at,
            key_id: self.key_id.clone(),
        }
    }

    /// What a service reports back in `Describe` about the caller.
    pub fn caller_scope(&self) -> pb::CallerScope {
        pb::CallerScope {
            tenant_id: self.tenant_id.clone(),
            subject_id: self.subject_id.clone(),
            repository_id: self.repository_id.clone(),
            graph_id: self.graph_id.clone(),
            namespace: self.namespace.clone(),
            session_id: self.session_id.clone(),
            scopes: self.scopes.iter().map(|s| s.to_proto() as i32).collect(),
            expires_at: self.expires_at,
        }
    }
}

/// Ids only: a context in a log line must not become an enumeration aid or a secret.
impl fmt::Debug for TenantContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TenantContext")
            .field("context_id", &self.context_id)
            .field("tenant_id", &self.tenant_id)
            .field("subject_id", &self.subject_id)
            .field("repository_id", &self.repository_id)
            .field("graph_id", &self.graph_id)
            .field("session_id", &self.session_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}
