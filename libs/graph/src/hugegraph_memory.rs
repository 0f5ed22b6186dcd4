//! Agent memory on HugeGraph 1.5: `memory_entity` vertices and `memory_fact` edges, every
//! vertex id a hash of (tenant, namespace, entity id) and every read checking the tenant
//! and namespace fields of the vertices and facts it answers.
//!
//! `remember` reads first (the namespace's size and the entities its names resolve to,
//! by id or alias), plans in Rust (the 5,000-entity cap is checked before anything is
//! written), then writes in one script: entities, then each fact (superseding the
//! subject's current fact of the same predicate), then the namespace's version.

use std::collections::HashMap;

use async_trait::async_trait;
use codectx_core::limits;
use codectx_errors::Error;
use serde::Deserialize;
use serde_json::json;

use crate::hugegraph::{HugeGraphStore, vertex_id};
use crate::memory::{
    EntityInput, FactRow, FactWalk, MemoryDocument, MemoryEntity, MemoryFact, MemoryStore,
    VALUE_TYPE, documents, entity_id, validate,
};

/// An entity vertex as a row (the prefix of every script that returns entities).
macro_rules! with_entity_fn {
    ($body:literal) => {
        concat!(
            "def ent = { v -> [id: v.value('eid'), name: v.value('name'), entity_type: v.value('entity_type'), ",
            "aliases: v.property('aliases').isPresent() ? v.value('aliases') : [], ",
            "created_at: v.value('created_at'), updated_at: v.value('updated_at'), ",
            "tenant_id: v.value('tenant_id'), namespace: v.value('namespace')] }\n",
            "def inScope = { x -> x.value('tenant_id') == tenant && x.value('namespace') == ns }\n",
            $body
        )
    };
}

/// The namespace's entity count, and for each name the entity it names: by id first,
/// then by alias (the smallest id among those with the alias).
const RESOLVE: &str = with_entity_fn!(
    "def scope = g.V().hasLabel('memory_entity').has('tenant_id', tenant).has('namespace', ns).toList()\n\
     def byAlias = [:]\n\
     scope.sort { it.value('eid') }.each { v -> if (v.property('aliases').isPresent()) v.value('aliases').each { a -> if (!byAlias.containsKey(a)) byAlias.put(a, v) } }\n\
     def found = names.collect { n ->\n\
       def it = graph.vertices(n.vid)\n\
       def v = it.hasNext() ? it.next() : null\n\
       if (v != null && !inScope(v)) v = null\n\
       if (v == null) v = byAlias.get(n.name)\n\
       [name: n.name, entity: v == null ? null : ent(v)]\n\
     }\n\
     [[count: scope.size(), found: found]]"
);

/// Writes a planned `remember`: entities (whole vertices), facts one at a time (each
/// commits, so a later fact of the same call sees an earlier one), the version last.
const REMEMBER: &str = with_entity_fn!(
    "entities.each { e -> graph.addVertex(T.label, 'memory_entity', T.id, e.vid, 'tenant_id', tenant, 'namespace', ns,\n\
       'eid', e.id, 'name', e.name, 'entity_type', e.entity_type, 'aliases', e.aliases,\n\
       'created_at', e.created_at as long, 'updated_at', e.updated_at as long) }\n\
     graph.tx().commit()\n\
     facts.each { f ->\n\
       def s = graph.vertices(f.subject).next()\n\
       def o = graph.vertices(f.object).next()\n\
       def current = s.edges(Direction.OUT, 'memory_fact').toList().findAll { x -> inScope(x) && x.value('predicate') == f.predicate && !x.property('valid_to').isPresent() }\n\
       def same = current.findAll { x -> x.inVertex().id() == o.id() }\n\
       if (same.isEmpty()) {\n\
         current.each { x -> x.property('valid_to', now as long); x.property('updated_at', now as long) }\n\
         s.addEdge('memory_fact', o, 'tenant_id', tenant, 'namespace', ns, 'fact_id', f.fact_id, 'predicate', f.predicate,\n\
           'source_client', source, 'fact_confidence', 1.0d, 'created_at', now as long, 'updated_at', now as long)\n\
       } else {\n\
         same.each { x -> x.property('updated_at', now as long); x.property('source_client', source) }\n\
       }\n\
       graph.tx().commit()\n\
     }\n\
     def vit = graph.vertices(version)\n\
     def next = vit.hasNext() ? vit.next().value('mem_version') + 1 : 1\n\
     graph.addVertex(T.label, 'memory_version', T.id, version, 'tenant_id', tenant, 'namespace', ns, 'mem_version', next as long)\n\
     graph.tx().commit()\n\
     touched.collect { id -> def it = graph.vertices(id); it.hasNext() ? ent(it.next()) : null }.findAll { it != null }"
);

