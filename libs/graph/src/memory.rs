//! Agent memory: entities with names, aliases and types, and FACT relations between
//! entities of the same namespace. Every operation is rooted at the (tenant, namespace)
//! of a verified context; ids derive from the namespace and the name, so the same name in
//! two namespaces is two entities.
//!
//! A fact's object names an entity (by name or alias) or is a value. A value is kept in
//! a node of its own (type [`VALUE_TYPE`], no aliases, no facts of its own) so that two
//! subjects with the same value meet in the graph, but a value is never an entry: the
//! lexical corpus ([`MemoryStore::memory_corpus`]) lists remembered entities only, each
//! with the text of its current facts, so a word of a fact finds the entity the fact
//! describes (DESIGN.md section 4: value text never outranks the entity it describes),
//! and a superseded or forgotten value is found by nothing.

use async_trait::async_trait;
use codectx_core::limits;
use codectx_errors::Error;

/// A stored entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEntity {
    pub id: String,
    pub name: String,
    pub entity_type: String,
    pub aliases: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A fact as stored: subject -predicate-> object.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFact {
    pub subject_id: String,
    pub subject: String,
    pub predicate: String,
    pub object_id: String,
    pub object: String,
    pub source_client: String,
    pub confidence: f64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set when a newer fact superseded this one; None while current.
    pub valid_to: Option<i64>,
    /// 1 for facts of the requested entities, 2 for facts of their neighbours.
    pub hop: u32,
}

/// The type of the nodes that hold fact values (and of entities a fact names before
/// they are remembered themselves). Reserved: `remember` refuses it.
pub const VALUE_TYPE: &str = "entity";

/// One fact of a `remember` call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FactInput {
    pub predicate: String,
    /// An entity's name or alias, or a value; empty when `subject` is set (the entity
    /// being remembered is then the object).
    pub object: String,
    /// Another entity the fact is about (`A writes_to <this>`); empty: this entity.
    pub subject: String,
}

impl FactInput {
    pub fn new(predicate: &str, object: &str) -> FactInput {
        FactInput {
            predicate: predicate.into(),
            object: object.into(),
            subject: String::new(),
        }
    }

    /// (subject, object) names for a fact remembered with `entity`.
    pub fn ends<'a>(&'a self, entity: &'a str) -> (&'a str, &'a str) {
        let subject = if self.subject.trim().is_empty() {
            entity
        } else {
            self.subject.trim()
        };
        let object = if self.object.trim().is_empty() {
            entity
        } else {
            self.object.trim()
        };
        (subject, object)
    }
}

/// What `remember` asks to store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityInput {
    pub name: String,
    pub entity_type: String,
    pub aliases: Vec<String>,
    pub facts: Vec<FactInput>,
}

/// An entity as the lexical corpus sees it: with the names its current facts connect it
/// to (the object of its own, the subject of those naming it) and their predicates apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDocument {
    pub entity: MemoryEntity,
    /// The names its facts connect it to: each own fact's object, each fact's subject
    /// that names it.
    pub facts: Vec<String>,
    /// The predicates of those facts as words (`writes_to` -> `writes to`), each once:
    /// lexical search counts them only beside a match of another field.
    pub predicates: Vec<String>,
}

/// Builds the corpus documents of `entities` from the namespace's current `facts`
/// (subject id, subject name, predicate, object id, object name): value nodes are left
/// out, every other entity carries its facts' text.
pub fn documents(
    entities: Vec<MemoryEntity>,
    facts: &[(String, String, String, String, String)],
) -> Vec<MemoryDocument> {
    type Text = (Vec<String>, Vec<String>);
    let mut text: std::collections::HashMap<&str, Text> = std::collections::HashMap::new();
    for (subject_id, subject, predicate, object_id, object) in facts {
        let words = predicate.replace('_', " ");
        for (id, name) in [(subject_id, object), (object_id, subject)] {
            let (names, predicates) = text.entry(id).or_default();
            names.push(name.clone());
            if !predicates.contains(&words) {
                predicates.push(words.clone());
            }
        }
    }
    let subjects: std::collections::HashSet<&str> = facts.iter().map(|f| f.0.as_str()).collect();
    entities
        .into_iter()
        .filter(|entity| {
            entity.entity_type != VALUE_TYPE
                || !entity.aliases.is_empty()
                || subjects.contains(entity.id.as_str())
        })
        .map(|entity| {
            let (facts, predicates) = text.remove(entity.id.as_str()).unwrap_or_default();
            MemoryDocument {
                entity,
                facts,
                predicates,
            }
        })
        .collect()
}

