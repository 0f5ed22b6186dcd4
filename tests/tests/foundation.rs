//! End-to-end tests of the foundation: every service runs in one process on its own port,
//! talking real gRPC; contexts are minted by authz and verified by each service.

use std::time::Duration;

use codectx::stack::ServiceKind;
use codectx_errors::Error;
use codectx_proto::authz::v1 as authz_pb;
use codectx_proto::common::v1::{DescribeRequest, DescribeResponse};
use codectx_proto::{assembler, authz, embedding, gateway, graph, lexical, vector};
use codectx_tenant::{Claims, Minter, Scope, SigningKey};
use codectx_tests::{TestStack, add_repository, authorize, create_tenant, with_context_bytes};
use prost::Message;
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Calls `Describe` on any service with exactly these context bytes (None: no context).
async fn describe(
    stack: &TestStack,
    kind: ServiceKind,
    context: Option<&[u8]>,
) -> Result<DescribeResponse, Status> {
    let channel = stack.channel(kind).await;
    let request = match context {
        Some(bytes) => with_context_bytes(bytes, DescribeRequest {}),
        None => tonic::Request::new(DescribeRequest {}),
    };
    let response = match kind {
        ServiceKind::Authz => {
            authz::v1::authz_service_client::AuthzServiceClient::new(channel)
                .describe(request)
                .await
        }
        ServiceKind::LexicalRanker => {
            lexical::v1::lexical_ranker_service_client::LexicalRankerServiceClient::new(channel)
                .describe(request)
                .await
        }
        ServiceKind::Embedding => {
            embedding::v1::embedding_service_client::EmbeddingServiceClient::new(channel)
                .describe(request)
                .await
        }
        ServiceKind::VectorGateway => {
            vector::v1::vector_gateway_service_client::VectorGatewayServiceClient::new(channel)
                .describe(request)
                .await
        }
        ServiceKind::GraphHydrator => {
            graph::v1::graph_hydrator_service_client::GraphHydratorServiceClient::new(channel)
                .describe(request)
                .await
        }
        ServiceKind::ContextAssembler => {
            assembler::v1::context_assembler_service_client::ContextAssemblerServiceClient::new(
                channel,
            )
            .describe(request)
            .await
        }
        ServiceKind::Gateway => {
            gateway::v1::gateway_service_client::GatewayServiceClient::new(channel)
                .describe(request)
                .await
        }
    };
    response.map(tonic::Response::into_inner)
}