/// Deletes an entity with its facts, then the values no fact holds any more.
const FORGET: &str = with_entity_fn!(
    "def found = graph.vertices(vid)\n\
     if (!found.hasNext()) return [-1]\n\
     def e = found.next()\n\
     if (!inScope(e)) return [-1]\n\
     def facts = e.edges(Direction.BOTH, 'memory_fact').toList().findAll { inScope(it) }\n\
     def others = facts.collect { f -> f.outVertex().id() == e.id() ? f.inVertex().id() : f.outVertex().id() }.unique()\n\
     e.remove()\n\
     graph.tx().commit()\n\
     others.each { id -> def it = graph.vertices(id)\n\
       if (it.hasNext()) { def v = it.next()\n\
         def bare = !v.property('aliases').isPresent() || v.value('aliases').isEmpty()\n\
         if (inScope(v) && v.value('entity_type') == value_type && bare && !v.edges(Direction.BOTH, 'memory_fact').hasNext()) v.remove() } }\n\
     graph.tx().commit()\n\
     def vit = graph.vertices(version)\n\
     def next = vit.hasNext() ? vit.next().value('mem_version') + 1 : 1\n\
     graph.addVertex(T.label, 'memory_version', T.id, version, 'tenant_id', tenant, 'namespace', ns, 'mem_version', next as long)\n\
     graph.tx().commit()\n\
     [facts.size()]"
);

const ENTITIES: &str = with_entity_fn!(
    "graph.vertices(vids.toArray()).toList().findAll { it.label() == 'memory_entity' && inScope(it) }.collect { ent(it) }"
);

/// Current facts with the entity at either end.
const FACTS_OF: &str = with_entity_fn!(
    "def found = graph.vertices(vid)\n\
     if (!found.hasNext()) return []\n\
     def e = found.next()\n\
     if (!inScope(e)) return []\n\
     e.edges(Direction.BOTH, 'memory_fact').toList().findAll { f -> inScope(f) && !f.property('valid_to').isPresent() }.collect { f ->\n\
       def s = f.outVertex(); def o = f.inVertex()\n\
       [subject_id: s.value('eid'), subject: s.value('name'), predicate: f.value('predicate'), object_id: o.value('eid'),\n\
        object: o.value('name'), source_client: f.value('source_client'), confidence: f.value('fact_confidence'),\n\
        created_at: f.value('created_at'), updated_at: f.value('updated_at')] }"
);

/// Every entity of the namespace and its current facts (as subject).
const CORPUS: &str = with_entity_fn!(
    "def scope = g.V().hasLabel('memory_entity').has('tenant_id', tenant).has('namespace', ns).toList()\n\
     def facts = []\n\
     scope.each { s -> s.edges(Direction.OUT, 'memory_fact').each { f ->\n\
       if (inScope(f) && !f.property('valid_to').isPresent()) { def o = f.inVertex()\n\
         facts << [s.value('eid'), s.value('name'), f.value('predicate'), o.value('eid'), o.value('name'), f.value('created_at')] } } }\n\
     [[entities: scope.collect { ent(it) }, facts: facts]]"
);

const VERSION: &str = "def it = graph.vertices(version)\n\
    if (!it.hasNext()) return [0]\n\
    def v = it.next()\n\
    (v.value('tenant_id') == tenant && v.value('namespace') == ns) ? [v.value('mem_version')] : [0]";

#[derive(Debug, Clone, Deserialize)]
struct EntityRow {
    id: String,
    name: String,
    entity_type: String,
    aliases: Vec<String>,
    created_at: i64,
    updated_at: i64,
    tenant_id: String,
    namespace: String,
}

impl EntityRow {
    fn in_scope(&self, tenant: &str, namespace: &str) -> bool {
        self.tenant_id == tenant && self.namespace == namespace
    }
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

fn entity_vid(tenant: &str, namespace: &str, id: &str) -> String {
    vertex_id('m', &[tenant, namespace, id])
}

fn version_vid(tenant: &str, namespace: &str) -> String {
    vertex_id('v', &[tenant, namespace])
}

/// An entity as `remember` will write it.
#[derive(Debug, Clone)]
struct Planned {
    row: EntityRow,
    /// Written by this call (created, or its type or aliases given).
    write: bool,
}

/// What one `remember` call resolves and writes, built from what the store holds.
struct Plan<'a> {
    tenant: &'a str,
    namespace: &'a str,
    now: i64,
    count: usize,
    /// By id.
    entities: HashMap<String, Planned>,
    /// Names and aliases (this call's included) to ids.
    names: HashMap<String, String>,
    /// Ids in the order they were first written.
    order: Vec<String>,
}

