//! `describe_repository`: when the repository was indexed, which languages it holds, and
//! how deeply each is read, so an agent knows when to read files instead of asking.

use codectx_clients::GraphClient;
use codectx_core::languages::depth;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::graph::v1 as graph;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

use crate::code::Answer;

pub async fn describe_repository(
    graph: &GraphClient,
    context: &TenantContext,
) -> Result<Answer, Error> {
    let described = graph
        .describe_graph(context, graph::DescribeGraphRequest { languages: true })
        .await?;
    // Code languages first, by files; documents and manifests after them.
    let mut languages = described.languages.clone();
    languages.sort_by_key(|l| {
        (
            matches!(l.language.as_str(), "markdown" | "manifest"),
            std::cmp::Reverse(l.files),
        )
    });
    let languages: Vec<Value> = languages
        .into_iter()
        .map(|l| {
            let depth = depth(&l.language);
            json!({
                "language": l.language,
                "files": l.files,
                "symbols": l.symbols,
                "tests": l.tests,
                "depth": depth.as_str(),
                "reads": depth.reads(),
            })
        })
        .collect();
    let (json, tokens) = codectx_assemble::finalize(json!({
        "status": "ok",
        "repository": repository(&described),
        "languages": languages,
        "omitted": [],
        "tokens": 0
    }));
    Ok(Answer {
        status: AnswerStatus::Ok,
        json,
        tokens,
    })
}

/// The repository object: what was indexed, under which policy, and whether the
/// checkout has moved past it.
fn repository(described: &graph::DescribeGraphResponse) -> Value {
    let mut repository = json!({
        "name": described.name,
        "commit": described.commit,
        "indexed_at": described.indexed_at,
        "version": described.version,
    });
    if !described.policy_fingerprint.is_empty() {
        repository["policy_fingerprint"] = Value::from(described.policy_fingerprint.clone());
        repository["annotations"] = Value::from(described.annotations);
    }
    if described.stale {
        let index = crate::freshness::index_value(described);
        for key in ["stale", "stale_seconds", "stale_reason"] {
            repository[key] = index[key].clone();
        }
    }
    repository
}
