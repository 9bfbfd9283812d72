//! Worktrees: a git worktree per session through OpenCode's experimental worktree routes, where
//! each session works (repository, branch, worktree), and merging a worktree's branch back into
//! the base branch of the main checkout. Git runs here only through [`git`], which runs nothing
//! the repository's config names.

pub mod git;
pub mod merge;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::Core;
use crate::error::{Error, Result};

/// Where one folder works: its repository, branch, and whether it is a linked worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Workplace {
    /// The folder asked about.
    pub directory: String,
    /// The main checkout of its repository (`None`: not a repository, or not on this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repository: Option<String>,
    /// The branch checked out there (`None`: detached, or unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub branch: Option<String>,
    /// Whether the folder is a linked worktree (not the main checkout).
    pub worktree: bool,
    /// Whether the folder is gone (a worktree removed behind Crosscheck's back).
    pub gone: bool,
    /// Whether the folder is not on this machine (a server elsewhere).
    pub remote: bool,
}

/// Where `directory` works, read with git on this machine.
pub async fn workplace(directory: &str) -> Workplace {
    let mut place = Workplace {
        directory: directory.to_owned(),
        repository: None,
        branch: None,
        worktree: false,
        gone: false,
        remote: false,
    };
    let dir = Path::new(directory);
    if !dir.is_dir() {
        // A folder under a known repository's worktree list that vanished is "gone"; a folder
        // this machine never had is a server elsewhere. Without the folder both look alike,
        // so the caller decides with the server's worktree list; here it is "gone" when its
        // parent exists (the machine has the tree around it).
        place.gone = dir.parent().is_some_and(Path::is_dir);
        place.remote = !place.gone;
        return place;
    }
    let Ok(out) = git::ok(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
            "--git-dir",
        ],
    )
    .await
    else {
        return place;
    };
    let mut lines = out.lines();
    let (Some(top), Some(common), Some(own)) = (lines.next(), lines.next(), lines.next()) else {
        return place;
    };
    place.worktree = common != own;
    place.repository = Some(main_checkout(Path::new(common), Path::new(top)));
    place.branch = current_branch(dir).await;
    place
}

/// The main checkout of a repository whose common git folder is `common` (its parent, when it
/// is a `.git` folder), else the worktree's own top.
fn main_checkout(common: &Path, top: &Path) -> String {
    let path: PathBuf = if common.file_name().is_some_and(|n| n == ".git") {
        common
            .parent()
            .map_or_else(|| top.to_path_buf(), Path::to_path_buf)
    } else {
        top.to_path_buf()
    };
    path.to_string_lossy().into_owned()
}

/// The branch checked out in `dir` (`None` when detached or unborn without a name).
pub async fn current_branch(dir: &Path) -> Option<String> {
    git::ok(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .await
        .ok()
        .map(|b| b.trim().to_owned())
        .filter(|b| !b.is_empty())
}

/// The paths with uncommitted changes in `dir` (untracked files too).
pub async fn uncommitted(dir: &Path) -> Result<Vec<String>> {
    let out = git::ok(
        dir,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )
    .await?;
    Ok(out
        .split('\0')
        .filter(|e| e.len() > 3)
        .map(|e| e[3..].to_owned())
        .collect())
}

/// Whether any session working in `directory` is running a turn: its id.
pub fn busy_session(core: &Core, directory: &str) -> Option<String> {
    core.read_store(|store, _| {
        store
            .sessions()
            .into_iter()
            .filter(|s| s.directory == directory)
            .find(|s| !store.status(&s.id).is_idle())
            .map(|s| s.id)
    })
}

/// A worktree name from a title: lower-case words joined by `-`, at most 40 characters.
pub fn suggest_name(title: &str) -> String {
    let mut name = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
        if name.len() >= 40 {
            break;
        }
    }
    let name = name.trim_matches('-').to_owned();
    if name.is_empty() {
        "work".to_owned()
    } else {
        name
    }
}

/// Checks a worktree name: letters, digits, `-`, `_` and `.`, not starting with `-` or `.`.
pub fn check_name(name: &str) -> Result<&str> {
    let name = name.trim();
    let fine = !name.is_empty()
        && name.len() <= 60
        && !name.starts_with(['-', '.'])
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(name)
    } else {
        Err(Error::InvalidRequest(format!(
            "{name:?} is not a worktree name (letters, digits, - _ . only)"
        )))
    }
}

/// The server's own words in an error body (`{"data":{"message":...}}`), else the error.
pub fn server_words(error: &crosscheck_opencode::Error) -> String {
    if let crosscheck_opencode::Error::Status { body, .. } = error
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(body)
        && let Some(message) = value
            .pointer("/data/message")
            .or_else(|| value.pointer("/message"))
            .and_then(|m| m.as_str())
    {
        return message.to_owned();
    }
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_titles() {
        assert_eq!(suggest_name("Fix the login form!"), "fix-the-login-form");
        assert_eq!(suggest_name("  ***  "), "work");
        assert!(check_name("fix-login").is_ok());
        assert!(check_name("../x").is_err());
        assert!(check_name("-x").is_err());
        assert!(check_name("a b").is_err());
    }
}
