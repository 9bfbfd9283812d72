//! What a review saw of the code: a directory's fingerprint, the commit checked out plus a
//! digest of every uncommitted change (staged, unstaged and untracked files alike).
//!
//! Two fingerprints of one directory are equal exactly when the reviewed code is the same, so a
//! review can be marked stale as soon as the code moves on, and a loop can tell whether an
//! implementer's "fixed" changed anything. The directory belongs to the agent under review, so
//! git runs with no optional locks (it never rewrites the index under the agent) and with its
//! filesystem monitor hook off (a repository's config cannot make us run a program).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;
use ts_rs::TS;

use crate::error::{Error, Result};

/// How long one git command may take before the fingerprint gives up.
const GIT_TIMEOUT: Duration = Duration::from_secs(15);

/// The content hash recorded for a file that is gone from the working tree.
const DELETED: &str = "deleted";

/// A directory's code as a review saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Fingerprint {
    /// The commit checked out (`None` in a repository without commits).
    pub head: Option<String>,
    /// sha256 hex over `head` and every entry of `files`: equal digests, equal code.
    pub digest: String,
    /// Each path that differs from `head` (or is untracked), relative to the repository's root,
    /// with the sha256 hex of its content, or `"deleted"`.
    pub files: BTreeMap<String, String>,
}

/// Fingerprint the git repository that holds `dir`.
///
/// Fails with [`Error::Fingerprint`] when `dir` is not inside a git repository or git fails.
pub async fn fingerprint(dir: &Path) -> Result<Fingerprint> {
    let root = git(dir, &["rev-parse", "--show-toplevel"]).await?;
    let root = Path::new(root.trim_end_matches('\n')).to_path_buf();
    let head = git(&root, &["rev-parse", "--verify", "--quiet", "HEAD"])
        .await
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    let status = git(
        &root,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )
    .await?;
    let mut files = BTreeMap::new();
    for path in status_paths(&status) {
        let hash = content_hash(&root.join(&path)).await?;
        files.insert(path, hash);
    }
    Ok(Fingerprint {
        digest: digest(head.as_deref(), &files),
        head,
        files,
    })
}

/// The files whose code differs between two fingerprints of the repository that holds `dir`,
/// sorted. When the commit moved, the files the commits changed count too.
pub async fn changed_files(
    dir: &Path,
    old: &Fingerprint,
    new: &Fingerprint,
) -> Result<Vec<String>> {
    let mut changed: BTreeSet<String> = BTreeSet::new();
    let paths: BTreeSet<&String> = old.files.keys().chain(new.files.keys()).collect();
    for path in paths {
        if old.files.get(path) != new.files.get(path) {
            changed.insert(path.clone());
        }
    }
    if old.head != new.head {
        match (&old.head, &new.head) {
            (Some(a), Some(b)) => {
                let root = git(dir, &["rev-parse", "--show-toplevel"]).await?;
                let root = Path::new(root.trim_end_matches('\n')).to_path_buf();
                let names =
                    git(&root, &["diff", "--name-only", "-z", "--no-renames", a, b]).await?;
                for name in names.split('\0').filter(|n| !n.is_empty()) {
                    // A file changed by the commits but back to the reviewed content in the
                    // working tree did not change for the reviewer.
                    if old.files.contains_key(name) && old.files.get(name) == new.files.get(name) {
                        continue;
                    }
                    changed.insert(name.to_string());
                }
            }
            _ => {
                // A first commit (or a repository emptied): every file of either side moved.
                changed.extend(old.files.keys().cloned());
                changed.extend(new.files.keys().cloned());
            }
        }
    }
    Ok(changed.into_iter().collect())
}

/// The paths named by `git status --porcelain=v1 -z --no-renames`.
fn status_paths(status: &str) -> Vec<String> {
    status
        .split('\0')
        .filter(|entry| entry.len() > 3)
        .map(|entry| entry[3..].to_string())
        .collect()
}

/// sha256 hex of a file's content, read in chunks; `"deleted"` when it is gone.
async fn content_hash(path: &Path) -> Result<String> {
    let mut file = match tokio::fs::File::open(path).await {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DELETED.to_string()),
        // A directory entry (a submodule, an unreadable file) is named, not read.
        Err(e) => return Ok(format!("unreadable: {}", e.kind())),
    };
    if file.metadata().await.map(|m| m.is_dir()).unwrap_or(false) {
        return Ok("directory".to_string());
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .await
            .map_err(|e| Error::Fingerprint(format!("could not read {}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// sha256 hex over the commit and the sorted file entries.
fn digest(head: Option<&str>, files: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(head.unwrap_or("").as_bytes());
    hasher.update(b"\n");
    for (path, hash) in files {
        hasher.update(path.as_bytes());
        hasher.update(b"\0");
        hasher.update(hash.as_bytes());
        hasher.update(b"\n");
    }
    format!("{:x}", hasher.finalize())
}

/// Whether `dir` is, on this machine, inside a git work tree (false when it is not, when it does
/// not exist here, or when git cannot tell).
pub async fn is_git_work_tree(dir: &Path) -> bool {
    dir.is_dir()
        && git(dir, &["rev-parse", "--is-inside-work-tree"])
            .await
            .is_ok_and(|out| out.trim() == "true")
}

/// Run git in `dir` and return its standard output.
async fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut command = tokio::process::Command::new("git");
    command
        .arg("-c")
        .arg("core.fsmonitor=false")
        .arg("-c")
        .arg("core.quotepath=off")
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(GIT_TIMEOUT, command.output())
        .await
        .map_err(|_| {
            Error::Fingerprint(format!(
                "git {} took longer than {} s in {}",
                args.first().unwrap_or(&""),
                GIT_TIMEOUT.as_secs(),
                dir.display()
            ))
        })?
        .map_err(|e| Error::Fingerprint(format!("could not run git: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr.lines().next().unwrap_or("git failed").trim();
        return Err(Error::Fingerprint(format!(
            "git {} failed in {}: {reason}",
            args.first().unwrap_or(&""),
            dir.display()
        )));
    }
    String::from_utf8(output.stdout)
        .map_err(|_| Error::Fingerprint("git printed a path that is not UTF-8".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_paths_reads_every_kind_of_entry() {
        let status = " M src/lib.rs\0A  new.rs\0?? notes/a b.txt\0 D gone.rs\0";
        assert_eq!(
            status_paths(status),
            vec!["src/lib.rs", "new.rs", "notes/a b.txt", "gone.rs"]
        );
        assert!(status_paths("").is_empty());
    }

    #[test]
    fn digest_depends_on_head_and_every_entry() {
        let mut files = BTreeMap::new();
        files.insert("a".to_string(), "1".to_string());
        let base = digest(Some("h"), &files);
        assert_ne!(base, digest(Some("g"), &files));
        assert_ne!(base, digest(None, &files));
        files.insert("a".to_string(), "2".to_string());
        assert_ne!(base, digest(Some("h"), &files));
    }
}
