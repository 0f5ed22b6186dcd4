//! Agent memory on Neo4j 5.26: `:MemoryEntity` nodes and `[:FACT]` relationships, every
//! match bound to the tenant and namespace on both endpoints and on the fact itself.

use async_trait::async_trait;
use codectx_core::limits;
use codectx_errors::Error;
use neo4rs::{Query, Txn, query};
use serde::Deserialize;

use crate::memory::{
    EntityInput, FactRow, FactWalk, MemoryDocument, MemoryEntity, MemoryFact, MemoryStore,
    VALUE_TYPE, documents, entity_id, validate,
};
use crate::neo4j::Neo4jGraphStore;

pub(crate) const MEMORY_SCHEMA: &[&str] = &[
    "CREATE CONSTRAINT memory_entity_identity IF NOT EXISTS FOR (e:MemoryEntity) REQUIRE (e.tenant_id, e.namespace, e.id) IS UNIQUE",
    "CREATE INDEX memory_entity_scope IF NOT EXISTS FOR (e:MemoryEntity) ON (e.tenant_id, e.namespace)",
    "CREATE CONSTRAINT memory_version_identity IF NOT EXISTS FOR (v:MemoryVersion) REQUIRE (v.tenant_id, v.namespace) IS UNIQUE",
];

fn backend(error: impl std::fmt::Display) -> Error {
    Error::unavailable(format!("memory store (neo4j): {error}"))
}

#[derive(Debug, Deserialize)]
struct EntityRow {
    id: String,
    name: String,
    entity_type: String,
    aliases: Vec<String>,
    created_at: i64,
    updated_at: i64,
}

