//! Ids minted by codectx: `<prefix>_<32 lowercase hex>`, 128 random bits.
//!
//! The format is strict on purpose: backends without filter parameters (milvus-lite) get a
//! literal filter mode that accepts only values of this shape.

/// Prefixes in use; each names the kind of thing identified.
pub mod prefix {
    pub const ORGANISATION: &str = "org";
    pub const TEAM: &str = "team";
    pub const SUBJECT: &str = "sub";
    pub const API_KEY: &str = "key";
    pub const REPOSITORY: &str = "repo";
    pub const GRANT: &str = "grnt";
    pub const CONTEXT: &str = "ctx";
    pub const SESSION: &str = "sess";
    pub const GRAPH: &str = "gph";
}

const RANDOM_BYTES: usize = 16;

/// `count` random bytes from the operating system.
pub fn random_bytes(count: usize) -> Vec<u8> {
    let mut buffer = vec![0u8; count];
    // The OS RNG failing is not recoverable for an auth service: there is no safe fallback.
    getrandom::fill(&mut buffer).expect("operating system random number generator");
    buffer
}

/// A fresh id with the given prefix.
pub fn mint(prefix: &str) -> String {
    format!("{prefix}_{}", hex::encode(random_bytes(RANDOM_BYTES)))
}

/// A deterministic id for an external identity (e.g. a graph id from a repository's
/// canonical location), in the same strict format as minted ids.
pub fn derive(prefix: &str, identity: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(identity.as_bytes());
    format!("{prefix}_{}", hex::encode(&digest[..RANDOM_BYTES]))
}

/// The graph id an organisation's indexing run writes for its repository key.
///
/// The owner is part of the identity, so two organisations that index the same key write
/// two graphs and neither run can change what the other reads (DESIGN.md section 4).
/// A NUL separates the parts: neither an organisation id nor a repository name holds one.
pub fn graph_for(owner_organisation_id: &str, repository_name: &str) -> String {
    derive(
        prefix::GRAPH,
        &format!("{owner_organisation_id}\0{repository_name}"),
    )
}

/// True when `value` is `<prefix>_<32 lowercase hex>` with a 2-4 letter lowercase prefix.
pub fn is_minted(value: &str) -> bool {
    let Some((prefix, random)) = value.split_once('_') else {
        return false;
    };
    (2..=4).contains(&prefix.len())
        && prefix.bytes().all(|b| b.is_ascii_lowercase())
        && random.len() == RANDOM_BYTES * 2
        && random
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// True when `value` is a minted id with exactly this prefix.
pub fn has_prefix(value: &str, prefix: &str) -> bool {
    is_minted(value) && value.split_once('_').is_some_and(|(p, _)| p == prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_are_recognised_and_unique() {
        let a = mint(prefix::ORGANISATION);
        let b = mint(prefix::ORGANISATION);
        assert_ne!(a, b);
        assert!(is_minted(&a));
        assert!(has_prefix(&a, "org"));
        assert!(!has_prefix(&a, "sub"));
    }

    #[test]
    fn derived_ids_are_stable_and_strict() {
        let a = derive(prefix::GRAPH, "/src/repo");
        assert_eq!(a, derive(prefix::GRAPH, "/src/repo"));
        assert_ne!(a, derive(prefix::GRAPH, "/src/other"));
        assert!(has_prefix(&a, "gph"));
        assert_ne!(graph_for("org_a", "shop"), graph_for("org_b", "shop"));
    }

    #[test]
    fn rejects_anything_else() {
        for bad in [
            "",
            "org",
            "org_",
            "org_0123",
            "ORG_0123456789abcdef0123456789abcdef",
            "org_0123456789ABCDEF0123456789abcdef",
            "org_0123456789abcdef0123456789abcdef'",
            "o_0123456789abcdef0123456789abcdef",
            "orgxx_0123456789abcdef0123456789abcdef",
            "org_0123456789abcdef0123456789abcdef or 1==1",
        ] {
            assert!(!is_minted(bad), "{bad:?} must not pass");
        }
    }
}
