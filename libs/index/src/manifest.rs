//! Module dependencies from manifests (go.mod, Cargo.toml, package.json,
//! pyproject.toml, requirements*.txt), and the layout facts qualified names need.

use crate::facts::DependencyFact;

/// Is this file a manifest the indexer reads?
pub fn is_manifest(path: &str) -> bool {
    let name = crate::layout::file_name(path);
    matches!(
        name,
        "go.mod" | "Cargo.toml" | "package.json" | "pyproject.toml"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// `module example.com/x` from a go.mod.
pub fn go_module(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        line.trim()
            .strip_prefix("module ")
            .map(|m| m.trim().trim_matches('"').to_owned())
    })
}

/// `[package] name` from a Cargo.toml, with `-` as `_`.
pub fn cargo_crate(text: &str) -> Option<String> {
    let value: toml::Table = toml::from_str(text).ok()?;
    let name = value.get("package")?.get("name")?.as_str()?;
    Some(name.replace('-', "_"))
}

/// Dependencies a manifest declares.
pub fn dependencies(path: &str, text: &str) -> Vec<DependencyFact> {
    let name = crate::layout::file_name(path);
    let mut out = Vec::new();
    let mut push = |name: &str, version: &str, ecosystem: &str| {
        let name = name.trim();
        if !name.is_empty() {
            out.push(DependencyFact {
                name: name.to_owned(),
                version: version.trim().to_owned(),
                ecosystem: ecosystem.to_owned(),
            });
        }
    };
    match name {
        "go.mod" => {
            let mut in_block = false;
            for line in text.lines() {
                let line = line.split("//").next().unwrap_or("").trim();
                if line.starts_with("require (") {
                    in_block = true;
                    continue;
                }
                if in_block && line == ")" {
                    in_block = false;
                    continue;
                }
                let spec = if in_block {
                    Some(line)
                } else {
                    line.strip_prefix("require ")
                };
                if let Some(spec) = spec {
                    let mut parts = spec.split_whitespace();
                    if let (Some(module), Some(version)) = (parts.next(), parts.next()) {
                        push(module, version, "go");
                    }
                }
            }
        }
        "Cargo.toml" => {
            if let Ok(table) = toml::from_str::<toml::Table>(text) {
                for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
                    let deps = table.get(section).and_then(|d| d.as_table()).or_else(|| {
                        table
                            .get("workspace")
                            .and_then(|w| w.get(section))
                            .and_then(|d| d.as_table())
                    });
                    for (crate_name, spec) in deps.into_iter().flatten() {
                        let version = match spec {
                            toml::Value::String(v) => v.clone(),
                            toml::Value::Table(t) => t
                                .get("version")
                                .and_then(|v| v.as_str())
                                .unwrap_or("")
                                .to_owned(),
                            _ => String::new(),
                        };
                        push(crate_name, &version, "cargo");
                    }
                }
            }
        }
        "package.json" => {
            if let Ok(serde_json::Value::Object(object)) =
                serde_json::from_str::<serde_json::Value>(text)
            {
                for section in ["dependencies", "devDependencies", "peerDependencies"] {
                    if let Some(serde_json::Value::Object(deps)) = object.get(section) {
                        for (package, version) in deps {
                            push(package, version.as_str().unwrap_or(""), "npm");
                        }
                    }
                }
            }
        }
        "pyproject.toml" => {
            if let Ok(table) = toml::from_str::<toml::Table>(text) {
                let deps = table
                    .get("project")
                    .and_then(|p| p.get("dependencies"))
                    .and_then(|d| d.as_array());
                for spec in deps.into_iter().flatten().filter_map(|d| d.as_str()) {
                    let (name, version) = split_requirement(spec);
                    push(name, version, "pypi");
                }
            }
        }
        _ => {
            for line in text.lines() {
                let line = line.split('#').next().unwrap_or("").trim();
                if line.is_empty() || line.starts_with('-') {
                    continue;
                }
                let (name, version) = split_requirement(line);
                push(name, version, "pypi");
            }
        }
    }
    out
}

fn split_requirement(spec: &str) -> (&str, &str) {
    let spec = spec.split(';').next().unwrap_or(spec).trim();
    match spec.find(['=', '<', '>', '~', '!', '[', ' ']) {
        Some(at) => (
            &spec[..at],
            spec[at..].trim_start_matches(|c: char| c == '[' || c.is_whitespace()),
        ),
        None => (spec, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_mod() {
        let text = "module github.com/a/b\n\ngo 1.22\n\nrequire (\n\tgithub.com/x/y v1.2.3\n\tgolang.org/z v0.1.0 // indirect\n)\nrequire github.com/q/r v2.0.0\n";
        assert_eq!(go_module(text).as_deref(), Some("github.com/a/b"));
        let deps = dependencies("go.mod", text);
        assert_eq!(
            deps.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            vec!["github.com/x/y", "golang.org/z", "github.com/q/r"]
        );
    }

    #[test]
    fn cargo_and_npm_and_python() {
        let cargo = "[package]\nname = \"my-crate\"\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1.40\", features = [\"rt\"] }\n";
        assert_eq!(cargo_crate(cargo).as_deref(), Some("my_crate"));
        assert_eq!(dependencies("Cargo.toml", cargo).len(), 2);
        let npm = r#"{"dependencies": {"react": "^18.0.0"}, "devDependencies": {"vitest": "3"}}"#;
        assert_eq!(dependencies("package.json", npm).len(), 2);
        let py = "[project]\ndependencies = [\"requests>=2\", \"rich\"]\n";
        let deps = dependencies("pyproject.toml", py);
        assert_eq!(
            (deps[0].name.as_str(), deps[0].version.as_str()),
            ("requests", ">=2")
        );
        let req = dependencies("requirements.txt", "# c\nflask==3.0\n-e .\nnumpy\n");
        assert_eq!(
            req.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            vec!["flask", "numpy"]
        );
    }
}
