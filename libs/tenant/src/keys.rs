use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use codectx_core::ids;
use codectx_errors::Error;
use codectx_proto::common::v1 as pb;
use ed25519_dalek::{Signature, Signer as _};
use prost::Message;
use prost::bytes::Bytes;

use crate::context::{Claims, Scope, TenantContext};
use crate::{
    CLOCK_SKEW_SECONDS, DEFAULT_TTL_SECONDS, MAX_ENCODED_CONTEXT_BYTES, SIGNATURE_DOMAIN, unix_now,
};

/// Longest lifetime a verifier accepts, whatever a context claims.
const MAX_LIFETIME_SECONDS: i64 = 15 * 60;

/// An Ed25519 signing key with its key id. Held by authz only.
pub struct SigningKey {
    key_id: String,
    key: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// A public key that verifies contexts signed by the [`SigningKey`] of the same key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationKey {
    pub key_id: String,
    pub public_key: [u8; 32],
}

/// Problems reading key files.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read or write key file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("key file {path} line {line}: {reason}")]
    Format {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("key file {path} holds no key")]
    Empty { path: String },
}

impl SigningKey {
    /// A new random key. Key ids are `<label>-<8 hex>` so rotations never collide.
    pub fn generate(label: &str) -> Self {
        let seed: [u8; 32] = ids::random_bytes(32).try_into().expect("32 random bytes");
        let suffix = hex::encode(ids::random_bytes(4));
        Self::from_seed(format!("{label}-{suffix}"), seed)
    }

    pub fn from_seed(key_id: impl Into<String>, seed: [u8; 32]) -> Self {
        Self {
            key_id: key_id.into(),
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        }
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    pub fn verification_key(&self) -> VerificationKey {
        VerificationKey {
            key_id: self.key_id.clone(),
            public_key: self.key.verifying_key().to_bytes(),
        }
    }

    /// Reads a key ring file: one `<key id> <base64 32-byte seed>` per line, `#` comments;
    /// the last key is the active one, earlier keys are kept for rotation.
    pub fn read_ring(path: &Path) -> Result<Vec<SigningKey>, KeyFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| KeyFileError::Io {
            path: shown.clone(),
            source,
        })?;
        let mut keys = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let format = |reason: &str| KeyFileError::Format {
                path: shown.clone(),
                line: index + 1,
                reason: reason.to_owned(),
            };
            let (key_id, seed) = line
                .split_once(' ')
                .ok_or_else(|| format("expected `<key id> <base64 seed>`"))?;
            let seed = STANDARD
                .decode(seed.trim())
                .map_err(|_| format("seed is not base64"))?;
            let seed: [u8; 32] = seed
                .try_into()
                .map_err(|_| format("seed must be 32 bytes"))?;
            keys.push(SigningKey::from_seed(key_id, seed));
        }
        if keys.is_empty() {
            return Err(KeyFileError::Empty { path: shown });
        }
        Ok(keys)
    }

    /// Writes a key ring file readable only by its owner.
    pub fn write_ring(path: &Path, keys: &[SigningKey]) -> Result<(), KeyFileError> {
        let shown = path.display().to_string();
        let io = |source| KeyFileError::Io {
            path: shown.clone(),
            source,
        };
        let mut text = String::from(
            "# codectx authz signing keys: `<key id> <base64 seed>`; the last one signs.\n",
        );
        for key in keys {
            text.push_str(&format!(
                "{} {}\n",
                key.key_id,
                STANDARD.encode(key.key.to_bytes())
            ));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        write_private_file(path, text.as_bytes()).map_err(io)
    }
}

/// Replaces `path` with `bytes`, readable by the owner only, atomically: the bytes go to a
/// new temporary file beside it (created exclusively with mode 0600, so neither an
/// existing file's mode nor a symlink planted at the temporary name is followed), then
/// renamed over `path` (a symlink at `path` is replaced, not written through).
pub fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let suffix = hex::encode(codectx_core::ids::random_bytes(8));
    let temporary = path.with_file_name(format!(".{name}.{suffix}.tmp"));
    let result =
        write_new_private(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(unix)]
