//! `codectx admin ...`: drives authz's admin RPCs with an admin API key.

use clap::{Args, Subcommand};
use codectx_clients::{AuthzClient, PeerConfig, api_key_credential};
use codectx_proto::authz::v1 as pb;
use codectx_tenant::Scope;

/// Where authz is and which key authorizes the call.
#[derive(Debug, Args)]
pub struct AdminArgs {
    /// authz endpoint.
    #[arg(
        long,
        default_value = "http://127.0.0.1:50051",
        env = "CODECTX_AUTHZ_ENDPOINT"
    )]
    pub authz: String,
    /// Name of the environment variable that holds an admin API key.
    #[arg(long, default_value = "CODECTX_API_KEY")]
    pub api_key_env: String,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Shows the subject behind the API key.
    Whoami,
    /// Organisations (tenants).
    #[command(subcommand)]
    Org(OrgCommand),
    /// Teams of an organisation.
    #[command(subcommand)]
    Team(TeamCommand),
    /// Subjects (users and service accounts).
    #[command(subcommand)]
    Subject(SubjectCommand),
    /// API keys of a subject.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Repository access entries.
    #[command(subcommand)]
    Repo(RepoCommand),
    /// Grants of repository access to subjects or teams.
    #[command(subcommand)]
    Grant(GrantCommand),
    /// Identities of the OIDC issuer (JWT bearer tokens) linked to subjects.
    #[command(subcommand)]
    Identity(IdentityCommand),
}