fn reason(status: &Status) -> String {
    Error::from_status(status).reason().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_service_serves_health() {
    let stack = TestStack::start().await.unwrap();
    // Services report SERVING once ready; embedding loads its model first (and stays
    // NOT_SERVING without one: `make test` provides it).
    for kind in ServiceKind::ALL {
        let mut health = HealthClient::new(stack.channel(kind).await);
        let mut status = ServingStatus::Unknown;
        for _ in 0..100 {
            let response = health
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .unwrap_or_else(|e| panic!("{} health: {e}", kind.name()))
                .into_inner();
            status = response.status();
            if status == ServingStatus::Serving {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(status, ServingStatus::Serving, "{}", kind.name());
    }
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contexts_are_verified_by_every_service() {
    let stack = TestStack::start().await.unwrap();
    let tenant = create_tenant(&stack, "acme", "acme/api").await.unwrap();
    let authorized = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap();
    let signed = authorized.signed_context.clone();
    let minted = authorized.context.clone().unwrap();
    assert_eq!(minted.tenant_id, tenant.organisation.id);
    assert_eq!(minted.graph_id, tenant.repository.graph_id);
    assert_eq!(
        minted.namespace,
        format!("{}|{}", tenant.organisation.id, tenant.repository.graph_id)
    );

    // A context signed by authz's real key, minted an hour ago: expired.
    let ring = SigningKey::read_ring(&stack.data.path().join("authz/signing-keys")).unwrap();
    let minter = Minter::new(ring.into_iter().last().unwrap());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let expired = minter
        .mint_at(
            &Claims {
                tenant_id: minted.tenant_id.clone(),
                subject_id: minted.subject_id.clone(),
                repository_id: minted.repository_id.clone(),
                graph_id: minted.graph_id.clone(),
                scopes: vec![Scope::ReadCode],
                policy_revision: minted.policy_revision,
            },
            now - 3600,
        )
        .unwrap();

    // A valid context whose signature byte was flipped.
    let mut tampered = signed.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0x01;

    // A valid envelope whose tenant was rewritten.
    let mut envelope =
        codectx_proto::common::v1::SignedTenantContext::decode(signed.as_slice()).unwrap();
    let mut claims =
        codectx_proto::common::v1::TenantContext::decode(envelope.context.as_slice()).unwrap();
    claims.tenant_id = "org_00000000000000000000000000000000".into();
    claims.namespace = format!("{}|{}", claims.tenant_id, claims.graph_id);
    envelope.context = claims.encode_to_vec();
    let foreign = envelope.encode_to_vec();

    for kind in ServiceKind::ALL {
        let name = kind.name();
        let accepted = describe(&stack, kind, Some(&signed))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(accepted.service, name);
        let caller = accepted.caller.unwrap();
        assert_eq!(caller.tenant_id, tenant.organisation.id, "{name}");
        assert_eq!(caller.repository_id, tenant.repository.id, "{name}");
        assert_eq!(caller.subject_id, tenant.subject.id, "{name}");

        let missing = describe(&stack, kind, None).await.unwrap_err();
        assert_eq!(missing.code(), Code::Unauthenticated, "{name}");
        assert_eq!(reason(&missing), "context_missing", "{name}");

        let bad = describe(&stack, kind, Some(&tampered)).await.unwrap_err();
        assert_eq!(bad.code(), Code::Unauthenticated, "{name}");
        assert_eq!(reason(&bad), "context_bad_signature", "{name}");

        let rewritten = describe(&stack, kind, Some(&foreign)).await.unwrap_err();
        assert_eq!(rewritten.code(), Code::Unauthenticated, "{name}");

        let old = describe(&stack, kind, Some(expired.signed_bytes()))
            .await
            .unwrap_err();
        assert_eq!(old.code(), Code::Unauthenticated, "{name}");
        assert_eq!(reason(&old), "context_expired", "{name}");

        let garbage = describe(&stack, kind, Some(b"not a context"))
            .await
            .unwrap_err();
        assert_eq!(garbage.code(), Code::Unauthenticated, "{name}");
        assert_eq!(reason(&garbage), "context_malformed", "{name}");
    }
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compression_totals_answer_only_behind_verification_and_per_caller() {
    let stack = TestStack::start().await.unwrap();
    let tenant = create_tenant(&stack, "acme", "acme/api").await.unwrap();
    let signed = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap()
        .signed_context;
    let stats = |context: Option<Vec<u8>>| {
        let stack = &stack;
        async move {
            let mut client = gateway::v1::gateway_service_client::GatewayServiceClient::new(
                stack.channel(ServiceKind::Gateway).await,
            );
            let message = gateway::v1::GetCompressionStatsRequest {};
            let request = match &context {
                Some(bytes) => with_context_bytes(bytes, message),
                None => tonic::Request::new(message),
            };
            client
                .get_compression_stats(request)
                .await
                .map(tonic::Response::into_inner)
        }
    };
    let without = stats(None).await.unwrap_err();
    assert_eq!(without.code(), Code::Unauthenticated);
    // A subject that made no tool call has nothing counted (totals are per tenant and
    // subject: docs/compression.md).
    let totals = stats(Some(signed)).await.unwrap();
    assert_eq!(totals.calls, 0);
    assert_eq!(totals.tokens_out, 0);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_grant_denies_the_next_authorize() {
    let stack = TestStack::start().await.unwrap();
    let tenant = create_tenant(&stack, "acme", "acme/api").await.unwrap();
    let first = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap();
    stack
        .authz()
        .revoke_grant(
            stack.admin_key(),
            authz_pb::RevokeGrantRequest {
                grant_id: tenant.grant.id.clone(),
            },
        )
        .await
        .unwrap();
    let denied = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap_err();
    assert_eq!(denied.reason(), "repository_not_accessible");
    assert_eq!(denied.to_status().code(), Code::PermissionDenied);
    // A session derived from a context minted before the revocation is refused too.
    let session = stack
        .authz()
        .derive_session_context(
            &stack.stack.verifier.verify(&first.signed_context).unwrap(),
            authz_pb::DeriveSessionContextRequest::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(session.to_status().code(), Code::PermissionDenied);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_key_rejects_it_at_once() {
    let stack = TestStack::start().await.unwrap();
    let tenant = create_tenant(&stack, "acme", "acme/api").await.unwrap();
    assert!(authorize(&stack, &tenant.api_key, "acme/api").await.is_ok());
    let keys = stack
        .authz()
        .list_api_keys(
            stack.admin_key(),
            authz_pb::ListApiKeysRequest {
                subject_id: tenant.subject.id.clone(),
            },
        )
        .await
        .unwrap()
        .keys;
    assert_eq!(keys.len(), 1);
    assert!(
        tenant.api_key.starts_with(&keys[0].prefix),
        "listing shows a prefix, never the secret"
    );
    stack
        .authz()
        .revoke_api_key(
            stack.admin_key(),
            authz_pb::RevokeApiKeyRequest {
                key_id: keys[0].id.clone(),
            },
        )
        .await
        .unwrap();
    let rejected = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap_err();
    assert_eq!(rejected.to_status().code(), Code::Unauthenticated);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_resolve_only_within_what_the_subject_may_see() {
    let stack = TestStack::start().await.unwrap();
    let a = create_tenant(&stack, "tenant-a", "team-one/api")
        .await
        .unwrap();
    add_repository(&stack, &a.organisation.id, &a.subject.id, "team-two/api")
        .await
        .unwrap();
    let b = create_tenant(&stack, "tenant-b", "team-three/api")
        .await
        .unwrap();

    // By id and by exact name.
    let by_id = authorize(&stack, &a.api_key, &a.repository.id)
        .await
        .unwrap();
    assert_eq!(by_id.repository.unwrap().name, "team-one/api");
    // A trailing name that matches two entries of A: ambiguous, suggestions from A only.
    let ambiguous = authorize(&stack, &a.api_key, "api").await.unwrap_err();
    assert_eq!(ambiguous.reason(), "ambiguous");
    let mut suggestions = ambiguous.suggestions().to_vec();
    suggestions.sort();
    assert_eq!(suggestions, vec!["team-one/api", "team-two/api"]);
    // B sees exactly its own entry for the same selector.
    let b_api = authorize(&stack, &b.api_key, "api").await.unwrap();
    assert_eq!(b_api.context.unwrap().tenant_id, b.organisation.id);
    // B cannot reach A's entry by id or by name; the answer is the same as for an
    // unknown selector and suggests nothing of A's.
    for selector in [
        a.repository.id.as_str(),
        "team-one/api",
        "no-such-repository",
    ] {
        let denied = authorize(&stack, &b.api_key, selector).await.unwrap_err();
        assert_eq!(denied.reason(), "repository_not_accessible", "{selector}");
        assert!(
            denied
                .suggestions()
                .iter()
                .all(|s| !s.starts_with("team-one") && !s.starts_with("team-two")),
            "{selector}: {:?}",
            denied.suggestions()
        );
    }
    // Oversized selectors are rejected with the limit named.
    let huge = "x".repeat(5000);
    let too_long = authorize(&stack, &a.api_key, &huge).await.unwrap_err();
    assert_eq!(too_long.reason(), "limit_exceeded");
    assert_eq!(too_long.limit(), Some(4096));
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_contexts_only_narrow() {
    let stack = TestStack::start().await.unwrap();
    let tenant = create_tenant(&stack, "acme", "acme/api").await.unwrap();
    let parent = authorize(&stack, &tenant.api_key, "acme/api")
        .await
        .unwrap();
    let parent = stack.stack.verifier.verify(&parent.signed_context).unwrap();
    let authz = stack.authz();
    let session = authz
        .derive_session_context(
            &parent,
            authz_pb::DeriveSessionContextRequest {
                session_id: "mcp-1".into(),
                scopes: vec![Scope::ReadCode.to_proto() as i32],
                ttl_seconds: 30,
            },
        )
        .await
        .unwrap();
    let session = stack
        .stack
        .verifier
        .verify(&session.signed_context)
        .unwrap();
    assert_eq!(session.session_id(), Some("mcp-1"));
    assert_eq!(session.scopes(), &[Scope::ReadCode]);
    assert_eq!(session.parent_context_id(), Some(parent.context_id()));
    let widened = authz
        .derive_session_context(
            &session,
            authz_pb::DeriveSessionContextRequest {
                scopes: vec![Scope::WriteMemory.to_proto() as i32],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(widened.to_status().code(), Code::PermissionDenied);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_calls_respect_roles() {
    let stack = TestStack::start().await.unwrap();
    let a = create_tenant(&stack, "tenant-a", "a/api").await.unwrap();
    let b = create_tenant(&stack, "tenant-b", "b/api").await.unwrap();
    let authz = stack.authz();
    // A member key cannot administer.
    let member = authz
        .create_organisation(
            &a.api_key,
            authz_pb::CreateOrganisationRequest { name: "x".into() },
        )
        .await
        .unwrap_err();
    assert_eq!(member.to_status().code(), Code::PermissionDenied);
    // An org admin of A cannot touch B, nor create organisations.
    let org_admin = authz
        .create_subject(
            stack.admin_key(),
            authz_pb::CreateSubjectRequest {
                organisation_id: a.organisation.id.clone(),
                name: "admin".into(),
                role: authz_pb::Role::OrgAdmin as i32,
            },
        )
        .await
        .unwrap();
    let admin_key = authz
        .create_api_key(
            stack.admin_key(),
            authz_pb::CreateApiKeyRequest {
                subject_id: org_admin.id,
                name: "k".into(),
            },
        )
        .await
        .unwrap()
        .secret;
    assert!(
        authz
            .list_subjects(
                &admin_key,
                authz_pb::ListSubjectsRequest {
                    organisation_id: a.organisation.id.clone()
                }
            )
            .await
            .is_ok()
    );
    let other = authz
        .list_subjects(
            &admin_key,
            authz_pb::ListSubjectsRequest {
                organisation_id: b.organisation.id.clone(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(other.to_status().code(), Code::PermissionDenied);
    let create = authz
        .create_organisation(
            &admin_key,
            authz_pb::CreateOrganisationRequest { name: "y".into() },
        )
        .await
        .unwrap_err();
    assert_eq!(create.to_status().code(), Code::PermissionDenied);
    // No key at all.
    let anonymous = authz
        .list_organisations("", authz_pb::ListOrganisationsRequest {})
        .await
        .unwrap_err();
    assert_eq!(anonymous.to_status().code(), Code::Unauthenticated);
    // A grant cannot name a subject of another organisation.
    let cross = authz
        .create_grant(
            stack.admin_key(),
            authz_pb::CreateGrantRequest {
                repository_id: a.repository.id.clone(),
                grantee: Some(authz_pb::create_grant_request::Grantee::SubjectId(
                    b.subject.id.clone(),
                )),
                scopes: vec![Scope::ReadCode.to_proto() as i32],
            },
        )
        .await
        .unwrap_err();
    assert_eq!(cross.to_status().code(), Code::InvalidArgument);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verification_keys_are_published() {
    let stack = TestStack::start().await.unwrap();
    let keys = stack
        .authz()
        .get_verification_keys(authz_pb::GetVerificationKeysRequest {})
        .await
        .unwrap()
        .keys;
    assert_eq!(keys.len(), 1);
    assert!(keys[0].active);
    // A service configured with the authz endpoint fetches and trusts them.
    let verifier = codectx_runtime::load_verifier(&codectx_runtime::TenantConfig {
        authz_endpoint: stack.endpoint(ServiceKind::Authz),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(verifier.key_ids(), vec![keys[0].key_id.clone()]);
    stack.stack.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_reports_not_serving_while_draining() {
    let data = tempfile::tempdir().unwrap();
    let mut options = codectx::stack::StackOptions::ephemeral(data.path().to_path_buf());
    options.services = vec![ServiceKind::GraphHydrator];
    options.drain_seconds = 2;
    let stack = codectx::stack::Stack::start(options).await.unwrap();
    let endpoint = stack
        .endpoint(ServiceKind::GraphHydrator)
        .unwrap()
        .to_owned();
    let channel = tonic::transport::Channel::from_shared(endpoint)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel);
    let check = HealthCheckRequest {
        service: "codectx.graph.v1.GraphHydratorService".into(),
    };
    assert_eq!(
        health
            .check(check.clone())
            .await
            .unwrap()
            .into_inner()
            .status(),
        ServingStatus::Serving
    );
    let stopping = tokio::spawn(stack.stop());
    let mut saw_not_serving = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let Ok(response) = health.check(check.clone()).await
            && response.into_inner().status() == ServingStatus::NotServing
        {
            saw_not_serving = true;
            break;
        }
    }
    assert!(
        saw_not_serving,
        "health must report NOT_SERVING during the drain"
    );
    stopping.await.unwrap().unwrap();
}
