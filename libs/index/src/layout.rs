//! What the indexer knows about a repository before parsing files: Go modules, Rust
//! crates, Python packages, and the set of files. Qualified names depend on it.

use std::collections::{BTreeMap, HashSet};

/// Repository layout from manifests and the file list.
#[derive(Debug, Default, Clone)]
pub struct Layout {
    /// Directory (repository-relative, "" for the root) → Go module path.
    pub go_modules: BTreeMap<String, String>,
    /// Directory → Rust crate name (with `-` as `_`).
    pub rust_crates: BTreeMap<String, String>,
    /// Every indexed file path.
    pub files: HashSet<String>,
}

/// The parent directory of a repository-relative path ("" for the root).
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// The file name without its directory.
pub fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map(|(_, f)| f).unwrap_or(path)
}

/// The file name without directory and extension.
pub fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    name.split_once('.').map(|(s, _)| s).unwrap_or(name)
}

impl Layout {
    /// The nearest enclosing entry of `map` for `dir`, with the remaining sub-path.
    fn nearest<'a>(
        map: &'a BTreeMap<String, String>,
        dir: &str,
    ) -> Option<(&'a str, &'a str, String)> {
        let mut current = dir.to_owned();
        loop {
            if map.contains_key(&current) {
                let rest = dir
                    .strip_prefix(current.as_str())
                    .unwrap_or("")
                    .trim_start_matches('/')
                    .to_owned();
                let (key, value) = map.get_key_value(&current).expect("present");
                return Some((key.as_str(), value.as_str(), rest));
            }
            if current.is_empty() {
                return None;
            }
            current = parent_dir(&current).to_owned();
        }
    }

    /// Go import path of a directory: module path + sub-directory (the `std` module of
    /// the Go source tree has no prefix).
    pub fn go_import_path(&self, dir: &str) -> String {
        match Self::nearest(&self.go_modules, dir) {
            Some((_, module, rest)) if module == "std" || module.is_empty() => rest,
            Some((_, module, rest)) if rest.is_empty() => module.to_owned(),
            Some((_, module, rest)) => format!("{module}/{rest}"),
            None => dir.to_owned(),
        }
    }

    /// Rust module path of a file (`crate::a::b`, with the crate's name).
    pub fn rust_module(&self, path: &str) -> String {
        let dir = parent_dir(path);
        let (crate_dir, crate_name, _) =
            Self::nearest(&self.rust_crates, dir).unwrap_or(("", "crate", String::new()));
        let relative = path
            .strip_prefix(crate_dir)
            .unwrap_or(path)
            .trim_start_matches('/');
        let relative = relative.strip_suffix(".rs").unwrap_or(relative);
        let mut parts: Vec<&str> = relative.split('/').collect();
        if parts.first() == Some(&"src") {
            parts.remove(0);
        }
        if matches!(parts.last(), Some(&"lib") | Some(&"main") | Some(&"mod")) {
            parts.pop();
        }
        let mut module = crate_name.to_owned();
        for part in parts {
            module.push_str("::");
            module.push_str(part);
        }
        module
    }

    /// Python module of a file: the enclosing package directories (those with an
    /// `__init__.py`) and the file's stem; `__init__.py` is its package.
    pub fn python_module(&self, path: &str) -> String {
        let stem = file_stem(path);
        let mut parts: Vec<String> = if stem == "__init__" {
            Vec::new()
        } else {
            vec![stem.to_owned()]
        };
        let mut dir = parent_dir(path).to_owned();
        let mut first = true;
        while !dir.is_empty() {
            let init = format!("{dir}/__init__.py");
            // A directory without `__init__.py` inside a package is a namespace portion
            // of it (PEP 420: flask's `sansio/` in `flask/`), not a new root.
            let parent_is_package = {
                let parent = parent_dir(&dir);
                !parent.is_empty() && self.files.contains(&format!("{parent}/__init__.py"))
            };
            if !(self.files.contains(&init) || (first && stem == "__init__") || parent_is_package) {
                break;
            }
            parts.push(file_name(&dir).to_owned());
            dir = parent_dir(&dir).to_owned();
            first = false;
        }
        parts.reverse();
        parts.join(".")
    }

    /// JavaScript/TypeScript module of a file: its path without extension (`index` files
    /// stand for their directory).
    pub fn js_module(&self, path: &str) -> String {
        let without = path.rsplit_once('.').map(|(p, _)| p).unwrap_or(path);
        match without.strip_suffix("/index") {
            Some(dir) => dir.to_owned(),
            None if without == "index" => String::new(),
            None => without.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_paths() {
        let mut layout = Layout::default();
        layout
            .go_modules
            .insert(String::new(), "github.com/gin-gonic/gin".into());
        assert_eq!(layout.go_import_path(""), "github.com/gin-gonic/gin");
        assert_eq!(
            layout.go_import_path("render"),
            "github.com/gin-gonic/gin/render"
        );
        let mut std = Layout::default();
        std.go_modules.insert(String::new(), "std".into());
        assert_eq!(std.go_import_path("net/http"), "net/http");
    }

    #[test]
    fn rust_modules() {
        let mut layout = Layout::default();
        layout.rust_crates.insert("axum".into(), "axum".into());
        assert_eq!(layout.rust_module("axum/src/lib.rs"), "axum");
        assert_eq!(
            layout.rust_module("axum/src/routing/mod.rs"),
            "axum::routing"
        );
        assert_eq!(
            layout.rust_module("axum/src/routing/route.rs"),
            "axum::routing::route"
        );
        assert_eq!(layout.rust_module("axum/tests/it.rs"), "axum::tests::it");
    }

    #[test]
    fn python_modules() {
        let mut layout = Layout::default();
        for f in [
            "json/__init__.py",
            "json/encoder.py",
            "tools/script.py",
            "pkg/__init__.py",
            "pkg/sub/__init__.py",
            "pkg/sub/m.py",
            "pkg/ns/scaffold.py",
        ] {
            layout.files.insert(f.into());
        }
        assert_eq!(layout.python_module("json/encoder.py"), "json.encoder");
        assert_eq!(layout.python_module("json/__init__.py"), "json");
        assert_eq!(layout.python_module("tools/script.py"), "script");
        assert_eq!(layout.python_module("pkg/sub/m.py"), "pkg.sub.m");
        assert_eq!(layout.python_module("pkg/sub/__init__.py"), "pkg.sub");
        assert_eq!(layout.python_module("top.py"), "top");
        // A namespace directory inside a package continues the package's path.
        assert_eq!(
            layout.python_module("pkg/ns/scaffold.py"),
            "pkg.ns.scaffold"
        );
    }

    #[test]
    fn js_modules() {
        let layout = Layout::default();
        assert_eq!(layout.js_module("src/router.ts"), "src/router");
        assert_eq!(layout.js_module("src/index.js"), "src");
    }
}
