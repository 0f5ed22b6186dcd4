//! Agent memory: entities with names, aliases and types, and FACT relations between
//! entities of the same namespace. Every operation is rooted at the (tenant, namespace)
//! of a verified context; ids derive from the namespace and the name, so the same name in
//! two namespaces is two entities.

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

/// What `remember` asks to store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityInput {
    pub name: String,
    pub entity_type: String,
    pub aliases: Vec<String>,
    /// (predicate, object name).
    pub facts: Vec<(String, String)>,
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
    }
    limits::check_count("aliases", input.aliases.len(), MAX_ALIASES, "aliases")?;
    for alias in &input.aliases {
        check_text("aliases", alias, MAX_NAME_BYTES)?;
    }
    limits::check_count("facts", input.facts.len(), MAX_FACTS_PER_CALL, "facts")?;
    for (predicate, object) in &input.facts {
        check_predicate(predicate)?;
        check_text("facts.object", object, MAX_NAME_BYTES)?;
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
    /// Every entity of the namespace (the lexical corpus).
    async fn memory_corpus(
        &self,
        tenant_id: &str,
        namespace: &str,
    ) -> Result<Vec<MemoryEntity>, Error>;
    /// Changes whenever the namespace's entities change.
    async fn memory_version(&self, tenant_id: &str, namespace: &str) -> Result<String, Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        let good = EntityInput {
            name: "Payments service".into(),
            entity_type: "service".into(),
            aliases: vec!["payments".into()],
            facts: vec![("owned_by".into(), "Team Ledger".into())],
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
                facts: vec![("Owned By".into(), "x".into())],
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
    fn ids_are_per_namespace() {
        let a = entity_id("org_a|g", "Payments");
        assert_eq!(a, entity_id("org_a|g", "Payments"));
        assert_ne!(a, entity_id("org_b|g", "Payments"));
        assert!(codectx_core::ids::is_minted(&a));
    }
}