#[derive(Debug, Subcommand)]
pub enum IdentityCommand {
    /// Links the issuer's subject claim value (e.g. the IdP's user id) to a subject.
    Link {
        /// The subject tokens with this claim authenticate as (`sub_...` or ORG/NAME).
        #[arg(long)]
        subject: String,
        /// The claim value (`sub` unless authz's `oidc.subject_claim` says otherwise).
        claim: String,
    },
    /// Unlinks it: tokens naming it fail from the next request on.
    Unlink {
        /// The subject the claim is linked to (`sub_...` or ORG/NAME).
        #[arg(long)]
        subject: String,
        /// The claim value to unlink.
        claim: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Creates an organisation (platform admins only).
    Create {
        /// The organisation's name (unique; 1-128 characters).
        name: String,
    },
    /// Lists the organisations you administer.
    List,
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Creates a team in an organisation.
    Create {
        /// The organisation (name or `org_...`).
        #[arg(long)]
        org: String,
        /// The team's name, unique in the organisation.
        name: String,
    },
    /// Lists an organisation's teams with their members.
    List {
        /// The organisation (name or `org_...`).
        #[arg(long)]
        org: String,
    },
    /// Adds a subject to a team (the team's grants then reach it).
    AddMember {
        /// The team (`team_...` or ORG/NAME).
        team: String,
        /// The subject (`sub_...` or ORG/NAME).
        subject: String,
    },
    /// Removes a subject from a team.
    RemoveMember {
        /// The team (`team_...` or ORG/NAME).
        team: String,
        /// The subject (`sub_...` or ORG/NAME).
        subject: String,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum RoleArg {
    /// Reads what grants allow.
    Member,
    /// Manages its own organisation.
    OrgAdmin,
    /// Manages every organisation.
    PlatformAdmin,
}

#[derive(Debug, Subcommand)]
pub enum SubjectCommand {
    /// Creates a subject (a person or a service account) in an organisation.
    Create {
        /// The organisation (name or `org_...`).
        #[arg(long)]
        org: String,
        /// The subject's name, unique in the organisation.
        name: String,
        /// What the subject may administer.
        #[arg(long, value_enum, default_value = "member")]
        role: RoleArg,
    },
    /// Lists an organisation's subjects.
    List {
        /// The organisation (name or `org_...`).
        #[arg(long)]
        org: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Creates a key; its secret is printed once and never stored in clear.
    Create {
        /// The subject the key authenticates as (`sub_...` or ORG/NAME).
        #[arg(long)]
        subject: String,
        /// A label for the key (e.g. the machine it lives on).
        name: String,
    },
    /// Lists a subject's keys (prefixes only, never secrets).
    List {
        /// The subject (`sub_...` or ORG/NAME).
        #[arg(long)]
        subject: String,
    },
    /// Revokes a key: it fails on its next request.
    Revoke {
        /// The key's id (`key_...`, from `key list`).
        key: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Adds an entry for a publicly shared graph. Entries for an organisation's own
    /// repositories are made by indexing them (`codectx index PATH --name KEY --org ORG`).
    Create {
        /// The organisation that gets the entry (name or `org_...`).
        #[arg(long)]
        org: String,
        /// The entry's name, as agents will pass it as `repository`.
        name: String,
        /// The public name a platform admin shared the graph under (`repo public`).
        #[arg(long)]
        public: String,
    },
    /// Makes the graph behind an owner's entry public under a name (platform admins only).
    Share {
        /// The owner's entry (`repo_...` or ORG/NAME).
        repository: String,
        /// The name other organisations pass to `repo create --public`.
        public_name: String,
    },
    /// Lists the publicly shared graphs.
    Public,
    /// Lists an organisation's repository entries.
    List {
        /// The organisation (name or `org_...`).
        #[arg(long)]
        org: String,
    },
    /// Deletes an entry and revokes its grants (the graph stays until re-indexed or removed).
    Delete {
        /// The entry (`repo_...` or ORG/NAME).
        repository: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum GrantCommand {
    /// Grants a subject or a team access to a repository entry.
    Create {
        /// The entry (`repo_...` or ORG/NAME).
        repository: String,
        /// The subject (`sub_...` or ORG/NAME).
        #[arg(long, conflicts_with = "team", required_unless_present = "team")]
        subject: Option<String>,
        /// The team (`team_...` or ORG/NAME).
        #[arg(long)]
        team: Option<String>,
        /// Scopes: read_code, read_memory, write_memory (comma separated).
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "read_code,read_memory,write_memory"
        )]
        scopes: Vec<String>,
    },
    /// Lists an entry's grants.
    List {
        /// The entry (`repo_...` or ORG/NAME).
        repository: String,
    },
    /// Revokes a grant: the next request without another grant fails.
    Revoke {
        /// The grant's id (`grnt_...`, from `grant list`).
        grant: String,
    },
}

fn scope_values(names: &[String]) -> anyhow::Result<Vec<i32>> {
    names
        .iter()
        .map(|name| {
            Scope::parse(name.trim())
                .map(|s| s.to_proto() as i32)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "unknown scope {name:?}: use read_code, read_memory or write_memory"
                    )
                })
        })
        .collect()
}

fn role_name(role: i32) -> &'static str {
    match pb::Role::try_from(role) {
        Ok(pb::Role::PlatformAdmin) => "platform_admin",
        Ok(pb::Role::OrgAdmin) => "org_admin",
        _ => "member",
    }
}

fn scope_names(values: &[i32]) -> String {
    values
        .iter()
        .filter_map(|v| Scope::from_proto(*v))
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn print_repository(r: &pb::AccessRepository) {
    println!(
        "{}\t{}\tgraph={}\ttenant={}\trevision={}",
        r.id, r.name, r.graph_id, r.tenant_id, r.policy_revision
    );
}

fn print_grant(g: &pb::Grant) {
    let grantee = match &g.grantee {
        Some(pb::grant::Grantee::SubjectId(id)) => format!("subject={id}"),
        Some(pb::grant::Grantee::TeamId(id)) => format!("team={id}"),
        None => "?".into(),
    };
    let state = if g.revoked_at.is_some() {
        "revoked"
    } else {
        "active"
    };
    println!(
        "{}\t{}\t{}\t{}\t{}",
        g.id,
        g.repository_id,
        grantee,
        scope_names(&g.scopes),
        state
    );
}

fn print_team(t: &pb::Team) {
    println!(
        "{}\t{}\torg={}\tmembers={}",
        t.id,
        t.name,
        t.organisation_id,
        t.member_subject_ids.join(",")
    );
}

/// Turns what a person typed into ids: ids pass through; names are looked up (`--org
/// acme-web`; subjects, teams and repositories as `ORG/NAME`, since their names are per
/// organisation). Errors name the flag and the value.
struct Names {
    client: AuthzClient,
    key: String,
}

fn split_scoped<'a>(flag: &str, value: &'a str, kind: &str) -> anyhow::Result<(&'a str, &'a str)> {
    value.split_once('/').ok_or_else(|| {
        anyhow::anyhow!("{flag} {value}: give a {kind} id or ORG/NAME (e.g. acme-web/{value})")
    })
}

impl Names {
    async fn organisation(&self, value: &str) -> anyhow::Result<String> {
        use codectx_core::ids::{has_prefix, prefix};
        if has_prefix(value, prefix::ORGANISATION) {
            return Ok(value.to_owned());
        }
        let organisations = self
            .client
            .list_organisations(&self.key, pb::ListOrganisationsRequest {})
            .await?
            .organisations;
        organisations
            .into_iter()
            .find(|o| o.name == value)
            .map(|o| o.id)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--org {value}: no organisation with that name that you administer (`codectx admin org list` shows them)"
                )
            })
    }

    async fn subject(&self, value: &str) -> anyhow::Result<String> {
        use codectx_core::ids::{has_prefix, prefix};
        if has_prefix(value, prefix::SUBJECT) {
            return Ok(value.to_owned());
        }
        let (organisation, name) = split_scoped("--subject", value, "subject")?;
        let organisation_id = self.organisation(organisation).await?;
        let subjects = self
            .client
            .list_subjects(&self.key, pb::ListSubjectsRequest { organisation_id })
            .await?
            .subjects;
        subjects
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.id)
            .ok_or_else(|| {
                anyhow::anyhow!("--subject {value}: no subject {name:?} in {organisation}")
            })
    }

    async fn team(&self, value: &str) -> anyhow::Result<String> {
        use codectx_core::ids::{has_prefix, prefix};
        if has_prefix(value, prefix::TEAM) {
            return Ok(value.to_owned());
        }
        let (organisation, name) = split_scoped("--team", value, "team")?;
        let organisation_id = self.organisation(organisation).await?;
        let teams = self
            .client
            .list_teams(&self.key, pb::ListTeamsRequest { organisation_id })
            .await?
            .teams;
        teams
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.id)
            .ok_or_else(|| anyhow::anyhow!("--team {value}: no team {name:?} in {organisation}"))
    }

    async fn repository(&self, value: &str) -> anyhow::Result<String> {
        use codectx_core::ids::{has_prefix, prefix};
        if has_prefix(value, prefix::REPOSITORY) {
            return Ok(value.to_owned());
        }
        let (organisation, name) = split_scoped("repository", value, "repository")?;
        let organisation_id = self.organisation(organisation).await?;
        let repositories = self
            .client
            .list_repositories(&self.key, pb::ListRepositoriesRequest { organisation_id })
            .await?
            .repositories;
        repositories
            .into_iter()
            .find(|r| r.name == name)
            .map(|r| r.id)
            .ok_or_else(|| {
                anyhow::anyhow!("repository {value}: no repository {name:?} in {organisation}")
            })
    }
}

