//! The access store: organisations, teams, subjects, hashed API keys, repository entries
//! and grants, in one SQLite file. Every query binds its values as parameters.

use std::path::Path;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use codectx_core::ids::{self, prefix};
use codectx_errors::Error;
use codectx_tenant::Scope;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

/// 2 added `graphs`: the registry of indexed graphs that proves an entry's access.
const SCHEMA_VERSION: i64 = 3;

/// Prefix of every API key secret, so leaked keys are recognisable by scanners.
pub const API_KEY_PREFIX: &str = "cxk_";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS organisations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS subjects (
    id TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    role INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (organisation_id, name)
);
CREATE TABLE IF NOT EXISTS teams (
    id TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (organisation_id, name)
);
CREATE TABLE IF NOT EXISTS team_members (
    team_id TEXT NOT NULL REFERENCES teams(id),
    subject_id TEXT NOT NULL REFERENCES subjects(id),
    PRIMARY KEY (team_id, subject_id)
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    subject_id TEXT NOT NULL REFERENCES subjects(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS repositories (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES organisations(id),
    graph_id TEXT NOT NULL,
    name TEXT NOT NULL,
    policy_revision INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    deleted_at INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS repositories_live_name
    ON repositories (tenant_id, name) WHERE deleted_at IS NULL;
CREATE TABLE IF NOT EXISTS graphs (
    graph_id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    public_name TEXT UNIQUE,
    indexed_at INTEGER NOT NULL,
    commit_sha TEXT NOT NULL DEFAULT '',
    policy_fingerprint TEXT NOT NULL DEFAULT '',
    UNIQUE (owner_id, name)
);
CREATE TABLE IF NOT EXISTS identities (
    issuer TEXT NOT NULL,
    claim TEXT NOT NULL,
    subject_id TEXT NOT NULL REFERENCES subjects(id),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS identities_live
    ON identities (issuer, claim) WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS grants (
    id TEXT PRIMARY KEY,
    repository_id TEXT NOT NULL REFERENCES repositories(id),
    subject_id TEXT REFERENCES subjects(id),
    team_id TEXT REFERENCES teams(id),
    scopes TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    CHECK ((subject_id IS NULL) <> (team_id IS NULL))
);
CREATE INDEX IF NOT EXISTS grants_by_repository ON grants (repository_id);
CREATE INDEX IF NOT EXISTS grants_by_subject ON grants (subject_id);
CREATE INDEX IF NOT EXISTS grants_by_team ON grants (team_id);
";

/// Every table whose rows decide who may do what: a write to any of them bumps the
/// access revision (`meta.access_revision`), so a context minted at a revision is known
/// to be current for as long as the revision stays (AuthenticateResponse.access_revision).
const ACCESS_TABLES: [&str; 9] = [
    "organisations",
    "subjects",
    "teams",
    "team_members",
    "api_keys",
    "repositories",
    "graphs",
    "identities",
    "grants",
];

/// The revision row and one trigger per table and kind of write that bumps it; created
/// idempotently at open, so stores created before them gain them.
fn revision_triggers() -> String {
    let mut sql =
        String::from("INSERT OR IGNORE INTO meta (key, value) VALUES ('access_revision', '1');\n");
    for table in ACCESS_TABLES {
        for event in ["INSERT", "UPDATE", "DELETE"] {
            let name = format!("{table}_{}_bumps_revision", event.to_lowercase());
            sql.push_str(&format!(
                "CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table} BEGIN
                 UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'access_revision';
                 END;\n"
            ));
        }
    }
    sql
}

/// Roles, in increasing power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Member = 1,
    OrgAdmin = 2,
    PlatformAdmin = 3,
}

impl Role {
    pub fn from_i64(value: i64) -> Role {
        match value {
            3 => Role::PlatformAdmin,
            2 => Role::OrgAdmin,
            _ => Role::Member,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Organisation {
    pub id: String,
    pub name: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub id: String,
    pub organisation_id: String,
    pub name: String,
    pub role: Role,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: String,
    pub organisation_id: String,
    pub name: String,
    pub members: Vec<String>,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: String,
    pub subject_id: String,
    pub name: String,
    pub prefix: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    pub id: String,
    pub tenant_id: String,
    pub graph_id: String,
    pub name: String,
    pub policy_revision: u64,
    pub created_at: i64,
}

/// A code graph an indexing run wrote, and who may hold entries for it: its owner (the
/// organisation that supplied the source) and, once a platform admin shares it under a
/// public name, every organisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub graph_id: String,
    pub owner_id: String,
    pub name: String,
    pub public_name: Option<String>,
    pub indexed_at: i64,
    /// What the last index run read: the checkout's commit (empty without git) and the
    /// fingerprint of the repository policy it applied.
    pub index: GraphIndex,
}

/// What an index run read, as the indexer reports it when it registers the graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphIndex {
    pub commit: String,
    pub policy_fingerprint: String,
}

/// An identity of an OIDC issuer linked to a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedIdentity {
    pub subject_id: String,
    pub issuer: String,
    pub claim: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grantee {
    Subject(String),
    Team(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: String,
    pub repository_id: String,
    pub grantee: Grantee,
    pub scopes: Vec<Scope>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// A repository entry the subject may use, with the union of its granted scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub repository: Repository,
    pub scopes: Vec<Scope>,
}

/// The SQLite access store. One connection behind a mutex: authz work is short and the
/// file is local, so this is simpler and faster than a pool.
pub struct Store {
    connection: Mutex<Connection>,
    keys: Mutex<KeySubjects>,
}

/// Subjects of API keys as of one access revision ([`Store::authenticate_api_key_now`]).
/// Every write that decides access bumps the revision in the same transaction (the
/// triggers of [`ACCESS_TABLES`], whichever process writes), so a subject remembered at
/// the revision a read sees is the subject the key's row holds in that snapshot.
#[derive(Debug, Default)]
struct KeySubjects {
    revision: u64,
    /// By the secret's hash; only live keys (an unknown key is read every time).
    subjects: std::collections::HashMap<String, Subject>,
}

/// Live keys remembered at most; a full memory starts again empty.
const REMEMBERED_KEYS: usize = 4_096;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("access store: {error}"))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn read_access_revision(c: &Connection) -> Result<u64, Error> {
    let value: String = c
        .prepare_cached("SELECT value FROM meta WHERE key = 'access_revision'")
        .map_err(storage)?
        .query_row([], |r| r.get(0))
        .map_err(storage)?;
    value
        .parse()
        .map_err(|_| Error::internal(format!("access revision {value:?} is not a number")))
}

/// The subject of the live API key whose secret hashes to `hash`.
fn live_key_subject(c: &Connection, hash: &str) -> Result<Option<Subject>, Error> {
    c.prepare_cached(
        "SELECT s.id, s.organisation_id, s.name, s.role, s.created_at
         FROM api_keys k JOIN subjects s ON s.id = k.subject_id
         WHERE k.secret_hash = ?1 AND k.revoked_at IS NULL",
    )
    .map_err(storage)?
    .query_row(params![hash], subject_row)
    .optional()
    .map_err(storage)
}

/// sha256 of an API key secret, hex.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn scopes_to_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn scopes_from_text(text: &str) -> Vec<Scope> {
    text.split(',').filter_map(Scope::parse).collect()
}

/// Names people give things: 1-128 characters, no control characters.
pub fn validate_name(field: &str, name: &str) -> Result<(), Error> {
    if name.trim().is_empty() || name.chars().count() > 128 || name.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            field,
            format!("{field} must be 1-128 characters without control characters"),
        ));
    }
    Ok(())
}

