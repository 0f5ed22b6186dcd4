//! Regenerates the checked-in protobuf code with protox + tonic-prost-build and fails if it
//! differs from `src/gen`. Run `make proto` (CODECTX_REGENERATE_PROTO=1) to update it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn proto_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.join("proto")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "proto") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn read_dir_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn generated_code_matches_protos() {
    let root = workspace_root();
    let files = proto_files(&root);
    assert!(
        files.len() >= 10,
        "expected the codectx protos under proto/, found {files:?}"
    );
    let mut descriptors = protox::compile(&files, [root.join("proto")]).expect("protos compile");
    // Source locations hold absolute paths only indirectly, but they bloat the reflection
    // descriptor; the comments live in the .proto files and the generated docs.
    let out = tempfile::tempdir().unwrap();
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        .emit_rerun_if_changed(false)
        .out_dir(out.path())
        .compile_fds(descriptors.clone())
        .expect("code generation");
    for file in &mut descriptors.file {
        file.source_code_info = None;
    }
    std::fs::write(
        out.path().join("descriptor.bin"),
        descriptors.encode_to_vec(),
    )
    .unwrap();

    let generated = read_dir_files(out.path());
    let gen_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gen");
    if std::env::var_os("CODECTX_REGENERATE_PROTO").is_some() {
        if gen_dir.exists() {
            std::fs::remove_dir_all(&gen_dir).unwrap();
        }
        std::fs::create_dir_all(&gen_dir).unwrap();
        for (name, bytes) in &generated {
            std::fs::write(gen_dir.join(name), bytes).unwrap();
        }
        return;
    }
    let checked_in = read_dir_files(&gen_dir);
    let generated_names: Vec<_> = generated.keys().collect();
    let checked_in_names: Vec<_> = checked_in.keys().collect();
    assert_eq!(
        generated_names, checked_in_names,
        "generated file set differs from libs/proto/src/gen; run `make proto`"
    );
    for (name, bytes) in &generated {
        assert!(
            checked_in[name] == *bytes,
            "libs/proto/src/gen/{name} is stale; run `make proto` and commit the result"
        );
    }
}
