//! The stack's services call each other in process by default (ADR 0016). These tests hold
//! that transport to the gRPC one: the same answers as over loopback TCP, and the same
//! server layers on the way in (a forged or missing tenant context is refused).

use codectx::stack::{PeerTransport, ServiceKind, StackOptions};
use codectx_clients::{AssemblerClient, PeerConfig};
use codectx_proto::assembler::v1 as pb;
use codectx_proto::graph::v1 as graph_pb;
use codectx_proto::graph::v1::graph_hydrator_service_client::GraphHydratorServiceClient;
use codectx_tests::{IndexedStack, start_indexed_on, with_context_bytes};

async fn indexed(transport: PeerTransport) -> IndexedStack {
    start_indexed_on(
        "go",
        "shop",
        |_| {},
        |options| StackOptions {
            transport,
            ..options
        },
    )
    .await
}

/// What the context-assembler answers (it calls lexical-ranker, embedding, vector-gateway
/// and graph-hydrator for these) to three tools' requests.
async fn answers(f: &IndexedStack) -> Vec<String> {
    let assembler = AssemblerClient::connect(&PeerConfig::single(
        f.stack.endpoint(ServiceKind::ContextAssembler),
    ))
    .unwrap();
    let context = &f.context;
    let symbol = assembler
        .symbol_context(
            context,
            pb::SymbolContextRequest {
                symbol: "Server.Serve".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let calls = assembler
        .call_graph(
            context,
            pb::CallGraphRequest {
                symbol: "Run".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let search = assembler
        .search(
            context,
            pb::SearchRequest {
                query: "start the HTTP server".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    vec![symbol.json, calls.json, search.json]
}

/// An answer without its index version (each stack indexed its own copy).
fn comparable(json: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(json).unwrap();
    if let Some(index) = value.get_mut("index").and_then(|i| i.as_object_mut()) {
        index.remove("version");
    }
    value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_peers_answer_as_loopback_grpc_does() {
    let loopback = indexed(PeerTransport::Loopback).await;
    assert!(
        loopback
            .stack
            .stack
            .peer(ServiceKind::GraphHydrator)
            .unwrap()
            .endpoints[0]
            .starts_with("http://127.0.0.1:")
    );
    let over_tcp = answers(&loopback).await;
    loopback.stack.stack.stop().await.unwrap();

    let local = indexed(PeerTransport::InProcess).await;
    assert!(
        local
            .stack
            .stack
            .peer(ServiceKind::GraphHydrator)
            .unwrap()
            .endpoints[0]
            .starts_with("inproc://")
    );
    let in_process = answers(&local).await;
    for (tcp, local) in over_tcp.iter().zip(&in_process) {
        assert!(tcp.contains("qualified_name"), "{tcp}");
        assert_eq!(comparable(tcp), comparable(local));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_peers_verify_the_tenant_context() {
    let f = indexed(PeerTransport::InProcess).await;
    let peer = f.stack.stack.peer(ServiceKind::GraphHydrator).unwrap();
    let mut hydrator =
        GraphHydratorServiceClient::new(codectx_clients::channel("graph-hydrator", &peer).unwrap());
    let request = |bytes: &[u8]| {
        with_context_bytes(
            bytes,
            graph_pb::LookupSymbolsRequest {
                selector: "Server.Serve".into(),
                ..Default::default()
            },
        )
    };
    let signed = f.context.signed_bytes().to_vec();
    let answer = hydrator
        .lookup_symbols(request(&signed))
        .await
        .expect("the signed context is accepted");
    assert!(!answer.into_inner().matches.is_empty());

    let mut flipped = signed.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x01;
    for bytes in [Vec::new(), flipped, vec![0u8; 64]] {
        let status = hydrator
            .lookup_symbols(request(&bytes))
            .await
            .expect_err("a forged or missing context is refused");
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    }

    // A stopped stack's services are gone from the process: UNAVAILABLE, as a refused
    // connection would answer.
    let IndexedStack { stack, .. } = f;
    stack.stack.stop().await.unwrap();
    let status = hydrator
        .lookup_symbols(request(&signed))
        .await
        .expect_err("the service stopped");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
}
