//! Reading a symbol's lines from the checkout recorded at index time, verified against the
//! symbol's content hash. A mismatch fails closed (`stale`): the caller never sees text
//! that differs from what the graph describes.

use std::path::{Component, Path};

use codectx_errors::{Error, ErrorKind};
use codectx_graph::Node;
use codectx_graph::model::{content_hash, span_text};

/// Largest snippet returned.
pub const MAX_SNIPPET_BYTES: usize = 64 * 1024;

fn stale(message: String) -> Error {
    Error::new(ErrorKind::Stale, message).with_reason("stale")
}

/// The text of `node`'s span under `root`, if it still hashes to `node.fingerprint`
/// (and to `expected`, when the caller holds a fingerprint).
pub fn read(root: &str, node: &Node, expected: &str) -> Result<String, Error> {
    if node.path.is_empty() || node.start_line == 0 || node.fingerprint.is_empty() {
        return Err(Error::invalid_argument(
            "symbol_id",
            format!("{} has no source span to read", node.qualified_name),
        ));
    }
    if !expected.is_empty() && expected != node.fingerprint {
        return Err(stale(format!(
            "{} changed since the fingerprint you hold ({expected}); fetch its card again",
            node.qualified_name
        )));
    }
    let relative = Path::new(&node.path);
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(Error::internal(format!(
            "graph path {:?} is not a plain relative path",
            node.path
        )));
    }
    let root = Path::new(root);
    let full = root.join(relative);
    // Symlinks must not lead out of the checkout.
    let canonical_root = root
        .canonicalize()
        .map_err(|e| stale(format!("the checkout {} is gone: {e}", root.display())))?;
    let canonical = full
        .canonicalize()
        .map_err(|_| stale(format!("{} no longer exists in the checkout", node.path)))?;
    if !canonical.starts_with(&canonical_root) {
        return Err(Error::permission_denied(format!(
            "{} resolves outside the checkout",
            node.path
        )));
    }
    let text = std::fs::read_to_string(&canonical)
        .map_err(|e| stale(format!("{} cannot be read: {e}", node.path)))?;
    let span = span_text(&text, node.start_line, node.end_line).ok_or_else(|| {
        stale(format!(
            "{} is shorter than the indexed span of {}",
            node.path, node.qualified_name
        ))
    })?;
    if content_hash(span.as_bytes()) != node.fingerprint {
        return Err(stale(format!(
            "{} changed since it was indexed; re-index the repository",
            node.qualified_name
        )));
    }
    if span.len() > MAX_SNIPPET_BYTES {
        return Err(Error::limit_exceeded(
            "snippet",
            span.len() as u64,
            MAX_SNIPPET_BYTES as u64,
            "bytes",
        )
        .with_field("symbol_id"));
    }
    Ok(span.to_owned())
}
