//! Packages, manifest dependencies and IMPORTS edges: a file imports an in-repo package
//! (by its module path) or an external module by name.

use std::collections::BTreeSet;

use rustc_hash::FxHashSet as HashSet;

use codectx_graph::{Confidence, Edge, EdgeKind, NodeKind, node_id};

use super::{FileOut, Repo, plain_node};
use crate::facts::FileFacts;

/// Package nodes (contained by the repository); returns the package module paths.
pub(super) fn packages<'f>(
    graph_id: &str,
    files: &'f [FileFacts],
    repository_id: &str,
    repo: &mut Repo<'_>,
) -> HashSet<&'f str> {
    let packages: BTreeSet<(&str, &str)> = files
        .iter()
        .filter(|f| !f.package.is_empty())
        .map(|f| (f.package.as_str(), f.language.as_str()))
        .collect();
    for (package, language) in &packages {
        let id = node_id(graph_id, NodeKind::Package, "", package, "");
        let short = package.rsplit(['.', ':', '/']).next().unwrap_or(package);
        let mut node = plain_node(id.clone(), NodeKind::Package, short, package);
        node.language = (*language).to_owned();
        repo.nodes.insert(id.clone(), node);
        repo.edges.insert(Edge {
            from: repository_id.to_owned(),
            to: id,
            kind: EdgeKind::Contains,
            line: 0,
            confidence: Confidence::Resolved,
        });
    }
    packages.iter().map(|(p, _)| *p).collect()
}

/// Manifest dependencies belong to the repository: REQUIRES edges to module nodes.
pub(super) fn dependencies(file: &FileFacts, repository_id: &str, repo: &mut Repo<'_>) {
    for dependency in &file.dependencies {
        let module = repo.external(&dependency.name, NodeKind::Module, &mut Vec::new());
        if let Some(node) = repo.nodes.get_mut(&module)
            && node.signature.is_empty()
        {
            // Versions may be URLs with credentials (git+https://user:token@...).
            node.signature = crate::redact::text(
                format!(
                    "{} {} ({})",
                    dependency.name, dependency.version, dependency.ecosystem
                )
                .trim(),
            )
            .into_owned();
            node.path = String::new();
        }
        repo.edges.insert(Edge {
            from: repository_id.to_owned(),
            to: module,
            kind: EdgeKind::Requires,
            line: 0,
            confidence: Confidence::Resolved,
        });
    }
}

/// IMPORTS edges from the file: in-repo packages, or modules by name (each once).
pub(super) fn edges(
    graph_id: &str,
    package_modules: &HashSet<&str>,
    out: &mut FileOut<'_>,
    repo: &mut Repo<'_>,
) {
    let mut imported = HashSet::default();
    for import in &out.file.imports {
        let module = if import.module.is_empty() {
            import.target.as_str()
        } else {
            import.module.as_str()
        };
        if !imported.insert(module) {
            continue;
        }
        let to = if package_modules.contains(module) {
            node_id(graph_id, NodeKind::Package, "", module, "")
        } else {
            repo.external(module, NodeKind::Module, &mut out.sink)
        };
        let from = out.file_id.clone();
        out.edge(
            from,
            to,
            EdgeKind::Imports,
            import.line,
            Confidence::Resolved,
        );
    }
}