/// The breadth-first walk every backend's [`MemoryStore::memory_facts`] answers: the
/// current facts of the requested entities (hop 1), then of the entities those facts
/// reach (hop 2), each fact once, at most `limit`, `truncated` when more existed. A
/// backend feeds it one entity's facts at a time, in its order (newest first, then
/// predicate, then object name).
pub(crate) struct FactWalk {
    facts: Vec<MemoryFact>,
    seen: std::collections::HashSet<(String, String, String)>,
    visited: std::collections::HashSet<String>,
    frontier: Vec<String>,
    next: Vec<String>,
    hop: u32,
    hops: u32,
    limit: usize,
    truncated: bool,
}

impl FactWalk {
    pub(crate) fn new(ids: &[String], hops: u32, limit: usize) -> FactWalk {
        FactWalk {
            facts: Vec::new(),
            seen: std::collections::HashSet::new(),
            visited: ids.iter().cloned().collect(),
            frontier: Vec::new(),
            next: ids.to_vec(),
            hop: 0,
            hops: hops.clamp(1, 2),
            limit,
            truncated: false,
        }
    }

    /// The next hop's number and the entities whose facts it wants; None when done.
    pub(crate) fn next_hop(&mut self) -> Option<(u32, Vec<String>)> {
        if self.hop >= self.hops {
            return None;
        }
        self.hop += 1;
        self.frontier = std::mem::take(&mut self.next);
        Some((self.hop, self.frontier.clone()))
    }

    /// Adds one entity's current facts (their `hop` already set).
    pub(crate) fn add(&mut self, facts: impl IntoIterator<Item = MemoryFact>) {
        for fact in facts {
            let key = (
                fact.subject_id.clone(),
                fact.predicate.clone(),
                fact.object_id.clone(),
            );
            if !self.seen.insert(key) {
                continue;
            }
            if self.facts.len() >= self.limit {
                self.truncated = true;
                break;
            }
            for other in [&fact.subject_id, &fact.object_id] {
                if self.visited.insert(other.clone()) {
                    self.next.push(other.clone());
                }
            }
            self.facts.push(fact);
        }
    }

    pub(crate) fn finish(self) -> (Vec<MemoryFact>, bool) {
        (self.facts, self.truncated)
    }
}

/// A current fact as the Neo4j and HugeGraph backends read it.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct FactRow {
    pub subject_id: String,
    pub subject: String,
    pub predicate: String,
    pub object_id: String,
    pub object: String,
    pub source_client: String,
    pub confidence: f64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl FactRow {
    pub(crate) fn into_fact(self, hop: u32) -> MemoryFact {
        MemoryFact {
            subject_id: self.subject_id,
            subject: self.subject,
            predicate: self.predicate,
            object_id: self.object_id,
            object: self.object,
            source_client: self.source_client,
            confidence: self.confidence,
            created_at: self.created_at,
            updated_at: self.updated_at,
            valid_to: None,
            hop,
        }
    }
}

/// Caps on memory input (DESIGN.md section 5 and ours).
pub const MAX_NAME_BYTES: usize = 256;
pub const MAX_ALIASES: usize = 16;
pub const MAX_FACTS_PER_CALL: usize = 32;
pub const MAX_TYPE_BYTES: usize = 64;
pub const MAX_PREDICATE_BYTES: usize = 64;

/// The id of an entity: `ent_` and 32 hex of sha256(namespace, name). Minted-id format, so
/// literal-mode vector backends accept it.
pub fn entity_id(namespace: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(namespace.as_bytes());
    hasher.update([0u8]);
    hasher.update(name.as_bytes());
    format!("ent_{}", hex::encode(&hasher.finalize()[..16]))
}

fn check_text(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.trim().is_empty() || value.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            field,
            format!("{field} must be non-empty text without control characters"),
        ));
    }
    limits::check_bytes(field, value, max)
}

/// Predicates are lower_snake_case words (`owns`, `depends_on`, `decided_by`).
pub fn check_predicate(predicate: &str) -> Result<(), Error> {
    check_text("predicate", predicate, MAX_PREDICATE_BYTES)?;
    let valid = predicate
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase())
        && predicate
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(Error::invalid_argument(
            "predicate",
            format!("predicate {predicate:?} must be lower_snake_case (e.g. owns, depends_on)"),
        ));
    }
    Ok(())
}

