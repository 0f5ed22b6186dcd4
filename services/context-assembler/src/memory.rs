//! Answers about agent memory: remember, forget, recall. Recall is hybrid: the lexical
//! leg (BM25 over names, aliases, types) and the dense leg (embed the query, nearest
//! vectors) run concurrently; the dense leg has 2 s and any failure falls back to
//! lexical-only, recorded in provenance. Ranks fuse with RRF (k = 60), candidates are
//! hydrated through the graph (deleted or foreign ids are dropped), and facts expand up to
//! 2 hops, within 8 entries, 80 facts and 32 KiB.

use std::collections::HashMap;
use std::time::Duration;

use codectx_assemble::{Leg, finalize, fuse};
use codectx_clients::{EmbeddingClient, GraphClient, LexicalClient, VectorClient};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::common::v1::AnswerStatus;
use codectx_proto::embedding::v1::{EmbedPurpose, EmbedRequest};
use codectx_proto::graph::v1 as graph;
use codectx_proto::lexical::v1 as lexical;
use codectx_proto::vector::v1 as vector;
use codectx_tenant::TenantContext;
use serde_json::{Value, json};

use crate::code::Answer;

/// Shown with every recall: memory is what agents wrote, not verified fact.
pub const NOTICE: &str =
    "Memory is written by agents; treat it as notes to verify, not as ground truth.";

/// Cosine similarity below which a dense hit is not a match: without a floor the dense
/// leg returns its 10 nearest neighbours for any query, and a question about what
/// nobody remembered could never come back empty. Calibrated on a labelled set apart
/// from the memory workload (`codectx bench calibrate`, bench/calibration/memory.json:
/// 224 queries, 43% with no answer; one vector for the names and one per fact, an
/// entity scoring its best part): 0.45 answered 82.6% right; one text of names and
/// facts did best at 0.4 (76.3%), names alone at 0.45 (64.3%) (docs/BENCHMARKS.md).
pub const DENSE_MIN_SIMILARITY: f64 = 0.45;

pub struct Legs<'a> {
    pub graph: &'a GraphClient,
    pub lexical: &'a LexicalClient,
    pub embedding: &'a EmbeddingClient,
    pub vectors: &'a VectorClient,
    pub backfill: &'a Backfill,
    pub retrieval: crate::RetrievalLegs,
}

/// Entities `remember` stored without a vector (the dense leg was down), per tenant and
/// namespace, embedded as soon as a later remember or recall in the same namespace finds
/// the dense leg working (it brings a fresh context for that namespace). In process: a
/// restart forgets the queue, and such entities stay lexical-only until remembered again
/// (the graph, which is authoritative, has them either way).
#[derive(Debug, Default)]
pub struct Backfill {
    pending: std::sync::Mutex<HashMap<(String, String), Vec<graph::MemoryEntity>>>,
}

impl Backfill {
    fn key(context: &TenantContext) -> (String, String) {
        (
            context.tenant_id().to_owned(),
            context.namespace().to_owned(),
        )
    }

    fn add(&self, context: &TenantContext, entity: graph::MemoryEntity) {
        let mut pending = self.pending.lock().expect("backfill lock");
        let queue = pending.entry(Self::key(context)).or_default();
        queue.retain(|e| e.id != entity.id);
        if queue.len() < limits::MEMORY_ENTITIES_PER_NAMESPACE {
            queue.push(entity);
        }
    }

    fn take(&self, context: &TenantContext) -> Vec<graph::MemoryEntity> {
        self.pending
            .lock()
            .expect("backfill lock")
            .remove(&Self::key(context))
            .unwrap_or_default()
    }

    fn remove(&self, context: &TenantContext, id: &str) {
        if let Some(queue) = self
            .pending
            .lock()
            .expect("backfill lock")
            .get_mut(&Self::key(context))
        {
            queue.retain(|e| e.id != id);
        }
    }

    /// Entities waiting for a vector in the context's namespace.
    pub fn len(&self, context: &TenantContext) -> usize {
        self.pending
            .lock()
            .expect("backfill lock")
            .get(&Self::key(context))
            .map_or(0, Vec::len)
    }
}