impl Plan<'_> {
    fn ensure(
        &mut self,
        name: &str,
        entity_type: &str,
        aliases: &[String],
    ) -> Result<String, Error> {
        let name = name.trim();
        if let Some(id) = self.names.get(name).cloned() {
            if !entity_type.is_empty() || !aliases.is_empty() {
                let planned = self
                    .entities
                    .get_mut(&id)
                    .expect("a named entity is planned");
                if !entity_type.is_empty() {
                    planned.row.entity_type = entity_type.to_owned();
                }
                for alias in aliases {
                    if !planned.row.aliases.contains(alias) {
                        planned.row.aliases.push(alias.clone());
                    }
                    self.names
                        .entry(alias.clone())
                        .or_insert_with(|| id.clone());
                }
                planned.row.updated_at = self.now;
                if !planned.write {
                    planned.write = true;
                    self.order.push(id.clone());
                }
            }
            return Ok(id);
        }
        if self.count >= limits::MEMORY_ENTITIES_PER_NAMESPACE {
            return Err(Error::limit_exceeded(
                "entities",
                (self.count + 1) as u64,
                limits::MEMORY_ENTITIES_PER_NAMESPACE as u64,
                "entities",
            )
            .with_field("entity"));
        }
        self.count += 1;
        let id = entity_id(self.namespace, name);
        self.names.insert(name.to_owned(), id.clone());
        for alias in aliases {
            self.names
                .entry(alias.clone())
                .or_insert_with(|| id.clone());
        }
        self.entities.insert(
            id.clone(),
            Planned {
                row: EntityRow {
                    id: id.clone(),
                    name: name.to_owned(),
                    entity_type: if entity_type.is_empty() {
                        VALUE_TYPE.to_owned()
                    } else {
                        entity_type.to_owned()
                    },
                    aliases: aliases.to_vec(),
                    created_at: self.now,
                    updated_at: self.now,
                    tenant_id: self.tenant.to_owned(),
                    namespace: self.namespace.to_owned(),
                },
                write: true,
            },
        );
        self.order.push(id.clone());
        Ok(id)
    }
}