/// Validates one entity's input; names are trimmed.
pub fn validate(input: &EntityInput) -> Result<(), Error> {
    check_text("entity", &input.name, MAX_NAME_BYTES)?;
    // An empty type keeps the stored one (the remember tool requires one at the edge).
    if !input.entity_type.is_empty() {
        check_text("type", &input.entity_type, MAX_TYPE_BYTES)?;
        if input.entity_type.trim() == VALUE_TYPE {
            return Err(Error::invalid_argument(
                "type",
                format!(
                    "type {VALUE_TYPE:?} is reserved for fact values; say what it is (service, person, decision, ...)"
                ),
            ));
        }
    }
    limits::check_count("aliases", input.aliases.len(), MAX_ALIASES, "aliases")?;
    for alias in &input.aliases {
        check_text("aliases", alias, MAX_NAME_BYTES)?;
    }
    limits::check_count("facts", input.facts.len(), MAX_FACTS_PER_CALL, "facts")?;
    for fact in &input.facts {
        check_predicate(&fact.predicate)?;
        if fact.subject.trim().is_empty() {
            check_text("facts.object", &fact.object, MAX_NAME_BYTES)?;
        } else {
            check_text("facts.subject", &fact.subject, MAX_NAME_BYTES)?;
            if !fact.object.is_empty() {
                check_text("facts.object", &fact.object, MAX_NAME_BYTES)?;
            }
        }
    }
    Ok(())
}

