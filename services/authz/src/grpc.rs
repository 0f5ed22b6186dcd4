//! gRPC surface of authz: conversions between proto and domain types, and the handlers.

use std::sync::Arc;

use codectx_errors::Error;
use codectx_proto::authz::v1::{self as pb, authz_service_server::AuthzService};
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_tenant::{Scope, SessionRequest, TenantContext, from_request};
use tonic::{Request, Response, Status};

use crate::policy::{Authority, Credential};
use crate::store::{self, Grantee, Role};

const CAPABILITIES: &[&str] = &["authenticate", "authorize", "session_contexts", "admin"];

pub(crate) struct AuthzHandler {
    pub(crate) authority: Arc<Authority>,
    /// Validates JWT bearer tokens when an `[oidc]` issuer is configured.
    pub(crate) oidc: Option<Arc<crate::oidc::OidcValidator>>,
}

/// Runs blocking store work off the async threads.
async fn blocking<T: Send + 'static>(
    authority: &Arc<Authority>,
    work: impl FnOnce(&Authority) -> Result<T, Error> + Send + 'static,
) -> Result<T, Status> {
    let authority = authority.clone();
    tokio::task::spawn_blocking(move || work(&authority))
        .await
        .map_err(|e| Error::internal(format!("authz worker: {e}")).to_status())?
        .map_err(Status::from)
}

/// Runs a per-call lookup (authenticate, authorize) on the calling task: a SHA-256 and a
/// few indexed reads of the access store, tens of microseconds, which cost less than the
/// blocking pool's hand-off and wake-up. Administration stays on [`blocking`].
fn lookup<T>(
    authority: &Authority,
    work: impl FnOnce(&Authority) -> Result<T, Error>,
) -> Result<T, Status> {
    work(authority).map_err(Status::from)
}

impl AuthzHandler {
    /// The request's credential, with a JWT validated against the issuer first (that needs
    /// the network, so it happens here and not in the blocking store work).
    async fn credential(
        &self,
        message: Option<pb::Credential>,
    ) -> Result<Option<OwnedCredential>, Status> {
        let Some(kind) = message.and_then(|m| m.kind) else {
            return Ok(None);
        };
        Ok(Some(match kind {
            pb::credential::Kind::ApiKey(key) => OwnedCredential::ApiKey(key),
            pb::credential::Kind::BearerToken(token) => match &self.oidc {
                Some(oidc) => OwnedCredential::Identity(oidc.validate(&token).await?),
                None => OwnedCredential::BearerToken,
            },
        }))
    }
}

enum OwnedCredential {
    ApiKey(String),
    Identity(crate::oidc::Identity),
    BearerToken,
}

impl OwnedCredential {
    fn borrow(&self) -> Credential<'_> {
        match self {
            OwnedCredential::ApiKey(key) => Credential::ApiKey(key),
            OwnedCredential::Identity(identity) => Credential::Identity(identity),
            OwnedCredential::BearerToken => Credential::BearerToken,
        }
    }
}

fn bearer<T>(request: &Request<T>) -> Option<String> {
    let value = request.metadata().get("authorization")?.to_str().ok()?;
    codectx_core::auth::bearer_token(value).map(str::to_owned)
}

fn scopes(values: &[i32]) -> Result<Vec<Scope>, Error> {
    values
        .iter()
        .map(|v| {
            Scope::from_proto(*v)
                .ok_or_else(|| Error::invalid_argument("scopes", format!("unknown scope {v}")))
        })
        .collect()
}

fn role_from_proto(value: i32) -> Result<Role, Error> {
    match pb::Role::try_from(value) {
        Ok(pb::Role::Member) | Ok(pb::Role::Unspecified) => Ok(Role::Member),
        Ok(pb::Role::OrgAdmin) => Ok(Role::OrgAdmin),
        Ok(pb::Role::PlatformAdmin) => Ok(Role::PlatformAdmin),
        Err(_) => Err(Error::invalid_argument(
            "role",
            format!("unknown role {value}"),
        )),
    }
}

fn role_to_proto(role: Role) -> i32 {
    match role {
        Role::Member => pb::Role::Member as i32,
        Role::OrgAdmin => pb::Role::OrgAdmin as i32,
        Role::PlatformAdmin => pb::Role::PlatformAdmin as i32,
    }
}

pub(crate) fn organisation_to_proto(o: store::Organisation) -> pb::Organisation {
    pb::Organisation {
        id: o.id,
        name: o.name,
        created_at: o.created_at,
    }
}