fn require_id(field: &str, value: &str, expected_prefix: &str) -> Result<(), Error> {
    if !ids::has_prefix(value, expected_prefix) {
        return Err(Error::invalid_argument(
            field,
            format!("{field} must be an id of the form {expected_prefix}_<32 hex>"),
        ));
    }
    Ok(())
}

impl Store {
    /// Opens (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
        }
        let connection = Connection::open(path).map_err(storage)?;
        Self::init(connection)
    }

    /// An in-memory store, for unit tests of policy logic.
    pub fn open_in_memory() -> Result<Self, Error> {
        Self::init(Connection::open_in_memory().map_err(storage)?)
    }

    fn init(connection: Connection) -> Result<Self, Error> {
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
            )
            .map_err(storage)?;
        connection.execute_batch(SCHEMA).map_err(storage)?;
        connection
            .execute_batch(&revision_triggers())
            .map_err(storage)?;
        let version: Option<String> = connection
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(storage)?;
        match version {
            None => {
                connection
                    .execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                        params![SCHEMA_VERSION.to_string()],
                    )
                    .map_err(storage)?;
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            // Version 2 did not record what each index run read (commit, policy).
            Some(v) if v == "2" => {
                connection
                    .execute_batch(
                        "ALTER TABLE graphs ADD COLUMN commit_sha TEXT NOT NULL DEFAULT '';
                         ALTER TABLE graphs ADD COLUMN policy_fingerprint TEXT NOT NULL DEFAULT '';",
                    )
                    .map_err(storage)?;
                connection
                    .execute(
                        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                        params![SCHEMA_VERSION.to_string()],
                    )
                    .map_err(storage)?;
            }
            // Version 1 had no graph registry: its entries named graph ids that nothing
            // proved. They stay in place but authorize nothing until their organisation
            // re-indexes the repository (which registers the graph), see docs/security.md.
            Some(v) if v == "1" => {
                connection
                    .execute(
                        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                        params![SCHEMA_VERSION.to_string()],
                    )
                    .map_err(storage)?;
            }
            Some(v) => {
                return Err(Error::internal(format!(
                    "access store schema version {v} is not supported by this build (expects {SCHEMA_VERSION})"
                )));
            }
        }
        Ok(Self {
            connection: Mutex::new(connection),
            keys: Mutex::default(),
        })
    }

    fn with<T>(&self, work: impl FnOnce(&Connection) -> Result<T, Error>) -> Result<T, Error> {
        let connection = self
            .connection
            .lock()
            .map_err(|_| Error::internal("access store lock poisoned"))?;
        work(&connection)
    }

    // ---- organisations --------------------------------------------------------------

    pub fn create_organisation(&self, name: &str) -> Result<Organisation, Error> {
        validate_name("name", name)?;
        let organisation = Organisation {
            id: ids::mint(prefix::ORGANISATION),
            name: name.to_owned(),
            created_at: now(),
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO organisations (id, name, created_at) VALUES (?1, ?2, ?3)",
                params![organisation.id, organisation.name, organisation.created_at],
            )
            .map_err(|e| unique_or(e, format!("an organisation named {name:?} exists already")))?;
            Ok(organisation.clone())
        })
    }

    pub fn list_organisations(&self) -> Result<Vec<Organisation>, Error> {
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT id, name, created_at FROM organisations ORDER BY name")
                .map_err(storage)?;
            let rows = statement
                .query_map([], |r| {
                    Ok(Organisation {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        created_at: r.get(2)?,
                    })
                })
                .map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    pub fn organisation(&self, id: &str) -> Result<Option<Organisation>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, name, created_at FROM organisations WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Organisation {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        created_at: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn organisation_by_name(&self, name: &str) -> Result<Option<Organisation>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, name, created_at FROM organisations WHERE name = ?1",
                params![name],
                |r| {
                    Ok(Organisation {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        created_at: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(storage)
        })
    }

    fn require_organisation(&self, id: &str) -> Result<Organisation, Error> {
        require_id("organisation_id", id, prefix::ORGANISATION)?;
        self.organisation(id)?.ok_or_else(|| {
            Error::not_found(format!("no organisation {id}")).with_field("organisation_id")
        })
    }

    // ---- subjects -------------------------------------------------------------------

    pub fn create_subject(
        &self,
        organisation_id: &str,
        name: &str,
        role: Role,
    ) -> Result<Subject, Error> {
        validate_name("name", name)?;
        self.require_organisation(organisation_id)?;
        let subject = Subject {
            id: ids::mint(prefix::SUBJECT),
            organisation_id: organisation_id.to_owned(),
            name: name.to_owned(),
            role,
            created_at: now(),
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO subjects (id, organisation_id, name, role, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![subject.id, subject.organisation_id, subject.name, role as i64, subject.created_at],
            )
            .map_err(|e| unique_or(e, format!("a subject named {name:?} exists in this organisation already")))?;
            Ok(subject.clone())
        })
    }

    pub fn subject(&self, id: &str) -> Result<Option<Subject>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, organisation_id, name, role, created_at FROM subjects WHERE id = ?1",
                params![id],
                subject_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn subject_by_name(
        &self,
        organisation_id: &str,
        name: &str,
    ) -> Result<Option<Subject>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, organisation_id, name, role, created_at FROM subjects WHERE organisation_id = ?1 AND name = ?2",
                params![organisation_id, name],
                subject_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn require_subject(&self, id: &str) -> Result<Subject, Error> {
        require_id("subject_id", id, prefix::SUBJECT)?;
        self.subject(id)?
            .ok_or_else(|| Error::not_found(format!("no subject {id}")).with_field("subject_id"))
    }

    pub fn list_subjects(&self, organisation_id: &str) -> Result<Vec<Subject>, Error> {
        self.require_organisation(organisation_id)?;
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT id, organisation_id, name, role, created_at FROM subjects WHERE organisation_id = ?1 ORDER BY name")
                .map_err(storage)?;
            let rows = statement.query_map(params![organisation_id], subject_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    // ---- teams ----------------------------------------------------------------------

    pub fn create_team(&self, organisation_id: &str, name: &str) -> Result<Team, Error> {
        validate_name("name", name)?;
        self.require_organisation(organisation_id)?;
        let team = Team {
            id: ids::mint(prefix::TEAM),
            organisation_id: organisation_id.to_owned(),
            name: name.to_owned(),
            members: Vec::new(),
            created_at: now(),
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO teams (id, organisation_id, name, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![team.id, team.organisation_id, team.name, team.created_at],
            )
            .map_err(|e| {
                unique_or(
                    e,
                    format!("a team named {name:?} exists in this organisation already"),
                )
            })?;
            Ok(team.clone())
        })
    }

    pub fn team(&self, id: &str) -> Result<Option<Team>, Error> {
        self.with(|c| {
            let team = c
                .query_row(
                    "SELECT id, organisation_id, name, created_at FROM teams WHERE id = ?1",
                    params![id],
                    |r| {
                        Ok(Team {
                            id: r.get(0)?,
                            organisation_id: r.get(1)?,
                            name: r.get(2)?,
                            members: Vec::new(),
                            created_at: r.get(3)?,
                        })
                    },
                )
                .optional()
                .map_err(storage)?;
            let Some(mut team) = team else {
                return Ok(None);
            };
            let mut statement = c
                .prepare(
                    "SELECT subject_id FROM team_members WHERE team_id = ?1 ORDER BY subject_id",
                )
                .map_err(storage)?;
            team.members = statement
                .query_map(params![id], |r| r.get(0))
                .map_err(storage)?
                .collect::<Result<_, _>>()
                .map_err(storage)?;
            Ok(Some(team))
        })
    }

    pub fn require_team(&self, id: &str) -> Result<Team, Error> {
        require_id("team_id", id, prefix::TEAM)?;
        self.team(id)?
            .ok_or_else(|| Error::not_found(format!("no team {id}")).with_field("team_id"))
    }

    pub fn list_teams(&self, organisation_id: &str) -> Result<Vec<Team>, Error> {
        self.require_organisation(organisation_id)?;
        let ids: Vec<String> = self.with(|c| {
            let mut statement = c
                .prepare("SELECT id FROM teams WHERE organisation_id = ?1 ORDER BY name")
                .map_err(storage)?;
            let rows = statement
                .query_map(params![organisation_id], |r| r.get(0))
                .map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })?;
        ids.iter()
            .filter_map(|id| self.team(id).transpose())
            .collect()
    }

    /// Adds or removes a member; bumps the policy revision of every repository the team is
    /// granted, so contexts minted before the change are known to be outdated.
    pub fn set_team_member(
        &self,
        team_id: &str,
        subject_id: &str,
        member: bool,
    ) -> Result<Team, Error> {
        let team = self.require_team(team_id)?;
        let subject = self.require_subject(subject_id)?;
        if subject.organisation_id != team.organisation_id {
            return Err(Error::invalid_argument(
                "subject_id",
                "the subject belongs to another organisation than the team",
            ));
        }
        self.with(|c| {
            if member {
                c.execute(
                    "INSERT OR IGNORE INTO team_members (team_id, subject_id) VALUES (?1, ?2)",
                    params![team_id, subject_id],
                )
                .map_err(storage)?;
            } else {
                c.execute(
                    "DELETE FROM team_members WHERE team_id = ?1 AND subject_id = ?2",
                    params![team_id, subject_id],
                )
                .map_err(storage)?;
            }
            c.execute(
                "UPDATE repositories SET policy_revision = policy_revision + 1
                 WHERE id IN (SELECT repository_id FROM grants WHERE team_id = ?1 AND revoked_at IS NULL)",
                params![team_id],
            )
            .map_err(storage)?;
            Ok(())
        })?;
        self.require_team(team_id)
    }

    // ---- API keys -------------------------------------------------------------------

    /// Creates a key and returns it with its secret, which is stored only as a hash.
    pub fn create_api_key(&self, subject_id: &str, name: &str) -> Result<(ApiKey, String), Error> {
        let secret = format!(
            "{API_KEY_PREFIX}{}",
            URL_SAFE_NO_PAD.encode(ids::random_bytes(32))
        );
        let key = self.insert_api_key(subject_id, name, &secret)?;
        Ok((key, secret))
    }

    /// Registers a secret chosen elsewhere (the development key of `codectx up`). Reuses
    /// the existing key when this secret is known already.
    pub fn import_api_key(
        &self,
        subject_id: &str,
        name: &str,
        secret: &str,
    ) -> Result<ApiKey, Error> {
        if secret.len() < 16 || secret.len() > 512 || !secret.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(Error::invalid_argument(
                "api_key",
                "an API key must be 16-512 printable ASCII characters without spaces",
            ));
        }
        let hash = hash_secret(secret);
        let existing = self.with(|c| {
            c.query_row(
                "SELECT id, subject_id, name, prefix, created_at, revoked_at FROM api_keys WHERE secret_hash = ?1",
                params![hash],
                api_key_row,
            )
            .optional()
            .map_err(storage)
        })?;
        match existing {
            Some(key) if key.subject_id == subject_id && key.revoked_at.is_none() => Ok(key),
            Some(_) => Err(Error::invalid_argument(
                "api_key",
                "this API key is revoked or belongs to another subject; choose another",
            )),
            None => self.insert_api_key(subject_id, name, secret),
        }
    }

    fn insert_api_key(&self, subject_id: &str, name: &str, secret: &str) -> Result<ApiKey, Error> {
        validate_name("name", name)?;
        self.require_subject(subject_id)?;
        let key = ApiKey {
            id: ids::mint(prefix::API_KEY),
            subject_id: subject_id.to_owned(),
            name: name.to_owned(),
            prefix: secret.chars().take(12).collect(),
            created_at: now(),
            revoked_at: None,
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO api_keys (id, subject_id, name, prefix, secret_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![key.id, key.subject_id, key.name, key.prefix, hash_secret(secret), key.created_at],
            )
            .map_err(storage)?;
            Ok(key.clone())
        })
    }

    pub fn list_api_keys(&self, subject_id: &str) -> Result<Vec<ApiKey>, Error> {
        self.require_subject(subject_id)?;
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT id, subject_id, name, prefix, created_at, revoked_at FROM api_keys WHERE subject_id = ?1 ORDER BY created_at, id")
                .map_err(storage)?;
            let rows = statement.query_map(params![subject_id], api_key_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    pub fn api_key(&self, id: &str) -> Result<Option<ApiKey>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, subject_id, name, prefix, created_at, revoked_at FROM api_keys WHERE id = ?1",
                params![id],
                api_key_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn revoke_api_key(&self, id: &str) -> Result<ApiKey, Error> {
        require_id("key_id", id, prefix::API_KEY)?;
        self.with(|c| {
            c.execute(
                "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                params![id, now()],
            )
            .map_err(storage)
        })?;
        self.api_key(id)?
            .ok_or_else(|| Error::not_found(format!("no API key {id}")).with_field("key_id"))
    }

    /// The access revision: it changes with every write to [`ACCESS_TABLES`].
    pub fn access_revision(&self) -> Result<u64, Error> {
        self.with(read_access_revision)
    }

    /// The access revision and the subject of a live API key (None for unknown and
    /// revoked keys), read in one snapshot. A key's subject is remembered for as long
    /// as the revision stays, so a call with a known key reads one row (the revision),
    /// and a revocation, which bumps it, takes effect on the next call.
    pub fn authenticate_api_key_now(&self, secret: &str) -> Result<(u64, Option<Subject>), Error> {
        let hash = (!secret.is_empty() && secret.len() <= 512).then(|| hash_secret(secret));
        self.with(|c| {
            let snapshot = c.unchecked_transaction().map_err(storage)?;
            let revision = read_access_revision(&snapshot)?;
            let Some(hash) = hash else {
                return Ok((revision, None));
            };
            let mut keys = self
                .keys
                .lock()
                .map_err(|_| Error::internal("access store key memory poisoned"))?;
            if keys.revision != revision {
                keys.subjects.clear();
                keys.revision = revision;
            }
            if let Some(subject) = keys.subjects.get(&hash) {
                return Ok((revision, Some(subject.clone())));
            }
            let subject = live_key_subject(&snapshot, &hash)?;
            snapshot.commit().map_err(storage)?;
            if let Some(subject) = &subject {
                if keys.subjects.len() >= REMEMBERED_KEYS {
                    keys.subjects.clear();
                }
                keys.subjects.insert(hash, subject.clone());
            }
            Ok((revision, subject))
        })
    }

    /// The subject of a live API key; None for unknown or revoked keys.
    pub fn authenticate_api_key(&self, secret: &str) -> Result<Option<Subject>, Error> {
        if secret.is_empty() || secret.len() > 512 {
            return Ok(None);
        }
        let hash = hash_secret(secret);
        self.with(|c| live_key_subject(c, &hash))
    }

    // ---- identities -----------------------------------------------------------------

    /// Links `claim` of `issuer` to the subject (one live link per identity).
    pub fn link_identity(
        &self,
        subject_id: &str,
        issuer: &str,
        claim: &str,
    ) -> Result<LinkedIdentity, Error> {
        self.require_subject(subject_id)?;
        if claim.is_empty() || claim.len() > 256 || claim.chars().any(char::is_control) {
            return Err(Error::invalid_argument(
                "claim",
                "claim must be 1-256 bytes without control characters",
            ));
        }
        let identity = LinkedIdentity {
            subject_id: subject_id.to_owned(),
            issuer: issuer.to_owned(),
            claim: claim.to_owned(),
            created_at: now(),
            revoked_at: None,
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO identities (issuer, claim, subject_id, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![identity.issuer, identity.claim, identity.subject_id, identity.created_at],
            )
            .map_err(|e| unique_or(e, format!("{claim:?} is linked to a subject already; unlink it first")))?;
            Ok(identity.clone())
        })
    }

    /// Ends the live link of `claim` to the subject: tokens naming it fail from now on.
    pub fn unlink_identity(
        &self,
        subject_id: &str,
        issuer: &str,
        claim: &str,
    ) -> Result<LinkedIdentity, Error> {
        let at = now();
        let changed = self.with(|c| {
            c.execute(
                "UPDATE identities SET revoked_at = ?4 WHERE issuer = ?1 AND claim = ?2 AND subject_id = ?3 AND revoked_at IS NULL",
                params![issuer, claim, subject_id, at],
            )
            .map_err(storage)
        })?;
        if changed == 0 {
            return Err(Error::not_found(format!(
                "{claim:?} is not linked to subject {subject_id}"
            ))
            .with_field("claim"));
        }
        Ok(LinkedIdentity {
            subject_id: subject_id.to_owned(),
            issuer: issuer.to_owned(),
            claim: claim.to_owned(),
            created_at: at,
            revoked_at: Some(at),
        })
    }

    /// The subject a live identity link names.
    pub fn subject_for_identity(
        &self,
        issuer: &str,
        claim: &str,
    ) -> Result<Option<Subject>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT s.id, s.organisation_id, s.name, s.role, s.created_at
                 FROM identities i JOIN subjects s ON s.id = i.subject_id
                 WHERE i.issuer = ?1 AND i.claim = ?2 AND i.revoked_at IS NULL",
                params![issuer, claim],
                subject_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    // ---- repositories ---------------------------------------------------------------

    /// Records that an indexing run wrote the owner's graph for `name`, and ensures the
    /// owner's entry for it. The graph id is derived here from the owner and the name, never
    /// taken from a request: the only graph an organisation's run can register is its own.
    /// Only the indexing path (a platform admin credential) calls this.
    pub fn register_indexed_graph(
        &self,
        owner_id: &str,
        name: &str,
        index: &GraphIndex,
    ) -> Result<(Graph, Repository), Error> {
        validate_name("name", name)?;
        self.require_organisation(owner_id)?;
        for (field, value) in [
            ("commit", &index.commit),
            ("policy_fingerprint", &index.policy_fingerprint),
        ] {
            if value.len() > 128 || !value.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(Error::invalid_argument(
                    field,
                    format!("{field} must be at most 128 letters and digits (a hash)"),
                ));
            }
        }
        let graph_id = ids::graph_for(owner_id, name);
        let at = now();
        self.with(|c| {
            c.execute(
                "INSERT INTO graphs (graph_id, owner_id, name, public_name, indexed_at, commit_sha, policy_fingerprint)
                 VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6)
                 ON CONFLICT (graph_id) DO UPDATE SET indexed_at = excluded.indexed_at,
                     commit_sha = excluded.commit_sha, policy_fingerprint = excluded.policy_fingerprint",
                params![graph_id, owner_id, name, at, index.commit, index.policy_fingerprint],
            )
            .map_err(storage)?;
            Ok(())
        })?;
        let graph = self
            .graph(&graph_id)?
            .ok_or_else(|| Error::internal("graph vanished while registering"))?;
        let repository = match self.repository_by_name(owner_id, name)? {
            Some(existing) if existing.graph_id == graph_id => existing,
            Some(existing) => {
                return Err(Error::new(
                    codectx_errors::ErrorKind::AlreadyExists,
                    format!(
                        "the organisation's entry {name:?} ({}) reads a shared public graph; delete or rename it before indexing a repository under that name",
                        existing.id
                    ),
                )
                .with_field("name"));
            }
            None => self.insert_repository(owner_id, name, &graph_id)?,
        };
        Ok((graph, repository))
    }

    pub fn graph(&self, graph_id: &str) -> Result<Option<Graph>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT graph_id, owner_id, name, public_name, indexed_at, commit_sha, policy_fingerprint FROM graphs WHERE graph_id = ?1",
                params![graph_id],
                graph_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    /// The graph shared under `public_name`, if any.
    pub fn public_graph(&self, public_name: &str) -> Result<Option<Graph>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT graph_id, owner_id, name, public_name, indexed_at, commit_sha, policy_fingerprint FROM graphs WHERE public_name = ?1",
                params![public_name],
                graph_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn list_public_graphs(&self) -> Result<Vec<Graph>, Error> {
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT graph_id, owner_id, name, public_name, indexed_at, commit_sha, policy_fingerprint FROM graphs WHERE public_name IS NOT NULL ORDER BY public_name")
                .map_err(storage)?;
            let rows = statement.query_map([], graph_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    /// Makes the graph behind `repository_id` (an entry of its owner) public under
    /// `public_name`: any organisation's admin may then add an entry for it. Platform
    /// admins only (checked by the caller).
    pub fn share_graph(&self, repository_id: &str, public_name: &str) -> Result<Graph, Error> {
        validate_name("public_name", public_name)?;
        let repository = self.require_repository(repository_id)?;
        let graph = self.graph(&repository.graph_id)?.filter(|g| g.owner_id == repository.tenant_id).ok_or_else(|| {
            Error::invalid_argument(
                "repository_id",
                format!("entry {repository_id} does not read a graph its organisation indexed; only an owner's indexed graph can be shared"),
            )
        })?;
        self.with(|c| {
            c.execute(
                "UPDATE graphs SET public_name = ?2 WHERE graph_id = ?1",
                params![graph.graph_id, public_name],
            )
            .map_err(|e| unique_or(e, format!("a graph is shared as {public_name:?} already")))?;
            Ok(())
        })?;
        self.graph(&graph.graph_id)?
            .ok_or_else(|| Error::internal("graph vanished while sharing"))
    }

    /// Adds an entry named `name` to the organisation for the graph shared as
    /// `public_graph`. Entries for an organisation's own repositories are made by indexing
    /// them ([`Store::register_indexed_graph`]); no request names a graph id.
    pub fn create_repository(
        &self,
        organisation_id: &str,
        name: &str,
        public_graph: &str,
    ) -> Result<Repository, Error> {
        validate_name("name", name)?;
        self.require_organisation(organisation_id)?;
        if public_graph.is_empty() {
            return Err(Error::invalid_argument(
                "public_graph",
                "name a graph a platform admin has shared (list_public_graphs); entries for the organisation's own repositories are created by indexing them (`codectx index PATH --name KEY --org ORG`)",
            ));
        }
        let graph = self.public_graph(public_graph)?.ok_or_else(|| {
            Error::not_found(format!("no graph is shared as {public_graph:?}"))
                .with_field("public_graph")
        })?;
        self.insert_repository(organisation_id, name, &graph.graph_id)
    }

    fn insert_repository(
        &self,
        organisation_id: &str,
        name: &str,
        graph_id: &str,
    ) -> Result<Repository, Error> {
        require_id("graph_id", graph_id, prefix::GRAPH)?;
        let repository = Repository {
            id: ids::mint(prefix::REPOSITORY),
            tenant_id: organisation_id.to_owned(),
            graph_id: graph_id.to_owned(),
            name: name.to_owned(),
            policy_revision: 1,
            created_at: now(),
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO repositories (id, tenant_id, graph_id, name, policy_revision, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![repository.id, repository.tenant_id, repository.graph_id, repository.name, repository.policy_revision as i64, repository.created_at],
            )
            .map_err(|e| unique_or(e, format!("a repository named {name:?} exists in this organisation already")))?;
            Ok(repository.clone())
        })
    }

    pub fn repository(&self, id: &str) -> Result<Option<Repository>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, tenant_id, graph_id, name, policy_revision, created_at FROM repositories WHERE id = ?1 AND deleted_at IS NULL",
                params![id],
                repository_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn repository_by_name(
        &self,
        organisation_id: &str,
        name: &str,
    ) -> Result<Option<Repository>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, tenant_id, graph_id, name, policy_revision, created_at FROM repositories WHERE tenant_id = ?1 AND name = ?2 AND deleted_at IS NULL",
                params![organisation_id, name],
                repository_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn require_repository(&self, id: &str) -> Result<Repository, Error> {
        require_id("repository_id", id, prefix::REPOSITORY)?;
        self.repository(id)?.ok_or_else(|| {
            Error::not_found(format!("no repository entry {id}")).with_field("repository_id")
        })
    }

    pub fn list_repositories(&self, organisation_id: &str) -> Result<Vec<Repository>, Error> {
        self.require_organisation(organisation_id)?;
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT id, tenant_id, graph_id, name, policy_revision, created_at FROM repositories WHERE tenant_id = ?1 AND deleted_at IS NULL ORDER BY name")
                .map_err(storage)?;
            let rows = statement.query_map(params![organisation_id], repository_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    /// Soft-deletes the entry and revokes its grants: the next Authorize fails.
    pub fn delete_repository(&self, id: &str) -> Result<Repository, Error> {
        let repository = self.require_repository(id)?;
        self.with(|c| {
            let at = now();
            c.execute(
                "UPDATE repositories SET deleted_at = ?2, policy_revision = policy_revision + 1 WHERE id = ?1",
                params![id, at],
            )
            .map_err(storage)?;
            c.execute(
                "UPDATE grants SET revoked_at = ?2 WHERE repository_id = ?1 AND revoked_at IS NULL",
                params![id, at],
            )
            .map_err(storage)?;
            Ok(())
        })?;
        Ok(repository)
    }

    // ---- grants ---------------------------------------------------------------------

    pub fn create_grant(
        &self,
        repository_id: &str,
        grantee: &Grantee,
        scopes: &[Scope],
    ) -> Result<Grant, Error> {
        let repository = self.require_repository(repository_id)?;
        let organisation_of_grantee = match grantee {
            Grantee::Subject(id) => self.require_subject(id)?.organisation_id,
            Grantee::Team(id) => self.require_team(id)?.organisation_id,
        };
        if organisation_of_grantee != repository.tenant_id {
            return Err(Error::invalid_argument(
                "grantee",
                "grants may only name subjects or teams of the repository's own organisation",
            ));
        }
        if scopes.is_empty() {
            return Err(Error::invalid_argument(
                "scopes",
                "a grant needs at least one scope",
            ));
        }
        let mut scopes = scopes.to_vec();
        scopes.sort();
        scopes.dedup();
        let grant = Grant {
            id: ids::mint(prefix::GRANT),
            repository_id: repository_id.to_owned(),
            grantee: grantee.clone(),
            scopes,
            created_at: now(),
            revoked_at: None,
        };
        let (subject_id, team_id) = match grantee {
            Grantee::Subject(id) => (Some(id.as_str()), None),
            Grantee::Team(id) => (None, Some(id.as_str())),
        };
        self.with(|c| {
            c.execute(
                "INSERT INTO grants (id, repository_id, subject_id, team_id, scopes, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![grant.id, grant.repository_id, subject_id, team_id, scopes_to_text(&grant.scopes), grant.created_at],
            )
            .map_err(storage)?;
            c.execute(
                "UPDATE repositories SET policy_revision = policy_revision + 1 WHERE id = ?1",
                params![repository_id],
            )
            .map_err(storage)?;
            Ok(grant.clone())
        })
    }

    pub fn grant(&self, id: &str) -> Result<Option<Grant>, Error> {
        self.with(|c| {
            c.query_row(
                "SELECT id, repository_id, subject_id, team_id, scopes, created_at, revoked_at FROM grants WHERE id = ?1",
                params![id],
                grant_row,
            )
            .optional()
            .map_err(storage)
        })
    }

    pub fn list_grants(&self, repository_id: &str) -> Result<Vec<Grant>, Error> {
        self.require_repository(repository_id)?;
        self.with(|c| {
            let mut statement = c
                .prepare("SELECT id, repository_id, subject_id, team_id, scopes, created_at, revoked_at FROM grants WHERE repository_id = ?1 ORDER BY created_at, id")
                .map_err(storage)?;
            let rows = statement.query_map(params![repository_id], grant_row).map_err(storage)?;
            rows.collect::<Result<_, _>>().map_err(storage)
        })
    }

    /// Revokes a grant and bumps the repository's policy revision.
    pub fn revoke_grant(&self, id: &str) -> Result<Grant, Error> {
        require_id("grant_id", id, prefix::GRANT)?;
        let grant = self
            .grant(id)?
            .ok_or_else(|| Error::not_found(format!("no grant {id}")).with_field("grant_id"))?;
        self.with(|c| {
            let changed = c
                .execute(
                    "UPDATE grants SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                    params![id, now()],
                )
                .map_err(storage)?;
            if changed > 0 {
                c.execute(
                    "UPDATE repositories SET policy_revision = policy_revision + 1 WHERE id = ?1",
                    params![grant.repository_id],
                )
                .map_err(storage)?;
            }
            Ok(())
        })?;
        self.grant(id)?
            .ok_or_else(|| Error::internal("grant vanished while revoking"))
    }

    /// Every live repository entry the subject holds a live grant for (directly or through
    /// a team), within the subject's own organisation, with the union of granted scopes.
    /// An entry counts only while its graph is registered to the entry's organisation or
    /// shared publicly: a row that names any other graph authorizes nothing.
    pub fn accessible_repositories(&self, subject: &Subject) -> Result<Vec<Access>, Error> {
        self.with(|c| {
            let mut statement = c
                .prepare(
                    "SELECT r.id, r.tenant_id, r.graph_id, r.name, r.policy_revision, r.created_at, g.scopes
                     FROM grants g JOIN repositories r ON r.id = g.repository_id
                     JOIN graphs gr ON gr.graph_id = r.graph_id
                          AND (gr.owner_id = r.tenant_id OR gr.public_name IS NOT NULL)
                     WHERE g.revoked_at IS NULL AND r.deleted_at IS NULL AND r.tenant_id = ?2
                       AND (g.subject_id = ?1
                            OR g.team_id IN (SELECT team_id FROM team_members WHERE subject_id = ?1))
                     ORDER BY r.name, r.id",
                )
                .map_err(storage)?;
            let rows = statement
                .query_map(params![subject.id, subject.organisation_id], |r| {
                    Ok((repository_row(r)?, r.get::<_, String>(6)?))
                })
                .map_err(storage)?;
            let mut access: Vec<Access> = Vec::new();
            for row in rows {
                let (repository, scopes) = row.map_err(storage)?;
                let scopes = scopes_from_text(&scopes);
                match access.last_mut() {
                    Some(last) if last.repository.id == repository.id => {
                        last.scopes.extend(scopes);
                        last.scopes.sort();
                        last.scopes.dedup();
                    }
                    _ => access.push(Access { repository, scopes }),
                }
            }
            Ok(access)
        })
    }
}

fn unique_or(error: rusqlite::Error, message: String) -> Error {
    match &error {
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Error::new(codectx_errors::ErrorKind::AlreadyExists, message)
        }
        _ => storage(error),
    }
}

fn subject_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Subject> {
    Ok(Subject {
        id: r.get(0)?,
        organisation_id: r.get(1)?,
        name: r.get(2)?,
        role: Role::from_i64(r.get(3)?),
        created_at: r.get(4)?,
    })
}

fn api_key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKey> {
    Ok(ApiKey {
        id: r.get(0)?,
        subject_id: r.get(1)?,
        name: r.get(2)?,
        prefix: r.get(3)?,
        created_at: r.get(4)?,
        revoked_at: r.get(5)?,
    })
}

fn repository_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Repository> {
    Ok(Repository {
        id: r.get(0)?,
        tenant_id: r.get(1)?,
        graph_id: r.get(2)?,
        name: r.get(3)?,
        policy_revision: r.get::<_, i64>(4)? as u64,
        created_at: r.get(5)?,
    })
}

fn graph_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Graph> {
    Ok(Graph {
        graph_id: r.get(0)?,
        owner_id: r.get(1)?,
        name: r.get(2)?,
        public_name: r.get(3)?,
        indexed_at: r.get(4)?,
        index: GraphIndex {
            commit: r.get(5)?,
            policy_fingerprint: r.get(6)?,
        },
    })
}

fn grant_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Grant> {
    let subject: Option<String> = r.get(2)?;
    let team: Option<String> = r.get(3)?;
    let grantee = match (subject, team) {
        (Some(subject), _) => Grantee::Subject(subject),
        (None, Some(team)) => Grantee::Team(team),
        (None, None) => Grantee::Subject(String::new()),
    };
    Ok(Grant {
        id: r.get(0)?,
        repository_id: r.get(1)?,
        grantee,
        scopes: scopes_from_text(&r.get::<_, String>(4)?),
        created_at: r.get(5)?,
        revoked_at: r.get(6)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner's entry for `name`, as an indexing run leaves it.
    fn indexed(store: &Store, organisation_id: &str, name: &str) -> Repository {
        store
            .register_indexed_graph(organisation_id, name, &GraphIndex::default())
            .unwrap()
            .1
    }

    #[test]
    fn a_version_2_store_gains_what_index_runs_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.db");
        {
            let store = Store::open(&path).unwrap();
            let org = store.create_organisation("acme").unwrap();
            indexed(&store, &org.id, "api");
            // Back to version 2: no index columns.
            store
                .with(|c| {
                    c.execute_batch(
                        "ALTER TABLE graphs DROP COLUMN commit_sha;
                         ALTER TABLE graphs DROP COLUMN policy_fingerprint;
                         UPDATE meta SET value = '2' WHERE key = 'schema_version';",
                    )
                    .map_err(storage)
                })
                .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let org = store.organisation_by_name("acme").unwrap().unwrap();
        let graph_id = ids::graph_for(&org.id, "api");
        assert_eq!(
            store.graph(&graph_id).unwrap().unwrap().index,
            GraphIndex::default()
        );
        let index = GraphIndex {
            commit: "0123abcd".into(),
            policy_fingerprint: "ffee".into(),
        };
        store
            .register_indexed_graph(&org.id, "api", &index)
            .unwrap();
        assert_eq!(store.graph(&graph_id).unwrap().unwrap().index, index);
        let bad = GraphIndex {
            commit: "x' OR 1=1".into(),
            ..GraphIndex::default()
        };
        let error = store
            .register_indexed_graph(&org.id, "api", &bad)
            .unwrap_err();
        assert_eq!(error.field(), "commit");
    }

    #[test]
    fn every_write_that_decides_access_bumps_the_access_revision_and_reads_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.db");
        let store = Store::open(&path).unwrap();
        let mut last = store.access_revision().unwrap();
        let mut bumped = |store: &Store, what: &str| {
            let now = store.access_revision().unwrap();
            assert!(now > last, "{what}: revision {now} after {last}");
            last = now;
        };
        let org = store.create_organisation("acme").unwrap();
        bumped(&store, "organisation");
        let alice = store
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        bumped(&store, "subject");
        let (key, secret) = store.create_api_key(&alice.id, "laptop").unwrap();
        bumped(&store, "api key");
        let repository = indexed(&store, &org.id, "acme/api");
        bumped(&store, "indexed graph and entry");
        let grant = store
            .create_grant(
                &repository.id,
                &Grantee::Subject(alice.id.clone()),
                &[Scope::ReadCode],
            )
            .unwrap();
        bumped(&store, "grant");
        let team = store.create_team(&org.id, "platform").unwrap();
        bumped(&store, "team");
        store.set_team_member(&team.id, &alice.id, true).unwrap();
        bumped(&store, "membership");
        store
            .link_identity(&alice.id, "https://issuer", "alice@acme")
            .unwrap();
        bumped(&store, "identity");
        // Reads leave it.
        let before = store.access_revision().unwrap();
        assert!(store.authenticate_api_key(&secret).unwrap().is_some());
        store.accessible_repositories(&alice).unwrap();
        store.list_grants(&repository.id).unwrap();
        assert_eq!(store.access_revision().unwrap(), before);
        store.revoke_grant(&grant.id).unwrap();
        bumped(&store, "grant revoked");
        store.revoke_api_key(&key.id).unwrap();
        bumped(&store, "key revoked");
        store.delete_repository(&repository.id).unwrap();
        bumped(&store, "entry deleted");
        // A reopened store keeps counting from where it was.
        let reopened_at = store.access_revision().unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.access_revision().unwrap(), reopened_at);
    }

    /// A key's subject, remembered at a revision, is read again when another process
    /// writes the file: a revocation answers None on the next call, and a change to the
    /// subject's row (any write, even one no API makes yet) is seen.
    #[test]
    fn a_remembered_key_sees_every_write_of_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.db");
        let serving = Store::open(&path).unwrap();
        let org = serving.create_organisation("acme").unwrap();
        let alice = serving
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        let (key, secret) = serving.create_api_key(&alice.id, "laptop").unwrap();
        let (_, second) = serving.create_api_key(&alice.id, "ci").unwrap();
        let (at, subject) = serving.authenticate_api_key_now(&secret).unwrap();
        assert_eq!(subject.as_ref().map(|s| s.role), Some(Role::Member));
        assert_eq!(
            serving.authenticate_api_key_now(&secret).unwrap(),
            (at, subject)
        );

        let admin = Store::open(&path).unwrap();
        Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE subjects SET role = 2 WHERE id = ?1",
                params![alice.id],
            )
            .unwrap();
        let (now, subject) = serving.authenticate_api_key_now(&secret).unwrap();
        assert!(now > at);
        assert_eq!(subject.map(|s| s.role), Some(Role::OrgAdmin));

        admin.revoke_api_key(&key.id).unwrap();
        assert_eq!(serving.authenticate_api_key_now(&secret).unwrap().1, None);
        assert!(
            serving
                .authenticate_api_key_now(&second)
                .unwrap()
                .1
                .is_some()
        );
        for bad in ["", &"x".repeat(513), "cxk_unknown"] {
            let (revision, subject) = serving.authenticate_api_key_now(bad).unwrap();
            assert_eq!(subject, None);
            assert_eq!(revision, serving.access_revision().unwrap());
        }
    }

    #[test]
    fn team_grants_reach_members_and_bump_revisions() {
        let store = Store::open_in_memory().unwrap();
        let org = store.create_organisation("acme").unwrap();
        let alice = store
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        let team = store.create_team(&org.id, "platform").unwrap();
        let repository = indexed(&store, &org.id, "acme/api");
        store
            .create_grant(
                &repository.id,
                &Grantee::Team(team.id.clone()),
                &[Scope::ReadCode],
            )
            .unwrap();
        assert!(store.accessible_repositories(&alice).unwrap().is_empty());

        let before = store
            .require_repository(&repository.id)
            .unwrap()
            .policy_revision;
        store.set_team_member(&team.id, &alice.id, true).unwrap();
        let access = store.accessible_repositories(&alice).unwrap();
        assert_eq!(access.len(), 1);
        assert_eq!(access[0].scopes, vec![Scope::ReadCode]);
        let after = access[0].repository.policy_revision;
        assert!(after > before, "membership changes bump the revision");

        store.set_team_member(&team.id, &alice.id, false).unwrap();
        assert!(store.accessible_repositories(&alice).unwrap().is_empty());
    }

    #[test]
    fn scopes_union_across_grants() {
        let store = Store::open_in_memory().unwrap();
        let org = store.create_organisation("acme").unwrap();
        let alice = store
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        let team = store.create_team(&org.id, "t").unwrap();
        store.set_team_member(&team.id, &alice.id, true).unwrap();
        let repository = indexed(&store, &org.id, "r");
        store
            .create_grant(&repository.id, &Grantee::Team(team.id), &[Scope::ReadCode])
            .unwrap();
        store
            .create_grant(
                &repository.id,
                &Grantee::Subject(alice.id.clone()),
                &[Scope::ReadMemory],
            )
            .unwrap();
        let access = store.accessible_repositories(&alice).unwrap();
        assert_eq!(access.len(), 1);
        assert_eq!(access[0].scopes, vec![Scope::ReadCode, Scope::ReadMemory]);
    }

    #[test]
    fn deleting_a_repository_revokes_access_and_frees_the_name() {
        let store = Store::open_in_memory().unwrap();
        let org = store.create_organisation("acme").unwrap();
        let alice = store
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        let repository = indexed(&store, &org.id, "r");
        store
            .create_grant(
                &repository.id,
                &Grantee::Subject(alice.id.clone()),
                &[Scope::ReadCode],
            )
            .unwrap();
        store.delete_repository(&repository.id).unwrap();
        assert!(store.accessible_repositories(&alice).unwrap().is_empty());
        // The name is free again: a re-index registers the graph and makes a new entry.
        let again = indexed(&store, &org.id, "r");
        assert_ne!(again.id, repository.id);
    }

    #[test]
    fn keys_are_stored_hashed_and_revocable() {
        let store = Store::open_in_memory().unwrap();
        let org = store.create_organisation("acme").unwrap();
        let alice = store
            .create_subject(&org.id, "alice", Role::Member)
            .unwrap();
        let (key, secret) = store.create_api_key(&alice.id, "laptop").unwrap();
        assert!(secret.starts_with(API_KEY_PREFIX));
        assert!(secret.len() > 40);
        let stored: String = store
            .with(|c| {
                c.query_row(
                    "SELECT secret_hash FROM api_keys WHERE id = ?1",
                    params![key.id],
                    |r| r.get(0),
                )
                .map_err(storage)
            })
            .unwrap();
        assert_ne!(stored, secret);
        assert_eq!(stored, hash_secret(&secret));
        assert_eq!(
            store.authenticate_api_key(&secret).unwrap().unwrap().id,
            alice.id
        );
        store.revoke_api_key(&key.id).unwrap();
        assert!(store.authenticate_api_key(&secret).unwrap().is_none());
        // A revoked secret cannot be imported again.
        assert!(store.import_api_key(&alice.id, "again", &secret).is_err());
    }

    #[test]
    fn duplicate_names_are_already_exists() {
        let store = Store::open_in_memory().unwrap();
        store.create_organisation("acme").unwrap();
        let error = store.create_organisation("acme").unwrap_err();
        assert_eq!(error.kind(), codectx_errors::ErrorKind::AlreadyExists);
    }

    #[test]
    fn ids_are_validated_before_lookup() {
        let store = Store::open_in_memory().unwrap();
        let error = store
            .create_subject("org_' OR 1=1 --", "x", Role::Member)
            .unwrap_err();
        assert_eq!(error.field(), "organisation_id");
        let error = store
            .create_repository("not-an-id", "r", "shared")
            .unwrap_err();
        assert_eq!(error.kind(), codectx_errors::ErrorKind::InvalidArgument);
    }

    #[test]
    fn an_entry_reads_only_its_own_organisations_graph_or_a_public_one() {
        let store = Store::open_in_memory().unwrap();
        let victim = store.create_organisation("victim").unwrap();
        let attacker = store.create_organisation("attacker").unwrap();
        let mallory = store
            .create_subject(&attacker.id, "mallory", Role::OrgAdmin)
            .unwrap();
        let private = indexed(&store, &victim.id, "payments");

        // No request can name the victim's graph: entries need a public name.
        let refused = store
            .create_repository(&attacker.id, "loot", "")
            .unwrap_err();
        assert_eq!(refused.field(), "public_graph");
        let refused = store
            .create_repository(&attacker.id, "loot", &private.graph_id)
            .unwrap_err();
        assert_eq!(refused.kind(), codectx_errors::ErrorKind::NotFound);

        // The attacker indexing the same key writes its own graph, never the victim's.
        let own = indexed(&store, &attacker.id, "payments");
        assert_ne!(own.graph_id, private.graph_id);

        // Even a row written straight into the store (a bug, an old schema) authorizes
        // nothing: the entry must read a graph its organisation owns or a public one.
        store
            .insert_repository(&attacker.id, "forged", &private.graph_id)
            .unwrap();
        let forged = store
            .repository_by_name(&attacker.id, "forged")
            .unwrap()
            .unwrap();
        store
            .create_grant(
                &forged.id,
                &Grantee::Subject(mallory.id.clone()),
                &Scope::ALL,
            )
            .unwrap();
        store
            .create_grant(&own.id, &Grantee::Subject(mallory.id.clone()), &Scope::ALL)
            .unwrap();
        let names: Vec<String> = store
            .accessible_repositories(&mallory)
            .unwrap()
            .into_iter()
            .map(|a| a.repository.name)
            .collect();
        assert_eq!(names, vec!["payments".to_owned()]);

        // A platform admin shares the victim's graph: now any organisation may add it.
        let shared = store.share_graph(&private.id, "payments-public").unwrap();
        assert_eq!(shared.public_name.as_deref(), Some("payments-public"));
        let entry = store
            .create_repository(&attacker.id, "upstream", "payments-public")
            .unwrap();
        assert_eq!(entry.graph_id, private.graph_id);
        // Only an owner's indexed graph can be shared, and a public name is taken once.
        assert!(store.share_graph(&entry.id, "again").is_err());
        let other = indexed(&store, &attacker.id, "web");
        let taken = store.share_graph(&other.id, "payments-public").unwrap_err();
        assert_eq!(taken.kind(), codectx_errors::ErrorKind::AlreadyExists);
    }

    #[test]
    fn version_one_stores_open_and_their_unproven_entries_authorize_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.db");
        let (alice, graph) = {
            let store = Store::open(&path).unwrap();
            let org = store.create_organisation("acme").unwrap();
            let alice = store
                .create_subject(&org.id, "alice", Role::Member)
                .unwrap();
            let graph = ids::derive(prefix::GRAPH, "acme/api");
            let entry = store
                .insert_repository(&org.id, "acme/api", &graph)
                .unwrap();
            store
                .create_grant(&entry.id, &Grantee::Subject(alice.id.clone()), &Scope::ALL)
                .unwrap();
            store
                .with(|c| {
                    c.execute_batch("DROP TABLE graphs; UPDATE meta SET value = '1' WHERE key = 'schema_version';")
                        .map_err(storage)
                })
                .unwrap();
            (alice, graph)
        };
        let store = Store::open(&path).unwrap();
        assert!(store.accessible_repositories(&alice).unwrap().is_empty());
        assert!(store.graph(&graph).unwrap().is_none());
    }
}
