//! Every code answer says which graph it was read from: the indexed commit (or, for a
//! checkout without git, the graph's content version) as `index`, and when the checkout
//! has moved past it, `stale` with how long ago and why, so an agent never takes old
//! code for current without being told.
//!
//! The graph-hydrator's `DescribeGraph` knows both; it is asked at most once a second per
//! graph ([`TTL`]), and the value reaches the answer builders through a task-local set
//! around each code operation ([`with_index`]), so every envelope, including `not_found`
//! and `budget_exceeded`, carries it and it counts against the budget like any field.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use codectx_clients::GraphClient;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

/// How long a graph's freshness is reused: answers notice a re-index or a watcher's
/// mark within this.
pub const TTL: Duration = Duration::from_secs(1);

/// Characters of a commit or version shown (enough to name it in a repository).
const SHORT: usize = 12;

tokio::task_local! {
    static INDEX: Option<Indexed>;
}

/// What a code operation knows of its graph: the `index` value answers carry, and the
/// full content version (the lexical ranker's cache key, `corpus_version`).
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    pub value: Value,
    pub version: String,
}

/// The `index` value of a described graph.
pub fn index_value(described: &graph::DescribeGraphResponse) -> Value {
    let mut index = if described.commit.is_empty() {
        json!({"version": short(&described.version)})
    } else {
        json!({"commit": short(&described.commit)})
    };
    if described.stale {
        index["stale"] = Value::from(true);
        index["stale_seconds"] = Value::from(described.stale_seconds);
        index["stale_reason"] = Value::from(described.stale_reason.clone());
    }
    index
}

fn short(text: &str) -> &str {
    let mut end = text.len().min(SHORT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Adds `index` to an answer being built, inside [`with_index`].
pub fn stamp(answer: &mut Value) {
    let _ = INDEX.try_with(|index| {
        if let (Some(index), Some(object)) = (index, answer.as_object_mut()) {
            object.insert("index".into(), index.value.clone());
        }
    });
}

/// The graph's content version inside [`with_index`] (empty outside, or unknown).
pub fn corpus_version() -> String {
    INDEX
        .try_with(|index| index.as_ref().map(|i| i.version.clone()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Runs a code operation with the graph's freshness available to [`stamp`] and
/// [`corpus_version`].
pub async fn with_index<T>(index: Option<Indexed>, work: impl Future<Output = T>) -> T {
    INDEX.scope(index, work).await
}

/// Freshness per graph, for [`TTL`].
#[derive(Default)]
pub struct Freshness {
    cache: Mutex<HashMap<String, (Instant, Indexed)>>,
}

impl Freshness {
    /// The graph's `index` value; None when the graph cannot be described (the answer
    /// itself then says why, or goes without it).
    pub async fn index(&self, client: &GraphClient, context: &TenantContext) -> Option<Indexed> {
        let graph_id = context.graph_id();
        if let Some((_, value)) = self
            .cache
            .lock()
            .expect("freshness lock")
            .get(graph_id)
            .filter(|(at, _)| at.elapsed() < TTL)
        {
            return Some(value.clone());
        }
        let described = match client
            .describe_graph(context, graph::DescribeGraphRequest { languages: false })
            .await
        {
            Ok(described) => described,
            Err(error) => {
                tracing::debug!(%error, "the graph's freshness is unknown");
                return None;
            }
        };
        let indexed = Indexed {
            value: index_value(&described),
            version: described.version,
        };
        let mut cache = self.cache.lock().expect("freshness lock");
        cache.retain(|_, (at, _)| at.elapsed() < TTL);
        cache.insert(graph_id.to_owned(), (Instant::now(), indexed.clone()));
        Some(indexed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_the_commit_or_the_version_and_staleness_only_when_stale() {
        let fresh = graph::DescribeGraphResponse {
            commit: "0123456789abcdef".into(),
            version: "v".repeat(64),
            ..Default::default()
        };
        assert_eq!(index_value(&fresh), json!({"commit": "0123456789ab"}));
        let stale = graph::DescribeGraphResponse {
            commit: String::new(),
            stale: true,
            stale_seconds: 42,
            stale_reason: "files changed".into(),
            ..fresh
        };
        assert_eq!(
            index_value(&stale),
            json!({"version": "vvvvvvvvvvvv", "stale": true, "stale_seconds": 42, "stale_reason": "files changed"})
        );
    }

    #[tokio::test]
    async fn stamp_adds_the_scoped_index_and_nothing_outside_a_scope() {
        let mut outside = json!({"status": "ok"});
        stamp(&mut outside);
        assert_eq!(outside, json!({"status": "ok"}));
        assert_eq!(corpus_version(), "");
        let indexed = Indexed {
            value: json!({"commit": "abc"}),
            version: "v1".into(),
        };
        let (inside, version) = with_index(Some(indexed), async {
            let mut answer = json!({"status": "ok"});
            stamp(&mut answer);
            (answer, corpus_version())
        })
        .await;
        assert_eq!(inside["index"], json!({"commit": "abc"}));
        assert_eq!(version, "v1");
    }
}