pub(crate) fn subject_to_proto(s: store::Subject) -> pb::Subject {
    pb::Subject {
        id: s.id,
        organisation_id: s.organisation_id,
        name: s.name,
        role: role_to_proto(s.role),
        created_at: s.created_at,
    }
}

fn team_to_proto(t: store::Team) -> pb::Team {
    pb::Team {
        id: t.id,
        organisation_id: t.organisation_id,
        name: t.name,
        member_subject_ids: t.members,
        created_at: t.created_at,
    }
}

fn api_key_to_proto(k: store::ApiKey) -> pb::ApiKey {
    pb::ApiKey {
        id: k.id,
        subject_id: k.subject_id,
        name: k.name,
        prefix: k.prefix,
        created_at: k.created_at,
        revoked_at: k.revoked_at,
    }
}

pub(crate) fn repository_to_proto(r: store::Repository) -> pb::AccessRepository {
    pb::AccessRepository {
        id: r.id,
        tenant_id: r.tenant_id,
        graph_id: r.graph_id,
        name: r.name,
        policy_revision: r.policy_revision,
        created_at: r.created_at,
        ..Default::default()
    }
}

fn grant_to_proto(g: store::Grant) -> pb::Grant {
    let grantee = match g.grantee {
        Grantee::Subject(id) => pb::grant::Grantee::SubjectId(id),
        Grantee::Team(id) => pb::grant::Grantee::TeamId(id),
    };
    pb::Grant {
        id: g.id,
        repository_id: g.repository_id,
        grantee: Some(grantee),
        scopes: g.scopes.iter().map(|s| s.to_proto() as i32).collect(),
        created_at: g.created_at,
        revoked_at: g.revoked_at,
    }
}

fn authorize_response(
    context: TenantContext,
    repository: store::Repository,
) -> pb::AuthorizeResponse {
    pb::AuthorizeResponse {
        signed_context: context.signed_bytes().to_vec(),
        context: Some(context.to_proto()),
        repository: Some(repository_to_proto(repository)),
        access_revision: 0,
    }
}