fn write_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    // The umask can only narrow 0600; set it anyway so the mode never depends on it.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_new_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Why a signed context was refused. Every variant maps to `UNAUTHENTICATED`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "no tenant context: the request carries no `codectx-context-bin` metadata; obtain one from authz (Authorize)"
    )]
    Missing,
    #[error("malformed tenant context: {0}")]
    Malformed(String),
    #[error(
        "tenant context signed with unknown key id {0:?}; the key was rotated out or never trusted"
    )]
    UnknownKey(String),
    #[error(
        "tenant context signature does not verify: the context was altered or signed by another key"
    )]
    BadSignature,
    #[error("tenant context expired at {expired_at} (now {now}); request a fresh one from authz")]
    Expired { expired_at: i64, now: i64 },
    #[error("tenant context is issued in the future ({issued_at}, now {now}); check the clocks")]
    NotYetValid { issued_at: i64, now: i64 },
}

impl VerifyError {
    /// Stable reason string (docs/error-codes.md).
    pub fn reason(&self) -> &'static str {
        match self {
            VerifyError::Missing => "context_missing",
            VerifyError::Malformed(_) => "context_malformed",
            VerifyError::UnknownKey(_) => "context_unknown_key",
            VerifyError::BadSignature => "context_bad_signature",
            VerifyError::Expired { .. } => "context_expired",
            VerifyError::NotYetValid { .. } => "context_not_yet_valid",
        }
    }
}

impl From<VerifyError> for Error {
    fn from(error: VerifyError) -> Self {
        Error::unauthenticated(error.to_string()).with_reason(error.reason())
    }
}

/// Verifies signed contexts against a set of trusted public keys. Keys can be added and
/// removed at run time, which is how rotation works: trust the new key everywhere, start
/// signing with it, then remove the old one once its contexts have expired.
#[derive(Debug, Default)]
pub struct Verifier {
    keys: RwLock<HashMap<String, ed25519_dalek::VerifyingKey>>,
    /// Contexts whose signature already checked out, by their exact encoded bytes, with
    /// the key that verified them. A context crosses every hop of a request (and is
    /// reused for up to 60 s), and Ed25519 verification was about 8% of the stack's CPU
    /// under load. A hit still re-checks the key is trusted (distrust bites at once) and
    /// the time window; only the signature arithmetic is skipped.
    verified: RwLock<HashMap<Bytes, (ed25519_dalek::VerifyingKey, TenantContext)>>,
}

/// Verified contexts remembered at most; beyond it, expired ones go, then all.
const VERIFIED_CACHE_ENTRIES: usize = 4_096;

impl Verifier {
    pub fn new(keys: impl IntoIterator<Item = VerificationKey>) -> Result<Self, Error> {
        let verifier = Self::default();
        for key in keys {
            verifier.trust(&key)?;
        }
        Ok(verifier)
    }

    pub fn trust(&self, key: &VerificationKey) -> Result<(), Error> {
        let verifying = ed25519_dalek::VerifyingKey::from_bytes(&key.public_key).map_err(|_| {
            Error::invalid_argument(
                "public_key",
                format!("key {} is not an Ed25519 point", key.key_id),
            )
        })?;
        self.keys
            .write()
            .expect("verifier lock")
            .insert(key.key_id.clone(), verifying);
        Ok(())
    }

    pub fn distrust(&self, key_id: &str) {
        self.keys.write().expect("verifier lock").remove(key_id);
    }

    pub fn key_ids(&self) -> Vec<String> {
        let mut ids: Vec<_> = self
            .keys
            .read()
            .expect("verifier lock")
            .keys()
            .cloned()
            .collect();
        ids.sort();
        ids
    }

    /// Verifies an encoded `SignedTenantContext` at the current time.
    pub fn verify(&self, signed: &[u8]) -> Result<TenantContext, VerifyError> {
        self.verify_at(signed, unix_now())
    }

