//! Tenant isolation of shared code graphs, end to end through authz's admin RPCs, the
//! indexing run and the context-assembler (docs/security.md, "How an entry proves access").
//!
//! The attack these tests replay: an organisation admin computes another tenant's graph id
//! (a hash of a repository key) and creates an entry for it in its own organisation, or
//! indexes the same repository key so the shared graph changes under the victim.

use codectx::stack::ServiceKind;
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_errors::ErrorKind;
use codectx_proto::assembler::v1 as assembler_pb;
use codectx_proto::authz::v1 as pb;
use codectx_proto::common::v1::AnswerStatus;
use codectx_tenant::TenantContext;
use codectx_tests::{IndexedStack, authorize, create_tenant, start_indexed};

/// An organisation with an org-admin subject and its API key.
async fn hostile_admin(f: &IndexedStack, name: &str) -> (pb::Organisation, pb::Subject, String) {
    let authz = f.stack.authz();
    let admin = f.stack.admin_key();
    let organisation = authz
        .create_organisation(admin, pb::CreateOrganisationRequest { name: name.into() })
        .await
        .unwrap();
    let subject = authz
        .create_subject(
            admin,
            pb::CreateSubjectRequest {
                organisation_id: organisation.id.clone(),
                name: "mallory".into(),
                role: pb::Role::OrgAdmin as i32,
            },
        )
        .await
        .unwrap();
    let key = authz
        .create_api_key(
            admin,
            pb::CreateApiKeyRequest {
                subject_id: subject.id.clone(),
                name: "mallory".into(),
            },
        )
        .await
        .unwrap();
    (organisation, subject, key.secret)
}

async fn context_of(f: &IndexedStack, api_key: &str, repository: &str) -> TenantContext {
    let authorized = authorize(&f.stack, api_key, repository).await.unwrap();
    f.stack
        .stack
        .verifier
        .verify(&authorized.signed_context)
        .unwrap()
}