#[tonic::async_trait]
impl AuthzService for AuthzHandler {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        codectx_runtime::describe_rpc(&request, crate::NAME, CAPABILITIES)
    }

    async fn authenticate(
        &self,
        request: Request<pb::AuthenticateRequest>,
    ) -> Result<Response<pb::AuthenticateResponse>, Status> {
        let credential = self.credential(request.into_inner().credential).await?;
        let (subject, access_revision) = lookup(&self.authority, |a| {
            a.authenticate_now(credential.as_ref().map(OwnedCredential::borrow))
        })?;
        Ok(Response::new(pb::AuthenticateResponse {
            subject: Some(subject_to_proto(subject)),
            access_revision,
        }))
    }

    async fn authorize(
        &self,
        request: Request<pb::AuthorizeRequest>,
    ) -> Result<Response<pb::AuthorizeResponse>, Status> {
        let message = request.into_inner();
        let credential = self.credential(message.credential).await?;
        let requested = scopes(&message.scopes)?;
        let selector = message.repository;
        let (context, repository, access_revision) = lookup(&self.authority, |a| {
            let revision = a.store().access_revision()?;
            let (context, repository) = a.authorize(
                credential.as_ref().map(OwnedCredential::borrow),
                &selector,
                &requested,
            )?;
            Ok((context, repository, revision))
        })?;
        let mut response = authorize_response(context, repository);
        response.access_revision = access_revision;
        Ok(Response::new(response))
    }

    async fn derive_session_context(
        &self,
        request: Request<pb::DeriveSessionContextRequest>,
    ) -> Result<Response<pb::AuthorizeResponse>, Status> {
        let parent = from_request(&request)?;
        let message = request.into_inner();
        let session = SessionRequest {
            session_id: (!message.session_id.is_empty()).then_some(message.session_id),
            scopes: if message.scopes.is_empty() {
                None
            } else {
                Some(scopes(&message.scopes)?)
            },
            ttl_seconds: (message.ttl_seconds > 0).then_some(i64::from(message.ttl_seconds)),
        };
        let (context, repository) = blocking(&self.authority, move |a| {
            a.derive_session(&parent, &session)
        })
        .await?;
        Ok(Response::new(authorize_response(context, repository)))
    }

    async fn list_accessible_repositories(
        &self,
        request: Request<pb::ListAccessibleRepositoriesRequest>,
    ) -> Result<Response<pb::ListAccessibleRepositoriesResponse>, Status> {
        let credential = self.credential(request.into_inner().credential).await?;
        let repositories = blocking(&self.authority, move |a| {
            let subject = a.authenticate(credential.as_ref().map(OwnedCredential::borrow))?;
            let store = a.store();
            // With what its graph's last index run read.
            store
                .accessible_repositories(&subject)?
                .into_iter()
                .map(|access| {
                    let graph = store.graph(&access.repository.graph_id)?;
                    let mut repository = repository_to_proto(access.repository);
                    if let Some(graph) = graph {
                        repository.commit = graph.index.commit;
                        repository.policy_fingerprint = graph.index.policy_fingerprint;
                        repository.indexed_at = graph.indexed_at;
                    }
                    Ok(repository)
                })
                .collect::<Result<Vec<_>, Error>>()
        })
        .await?;
        Ok(Response::new(pb::ListAccessibleRepositoriesResponse {
            repositories,
        }))
    }

    async fn get_verification_keys(
        &self,
        _request: Request<pb::GetVerificationKeysRequest>,
    ) -> Result<Response<pb::GetVerificationKeysResponse>, Status> {
        let active = self.authority.active_key_id().to_owned();
        let keys = self
            .authority
            .verification_keys()
            .iter()
            .map(|k| pb::VerificationKey {
                key_id: k.key_id.clone(),
                public_key: k.public_key.to_vec(),
                active: k.key_id == active,
            })
            .collect();
        Ok(Response::new(pb::GetVerificationKeysResponse { keys }))
    }

    async fn create_organisation(
        &self,
        request: Request<pb::CreateOrganisationRequest>,
    ) -> Result<Response<pb::Organisation>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let organisation = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_platform_admin(&admin)?;
            a.store().create_organisation(&message.name)
        })
        .await?;
        Ok(Response::new(organisation_to_proto(organisation)))
    }

    async fn list_organisations(
        &self,
        request: Request<pb::ListOrganisationsRequest>,
    ) -> Result<Response<pb::ListOrganisationsResponse>, Status> {
        let bearer = bearer(&request);
        let organisations = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let all = a.store().list_organisations()?;
            Ok(all
                .into_iter()
                .filter(|o| a.require_admin_of(&admin, &o.id).is_ok())
                .collect::<Vec<_>>())
        })
        .await?;
        Ok(Response::new(pb::ListOrganisationsResponse {
            organisations: organisations
                .into_iter()
                .map(organisation_to_proto)
                .collect(),
        }))
    }

    async fn create_team(
        &self,
        request: Request<pb::CreateTeamRequest>,
    ) -> Result<Response<pb::Team>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let team = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            a.store()
                .create_team(&message.organisation_id, &message.name)
        })
        .await?;
        Ok(Response::new(team_to_proto(team)))
    }

    async fn list_teams(
        &self,
        request: Request<pb::ListTeamsRequest>,
    ) -> Result<Response<pb::ListTeamsResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let teams = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            a.store().list_teams(&message.organisation_id)
        })
        .await?;
        Ok(Response::new(pb::ListTeamsResponse {
            teams: teams.into_iter().map(team_to_proto).collect(),
        }))
    }

    async fn add_team_member(
        &self,
        request: Request<pb::TeamMemberRequest>,
    ) -> Result<Response<pb::Team>, Status> {
        self.team_member(request, true).await
    }

    async fn remove_team_member(
        &self,
        request: Request<pb::TeamMemberRequest>,
    ) -> Result<Response<pb::Team>, Status> {
        self.team_member(request, false).await
    }

    async fn create_subject(
        &self,
        request: Request<pb::CreateSubjectRequest>,
    ) -> Result<Response<pb::Subject>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let role = role_from_proto(message.role)?;
        let subject = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            if role == Role::PlatformAdmin {
                a.require_platform_admin(&admin)?;
            }
            a.store()
                .create_subject(&message.organisation_id, &message.name, role)
        })
        .await?;
        Ok(Response::new(subject_to_proto(subject)))
    }

    async fn list_subjects(
        &self,
        request: Request<pb::ListSubjectsRequest>,
    ) -> Result<Response<pb::ListSubjectsResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let subjects = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            a.store().list_subjects(&message.organisation_id)
        })
        .await?;
        Ok(Response::new(pb::ListSubjectsResponse {
            subjects: subjects.into_iter().map(subject_to_proto).collect(),
        }))
    }

    async fn create_api_key(
        &self,
        request: Request<pb::CreateApiKeyRequest>,
    ) -> Result<Response<pb::CreateApiKeyResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let (key, secret) = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let subject = a.store().require_subject(&message.subject_id)?;
            a.require_admin_of(&admin, &subject.organisation_id)?;
            if subject.role > admin.role {
                return Err(Error::permission_denied(
                    "an admin cannot create keys for a more powerful subject",
                ));
            }
            a.store().create_api_key(&subject.id, &message.name)
        })
        .await?;
        Ok(Response::new(pb::CreateApiKeyResponse {
            key: Some(api_key_to_proto(key)),
            secret,
        }))
    }

    async fn list_api_keys(
        &self,
        request: Request<pb::ListApiKeysRequest>,
    ) -> Result<Response<pb::ListApiKeysResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let keys = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let subject = a.store().require_subject(&message.subject_id)?;
            a.require_admin_of(&admin, &subject.organisation_id)?;
            a.store().list_api_keys(&subject.id)
        })
        .await?;
        Ok(Response::new(pb::ListApiKeysResponse {
            keys: keys.into_iter().map(api_key_to_proto).collect(),
        }))
    }

    async fn revoke_api_key(
        &self,
        request: Request<pb::RevokeApiKeyRequest>,
    ) -> Result<Response<pb::ApiKey>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let key = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let key = a.store().api_key(&message.key_id)?.ok_or_else(|| {
                Error::not_found(format!("no API key {}", message.key_id)).with_field("key_id")
            })?;
            let subject = a.store().require_subject(&key.subject_id)?;
            a.require_admin_of(&admin, &subject.organisation_id)?;
            a.store().revoke_api_key(&key.id)
        })
        .await?;
        Ok(Response::new(api_key_to_proto(key)))
    }

    async fn create_repository(
        &self,
        request: Request<pb::CreateRepositoryRequest>,
    ) -> Result<Response<pb::AccessRepository>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let repository = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            a.store().create_repository(
                &message.organisation_id,
                &message.name,
                &message.public_graph,
            )
        })
        .await?;
        Ok(Response::new(repository_to_proto(repository)))
    }

    async fn list_repositories(
        &self,
        request: Request<pb::ListRepositoriesRequest>,
    ) -> Result<Response<pb::ListRepositoriesResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let repositories = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_admin_of(&admin, &message.organisation_id)?;
            a.store().list_repositories(&message.organisation_id)
        })
        .await?;
        Ok(Response::new(pb::ListRepositoriesResponse {
            repositories: repositories.into_iter().map(repository_to_proto).collect(),
        }))
    }

    async fn delete_repository(
        &self,
        request: Request<pb::DeleteRepositoryRequest>,
    ) -> Result<Response<pb::AccessRepository>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let repository = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let repository = a.store().require_repository(&message.repository_id)?;
            a.require_admin_of(&admin, &repository.tenant_id)?;
            a.store().delete_repository(&repository.id)
        })
        .await?;
        Ok(Response::new(repository_to_proto(repository)))
    }

    async fn create_grant(
        &self,
        request: Request<pb::CreateGrantRequest>,
    ) -> Result<Response<pb::Grant>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let grantee = match message.grantee {
            Some(pb::create_grant_request::Grantee::SubjectId(id)) => Grantee::Subject(id),
            Some(pb::create_grant_request::Grantee::TeamId(id)) => Grantee::Team(id),
            None => {
                return Err(
                    Error::invalid_argument("grantee", "name a subject_id or a team_id").into(),
                );
            }
        };
        let granted = scopes(&message.scopes)?;
        let grant = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let repository = a.store().require_repository(&message.repository_id)?;
            a.require_admin_of(&admin, &repository.tenant_id)?;
            a.store().create_grant(&repository.id, &grantee, &granted)
        })
        .await?;
        Ok(Response::new(grant_to_proto(grant)))
    }

    async fn list_grants(
        &self,
        request: Request<pb::ListGrantsRequest>,
    ) -> Result<Response<pb::ListGrantsResponse>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let grants = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let repository = a.store().require_repository(&message.repository_id)?;
            a.require_admin_of(&admin, &repository.tenant_id)?;
            a.store().list_grants(&repository.id)
        })
        .await?;
        Ok(Response::new(pb::ListGrantsResponse {
            grants: grants.into_iter().map(grant_to_proto).collect(),
        }))
    }

    async fn revoke_grant(
        &self,
        request: Request<pb::RevokeGrantRequest>,
    ) -> Result<Response<pb::Grant>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let grant = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let grant = a.store().grant(&message.grant_id)?.ok_or_else(|| {
                Error::not_found(format!("no grant {}", message.grant_id)).with_field("grant_id")
            })?;
            let repository = a.store().require_repository(&grant.repository_id)?;
            a.require_admin_of(&admin, &repository.tenant_id)?;
            a.store().revoke_grant(&grant.id)
        })
        .await?;
        Ok(Response::new(grant_to_proto(grant)))
    }

    async fn register_indexed_graph(
        &self,
        request: Request<pb::RegisterIndexedGraphRequest>,
    ) -> Result<Response<pb::AccessRepository>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let repository = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            // The indexing run is the proof that the organisation supplied the source: only
            // the platform's indexer (a platform admin credential) may say it happened.
            a.require_platform_admin(&admin)?;
            let (_, repository) = a.store().register_indexed_graph(
                &message.organisation_id,
                &message.name,
                &store::GraphIndex {
                    commit: message.commit,
                    policy_fingerprint: message.policy_fingerprint,
                },
            )?;
            Ok(repository)
        })
        .await?;
        Ok(Response::new(repository_to_proto(repository)))
    }

    async fn share_graph(
        &self,
        request: Request<pb::ShareGraphRequest>,
    ) -> Result<Response<pb::PublicGraph>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let graph = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            a.require_platform_admin(&admin)?;
            a.store()
                .share_graph(&message.repository_id, &message.public_name)
        })
        .await?;
        Ok(Response::new(public_graph_to_proto(graph)))
    }

    async fn link_identity(
        &self,
        request: Request<pb::IdentityRequest>,
    ) -> Result<Response<pb::Identity>, Status> {
        self.identity(request, true).await
    }

    async fn unlink_identity(
        &self,
        request: Request<pb::IdentityRequest>,
    ) -> Result<Response<pb::Identity>, Status> {
        self.identity(request, false).await
    }

    async fn list_public_graphs(
        &self,
        request: Request<pb::ListPublicGraphsRequest>,
    ) -> Result<Response<pb::ListPublicGraphsResponse>, Status> {
        let bearer = bearer(&request);
        let graphs = blocking(&self.authority, move |a| {
            a.admin(bearer.as_deref())?;
            a.store().list_public_graphs()
        })
        .await?;
        Ok(Response::new(pb::ListPublicGraphsResponse {
            graphs: graphs.into_iter().map(public_graph_to_proto).collect(),
        }))
    }
}

