//! What a checkout's git metadata says, read from `.git` directly (no `git` binary): the
//! commit HEAD points at, and when HEAD or its branch last moved. The indexer records the
//! commit with the graph; the graph-hydrator compares it with the checkout to tell when
//! answers describe an older commit.

use std::path::Path;
use std::time::UNIX_EPOCH;

/// The checkout's HEAD: the commit and, when known, the Unix seconds it last moved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub commit: String,
    pub moved_at: i64,
}

fn modified(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The HEAD of the checkout at `root`, or None when it is not a git checkout (or HEAD
/// cannot be read). A branch is read from its ref file or `packed-refs`.
pub fn head(root: &Path) -> Option<Head> {
    let git = root.join(".git");
    let text = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let text = text.trim();
    let head_moved = modified(&git.join("HEAD"));
    let Some(reference) = text.strip_prefix("ref: ") else {
        return Some(Head {
            commit: text.to_owned(),
            moved_at: head_moved,
        });
    };
    // A branch name never climbs out of `.git`.
    if reference
        .split('/')
        .any(|part| part == ".." || part.is_empty())
    {
        return None;
    }
    if let Ok(commit) = std::fs::read_to_string(git.join(reference)) {
        return Some(Head {
            commit: commit.trim().to_owned(),
            moved_at: head_moved.max(modified(&git.join(reference))),
        });
    }
    let packed = std::fs::read_to_string(git.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (commit, name) = line.split_once(' ')?;
        (name == reference).then(|| Head {
            commit: commit.to_owned(),
            moved_at: head_moved.max(modified(&git.join("packed-refs"))),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_branch_a_detached_head_and_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        assert_eq!(head(dir.path()), None);
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            git.join("packed-refs"),
            "# pack-refs\nabc refs/heads/main\n",
        )
        .unwrap();
        assert_eq!(head(dir.path()).unwrap().commit, "abc");
        std::fs::write(git.join("refs/heads/main"), "def\n").unwrap();
        let found = head(dir.path()).unwrap();
        assert_eq!(found.commit, "def");
        assert!(found.moved_at > 0);
        std::fs::write(git.join("HEAD"), "0123\n").unwrap();
        assert_eq!(head(dir.path()).unwrap().commit, "0123");
        std::fs::write(git.join("HEAD"), "ref: ../../etc/passwd\n").unwrap();
        assert_eq!(head(dir.path()), None);
    }
}