    /// Verifies an encoded `SignedTenantContext` as of `now` (unix seconds).
    pub fn verify_at(&self, signed: &[u8], now: i64) -> Result<TenantContext, VerifyError> {
        if signed.is_empty() {
            return Err(VerifyError::Missing);
        }
        if signed.len() > MAX_ENCODED_CONTEXT_BYTES {
            return Err(VerifyError::Malformed(format!(
                "{} bytes; the limit is {MAX_ENCODED_CONTEXT_BYTES}",
                signed.len()
            )));
        }
        let cached = self
            .verified
            .read()
            .expect("verifier lock")
            .get(signed)
            .cloned();
        if let Some((verified_with, context)) = cached {
            let trusted = self
                .keys
                .read()
                .expect("verifier lock")
                .get(context.key_id())
                .copied();
            match trusted {
                Some(key) if key == verified_with => return check_window(context, now),
                Some(_) => {} // the key id now names another key: verify afresh
                None => return Err(VerifyError::UnknownKey(context.key_id().to_owned())),
            }
        }
        let envelope = pb::SignedTenantContext::decode(signed)
            .map_err(|e| VerifyError::Malformed(format!("envelope does not decode: {e}")))?;
        // authz emits exactly one encoding; any other (unknown fields appended, fields
        // repeated) would verify as a new byte string and could flush the cache above.
        if envelope.encoded_len() != signed.len() || envelope.encode_to_vec() != signed {
            return Err(VerifyError::Malformed(
                "the envelope is not in authz's canonical encoding (extra or repeated fields)"
                    .into(),
            ));
        }
        let signature = Signature::from_slice(&envelope.signature)
            .map_err(|_| VerifyError::Malformed("signature is not 64 bytes".into()))?;
        let claims = pb::TenantContext::decode(envelope.context.as_slice())
            .map_err(|e| VerifyError::Malformed(format!("context does not decode: {e}")))?;
        let key = self
            .keys
            .read()
            .expect("verifier lock")
            .get(&claims.key_id)
            .copied()
            .ok_or_else(|| VerifyError::UnknownKey(claims.key_id.clone()))?;
        let mut message = Vec::with_capacity(SIGNATURE_DOMAIN.len() + envelope.context.len());
        message.extend_from_slice(SIGNATURE_DOMAIN);
        message.extend_from_slice(&envelope.context);
        key.verify_strict(&message, &signature)
            .map_err(|_| VerifyError::BadSignature)?;
        // Signed by a trusted key from here on; still check what authz must never emit.
        let encoded = Bytes::copy_from_slice(signed);
        let context = from_claims(claims, encoded.clone())?;
        let context = check_window(context, now)?;
        let mut verified = self.verified.write().expect("verifier lock");
        if verified.len() >= VERIFIED_CACHE_ENTRIES {
            verified.retain(|_, (_, c)| now <= c.expires_at + CLOCK_SKEW_SECONDS);
            if verified.len() >= VERIFIED_CACHE_ENTRIES {
                verified.clear();
            }
        }
        verified.insert(encoded, (key, context.clone()));
        Ok(context)
    }
}

/// The context's validity window as of `now` (with the allowed clock skew).
fn check_window(context: TenantContext, now: i64) -> Result<TenantContext, VerifyError> {
    if context.issued_at > now + CLOCK_SKEW_SECONDS {
        return Err(VerifyError::NotYetValid {
            issued_at: context.issued_at,
            now,
        });
    }
    if now > context.expires_at + CLOCK_SKEW_SECONDS {
        return Err(VerifyError::Expired {
            expired_at: context.expires_at,
            now,
        });
    }
    Ok(context)
}

