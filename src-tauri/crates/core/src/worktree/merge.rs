//! Merging a worktree's branch back into the base branch of the main checkout: the preview
//! (commits and files against the base), the merge or squash itself, and on a conflict the
//! merge aborted so nothing is left half-applied. Also the worktree's changes against the
//! branch it started from, for the Changes tab.

use std::path::Path;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Workplace, current_branch, git, uncommitted};
use crate::error::{Error, Result};

/// One commit the merge brings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CommitLine {
    /// Its abbreviated hash.
    pub sha: String,
    /// Its subject line (the agent's words: untrusted text).
    pub subject: String,
}

/// One file the merge changes, with git's status letter (`A`, `M`, `D`, `R`...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PreviewFile {
    /// Path relative to the repository.
    pub path: String,
    /// Git's status letter.
    pub status: String,
}

/// What merging a worktree back would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MergePreview {
    /// The worktree's folder.
    pub worktree: String,
    /// Its branch.
    pub branch: String,
    /// The main checkout the merge goes into.
    pub repository: String,
    /// The branch checked out in the main checkout: the base.
    pub base_branch: String,
    /// The commits on the branch that the base lacks, newest first.
    pub commits: Vec<CommitLine>,
    /// The files the merge changes against the base (uncommitted work included).
    pub files: Vec<PreviewFile>,
    /// Uncommitted files in the worktree (committed on the branch first when merging).
    pub uncommitted: Vec<String>,
    /// Uncommitted files in the main checkout (a merge is refused until they are gone).
    pub base_dirty: Vec<String>,
}

/// Merge with a merge commit, or squash into one new commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum MergeMode {
    /// `git merge --no-ff`: the branch's commits and a merge commit.
    Merge,
    /// `git merge --squash` and one commit.
    Squash,
}

/// A merge that stopped on conflicting files and was aborted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MergeConflict {
    /// The files both sides changed differently.
    pub files: Vec<String>,
    /// Git's words about it.
    pub message: String,
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MergeOutcome {
    /// Whether the base branch has the work now.
    pub merged: bool,
    /// The new commit on the base branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub commit: Option<String>,
    /// The conflict that stopped it (the merge was aborted; the base is as it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub conflict: Option<MergeConflict>,
    /// The commit made in the worktree from its uncommitted changes first, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub committed_pending: Option<String>,
}

/// The worktree and main checkout of a workplace that can be merged, or why not.
pub fn merge_sides(place: &Workplace) -> Result<(String, String, String)> {
    if place.remote {
        return Err(Error::MergeRefused(
            "the session's folder is on the server's machine, which Crosscheck cannot reach; merge it there".into(),
        ));
    }
    if place.gone {
        return Err(Error::MergeRefused(format!(
            "the worktree {} is gone",
            place.directory
        )));
    }
    let (Some(repository), true) = (&place.repository, place.worktree) else {
        return Err(Error::MergeRefused(
            "the session does not work in a worktree".into(),
        ));
    };
    let Some(branch) = &place.branch else {
        return Err(Error::MergeRefused(
            "the worktree has no branch checked out".into(),
        ));
    };
    Ok((place.directory.clone(), repository.clone(), branch.clone()))
}

/// The preview of merging `branch` (checked out in `worktree`) into the main checkout.
pub async fn preview(worktree: &str, repository: &str, branch: &str) -> Result<MergePreview> {
    let repo = Path::new(repository);
    let base_branch = current_branch(repo)
        .await
        .ok_or_else(|| Error::MergeRefused("the main checkout has no branch checked out".into()))?;
    let log = git::ok(
        repo,
        &[
            "log",
            "--no-color",
            "--format=%h%x1f%s",
            "-n",
            "200",
            &format!("{base_branch}..{branch}"),
            "--",
        ],
    )
    .await?;
    let commits = log
        .lines()
        .filter_map(|l| l.split_once('\u{1f}'))
        .map(|(sha, subject)| CommitLine {
            sha: sha.to_owned(),
            subject: subject.to_owned(),
        })
        .collect();
    // The files the merge brings: the worktree's code (its uncommitted work included, which
    // is committed first) against where its branch left the base.
    let files = against_base(worktree, &base_branch)
        .await?
        .into_iter()
        .map(|(path, status, _)| PreviewFile {
            path,
            status: status.to_string(),
        })
        .collect();
    Ok(MergePreview {
        worktree: worktree.to_owned(),
        branch: branch.to_owned(),
        repository: repository.to_owned(),
        base_branch,
        commits,
        files,
        uncommitted: uncommitted(Path::new(worktree)).await?,
        base_dirty: uncommitted(repo).await?,
    })
}

/// `-c user.name=... -c user.email=...` when the repository has no identity to commit with.
async fn identity(dir: &Path) -> Vec<&'static str> {
    let has = git::ok(dir, &["config", "user.email"]).await.is_ok();
    if has {
        Vec::new()
    } else {
        vec![
            "-c",
            "user.name=Crosscheck",
            "-c",
            "user.email=crosscheck@localhost",
        ]
    }
}

/// Commits everything uncommitted in the worktree on its branch; answers the new commit.
pub async fn commit_pending(worktree: &str, message: &str) -> Result<Option<String>> {
    let dir = Path::new(worktree);
    if uncommitted(dir).await?.is_empty() {
        return Ok(None);
    }
    git::check_config(dir).await?;
    git::ok(dir, &["add", "--all", "--", "."]).await?;
    let mut args = identity(dir).await;
    args.extend(["commit", "--no-verify", "--quiet", "-m", message]);
    git::ok(dir, &args).await?;
    Ok(Some(head(dir).await?))
}

