//! Test conventions shared by every service that must tell test code from production
//! code: the graph-hydrator marks corpus entries with them, the context-assembler reads
//! queries with them.

/// Test files by the common conventions: `*_test.go`, `test_*.py`, `*_test.py`,
/// `*.test.js`, `*.spec.ts`, `*_spec.rb`, and anything under `test/`, `tests/`,
/// `__tests__/`, `testdata/`, `spec/`.
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|part| {
        matches!(
            part,
            "test" | "tests" | "__tests__" | "testdata" | "spec" | "specs"
        )
    }) || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.contains("_spec.")
}

/// Test functions by name (`TestParse`, `test_parse`, `BenchmarkParse`).
pub fn is_test_name(name: &str) -> bool {
    name.starts_with("Test") && name[4..].starts_with(|c: char| c.is_uppercase() || c == '_')
        || name.starts_with("test_")
        || name.starts_with("Benchmark") && name[9..].starts_with(char::is_uppercase)
}

/// Whether a query's words ask about tests (`test`, `spec`, `fixture`, `benchmark`,
/// `mock` and their plurals): only then do ranked legs consider test code.
pub fn mentions_tests(words: impl IntoIterator<Item = impl AsRef<str>>) -> bool {
    words.into_iter().any(|word| {
        matches!(
            word.as_ref(),
            "test"
                | "tests"
                | "testing"
                | "tested"
                | "spec"
                | "specs"
                | "benchmark"
                | "benchmarks"
                | "fixture"
                | "fixtures"
                | "mock"
                | "mocks"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_names_and_words() {
        for path in [
            "gin_test.go",
            "tests/test_basic.py",
            "src/__tests__/a.js",
            "lib/a.spec.ts",
            "spec/models/user_spec.rb",
            "pkg/testdata/x.go",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in ["src/flask/testing.py", "contest.go", "latest/x.py"] {
            assert!(!is_test_path(path), "{path}");
        }
        assert!(is_test_name("TestServe") && is_test_name("test_x") && is_test_name("BenchmarkX"));
        assert!(!is_test_name("Testament") && !is_test_name("Benchmarks"));
        assert!(mentions_tests(["which", "tests", "cover"]));
        assert!(!mentions_tests(["testament", "latest"]));
    }
}
