//! Reading a symbol's lines from the checkout recorded at index time, verified against the
//! symbol's content hash. A mismatch fails closed (`stale`): the caller never sees text
//! that differs from what the graph describes.

use std::path::{Component, Path};

use codectx_errors::{Error, ErrorKind};
use codectx_graph::Node;
use codectx_graph::model::content_hash;

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
    // Messages name repository-relative paths only: the checkout's location on this
    // server is not the caller's business.
    let canonical_root = root.canonicalize().map_err(|_| {
        stale("the repository's checkout is no longer on this server; re-index it".into())
    })?;
    let canonical = full
        .canonicalize()
        .map_err(|_| stale(format!("{} no longer exists in the checkout", node.path)))?;
    if !canonical.starts_with(&canonical_root) {
        return Err(Error::permission_denied(format!(
            "{} resolves outside the checkout",
            node.path
        )));
    }
    let span = read_span(&canonical, node.start_line, node.end_line)
        .map_err(|e| stale(format!("{} cannot be read: {}", node.path, e.kind())))?;
    let span = match span {
        Span::Text(span) => span,
        Span::TooLarge => {
            return Err(Error::limit_exceeded(
                "snippet",
                (MAX_SNIPPET_BYTES + 1) as u64,
                MAX_SNIPPET_BYTES as u64,
                "bytes",
            )
            .with_field("symbol_id"));
        }
        Span::Short => {
            return Err(stale(format!(
                "{} is shorter than the indexed span of {}",
                node.path, node.qualified_name
            )));
        }
    };
    if content_hash(&span) != node.fingerprint {
        return Err(stale(format!(
            "{} changed since it was indexed; re-index the repository",
            node.qualified_name
        )));
    }
    let span = String::from_utf8(span).map_err(|_| {
        stale(format!(
            "{} is not UTF-8 text any more; re-index the repository",
            node.path
        ))
    })?;
    Ok(span)
}

/// What the lines `start..=end` of a file hold.
#[derive(Debug, PartialEq, Eq)]
enum Span {
    /// The bytes of those lines, with their newlines (the last line may have none).
    Text(Vec<u8>),
    /// More than [`MAX_SNIPPET_BYTES`]: reading stopped there.
    TooLarge,
    /// The file ends before line `end`.
    Short,
}

/// Streams the file to the span: lines before it are skipped without being held, and no
/// more than the snippet cap (plus one byte) is ever buffered, however large the file.
fn read_span(path: &Path, start: u32, end: u32) -> std::io::Result<Span> {
    use std::io::{BufRead, Read};
    if start == 0 || end < start {
        return Ok(Span::Short);
    }
    let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
    for _ in 1..start {
        if reader.skip_until(b'\n')? == 0 {
            return Ok(Span::Short);
        }
    }
    let mut span = Vec::new();
    let mut line = start;
    loop {
        let allowed = (MAX_SNIPPET_BYTES + 1 - span.len()) as u64;
        let read = (&mut reader).take(allowed).read_until(b'\n', &mut span)?;
        if span.len() > MAX_SNIPPET_BYTES {
            return Ok(Span::TooLarge);
        }
        let complete = span.last() == Some(&b'\n');
        if read == 0 || !complete {
            // End of file: the span is whole only if this was its last line.
            return Ok(if read > 0 && line == end {
                Span::Text(span)
            } else {
                Span::Short
            });
        }
        if line == end {
            return Ok(Span::Text(span));
        }
        line += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codectx_graph::model::span_text;

    fn span_of(text: &str, start: u32, end: u32) -> Span {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, text).unwrap();
        read_span(&path, start, end).unwrap()
    }

    #[test]
    fn streamed_spans_match_the_indexers_span_text() {
        let texts = ["a\nb\nc\n", "a\nb\nc", "one line", "\n\n\n", "x\r\ny\n"];
        for text in texts {
            for start in 1..5 {
                for end in start..6 {
                    let expected = match span_text(text, start, end) {
                        Some(span) => Span::Text(span.as_bytes().to_vec()),
                        None => Span::Short,
                    };
                    assert_eq!(
                        span_of(text, start, end),
                        expected,
                        "{text:?} {start}..={end}"
                    );
                }
            }
        }
    }

    #[test]
    fn large_spans_stop_at_the_cap() {
        let line = "x".repeat(1024) + "\n";
        let text = line.repeat(100);
        assert_eq!(span_of(&text, 1, 100), Span::TooLarge);
        assert!(matches!(span_of(&text, 1, 10), Span::Text(t) if t.len() == 10 * 1025));
    }
}