impl AuthzHandler {
    async fn identity(
        &self,
        request: Request<pb::IdentityRequest>,
        link: bool,
    ) -> Result<Response<pb::Identity>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let issuer = match &self.oidc {
            Some(oidc) => oidc.issuer().to_owned(),
            None => {
                return Err(Error::invalid_argument(
                    "claim",
                    "no [oidc] issuer is configured, so there is nothing to link",
                )
                .into());
            }
        };
        let identity = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let subject = a.store().require_subject(&message.subject_id)?;
            a.require_admin_of(&admin, &subject.organisation_id)?;
            if link {
                a.store()
                    .link_identity(&subject.id, &issuer, &message.claim)
            } else {
                a.store()
                    .unlink_identity(&subject.id, &issuer, &message.claim)
            }
        })
        .await?;
        Ok(Response::new(pb::Identity {
            subject_id: identity.subject_id,
            issuer: identity.issuer,
            claim: identity.claim,
            created_at: identity.created_at,
            revoked_at: identity.revoked_at,
        }))
    }
}

fn public_graph_to_proto(graph: crate::store::Graph) -> pb::PublicGraph {
    pb::PublicGraph {
        public_name: graph.public_name.unwrap_or_default(),
        graph_id: graph.graph_id,
        owner_organisation_id: graph.owner_id,
        indexed_at: graph.indexed_at,
    }
}

impl AuthzHandler {
    async fn team_member(
        &self,
        request: Request<pb::TeamMemberRequest>,
        member: bool,
    ) -> Result<Response<pb::Team>, Status> {
        let bearer = bearer(&request);
        let message = request.into_inner();
        let team = blocking(&self.authority, move |a| {
            let admin = a.admin(bearer.as_deref())?;
            let team = a.store().require_team(&message.team_id)?;
            a.require_admin_of(&admin, &team.organisation_id)?;
            a.store()
                .set_team_member(&team.id, &message.subject_id, member)
        })
        .await?;
        Ok(Response::new(team_to_proto(team)))
    }
}
