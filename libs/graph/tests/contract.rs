//! One contract, every backend: the same fixtures and assertions run against the embedded
//! SQLite store, a real Neo4j 5.26 and a real HugeGraph 1.5 with authentication on (both
//! started by `deploy/local/with-services.sh`, which `make test` and `.ci/run` use).
//! Without `CODECTX_TEST_NEO4J_URI` or `CODECTX_TEST_HUGEGRAPH_URI` that backend's half
//! fails and says how to run it; it is never skipped silently.

use std::collections::BTreeMap;

use codectx_graph::hugegraph::HugeGraphStore;
use codectx_graph::neo4j::Neo4jGraphStore;
use codectx_graph::query::{self, Directions, ExpandOptions};
use codectx_graph::sqlite::SqliteGraphStore;
use codectx_graph::{
    Confidence, Direction, Edge, EdgeKind, EdgePage, EdgeRequest, GraphStore, Node, NodeKind,
    OwnerGraph, RepositoryInfo, WindowRequest, node_id, owner_hash,
};

fn graph_id(label: &str) -> String {
    codectx_core::ids::mint(&label[..3.min(label.len())].to_lowercase())
}

fn node(
    graph: &str,
    kind: NodeKind,
    path: &str,
    qualified: &str,
    name: &str,
    lines: (u32, u32),
) -> Node {
    Node {
        id: node_id(graph, kind, path, qualified, ""),
        kind,
        name: name.into(),
        qualified_name: qualified.into(),
        language: if path.is_empty() {
            String::new()
        } else {
            "go".into()
        },
        path: path.into(),
        start_line: lines.0,
        end_line: lines.1,
        signature: if kind.is_symbol() {
            format!("func {name}()")
        } else {
            String::new()
        },
        summary: format!("{name} summary"),
        fingerprint: format!("fp-{name}"),
        test: name.starts_with("Test"),
        doc: format!("{name} does what its name says, in more words"),
    }
}

fn edge(from: &Node, to: &Node, kind: EdgeKind, line: u32, confidence: Confidence) -> Edge {
    Edge {
        from: from.id.clone(),
        to: to.id.clone(),
        kind,
        line,
        confidence,
    }
}

fn owner(name: &str, nodes: Vec<Node>, edges: Vec<Edge>) -> OwnerGraph {
    OwnerGraph {
        owner: name.into(),
        hash: owner_hash(&nodes, &edges),
        nodes,
        edges,
    }
}

/// The fixture: package p with a server, a helper, an interface, a caller and a test.
struct Fixture {
    graph: String,
    owners: Vec<OwnerGraph>,
    serve: Node,
    caller: Node,
    helper: Node,
    server: Node,
    handler: Node,
    test: Node,
    external: Node,
}