/// The memory half of the graph store.
#[async_trait]
pub trait MemoryStore: Send + Sync + std::fmt::Debug + 'static {
    /// Inserts or updates entities (and object entities their facts name), records facts,
    /// and supersedes older facts with the same subject and predicate. Refuses to grow a
    /// namespace past 5,000 entities.
    async fn remember(
        &self,
        tenant_id: &str,
        namespace: &str,
        inputs: &[EntityInput],
        source_client: &str,
        now: i64,
    ) -> Result<Vec<MemoryEntity>, Error>;
    /// Deletes an entity (found by name or alias) with its facts. Returns its id and how
    /// many facts went; None when there was no such entity.
    async fn forget(
        &self,
        tenant_id: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<(String, usize)>, Error>;
    /// The entities of these ids that exist in the namespace.
    async fn memory_entities(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
    ) -> Result<Vec<MemoryEntity>, Error>;
    /// Current facts (valid_to unset) of the entities, then of their neighbours when
    /// `hops` is 2, at most `limit`, with `truncated` when more existed.
    async fn memory_facts(
        &self,
        tenant_id: &str,
        namespace: &str,
        ids: &[String],
        hops: u32,
        limit: usize,
    ) -> Result<(Vec<MemoryFact>, bool), Error>;
    /// Every remembered entity of the namespace with its current facts' text (the
    /// lexical corpus; value nodes are not in it: [`documents`]).
    async fn memory_corpus(
        &self,
        tenant_id: &str,
        namespace: &str,
    ) -> Result<Vec<MemoryDocument>, Error>;
    /// Changes whenever the namespace's entities change.
    async fn memory_version(&self, tenant_id: &str, namespace: &str) -> Result<String, Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(subject: &str, predicate: &str, object: &str, hop: u32) -> MemoryFact {
        MemoryFact {
            subject_id: subject.into(),
            subject: subject.into(),
            predicate: predicate.into(),
            object_id: object.into(),
            object: object.into(),
            source_client: "t".into(),
            confidence: 1.0,
            created_at: 0,
            updated_at: 0,
            valid_to: None,
            hop,
        }
    }

    /// The walk every backend shares: hop 1 from the asked entities, hop 2 from what
    /// those facts reached (never back to an entity already visited), each fact once,
    /// cut at the limit with `truncated`.
    #[test]
    fn the_fact_walk_visits_two_hops_once_each_and_stops_at_the_limit() {
        let graph = [("a", "owns", "b"), ("b", "uses", "c"), ("c", "uses", "d")];
        let facts_of = |id: &str, hop: u32| -> Vec<MemoryFact> {
            graph
                .iter()
                .filter(|(s, _, o)| *s == id || *o == id)
                .map(|(s, p, o)| fact(s, p, o, hop))
                .collect()
        };
        let walk_with = |hops: u32, limit: usize| {
            let mut walk = FactWalk::new(&["a".to_owned()], hops, limit);
            let mut asked = Vec::new();
            while let Some((hop, frontier)) = walk.next_hop() {
                for id in &frontier {
                    asked.push((hop, id.clone()));
                    walk.add(facts_of(id, hop));
                }
            }
            (walk.finish(), asked)
        };
        let ((facts, truncated), asked) = walk_with(2, 10);
        assert!(!truncated);
        assert_eq!(asked, vec![(1, "a".to_owned()), (2, "b".to_owned())]);
        let got: Vec<(&str, u32)> = facts
            .iter()
            .map(|f| (f.predicate.as_str(), f.hop))
            .collect();
        assert_eq!(got, vec![("owns", 1), ("uses", 2)]);
        // Hops are clamped to 1..=2.
        assert_eq!(walk_with(9, 10).1.len(), 2);
        assert_eq!(walk_with(0, 10).1.len(), 1);
        // The limit cuts, and says so.
        let ((facts, truncated), _) = walk_with(2, 1);
        assert_eq!(facts.len(), 1);
        assert!(truncated);
    }

    #[test]
    fn validation() {
        let good = EntityInput {
            name: "Payments service".into(),
            entity_type: "service".into(),
            aliases: vec!["payments".into()],
            facts: vec![FactInput::new("owned_by", "Team Ledger")],
        };
        assert!(validate(&good).is_ok());
        assert!(
            validate(&EntityInput {
                name: " ".into(),
                ..good.clone()
            })
            .is_err()
        );
        assert!(
            validate(&EntityInput {
                facts: vec![FactInput::new("Owned By", "x")],
                ..good.clone()
            })
            .is_err()
        );
        assert!(
            validate(&EntityInput {
                entity_type: VALUE_TYPE.into(),
                ..good.clone()
            })
            .is_err(),
            "the value type is reserved"
        );
        // A fact about another subject may leave the object out: it is this entity.
        let about = FactInput {
            predicate: "writes_to".into(),
            object: String::new(),
            subject: "OrdersDB".into(),
        };
        assert_eq!(about.ends("InvoiceService"), ("OrdersDB", "InvoiceService"));
        assert!(
            validate(&EntityInput {
                facts: vec![about],
                ..good.clone()
            })
            .is_ok()
        );
        assert!(
            validate(&EntityInput {
                facts: vec![FactInput::new("uses", " ")],
                ..good.clone()
            })
            .is_err()
        );
        assert!(
            validate(&EntityInput {
                aliases: vec!["a".into(); 17],
                ..good.clone()
            })
            .is_err()
        );
        assert!(
            validate(&EntityInput {
                name: "x".repeat(300),
                ..good
            })
            .is_err()
        );
    }

    #[test]
    fn values_are_not_documents_and_facts_find_their_entities() {
        let entity = |id: &str, name: &str, entity_type: &str| MemoryEntity {
            id: id.into(),
            name: name.into(),
            entity_type: entity_type.into(),
            aliases: vec![],
            created_at: 0,
            updated_at: 0,
        };
        let entities = vec![
            entity("a", "Payments", "service"),
            entity("v", "team-checkout", VALUE_TYPE),
            entity("o", "OrdersDB", VALUE_TYPE),
        ];
        let facts = vec![
            (
                "a".into(),
                "Payments".into(),
                "owned_by".into(),
                "v".into(),
                "team-checkout".into(),
            ),
            (
                "o".into(),
                "OrdersDB".into(),
                "writes_to".into(),
                "a".into(),
                "Payments".into(),
            ),
        ];
        let documents = documents(entities, &facts);
        let names: Vec<&str> = documents.iter().map(|d| d.entity.name.as_str()).collect();
        assert_eq!(
            names,
            ["Payments", "OrdersDB"],
            "a value is not an entry; a subject is"
        );
        // The names its facts connect it to, and their predicates apart.
        assert_eq!(documents[0].facts, ["team-checkout", "OrdersDB"]);
        assert_eq!(documents[0].predicates, ["owned by", "writes to"]);
        assert_eq!(documents[1].facts, ["Payments"]);
        assert_eq!(documents[1].predicates, ["writes to"]);
    }

    #[test]
    fn ids_are_per_namespace() {
        let a = entity_id("org_a|g", "Payments");
        assert_eq!(a, entity_id("org_a|g", "Payments"));
        assert_ne!(a, entity_id("org_b|g", "Payments"));
        assert!(codectx_core::ids::is_minted(&a));
    }
}
