//! Helpers for the end-to-end tests: a running stack (the same [`codectx::stack`] that
//! `codectx up` starts), access set-up through authz's admin RPCs, and raw requests for
//! the cases the typed clients refuse to build (no context, tampered context).

use codectx::stack::{Stack, StackOptions};
use codectx_clients::{AuthzClient, PeerConfig, api_key_credential};
use codectx_core::ids;
use codectx_errors::Error;
use codectx_proto::authz::v1 as pb;
use codectx_tenant::{METADATA_KEY, Scope};
use tonic::metadata::{BinaryMetadataValue, MetadataKey};
use tonic::transport::Channel;

/// A stack on free loopback ports over a temporary data directory.
pub struct TestStack {
    pub stack: Stack,
    pub data: tempfile::TempDir,
}

impl TestStack {
    pub async fn start() -> anyhow::Result<TestStack> {
        let data = tempfile::tempdir()?;
        let stack = Stack::start(StackOptions::ephemeral(data.path().to_path_buf())).await?;
        Ok(TestStack { stack, data })
    }

    pub fn authz(&self) -> AuthzClient {
        AuthzClient::connect(&PeerConfig::single(
            self.endpoint(codectx::stack::ServiceKind::Authz),
        ))
        .unwrap()
    }

    pub fn endpoint(&self, kind: codectx::stack::ServiceKind) -> String {
        self.stack
            .endpoint(kind)
            .expect("service started")
            .to_owned()
    }

    pub async fn channel(&self, kind: codectx::stack::ServiceKind) -> Channel {
        Channel::from_shared(self.endpoint(kind))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub fn admin_key(&self) -> &str {
        &self.stack.dev.api_key
    }
}

/// An organisation with a member subject, an API key and one repository granted to it.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub organisation: pb::Organisation,
    pub subject: pb::Subject,
    pub api_key: String,
    pub repository: pb::AccessRepository,
    pub grant: pb::Grant,
}

/// Creates a tenant through the admin RPCs, as an operator would.
pub async fn create_tenant(
    stack: &TestStack,
    organisation: &str,
    repository: &str,
) -> Result<Tenant, Error> {
    create_tenant_on_graph(stack, organisation, repository, repository).await
}

/// Like [`create_tenant`], with the repository entry pointing at the graph derived from
/// `graph_name` (two organisations can name repositories alike yet hold different graphs).
pub async fn create_tenant_on_graph(
    stack: &TestStack,
    organisation: &str,
    repository: &str,
    graph_name: &str,
) -> Result<Tenant, Error> {
    let authz = stack.authz();
    let admin = stack.admin_key();
    let organisation = authz
        .create_organisation(
            admin,
            pb::CreateOrganisationRequest {
                name: organisation.into(),
            },
        )
        .await?;
    let subject = authz
        .create_subject(
            admin,
            pb::CreateSubjectRequest {
                organisation_id: organisation.id.clone(),
                name: "agent".into(),
                role: pb::Role::Member as i32,
            },
        )
        .await?;
    let key = authz
        .create_api_key(
            admin,
            pb::CreateApiKeyRequest {
                subject_id: subject.id.clone(),
                name: "test".into(),
            },
        )
        .await?;
    let (repository, grant) =
        add_repository_on_graph(stack, &organisation.id, &subject.id, repository, graph_name)
            .await?;
    Ok(Tenant {
        organisation,
        subject,
        api_key: key.secret,
        repository,
        grant,
    })
}

/// Adds a repository entry to an organisation and grants it to a subject.
pub async fn add_repository(
    stack: &TestStack,
    organisation_id: &str,
    subject_id: &str,
    name: &str,
) -> Result<(pb::AccessRepository, pb::Grant), Error> {
    add_repository_on_graph(stack, organisation_id, subject_id, name, name).await
}

/// Like [`add_repository`], on the graph derived from `graph_name`.
pub async fn add_repository_on_graph(
    stack: &TestStack,
    organisation_id: &str,
    subject_id: &str,
    name: &str,
    graph_name: &str,
) -> Result<(pb::AccessRepository, pb::Grant), Error> {
    let authz = stack.authz();
    let admin = stack.admin_key();
    let repository = authz
        .create_repository(
            admin,
            pb::CreateRepositoryRequest {
                organisation_id: organisation_id.into(),
                name: name.into(),
                graph_id: ids::derive(ids::prefix::GRAPH, graph_name),
            },
        )
        .await?;
    let grant = authz
        .create_grant(
            admin,
            pb::CreateGrantRequest {
                repository_id: repository.id.clone(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    subject_id.into(),
                )),
                scopes: Scope::ALL.iter().map(|s| s.to_proto() as i32).collect(),
            },
        )
        .await?;
    Ok((repository, grant))
}

/// Authorizes `api_key` for `repository` and returns the signed context bytes.
pub async fn authorize(
    stack: &TestStack,
    api_key: &str,
    repository: &str,
) -> Result<pb::AuthorizeResponse, Error> {
    stack
        .authz()
        .authorize(pb::AuthorizeRequest {
            credential: Some(api_key_credential(api_key)),
            repository: repository.into(),
            scopes: vec![],
        })
        .await
}

/// A request carrying exactly these context bytes (which may be tampered with).
pub fn with_context_bytes<T>(bytes: &[u8], message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert_bin(
        MetadataKey::from_static(METADATA_KEY),
        BinaryMetadataValue::from_bytes(bytes),
    );
    request
}

/// A stack whose data directory holds one indexed fixture repository (a copy, so tests
/// may edit it), and a context for the development subject on it.
pub struct IndexedStack {
    pub stack: TestStack,
    pub checkout: tempfile::TempDir,
    pub context: codectx_tenant::TenantContext,
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Indexes `tests/fixtures/<fixture>` as repository `name` and starts every service.
pub async fn start_indexed(fixture: &str, name: &str) -> IndexedStack {
    use codectx::indexing::{self, IndexArgs};
    let checkout = tempfile::tempdir().unwrap();
    copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(fixture),
        checkout.path(),
    );
    let data = tempfile::tempdir().unwrap();
    let args = IndexArgs {
        threads: 2,
        quiet: true,
        ..IndexArgs::embedded(
            checkout.path().to_path_buf(),
            name.into(),
            data.path().to_path_buf(),
        )
    };
    let store = indexing::open_store(&args).await.unwrap();
    indexing::run(&args, &*store).await.unwrap();
    drop(store);
    let stack = Stack::start(StackOptions::ephemeral(data.path().to_path_buf()))
        .await
        .unwrap();
    let stack = TestStack { stack, data };
    let authorized = authorize(&stack, stack.admin_key(), name).await.unwrap();
    let context = stack
        .stack
        .verifier
        .verify(&authorized.signed_context)
        .unwrap();
    IndexedStack {
        stack,
        checkout,
        context,
    }
}

/// The `codectx` binary cargo built next to the running test (`make test` builds it).
pub fn codectx_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().unwrap().parent().unwrap().join("codectx");
    assert!(
        binary.exists(),
        "{} is missing: build the workspace (`make test` does)",
        binary.display()
    );
    binary
}