fn from_claims(claims: pb::TenantContext, signed: Bytes) -> Result<TenantContext, VerifyError> {
    let malformed = |what: &str| VerifyError::Malformed(what.to_owned());
    for (value, name) in [
        (&claims.context_id, "context_id"),
        (&claims.tenant_id, "tenant_id"),
        (&claims.subject_id, "subject_id"),
        (&claims.repository_id, "repository_id"),
        (&claims.graph_id, "graph_id"),
        (&claims.key_id, "key_id"),
    ] {
        if value.is_empty() {
            return Err(malformed(&format!("{name} is empty")));
        }
    }
    if claims.namespace != namespace_of(&claims.tenant_id, &claims.graph_id) {
        return Err(malformed("namespace is not tenant_id|graph_id"));
    }
    let mut scopes = Vec::with_capacity(claims.scopes.len());
    for value in &claims.scopes {
        scopes.push(Scope::from_proto(*value).ok_or_else(|| malformed("unknown scope"))?);
    }
    if claims.expires_at <= claims.issued_at
        || claims.expires_at - claims.issued_at > MAX_LIFETIME_SECONDS
    {
        return Err(malformed("lifetime is not within (0, 15 min]"));
    }
    Ok(TenantContext {
        context_id: claims.context_id,
        tenant_id: claims.tenant_id,
        subject_id: claims.subject_id,
        repository_id: claims.repository_id,
        graph_id: claims.graph_id,
        namespace: claims.namespace,
        session_id: claims.session_id,
        parent_context_id: claims.parent_context_id,
        scopes,
        policy_revision: claims.policy_revision,
        issued_at: claims.issued_at,
        expires_at: claims.expires_at,
        key_id: claims.key_id,
        signed,
    })
}

/// The memory namespace of a tenant's access to a graph.
pub(crate) fn namespace_of(tenant_id: &str, graph_id: &str) -> String {
    format!("{tenant_id}|{graph_id}")
}

/// What a session context should narrow to.
#[derive(Debug, Clone, Default)]
pub struct SessionRequest {
    /// None: mint a session id (or keep the parent's, if it has one).
    pub session_id: Option<String>,
    /// None: keep the parent's scopes. Otherwise a subset of them.
    pub scopes: Option<Vec<Scope>>,
    /// None: keep the parent's expiry. Otherwise at most the parent's remaining lifetime.
    pub ttl_seconds: Option<i64>,
}

/// Mints signed contexts. Only authz constructs one.
#[derive(Debug)]
pub struct Minter {
    key: SigningKey,
    ttl_seconds: i64,
}

impl Minter {
    pub fn new(key: SigningKey) -> Self {
        Self {
            key,
            ttl_seconds: DEFAULT_TTL_SECONDS,
        }
    }

    pub fn with_ttl_seconds(mut self, ttl_seconds: i64) -> Self {
        self.ttl_seconds = ttl_seconds.clamp(1, MAX_LIFETIME_SECONDS);
        self
    }

    pub fn key_id(&self) -> &str {
        self.key.key_id()
    }

    pub fn verification_key(&self) -> VerificationKey {
        self.key.verification_key()
    }

    /// Signs a new context for `claims`, valid from now for the minter's lifetime.
    pub fn mint(&self, claims: &Claims) -> Result<TenantContext, Error> {
        self.mint_at(claims, unix_now())
    }

    pub fn mint_at(&self, claims: &Claims, now: i64) -> Result<TenantContext, Error> {
        for (value, name) in [
            (&claims.tenant_id, "tenant_id"),
            (&claims.subject_id, "subject_id"),
            (&claims.repository_id, "repository_id"),
            (&claims.graph_id, "graph_id"),
        ] {
            if value.is_empty() || value.contains('|') {
                return Err(Error::internal(format!(
                    "cannot mint a context: {name} {value:?} is empty or contains '|'"
                )));
            }
        }
        let mut scopes = claims.scopes.clone();
        scopes.sort();
        scopes.dedup();
        let context = pb::TenantContext {
            context_id: ids::mint(ids::prefix::CONTEXT),
            tenant_id: claims.tenant_id.clone(),
            subject_id: claims.subject_id.clone(),
            repository_id: claims.repository_id.clone(),
            graph_id: claims.graph_id.clone(),
            namespace: namespace_of(&claims.tenant_id, &claims.graph_id),
            session_id: None,
            parent_context_id: None,
            scopes: scopes.iter().map(|s| s.to_proto() as i32).collect(),
            policy_revision: claims.policy_revision,
            issued_at: now,
            expires_at: now + self.ttl_seconds,
            key_id: self.key.key_id.clone(),
        };
        Ok(self.sign(context))
    }

