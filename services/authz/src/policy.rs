//! Authentication and access decisions, independent of gRPC.

use std::sync::Arc;

use codectx_core::limits;
use codectx_errors::Error;
use codectx_tenant::{Claims, Minter, Scope, SessionRequest, TenantContext, VerificationKey};

use crate::store::{Access, Repository, Role, Store, Subject};

/// At most this many suggestions accompany an ambiguous or unknown selector.
const MAX_SUGGESTIONS: usize = 8;

/// A credential as the caller presented it.
#[derive(Debug, Clone, Copy)]
pub enum Credential<'a> {
    ApiKey(&'a str),
    /// A JWT whose signature and claims were already validated ([`crate::oidc`]).
    Identity(&'a crate::oidc::Identity),
    /// A JWT this authz cannot validate (no issuer configured).
    BearerToken,
}

/// authz's decisions: who a credential is, what it may access, and the signed context.
#[derive(Debug)]
pub struct Authority {
    store: Arc<Store>,
    minter: Minter,
    verification_keys: Vec<VerificationKey>,
}

fn unauthenticated() -> Error {
    Error::unauthenticated(
        "the API key is unknown or revoked; create a new one with `codectx admin key create`",
    )
    .with_reason("credential_rejected")
}

fn shown(selector: &str) -> String {
    let mut text: String = selector.chars().take(120).collect();
    if text.len() < selector.len() {
        text.push('…');
    }
    text
}

impl Authority {
    pub fn new(store: Arc<Store>, minter: Minter, verification_keys: Vec<VerificationKey>) -> Self {
        Self {
            store,
            minter,
            verification_keys,
        }
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Every key that verifies contexts this authz minted (the active one last).
    pub fn verification_keys(&self) -> &[VerificationKey] {
        &self.verification_keys
    }

    pub fn active_key_id(&self) -> &str {
        self.minter.key_id()
    }

    /// [`Self::authenticate`] with the access revision of the snapshot it read, the
    /// revision read first (a write after it shows as a newer revision later). An API
    /// key's subject and the revision are read together ([`Store::authenticate_api_key_now`]).
    pub fn authenticate_now(
        &self,
        credential: Option<Credential<'_>>,
    ) -> Result<(Subject, u64), Error> {
        if let Some(Credential::ApiKey(secret)) = credential {
            let (revision, subject) = self.store.authenticate_api_key_now(secret)?;
            return Ok((subject.ok_or_else(unauthenticated)?, revision));
        }
        let revision = self.store.access_revision()?;
        Ok((self.authenticate(credential)?, revision))
    }

    pub fn authenticate(&self, credential: Option<Credential<'_>>) -> Result<Subject, Error> {
        match credential {
            None => Err(Error::unauthenticated("no credential: pass an API key")
                .with_reason("credential_missing")),
            Some(Credential::BearerToken) => Err(Error::unauthenticated(
                "this authz accepts no JWT bearer tokens (no [oidc] issuer is configured); use an API key",
            )
            .with_reason("credential_rejected")),
            Some(Credential::Identity(identity)) => self
                .store
                .subject_for_identity(&identity.issuer, &identity.claim)?
                .ok_or_else(|| {
                    Error::unauthenticated(
                        "the token's identity is linked to no subject (or was unlinked); ask an admin to run `codectx admin identity link`",
                    )
                    .with_reason("credential_rejected")
                }),
            Some(Credential::ApiKey(secret)) => self
                .store
                .authenticate_api_key(secret)?
                .ok_or_else(unauthenticated),
        }
    }

    /// Resolves `selector` among the subject's accessible entries. Unknown and
    /// inaccessible selectors get the same answer; suggestions come only from entries the
    /// subject may see.
    pub fn resolve(&self, subject: &Subject, selector: &str) -> Result<Access, Error> {
        if selector.is_empty() {
            return Err(Error::invalid_argument(
                "repository",
                "repository is empty: pass a repository name or id (list_repositories shows them)",
            ));
        }
        limits::check_bytes("repository", selector, limits::SELECTOR_BYTES)?;
        let accessible = self.store.accessible_repositories(subject)?;
        if let Some(access) = accessible
            .iter()
            .find(|a| a.repository.id == selector || a.repository.name == selector)
        {
            return Ok(access.clone());
        }
        let lowered = selector.to_lowercase();
        let trailing = format!("/{lowered}");
        let mut matches: Vec<&Access> = accessible
            .iter()
            .filter(|a| {
                let name = a.repository.name.to_lowercase();
                name == lowered || name.ends_with(&trailing)
            })
            .collect();
        match matches.len() {
            1 => Ok(matches.remove(0).clone()),
            0 => {
                let suggestions: Vec<String> = accessible
                    .iter()
                    .filter(|a| {
                        !lowered.is_empty() && a.repository.name.to_lowercase().contains(&lowered)
                    })
                    .map(|a| a.repository.name.clone())
                    .take(MAX_SUGGESTIONS)
                    .collect();
                let mut error = Error::permission_denied(format!(
                    "no repository you can access matches {:?}; list_repositories shows the ones you can use",
                    shown(selector)
                ))
                .with_reason("repository_not_accessible")
                .with_field("repository");
                if !suggestions.is_empty() {
                    error = error.with_suggestions(suggestions);
                }
                Err(error)
            }
            _ => {
                let suggestions = matches
                    .iter()
                    .map(|a| a.repository.name.clone())
                    .take(MAX_SUGGESTIONS)
                    .collect();
                Err(Error::ambiguous(
                    format!("{:?} matches several repositories you can access; pass one of the suggested names", shown(selector)),
                    suggestions,
                )
                .with_field("repository"))
            }
        }
    }

    /// Authenticates, resolves the selector and mints a context with the requested scopes
    /// (all granted scopes when none are requested).
    pub fn authorize(
        &self,
        credential: Option<Credential<'_>>,
        selector: &str,
        requested: &[Scope],
    ) -> Result<(TenantContext, Repository), Error> {
        let subject = self.authenticate(credential)?;
        let access = self.resolve(&subject, selector)?;
        let scopes = if requested.is_empty() {
            access.scopes.clone()
        } else {
            if let Some(missing) = requested.iter().find(|s| !access.scopes.contains(s)) {
                return Err(Error::permission_denied(format!(
                    "your grants on {} do not include {}",
                    access.repository.name,
                    missing.as_str()
                ))
                .with_field("scopes"));
            }
            requested.to_vec()
        };
        let context = self.minter.mint(&Claims {
            tenant_id: access.repository.tenant_id.clone(),
            subject_id: subject.id.clone(),
            repository_id: access.repository.id.clone(),
            graph_id: access.repository.graph_id.clone(),
            scopes,
            policy_revision: access.repository.policy_revision,
        })?;
        Ok((context, access.repository))
    }

    /// A session context narrowed from a verified parent, refused when the parent's access
    /// changed since it was minted.
    pub fn derive_session(
        &self,
        parent: &TenantContext,
        request: &SessionRequest,
    ) -> Result<(TenantContext, Repository), Error> {
        let subject = self.store.subject(parent.subject_id())?.ok_or_else(|| {
            Error::permission_denied("the context's subject no longer exists; authorize again")
        })?;
        let access = self
            .store
            .accessible_repositories(&subject)?
            .into_iter()
            .find(|a| a.repository.id == parent.repository_id())
            .ok_or_else(|| {
                Error::permission_denied("access to the context's repository was revoked")
            })?;
        if access.repository.policy_revision != parent.policy_revision() {
            return Err(Error::permission_denied(
                "access to this repository changed since the context was minted; authorize again",
            )
            .with_reason("policy_changed"));
        }
        let context = self.minter.derive_session(parent, request)?;
        Ok((context, access.repository))
    }

    /// The admin subject behind an `authorization: Bearer <api key>` value.
    pub fn admin(&self, bearer: Option<&str>) -> Result<Subject, Error> {
        let secret = bearer.ok_or_else(|| {
            Error::unauthenticated(
                "admin calls need `authorization: Bearer <api key>` of an admin subject",
            )
            .with_reason("credential_missing")
        })?;
        let subject = self.authenticate(Some(Credential::ApiKey(secret)))?;
        if subject.role < Role::OrgAdmin {
            return Err(Error::permission_denied(format!(
                "subject {} is a member; admin calls need an org or platform admin",
                subject.name
            )));
        }
        Ok(subject)
    }

    /// Allows platform admins everywhere and org admins in their own organisation.
    pub fn require_admin_of(&self, admin: &Subject, organisation_id: &str) -> Result<(), Error> {
        if admin.role == Role::PlatformAdmin
            || (admin.role == Role::OrgAdmin && admin.organisation_id == organisation_id)
        {
            Ok(())
        } else {
            Err(Error::permission_denied(format!(
                "subject {} may not administer organisation {organisation_id}",
                admin.name
            )))
        }
    }

    pub fn require_platform_admin(&self, admin: &Subject) -> Result<(), Error> {
        if admin.role == Role::PlatformAdmin {
            Ok(())
        } else {
            Err(Error::permission_denied(
                "only a platform admin may do this",
            ))
        }
    }
}
