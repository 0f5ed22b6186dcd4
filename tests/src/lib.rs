//! Helpers for the end-to-end tests: a running stack (the same [`codectx::stack`] that
//! `codectx up` starts), access set-up through authz's admin RPCs, and raw requests for
//! the cases the typed clients refuse to build (no context, tampered context).

use codectx::stack::{Stack, StackOptions};
use codectx_clients::{AuthzClient, PeerConfig, api_key_credential};
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

/// Creates a tenant through the admin RPCs, as an operator would, with its own indexed
/// (empty) repository `repository`.
pub async fn create_tenant(
    stack: &TestStack,
    organisation: &str,
    repository: &str,
) -> Result<Tenant, Error> {
    create_tenant_with(stack, organisation, repository, None).await
}

/// A tenant whose entry `repository` reads the graph behind the owner's entry
/// `owner_entry_id`, shared by a platform admin under a public name first: the only way
/// two organisations read one graph.
pub async fn create_tenant_on_public(
    stack: &TestStack,
    organisation: &str,
    repository: &str,
    owner_entry_id: &str,
) -> Result<Tenant, Error> {
    let public_name = format!("public/{owner_entry_id}");
    if let Err(e) = share(stack, owner_entry_id, &public_name).await
        && e.kind() != codectx_errors::ErrorKind::AlreadyExists
    {
        return Err(e);
    }
    create_tenant_with(stack, organisation, repository, Some(&public_name)).await
}

/// Shares the graph behind an owner's entry under `public_name` (platform admin).
pub async fn share(
    stack: &TestStack,
    repository_id: &str,
    public_name: &str,
) -> Result<pb::PublicGraph, Error> {
    stack
        .authz()
        .share_graph(
            stack.admin_key(),
            pb::ShareGraphRequest {
                repository_id: repository_id.into(),
                public_name: public_name.into(),
            },
        )
        .await
}

async fn create_tenant_with(
    stack: &TestStack,
    organisation: &str,
    repository: &str,
    public_graph: Option<&str>,
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
    let entry = match public_graph {
        None => register_indexed(stack, &organisation.id, repository).await?,
        Some(public_graph) => {
            authz
                .create_repository(
                    admin,
                    pb::CreateRepositoryRequest {
                        organisation_id: organisation.id.clone(),
                        name: repository.into(),
                        public_graph: public_graph.into(),
                    },
                )
                .await?
        }
    };
    let grant = grant_all(stack, &entry.id, &subject.id).await?;
    Ok(Tenant {
        organisation,
        subject,
        api_key: key.secret,
        repository: entry,
        grant,
    })
}

/// Registers the organisation's graph for `name` as an indexing run does (here for a
/// repository with no files) and grants it to a subject.
pub async fn add_repository(
    stack: &TestStack,
    organisation_id: &str,
    subject_id: &str,
    name: &str,
) -> Result<(pb::AccessRepository, pb::Grant), Error> {
    let repository = register_indexed(stack, organisation_id, name).await?;
    let grant = grant_all(stack, &repository.id, subject_id).await?;
    Ok((repository, grant))
}

/// What `codectx index --org ... --authz ...` does after writing the graph.
pub async fn register_indexed(
    stack: &TestStack,
    organisation_id: &str,
    name: &str,
) -> Result<pb::AccessRepository, Error> {
    stack
        .authz()
        .register_indexed_graph(
            stack.admin_key(),
            pb::RegisterIndexedGraphRequest {
                organisation_id: organisation_id.into(),
                name: name.into(),
                ..Default::default()
            },
        )
        .await
}

async fn grant_all(
    stack: &TestStack,
    repository_id: &str,
    subject_id: &str,
) -> Result<pb::Grant, Error> {
    stack
        .authz()
        .create_grant(
            stack.admin_key(),
            pb::CreateGrantRequest {
                repository_id: repository_id.into(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    subject_id.into(),
                )),
                scopes: Scope::ALL.iter().map(|s| s.to_proto() as i32).collect(),
            },
        )
        .await
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
    start_indexed_with(fixture, name, |_| {}).await
}

/// [`start_indexed`], after `prepare` edits the copy (a policy file, extra files).
pub async fn start_indexed_with(
    fixture: &str,
    name: &str,
    prepare: impl FnOnce(&std::path::Path),
) -> IndexedStack {
    start_indexed_on(fixture, name, prepare, |options| options).await
}

/// [`start_indexed_with`] on a stack `configure` sets up (backends, retrieval legs).
pub async fn start_indexed_on(
    fixture: &str,
    name: &str,
    prepare: impl FnOnce(&std::path::Path),
    configure: impl FnOnce(StackOptions) -> StackOptions,
) -> IndexedStack {
    use codectx::indexing::{self, IndexArgs};
    let checkout = tempfile::tempdir().unwrap();
    copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(fixture),
        checkout.path(),
    );
    prepare(checkout.path());
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
    let stack = Stack::start(configure(StackOptions::ephemeral(
        data.path().to_path_buf(),
    )))
    .await
    .unwrap();
    let stack = TestStack { stack, data };
    let authorized = authorize(&stack, stack.admin_key(), name).await.unwrap();
    let context = stack
        .stack
        .verifier
        .verify(&authorized.signed_context)
        .unwrap();
    wait_for_code_vectors(&stack, &context).await;
    IndexedStack {
        stack,
        checkout,
        context,
    }
}

/// Waits until the graph's code vectors are complete (context-assembler builds them on
/// the back of requests: ADR 0010), so answers that rank free text are the same in
/// every run. Gives up after 60 s (a missing model says so in every answer instead).
pub async fn wait_for_code_vectors(stack: &TestStack, context: &codectx_tenant::TenantContext) {
    let assembler = codectx_clients::AssemblerClient::connect(&PeerConfig::single(
        stack.endpoint(codectx::stack::ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let began = std::time::Instant::now();
    while began.elapsed() < std::time::Duration::from_secs(60) {
        let answer = assembler
            .search(
                context,
                codectx_proto::assembler::v1::SearchRequest {
                    query: "code vectors".into(),
                    ..Default::default()
                },
            )
            .await;
        let building = answer.is_ok_and(|answer| answer.json.contains("code vectors"));
        if !building {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The `codectx` binary cargo built next to the running test (`make test` builds it).
pub fn codectx_binary() -> std::path::PathBuf {
    workspace_binary("codectx")
}

/// A binary of the workspace cargo built next to the running test.
pub fn workspace_binary(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(
        binary.exists(),
        "{} is missing: build the workspace (`make test` does)",
        binary.display()
    );
    binary
}

/// Runs Debian's `openssl` command line (the tests' independent signer and CA) in
/// `directory` and returns what it printed; fails the test with its error otherwise.
pub fn openssl(directory: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let output = std::process::Command::new("openssl")
        .args(args)
        .current_dir(directory)
        .output()
        .expect("openssl runs (Debian's openssl package; .ci/run installs it)");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