/// Embeds the namespace's pending entities that still exist; failures go back in the
/// queue. Returns how many got their vector.
pub async fn run_backfill(legs: &Legs<'_>, context: &TenantContext) -> usize {
    let pending = legs.backfill.take(context);
    if pending.is_empty() {
        return 0;
    }
    // Entities forgotten meanwhile are dropped: only what the graph still has is embedded.
    let ids = pending.iter().map(|e| e.id.clone()).collect();
    let current = match legs
        .graph
        .hydrate_memory_entities(context, graph::HydrateMemoryEntitiesRequest { ids })
        .await
    {
        Ok(found) => found.entities,
        Err(error) => {
            tracing::warn!(%error, "memory backfill postponed");
            for entity in pending {
                legs.backfill.add(context, entity);
            }
            return 0;
        }
    };
    let mut done = 0;
    for entity in current {
        match embed_and_store(legs, context, &entity).await {
            Ok(()) => done += 1,
            Err(error) => {
                tracing::warn!(%error, "memory backfill postponed");
                legs.backfill.add(context, entity);
            }
        }
    }
    if done > 0 {
        tracing::info!(entities = done, "memory backfill embedded pending entities");
    }
    done
}

fn done(status: AnswerStatus, value: Value) -> Answer {
    let (json, tokens) = finalize(value);
    Answer {
        status,
        json,
        tokens,
    }
}

/// Embeds approved entity text and stores the vector. Errors are returned for the caller
/// to record; the graph write already happened.
async fn embed_and_store(
    legs: &Legs<'_>,
    context: &TenantContext,
    entity: &graph::MemoryEntity,
) -> Result<(), Error> {
    // Its own current facts are part of its text (ADR 0009): a question about what a
    // fact says reaches the entity, and a superseded value leaves the text.
    let facts = current_facts(legs, context, &entity.id).await?;
    let own: Vec<(String, String)> = facts
        .facts
        .iter()
        .filter(|f| f.subject_id == entity.id)
        .filter_map(|f| {
            f.fact
                .as_ref()
                .map(|fact| (fact.predicate.clone(), fact.object.clone()))
        })
        .collect();
    let texts = codectx_core::embedding_text::memory_parts(
        &entity.name,
        &entity.aliases,
        &entity.r#type,
        &own,
    );
    let embedded = tokio::time::timeout(
        Duration::from_secs(limits::DENSE_LEG_DEADLINE_SECONDS),
        legs.embedding.embed(
            context,
            EmbedRequest {
                texts: texts.clone(),
                purpose: EmbedPurpose::Entity as i32,
            },
        ),
    )
    .await
    .map_err(|_| Error::unavailable("embedding timed out"))??;
    let records: Vec<vector::VectorRecord> = embedded
        .embeddings
        .into_iter()
        .enumerate()
        .filter_map(|(index, e)| {
            Some(vector::VectorRecord {
                entity_id: codectx_core::embedding_text::memory_part_id(&entity.id, index)?,
                values: e.values,
                // Memory is not in native hybrid search (its lexical leg is the corpus).
                text: String::new(),
            })
        })
        .collect();
    let kept = records.len();
    legs.vectors
        .upsert(
            context,
            vector::UpsertRequest {
                model: embedded.model,
                records,
                scope: vector::VectorScopeKind::Memory as i32,
            },
        )
        .await?;
    // Parts of facts the entity no longer has (superseded or fewer) go.
    let stale: Vec<String> = codectx_core::embedding_text::memory_part_ids(&entity.id)
        .into_iter()
        .skip(kept)
        .collect();
    legs.vectors
        .delete(
            context,
            vector::DeleteRequest {
                entity_ids: stale,
                scope: vector::VectorScopeKind::Memory as i32,
            },
        )
        .await?;
    Ok(())
}

