//! One authz round trip per tool call, and revocation still on the next request: the
//! gateway reuses a context authz minted while the access revision the `/mcp` guard reads
//! is unchanged (services/gateway/src/contexts.rs). Through the real MCP path (the gateway
//! over Streamable HTTP), a revoked grant, a deleted entry and a revoked key each refuse
//! the very next call of a session that had been answered from a reused context, and the
//! calls in between cost one authz round trip each.

use codectx::bench::client::McpClient;
use codectx_proto::authz::v1 as pb;
use codectx_tests::{IndexedStack, Tenant, create_tenant_on_public, start_indexed};
use serde_json::{Map, Value, json};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// authz's own count of an RPC's calls, from its `rpc.server.duration` histogram.
fn authz_calls(metrics: &codectx_telemetry::InProcessMetrics, method: &str) -> u64 {
    metrics
        .snapshot()
        .iter()
        .filter(|m| m.service == "codectx.authz.v1.AuthzService" && m.method == method)
        .map(|m| m.count)
        .sum()
}

/// A new tenant reading the indexed `shop` graph, and an MCP session of its key.
async fn agent_of(f: &IndexedStack, url: &str, organisation: &str) -> (Tenant, McpClient) {
    let tenant = create_tenant_on_public(&f.stack, organisation, "shop", f.context.repository_id())
        .await
        .unwrap();
    let agent = McpClient::connect(url, &tenant.api_key).await.unwrap();
    (tenant, agent)
}

/// Whether the call was answered (not refused).
async fn answered(agent: &McpClient, card: &Map<String, Value>) -> bool {
    !agent
        .call("get_symbol_context", card)
        .await
        .unwrap()
        .is_error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocation_refuses_the_next_call_of_a_session_served_from_a_reused_context() {
    // Before the services start: the histogram binds to the meter provider on first use.
    let metrics = codectx_telemetry::InProcessMetrics::install();
    let f = start_indexed("go", "shop").await;
    let url = format!("http://{}/mcp", f.stack.stack.gateway_http().unwrap());
    let authz = f.stack.authz();
    let admin = f.stack.admin_key();
    let card = object(json!({"repository": "shop", "symbol": "Server.Serve", "fresh": true}));

    // A grant revoked between two calls of one session.
    let a = create_tenant_on_public(&f.stack, "tenant-a", "shop", f.context.repository_id())
        .await
        .unwrap();
    let agent = McpClient::connect(&url, &a.api_key).await.unwrap();
    let first = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(first.text.starts_with("status: ok\n"), "{}", first.text);
    let (authenticate, authorize) = (
        authz_calls(&metrics, "Authenticate"),
        authz_calls(&metrics, "Authorize"),
    );
    for _ in 0..3 {
        let again = agent.call("get_symbol_context", &card).await.unwrap();
        assert!(again.text.starts_with("status: ok\n"), "{}", again.text);
    }
    assert_eq!(
        authz_calls(&metrics, "Authorize") - authorize,
        0,
        "calls at an unchanged revision reuse the context"
    );
    assert!(
        authz_calls(&metrics, "Authenticate") - authenticate >= 3,
        "every request is authenticated"
    );
    authz
        .revoke_grant(
            admin,
            pb::RevokeGrantRequest {
                grant_id: a.grant.id.clone(),
            },
        )
        .await
        .unwrap();
    let refused = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(
        refused.is_error,
        "a revoked grant answers the next call: {}",
        refused.text
    );
    assert!(
        !refused.text.contains("server/server.go"),
        "{}",
        refused.text
    );

    // An entry deleted between two calls.
    let (b, agent) = agent_of(&f, &url, "tenant-b").await;
    assert!(answered(&agent, &card).await);
    assert!(answered(&agent, &card).await);
    authz
        .delete_repository(
            admin,
            pb::DeleteRepositoryRequest {
                repository_id: b.repository.id.clone(),
            },
        )
        .await
        .unwrap();
    let refused = agent.call("get_symbol_context", &card).await.unwrap();
    assert!(
        refused.is_error,
        "a deleted entry answers the next call: {}",
        refused.text
    );

    // A key revoked between two calls: the next request is refused before any tool runs.
    let (c, agent) = agent_of(&f, &url, "tenant-c").await;
    assert!(answered(&agent, &card).await);
    let keys = authz
        .list_api_keys(
            admin,
            pb::ListApiKeysRequest {
                subject_id: c.subject.id.clone(),
            },
        )
        .await
        .unwrap();
    for key in keys.keys {
        authz
            .revoke_api_key(admin, pb::RevokeApiKeyRequest { key_id: key.id })
            .await
            .unwrap();
    }
    match agent.call("get_symbol_context", &card).await {
        Err(_) => {}
        Ok(answer) => assert!(answer.is_error, "a revoked key answers: {}", answer.text),
    }
}