pub async fn run(args: AdminArgs) -> anyhow::Result<()> {
    let key = std::env::var(&args.api_key_env).map_err(|_| {
        anyhow::anyhow!(
            "set {} to an admin API key (or pass --api-key-env NAME)",
            args.api_key_env
        )
    })?;
    let client = AuthzClient::connect(&PeerConfig::single(args.authz.clone()))
        .map_err(|e| anyhow::anyhow!("--authz {}: {e}", args.authz))?;
    let key = key.as_str();
    let names = Names {
        client: client.clone(),
        key: key.to_owned(),
    };
    let endpoint = args.authz.clone();
    run_command(args.command, &client, key, &names)
        .await
        .map_err(|error| match error.downcast::<codectx_errors::Error>() {
            Ok(error) if error.kind() == codectx_errors::ErrorKind::Unavailable => anyhow::anyhow!(
                "cannot reach authz at {endpoint} (--authz or CODECTX_AUTHZ_ENDPOINT): {}",
                error.message()
            ),
            Ok(error) => anyhow::anyhow!("{}", error.message()),
            Err(error) => error,
        })
}

async fn run_command(
    command: AdminCommand,
    client: &AuthzClient,
    key: &str,
    names: &Names,
) -> anyhow::Result<()> {
    match command {
        AdminCommand::Whoami => {
            let subject = client
                .authenticate(pb::AuthenticateRequest {
                    credential: Some(api_key_credential(key)),
                })
                .await?
                .subject
                .unwrap_or_default();
            println!(
                "{}\t{}\torg={}\trole={}",
                subject.id,
                subject.name,
                subject.organisation_id,
                role_name(subject.role)
            );
        }
        AdminCommand::Org(OrgCommand::Create { name }) => {
            let o = client
                .create_organisation(key, pb::CreateOrganisationRequest { name })
                .await?;
            println!("{}\t{}", o.id, o.name);
        }
        AdminCommand::Org(OrgCommand::List) => {
            for o in client
                .list_organisations(key, pb::ListOrganisationsRequest {})
                .await?
                .organisations
            {
                println!("{}\t{}", o.id, o.name);
            }
        }
        AdminCommand::Team(TeamCommand::Create { org, name }) => {
            print_team(
                &client
                    .create_team(
                        key,
                        pb::CreateTeamRequest {
                            organisation_id: names.organisation(&org).await?,
                            name,
                        },
                    )
                    .await?,
            );
        }
        AdminCommand::Team(TeamCommand::List { org }) => {
            for t in client
                .list_teams(
                    key,
                    pb::ListTeamsRequest {
                        organisation_id: names.organisation(&org).await?,
                    },
                )
                .await?
                .teams
            {
                print_team(&t);
            }
        }
        AdminCommand::Team(TeamCommand::AddMember { team, subject }) => {
            print_team(
                &client
                    .add_team_member(
                        key,
                        pb::TeamMemberRequest {
                            team_id: names.team(&team).await?,
                            subject_id: names.subject(&subject).await?,
                        },
                    )
                    .await?,
            );
        }
        AdminCommand::Team(TeamCommand::RemoveMember { team, subject }) => {
            print_team(
                &client
                    .remove_team_member(
                        key,
                        pb::TeamMemberRequest {
                            team_id: names.team(&team).await?,
                            subject_id: names.subject(&subject).await?,
                        },
                    )
                    .await?,
            );
        }
        AdminCommand::Subject(SubjectCommand::Create { org, name, role }) => {
            let role = match role {
                RoleArg::Member => pb::Role::Member,
                RoleArg::OrgAdmin => pb::Role::OrgAdmin,
                RoleArg::PlatformAdmin => pb::Role::PlatformAdmin,
            } as i32;
            let s = client
                .create_subject(
                    key,
                    pb::CreateSubjectRequest {
                        organisation_id: names.organisation(&org).await?,
                        name,
                        role,
                    },
                )
                .await?;
            println!("{}\t{}\trole={}", s.id, s.name, role_name(s.role));
        }
        AdminCommand::Subject(SubjectCommand::List { org }) => {
            for s in client
                .list_subjects(
                    key,
                    pb::ListSubjectsRequest {
                        organisation_id: names.organisation(&org).await?,
                    },
                )
                .await?
                .subjects
            {
                println!("{}\t{}\trole={}", s.id, s.name, role_name(s.role));
            }
        }
        AdminCommand::Key(KeyCommand::Create { subject, name }) => {
            let created = client
                .create_api_key(
                    key,
                    pb::CreateApiKeyRequest {
                        subject_id: names.subject(&subject).await?,
                        name,
                    },
                )
                .await?;
            let k = created.key.unwrap_or_default();
            println!("{}\t{}\t{}", k.id, k.name, k.prefix);
            println!("secret (shown once, store it now): {}", created.secret);
        }
        AdminCommand::Key(KeyCommand::List { subject }) => {
            for k in client
                .list_api_keys(
                    key,
                    pb::ListApiKeysRequest {
                        subject_id: names.subject(&subject).await?,
                    },
                )
                .await?
                .keys
            {
                let state = if k.revoked_at.is_some() {
                    "revoked"
                } else {
                    "active"
                };
                println!("{}\t{}\t{}\t{}", k.id, k.name, k.prefix, state);
            }
        }
        AdminCommand::Key(KeyCommand::Revoke { key: id }) => {
            let k = client
                .revoke_api_key(key, pb::RevokeApiKeyRequest { key_id: id })
                .await?;
            println!("{}\trevoked", k.id);
        }
        AdminCommand::Repo(RepoCommand::Create { org, name, public }) => {
            print_repository(
                &client
                    .create_repository(
                        key,
                        pb::CreateRepositoryRequest {
                            organisation_id: names.organisation(&org).await?,
                            name,
                            public_graph: public,
                        },
                    )
                    .await?,
            );
        }
        AdminCommand::Repo(RepoCommand::Share {
            repository,
            public_name,
        }) => {
            let graph = client
                .share_graph(
                    key,
                    pb::ShareGraphRequest {
                        repository_id: names.repository(&repository).await?,
                        public_name,
                    },
                )
                .await?;
            println!("{}	{}", graph.public_name, graph.graph_id);
        }
        AdminCommand::Repo(RepoCommand::Public) => {
            for graph in client
                .list_public_graphs(key, pb::ListPublicGraphsRequest {})
                .await?
                .graphs
            {
                println!(
                    "{}	{}	owner={}",
                    graph.public_name, graph.graph_id, graph.owner_organisation_id
                );
            }
        }
        AdminCommand::Repo(RepoCommand::List { org }) => {
            for r in client
                .list_repositories(
                    key,
                    pb::ListRepositoriesRequest {
                        organisation_id: names.organisation(&org).await?,
                    },
                )
                .await?
                .repositories
            {
                print_repository(&r);
            }
        }
        AdminCommand::Repo(RepoCommand::Delete { repository }) => {
            print_repository(
                &client
                    .delete_repository(
                        key,
                        pb::DeleteRepositoryRequest {
                            repository_id: names.repository(&repository).await?,
                        },
                    )
                    .await?,
            );
        }
        AdminCommand::Grant(GrantCommand::Create {
            repository,
            subject,
            team,
            scopes,
        }) => {
            let grantee = match (subject, team) {
                (Some(subject), _) => {
                    pb::create_grant_request::Grantee::SubjectId(names.subject(&subject).await?)
                }
                (None, Some(team)) => {
                    pb::create_grant_request::Grantee::TeamId(names.team(&team).await?)
                }
                (None, None) => anyhow::bail!("name a --subject or a --team"),
            };
            let grant = client
                .create_grant(
                    key,
                    pb::CreateGrantRequest {
                        repository_id: names.repository(&repository).await?,
                        grantee: Some(grantee),
                        scopes: scope_values(&scopes)?,
                    },
                )
                .await?;
            print_grant(&grant);
        }
        AdminCommand::Grant(GrantCommand::List { repository }) => {
            for g in client
                .list_grants(
                    key,
                    pb::ListGrantsRequest {
                        repository_id: names.repository(&repository).await?,
                    },
                )
                .await?
                .grants
            {
                print_grant(&g);
            }
        }
        AdminCommand::Grant(GrantCommand::Revoke { grant }) => {
            print_grant(
                &client
                    .revoke_grant(key, pb::RevokeGrantRequest { grant_id: grant })
                    .await?,
            );
        }
        AdminCommand::Identity(command) => {
            let (link, subject, claim) = match command {
                IdentityCommand::Link { subject, claim } => (true, subject, claim),
                IdentityCommand::Unlink { subject, claim } => (false, subject, claim),
            };
            let request = pb::IdentityRequest {
                subject_id: names.subject(&subject).await?,
                claim,
            };
            let identity = if link {
                client.link_identity(key, request).await?
            } else {
                client.unlink_identity(key, request).await?
            };
            let state = if identity.revoked_at.is_some() {
                "unlinked"
            } else {
                "linked"
            };
            println!(
                "{}\t{}\t{}\t{state}",
                identity.subject_id, identity.issuer, identity.claim
            );
        }
    }
    Ok(())
}
