//! Stack traces (Java, Kotlin, .NET, Node, Python, pytest, Go, Rust): every exception and
//! panic line stays, and so does the **failing frame** of every trace, at every level:
//! the innermost frame in the project's own code (not the runtime, standard library,
//! test framework or a dependency), and the innermost frame overall, where it was
//! thrown. Other project frames stay at summary (a few at aggressive); runtime and
//! framework frames collapse into a count.
//!
//! A frame is its location line plus the lines that belong to it: Python's code and
//! caret lines under `File "..."`, Rust's `at ./src/...` line under a numbered frame,
//! Go's function line above its `\t/path/file.go:31` line. A trace is the run of frames
//! between two boundaries (an exception or panic line, a traceback header, a section
//! banner, "Caused by"), so chained exceptions and ExceptionGroup members each get
//! their own failing frame. Python and pytest list the most recent call last; the others
//! first. Lines of nested ExceptionGroups (`| `) are read without their bars.

use crate::level::Level;

/// The text of a line without indentation or ExceptionGroup bars.
pub(super) fn body(line: &str) -> &str {
    line.trim_start_matches([' ', '\t', '|'])
}

/// How a frame line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// `at pkg.Class.method(File.java:12)`, `at fn (file.js:3:9)`, `at Ns.Type.M() in F.cs:line 4`.
    At,
    /// `File "path", line 12, in name` (most recent call last).
    Python,
    /// pytest's `path.py:12: in name` (most recent call last).
    Pytest,
    /// `12: crate::module::function`, with its `at path:line:col` line below.
    Numbered,
    /// Go's `\t/path/file.go:31 +0x1d`, with its function line above.
    GoFile,
}