async fn head(dir: &Path) -> Result<String> {
    Ok(git::ok(dir, &["rev-parse", "--short", "HEAD"])
        .await?
        .trim()
        .to_owned())
}

/// Merges `branch` into the main checkout's current branch. The main checkout must be clean;
/// a conflict aborts the merge and answers the conflicting files (the base is as it was).
pub async fn merge(
    repository: &str,
    branch: &str,
    mode: MergeMode,
    message: &str,
) -> Result<MergeOutcome> {
    let repo = Path::new(repository);
    git::check_config(repo).await?;
    let dirty = uncommitted(repo).await?;
    if !dirty.is_empty() {
        return Err(Error::MergeRefused(format!(
            "the main checkout has uncommitted changes ({}); commit or remove them first",
            dirty.join(", ")
        )));
    }
    let base = current_branch(repo)
        .await
        .ok_or_else(|| Error::MergeRefused("the main checkout has no branch checked out".into()))?;
    let ahead = git::ok(repo, &["rev-list", "--count", &format!("{base}..{branch}")]).await?;
    if ahead.trim() == "0" {
        return Err(Error::MergeRefused(format!(
            "{branch} has nothing that {base} lacks"
        )));
    }
    let mut args = identity(repo).await;
    let merged = match mode {
        MergeMode::Merge => {
            args.extend([
                "merge",
                "--no-ff",
                "--no-edit",
                "--no-verify",
                "-m",
                message,
                branch,
            ]);
            git::run(repo, &args).await?
        }
        MergeMode::Squash => {
            let mut squash = args.clone();
            squash.extend(["merge", "--squash", branch]);
            let out = git::run(repo, &squash).await?;
            if out.ok {
                args.extend(["commit", "--no-verify", "--quiet", "-m", message]);
                git::run(repo, &args).await?
            } else {
                out
            }
        }
    };
    if merged.ok {
        return Ok(MergeOutcome {
            merged: true,
            commit: Some(head(repo).await?),
            conflict: None,
            committed_pending: None,
        });
    }
    let conflicted = git::ok(repo, &["diff", "--name-only", "--diff-filter=U", "-z"])
        .await
        .unwrap_or_default();
    let files: Vec<String> = conflicted
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    let words: Vec<&str> = merged
        .stdout
        .lines()
        .chain(merged.stderr.lines())
        .filter(|l| l.starts_with("CONFLICT") || l.starts_with("error") || l.starts_with("fatal"))
        .take(10)
        .collect();
    abort(repo, mode).await?;
    Ok(MergeOutcome {
        merged: false,
        commit: None,
        conflict: Some(MergeConflict {
            files,
            message: if words.is_empty() {
                merged.stderr
            } else {
                words.join("\n")
            },
        }),
        committed_pending: None,
    })
}

/// Undoes a merge that stopped, and checks that the main checkout is clean again.
async fn abort(repo: &Path, mode: MergeMode) -> Result<()> {
    let aborted = match mode {
        MergeMode::Merge => git::run(repo, &["merge", "--abort"]).await?,
        MergeMode::Squash => git::run(repo, &["reset", "--merge"]).await?,
    };
    if !aborted.ok {
        git::ok(repo, &["reset", "--merge"]).await?;
    }
    let left = uncommitted(repo).await?;
    if !left.is_empty() {
        return Err(Error::Worktree(format!(
            "the merge could not be undone completely; the main checkout has changes in {}",
            left.join(", ")
        )));
    }
    Ok(())
}

/// The worktree's code (committed and not) against where its branch left `base_branch`, as
/// one unified diff per file: `(path, status, patch)`. Untracked files count as added.
pub async fn against_base(
    worktree: &str,
    base_branch: &str,
) -> Result<Vec<(String, char, String)>> {
    let dir = Path::new(worktree);
    let fork = git::ok(dir, &["merge-base", "HEAD", base_branch])
        .await?
        .trim()
        .to_owned();
    let patch = git::ok(
        dir,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            &fork,
            "--",
        ],
    )
    .await?;
    let mut files = split_patch(&patch);
    let untracked = git::ok(dir, &["ls-files", "--others", "--exclude-standard", "-z"]).await?;
    for path in untracked.split('\0').filter(|p| !p.is_empty()).take(500) {
        let out = git::run(
            dir,
            &[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-index",
                "--",
                "/dev/null",
                path,
            ],
        )
        .await?;
        files.push((path.to_owned(), 'A', out.stdout));
    }
    Ok(files)
}

/// Splits a unified diff into files: `(path, status, patch)`.
fn split_patch(patch: &str) -> Vec<(String, char, String)> {
    let mut files: Vec<(String, char, String)> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .trim_end()
                .rsplit_once(" b/")
                .map_or(rest.trim_end(), |(_, b)| b)
                .to_owned();
            files.push((path, 'M', String::new()));
        }
        if let Some(file) = files.last_mut() {
            if line.starts_with("new file mode") {
                file.1 = 'A';
            } else if line.starts_with("deleted file mode") {
                file.1 = 'D';
            }
            file.2.push_str(line);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_splits_per_file() {
        let patch = "diff --git a/x.txt b/x.txt\nindex 1..2 100644\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n";
        let files = split_patch(patch);
        assert_eq!(files.len(), 2);
        assert_eq!((files[0].0.as_str(), files[0].1), ("x.txt", 'M'));
        assert_eq!((files[1].0.as_str(), files[1].1), ("n.txt", 'A'));
        assert!(files[1].2.contains("+n"));
    }
}