/// `remember`: the graph is written first (authoritative); the vector follows. If the
/// dense leg is down, the answer says the embedding is pending and recall still finds the
/// entity lexically.
pub async fn remember(
    legs: &Legs<'_>,
    context: &TenantContext,
    request: codectx_proto::assembler::v1::RememberRequest,
) -> Result<Answer, Error> {
    if request.r#type.trim().is_empty() {
        return Err(Error::invalid_argument(
            "type",
            "type is required (e.g. service, person, decision)",
        ));
    }
    // Entities named as the subject of a fact gained a fact of their own: their text
    // changes too.
    let other_subjects: Vec<String> = request
        .facts
        .iter()
        .map(|f| f.subject.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let stored = legs
        .graph
        .upsert_memory_entities(
            context,
            graph::UpsertMemoryEntitiesRequest {
                entities: vec![graph::MemoryEntityInput {
                    name: request.entity,
                    r#type: request.r#type,
                    aliases: request.aliases,
                    facts: request
                        .facts
                        .into_iter()
                        .map(|f| graph::MemoryFactInput {
                            predicate: f.predicate,
                            object: f.object,
                            subject: f.subject,
                        })
                        .collect(),
                }],
                source_client: request.source_client,
            },
        )
        .await?;
    let Some(entity) = stored.entities.into_iter().next() else {
        return Err(Error::internal("the graph stored no entity"));
    };
    let embedding = match embed_and_store(legs, context, &entity).await {
        Ok(()) => {
            run_backfill(legs, context).await;
            "stored"
        }
        Err(error) => {
            tracing::warn!(%error, "memory entity stored without a vector; recall finds it lexically until the backfill embeds it");
            legs.backfill.add(context, entity.clone());
            "pending"
        }
    };
    // What was kept, as memory now holds it: the entity's current facts, its own and
    // those naming it (a superseded value is gone from here too).
    let stored_facts = current_facts(legs, context, &entity.id).await?;
    let facts: Vec<Value> = stored_facts
        .facts
        .iter()
        .filter_map(|f| {
            let fact = f.fact.as_ref()?;
            Some(json!({"subject": f.subject, "predicate": fact.predicate, "object": fact.object}))
        })
        .collect();
    if !other_subjects.is_empty() && embedding == "stored" {
        let ids: Vec<String> = stored_facts
            .facts
            .iter()
            .filter(|f| f.subject_id != entity.id && other_subjects.contains(&f.subject))
            .map(|f| f.subject_id.clone())
            .collect();
        let subjects = legs
            .graph
            .hydrate_memory_entities(context, graph::HydrateMemoryEntitiesRequest { ids })
            .await?;
        for subject in subjects.entities {
            if let Err(error) = embed_and_store(legs, context, &subject).await {
                tracing::warn!(%error, "a fact's subject keeps its earlier vector until the backfill");
                legs.backfill.add(context, subject);
            }
        }
    }
    Ok(done(
        AnswerStatus::Ok,
        json!({
            "status": "ok",
            "entries": [{"name": entity.name, "type": entity.r#type, "aliases": entity.aliases}],
            "facts": facts,
            "embedding": embedding,
            "omitted": [],
            "tokens": 0
        }),
    ))
}

/// `forget`: the entity, its aliases and facts from the graph, its vectors from every
/// model's collection.
pub async fn forget(legs: &Legs<'_>, context: &TenantContext, name: &str) -> Result<Answer, Error> {
    let forgotten = legs
        .graph
        .forget_memory_entity(
            context,
            graph::ForgetMemoryEntityRequest { name: name.into() },
        )
        .await?;
    legs.backfill.remove(context, &forgotten.entity_id);
    if forgotten.entity_id.is_empty() {
        return Ok(done(
            AnswerStatus::NotFound,
            json!({"status": "not_found", "entries": [], "omitted": [], "suggestion": "no entity by that name or alias", "tokens": 0}),
        ));
    }
    let vectors = match legs
        .vectors
        .delete(
            context,
            vector::DeleteRequest {
                entity_ids: codectx_core::embedding_text::memory_part_ids(&forgotten.entity_id),
                scope: vector::VectorScopeKind::Memory as i32,
            },
        )
        .await
    {
        Ok(_) => "deleted",
        Err(error) => {
            // The graph is authoritative: recall drops ids it no longer has.
            tracing::warn!(%error, "vectors of a forgotten entity not deleted now");
            "pending"
        }
    };
    Ok(done(
        AnswerStatus::Ok,
        json!({"status": "ok", "entries": [], "forgotten": name, "facts_removed": forgotten.facts_removed, "vectors": vectors, "omitted": [], "tokens": 0}),
    ))
}

/// `recall`: hybrid retrieval over the namespace's memory.
pub async fn recall(
    legs: &Legs<'_>,
    context: &TenantContext,
    query: &str,
    max_entries: u32,
    hops: u32,
) -> Result<Answer, Error> {
    if query.trim().is_empty() {
        return Err(Error::invalid_argument("query", "query is empty"));
    }
    limits::check_bytes("query", query, limits::RECALL_QUERY_BYTES)?;
    let max_entries = if max_entries == 0 {
        limits::RECALL_MAX_ENTRIES
    } else {
        (max_entries as usize).min(limits::RECALL_MAX_ENTRIES)
    };
    let hops = if hops == 0 {
        limits::RECALL_MAX_HOPS
    } else {
        hops.min(limits::RECALL_MAX_HOPS)
    };

    let lexical_leg = async {
        if !legs.retrieval.lexical() {
            return Ok(lexical::CandidateList::default());
        }
        legs.lexical
            .rank(
                context,
                lexical::RankRequest {
                    production_only: false,
                    scope: lexical::ScopeKind::Memory as i32,
                    query: query.into(),
                    limit: limits::CANDIDATES_PER_LEG as u32,
                    kinds: vec![],
                    // Memory changes with every write: the ranker asks.
                    corpus_version: String::new(),
                },
            )
            .await
    };
    let dense_leg = async {
        if !legs.retrieval.dense() {
            return Ok(Vec::new());
        }
        tokio::time::timeout(
            Duration::from_secs(limits::DENSE_LEG_DEADLINE_SECONDS),
            crate::dense::nearest(
                legs.embedding,
                legs.vectors,
                context,
                query,
                vector::VectorScopeKind::Memory,
                limits::CANDIDATES_PER_LEG,
            ),
        )
        .await
        .map_err(|_| Error::unavailable("dense leg timed out after 2 s"))?
    };
    let (lexical_result, dense_result) = tokio::join!(lexical_leg, dense_leg);
    let mut ranked = lexical_result?;
    ranked.candidates.retain(|c| legs.retrieval.keeps(c.exact));
    let mut degraded = Vec::new();
    let dense: Vec<String> = match dense_result {
        Ok(found) => {
            // The dense leg works again: embed what waited (answered next time).
            if legs.backfill.len(context) > 0 {
                run_backfill(legs, context).await;
            }
            // Nearest neighbours always exist; only similar ones are evidence. A part's
            // vector (one per fact) stands for its entity, ranked by its best part.
            let mut owners: Vec<String> = Vec::new();
            for hit in found
                .into_iter()
                .filter(|h| h.score >= DENSE_MIN_SIMILARITY)
            {
                let owner = codectx_core::embedding_text::memory_part_owner(&hit.entity_id);
                if !owners.contains(&owner) {
                    owners.push(owner);
                }
            }
            owners
        }
        Err(error) => {
            codectx_telemetry::record_fallback(codectx_telemetry::FallbackLeg::Vector);
            degraded.push(format!("vector: {}", error.message()));
            Vec::new()
        }
    };
    let exact: Vec<String> = ranked
        .candidates
        .iter()
        .filter(|c| c.exact)
        .map(|c| c.entity_id.clone())
        .collect();
    let named: Vec<String> = ranked
        .candidates
        .iter()
        .filter(|c| !c.exact)
        .map(|c| c.entity_id.clone())
        .collect();
    let fused = fuse(
        &exact,
        &[(Leg::Name, named), (Leg::Vector, dense)],
        2 * limits::CANDIDATES_PER_LEG,
    );
    let ids: Vec<String> = fused.iter().map(|f| f.id.clone()).collect();
    let hydrated = legs
        .graph
        .hydrate_memory_entities(context, graph::HydrateMemoryEntitiesRequest { ids })
        .await?;
    let by_id: std::collections::HashMap<&str, &graph::MemoryEntity> = hydrated
        .entities
        .iter()
        .map(|e| (e.id.as_str(), e))
        .collect();
    let mut entries = Vec::new();
    let mut kept = Vec::new();
    for candidate in &fused {
        // Deleted or foreign ids from stale search data are dropped here.
        let Some(entity) = by_id.get(candidate.id.as_str()) else {
            continue;
        };
        if entries.len() >= max_entries {
            break;
        }
        let found_by: Vec<String> = candidate
            .legs
            .iter()
            .map(|l| format!("{l:?}").to_lowercase())
            .collect();
        entries.push(json!({"name": entity.name, "type": entity.r#type, "aliases": entity.aliases, "found_by": found_by}));
        kept.push(entity.id.clone());
    }
    if entries.is_empty() {
        return Ok(done(
            AnswerStatus::NotFound,
            json!({"status": "not_found", "entries": [], "omitted": [], "notice": NOTICE, "provenance": {"degraded": degraded}, "tokens": 0}),
        ));
    }
    let facts = legs
        .graph
        .expand_facts(
            context,
            graph::ExpandFactsRequest {
                ids: kept,
                hops,
                fact_limit: limits::RECALL_MAX_FACTS as u32,
            },
        )
        .await?;
    let mut fact_values: Vec<Value> = facts
        .facts
        .iter()
        .filter_map(|f| {
            let fact = f.fact.as_ref()?;
            Some(json!({"subject": f.subject, "predicate": fact.predicate, "object": fact.object, "hop": f.hop}))
        })
        .collect();
    let mut truncated = facts.truncated;
    let mut answer = json!({
        "status": "ok",
        "entries": entries,
        "facts": fact_values,
        "truncated": truncated,
        "notice": NOTICE,
        "omitted": [],
        "provenance": {"legs": ["exact", "name", "vector"], "degraded": degraded},
        "tokens": 0
    });
    // 32 KiB of JSON at most: facts go first, then entries.
    while answer.to_string().len() > limits::RECALL_MAX_BYTES {
        truncated = true;
        if !fact_values.is_empty() {
            fact_values.pop();
            answer["facts"] = Value::from(fact_values.clone());
        } else if answer["entries"].as_array().is_some_and(|e| e.len() > 1) {
            answer["entries"].as_array_mut().expect("array").pop();
        } else {
            break;
        }
        answer["truncated"] = Value::from(truncated);
    }
    let status = if truncated {
        AnswerStatus::Truncated
    } else {
        AnswerStatus::Ok
    };
    answer["status"] = Value::from(if truncated { "truncated" } else { "ok" });
    Ok(done(status, answer))
}

/// An entity's current facts, its own and those naming it (one hop).
async fn current_facts(
    legs: &Legs<'_>,
    context: &TenantContext,
    id: &str,
) -> Result<graph::ExpandFactsResponse, Error> {
    legs.graph
        .expand_facts(
            context,
            graph::ExpandFactsRequest {
                ids: vec![id.to_owned()],
                hops: 1,
                fact_limit: limits::RECALL_MAX_FACTS as u32,
            },
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use codectx_tenant::{Claims, Minter, Scope, SigningKey};

    fn context(tenant: &str, graph: &str) -> TenantContext {
        let minter = Minter::new(SigningKey::from_seed("k1", [7u8; 32]));
        minter
            .mint(&Claims {
                tenant_id: tenant.into(),
                subject_id: "sub_0123456789abcdef0123456789abcdef".into(),
                repository_id: "repo_0123456789abcdef0123456789abcdef".into(),
                graph_id: graph.into(),
                scopes: vec![Scope::ReadMemory, Scope::WriteMemory],
                policy_revision: 1,
            })
            .unwrap()
    }

    fn entity(id: &str) -> graph::MemoryEntity {
        graph::MemoryEntity {
            id: id.into(),
            name: id.into(),
            ..Default::default()
        }
    }

    #[test]
    fn backfill_is_per_namespace_and_forgets_forgotten_entities() {
        let backfill = Backfill::default();
        let a = context(
            "org_a0000000000000000000000000000000",
            "gph_00000000000000000000000000000001",
        );
        let b = context(
            "org_b0000000000000000000000000000000",
            "gph_00000000000000000000000000000001",
        );
        backfill.add(&a, entity("m1"));
        backfill.add(&a, entity("m2"));
        backfill.add(&a, entity("m1"));
        assert_eq!(backfill.len(&a), 2, "an entity waits once");
        assert_eq!(
            backfill.len(&b),
            0,
            "another tenant's namespace is separate"
        );
        backfill.remove(&a, "m2");
        let taken: Vec<String> = backfill.take(&a).into_iter().map(|e| e.id).collect();
        assert_eq!(taken, vec!["m1"]);
        assert_eq!(backfill.len(&a), 0);
    }

    #[test]
    fn backfill_holds_at_most_a_namespace_of_entities() {
        let backfill = Backfill::default();
        let a = context(
            "org_a0000000000000000000000000000000",
            "gph_00000000000000000000000000000001",
        );
        for i in 0..limits::MEMORY_ENTITIES_PER_NAMESPACE + 10 {
            backfill.add(&a, entity(&format!("m{i}")));
        }
        assert_eq!(backfill.len(&a), limits::MEMORY_ENTITIES_PER_NAMESPACE);
    }
}
