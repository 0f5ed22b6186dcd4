//! The texts the dense leg embeds: metadata only (DESIGN.md section 3), written by one
//! function each, so what is stored, what is calibrated (`codectx bench calibrate`) and
//! what is measured are the same text.

/// Facts of a memory entity that go into its text, at most.
pub const MEMORY_TEXT_FACTS: usize = 12;

/// A memory entity's text: its name, aliases and type, then its current facts as
/// `predicate object` (underscores read as spaces), each once, at most
/// [`MEMORY_TEXT_FACTS`]. Facts are what an agent chose to note about the entity, so a
/// question about what a fact says reaches the entity (ADR 0009).
pub fn memory_entity(
    name: &str,
    aliases: &[String],
    entity_type: &str,
    facts: &[(String, String)],
) -> String {
    let mut text = name.to_owned();
    if !aliases.is_empty() {
        text.push_str(", ");
        text.push_str(&aliases.join(", "));
    }
    if !entity_type.is_empty() {
        text.push_str(" (");
        text.push_str(entity_type);
        text.push(')');
    }
    let mut seen: Vec<String> = Vec::new();
    for (predicate, object) in facts {
        let line = format!("{} {object}", predicate.replace('_', " "));
        if seen.len() == MEMORY_TEXT_FACTS || seen.contains(&line) {
            continue;
        }
        seen.push(line);
    }
    if !seen.is_empty() {
        text.push_str(": ");
        text.push_str(&seen.join("; "));
    }
    text
}

/// The texts a memory entity is embedded as, one vector each ([`memory_part_id`]): its
/// name, aliases and type; then each current fact as `name predicate object`, at most
/// [`MEMORY_TEXT_FACTS`]. An entity scores its best part: a fact's words never dilute the
/// match on a name, and a question about one fact meets that fact alone (ADR 0009).
pub fn memory_parts(
    name: &str,
    aliases: &[String],
    entity_type: &str,
    facts: &[(String, String)],
) -> Vec<String> {
    let mut parts = vec![memory_entity(name, aliases, entity_type, &[])];
    for (predicate, object) in facts {
        let line = format!("{name} {} {object}", predicate.replace('_', " "));
        if parts.len() > MEMORY_TEXT_FACTS || parts.contains(&line) {
            continue;
        }
        parts.push(line);
    }
    parts
}

/// The vector id of part `index` of the entity `entity_id` (`ent_<hex>`): the entity id
/// itself for its names (part 0), then `fa<letter>_<hex>` per fact, in the minted-id
/// format literal-mode vector backends accept. [`memory_part_owner`] reverses it.
pub fn memory_part_id(entity_id: &str, index: usize) -> Option<String> {
    let (_, hex) = entity_id.split_once('_')?;
    match index {
        0 => Some(entity_id.to_owned()),
        1..=MEMORY_TEXT_FACTS => Some(format!("fa{}_{hex}", (b'a' + (index - 1) as u8) as char)),
        _ => None,
    }
}

/// Every vector id an entity may have ([`memory_part_id`]), for deletion.
pub fn memory_part_ids(entity_id: &str) -> Vec<String> {
    (0..=MEMORY_TEXT_FACTS)
        .filter_map(|index| memory_part_id(entity_id, index))
        .collect()
}

/// The entity a part's vector id belongs to (`faa_<hex>` -> `ent_<hex>`); an entity id
/// is its own owner.
pub fn memory_part_owner(vector_id: &str) -> String {
    match vector_id.split_once('_') {
        Some((prefix, hex)) if prefix.len() == 3 && prefix.starts_with("fa") => {
            format!("ent_{hex}")
        }
        _ => vector_id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_aliases_type_then_facts() {
        let facts = vec![
            ("owned_by".to_owned(), "team-checkout".to_owned()),
            ("owned_by".to_owned(), "team-checkout".to_owned()),
            ("deploys_with".to_owned(), "blue-green rollout".to_owned()),
        ];
        assert_eq!(
            memory_entity("PaymentsService", &["payments".into()], "service", &facts),
            "PaymentsService, payments (service): owned by team-checkout; deploys with blue-green rollout"
        );
        assert_eq!(memory_entity("Cache", &[], "", &[]), "Cache");
    }

    #[test]
    fn parts_and_their_ids_map_back_to_the_entity() {
        let facts = vec![(
            "retains".to_owned(),
            "transactions for seven years".to_owned(),
        )];
        assert_eq!(
            memory_parts("LedgerDB", &[], "database", &facts),
            vec![
                "LedgerDB (database)".to_owned(),
                "LedgerDB retains transactions for seven years".to_owned()
            ]
        );
        let entity = "ent_0123456789abcdef0123456789abcdef";
        assert_eq!(memory_part_id(entity, 0).as_deref(), Some(entity));
        let part = memory_part_id(entity, 1).unwrap();
        assert_eq!(part, "faa_0123456789abcdef0123456789abcdef");
        assert!(crate::ids::is_minted(&part));
        assert_eq!(memory_part_owner(&part), entity);
        assert_eq!(memory_part_owner(entity), entity);
        assert_eq!(memory_part_ids(entity).len(), MEMORY_TEXT_FACTS + 1);
        assert!(memory_part_id(entity, MEMORY_TEXT_FACTS + 1).is_none());
    }
}
