//! Agent memory on the embedded SQLite store.

use async_trait::async_trait;
use codectx_core::limits;
use codectx_errors::Error;
use rusqlite::{OptionalExtension, params};

use crate::memory::{
    EntityInput, FactWalk, MemoryDocument, MemoryEntity, MemoryFact, MemoryStore, VALUE_TYPE,
    documents, entity_id, validate,
};
use crate::sqlite::{Reach, SqliteGraphStore};

pub(crate) const MEMORY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memory_entities (
    tenant_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    aliases TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_aliases (
    tenant_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    alias TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace, alias, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_facts (
    tenant_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object_id TEXT NOT NULL,
    source_client TEXT NOT NULL,
    confidence REAL NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    valid_to INTEGER
);
CREATE INDEX IF NOT EXISTS memory_facts_out ON memory_facts (tenant_id, namespace, subject_id);
CREATE INDEX IF NOT EXISTS memory_facts_in ON memory_facts (tenant_id, namespace, object_id);
CREATE TABLE IF NOT EXISTS memory_versions (
    tenant_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace)
) WITHOUT ROWID;
";

fn storage(error: rusqlite::Error) -> Error {
    Error::internal(format!("memory store (sqlite): {error}"))
}

fn entity_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryEntity> {
    let aliases: String = r.get(3)?;
    Ok(MemoryEntity {
        id: r.get(0)?,
        name: r.get(1)?,
        entity_type: r.get(2)?,
        aliases: aliases
            .split('\u{1f}')
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect(),
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

const ENTITY_COLUMNS: &str = "id, name, entity_type, aliases, created_at, updated_at";

/// Resolves a name or alias to an entity id in the namespace.
fn find(
    tx: &rusqlite::Connection,
    tenant: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<String>, Error> {
    let by_name = entity_id(namespace, name);
    let exists: Option<String> = tx
        .query_row(
            "SELECT id FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3",
            params![tenant, namespace, by_name],
            |r| r.get(0),
        )
        .optional()
        .map_err(storage)?;
    if exists.is_some() {
        return Ok(exists);
    }
    tx.query_row(
        "SELECT id FROM memory_aliases WHERE tenant_id = ?1 AND namespace = ?2 AND alias = ?3 ORDER BY id LIMIT 1",
        params![tenant, namespace, name],
        |r| r.get(0),
    )
    .optional()
    .map_err(storage)
}

#[async_trait]
impl MemoryStore for SqliteGraphStore {
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
        let (tenant, namespace) = (tenant_id.to_owned(), namespace.to_owned());
        let inputs = inputs.to_vec();
        let source = source_client.to_owned();
        self.run(move |c| {
            let tx = c.transaction().map_err(storage)?;
            let mut touched = Vec::new();
            let existing: i64 = tx
                .query_row("SELECT COUNT(*) FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2", params![tenant, namespace], |r| r.get(0))
                .map_err(storage)?;
            let mut count = existing as usize;
            let ensure = |tx: &rusqlite::Transaction<'_>, name: &str, entity_type: &str, aliases: &[String], count: &mut usize| -> Result<String, Error> {
                let name = name.trim();
                if let Some(id) = find(tx, &tenant, &namespace, name)? {
                    if !entity_type.is_empty() || !aliases.is_empty() {
                        let current: (String, String) = tx
                            .query_row(
                                "SELECT entity_type, aliases FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3",
                                params![tenant, namespace, id],
                                |r| Ok((r.get(0)?, r.get(1)?)),
                            )
                            .map_err(storage)?;
                        let mut merged: Vec<String> = current.1.split('\u{1f}').filter(|a| !a.is_empty()).map(str::to_owned).collect();
                        for alias in aliases {
                            if !merged.contains(alias) {
                                merged.push(alias.clone());
                            }
                        }
                        let entity_type = if entity_type.is_empty() { current.0 } else { entity_type.to_owned() };
                        tx.execute(
                            "UPDATE memory_entities SET entity_type = ?4, aliases = ?5, updated_at = ?6 WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3",
                            params![tenant, namespace, id, entity_type, merged.join("\u{1f}"), now],
                        )
                        .map_err(storage)?;
                        for alias in aliases {
                            tx.execute(
                                "INSERT OR IGNORE INTO memory_aliases (tenant_id, namespace, alias, id) VALUES (?1, ?2, ?3, ?4)",
                                params![tenant, namespace, alias, id],
                            )
                            .map_err(storage)?;
                        }
                    }
                    return Ok(id);
                }
                if *count >= limits::MEMORY_ENTITIES_PER_NAMESPACE {
                    return Err(Error::limit_exceeded("entities", (*count + 1) as u64, limits::MEMORY_ENTITIES_PER_NAMESPACE as u64, "entities")
                        .with_field("entity"));
                }
                *count += 1;
                let id = entity_id(&namespace, name);
                let entity_type = if entity_type.is_empty() { VALUE_TYPE } else { entity_type };
                tx.execute(
                    "INSERT INTO memory_entities (tenant_id, namespace, id, name, entity_type, aliases, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                    params![tenant, namespace, id, name, entity_type, aliases.join("\u{1f}"), now],
                )
                .map_err(storage)?;
                for alias in aliases {
                    tx.execute(
                        "INSERT OR IGNORE INTO memory_aliases (tenant_id, namespace, alias, id) VALUES (?1, ?2, ?3, ?4)",
                        params![tenant, namespace, alias, id],
                    )
                    .map_err(storage)?;
                }
                Ok(id)
            };
            for input in &inputs {
                let subject = ensure(&tx, &input.name, &input.entity_type, &input.aliases, &mut count)?;
                touched.push(subject.clone());
                for fact in &input.facts {
                    let predicate = &fact.predicate;
                    let (subject_name, object_name) = fact.ends(input.name.trim());
                    let subject = if subject_name == input.name.trim() {
                        subject.clone()
                    } else {
                        ensure(&tx, subject_name, "", &[], &mut count)?
                    };
                    let object_id = ensure(&tx, object_name, "", &[], &mut count)?;
                    // Same fact again: refresh it. Same predicate, other object: supersede.
                    let refreshed = tx
                        .execute(
                            "UPDATE memory_facts SET updated_at = ?6, source_client = ?7 WHERE tenant_id = ?1 AND namespace = ?2 AND subject_id = ?3 AND predicate = ?4 AND object_id = ?5 AND valid_to IS NULL",
                            params![tenant, namespace, subject, predicate, object_id, now, source],
                        )
                        .map_err(storage)?;
                    if refreshed == 0 {
                        tx.execute(
                            "UPDATE memory_facts SET valid_to = ?5, updated_at = ?5 WHERE tenant_id = ?1 AND namespace = ?2 AND subject_id = ?3 AND predicate = ?4 AND valid_to IS NULL",
                            params![tenant, namespace, subject, predicate, now],
                        )
                        .map_err(storage)?;
                        tx.execute(
                            "INSERT INTO memory_facts (tenant_id, namespace, subject_id, predicate, object_id, source_client, confidence, created_at, updated_at, valid_to) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1.0, ?7, ?7, NULL)",
                            params![tenant, namespace, subject, predicate, object_id, source, now],
                        )
                        .map_err(storage)?;
                    }
                }
            }
            tx.execute(
                "INSERT INTO memory_versions (tenant_id, namespace, version) VALUES (?1, ?2, 1) ON CONFLICT (tenant_id, namespace) DO UPDATE SET version = version + 1",
                params![tenant, namespace],
            )
            .map_err(storage)?;
            let mut out = Vec::new();
            {
                let mut statement = tx
                    .prepare(&format!("SELECT {ENTITY_COLUMNS} FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3"))
                    .map_err(storage)?;
                for id in &touched {
                    out.push(statement.query_row(params![tenant, namespace, id], entity_row).map_err(storage)?);
                }
            }
            tx.commit().map_err(storage)?;
            Ok(out)
        })
        .await
    }

    async fn forget(
        &self,
        tenant_id: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<(String, usize)>, Error> {
        let (tenant, namespace, name) = (
            tenant_id.to_owned(),
            namespace.to_owned(),
            name.trim().to_owned(),
        );
        self.run(move |c| {
            let tx = c.transaction().map_err(storage)?;
            let Some(id) = find(&tx, &tenant, &namespace, &name)? else { return Ok(None) };
            let facts = tx
                .execute(
                    "DELETE FROM memory_facts WHERE tenant_id = ?1 AND namespace = ?2 AND (subject_id = ?3 OR object_id = ?3)",
                    params![tenant, namespace, id],
                )
                .map_err(storage)?;
            tx.execute("DELETE FROM memory_aliases WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3", params![tenant, namespace, id])
                .map_err(storage)?;
            tx.execute("DELETE FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3", params![tenant, namespace, id])
                .map_err(storage)?;
            // Values no fact holds any more go with it.
            tx.execute(
                "DELETE FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND entity_type = ?3 AND aliases = ''
                 AND id NOT IN (SELECT subject_id FROM memory_facts WHERE tenant_id = ?1 AND namespace = ?2)
                 AND id NOT IN (SELECT object_id FROM memory_facts WHERE tenant_id = ?1 AND namespace = ?2)",
                params![tenant, namespace, VALUE_TYPE],
            )
            .map_err(storage)?;
            tx.execute(
                "INSERT INTO memory_versions (tenant_id, namespace, version) VALUES (?1, ?2, 1) ON CONFLICT (tenant_id, namespace) DO UPDATE SET version = version + 1",
                params![tenant, namespace],
            )
            .map_err(storage)?;
            tx.commit().map_err(storage)?;
            Ok(Some((id, facts)))
        })
        .await
    }

    async fn memory_entities(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
    ) -> Result<Vec<MemoryEntity>, Error> {
        let (tenant, namespace, ids) = (tenant_id.to_owned(), namespace.to_owned(), ids.to_vec());
        self.read(Reach::Bounded, move |c| {
            let mut statement = c
                .prepare_cached(&format!("SELECT {ENTITY_COLUMNS} FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 AND id = ?3"))
                .map_err(storage)?;
            let mut out = Vec::new();
            for id in &ids {
                if let Some(entity) = statement.query_row(params![tenant, namespace, id], entity_row).optional().map_err(storage)? {
                    out.push(entity);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn memory_facts(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
        hops: u32,
        limit: usize,
    ) -> Result<(Vec<MemoryFact>, bool), Error> {
        let (tenant, namespace, ids) = (tenant_id.to_owned(), namespace.to_owned(), ids.to_vec());
        self.read(Reach::Bounded, move |c| {
            let mut statement = c
                .prepare_cached(
                    "SELECT f.subject_id, s.name, f.predicate, f.object_id, o.name, f.source_client, f.confidence, f.created_at, f.updated_at, f.valid_to
                     FROM memory_facts f
                     JOIN memory_entities s ON s.tenant_id = f.tenant_id AND s.namespace = f.namespace AND s.id = f.subject_id
                     JOIN memory_entities o ON o.tenant_id = f.tenant_id AND o.namespace = f.namespace AND o.id = f.object_id
                     WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND (f.subject_id = ?3 OR f.object_id = ?3) AND f.valid_to IS NULL
                     ORDER BY f.updated_at DESC, f.predicate, o.name",
                )
                .map_err(storage)?;
            let mut walk = FactWalk::new(&ids, hops, limit);
            while let Some((hop, frontier)) = walk.next_hop() {
                for id in &frontier {
                    let rows = statement
                        .query_map(params![tenant, namespace, id], |r| {
                            Ok(MemoryFact {
                                subject_id: r.get(0)?,
                                subject: r.get(1)?,
                                predicate: r.get(2)?,
                                object_id: r.get(3)?,
                                object: r.get(4)?,
                                source_client: r.get(5)?,
                                confidence: r.get(6)?,
                                created_at: r.get(7)?,
                                updated_at: r.get(8)?,
                                valid_to: r.get(9)?,
                                hop,
                            })
                        })
                        .map_err(storage)?
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(storage)?;
                    walk.add(rows);
                }
            }
            Ok(walk.finish())
        })
        .await
    }

    async fn memory_corpus(
        &self,
        tenant_id: &str,
        namespace: &str,
    ) -> Result<Vec<MemoryDocument>, Error> {
        let (tenant, namespace) = (tenant_id.to_owned(), namespace.to_owned());
        self.read(Reach::Whole, move |c| {
            let mut statement = c
                .prepare(&format!("SELECT {ENTITY_COLUMNS} FROM memory_entities WHERE tenant_id = ?1 AND namespace = ?2 ORDER BY id"))
                .map_err(storage)?;
            let entities: Vec<MemoryEntity> = statement
                .query_map(params![tenant, namespace], entity_row)
                .map_err(storage)?
                .collect::<Result<_, _>>()
                .map_err(storage)?;
            let mut statement = c
                .prepare(
                    "SELECT f.subject_id, s.name, f.predicate, f.object_id, o.name
                     FROM memory_facts f
                     JOIN memory_entities s ON s.tenant_id = f.tenant_id AND s.namespace = f.namespace AND s.id = f.subject_id
                     JOIN memory_entities o ON o.tenant_id = f.tenant_id AND o.namespace = f.namespace AND o.id = f.object_id
                     WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.valid_to IS NULL
                     ORDER BY f.created_at, f.predicate",
                )
                .map_err(storage)?;
            let facts: Vec<(String, String, String, String, String)> = statement
                .query_map(params![tenant, namespace], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
                .map_err(storage)?
                .collect::<Result<_, _>>()
                .map_err(storage)?;
            Ok(documents(entities, &facts))
        })
        .await
    }

    async fn memory_version(&self, tenant_id: &str, namespace: &str) -> Result<String, Error> {
        let (tenant, namespace) = (tenant_id.to_owned(), namespace.to_owned());
        self.read(Reach::Bounded, move |c| {
            let version: Option<i64> = c
                .query_row(
                    "SELECT version FROM memory_versions WHERE tenant_id = ?1 AND namespace = ?2",
                    params![tenant, namespace],
                    |r| r.get(0),
                )
                .optional()
                .map_err(storage)?;
            Ok(format!("m{}", version.unwrap_or(0)))
        })
        .await
    }
}