fn frame_kind(line: &str) -> Option<FrameKind> {
    let text = body(line);
    if text.starts_with("at ") && (text.contains('(') || text.contains(':')) {
        return Some(FrameKind::At);
    }
    // Node's test runner writes frames without `at`: `parseQty (/app/cart.js:4:77)`.
    if let Some(inner) = text
        .strip_suffix(')')
        .and_then(|t| t.rsplit_once(" ("))
        .map(|(_, i)| i)
        && (inner.starts_with("node:")
            || inner.rsplit_once(':').is_some_and(|(l, _)| is_path_line(l)))
    {
        return Some(FrameKind::At);
    }
    if text.starts_with("File \"") && text.contains(", line ") {
        return Some(FrameKind::Python);
    }
    if let Some((location, rest)) = text.split_once(": in ")
        && !rest.is_empty()
        && is_path_line(location)
    {
        return Some(FrameKind::Pytest);
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && text[digits..].starts_with(": ") && !text[digits + 2..].contains(' ') {
        return Some(FrameKind::Numbered);
    }
    if line.starts_with('\t') && text.starts_with('/') && text.contains(".go:") {
        return Some(FrameKind::GoFile);
    }
    None
}

/// `path/file.ext:12` (a path with an extension, a colon and a line number).
fn is_path_line(text: &str) -> bool {
    let Some((path, line)) = text.rsplit_once(':') else {
        return false;
    };
    !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
        && !path.contains(' ')
        && path
            .rsplit('/')
            .next()
            .is_some_and(|file| file.contains('.'))
}

/// Whether a line is a stack frame in one of the common formats.
pub(super) fn is_frame(line: &str) -> bool {
    frame_kind(line).is_some() || is_elided(line)
}

/// `... 3 more` (Java's elided common frames).
fn is_elided(line: &str) -> bool {
    let text = body(line);
    text.starts_with("... ") && text.ends_with(" more")
}

/// Whether a line starts a trace: an exception, a panic or a traceback header.
pub(super) fn is_header(line: &str) -> bool {
    let text = body(line);
    text.starts_with("Traceback (most recent call last)")
        || text.starts_with("Exception Group Traceback")
        || text.starts_with("Exception in thread")
        || text.starts_with("Caused by:")
        || text.starts_with("Suppressed:")
        || text.starts_with("panic:")
        || text.starts_with("goroutine ")
        || text.starts_with("stack backtrace:")
        || text.contains("panicked at")
        || text.starts_with("Unhandled exception")
        || text.starts_with("Uncaught ")
        || exception_line(text)
}

/// `java.lang.IllegalStateException: ...`, `ValueError: ...`, `KeyError: 'FR'`,
/// `billing.InvoiceError: ...`, `ExceptionGroup: ...`.
pub(super) fn exception_line(text: &str) -> bool {
    let name = text.split_once(':').map_or(text, |(name, _)| name);
    let name = name.strip_prefix("E ").map_or(name, str::trim_start);
    !name.is_empty()
        && !name.contains(' ')
        && (name.ends_with("Exception")
            || name.ends_with("Error")
            || name.ends_with("Throwable")
            || name.ends_with("ExceptionGroup"))
}

/// Frames of runtimes, standard libraries, test frameworks and dependencies.
fn is_framework(line: &str) -> bool {
    const MARKS: &[&str] = &[
        "at java.",
        "at javax.",
        "at jdk.",
        "at sun.",
        "at com.sun.",
        "at org.junit.",
        "at junit.",
        "at org.apache.maven.",
        "at org.springframework.",
        "at org.gradle.",
        "at kotlin.",
        "at kotlinx.",
        "at scala.",
        "at org.codehaus.",
        "at java.base/",
        "at node:",
        "(node:",
        "node_modules",
        "/lib/python3",
        "site-packages",
        "dist-packages",
        "<frozen ",
        "_pytest",
        "/usr/lib/go",
        "/usr/local/go/",
        "/src/runtime/",
        "/src/testing/",
        "runtime.",
        "testing.",
        "std::",
        "core::",
        "alloc::",
        "test::",
        "/rustc/",
        "/.cargo/registry/",
        "<fn(",
        "at System.",
        "at Microsoft.",
    ];
    let text = body(line);
    MARKS.iter().any(|mark| text.contains(mark)) || is_elided(line)
}

/// A frame: the lines it spans and where it comes from.
#[derive(Debug, Clone, Copy)]
struct Frame {
    from: usize,
    to: usize,
    kind: FrameKind,
    framework: bool,
}

/// Lines that end a trace: a new exception or header, a section banner, a blank line
/// after Java's or Rust's frames, or the "above exception" separators of Python.
fn is_boundary(line: &str) -> bool {
    let text = body(line);
    is_header(line)
        || text.starts_with("The above exception")
        || text.starts_with("During handling of the above exception")
        || is_banner(text)
}

/// A section banner: `____ test_name ____`, `==== FAILURES ====`, `---- x stdout ----`,
/// `--- FAIL: TestX`, `+---- 1 ----`; not pytest's `_ _ _ _` frame separator.
fn is_banner(text: &str) -> bool {
    let marks = text
        .chars()
        .filter(|c| matches!(c, '_' | '=' | '-' | '+'))
        .count();
    let spaced = text.starts_with("_ _ _");
    (!spaced && text.len() >= 8 && marks * 2 >= text.len())
        || text.starts_with("--- FAIL")
        || text.starts_with("---- ")
}

/// Every frame of `lines`, grouped into traces.
fn traces(lines: &[&str]) -> Vec<Vec<Frame>> {
    let mut traces: Vec<Vec<Frame>> = Vec::new();
    let mut current: Vec<Frame> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        // Any other line ends a trace (frames are contiguous once their own code lines
        // are counted in), except pytest's `_ _ _` separator between frames.
        let Some(kind) = frame_kind(line) else {
            let go_function = lines
                .get(index + 1)
                .is_some_and(|next| frame_kind(next) == Some(FrameKind::GoFile));
            if !current.is_empty() && !body(line).starts_with("_ _ _") && !go_function {
                traces.push(std::mem::take(&mut current));
            }
            index += 1;
            continue;
        };
        let mut from = index;
        let mut to = index + 1;
        match kind {
            // Code and caret lines under the frame, more indented than it.
            FrameKind::Python | FrameKind::Pytest => {
                let indent = indentation(line);
                while to < lines.len()
                    && frame_kind(lines[to]).is_none()
                    && !lines[to].trim().is_empty()
                    && indentation(lines[to]) > indent
                    && !is_boundary(lines[to])
                {
                    to += 1;
                }
            }
            FrameKind::Numbered => {
                if to < lines.len() && body(lines[to]).starts_with("at ") {
                    to += 1;
                }
            }
            FrameKind::GoFile => {
                // The function line above belongs to this frame.
                if from > 0
                    && frame_kind(lines[from - 1]).is_none()
                    && !lines[from - 1].starts_with('\t')
                    && !is_boundary(lines[from - 1])
                    && !lines[from - 1].trim().is_empty()
                {
                    from -= 1;
                }
            }
            FrameKind::At => {}
        }
        let framework = (from..to).any(|i| is_framework(lines[i]));
        current.push(Frame {
            from,
            to,
            kind,
            framework,
        });
        index = to;
    }
    if !current.is_empty() {
        traces.push(current);
    }
    traces
}

fn indentation(line: &str) -> usize {
    line.len() - body(line).len()
}

/// What to keep of the frames of `lines` at `level`: per line, whether it is kept, and
/// for each collapsed run of frames, the line it follows and how many frames it held.
pub(super) struct FrameChoice {
    pub keep: Vec<bool>,
    /// Lines that belong to a frame (kept or not).
    pub framed: Vec<bool>,
}

