//! Stack traces (Java, Python, Go, Node, Rust, .NET): exception and panic lines stay,
//! and so does the failing frame of every trace (the first frame under a header, and
//! for Python, whose most recent call is last, the last frame before the exception);
//! application frames stay at summary; runtime and framework frames collapse into a
//! count.

use crate::level::Level;

/// Whether a line is a stack frame in one of the common formats.
pub(super) fn is_frame(line: &str) -> bool {
    let trimmed = line.trim_start();
    (trimmed.starts_with("at ") && (trimmed.contains('(') || trimmed.contains(':')))
        || (trimmed.starts_with("File \"") && trimmed.contains(", line "))
        || (line.starts_with('\t') && trimmed.starts_with('/') && trimmed.contains(".go:"))
        || (trimmed.starts_with("... ") && trimmed.ends_with(" more"))
        || is_numbered_frame(trimmed)
}

/// Rust and gdb style: `12: std::rt::lang_start`.
fn is_numbered_frame(trimmed: &str) -> bool {
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && trimmed[digits..].starts_with(": ")
}

/// Whether a line starts a trace: an exception, a panic or a traceback header.
pub(super) fn is_header(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("Traceback (most recent call last)")
        || trimmed.starts_with("Exception in thread")
        || trimmed.starts_with("Caused by:")
        || trimmed.starts_with("panic:")
        || trimmed.starts_with("goroutine ")
        || trimmed.contains("panicked at")
        || trimmed.starts_with("Unhandled exception")
        || trimmed.starts_with("Uncaught ")
        || exception_line(trimmed)
}

/// `java.lang.IllegalStateException: ...`, `ValueError: ...`, `TypeError: ...`.
fn exception_line(trimmed: &str) -> bool {
    let Some((name, _)) = trimmed.split_once(':') else {
        return false;
    };
    !name.contains(' ')
        && (name.ends_with("Exception") || name.ends_with("Error") || name.ends_with("Throwable"))
}

/// Frames of runtimes, standard libraries and frameworks: collapsed unless they fail.
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
        "at scala.",
        "at org.codehaus.",
        "at java.base/",
        "at node:",
        "(node:",
        "node_modules",
        "/lib/python3",
        "site-packages",
        "<frozen ",
        "/usr/lib/go",
        "/usr/local/go/",
        "/src/runtime/",
        "runtime.",
        "std::",
        "core::",
        "/rustc/",
        "at System.",
        "at Microsoft.",
    ];
    let trimmed = line.trim_start();
    MARKS.iter().any(|m| trimmed.contains(m))
        || (trimmed.starts_with("... ") && trimmed.ends_with(" more"))
}

pub(super) fn compress(text: &str, level: Level) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // App frames kept per run of frames: all at summary, the first 3 at aggressive,
    // none beyond the failing ones at minimal.
    let app_frames = match level {
        Level::Off => return text.to_owned(),
        Level::Summary => usize::MAX,
        Level::Aggressive => 3,
        Level::Minimal => 0,
    };
    let mut out: Vec<String> = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        if !is_frame(lines[index]) {
            out.push(lines[index].to_owned());
            index += 1;
            continue;
        }
        // A run of frames (Python frames carry their code line and Go frames their
        // file line, both indented under the frame).
        let mut frames: Vec<(usize, usize)> = Vec::new();
        while index < lines.len() && is_frame(lines[index]) {
            let frame_start = index;
            index += 1;
            while index < lines.len()
                && !is_frame(lines[index])
                && lines[index].starts_with([' ', '\t'])
                && !is_header(lines[index])
            {
                index += 1;
            }
            frames.push((frame_start, index));
        }
        let python = lines[frames[0].0].trim_start().starts_with("File \"");
        let last = frames.len() - 1;
        let mut collapsed = 0usize;
        let mut apps_kept = 0usize;
        for (n, (from, to)) in frames.iter().enumerate() {
            let failing = n == 0 || (python && n == last) || n == last && frames.len() <= 2;
            let framework = (*from..*to).any(|i| is_framework(lines[i]));
            let keep = failing || (!framework && apps_kept < app_frames);
            if keep {
                if collapsed > 0 {
                    out.push(format!("    … {collapsed} frames"));
                    collapsed = 0;
                }
                if !failing {
                    apps_kept += 1;
                }
                out.extend(lines[*from..*to].iter().map(|l| (*l).to_owned()));
            } else {
                collapsed += 1;
            }
        }
        if collapsed > 0 {
            out.push(format!("    … {collapsed} frames"));
        }
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
\tat com.shop.Store.save(Store.java:88)
\t... 3 more";

    const PYTHON: &str = "Traceback (most recent call last):
  File \"/app/main.py\", line 12, in <module>
    main()
  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads
    return _default_decoder.decode(s)
  File \"/app/shop/cart.py\", line 30, in total
    return sum(item.price for item in self.items)
ValueError: price is missing";

    #[test]
    fn failing_frames_and_exceptions_survive_every_level() {
        for level in [Level::Summary, Level::Aggressive, Level::Minimal] {
            let java = compress(JAVA, level);
            assert!(
                java.contains("IllegalStateException: cart is closed"),
                "{level}"
            );
            assert!(
                java.contains("Caused by: java.io.IOException: disk full"),
                "{level}"
            );
            assert!(
                java.contains("Cart.add(Cart.java:41)"),
                "{level}: top frame"
            );
            assert!(
                java.contains("FileOutputStream.writeBytes"),
                "{level}: top frame of the cause"
            );
            let python = compress(PYTHON, level);
            assert!(python.contains("ValueError: price is missing"), "{level}");
            assert!(
                python.contains("/app/shop/cart.py\", line 30"),
                "{level}: failing frame"
            );
            assert!(
                python.contains("return sum(item.price"),
                "{level}: its code"
            );
        }
        let summary = compress(JAVA, Level::Summary);
        assert!(summary.contains("Checkout.run") && summary.contains("… 1 frames"));
        assert!(!compress(PYTHON, Level::Summary).contains("json/__init__.py"));
    }
}