fn fixture(graph: &str) -> Fixture {
    let package = node(graph, NodeKind::Package, "", "p", "p", (0, 0));
    let external = node(
        graph,
        NodeKind::External,
        "",
        "fmt.Println",
        "Println",
        (0, 0),
    );
    let file_a = node(graph, NodeKind::File, "a.go", "a.go", "a.go", (1, 12));
    let caller = node(
        graph,
        NodeKind::Function,
        "a.go",
        "p.Caller",
        "Caller",
        (3, 10),
    );
    let file_b = node(graph, NodeKind::File, "b.go", "b.go", "b.go", (1, 20));
    let server = node(graph, NodeKind::Type, "b.go", "p.Server", "Server", (1, 3));
    let serve = node(
        graph,
        NodeKind::Method,
        "b.go",
        "p.(*Server).Serve",
        "Serve",
        (5, 9),
    );
    let helper = node(
        graph,
        NodeKind::Function,
        "b.go",
        "p.helper",
        "helper",
        (11, 13),
    );
    let handler = node(
        graph,
        NodeKind::Interface,
        "b.go",
        "p.Handler",
        "Handler",
        (15, 17),
    );
    let file_t = node(
        graph,
        NodeKind::File,
        "b_test.go",
        "b_test.go",
        "b_test.go",
        (1, 6),
    );
    let test = node(
        graph,
        NodeKind::Function,
        "b_test.go",
        "p.TestServe",
        "TestServe",
        (1, 5),
    );
    let owners = vec![
        owner(
            "",
            vec![package.clone(), external.clone()],
            vec![
                edge(
                    &package,
                    &file_a,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(
                    &package,
                    &file_b,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(
                    &package,
                    &file_t,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
            ],
        ),
        owner(
            "a.go",
            vec![file_a.clone(), caller.clone()],
            vec![
                edge(
                    &file_a,
                    &caller,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(&caller, &serve, EdgeKind::Calls, 5, Confidence::Resolved),
                edge(
                    &caller,
                    &external,
                    EdgeKind::Calls,
                    6,
                    Confidence::Unresolved,
                ),
            ],
        ),
        owner(
            "b.go",
            vec![
                file_b.clone(),
                server.clone(),
                serve.clone(),
                helper.clone(),
                handler.clone(),
            ],
            vec![
                edge(
                    &file_b,
                    &server,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(&file_b, &serve, EdgeKind::Contains, 0, Confidence::Resolved),
                edge(
                    &file_b,
                    &helper,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(
                    &file_b,
                    &handler,
                    EdgeKind::Contains,
                    0,
                    Confidence::Resolved,
                ),
                edge(&serve, &helper, EdgeKind::Calls, 7, Confidence::Resolved),
                edge(
                    &server,
                    &handler,
                    EdgeKind::Implements,
                    0,
                    Confidence::Resolved,
                ),
                edge(&serve, &test, EdgeKind::TestedBy, 3, Confidence::Resolved),
            ],
        ),
        owner(
            "b_test.go",
            vec![file_t.clone(), test.clone()],
            vec![
                edge(&file_t, &test, EdgeKind::Contains, 0, Confidence::Resolved),
                edge(&test, &serve, EdgeKind::Calls, 3, Confidence::Resolved),
            ],
        ),
    ];
    Fixture {
        graph: graph.to_owned(),
        owners,
        serve,
        caller,
        helper,
        server,
        handler,
        test,
        external,
    }
}

async fn load(store: &dyn GraphStore, fixture: &Fixture) {
    store
        .replace_owners(&fixture.graph, &[], fixture.owners.clone())
        .await
        .unwrap();
    store
        .put_repository(&RepositoryInfo {
            graph_id: fixture.graph.clone(),
            name: "fixture".into(),
            root: "/src/fixture".into(),
            commit: "abc123".into(),
            indexed_at: 1_800_000_000,
            version: "v1".into(),
            policy: r#"{"exclude":["gen/**"]}"#.into(),
            policy_fingerprint: "fp1".into(),
            dirty_since: 0,
        })
        .await
        .unwrap();
}

/// The CALLS edges of `root` in one direction, at most `limit`.
async fn calls_of(
    store: &dyn GraphStore,
    graph: &str,
    root: &str,
    direction: Direction,
    limit: usize,
) -> codectx_graph::EdgePage {
    store
        .edges(graph, root, &[EdgeKind::Calls], direction, limit)
        .await
        .unwrap()
}

fn names(nodes: &[Node]) -> Vec<String> {
    nodes.iter().map(|n| n.qualified_name.clone()).collect()
}

/// Every assertion of the contract, against one backend.
async fn contract(store: &dyn GraphStore) {
    let a = fixture(&graph_id("alpha"));
    let b = fixture(&graph_id("beta"));
    load(store, &a).await;
    load(store, &b).await;

    // Repository records.
    let repository = store.repository(&a.graph).await.unwrap().unwrap();
    assert_eq!(repository.commit, "abc123");
    assert_eq!(repository.policy, r#"{"exclude":["gen/**"]}"#);
    assert_eq!(repository.policy_fingerprint, "fp1");
    assert_eq!(repository.dirty_since, 0);
    // A change seen by a watcher is noted once; a later one keeps the earliest time,
    // and it touches one graph only.
    store.mark_dirty(&a.graph, 1_800_000_100).await.unwrap();
    store.mark_dirty(&a.graph, 1_800_000_200).await.unwrap();
    let dirty = store.repository(&a.graph).await.unwrap().unwrap();
    assert_eq!(dirty.dirty_since, 1_800_000_100);
    assert_eq!(
        store
            .repository(&b.graph)
            .await
            .unwrap()
            .unwrap()
            .dirty_since,
        0
    );
    // Writing the record again (an index run) clears it.
    store
        .put_repository(&RepositoryInfo {
            dirty_since: 0,
            ..dirty
        })
        .await
        .unwrap();
    assert_eq!(
        store
            .repository(&a.graph)
            .await
            .unwrap()
            .unwrap()
            .dirty_since,
        0
    );
    // Marking a graph that does not exist creates nothing.
    store.mark_dirty("no-such-graph", 1).await.unwrap();
    assert!(store.repository("no-such-graph").await.unwrap().is_none());
    assert!(
        store
            .repositories()
            .await
            .unwrap()
            .iter()
            .any(|r| r.graph_id == a.graph)
    );

    // Owner hashes round-trip.
    let hashes = store.owner_hashes(&a.graph).await.unwrap();
    assert_eq!(hashes.len(), 4);
    assert_eq!(hashes["b.go"], a.owners[2].hash);

    // Nodes by id: all fields survive; unknown ids are simply absent.
    let got = store
        .nodes(&a.graph, &[a.serve.id.clone(), "n_missing".into()])
        .await
        .unwrap();
    assert_eq!(got, vec![a.serve.clone()]);
    // Graph isolation: A's ids do not exist in B (ids are graph-scoped).
    assert!(
        store
            .nodes(&b.graph, std::slice::from_ref(&a.serve.id))
            .await
            .unwrap()
            .is_empty()
    );

    // Languages: files, symbols and tests per language of the graph (the fixture is Go).
    let languages = store.language_counts(&a.graph).await.unwrap();
    assert_eq!(
        languages,
        vec![codectx_graph::LanguageCount {
            language: "go".into(),
            files: 3,
            symbols: 6,
            tests: 1,
        }]
    );
    assert!(
        store
            .language_counts(&graph_id("nobody"))
            .await
            .unwrap()
            .is_empty()
    );

    // Neighbour names: what each function calls (by line), what each file holds; only
    // edges from the sources named to the kinds asked, only this graph's.
    let functions = [NodeKind::Function, NodeKind::Method];
    let ids = |nodes: Vec<Node>| -> Vec<String> { nodes.into_iter().map(|n| n.id).collect() };
    let callers = ids(store.nodes_of_kinds(&a.graph, &functions).await.unwrap());
    let calls = store
        .neighbour_names(&a.graph, EdgeKind::Calls, &callers, &functions)
        .await
        .unwrap();
    let mut expected = vec![
        (a.caller.id.clone(), "Serve".to_owned()),
        (a.serve.id.clone(), "helper".to_owned()),
        (a.test.id.clone(), "Serve".to_owned()),
    ];
    expected.sort();
    assert_eq!(calls, expected);
    // One source alone answers its own names only.
    assert_eq!(
        store
            .neighbour_names(
                &a.graph,
                EdgeKind::Calls,
                std::slice::from_ref(&a.serve.id),
                &functions
            )
            .await
            .unwrap(),
        vec![(a.serve.id.clone(), "helper".to_owned())]
    );
    let files = ids(store
        .nodes_of_kinds(&a.graph, &[NodeKind::File])
        .await
        .unwrap());
    let held = store
        .neighbour_names(
            &a.graph,
            EdgeKind::Contains,
            &files,
            &[NodeKind::Type, NodeKind::Interface],
        )
        .await
        .unwrap();
    assert_eq!(held.len(), 2);
    assert!(
        held.iter()
            .all(|(_, name)| name == "Server" || name == "Handler")
    );
    // Ids of graph A asked under another graph name nothing.
    assert!(
        store
            .neighbour_names(&graph_id("nobody"), EdgeKind::Calls, &callers, &functions)
            .await
            .unwrap()
            .is_empty()
    );

    // Names on one line go by name, whatever the ids (which hash the minted graph id):
    // two callees on one line, named so that their ids sort the other way.
    let order = graph_id("order");
    let callee = |name: &str| {
        node(
            &order,
            NodeKind::Function,
            "o.go",
            &format!("o.{name}"),
            name,
            (9, 9),
        )
    };
    let (first, second) = (0..100)
        .map(|i| (callee(&format!("a{i}")), callee(&format!("b{i}"))))
        .find(|(a, b)| a.id > b.id)
        .expect("some pair of ids sorts against its names");
    let caller = node(
        &order,
        NodeKind::Function,
        "o.go",
        "o.caller",
        "caller",
        (1, 3),
    );
    let edges = vec![
        edge(&caller, &second, EdgeKind::Calls, 2, Confidence::Resolved),
        edge(&caller, &first, EdgeKind::Calls, 2, Confidence::Resolved),
    ];
    store
        .replace_owners(
            &order,
            &[],
            vec![owner(
                "o.go",
                vec![caller.clone(), first.clone(), second.clone()],
                edges,
            )],
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .neighbour_names(
                &order,
                EdgeKind::Calls,
                std::slice::from_ref(&caller.id),
                &functions
            )
            .await
            .unwrap(),
        vec![
            (caller.id.clone(), first.name.clone()),
            (caller.id.clone(), second.name.clone())
        ]
    );
    store.delete_graph(&order).await.unwrap();

    // Lookup: qualified, trailing parts in Go's own forms, plain names, kinds.
    for selector in [
        "p.(*Server).Serve",
        "(*Server).Serve",
        "Server.Serve",
        "Serve",
    ] {
        let found = query::lookup(store, &a.graph, selector, &[], 10)
            .await
            .unwrap();
        assert_eq!(
            names(&found.matches),
            vec!["p.(*Server).Serve"],
            "{selector}"
        );
        assert!(!found.ambiguous, "{selector}");
    }
    assert!(
        query::lookup(store, &a.graph, "erver.Serve", &[], 10)
            .await
            .unwrap()
            .matches
            .is_empty()
    );
    let types = query::lookup(store, &a.graph, "Server", &[NodeKind::Type], 10)
        .await
        .unwrap();
    assert_eq!(names(&types.matches), vec!["p.Server"]);
    let file = query::lookup(store, &a.graph, "b.go", &[NodeKind::File], 10)
        .await
        .unwrap();
    assert_eq!(file.matches.len(), 1);
    // Lookups in B never return A's nodes (same names, different graph).
    let in_b = query::lookup(store, &b.graph, "Serve", &[], 10)
        .await
        .unwrap();
    assert_eq!(in_b.matches[0].id, b.serve.id);

    // Edges: both directions, limit and total, deterministic order.
    let callers = calls_of(store, &a.graph, &a.serve.id, Direction::Incoming, 10).await;
    assert_eq!(callers.total, 2);
    assert_eq!(
        names(
            &callers
                .hits
                .iter()
                .map(|h| h.node.clone())
                .collect::<Vec<_>>()
        ),
        vec!["p.Caller", "p.TestServe"]
    );
    assert_eq!(callers.hits[0].line, 5);
    let limited = calls_of(store, &a.graph, &a.serve.id, Direction::Incoming, 1).await;
    assert_eq!((limited.hits.len(), limited.total), (1, 2));
    let callees = calls_of(store, &a.graph, &a.caller.id, Direction::Outgoing, 10).await;
    assert_eq!(callees.total, 2);
    let unresolved = callees
        .hits
        .iter()
        .find(|h| h.node.id == a.external.id)
        .unwrap();
    assert_eq!(unresolved.confidence, Confidence::Unresolved);
    assert_eq!(unresolved.node.kind, NodeKind::External);
    let implementors = store
        .edges(
            &a.graph,
            &a.handler.id,
            &[EdgeKind::Implements],
            Direction::Incoming,
            10,
        )
        .await
        .unwrap();
    assert_eq!(implementors.hits[0].node.id, a.server.id);
    let tests = store
        .edges(
            &a.graph,
            &a.serve.id,
            &[EdgeKind::TestedBy],
            Direction::Outgoing,
            10,
        )
        .await
        .unwrap();
    assert_eq!(tests.hits[0].node.id, a.test.id);
    // Multi-kind pages are ordered by relationship type name on every backend.
    let mixed = store
        .edges(
            &a.graph,
            &a.serve.id,
            &[EdgeKind::TestedBy, EdgeKind::Calls],
            Direction::Outgoing,
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        mixed.hits.iter().map(|h| h.kind).collect::<Vec<_>>(),
        vec![EdgeKind::Calls, EdgeKind::TestedBy]
    );
    // The total counts every kind asked, also past the limit.
    let first = store
        .edges(
            &a.graph,
            &a.serve.id,
            &[EdgeKind::TestedBy, EdgeKind::Calls],
            Direction::Outgoing,
            1,
        )
        .await
        .unwrap();
    assert_eq!(first.total, mixed.hits.len());
    assert_eq!(
        first.hits.iter().map(|h| h.kind).collect::<Vec<_>>(),
        vec![EdgeKind::Calls]
    );

    // Many roots at once (an expansion's second step): each page is the page `edges`
    // answers for that root alone, a root asked twice included, a missing root empty,
    // and B's roots read in A's graph are missing too.
    let roots = vec![
        a.caller.id.clone(),
        a.serve.id.clone(),
        "n_gone".to_owned(),
        a.caller.id.clone(),
        a.test.id.clone(),
        b.serve.id.clone(),
    ];
    let both = [EdgeKind::TestedBy, EdgeKind::Calls];
    for direction in [Direction::Outgoing, Direction::Incoming] {
        for limit in [1, 10] {
            let pages = store
                .edges_each(&a.graph, &roots, &both, direction, limit)
                .await
                .unwrap();
            assert_eq!(pages.len(), roots.len());
            for (root, page) in roots.iter().zip(&pages) {
                let alone = store
                    .edges(&a.graph, root, &both, direction, limit)
                    .await
                    .unwrap();
                assert_eq!(*page, alone, "{root} {direction:?} limit {limit}");
            }
            assert_eq!(pages[5], EdgePage::default(), "B's root read in A");
        }
    }
    assert!(
        store
            .edges_each(&a.graph, &roots, &both, Direction::Outgoing, 10)
            .await
            .unwrap()[0]
            .total
            > 0,
        "the caller has callees (the comparison above is not between empty pages)"
    );

    // Expansion: depth 2 through Serve reaches helper; limits are per direction and
    // counted in `omitted`.
    let (expansions, missing) = query::expand(
        store,
        &a.graph,
        &[a.caller.id.clone(), "n_gone".into()],
        &ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: Directions::Outgoing,
            depth: 2,
            limit_per_direction: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(missing, vec!["n_gone".to_owned()]);
    let reached: Vec<(String, u32)> = expansions[0]
        .neighbors
        .iter()
        .map(|n| (n.node.qualified_name.clone(), n.depth))
        .collect();
    assert_eq!(
        reached,
        // Symbols of the repository before unresolved (external) targets.
        vec![
            ("p.(*Server).Serve".to_owned(), 1),
            ("fmt.Println".to_owned(), 1),
            ("p.helper".to_owned(), 2)
        ]
    );
    let (narrow, _) = query::expand(
        store,
        &a.graph,
        std::slice::from_ref(&a.caller.id),
        &ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: Directions::Outgoing,
            depth: 2,
            limit_per_direction: 1,
        },
    )
    .await
    .unwrap();
    assert_eq!(narrow[0].neighbors.len(), 1);
    // A hub: 130 callers, 10 kept. However a backend reads the window (SQLite ranks a
    // light copy of it), the neighbours kept are whole nodes (signature, summary, doc,
    // qualified name), production before tests, and the rest are counted.
    let hub_graph = graph_id("hub");
    let hub = node(
        &hub_graph,
        NodeKind::Function,
        "hub/hub.go",
        "hub.Hub",
        "Hub",
        (1, 3),
    );
    let callers: Vec<Node> = (0..130)
        .map(|i| {
            let name = if i % 2 == 0 {
                format!("TestCaller{i:03}")
            } else {
                format!("Caller{i:03}")
            };
            let path = if i % 2 == 0 {
                "hub/hub_test.go"
            } else {
                "hub/callers.go"
            };
            node(
                &hub_graph,
                NodeKind::Function,
                path,
                &format!("hub.{name}"),
                &name,
                (i + 10, i + 11),
            )
        })
        .collect();
    let calls: Vec<Edge> = callers
        .iter()
        .map(|c| edge(c, &hub, EdgeKind::Calls, c.start_line, Confidence::Resolved))
        .collect();
    let mut hub_nodes = vec![hub.clone()];
    hub_nodes.extend(callers.iter().cloned());
    store
        .replace_owners(&hub_graph, &[], vec![owner("hub", hub_nodes, calls)])
        .await
        .unwrap();
    let (hubs, _) = query::expand(
        store,
        &hub_graph,
        std::slice::from_ref(&hub.id),
        &ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: Directions::Incoming,
            depth: 1,
            limit_per_direction: 10,
        },
    )
    .await
    .unwrap();
    let kept: Vec<&Node> = hubs[0].neighbors.iter().map(|n| &n.node).collect();
    assert_eq!(kept.len(), 10);
    for node in &kept {
        let stored = callers.iter().find(|c| c.id == node.id).unwrap();
        assert_eq!(*node, stored, "a kept neighbour is the whole node");
        assert!(
            !node.test,
            "production callers rank before tests: {}",
            node.name
        );
    }
    assert_eq!(hubs[0].omitted.iter().map(|o| o.count).sum::<usize>(), 120);
    // The one shown is Serve (symbols before externals): Println is left out at depth 1
    // and Serve's own callee at depth 2.
    assert_eq!(
        narrow[0].omitted.iter().map(|o| o.count).sum::<usize>(),
        2,
        "{:?}",
        narrow[0].omitted
    );
    // Pages asked together (every relation of a symbol, every expansion of a batch):
    // each is the page asked alone, whether a window (light past the kept count, as the
    // hub's) or a plain page, of any kinds and direction, with more pages than one
    // backend query reads, and with roots that are missing or in another graph.
    let kinds_of = [
        vec![EdgeKind::Calls],
        vec![EdgeKind::TestedBy, EdgeKind::Calls],
        vec![EdgeKind::Implements],
        vec![],
    ];
    let mut asked: Vec<(String, EdgeRequest)> = Vec::new();
    for i in 0..60usize {
        let (graph, root) = match i % 5 {
            0 => (&hub_graph, hub.id.clone()),
            1 => (&a.graph, a.serve.id.clone()),
            2 => (&a.graph, a.caller.id.clone()),
            3 => (&a.graph, b.serve.id.clone()),
            _ => (&a.graph, a.handler.id.clone()),
        };
        asked.push((
            graph.clone(),
            EdgeRequest {
                root,
                kinds: kinds_of[i % 4].clone(),
                direction: if i % 3 == 0 {
                    Direction::Incoming
                } else {
                    Direction::Outgoing
                },
                limit: [500, 1, 5][i % 3],
                keep: [Some(10), None, Some(1)][i % 3],
            },
        ));
    }
    for graph in [&a.graph, &hub_graph] {
        let requests: Vec<EdgeRequest> = asked
            .iter()
            .filter(|(g, _)| g == graph)
            .map(|(_, r)| r.clone())
            .collect();
        let pages = store.edge_pages(graph, &requests).await.unwrap();
        assert_eq!(pages.len(), requests.len());
        for (r, page) in requests.iter().zip(&pages) {
            let alone = match r.keep {
                Some(keep) => store
                    .edge_window(graph, &r.root, &r.kinds, r.direction, r.limit, keep)
                    .await
                    .unwrap(),
                None => store
                    .edges(graph, &r.root, &r.kinds, r.direction, r.limit)
                    .await
                    .unwrap(),
            };
            assert_eq!(*page, alone, "{r:?}");
        }
    }
    let hub_window = store
        .edge_pages(
            &hub_graph,
            &[EdgeRequest {
                root: hub.id.clone(),
                kinds: vec![EdgeKind::Calls],
                direction: Direction::Incoming,
                limit: 500,
                keep: Some(10),
            }],
        )
        .await
        .unwrap();
    assert_eq!(
        (hub_window[0].hits.len(), hub_window[0].total),
        (130, 130),
        "the comparison above covers a hub's whole window"
    );
    // Expansions asked together answer as each asked alone.
    let options = [
        ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: Directions::Both,
            depth: 2,
            limit_per_direction: 1,
        },
        ExpandOptions {
            kinds: vec![EdgeKind::TestedBy, EdgeKind::Calls, EdgeKind::Implements],
            directions: Directions::Outgoing,
            depth: 1,
            limit_per_direction: 10,
        },
    ];
    let ids = [
        vec![a.caller.id.clone(), "n_gone".to_owned()],
        vec![a.serve.id.clone(), a.caller.id.clone(), a.serve.id.clone()],
        vec![b.serve.id.clone()],
    ];
    let asks: Vec<(&[String], &ExpandOptions)> = ids
        .iter()
        .flat_map(|ids| options.iter().map(move |o| (ids.as_slice(), o)))
        .collect();
    let all: Vec<String> = ids.iter().flatten().cloned().collect();
    let roots = query::Roots::read(store, &a.graph, &all).await.unwrap();
    let together = query::expand_many(store, &a.graph, &asks, &roots)
        .await
        .unwrap();
    assert_eq!(together.len(), asks.len());
    for ((ids, options), answer) in asks.iter().zip(&together) {
        let alone = query::expand(store, &a.graph, ids, options).await.unwrap();
        assert_eq!(*answer, alone, "{ids:?}");
    }
    assert!(
        together
            .iter()
            .any(|(e, _)| e.iter().any(|e| !e.neighbors.is_empty())),
        "the comparison above is not between empty expansions"
    );
    // Depth is clamped to 2 whatever is asked.
    let (deep, _) = query::expand(
        store,
        &a.graph,
        std::slice::from_ref(&a.test.id),
        &ExpandOptions {
            kinds: vec![EdgeKind::Calls],
            directions: Directions::Outgoing,
            depth: 9,
            limit_per_direction: 10,
        },
    )
    .await
    .unwrap();
    assert!(deep[0].neighbors.iter().all(|n| n.depth <= 2));

    // Outline and change impact.
    let outline = store.nodes_in_path(&a.graph, "b.go").await.unwrap();
    assert_eq!(outline[0].kind, NodeKind::File);
    assert_eq!(outline.len(), 5);
    let changes = BTreeMap::from([
        ("b.go".to_owned(), vec![(6u32, 6u32)]),
        ("nope.go".to_owned(), vec![]),
    ]);
    let (changed, unknown) = query::change_impact(store, &a.graph, &changes, 10)
        .await
        .unwrap();
    assert_eq!(unknown, vec!["nope.go".to_owned()]);
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].symbol.id, a.serve.id);
    assert_eq!(changed[0].callers.len(), 2);
    assert_eq!(changed[0].tests[0].node.id, a.test.id);

    // Corpus: symbols and external names by kind.
    let symbols = store
        .nodes_of_kinds(&a.graph, &query::SYMBOL_KINDS)
        .await
        .unwrap();
    assert_eq!(symbols.len(), 6);
    // The same corpus read in pages: every node once, at most a page's worth at a time,
    // none of another graph; a page is empty only when it is the last.
    let corpus_kinds = [&query::SYMBOL_KINDS[..], &[NodeKind::External]].concat();
    let whole = store.nodes_of_kinds(&a.graph, &corpus_kinds).await.unwrap();
    assert!(whole.len() > symbols.len(), "externals are read too");
    for limit in [1, 2, 5] {
        let mut cursor = String::new();
        let mut paged = Vec::new();
        loop {
            let page = store
                .nodes_of_kinds_page(&a.graph, &corpus_kinds, &cursor, limit)
                .await
                .unwrap();
            assert!(page.nodes.len() <= limit, "limit {limit}");
            assert!(
                !page.nodes.is_empty() || page.next.is_none(),
                "limit {limit}"
            );
            paged.extend(page.nodes);
            match page.next {
                Some(next) => cursor = next,
                None => break,
            }
        }
        paged.sort_by(|x, y| x.id.cmp(&y.id));
        paged.dedup_by(|x, y| x.id == y.id);
        assert_eq!(paged, whole, "limit {limit}");
    }

    // Incremental: helper is renamed in b.go. Incoming edges from other owners to nodes
    // that keep their id (Serve) survive; the old helper is gone.
    let mut owners = a.owners.clone();
    let b_owner = &mut owners[2];
    let renamed = node(
        &a.graph,
        NodeKind::Function,
        "b.go",
        "p.assist",
        "assist",
        (11, 13),
    );
    b_owner.nodes.retain(|n| n.id != a.helper.id);
    b_owner.nodes.push(renamed.clone());
    for e in &mut b_owner.edges {
        if e.to == a.helper.id {
            e.to = renamed.id.clone();
        }
    }
    b_owner.hash = owner_hash(&b_owner.nodes, &b_owner.edges);
    store
        .replace_owners(&a.graph, &[], vec![b_owner.clone()])
        .await
        .unwrap();
    assert!(
        store
            .nodes(&a.graph, std::slice::from_ref(&a.helper.id))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .nodes(&a.graph, std::slice::from_ref(&renamed.id))
            .await
            .unwrap()
            .len(),
        1
    );
    let callers = calls_of(store, &a.graph, &a.serve.id, Direction::Incoming, 10).await;
    assert_eq!(
        callers.total, 2,
        "callers in other files survive re-indexing b.go"
    );
    let callees = calls_of(store, &a.graph, &a.serve.id, Direction::Outgoing, 10).await;
    assert_eq!(
        names(
            &callees
                .hits
                .iter()
                .map(|h| h.node.clone())
                .collect::<Vec<_>>()
        ),
        vec!["p.assist"]
    );
    assert_eq!(
        store.owner_hashes(&a.graph).await.unwrap()["b.go"],
        b_owner.hash
    );

    // Written again with one node's content changed and the rest as stored: the changed
    // node is read back as written, the unchanged ones and their edges stay.
    let mut edited = b_owner.clone();
    for n in &mut edited.nodes {
        if n.id == renamed.id {
            n.signature = "func assist() (int, error)".into();
            n.end_line += 2;
        }
    }
    edited.hash = owner_hash(&edited.nodes, &edited.edges);
    store
        .replace_owners(&a.graph, &[], vec![edited.clone()])
        .await
        .unwrap();
    let read = store
        .nodes(&a.graph, std::slice::from_ref(&renamed.id))
        .await
        .unwrap();
    assert_eq!(read[0].signature, "func assist() (int, error)");
    assert_eq!(read[0].end_line, renamed.end_line + 2);
    let mut held = store.nodes_in_path(&a.graph, "b.go").await.unwrap();
    let mut expected = edited.nodes.clone();
    held.sort_by(|x, y| x.id.cmp(&y.id));
    expected.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(held, expected);
    let callers = calls_of(store, &a.graph, &a.serve.id, Direction::Incoming, 10).await;
    assert_eq!(callers.total, 2);

    // A node that moves to another owner in one write (its id stored, held by the old
    // owner until now) is held by the new one, at its new place, and edges other owners
    // keep to it survive; the old owner no longer lists it.
    let mut moved = a.handler.clone();
    moved.path = "c.go".into();
    moved.start_line = 1;
    moved.end_line = 3;
    let mut without = edited.clone();
    without.nodes.retain(|n| n.id != a.handler.id);
    without.edges.retain(|e| e.from != a.handler.id);
    without.hash = owner_hash(&without.nodes, &without.edges);
    let c_owner = owner("c.go", vec![moved.clone()], Vec::new());
    store
        .replace_owners(&a.graph, &[], vec![without, c_owner])
        .await
        .unwrap();
    assert_eq!(
        store.nodes_in_path(&a.graph, "c.go").await.unwrap(),
        vec![moved.clone()]
    );
    assert!(
        !store
            .nodes_in_path(&a.graph, "b.go")
            .await
            .unwrap()
            .iter()
            .any(|n| n.id == a.handler.id)
    );
    let implementers = store
        .edges(
            &a.graph,
            &a.handler.id,
            &[EdgeKind::Implements],
            Direction::Incoming,
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        implementers
            .hits
            .iter()
            .map(|h| h.node.id.as_str())
            .collect::<Vec<_>>(),
        vec![a.server.id.as_str()]
    );
    assert!(
        store
            .owner_hashes(&a.graph)
            .await
            .unwrap()
            .contains_key("c.go")
    );
    // And removing the new owner removes it.
    store
        .replace_owners(&a.graph, &["c.go".to_owned()], Vec::new())
        .await
        .unwrap();
    assert!(
        store
            .nodes(&a.graph, std::slice::from_ref(&a.handler.id))
            .await
            .unwrap()
            .is_empty()
    );

    // Removing an owner removes its nodes and the edges it produced.
    store
        .replace_owners(&a.graph, &["b_test.go".to_owned()], Vec::new())
        .await
        .unwrap();
    assert!(
        store
            .nodes(&a.graph, std::slice::from_ref(&a.test.id))
            .await
            .unwrap()
            .is_empty()
    );
    let callers = calls_of(store, &a.graph, &a.serve.id, Direction::Incoming, 10).await;
    assert_eq!(callers.total, 1);
    assert!(
        !store
            .owner_hashes(&a.graph)
            .await
            .unwrap()
            .contains_key("b_test.go")
    );
    // B is untouched by all of this.
    let b_callers = calls_of(store, &b.graph, &b.serve.id, Direction::Incoming, 10).await;
    assert_eq!(b_callers.total, 2);

    // Deleting a graph removes everything of it and nothing of others.
    store.delete_graph(&a.graph).await.unwrap();
    assert!(store.repository(&a.graph).await.unwrap().is_none());
    assert!(
        store
            .nodes_of_kinds(&a.graph, &NodeKind::ALL)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.owner_hashes(&a.graph).await.unwrap().is_empty());
    assert_eq!(
        store
            .nodes_of_kinds(&b.graph, &query::SYMBOL_KINDS)
            .await
            .unwrap()
            .len(),
        6
    );
    store.delete_graph(&b.graph).await.unwrap();
}

/// Values that read like query text (Cypher, Gremlin/Groovy, SQL wildcards) are stored
/// and matched as plain values: every backend binds them, none formats them into a query.
async fn values_stay_values(store: &dyn GraphStore) {
    let graph = graph_id("values");
    let other = graph_id("other");
    let hostile = [
        (
            "x') ; g.V().drop().iterate() //",
            "${graph.schema().getVertexLabels()}",
        ),
        ("a\" }) MATCH (n) DETACH DELETE n //", "%"),
        ("*", "_' OR '1'='1"),
    ];
    let mut nodes = Vec::new();
    for (i, (name, qualified)) in hostile.iter().enumerate() {
        let path = format!("{name}/{i}.go");
        nodes.push(node(
            &graph,
            NodeKind::Function,
            &path,
            qualified,
            name,
            (1, 2),
        ));
    }
    let bystander = node(&other, NodeKind::Function, "b.go", "b.Keep", "Keep", (1, 2));
    for (g, owner, nodes) in [
        (&graph, "hostile.go", nodes.clone()),
        (&other, "b.go", vec![bystander.clone()]),
    ] {
        store
            .replace_owners(
                g,
                &[],
                vec![OwnerGraph {
                    owner: owner.into(),
                    hash: owner_hash(&nodes, &[]),
                    nodes,
                    edges: Vec::new(),
                }],
            )
            .await
            .unwrap();
    }
    for n in &nodes {
        assert_eq!(
            store.nodes_by_name(&graph, &n.name, 10).await.unwrap(),
            vec![n.clone()],
            "{:?}",
            n.name
        );
        assert_eq!(
            store
                .nodes_by_qualified_name(&graph, &n.qualified_name, 10)
                .await
                .unwrap(),
            vec![n.clone()]
        );
        assert_eq!(
            store.nodes_in_path(&graph, &n.path).await.unwrap(),
            vec![n.clone()]
        );
    }
    // A wildcard matches only itself; nothing of the other graph is reachable or gone.
    assert!(
        store
            .nodes_by_name(&graph, "%", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .nodes_by_name(&graph, "Keep", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.nodes_by_name(&other, "Keep", 10).await.unwrap(),
        vec![bystander]
    );
    store.delete_graph(&graph).await.unwrap();
    store.delete_graph(&other).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_values_as_values() {
    let dir = tempfile::tempdir().unwrap();
    values_stay_values(&SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_keeps_values_as_values() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI")
        .expect("CODECTX_TEST_NEO4J_URI is not set: run the tests with `make test`");
    values_stay_values(&Neo4jGraphStore::connect(&uri, "neo4j", "").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_keeps_values_as_values() {
    values_stay_values(&hugegraph().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap();
    contract(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_meets_the_contract() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI").unwrap_or_else(|_| {
        panic!(
            "CODECTX_TEST_NEO4J_URI is not set: the Neo4j contract suite needs a running Neo4j 5.26. \
             Run the tests with `make test` (deploy/local/with-services.sh starts one from Maven Central)."
        )
    });
    let store = Neo4jGraphStore::connect(&uri, "neo4j", "")
        .await
        .unwrap_or_else(|e| panic!("cannot connect to Neo4j at {uri}: {e}"));
    contract(&store).await;
}

/// The HugeGraph server `deploy/local/hugegraph.sh` started, as its admin (authentication
/// is on: a wrong password is refused).
async fn hugegraph() -> HugeGraphStore {
    let uri = std::env::var("CODECTX_TEST_HUGEGRAPH_URI").unwrap_or_else(|_| {
        panic!(
            "CODECTX_TEST_HUGEGRAPH_URI is not set: the HugeGraph contract suite needs a running HugeGraph 1.5. \
             Run the tests with `make test` (deploy/local/with-services.sh starts one from Maven Central)."
        )
    });
    let password = std::env::var("CODECTX_TEST_HUGEGRAPH_PASSWORD")
        .expect("CODECTX_TEST_HUGEGRAPH_PASSWORD is set with CODECTX_TEST_HUGEGRAPH_URI");
    HugeGraphStore::connect(&uri, "admin", &password)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to HugeGraph at {uri}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_meets_the_contract() {
    contract(&hugegraph().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_refuses_a_wrong_password() {
    let uri = std::env::var("CODECTX_TEST_HUGEGRAPH_URI")
        .expect("CODECTX_TEST_HUGEGRAPH_URI is not set: run the tests with `make test`");
    let error = HugeGraphStore::connect(&uri, "admin", "not-the-password")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("401"), "{error}");
}

/// A write larger than one transaction holds (the first index of a large repository:
/// Neo4j's transaction memory, HugeGraph's 10,000 writes per transaction) is split into
/// several; edges that cross the split still connect, because every node is written
/// before any edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_writes_a_graph_larger_than_one_transaction() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_NEO4J_URI is not set: run the tests with `make test`")
    });
    let store = Neo4jGraphStore::connect(&uri, "neo4j", "")
        .await
        .unwrap_or_else(|e| panic!("cannot connect to Neo4j at {uri}: {e}"));
    writes_a_graph_larger_than_one_transaction(&store, true).await;
}

/// On SQLite the same write is a bulk write: it drops the node and edge indexes and
/// builds them again after the inserts; reads and the rewrite after it find every node
/// and edge by them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writes_a_graph_larger_than_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap();
    writes_a_graph_larger_than_one_transaction(&store, true).await;
    drop(store);
    // Built again: each edge read is planned on its index, not on a table scan.
    let connection = rusqlite::Connection::open(dir.path().join("graph.db")).unwrap();
    for (index, read) in [
        (
            "edges_from",
            "SELECT dst, line, confidence FROM edges WHERE src = 1 AND kind = 10",
        ),
        (
            "edges_to",
            "SELECT src, line, confidence FROM edges WHERE dst = 1 AND kind = 10",
        ),
        ("edges_by_owner", "SELECT src FROM edges WHERE oid = 1"),
        (
            "nodes_by_name",
            "SELECT nid FROM nodes WHERE gid = 1 AND name = 'F1'",
        ),
        (
            "nodes_by_qualified_name",
            "SELECT nid FROM nodes WHERE gid = 1 AND qualified_name = 'pkg1.F1'",
        ),
        (
            "nodes_by_path",
            "SELECT nid FROM nodes WHERE gid = 1 AND path = 'pkg1/file.go'",
        ),
        ("nodes_by_owner", "SELECT nid FROM nodes WHERE oid = 1"),
    ] {
        let plan: String = connection
            .query_row(&format!("EXPLAIN QUERY PLAN {read}"), [], |r| r.get(3))
            .unwrap();
        assert!(plan.contains(index), "{read}: {plan}");
        // An edge read by endpoint takes every column from the index, no edge row.
        if index.starts_with("edges_") && index != "edges_by_owner" {
            assert!(plan.contains("COVERING INDEX"), "{read}: {plan}");
        }
    }
}

/// A bulk write (its indexes dropped and built again) whose edges reach nodes stored by an
/// earlier write, of owners it does not rewrite: those edges are stored too, found from
/// both ends, and one to a node no write ever stored is skipped alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_bulk_write_links_edges_to_nodes_stored_before() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap();
    let graph = graph_id("bulk");
    let base: Vec<Node> = (0..3)
        .map(|i| {
            node(
                &graph,
                NodeKind::Function,
                "base.go",
                &format!("base.B{i}"),
                &format!("B{i}"),
                (i + 1, i + 1),
            )
        })
        .collect();
    store
        .replace_owners(
            &graph,
            &[],
            vec![owner("base.go", base.clone(), Vec::new())],
        )
        .await
        .unwrap();
    // 25 files of 1,000 functions: over the bulk threshold and larger than the store.
    let (files, per_file) = (25usize, 1_000u32);
    let ghost = node(&graph, NodeKind::Function, "gone.go", "gone.G", "G", (1, 1));
    let owners: Vec<OwnerGraph> = (0..files)
        .map(|f| {
            let path = format!("pkg{f}/file.go");
            let nodes: Vec<Node> = (0..per_file)
                .map(|i| {
                    node(
                        &graph,
                        NodeKind::Function,
                        &path,
                        &format!("pkg{f}.F{i}"),
                        &format!("F{i}"),
                        (i + 1, i + 1),
                    )
                })
                .collect();
            // Every function calls a base function (stored before), the next function of
            // its file (written now), and file 0's first function also calls a ghost.
            let mut edges: Vec<Edge> = nodes
                .iter()
                .enumerate()
                .flat_map(|(i, n)| {
                    [
                        edge(n, &base[i % 3], EdgeKind::Calls, 2, Confidence::Resolved),
                        edge(
                            n,
                            &nodes[(i + 1) % nodes.len()],
                            EdgeKind::Calls,
                            3,
                            Confidence::Resolved,
                        ),
                    ]
                })
                .collect();
            if f == 0 {
                edges.push(edge(
                    &nodes[0],
                    &ghost,
                    EdgeKind::Calls,
                    4,
                    Confidence::Resolved,
                ));
            }
            owner(&path, nodes, edges)
        })
        .collect();
    let first = owners[0].nodes[0].clone();
    let next = owners[0].nodes[1].clone();
    store.replace_owners(&graph, &[], owners).await.unwrap();
    let total = files * per_file as usize;
    for (i, b) in base.iter().enumerate() {
        let expected = (0..per_file as usize).filter(|n| n % 3 == i).count() * files;
        assert_eq!(
            calls_total(&store, &graph, b, Direction::Incoming).await,
            expected,
            "callers of {}",
            b.name
        );
    }
    let callees = calls_of(&store, &graph, &first.id, Direction::Outgoing, 10).await;
    let mut names = names(
        &callees
            .hits
            .iter()
            .map(|h| h.node.clone())
            .collect::<Vec<_>>(),
    );
    names.sort();
    assert_eq!(
        names,
        vec!["base.B0".to_owned(), next.qualified_name.clone()],
        "the ghost edge alone is skipped"
    );
    assert_eq!(
        calls_total(&store, &graph, &next, Direction::Incoming).await,
        1
    );
    assert_eq!(
        store
            .nodes_of_kinds(&graph, &query::SYMBOL_KINDS)
            .await
            .unwrap()
            .len(),
        total + base.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_writes_a_graph_larger_than_one_transaction() {
    writes_a_graph_larger_than_one_transaction(&hugegraph().await, false).await;
}

/// How many calls reach (incoming) or leave (outgoing) a node.
/// A backend's ranked windows are what [`query::rank_window`] makes of its pages, for a
/// hub whose window is read light and cut (more callers than the window holds) and for
/// small windows read whole: neighbours external or not, in test files or named like
/// tests, in the root's counterpart file, named after the root (ASCII or not), in the
/// root's directory or another, reached by several edges or by the root itself.
/// Returns whether the backend read the hub's window light.
async fn ranks_windows_as_the_reference(store: &dyn GraphStore) -> bool {
    let graph = graph_id("rank");
    let function = |path: &str, name: &str, line: u32| {
        let kind = if path.is_empty() {
            NodeKind::External
        } else {
            NodeKind::Function
        };
        node(
            &graph,
            kind,
            path,
            &format!("{path}:{name}"),
            name,
            (line, line + 2),
        )
    };
    let root = function("pkg/textwrap.go", "Dedent", 10);
    let interface = Node {
        kind: NodeKind::Interface,
        ..function("pkg/textwrap.go", "Wrapper", 40)
    };
    let places = [
        ("pkg/textwrap_test.go", "TestDedent"),
        ("other/x_test.go", "helper"),
        ("pkg/a.go", "callsDedent"),
        ("z/b.go", "F"),
        ("", "ext"),
        ("tests/textwrap.go", "DEDENTx"),
        ("pkg/ΣΊΣΥΦΟΣ.go", "σDedentσ"),
        ("test/test_textwrap.py", "Ǆdedent"),
    ];
    let mut nodes = vec![root.clone(), interface.clone()];
    let mut edges = vec![edge(
        &root,
        &root,
        EdgeKind::Calls,
        11,
        Confidence::Resolved,
    )];
    for i in 0..640u32 {
        let (path, name) = places[(i % 8) as usize];
        let caller = function(path, &format!("{name}{i}"), 1_000 - i);
        // Every fifth caller calls twice; lines spread the page's order over the kinds
        // of neighbour.
        for call in 0..1 + u32::from(i % 5 == 0) {
            edges.push(edge(
                &caller,
                &root,
                EdgeKind::Calls,
                (i * 7919 + call) % 613,
                Confidence::Resolved,
            ));
        }
        if i < 150 {
            let implementer = Node {
                kind: NodeKind::Type,
                ..function(
                    if i % 3 == 0 {
                        "pkg/impl.go"
                    } else {
                        "elsewhere/impl.go"
                    },
                    &format!("Impl{i}"),
                    i + 1,
                )
            };
            edges.push(edge(
                &implementer,
                &interface,
                EdgeKind::Implements,
                i % 9,
                Confidence::Resolved,
            ));
            nodes.push(implementer);
        }
        nodes.push(caller);
    }
    let small = nodes[5].clone();
    edges.push(edge(
        &small,
        &nodes[9],
        EdgeKind::Calls,
        3,
        Confidence::Resolved,
    ));
    edges.push(edge(
        &small,
        &interface,
        EdgeKind::Calls,
        4,
        Confidence::Resolved,
    ));
    // Windows at the edge of a small one (every edge read in one statement, ordered by
    // the backend's code rather than its query): 100 and 101 edges, whose callers tie on
    // path, line and start line in every way the page's order breaks ties.
    let mut ties = Vec::new();
    for (t, count) in [100u32, 101].into_iter().enumerate() {
        let tie = function("pkg/ties.go", &format!("Tie{t}"), 2_000 + t as u32);
        for i in 0..count {
            // Callers in pairs that differ only in kind, so only in id.
            let pair = i / 2;
            let (path, name) = places[(pair % 8) as usize];
            let caller = function(path, &format!("{name}t{t}x{pair}"), 500 + pair % 4);
            let caller = if i % 2 == 0 || path.is_empty() {
                caller
            } else {
                node(
                    &graph,
                    NodeKind::Method,
                    path,
                    &caller.qualified_name,
                    &caller.name,
                    (caller.start_line, caller.end_line),
                )
            };
            let kind = if pair % 9 == 0 {
                EdgeKind::TestedBy
            } else {
                EdgeKind::Calls
            };
            edges.push(edge(&caller, &tie, kind, pair % 3, Confidence::Resolved));
            nodes.push(caller);
        }
        nodes.push(tie.clone());
        ties.push(tie);
    }
    store
        .replace_owners(&graph, &[], vec![owner("rank", nodes, edges)])
        .await
        .unwrap();

    let window = |root: &Node, kinds: Vec<EdgeKind>, direction, limit, keep, seen| WindowRequest {
        edges: EdgeRequest {
            root: root.id.clone(),
            kinds,
            direction,
            limit,
            keep,
        },
        root_path: root.path.clone(),
        root_name: root.name.clone(),
        seen,
    };
    let mut requests = Vec::new();
    for (i, keep) in [
        Some(0),
        Some(1),
        Some(5),
        Some(10),
        Some(100),
        Some(700),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        for limit in [500, 1_000] {
            let seen = i % 2 == 0;
            let calls = vec![EdgeKind::Calls, EdgeKind::TestedBy];
            requests.push(window(&root, calls, Direction::Incoming, limit, keep, seen));
            requests.push(window(
                &interface,
                vec![EdgeKind::Implements],
                Direction::Incoming,
                limit,
                keep,
                !seen,
            ));
            requests.push(window(
                &small,
                vec![EdgeKind::Calls],
                Direction::Outgoing,
                limit,
                keep,
                seen,
            ));
        }
    }
    for tie in &ties {
        for keep in [Some(5), Some(100), None] {
            requests.push(window(
                tie,
                vec![EdgeKind::Calls, EdgeKind::TestedBy],
                Direction::Incoming,
                500,
                keep,
                true,
            ));
        }
    }
    let missing = Node {
        id: "n_missing".into(),
        ..root.clone()
    };
    requests.push(window(
        &missing,
        vec![EdgeKind::Calls],
        Direction::Incoming,
        500,
        Some(5),
        true,
    ));
    requests.push(window(
        &root,
        vec![],
        Direction::Incoming,
        500,
        Some(5),
        true,
    ));

    let ranked = store.ranked_windows(&graph, &requests).await.unwrap();
    assert_eq!(ranked.len(), requests.len());
    for (request, ranked) in requests.iter().zip(&ranked) {
        let page: EdgePage = store
            .edge_pages(&graph, std::slice::from_ref(&request.edges))
            .await
            .unwrap()
            .remove(0);
        assert_eq!(*ranked, query::rank_window(request, page), "{request:?}");
    }
    // The comparison covers a cut hub's window, whose best ten are production code of
    // the repository (whatever the backend's page order, the window holds more of those
    // than ten) ...
    let hub = &ranked[18];
    assert_eq!(
        (requests[18].edges.keep, requests[18].edges.limit),
        (Some(10), 500)
    );
    assert_eq!((hub.window, hub.total), (500, 769), "the window is cut");
    assert_eq!(hub.kept.len(), 10);
    assert!(
        hub.kept.iter().all(|h| h.node.kind != NodeKind::External
            && !h.node.test
            && !query::is_test_path(&h.node.path)),
        "{:?}",
        hub.kept
    );
    assert!(hub.seen.is_empty(), "not asked");
    // ... and small windows read whole, with every neighbour seen.
    let small_window = &ranked[2];
    assert!(!small_window.light);
    assert_eq!((small_window.distinct, small_window.seen.len()), (3, 3));
    store.delete_graph(&graph).await.unwrap();
    hub.light
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_ranks_windows_as_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteGraphStore::open(&dir.path().join("graph.db")).unwrap();
    // SQLite reads a hub's window light and ranks it in the store: the comparison covers
    // that path, not only the reference's.
    assert!(ranks_windows_as_the_reference(&store).await);
}

/// A hub's window is remembered by the reader that ranked it, and only until the file
/// changes: a write through the same store (its writer's connection) and a write through
/// another store on the same file (another process, as `codectx index` beside
/// `codectx up`) are both seen by the next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_hub_windows_see_every_write_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    let serving = SqliteGraphStore::open(&path).unwrap();
    let graph = graph_id("hubcache");
    let hub = node(
        &graph,
        NodeKind::Function,
        "pkg/hub.py",
        "pkg.hub.f",
        "f",
        (1, 3),
    );
    let owner_with = |callers: u32, first_line: u32| {
        let mut nodes = vec![hub.clone()];
        let mut edges = Vec::new();
        for i in 0..callers {
            let caller = node(
                &graph,
                NodeKind::Function,
                &format!("pkg/c{}.py", i % 7),
                &format!("pkg.c.caller{i}"),
                &format!("caller{i}"),
                (first_line + i, first_line + i + 1),
            );
            edges.push(edge(
                &caller,
                &hub,
                EdgeKind::Calls,
                i % 50,
                Confidence::Resolved,
            ));
            nodes.push(caller);
        }
        owner("hubcache", nodes, edges)
    };
    let request = WindowRequest {
        edges: EdgeRequest {
            root: hub.id.clone(),
            kinds: vec![EdgeKind::Calls],
            direction: Direction::Incoming,
            limit: 500,
            keep: Some(10),
        },
        root_path: hub.path.clone(),
        root_name: hub.name.clone(),
        seen: true,
    };
    let window = |store: &SqliteGraphStore| {
        let request = request.clone();
        let graph = graph.clone();
        let store = store.clone();
        async move {
            let ranked = store
                .ranked_windows(&graph, std::slice::from_ref(&request))
                .await
                .unwrap()
                .remove(0);
            let page = store
                .edge_pages(&graph, std::slice::from_ref(&request.edges))
                .await
                .unwrap()
                .remove(0);
            assert_eq!(ranked, query::rank_window(&request, page));
            ranked
        }
    };

    serving
        .replace_owners(&graph, &[], vec![owner_with(300, 10)])
        .await
        .unwrap();
    let first = window(&serving).await;
    assert!(first.light, "a window of 300 edges is read light");
    assert_eq!((first.total, first.seen.len()), (300, 300));
    assert_eq!(window(&serving).await, first, "read again, unchanged");

    // The serving store's own writer.
    serving
        .replace_owners(&graph, &[], vec![owner_with(400, 10)])
        .await
        .unwrap();
    let grown = window(&serving).await;
    assert_eq!((grown.total, grown.seen.len()), (400, 400));

    // Another store on the file: another connection, as another process would be.
    let indexer = SqliteGraphStore::open(&path).unwrap();
    indexer
        .replace_owners(&graph, &[], vec![owner_with(250, 5_000)])
        .await
        .unwrap();
    let replaced = window(&serving).await;
    assert_eq!((replaced.total, replaced.seen.len()), (250, 250));
    assert!(
        replaced.kept.iter().all(|h| h.node.start_line >= 5_000),
        "the callers of before the other store's write are gone: {:?}",
        replaced.kept
    );
    indexer.delete_graph(&graph).await.unwrap();
    let gone = serving
        .ranked_windows(&graph, std::slice::from_ref(&request))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        (gone.total, gone.kept.len()),
        (0, 0),
        "the graph was deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neo4j_ranks_windows_as_the_reference() {
    let uri = std::env::var("CODECTX_TEST_NEO4J_URI")
        .expect("CODECTX_TEST_NEO4J_URI is not set: run the tests with `make test`");
    let store = Neo4jGraphStore::connect(&uri, "neo4j", "")
        .await
        .unwrap_or_else(|e| panic!("cannot connect to Neo4j at {uri}: {e}"));
    ranks_windows_as_the_reference(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hugegraph_ranks_windows_as_the_reference() {
    ranks_windows_as_the_reference(&hugegraph().await).await;
}

async fn calls_total(
    store: &dyn GraphStore,
    graph: &str,
    node: &Node,
    direction: Direction,
) -> usize {
    store
        .edges(graph, &node.id, &[EdgeKind::Calls], direction, 5)
        .await
        .unwrap()
        .total
}

/// With `hub`, every function also calls the first one: 60,000 edges into one node,
/// written over several transactions, every one of them kept.
async fn writes_a_graph_larger_than_one_transaction(store: &dyn GraphStore, hub: bool) {
    let graph = graph_id("large");
    // 60 files of 1,000 functions: 60,000 nodes, over the 40,000 rows of one transaction.
    let files = 60;
    let per_file = 1_000;
    let nodes: Vec<Vec<Node>> = (0..files)
        .map(|f| {
            (0..per_file)
                .map(|i| {
                    let path = format!("pkg{f}/file.go");
                    node(
                        &graph,
                        NodeKind::Function,
                        &path,
                        &format!("pkg{f}.F{i}"),
                        &format!("F{i}"),
                        (i + 1, i + 1),
                    )
                })
                .collect()
        })
        .collect();
    let owners: Vec<OwnerGraph> = (0..files)
        .map(|f| {
            // Each file's first function calls the first function of the file 30 away:
            // written in another transaction.
            let target = &nodes[(f + 30) % files][0];
            let mut edges = vec![edge(
                &nodes[f][0],
                target,
                EdgeKind::Calls,
                1,
                Confidence::Resolved,
            )];
            if hub {
                edges.extend(nodes[f].iter().skip(1).map(|caller| {
                    edge(
                        caller,
                        &nodes[0][0],
                        EdgeKind::Calls,
                        2,
                        Confidence::Resolved,
                    )
                }));
            }
            OwnerGraph {
                owner: format!("pkg{f}/file.go"),
                hash: format!("h{f}"),
                nodes: nodes[f].clone(),
                edges,
            }
        })
        .collect();
    store.replace_owners(&graph, &[], owners).await.unwrap();
    assert_eq!(store.owner_hashes(&graph).await.unwrap().len(), files);
    for f in [0usize, 29, 59] {
        assert_eq!(
            store
                .nodes_in_path(&graph, &format!("pkg{f}/file.go"))
                .await
                .unwrap()
                .len(),
            per_file as usize
        );
        let callers = store
            .edges(
                &graph,
                &nodes[(f + 30) % files][0].id,
                &[EdgeKind::Calls],
                Direction::Incoming,
                5,
            )
            .await
            .unwrap();
        assert_eq!(callers.hits.len(), 1, "pkg{f}");
    }
    // By name across every file of the write (on SQLite, through the rebuilt index).
    assert_eq!(
        store.nodes_by_name(&graph, "F1", 100).await.unwrap().len(),
        files
    );
    // Nodes by id, for lists of every size around the stores' statement shapes and
    // beyond one statement's parameters; an unknown id is skipped.
    let ids: Vec<String> = nodes
        .iter()
        .flatten()
        .step_by(7)
        .map(|n| n.id.clone())
        .collect();
    for len in [1usize, 2, 3, 4, 5, 7, 8, 9, 100, 511, 512, 513, 1_500] {
        let mut asked = ids[..len].to_vec();
        asked.push("n_missing".into());
        let mut found: Vec<String> = store
            .nodes(&graph, &asked)
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect();
        found.sort();
        let mut want = ids[..len].to_vec();
        want.sort();
        assert_eq!(found, want, "{len} ids");
    }
    if hub {
        // Every function but each file's first, and the first of file 30.
        assert_eq!(
            calls_total(store, &graph, &nodes[0][0], Direction::Incoming).await,
            files * (per_file as usize - 1) + 1
        );
        // A small rewrite after the large write: file 7 without its calls to the hub.
        // Its old edges go (found by owner), the others stay (found by target).
        let rewritten = OwnerGraph {
            owner: "pkg7/file.go".into(),
            hash: "h7-rewritten".into(),
            nodes: nodes[7].clone(),
            edges: vec![edge(
                &nodes[7][0],
                &nodes[37][0],
                EdgeKind::Calls,
                1,
                Confidence::Resolved,
            )],
        };
        store
            .replace_owners(&graph, &[], vec![rewritten])
            .await
            .unwrap();
        assert_eq!(
            calls_total(store, &graph, &nodes[0][0], Direction::Incoming).await,
            (files - 1) * (per_file as usize - 1) + 1
        );
        assert_eq!(
            calls_total(store, &graph, &nodes[7][1], Direction::Outgoing).await,
            0,
            "file 7's second function calls nothing now"
        );
    }
    // The corpus of a large graph comes in pages, every node once.
    let corpus = store
        .nodes_of_kinds(&graph, &query::SYMBOL_KINDS)
        .await
        .unwrap();
    assert_eq!(corpus.len(), files * per_file as usize);
    assert!(
        corpus.windows(2).all(|w| w[0].id < w[1].id),
        "by id, each once"
    );
    store.delete_graph(&graph).await.unwrap();
}