impl From<EntityRow> for MemoryEntity {
    fn from(r: EntityRow) -> Self {
        MemoryEntity {
            id: r.id,
            name: r.name,
            entity_type: r.entity_type,
            aliases: r.aliases,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const ENTITY_RETURN: &str = "e.id AS id, e.name AS name, e.entity_type AS entity_type, e.aliases AS aliases, e.created_at AS created_at, e.updated_at AS updated_at";

async fn rows<T: for<'de> Deserialize<'de>>(txn: &mut Txn, q: Query) -> Result<Vec<T>, Error> {
    let mut stream = txn.execute(q).await.map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = stream.next(txn.handle()).await.map_err(backend)? {
        out.push(row.to::<T>().map_err(backend)?);
    }
    Ok(out)
}

#[derive(Debug, Deserialize)]
struct IdRow {
    id: String,
}

#[derive(Debug, Deserialize)]
struct CountRow {
    total: i64,
}

fn scoped(q: &str, tenant: &str, namespace: &str) -> Query {
    query(q)
        .param("tenant_id", tenant)
        .param("namespace", namespace)
}

async fn find(
    txn: &mut Txn,
    tenant: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<String>, Error> {
    let by_name: Vec<IdRow> = rows(
        txn,
        scoped("MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $id}) RETURN e.id AS id", tenant, namespace)
            .param("id", entity_id(namespace, name)),
    )
    .await?;
    if let Some(row) = by_name.into_iter().next() {
        return Ok(Some(row.id));
    }
    let by_alias: Vec<IdRow> = rows(
        txn,
        scoped(
            "MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace}) WHERE $alias IN e.aliases RETURN e.id AS id ORDER BY e.id LIMIT 1",
            tenant,
            namespace,
        )
        .param("alias", name),
    )
    .await?;
    Ok(by_alias.into_iter().next().map(|r| r.id))
}

async fn bump(txn: &mut Txn, tenant: &str, namespace: &str) -> Result<(), Error> {
    txn.run(scoped(
        "MERGE (v:MemoryVersion {tenant_id: $tenant_id, namespace: $namespace}) ON CREATE SET v.version = 1 ON MATCH SET v.version = v.version + 1",
        tenant,
        namespace,
    ))
    .await
    .map_err(backend)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn ensure(
    txn: &mut Txn,
    tenant: &str,
    namespace: &str,
    name: &str,
    entity_type: &str,
    aliases: &[String],
    count: &mut usize,
    now: i64,
) -> Result<String, Error> {
    let name = name.trim();
    if let Some(id) = find(txn, tenant, namespace, name).await? {
        if !entity_type.is_empty() || !aliases.is_empty() {
            txn.run(
                scoped(
                    "MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $id})
                     SET e.entity_type = CASE WHEN $entity_type = '' THEN e.entity_type ELSE $entity_type END,
                         e.aliases = e.aliases + [a IN $aliases WHERE NOT a IN e.aliases],
                         e.updated_at = $now",
                    tenant,
                    namespace,
                )
                .param("id", id.clone())
                .param("entity_type", entity_type)
                .param("aliases", aliases.to_vec())
                .param("now", now),
            )
            .await
            .map_err(backend)?;
        }
        return Ok(id);
    }
    if *count >= limits::MEMORY_ENTITIES_PER_NAMESPACE {
        return Err(Error::limit_exceeded(
            "entities",
            (*count + 1) as u64,
            limits::MEMORY_ENTITIES_PER_NAMESPACE as u64,
            "entities",
        )
        .with_field("entity"));
    }
    *count += 1;
    let id = entity_id(namespace, name);
    txn.run(
        scoped(
            "CREATE (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $id, name: $name,
                                     entity_type: $entity_type, aliases: $aliases, created_at: $now, updated_at: $now})",
            tenant,
            namespace,
        )
        .param("id", id.clone())
        .param("name", name)
        .param("entity_type", if entity_type.is_empty() { VALUE_TYPE } else { entity_type })
        .param("aliases", aliases.to_vec())
        .param("now", now),
    )
    .await
    .map_err(backend)?;
    Ok(id)
}

#[async_trait]
impl MemoryStore for Neo4jGraphStore {
    async fn remember(
        &self,
        tenant_id: &str,
        namespace: &str,
        inputs: &[EntityInput],
        source_client: &str,
        now: i64,
    ) -> Result<Vec<MemoryEntity>, Error> {
        for input in inputs {
            validate(input)?;
        }
        let mut txn = self.graph().start_txn().await.map_err(backend)?;
        let counted: Vec<CountRow> = rows(
            &mut txn,
            scoped("MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace}) RETURN count(e) AS total", tenant_id, namespace),
        )
        .await?;
        let mut count = counted.first().map_or(0, |c| c.total.max(0) as usize);
        let mut touched = Vec::new();
        for input in inputs {
            let subject = ensure(
                &mut txn,
                tenant_id,
                namespace,
                &input.name,
                &input.entity_type,
                &input.aliases,
                &mut count,
                now,
            )
            .await?;
            touched.push(subject.clone());
            for fact in &input.facts {
                let predicate = &fact.predicate;
                let (subject_name, object_name) = fact.ends(input.name.trim());
                let subject = if subject_name == input.name.trim() {
                    subject.clone()
                } else {
                    ensure(
                        &mut txn,
                        tenant_id,
                        namespace,
                        subject_name,
                        "",
                        &[],
                        &mut count,
                        now,
                    )
                    .await?
                };
                let object_id = ensure(
                    &mut txn,
                    tenant_id,
                    namespace,
                    object_name,
                    "",
                    &[],
                    &mut count,
                    now,
                )
                .await?;
                let refreshed: Vec<CountRow> = rows(
                    &mut txn,
                    scoped(
                        "MATCH (s:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $subject})
                               -[f:FACT {tenant_id: $tenant_id, namespace: $namespace, predicate: $predicate}]->
                               (o:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $object})
                         WHERE f.valid_to IS NULL
                         SET f.updated_at = $now, f.source_client = $source
                         RETURN count(f) AS total",
                        tenant_id,
                        namespace,
                    )
                    .param("subject", subject.clone())
                    .param("object", object_id.clone())
                    .param("predicate", predicate.as_str())
                    .param("source", source_client)
                    .param("now", now),
                )
                .await?;
                if refreshed.first().is_none_or(|c| c.total == 0) {
                    txn.run(
                        scoped(
                            "MATCH (s:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $subject})
                                   -[f:FACT {tenant_id: $tenant_id, namespace: $namespace, predicate: $predicate}]->
                                   (:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                             WHERE f.valid_to IS NULL
                             SET f.valid_to = $now, f.updated_at = $now",
                            tenant_id,
                            namespace,
                        )
                        .param("subject", subject.clone())
                        .param("predicate", predicate.as_str())
                        .param("now", now),
                    )
                    .await
                    .map_err(backend)?;
                    txn.run(
                        scoped(
                            "MATCH (s:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $subject})
                             MATCH (o:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $object})
                             CREATE (s)-[:FACT {tenant_id: $tenant_id, namespace: $namespace, predicate: $predicate,
                                                source_client: $source, confidence: 1.0, created_at: $now, updated_at: $now}]->(o)",
                            tenant_id,
                            namespace,
                        )
                        .param("subject", subject.clone())
                        .param("object", object_id.clone())
                        .param("predicate", predicate.as_str())
                        .param("source", source_client)
                        .param("now", now),
                    )
                    .await
                    .map_err(backend)?;
                }
            }
        }
        bump(&mut txn, tenant_id, namespace).await?;
        let mut out = Vec::new();
        for id in &touched {
            let found: Vec<EntityRow> = rows(
                &mut txn,
                scoped(
                    &format!("MATCH (e:MemoryEntity {{tenant_id: $tenant_id, namespace: $namespace, id: $id}}) RETURN {ENTITY_RETURN}"),
                    tenant_id,
                    namespace,
                )
                .param("id", id.as_str()),
            )
            .await?;
            out.extend(found.into_iter().map(MemoryEntity::from));
        }
        txn.commit().await.map_err(backend)?;
        Ok(out)
    }

    async fn forget(
        &self,
        tenant_id: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<(String, usize)>, Error> {
        let mut txn = self.graph().start_txn().await.map_err(backend)?;
        let Some(id) = find(&mut txn, tenant_id, namespace, name.trim()).await? else {
            txn.rollback().await.map_err(backend)?;
            return Ok(None);
        };
        let facts: Vec<CountRow> = rows(
            &mut txn,
            scoped(
                "MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $id})
                 OPTIONAL MATCH (e)-[f:FACT {tenant_id: $tenant_id, namespace: $namespace}]-(:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                 RETURN count(f) AS total",
                tenant_id,
                namespace,
            )
            .param("id", id.as_str()),
        )
        .await?;
        txn.run(
            scoped("MATCH (e:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, id: $id}) DETACH DELETE e", tenant_id, namespace)
                .param("id", id.as_str()),
        )
        .await
        .map_err(backend)?;
        // Values no fact holds any more go with it.
        txn.run(
            scoped(
                "MATCH (v:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace, entity_type: $value_type})
                 WHERE size(v.aliases) = 0 AND NOT (v)-[:FACT]-()
                 DELETE v",
                tenant_id,
                namespace,
            )
            .param("value_type", VALUE_TYPE),
        )
        .await
        .map_err(backend)?;
        bump(&mut txn, tenant_id, namespace).await?;
        txn.commit().await.map_err(backend)?;
        Ok(Some((
            id,
            facts.first().map_or(0, |c| c.total.max(0) as usize),
        )))
    }

    async fn memory_entities(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
    ) -> Result<Vec<MemoryEntity>, Error> {
        let found: Vec<EntityRow> = self
            .fetch_rows(
                scoped(
                    &format!("UNWIND $ids AS wanted MATCH (e:MemoryEntity {{tenant_id: $tenant_id, namespace: $namespace, id: wanted}}) RETURN {ENTITY_RETURN}"),
                    tenant_id,
                    namespace,
                )
                .param("ids", ids.to_vec()),
            )
            .await?;
        Ok(found.into_iter().map(MemoryEntity::from).collect())
    }

    async fn memory_facts(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
        hops: u32,
        limit: usize,
    ) -> Result<(Vec<MemoryFact>, bool), Error> {
        let mut walk = FactWalk::new(ids, hops, limit);
        while let Some((hop, frontier)) = walk.next_hop() {
            for id in &frontier {
                let found: Vec<FactRow> = self
                    .fetch_rows(
                        scoped(
                            "MATCH (s:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                                   -[f:FACT {tenant_id: $tenant_id, namespace: $namespace}]->
                                   (o:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                             WHERE (s.id = $id OR o.id = $id) AND f.valid_to IS NULL
                             RETURN s.id AS subject_id, s.name AS subject, f.predicate AS predicate, o.id AS object_id, o.name AS object,
                                    f.source_client AS source_client, f.confidence AS confidence, f.created_at AS created_at, f.updated_at AS updated_at
                             ORDER BY f.updated_at DESC, f.predicate, o.name",
                            tenant_id,
                            namespace,
                        )
                        .param("id", id.as_str()),
                    )
                    .await?;
                walk.add(found.into_iter().map(|row| row.into_fact(hop)));
            }
        }
        Ok(walk.finish())
    }

    async fn memory_corpus(
        &self,
        tenant_id: &str,
        namespace: &str,
    ) -> Result<Vec<MemoryDocument>, Error> {
        #[derive(Debug, Deserialize)]
        struct CurrentFact {
            subject_id: String,
            subject: String,
            predicate: String,
            object_id: String,
            object: String,
        }
        let found: Vec<EntityRow> = self
            .fetch_rows(scoped(
                &format!("MATCH (e:MemoryEntity {{tenant_id: $tenant_id, namespace: $namespace}}) RETURN {ENTITY_RETURN} ORDER BY e.id"),
                tenant_id,
                namespace,
            ))
            .await?;
        let facts: Vec<CurrentFact> = self
            .fetch_rows(scoped(
                "MATCH (s:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                       -[f:FACT {tenant_id: $tenant_id, namespace: $namespace}]->
                       (o:MemoryEntity {tenant_id: $tenant_id, namespace: $namespace})
                 WHERE f.valid_to IS NULL
                 RETURN s.id AS subject_id, s.name AS subject, f.predicate AS predicate, o.id AS object_id, o.name AS object
                 ORDER BY f.created_at, f.predicate",
                tenant_id,
                namespace,
            ))
            .await?;
        let facts: Vec<(String, String, String, String, String)> = facts
            .into_iter()
            .map(|f| (f.subject_id, f.subject, f.predicate, f.object_id, f.object))
            .collect();
        Ok(documents(
            found.into_iter().map(MemoryEntity::from).collect(),
            &facts,
        ))
    }

    async fn memory_version(&self, tenant_id: &str, namespace: &str) -> Result<String, Error> {
        #[derive(Debug, Deserialize)]
        struct VersionRow {
            version: i64,
        }
        let found: Vec<VersionRow> = self
            .fetch_rows(scoped(
                "MATCH (v:MemoryVersion {tenant_id: $tenant_id, namespace: $namespace}) RETURN v.version AS version",
                tenant_id,
                namespace,
            ))
            .await?;
        Ok(format!("m{}", found.first().map_or(0, |v| v.version)))
    }
}
