//! The code lexical corpus as a stream: the store's pages of symbols, error messages and
//! string literals, each sent as a chunk as soon as it is read. A server graph store
//! (HugeGraph over REST, Neo4j over Bolt) reads a large graph's corpus for longer than a
//! tool call may take; reading it whole before answering made the Python standard
//! library's corpus outlast the operation deadline on HugeGraph. The stream answers at
//! once, each page is due within the operation deadline and the whole stream within
//! [`limits::CORPUS_STREAM_DEADLINE_SECONDS`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use codectx_core::conventions::{is_test_name, is_test_path};
use codectx_core::limits;
use codectx_errors::{Error, ErrorKind};
use codectx_graph::query::SYMBOL_KINDS;
use codectx_graph::{Node, NodeKind, Store};
use codectx_proto::graph::v1 as pb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use crate::neighbours;

/// Corpus entries per chunk (gRPC messages stay small).
pub(crate) const CORPUS_CHUNK: usize = 1_000;

/// Nodes read from the store at once, with their neighbours' names read for that page
/// alone, so no request reads the whole graph. Larger pages cost less per node on
/// HugeGraph (the Python standard library's 81k corpus nodes: 9.6 s in pages of 1,000,
/// 6.9 s in pages of 5,000 through its REST API on this machine).
const STORE_PAGE: usize = 5_000;

/// Chunks read ahead of the receiver.
const READ_AHEAD: usize = 2;

/// What one stream reads and how long it may take.
pub(crate) struct CodeCorpus {
    pub store: Arc<dyn Store>,
    pub graph_id: String,
    pub version: String,
    /// Attach each symbol's neighbours' names (the dense leg's text).
    pub with_neighbours: bool,
    pub page_deadline: Duration,
    pub stream_deadline: Duration,
    /// Nodes per store read ([`STORE_PAGE`]).
    pub store_page: usize,
}

impl CodeCorpus {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        graph_id: &str,
        version: String,
        with_neighbours: bool,
    ) -> Self {
        Self {
            store,
            graph_id: graph_id.to_owned(),
            version,
            with_neighbours,
            page_deadline: Duration::from_secs(limits::OPERATION_DEADLINE_SECONDS),
            stream_deadline: Duration::from_secs(limits::CORPUS_STREAM_DEADLINE_SECONDS),
            store_page: STORE_PAGE,
        }
    }

    /// The stream of chunks: every entry once, then the end; or the chunks read so far
    /// and an error (the receiver must not take a cut corpus for a whole one). An empty
    /// graph still sends one chunk with its version. Reading stops when the receiver
    /// goes away.
    pub(crate) fn stream(self) -> ReceiverStream<Result<pb::CorpusChunk, Status>> {
        let (sender, receiver) = mpsc::channel(READ_AHEAD);
        let stream_deadline = self.stream_deadline;
        tokio::spawn(async move {
            let failed = sender.clone();
            let outcome = tokio::time::timeout(stream_deadline, self.send_all(&sender)).await;
            let error = match outcome {
                Ok(Ok(())) => return,
                Ok(Err(error)) => error,
                Err(_) => Error::new(
                    ErrorKind::DeadlineExceeded,
                    format!(
                        "the lexical corpus did not stream within its deadline of {} s",
                        stream_deadline.as_secs()
                    ),
                ),
            };
            let _ = failed.send(Err(error.to_status())).await;
        });
        ReceiverStream::new(receiver)
    }

    async fn send_all(
        &self,
        sender: &mpsc::Sender<Result<pb::CorpusChunk, Status>>,
    ) -> Result<(), Error> {
        let mut kinds = SYMBOL_KINDS.to_vec();
        kinds.push(NodeKind::ErrorMessage);
        kinds.push(NodeKind::StringLiteral);
        let mut cursor = String::new();
        let mut sent = false;
        // A backend may repeat a node across pages (the store's contract): each id once.
        let mut seen: HashSet<String> = HashSet::new();
        loop {
            let mut page = self
                .within_page_deadline(
                    "a page of the corpus",
                    self.store.nodes_of_kinds_page(
                        &self.graph_id,
                        &kinds,
                        &cursor,
                        self.store_page,
                    ),
                )
                .await?;
            page.nodes.retain(|n| seen.insert(n.id.clone()));
            let (uses, members) = if self.with_neighbours && !page.nodes.is_empty() {
                self.within_page_deadline(
                    "the neighbours' names of a page",
                    neighbours::names(self.store.as_ref(), &self.graph_id, &page.nodes),
                )
                .await?
            } else {
                Default::default()
            };
            let mut chunks: Vec<&[Node]> = page.nodes.chunks(CORPUS_CHUNK).collect();
            if chunks.is_empty() && page.next.is_none() && !sent {
                chunks.push(&[]);
            }
            for nodes in chunks {
                let chunk = pb::CorpusChunk {
                    version: self.version.clone(),
                    entries: nodes.iter().map(|n| entry(n, &uses, &members)).collect(),
                };
                if sender.send(Ok(chunk)).await.is_err() {
                    // The receiver went away: nobody reads the rest.
                    return Ok(());
                }
                sent = true;
            }
            match page.next {
                Some(next) => cursor = next,
                None => return Ok(()),
            }
        }
    }

    async fn within_page_deadline<T>(
        &self,
        what: &str,
        read: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        tokio::time::timeout(self.page_deadline, read)
            .await
            .map_err(|_| {
                Error::new(
                    ErrorKind::DeadlineExceeded,
                    format!(
                        "the graph store did not answer {what} within {} ms",
                        self.page_deadline.as_millis()
                    ),
                )
            })?
    }
}