/// Chooses the frames to keep: the failing frames of every trace at every level, the
/// other project frames at summary (three per trace at aggressive).
pub(super) fn choose_frames(lines: &[&str], level: Level) -> FrameChoice {
    let project_frames = match level {
        Level::Off | Level::Summary => usize::MAX,
        Level::Aggressive => 3,
        Level::Minimal => 0,
    };
    let mut keep = vec![false; lines.len()];
    let mut framed = vec![false; lines.len()];
    for trace in traces(lines) {
        let recent_last = matches!(trace[0].kind, FrameKind::Python | FrameKind::Pytest);
        // Innermost first.
        let order: Vec<&Frame> = if recent_last {
            trace.iter().rev().collect()
        } else {
            trace.iter().collect()
        };
        let mut chosen: Vec<&Frame> = Vec::new();
        // Where an exception was thrown, even inside a library; a panic's innermost
        // frames are the unwinding machinery, so Go and Rust traces skip this.
        let thrown = order.iter().find(|f| !is_elided(lines[f.from]));
        if let Some(thrown) = thrown
            && !matches!(thrown.kind, FrameKind::Numbered | FrameKind::GoFile)
        {
            chosen.push(thrown);
        }
        if let Some(failing) = order.iter().find(|f| !f.framework) {
            chosen.push(failing);
        }
        chosen.extend(
            order
                .iter()
                .filter(|f| !f.framework)
                .skip(1)
                .take(project_frames),
        );
        for frame in &trace {
            framed[frame.from..frame.to].fill(true);
        }
        for frame in chosen {
            keep[frame.from..frame.to].fill(true);
        }
    }
    FrameChoice { keep, framed }
}

/// Caret and tilde lines under a code line (`   ^^^^~~~~`): where in the line, which
/// the location already gives.
pub(super) fn is_caret_line(line: &str) -> bool {
    let text = body(line).trim_end();
    !text.is_empty() && text.chars().all(|c| matches!(c, '^' | '~' | ' '))
}

pub(super) fn compress(text: &str, level: Level) -> String {
    if level == Level::Off {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let choice = choose_frames(&lines, level);
    let mut out: Vec<String> = Vec::new();
    let mut collapsed = 0usize;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if choice.framed[index] && !choice.keep[index] {
            // Count a frame once: at its location line.
            if frame_kind(line).is_some() || is_elided(line) {
                collapsed += 1;
            }
            index += 1;
            continue;
        }
        if collapsed > 0 {
            out.push(format!("    … {collapsed} frames"));
            collapsed = 0;
        }
        if !is_caret_line(line) {
            out.push(line.to_owned());
        }
        index += 1;
    }
    if collapsed > 0 {
        out.push(format!("    … {collapsed} frames"));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAVA: &str =
        "Exception in thread \"main\" java.lang.IllegalStateException: cart is closed
\tat com.shop.Cart.add(Cart.java:41)
\tat com.shop.Checkout.run(Checkout.java:17)
\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1596)
\tat com.shop.Main.main(Main.java:9)
Caused by: java.io.IOException: disk full
\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)
\tat java.base/java.io.FileOutputStream.write(FileOutputStream.java:349)
\tat com.shop.Store.save(Store.java:88)
\t... 3 more";

    const PYTHON: &str = "Traceback (most recent call last):
  File \"/app/main.py\", line 12, in <module>
    main()
  File \"/app/shop/cart.py\", line 30, in total
    return sum(item.price for item in self.items)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads
    return _default_decoder.decode(s)
ValueError: price is missing";

    const GO: &str = "panic: runtime error: index out of range [0] with length 0

goroutine 7 [running]:
testing.tRunner.func1.2({0x5786e0, 0xc000012345})
\t/usr/local/go/src/testing/testing.go:1734 +0x21c
panic({0x5786e0?, 0x66d0f0e8108?})
\t/usr/local/go/src/runtime/panic.go:860 +0x13a
example.com/shop/cart.(*Cart).Discount(...)
\t/work/shop/cart/cart.go:31
example.com/shop/cart.TestDiscount(0xc000003340)
\t/work/shop/cart/cart_test.go:47 +0x8f
testing.tRunner(0xc000003340, 0x5a1b28)
\t/usr/local/go/src/testing/testing.go:1792 +0xf4";

    #[test]
    fn failing_frames_and_exceptions_survive_every_level() {
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let java = compress(JAVA, level);
            for kept in [
                "IllegalStateException: cart is closed",
                "Cart.add(Cart.java:41)",
                "Caused by: java.io.IOException: disk full",
                "FileOutputStream.writeBytes",
                "com.shop.Store.save(Store.java:88)",
            ] {
                assert!(java.contains(kept), "{level}: {kept}\n{java}");
            }
            let python = compress(PYTHON, level);
            for kept in [
                "ValueError: price is missing",
                "/app/shop/cart.py\", line 30",
                "return sum(item.price",
                "json/__init__.py",
            ] {
                assert!(python.contains(kept), "{level}: {kept}\n{python}");
            }
            assert!(!python.contains("^^^"), "{level}: carets go");
            let go = compress(GO, level);
            for kept in [
                "panic: runtime error: index out of range",
                "example.com/shop/cart.(*Cart).Discount(...)",
                "/work/shop/cart/cart.go:31",
            ] {
                assert!(go.contains(kept), "{level}: {kept}\n{go}");
            }
        }
        let summary = compress(JAVA, Level::Summary);
        assert!(
            summary.contains("Checkout.run") && summary.contains("… 1 frames"),
            "{summary}"
        );
        let minimal = compress(GO, Level::Minimal);
        assert!(!minimal.contains("TestDiscount"), "{minimal}");
        assert!(!compress(PYTHON, Level::Minimal).contains("/app/main.py"));
    }
}
