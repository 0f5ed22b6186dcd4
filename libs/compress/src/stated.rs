//! Header lines stated once per session: the `index:` line (the graph's version, and
//! whether it is stale) and the `names relative to` line (the module prefix names are
//! relative to) that open an answer are sent when they differ from the last ones this
//! MCP session received, and left out when they are the same. An answer without them
//! reads "as in the answer before"; a changed index (a re-index, a stale checkout) or
//! another repository's prefix is stated again at once. Like HTTP/2's header
//! compression: what both sides already hold is not repeated.
//!
//! One rule governs names: the last names line stated applies. An answer whose names are
//! written in full (a snippet, a not-found) after answers that stated a prefix states
//! [`NAMES_AS_WRITTEN`] once, so no answer without a names line is read against a prefix
//! its names do not have.
//!
//! Only the header (the lines after the status line, before the first entry) is
//! touched, and only the kinds of line in [`STATED`]; `fresh: true` sends them all.

/// The header lines stated once, by their prefix (`names relative to P`, or
/// [`NAMES_AS_WRITTEN`]).
pub const STATED: &[&str] = &["index:", "names "];
/// Said when an answer's names are written in full after a prefix was stated.
pub const NAMES_AS_WRITTEN: &str = "names as written (no prefix)\n";
const NAMES: usize = 1;
/// Header lines that stay in place and do not end the header.
const KEPT: &[&str] = &["notice: "];

/// The last header line of each kind this session received.
#[derive(Debug, Default)]
pub struct StatedHeaders {
    last: [Option<String>; STATED.len()],
    /// Lines left out so far (for the statistics).
    elided: u64,
}

impl StatedHeaders {
    pub fn elided(&self) -> u64 {
        self.elided
    }

    /// `text` without the header lines this session already holds (with `elide`), and
    /// the lines sent remembered as the last stated.
    pub fn apply(&mut self, text: &str, elide: bool) -> String {
        let mut out = String::with_capacity(text.len() + NAMES_AS_WRITTEN.len());
        let mut in_header = true;
        let mut names_stated = false;
        for (number, line) in text.split_inclusive('\n').enumerate() {
            if number == 0 || !in_header {
                out.push_str(line);
                continue;
            }
            let kind = STATED.iter().position(|prefix| line.starts_with(prefix));
            match kind {
                Some(kind) => {
                    names_stated |= kind == NAMES;
                    let same = self.last[kind].as_deref() == Some(line);
                    if elide && same {
                        self.elided += 1;
                    } else {
                        self.last[kind] = Some(line.to_owned());
                        out.push_str(line);
                    }
                }
                None if KEPT.iter().any(|prefix| line.starts_with(prefix)) => {
                    out.push_str(line);
                }
                None => {
                    in_header = false;
                    // Entries follow (`kind name path:lines`, not a `key:` line such as
                    // a reference's `unchanged:`): their names must read right.
                    let entry = line
                        .split_whitespace()
                        .next()
                        .is_some_and(|word| !word.ends_with(':'));
                    if entry && !names_stated {
                        self.names_in_full(&mut out);
                    }
                    out.push_str(line);
                }
            }
        }
        out
    }

    /// Before entries whose header has no names line: after a stated prefix, say that
    /// these names are written in full (once, until a prefix is stated again).
    fn names_in_full(&mut self, out: &mut String) {
        if self.last[NAMES]
            .as_deref()
            .is_some_and(|last| last != NAMES_AS_WRITTEN)
        {
            out.push_str(NAMES_AS_WRITTEN);
            self.last[NAMES] = Some(NAMES_AS_WRITTEN.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: &str = "status: ok\nindex: version 136b174c7fcf\nnames relative to example.com/shop/\nfunction server.Run server/run.go:3-9\n  summary: Runs.\n";

    #[test]
    fn a_header_the_session_holds_is_left_out_until_it_changes() {
        let mut stated = StatedHeaders::default();
        assert_eq!(stated.apply(FIRST, true), FIRST);
        // The same header again: only the status and the entries.
        assert_eq!(
            stated.apply(FIRST, true),
            "status: ok\nfunction server.Run server/run.go:3-9\n  summary: Runs.\n"
        );
        // A re-index: the new version is stated, the prefix is not.
        let reindexed = FIRST.replace("136b174c7fcf", "9f00aa11bb22");
        assert_eq!(
            stated.apply(&reindexed, true),
            "status: ok\nindex: version 9f00aa11bb22\nfunction server.Run server/run.go:3-9\n  summary: Runs.\n"
        );
        // Another repository's prefix is stated; then the first one again, since it
        // was not the last one stated.
        let other = reindexed.replace("example.com/shop/", "example.com/other/");
        assert!(
            stated
                .apply(&other, true)
                .contains("names relative to example.com/other/")
        );
        assert!(
            stated
                .apply(&reindexed, true)
                .contains("names relative to example.com/shop/")
        );
        assert_eq!(stated.elided(), 5);
    }

    #[test]
    fn full_names_after_a_prefix_are_said_once() {
        let mut stated = StatedHeaders::default();
        // No prefix stated yet: names as written need no line.
        let snippet = "status: ok\nfunction example.com/shop/server.Run server/run.go:3-9\n";
        assert_eq!(stated.apply(snippet, true), snippet);
        stated.apply(FIRST, true);
        // After a prefix: the full names are said to be full, once.
        assert_eq!(
            stated.apply(snippet, true),
            "status: ok\nnames as written (no prefix)\nfunction example.com/shop/server.Run server/run.go:3-9\n"
        );
        assert_eq!(stated.apply(snippet, true), snippet);
        // The prefix again: stated, since it is no longer the last names line.
        assert!(
            stated
                .apply(FIRST, true)
                .contains("names relative to example.com/shop/")
        );
        // Without entries (a reference, a not-found) there are no names to read.
        stated.apply(FIRST, true);
        for text in [
            "status: not_found\n",
            "status: ok\nunchanged: the same answer as call 1 (search, 0 s ago)\n",
            "status: not_found\nsuggestion: try search\n",
        ] {
            assert_eq!(stated.apply(text, true), text);
        }
    }

    #[test]
    fn only_header_lines_are_touched_and_fresh_sends_them() {
        let mut stated = StatedHeaders::default();
        stated.apply(FIRST, true);
        // A line that reads like a header inside an entry stays (and these names are
        // said to be as written, the prefix having been stated).
        let body =
            "status: ok\nnotice: partial\nfunction a.B a.go:1\n  index: version 136b174c7fcf\n";
        assert_eq!(
            stated.apply(body, true),
            "status: ok\nnotice: partial\nnames as written (no prefix)\nfunction a.B a.go:1\n  index: version 136b174c7fcf\n"
        );
        let inner = "status: ok\nnotice: partial\nindex: version 136b174c7fcf\nfunction a.B a.go:1\nindex: version 136b174c7fcf\n";
        assert_eq!(
            stated.apply(inner, true),
            "status: ok\nnotice: partial\nfunction a.B a.go:1\nindex: version 136b174c7fcf\n"
        );
        // fresh: everything, and it is the last stated.
        assert_eq!(stated.apply(FIRST, false), FIRST);
        assert_eq!(stated.apply(FIRST, true).lines().count(), 3);
    }
}
