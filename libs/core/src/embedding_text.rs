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

/// Kinds of code symbols that get a vector: what a plain-language task asks for.
/// Variables, fields, aliases, literals and document sections do not (literals and
/// messages are matched as text by the lexical leg).
pub const CODE_KINDS: &[&str] = &[
    "function",
    "method",
    "type",
    "interface",
    "class",
    "constant",
];

/// The words of an identifier or path: `NegotiateFormat` -> negotiate format,
/// `parse_config` -> parse config, `gin/render.(*JSON).Render` -> gin render json render.
pub fn identifier_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut word = String::new();
        for (at, &c) in chars.iter().enumerate() {
            if let Some(previous) = word.chars().last() {
                let next = chars.get(at + 1).copied();
                let boundary = (previous.is_lowercase() && c.is_uppercase())
                    || (previous.is_alphabetic() && c.is_ascii_digit())
                    || (previous.is_ascii_digit() && c.is_alphabetic())
                    || (previous.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase));
                if boundary {
                    words.push(std::mem::take(&mut word).to_lowercase());
                }
            }
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word.to_lowercase());
        }
    }
    words
}

/// What a code symbol's text is made of (DESIGN.md section 3 and ADR 0011, metadata
/// only, never its body): the graph's fields for it, and the names next to it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeSymbol<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub qualified_name: &'a str,
    pub signature: &'a str,
    /// The first line of its doc comment.
    pub summary: &'a str,
    /// Its doc comment's prose on one line (`summary` is its start).
    pub doc: &'a str,
    /// What it calls (resolved calls, in order).
    pub uses: &'a [String],
    /// What it holds (a type's methods and fields).
    pub members: &'a [String],
}

impl CodeSymbol<'_> {
    /// The text embedded for the symbol: its kind and the words of its name, the words of
    /// the last two parts of its qualifier (`gin context` of
    /// `github.com/gin-gonic/gin.(*Context).Negotiate`: the host and owner say nothing),
    /// the start of its signature and of its doc (or summary), then the words of what it
    /// uses and what it has. Short on purpose: the model reads 128 tokens at most and its
    /// time grows with them. The doc, uses and members took the labelled symbol into the
    /// top 10 for 64% of the calibration tasks instead of 49% (docs/BENCHMARKS.md).
    pub fn text(&self) -> String {
        let mut text = format!("{} {}", self.kind, identifier_words(self.name).join(" "));
        // The qualifier: what precedes the name, after the last `/` (the package path).
        let tail = self
            .qualified_name
            .rsplit('/')
            .next()
            .unwrap_or(self.qualified_name);
        let qualifier = tail.strip_suffix(self.name).unwrap_or(tail);
        let parts: Vec<&str> = qualifier
            .split(['.', ':', '#', '(', ')', '*'])
            .filter(|p| !p.is_empty())
            .collect();
        let context = identifier_words(&parts[parts.len().saturating_sub(2)..].join(" "));
        if !context.is_empty() {
            text.push_str(" in ");
            text.push_str(&context.join(" "));
        }
        let signature: String = self
            .signature
            .trim()
            .chars()
            .take(CODE_SIGNATURE_CHARS)
            .collect();
        let doc = if self.doc.trim().is_empty() {
            self.summary
        } else {
            self.doc
        };
        let doc: String = doc.trim().chars().take(CODE_DOC_CHARS).collect();
        let names = |label: &str, names: &[String], most: usize| -> String {
            if names.is_empty() {
                return String::new();
            }
            let words: Vec<String> = names
                .iter()
                .take(most)
                .map(|name| identifier_words(name).join(" "))
                .collect();
            format!("{label} {}", words.join(", "))
        };
        for part in [
            signature,
            doc,
            names("uses", self.uses, CODE_USES),
            names("has", self.members, CODE_MEMBERS),
        ] {
            let part = part.trim_end_matches('.');
            if !part.is_empty() {
                text.push_str(". ");
                text.push_str(part);
            }
        }
        text
    }
}

/// Characters of a signature that go into a code symbol's text.
pub const CODE_SIGNATURE_CHARS: usize = 60;
/// Characters of a doc (or summary) that go into a code symbol's text.
pub const CODE_DOC_CHARS: usize = 200;
/// Names of what a symbol uses that go into its text.
pub const CODE_USES: usize = 10;
/// Names of a type's members that go into its text.
pub const CODE_MEMBERS: usize = 12;

/// The vector id of a code symbol's text: `cv_` and 32 hex of SHA-256(node id, text).
/// A symbol whose text changes gets a new id, so a graph's stored ids tell what is
/// embedded already and what is stale, without a digest stored beside each vector.
pub fn code_vector_id(node_id: &str, text: &str) -> String {
    crate::ids::derive("cv", &format!("{node_id}\0{text}"))
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
    fn code_text_is_metadata_in_words() {
        assert_eq!(
            identifier_words("gin.(*Context).NegotiateFormat"),
            ["gin", "context", "negotiate", "format"]
        );
        assert_eq!(
            identifier_words("parse_HTTPConfig2"),
            ["parse", "http", "config", "2"]
        );
        let uses = ["negotiateFormat".to_owned(), "JSON".to_owned()];
        let members = ["Render".to_owned()];
        let symbol = CodeSymbol {
            kind: "method",
            name: "Negotiate",
            qualified_name: "github.com/gin-gonic/gin.(*Context).Negotiate",
            signature: "func (c *Context) Negotiate(code int, config Negotiate)",
            summary: "Negotiate calls different Render according to acceptable Accept format.",
            doc: "",
            uses: &uses,
            members: &members,
        };
        assert_eq!(
            symbol.text(),
            "method negotiate in gin context. func (c *Context) Negotiate(code int, config Negotiate). \
             Negotiate calls different Render according to acceptable Accept format. \
             uses negotiate format, json. has render"
        );
        // The doc, when there is one, stands for the summary it starts with.
        let documented = CodeSymbol {
            doc: "Negotiate calls different Render. It writes the status code first.",
            uses: &[],
            members: &[],
            ..symbol
        };
        assert!(
            documented
                .text()
                .ends_with("It writes the status code first")
        );
        let id = code_vector_id("n_1", "a text");
        assert!(crate::ids::has_prefix(&id, "cv"));
        assert_ne!(id, code_vector_id("n_1", "another text"));
        assert_eq!(id, code_vector_id("n_1", "a text"));
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