fn snippet(symbol: &str) -> assembler_pb::CodeSnippetRequest {
    assembler_pb::CodeSnippetRequest {
        target: Some(assembler_pb::code_snippet_request::Target::Symbol(
            symbol.into(),
        )),
        fingerprint: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_entry_can_name_another_organisations_graph() {
    let f = start_indexed("go", "shop").await;
    let victim_graph = f.context.graph_id().to_owned();
    let (organisation, mallory, mallory_key) = hostile_admin(&f, "hostile").await;
    let authz = f.stack.authz();

    // The graph id is no longer a request field; passing it where a public name goes
    // finds nothing, and an empty source is refused with the field to change.
    let error = authz
        .create_repository(
            &mallory_key,
            pb::CreateRepositoryRequest {
                organisation_id: organisation.id.clone(),
                name: "loot".into(),
                public_graph: victim_graph.clone(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    let error = authz
        .create_repository(
            &mallory_key,
            pb::CreateRepositoryRequest {
                organisation_id: organisation.id.clone(),
                name: "loot".into(),
                public_graph: String::new(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.field(), "public_graph");

    // Only the platform's indexer may say an indexing run happened.
    let error = authz
        .register_indexed_graph(
            &mallory_key,
            pb::RegisterIndexedGraphRequest {
                organisation_id: organisation.id.clone(),
                name: "shop".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    // Nor may an org admin share a graph, even its own.
    let error = authz
        .share_graph(
            &mallory_key,
            pb::ShareGraphRequest {
                repository_id: f.context.repository_id().into(),
                public_name: "free-shop".into(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");

    // Whatever entries the hostile organisation holds, none reads the victim's graph.
    let entries = authz
        .list_repositories(
            &mallory_key,
            pb::ListRepositoriesRequest {
                organisation_id: organisation.id.clone(),
            },
        )
        .await
        .unwrap()
        .repositories;
    assert!(entries.iter().all(|e| e.graph_id != victim_graph));
    let _ = mallory;
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexing_the_same_key_never_changes_what_another_organisation_reads() {
    let f = start_indexed("go", "shop").await;
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let before = assembler
        .code_snippet(&f.context, snippet("NewServer"))
        .await
        .unwrap();
    assert_eq!(before.status(), AnswerStatus::Ok);

    // Another organisation indexes its own source under the same key, into the same
    // store, as `codectx index --org hostile --name shop` does.
    let hostile = create_tenant(&f.stack, "hostile", "unrelated")
        .await
        .unwrap();
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("go.mod"), "module example.com/shop\n").unwrap();
    std::fs::create_dir_all(source.path().join("server")).unwrap();
    std::fs::write(
        source.path().join("server/server.go"),
        "package server\n\n// NewServer is the hostile copy.\nfunc NewServer() string {\n\treturn \"stolen\"\n}\n",
    )
    .unwrap();
    let args = codectx::indexing::IndexArgs {
        threads: 2,
        quiet: true,
        org: Some("hostile".into()),
        ..codectx::indexing::IndexArgs::embedded(
            source.path().to_path_buf(),
            "shop".into(),
            f.stack.data.path().to_path_buf(),
        )
    };
    let report = codectx::indexing::run(&args, &*f.stack.stack.graph_store)
        .await
        .unwrap();
    assert_ne!(report.graph_id, f.context.graph_id());

    // The victim reads exactly what it read before.
    let after = assembler
        .code_snippet(&f.context, snippet("NewServer"))
        .await
        .unwrap();
    assert_eq!(after.json, before.json);

    // The hostile organisation's `shop` entry reads its own graph, and only after a grant.
    let authz = f.stack.authz();
    let entries = authz
        .list_repositories(
            f.stack.admin_key(),
            pb::ListRepositoriesRequest {
                organisation_id: hostile.organisation.id.clone(),
            },
        )
        .await
        .unwrap()
        .repositories;
    let shop = entries.iter().find(|e| e.name == "shop").unwrap();
    assert_eq!(shop.graph_id, report.graph_id);
    authz
        .create_grant(
            f.stack.admin_key(),
            pb::CreateGrantRequest {
                repository_id: shop.id.clone(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    hostile.subject.id.clone(),
                )),
                scopes: vec![codectx_tenant::Scope::ReadCode.to_proto() as i32],
            },
        )
        .await
        .unwrap();
    let hostile_context = context_of(&f, &hostile.api_key, "shop").await;
    assert_eq!(hostile_context.graph_id(), report.graph_id);
    let theirs = assembler
        .code_snippet(&hostile_context, snippet("NewServer"))
        .await
        .unwrap();
    assert!(theirs.json.contains("stolen"), "{}", theirs.json);
    assert!(!theirs.json.contains("db *store.DB"), "{}", theirs.json);
    // The victim's symbols are not in the hostile graph at all.
    let missing = assembler
        .code_snippet(&hostile_context, snippet("Server.Serve"))
        .await
        .unwrap();
    assert_eq!(missing.status(), AnswerStatus::NotFound);
    f.stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_graph_is_the_only_shared_one() {
    let f = start_indexed("go", "shop").await;
    let (organisation, mallory, mallory_key) = hostile_admin(&f, "reader").await;
    let authz = f.stack.authz();
    // The platform admin shares the graph; the other organisation's admin adds it by its
    // public name and grants it to its own subject.
    let shared = authz
        .share_graph(
            f.stack.admin_key(),
            pb::ShareGraphRequest {
                repository_id: f.context.repository_id().into(),
                public_name: "shop-public".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(shared.graph_id, f.context.graph_id());
    let listed = authz
        .list_public_graphs(&mallory_key, pb::ListPublicGraphsRequest {})
        .await
        .unwrap()
        .graphs;
    assert_eq!(listed.len(), 1);
    let entry = authz
        .create_repository(
            &mallory_key,
            pb::CreateRepositoryRequest {
                organisation_id: organisation.id.clone(),
                name: "upstream-shop".into(),
                public_graph: "shop-public".into(),
            },
        )
        .await
        .unwrap();
    authz
        .create_grant(
            &mallory_key,
            pb::CreateGrantRequest {
                repository_id: entry.id.clone(),
                grantee: Some(pb::create_grant_request::Grantee::SubjectId(
                    mallory.id.clone(),
                )),
                scopes: vec![codectx_tenant::Scope::ReadCode.to_proto() as i32],
            },
        )
        .await
        .unwrap();
    let context = context_of(&f, &mallory_key, "upstream-shop").await;
    assert_eq!(context.graph_id(), f.context.graph_id());
    // The shared graph is read-only code; memory stays per tenant (its own namespace).
    assert_ne!(context.namespace(), f.context.namespace());
    f.stack.stack.stop().await.unwrap();
}