    /// A session context derived from `parent`: same tenant, subject, repository and graph;
    /// scopes and lifetime can only shrink; the session id, once set, never changes.
    pub fn derive_session(
        &self,
        parent: &TenantContext,
        request: &SessionRequest,
    ) -> Result<TenantContext, Error> {
        self.derive_session_at(parent, request, unix_now())
    }

    pub fn derive_session_at(
        &self,
        parent: &TenantContext,
        request: &SessionRequest,
        now: i64,
    ) -> Result<TenantContext, Error> {
        let session_id = match (&parent.session_id, &request.session_id) {
            (Some(existing), Some(asked)) if existing != asked => {
                return Err(Error::permission_denied(format!(
                    "the parent context belongs to session {existing}; a session id cannot be changed"
                ))
                .with_field("session_id"));
            }
            (Some(existing), _) => existing.clone(),
            (None, Some(asked)) => {
                if asked.is_empty()
                    || asked.len() > 128
                    || !asked.bytes().all(|b| b.is_ascii_graphic())
                {
                    return Err(Error::invalid_argument(
                        "session_id",
                        "session_id must be 1-128 printable ASCII characters",
                    ));
                }
                asked.clone()
            }
            (None, None) => ids::mint(ids::prefix::SESSION),
        };
        let scopes = match &request.scopes {
            None => parent.scopes.clone(),
            Some(asked) => {
                if let Some(extra) = asked.iter().find(|s| !parent.scopes.contains(s)) {
                    return Err(Error::permission_denied(format!(
                        "a session context can only narrow its parent; the parent does not grant {}",
                        extra.as_str()
                    ))
                    .with_field("scopes"));
                }
                let mut scopes = asked.clone();
                scopes.sort();
                scopes.dedup();
                scopes
            }
        };
        let expires_at = match request.ttl_seconds {
            Some(ttl) if ttl > 0 => parent.expires_at.min(now + ttl),
            _ => parent.expires_at,
        };
        if expires_at <= now {
            return Err(
                Error::unauthenticated("the parent context has expired; authorize again")
                    .with_reason("context_expired"),
            );
        }
        let context = pb::TenantContext {
            context_id: ids::mint(ids::prefix::CONTEXT),
            tenant_id: parent.tenant_id.clone(),
            subject_id: parent.subject_id.clone(),
            repository_id: parent.repository_id.clone(),
            graph_id: parent.graph_id.clone(),
            namespace: parent.namespace.clone(),
            session_id: Some(session_id),
            parent_context_id: Some(parent.context_id.clone()),
            scopes: scopes.iter().map(|s| s.to_proto() as i32).collect(),
            policy_revision: parent.policy_revision,
            issued_at: now,
            expires_at,
            key_id: self.key.key_id.clone(),
        };
        Ok(self.sign(context))
    }

    fn sign(&self, claims: pb::TenantContext) -> TenantContext {
        let encoded = claims.encode_to_vec();
        let mut message = Vec::with_capacity(SIGNATURE_DOMAIN.len() + encoded.len());
        message.extend_from_slice(SIGNATURE_DOMAIN);
        message.extend_from_slice(&encoded);
        let signature = self.key.key.sign(&message);
        let envelope = pb::SignedTenantContext {
            context: encoded,
            signature: signature.to_bytes().to_vec(),
        };
        let signed = Bytes::from(envelope.encode_to_vec());
        from_claims(claims, signed).expect("a context this minter built is well formed")
    }
}
