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
        .describe_graph(context, graph::DescribeGraphRequest {})
        .await?;
    // Code languages first, by files; documents and manifests after them.
    let mut languages = described.languages;
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
        "repository": {
            "name": described.name,
            "commit": described.commit,
            "indexed_at": described.indexed_at,
        },
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