#[async_trait]
impl MemoryStore for HugeGraphStore {
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
        #[derive(Deserialize)]
        struct Found {
            name: String,
            entity: Option<EntityRow>,
        }
        #[derive(Deserialize)]
        struct Resolved {
            count: usize,
            found: Vec<Found>,
        }
        let mut wanted: Vec<&str> = Vec::new();
        for input in inputs {
            wanted.push(input.name.trim());
            for fact in &input.facts {
                let (subject, object) = fact.ends(input.name.trim());
                wanted.extend([subject, object]);
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let names: Vec<serde_json::Value> = wanted
            .iter()
            .map(|n| json!({"name": n, "vid": entity_vid(tenant_id, namespace, &entity_id(namespace, n))}))
            .collect();
        let resolved: Vec<Resolved> = self
            .rows(
                RESOLVE,
                json!({"tenant": tenant_id, "ns": namespace, "names": names}),
            )
            .await?;
        let resolved = resolved
            .into_iter()
            .next()
            .ok_or_else(|| crate::hugegraph::backend("resolve answered nothing"))?;
        let mut plan = Plan {
            tenant: tenant_id,
            namespace,
            now,
            count: resolved.count,
            entities: HashMap::new(),
            names: HashMap::new(),
            order: Vec::new(),
        };
        for found in resolved.found {
            if let Some(row) = found.entity.filter(|r| r.in_scope(tenant_id, namespace)) {
                plan.names.insert(found.name, row.id.clone());
                plan.entities
                    .entry(row.id.clone())
                    .or_insert(Planned { row, write: false });
            }
        }
        let mut touched = Vec::new();
        let mut facts = Vec::new();
        for input in inputs {
            let subject = plan.ensure(&input.name, &input.entity_type, &input.aliases)?;
            touched.push(subject.clone());
            for fact in &input.facts {
                let (subject_name, object_name) = fact.ends(input.name.trim());
                let fact_subject = if subject_name == input.name.trim() {
                    subject.clone()
                } else {
                    plan.ensure(subject_name, "", &[])?
                };
                let object = plan.ensure(object_name, "", &[])?;
                facts.push(json!({
                    "subject": entity_vid(tenant_id, namespace, &fact_subject),
                    "object": entity_vid(tenant_id, namespace, &object),
                    "predicate": fact.predicate,
                    "fact_id": codectx_core::ids::mint("fact"),
                }));
            }
        }
        let entities: Vec<serde_json::Value> = plan
            .order
            .iter()
            .filter_map(|id| plan.entities.get(id))
            .filter(|p| p.write)
            .map(|p| {
                json!({
                    "vid": entity_vid(tenant_id, namespace, &p.row.id),
                    "id": p.row.id,
                    "name": p.row.name,
                    "entity_type": p.row.entity_type,
                    "aliases": p.row.aliases,
                    "created_at": p.row.created_at,
                    "updated_at": p.row.updated_at,
                })
            })
            .collect();
        let touched_vids: Vec<String> = touched
            .iter()
            .map(|id| entity_vid(tenant_id, namespace, id))
            .collect();
        let rows: Vec<EntityRow> = self
            .rows(
                REMEMBER,
                json!({
                    "tenant": tenant_id,
                    "ns": namespace,
                    "entities": entities,
                    "facts": facts,
                    "source": source_client,
                    "now": now,
                    "version": version_vid(tenant_id, namespace),
                    "touched": touched_vids,
                }),
            )
            .await?;
        Ok(rows
            .into_iter()
            .filter(|r| r.in_scope(tenant_id, namespace))
            .map(MemoryEntity::from)
            .collect())
    }

    async fn forget(
        &self,
        tenant_id: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<(String, usize)>, Error> {
        #[derive(Deserialize)]
        struct Found {
            entity: Option<EntityRow>,
        }
        #[derive(Deserialize)]
        struct Resolved {
            found: Vec<Found>,
        }
        let name = name.trim();
        let resolved: Vec<Resolved> = self
            .rows(
                RESOLVE,
                json!({
                    "tenant": tenant_id,
                    "ns": namespace,
                    "names": [{"name": name, "vid": entity_vid(tenant_id, namespace, &entity_id(namespace, name))}],
                }),
            )
            .await?;
        let Some(entity) = resolved
            .into_iter()
            .flat_map(|r| r.found)
            .find_map(|f| f.entity)
            .filter(|r| r.in_scope(tenant_id, namespace))
        else {
            return Ok(None);
        };
        let counts: Vec<i64> = self
            .rows(
                FORGET,
                json!({
                    "tenant": tenant_id,
                    "ns": namespace,
                    "vid": entity_vid(tenant_id, namespace, &entity.id),
                    "value_type": VALUE_TYPE,
                    "version": version_vid(tenant_id, namespace),
                }),
            )
            .await?;
        match counts.first() {
            Some(&n) if n >= 0 => Ok(Some((entity.id, n as usize))),
            _ => Ok(None),
        }
    }

    async fn memory_entities(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
    ) -> Result<Vec<MemoryEntity>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let vids: Vec<String> = ids
            .iter()
            .map(|id| entity_vid(tenant_id, namespace, id))
            .collect();
        let rows: Vec<EntityRow> = self
            .rows(
                ENTITIES,
                json!({"tenant": tenant_id, "ns": namespace, "vids": vids}),
            )
            .await?;
        Ok(rows
            .into_iter()
            .filter(|r| r.in_scope(tenant_id, namespace))
            .map(MemoryEntity::from)
            .collect())
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
                let mut found: Vec<FactRow> = self
                    .rows(
                        FACTS_OF,
                        json!({"tenant": tenant_id, "ns": namespace, "vid": entity_vid(tenant_id, namespace, id)}),
                    )
                    .await?;
                // As the other backends order them: newest first, then predicate, object.
                found.sort_by(|a, b| {
                    (std::cmp::Reverse(a.updated_at), &a.predicate, &a.object).cmp(&(
                        std::cmp::Reverse(b.updated_at),
                        &b.predicate,
                        &b.object,
                    ))
                });
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
        #[derive(Deserialize)]
        struct Corpus {
            entities: Vec<EntityRow>,
            facts: Vec<(String, String, String, String, String, i64)>,
        }
        let corpus: Vec<Corpus> = self
            .rows(CORPUS, json!({"tenant": tenant_id, "ns": namespace}))
            .await?;
        let Some(corpus) = corpus.into_iter().next() else {
            return Ok(Vec::new());
        };
        let mut entities: Vec<MemoryEntity> = corpus
            .entities
            .into_iter()
            .filter(|r| r.in_scope(tenant_id, namespace))
            .map(MemoryEntity::from)
            .collect();
        entities.sort_by(|a, b| a.id.cmp(&b.id));
        let mut facts = corpus.facts;
        facts.sort_by(|a, b| (a.5, &a.2).cmp(&(b.5, &b.2)));
        let facts: Vec<(String, String, String, String, String)> = facts
            .into_iter()
            .map(|(s, sn, p, o, on, _)| (s, sn, p, o, on))
            .collect();
        Ok(documents(entities, &facts))
    }

    async fn memory_version(&self, tenant_id: &str, namespace: &str) -> Result<String, Error> {
        let versions: Vec<i64> = self
            .rows(
                VERSION,
                json!({"tenant": tenant_id, "ns": namespace, "version": version_vid(tenant_id, namespace)}),
            )
            .await?;
        Ok(format!("m{}", versions.first().copied().unwrap_or(0)))
    }
}