/// One corpus entry: a symbol's names and metadata, or a literal's text.
fn entry(
    n: &Node,
    uses: &HashMap<String, Vec<String>>,
    members: &HashMap<String, Vec<String>>,
) -> pb::CorpusEntry {
    let literal = matches!(n.kind, NodeKind::ErrorMessage | NodeKind::StringLiteral);
    pb::CorpusEntry {
        entity_id: n.id.clone(),
        name: n.name.clone(),
        qualified_name: n.qualified_name.clone(),
        kind: n.kind.as_str().to_owned(),
        signature: n.signature.clone(),
        aliases: Vec::new(),
        error_messages: if literal {
            vec![n.name.clone()]
        } else {
            Vec::new()
        },
        // A literal's summary only names where it is raised.
        summary: if literal {
            String::new()
        } else {
            n.summary.clone()
        },
        facts: Vec::new(),
        predicates: Vec::new(),
        doc: n.doc.clone(),
        in_tests: n.test || is_test_path(&n.path) || is_test_name(&n.name),
        uses: uses.get(&n.id).cloned().unwrap_or_default(),
        members: members.get(&n.id).cloned().unwrap_or_default(),
        path: n.path.clone(),
        line: n.start_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codectx_graph::sqlite::SqliteGraphStore;
    use codectx_graph::{Confidence, Edge, EdgeKind, OwnerGraph, node_id};
    use tokio_stream::StreamExt;

    fn function(graph: &str, i: usize) -> Node {
        let name = format!("f{i:05}");
        Node {
            id: node_id(graph, NodeKind::Function, "a.py", &name, ""),
            kind: NodeKind::Function,
            name: name.clone(),
            qualified_name: format!("a.{name}"),
            language: "python".into(),
            path: "a.py".into(),
            start_line: i as u32 + 1,
            end_line: i as u32 + 1,
            signature: String::new(),
            summary: String::new(),
            fingerprint: String::new(),
            test: false,
            doc: String::new(),
        }
    }

    async fn collect(corpus: CodeCorpus) -> Vec<Result<pb::CorpusChunk, Status>> {
        corpus.stream().collect().await
    }

    /// A store holding one graph of 2,500 functions, each calling the next.
    async fn chain(dir: &std::path::Path) -> Arc<dyn Store> {
        let store: Arc<dyn Store> = Arc::new(SqliteGraphStore::open(&dir.join("g.db")).unwrap());
        let graph = "g1";
        let nodes: Vec<Node> = (0..2_500).map(|i| function(graph, i)).collect();
        // Each function calls the next: the names cross page boundaries.
        let edges: Vec<Edge> = nodes
            .windows(2)
            .map(|w| Edge {
                from: w[0].id.clone(),
                to: w[1].id.clone(),
                kind: EdgeKind::Calls,
                line: w[0].start_line,
                confidence: Confidence::Resolved,
            })
            .collect();
        store
            .replace_owners(
                graph,
                &[],
                vec![OwnerGraph {
                    owner: "a.py".into(),
                    hash: "h".into(),
                    nodes: nodes.clone(),
                    edges,
                }],
            )
            .await
            .unwrap();
        store
    }

    #[tokio::test]
    async fn streams_every_entry_once_in_pages_with_their_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let store = chain(dir.path()).await;
        let graph = "g1";
        let mut corpus = CodeCorpus::new(store.clone(), graph, "v1".into(), true);
        corpus.store_page = 700;
        let chunks = collect(corpus).await;
        assert_eq!(chunks.len(), 4);
        let mut seen = std::collections::HashSet::new();
        for chunk in chunks {
            let chunk = chunk.unwrap();
            assert_eq!(chunk.version, "v1");
            assert!(chunk.entries.len() <= CORPUS_CHUNK);
            for entry in chunk.entries {
                let next: usize = entry.name[1..].parse::<usize>().unwrap() + 1;
                if next < 2_500 {
                    assert_eq!(entry.uses, vec![format!("f{next:05}")], "{}", entry.name);
                } else {
                    assert!(entry.uses.is_empty());
                }
                assert!(seen.insert(entry.entity_id));
            }
        }
        assert_eq!(seen.len(), 2_500);

        // An empty graph still sends its version, once.
        let chunks = collect(CodeCorpus::new(store, "empty", "v0".into(), false)).await;
        assert_eq!(chunks.len(), 1);
        let chunk = chunks.into_iter().next().unwrap().unwrap();
        assert_eq!((chunk.version.as_str(), chunk.entries.len()), ("v0", 0));
    }

    #[tokio::test]
    async fn a_stream_past_its_deadline_ends_in_an_error_not_a_short_corpus() {
        let dir = tempfile::tempdir().unwrap();
        let store = chain(dir.path()).await;
        let mut corpus = CodeCorpus::new(store, "g1", "v1".into(), false);
        corpus.stream_deadline = Duration::from_millis(100);
        // Nobody reads: the two chunks read ahead fill the channel, the third waits past
        // the deadline.
        let stream = corpus.stream();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let chunks: Vec<_> = stream.collect().await;
        assert_eq!(chunks.len(), READ_AHEAD + 1);
        assert!(chunks[..READ_AHEAD].iter().all(|c| c.is_ok()));
        let last = chunks.last().unwrap().as_ref().unwrap_err();
        assert_eq!(last.code(), tonic::Code::DeadlineExceeded);
    }
}
