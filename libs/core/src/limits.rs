//! The caps of DESIGN.md section 5, and checks that turn a breach into a typed error that
//! names the field, the limit and what the request had.

use codectx_errors::Error;

pub const CANDIDATES_PER_LEG: usize = 10;
/// Nearest vectors a dense leg may read before it filters them (test code out of a query
/// not about tests); what it passes to fusion is still at most [`CANDIDATES_PER_LEG`]
/// (ADR 0011).
pub const VECTOR_FETCH_DEPTH: usize = 30;
pub const RRF_K: f64 = 60.0;
pub const ENTRIES_AFTER_HYDRATION: usize = 8;
pub const MAX_EXPANSION_DEPTH: u32 = 2;
pub const RECALL_MAX_ENTRIES: usize = 8;
pub const RECALL_MAX_HOPS: u32 = 2;
pub const RECALL_MAX_FACTS: usize = 80;
pub const RECALL_MAX_BYTES: usize = 32 * 1024;
pub const RECALL_QUERY_BYTES: usize = 4 * 1024;
pub const RECALL_QUERY_BYTES_HTTP: usize = 2_000;
pub const MEMORY_ENTITIES_PER_NAMESPACE: usize = 5_000;
pub const TASK_BYTES: usize = 8 * 1024;
pub const SELECTOR_BYTES: usize = 4 * 1024;
pub const FILE_LIST_ENTRIES: usize = 100;
pub const DIFF_BYTES: usize = 4 * 1024 * 1024;
/// Hunks in one diff (*ours*): a 4 MiB diff of ordinary hunks has a few thousand.
pub const DIFF_HUNKS: usize = 10_000;
/// Highest line number a diff may name (*ours*): larger ones are not source files, and
/// line arithmetic stays far from `u32` overflow.
pub const DIFF_MAX_LINE: u32 = 10_000_000;
/// Symbols one PR context may describe (*ours*): each costs graph reads for its callers
/// and tests, so a larger change is split by the caller.
pub const CHANGED_SYMBOLS: usize = 500;
/// Entries of a `kinds` filter (*ours*): more than the node kinds that exist.
pub const KINDS_PER_REQUEST: usize = 16;
/// Largest gRPC message a codectx service or client decodes: room for an oversize diff
/// to reach the typed `diff` check (and its clear error) instead of failing in transport.
pub const GRPC_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
pub const MIN_TOKENS: u32 = 256;
pub const MAX_TOKENS: u32 = 20_000;
pub const DEFAULT_TOKENS_MINIMAL_CONTEXT: u32 = 1_500;
pub const DEFAULT_TOKENS_CONTEXT: u32 = 20_000;
pub const OPERATION_DEADLINE_SECONDS: u64 = 10;
pub const DENSE_LEG_DEADLINE_SECONDS: u64 = 2;
/// A lexical corpus stream is a cache fill, not a tool call: its first chunk is due within
/// the operation deadline, and the whole stream within this one (a server graph store
/// reads a large graph's corpus page by page for longer than a tool call may take; the
/// lexical ranker keeps loading after the caller that started it has given up).
pub const CORPUS_STREAM_DEADLINE_SECONDS: u64 = 120;
/// How long a request waits for its scope's lexical index to load before it answers
/// `unavailable` (retry) while the load goes on: under [`OPERATION_DEADLINE_SECONDS`],
/// so the caller is told the index is loading rather than that it asked too much.
pub const INDEX_LOAD_WAIT_SECONDS: u64 = 6;

/// `INVALID_ARGUMENT` (reason `limit_exceeded`) when `value` is longer than `limit` bytes.
pub fn check_bytes(field: &str, value: &str, limit: usize) -> Result<(), Error> {
    if value.len() > limit {
        return Err(Error::limit_exceeded(
            field,
            value.len() as u64,
            limit as u64,
            "bytes",
        ));
    }
    Ok(())
}

/// `INVALID_ARGUMENT` (reason `limit_exceeded`) when a list holds more than `limit` items.
pub fn check_count(field: &str, count: usize, limit: usize, unit: &str) -> Result<(), Error> {
    if count > limit {
        return Err(Error::limit_exceeded(
            field,
            count as u64,
            limit as u64,
            unit,
        ));
    }
    Ok(())
}

/// Checks a `kinds` filter at the edge (count capped before anything scans it) and
/// returns it sorted and deduplicated; each service that interprets kinds checks names.
pub fn normalize_kinds(mut kinds: Vec<String>) -> Result<Vec<String>, Error> {
    check_count("kinds", kinds.len(), KINDS_PER_REQUEST, "kinds")?;
    for kind in &kinds {
        check_bytes("kinds", kind, 64)?;
    }
    kinds.sort();
    kinds.dedup();
    Ok(kinds)
}

/// Normalizes a requested token budget: 0 means `default`; others clamp to 256..20,000.
pub fn normalize_max_tokens(requested: u32, default: u32) -> u32 {
    if requested == 0 {
        default
    } else {
        requested.clamp(MIN_TOKENS, MAX_TOKENS)
    }
}

/// Clamps a requested expansion depth to 1..2 (0 means 1).
pub fn clamp_depth(requested: u32) -> u32 {
    requested.clamp(1, MAX_EXPANSION_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_capped_before_use_and_deduplicated() {
        let many = vec!["function".to_owned(); 400_000];
        let error = normalize_kinds(many).unwrap_err();
        assert_eq!(error.field(), "kinds");
        assert_eq!(error.limit(), Some(KINDS_PER_REQUEST as u64));
        let kept = normalize_kinds(vec!["method".into(), "function".into(), "method".into()]);
        assert_eq!(
            kept.unwrap(),
            vec!["function".to_owned(), "method".to_owned()]
        );
    }

    #[test]
    fn byte_cap_names_limit() {
        let task = "x".repeat(TASK_BYTES + 1);
        let error = check_bytes("task", &task, TASK_BYTES).unwrap_err();
        assert_eq!(error.limit(), Some(8192));
        assert_eq!(error.actual(), Some(8193));
        assert!(
            error.message().contains("8,192 bytes"),
            "{}",
            error.message()
        );
        assert!(check_bytes("task", "short", TASK_BYTES).is_ok());
    }

    #[test]
    fn count_cap() {
        assert!(check_count("files", 100, FILE_LIST_ENTRIES, "files").is_ok());
        let error = check_count("files", 101, FILE_LIST_ENTRIES, "files").unwrap_err();
        assert_eq!(
            error.message(),
            "files is 101 files; the limit is 100 files: shorten or split it"
        );
    }

    #[test]
    fn token_budget_normalization() {
        assert_eq!(
            normalize_max_tokens(0, DEFAULT_TOKENS_MINIMAL_CONTEXT),
            1_500
        );
        assert_eq!(normalize_max_tokens(10, 1_500), 256);
        assert_eq!(normalize_max_tokens(50_000, 1_500), 20_000);
        assert_eq!(normalize_max_tokens(4_000, 1_500), 4_000);
    }

    #[test]
    fn depth_clamp() {
        assert_eq!(clamp_depth(0), 1);
        assert_eq!(clamp_depth(2), 2);
        assert_eq!(clamp_depth(9), 2);
    }
}
