//! The resolver builds file owners on several threads: the graph it returns must be the
//! one a single thread builds, owner for owner, node for node, edge for edge.

mod common;

use std::fs;
use std::path::Path;

use codectx_index::{IndexOptions, snapshot};
use common::copy_dir;

fn options(root: &Path, threads: usize) -> IndexOptions {
    IndexOptions {
        root: root.to_path_buf(),
        owner: "org_parallel".into(),
        name: "parallel".into(),
        cache: root.join("unused-cache.db"),
        max_file_bytes: 1 << 20,
        progress: false,
        threads,
    }
}

#[test]
fn owners_built_on_several_threads_equal_one_thread() {
    // Every fixture language twice (enough files for the resolver to use its workers),
    // two manifests naming the same module at different versions (the first in path order
    // describes the module), and files that import it (so workers meet it too).
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let repo = tempfile::tempdir().unwrap();
    for copy in ["a", "b"] {
        copy_dir(&fixtures, &repo.path().join(copy));
    }
    fs::write(repo.path().join("a/requirements.txt"), "requests==2.31.0\n").unwrap();
    fs::write(repo.path().join("b/requirements.txt"), "requests==1.0.0\n").unwrap();
    for copy in ["a", "b"] {
        fs::write(
            repo.path().join(copy).join("fetch.py"),
            "import requests\n\n\ndef fetch(url):\n    return requests.get(url)\n",
        )
        .unwrap();
    }

    let one = snapshot(&options(repo.path(), 1)).unwrap();
    let files = one.iter().filter(|o| !o.owner.is_empty()).count();
    assert!(
        files >= 150,
        "only {files} file owners: too few for the workers to run"
    );
    let module = one[0]
        .nodes
        .iter()
        .find(|n| n.name == "requests" && n.signature.contains("2.31.0"));
    assert!(
        module.is_some(),
        "the first manifest should describe the module: {:?}",
        one[0]
            .nodes
            .iter()
            .filter(|n| n.name == "requests")
            .collect::<Vec<_>>()
    );
    for threads in [2, 4] {
        let several = snapshot(&options(repo.path(), threads)).unwrap();
        assert_eq!(one.len(), several.len(), "owners with {threads} threads");
        for (a, b) in one.iter().zip(&several) {
            assert_eq!(a, b, "owner {:?} differs with {threads} threads", a.owner);
        }
    }
}
