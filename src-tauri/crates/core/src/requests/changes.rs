//! What a session changed: the Changes tab's diffs in three scopes (the working tree against
//! HEAD, the whole session, its last turn) and the todo dock's list. Read from OpenCode's own
//! routes; from a review session, the diffs are its original's.

use crosscheck_opencode::client::GLOBAL_PROJECT;
use crosscheck_opencode::{FileDiff, FileStatus, Todo};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::LinkKind;
use crate::core::Core;
use crate::error::{Error, Result};

/// The most of one file's patch the UI is sent; a longer one is left out and marked.
pub const FILE_PATCH_LIMIT: usize = 512 * 1024;
/// The most patch text one answer carries; the files after it come without their patch.
pub const TOTAL_PATCH_LIMIT: usize = 8 * 1024 * 1024;
/// Messages asked for per page while looking for the last user message.
const TURN_PAGE: u32 = 20;
/// Pages looked through for user messages before giving up.
const TURN_PAGES: usize = 25;
/// The most turns whose diffs are joined into the whole session's.
const MAX_JOINED_TURNS: usize = 100;

/// Which changes the Changes tab shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ChangeScope {
    /// The session's folder against git's HEAD (`/vcs/diff`).
    WorkingTree,
    /// Everything the session changed (`/session/:id/diff`, needs snapshots; joined from the
    /// turns' diffs when the server's own answer is empty).
    Session,
    /// What the session's last turn changed (`?messageID=` of its last user message).
    LastTurn,
    /// A worktree's code (committed and not) against the branch it started from (git on this
    /// machine, from where the branch left the main checkout's branch).
    Base,
}

/// Fields of [`Request::Changes`](super::Request::Changes).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Changes {
    /// The session the tab belongs to (a review session shows its original's changes).
    pub session_id: String,
    /// Which changes.
    pub scope: ChangeScope,
}

/// Why a scope has nothing to show, when that is not simply "no changes".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ChangesUnavailable {
    /// The folder is not in a git repository, so there is no HEAD to compare with.
    NotGit,
    /// The folder is a git repository now, but it was not when OpenCode first saw it: OpenCode
    /// files it under its global project, with no HEAD to compare with.
    BecameGit,
    /// OpenCode keeps no snapshots for this folder (`"snapshot": false`), so it cannot say what
    /// a session or a turn changed.
    NoSnapshots,
    /// The session has no turn yet.
    NoTurn,
    /// The session does not work in a worktree on this machine, so there is no base branch.
    NotWorktree,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FileChange {
    /// Path as OpenCode names it (relative to the folder or the repository).
    pub path: String,
    /// Added, deleted or modified.
    pub status: FileStatus,
    /// Lines added.
    pub additions: u32,
    /// Lines removed.
    pub deletions: u32,
    /// The unified diff; absent when the server sent none or it was too large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub patch: Option<String>,
    /// Whether the patch was left out for its size.
    pub too_large: bool,
}

/// The answer to [`Changes`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ChangeSet {
    /// The scope asked for.
    pub scope: ChangeScope,
    /// The session whose changes these are: the one asked about, or its original when that
    /// is a review session.
    pub session_id: String,
    /// Whether `session_id` is the original of the review session asked about.
    pub from_original: bool,
    /// The session's folder (file events of this folder change the answer).
    pub directory: String,
    /// For the last turn: the user message that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    /// Why there is nothing to show, when it is not "nothing changed".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<ChangesUnavailable>,
    /// The changed files, in the server's order.
    pub files: Vec<FileChange>,
}

/// Fields of [`Request::Todos`](super::Request::Todos).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Todos {
    /// The session whose todo list to read.
    pub session_id: String,
}

/// The files a scope of a session changed.
pub async fn changes(core: &Core, req: Changes) -> Result<ChangeSet> {
    let client = core.client_for(&req.session_id)?;
    let asked = core.session(&req.session_id).await?;
    let asked = core.read_store(|store, _| store.view(&asked));
    let (session, from_original) = match &asked.link {
        Some(link) if link.kind == LinkKind::Review && link.other_exists => {
            (core.session(&link.other_session_id).await?, true)
        }
        _ => (asked.session, false),
    };
    let mut set = ChangeSet {
        scope: req.scope,
        session_id: session.id.clone(),
        from_original,
        directory: session.directory.clone(),
        message_id: None,
        unavailable: None,
        files: Vec::new(),
    };
    let diffs = match req.scope {
        ChangeScope::WorkingTree => {
            let diffs = client.vcs_diff(&session.directory).await?;
            if diffs.is_empty() && session.project_id == GLOBAL_PROJECT {
                let dir = std::path::Path::new(&session.directory);
                set.unavailable = Some(if crate::fingerprint::is_git_work_tree(dir).await {
                    ChangesUnavailable::BecameGit
                } else {
                    ChangesUnavailable::NotGit
                });
            }
            diffs
        }
        ChangeScope::Base => {
            let Some(diffs) = against_base(&session.directory).await? else {
                set.unavailable = Some(ChangesUnavailable::NotWorktree);
                return Ok(set);
            };
            diffs
        }
        ChangeScope::Session | ChangeScope::LastTurn => {
            if !client.snapshots_enabled(&session.directory).await? {
                set.unavailable = Some(ChangesUnavailable::NoSnapshots);
                return Ok(set);
            }
            // After "Revert to here" the messages from the revert point on are undone: they
            // are no turn of the session any more (the server still lists them until the
            // next prompt, and its whole-session diff still counts them).
            let reverted = session
                .revert
                .as_ref()
                .map(|r| r.message_id.clone())
                .filter(|id| !id.is_empty());
            let message_id = match req.scope {
                ChangeScope::LastTurn => {
                    match last_user_message(core, &session.id, reverted.as_deref()).await? {
                        Some(id) => Some(id),
                        None => {
                            set.unavailable = Some(ChangesUnavailable::NoTurn);
                            return Ok(set);
                        }
                    }
                }
                _ => None,
            };
            let mut diffs = if message_id.is_none() && reverted.is_some() {
                Vec::new()
            } else {
                client
                    .session_diff(&session.id, message_id.as_deref())
                    .await?
            };
            if message_id.is_none() && diffs.is_empty() {
                diffs = joined_turns(core, &session.id, reverted.as_deref()).await?;
            }
            set.message_id = message_id;
            diffs
        }
    };
    set.files = file_changes(diffs);
    Ok(set)
}

/// A worktree's changes against its base branch as file diffs; `None` outside a worktree.
async fn against_base(directory: &str) -> Result<Option<Vec<FileDiff>>> {
    let place = crate::worktree::workplace(directory).await;
    let (Some(repository), true) = (&place.repository, place.worktree) else {
        return Ok(None);
    };
    let Some(base) = crate::worktree::current_branch(std::path::Path::new(repository)).await else {
        return Ok(None);
    };
    let files = crate::worktree::merge::against_base(directory, &base).await?;
    Ok(Some(
        files
            .into_iter()
            .map(|(file, status, patch)| {
                let count = |sign: &str, header: &str| {
                    patch
                        .lines()
                        .filter(|l| l.starts_with(sign) && !l.starts_with(header))
                        .count()
                };
                FileDiff {
                    additions: u32::try_from(count("+", "+++")).unwrap_or(u32::MAX),
                    deletions: u32::try_from(count("-", "---")).unwrap_or(u32::MAX),
                    file,
                    status: match status {
                        'A' => FileStatus::Added,
                        'D' => FileStatus::Deleted,
                        _ => FileStatus::Modified,
                    },
                    patch: Some(patch),
                }
            })
            .collect(),
    ))
}

/// The session's todo list; a session the server does not know is `not_found`.
pub async fn todos(core: &Core, req: Todos) -> Result<Vec<Todo>> {
    match core
        .client_for(&req.session_id)?
        .todos(&req.session_id)
        .await
    {
        Err(e) if e.is_not_found() => Err(Error::SessionNotFound(req.session_id)),
        other => Ok(other?),
    }
}

/// The id of the session's newest user message before `reverted` (the revert point).
async fn last_user_message(
    core: &Core,
    session_id: &str,
    reverted: Option<&str>,
) -> Result<Option<String>> {
    Ok(user_messages(core, session_id, 1, reverted).await?.pop())
}

/// The ids of the session's newest `most` user messages before `reverted` (message ids are
/// time-ordered, so the revert point and what follows it sort at or after it), oldest first
/// (read newest page first, at most [`TURN_PAGES`] pages).
async fn user_messages(
    core: &Core,
    session_id: &str,
    most: usize,
    reverted: Option<&str>,
) -> Result<Vec<String>> {
    let client = core.client_for(session_id)?;
    let mut before: Option<String> = None;
    let mut found = Vec::new();
    for _ in 0..TURN_PAGES {
        let page = client
            .messages(session_id, Some(TURN_PAGE), before.as_deref())
            .await?;
        for message in page.messages.iter().rev() {
            let undone = reverted.is_some_and(|point| message.info.id.as_str() >= point);
            if message.info.role == "user" && !undone && found.len() < most {
                found.push(message.info.id.clone());
            }
        }
        match page.next_cursor {
            Some(cursor) if found.len() < most => before = Some(cursor),
            _ => break,
        }
    }
    found.reverse();
    Ok(found)
}

/// The whole session's changes joined from its turns' diffs, for a server whose
/// whole-session diff is empty although its turns changed files (1.18.33 answers `[]` there
/// and keeps each turn's diff on its user message): per file the counts add up and the
/// turns' patches follow each other, oldest first. A reverted session is always joined from
/// the turns before its revert point.
async fn joined_turns(
    core: &Core,
    session_id: &str,
    reverted: Option<&str>,
) -> Result<Vec<FileDiff>> {
    let client = core.client_for(session_id)?;
    let mut joined: Vec<FileDiff> = Vec::new();
    for message_id in user_messages(core, session_id, MAX_JOINED_TURNS, reverted).await? {
        for diff in client.session_diff(session_id, Some(&message_id)).await? {
            match joined.iter_mut().find(|d| d.file == diff.file) {
                Some(known) => {
                    known.additions = known.additions.saturating_add(diff.additions);
                    known.deletions = known.deletions.saturating_add(diff.deletions);
                    known.status = match (known.status, diff.status) {
                        (_, FileStatus::Deleted) => FileStatus::Deleted,
                        (FileStatus::Added, _) => FileStatus::Added,
                        _ => FileStatus::Modified,
                    };
                    known.patch = match (known.patch.take(), diff.patch) {
                        (Some(a), Some(b)) => Some(format!("{}\n{b}", a.trim_end_matches('\n'))),
                        (a, b) => a.or(b),
                    };
                }
                None => joined.push(diff),
            }
        }
    }
    Ok(joined)
}

/// The server's diffs as the UI gets them: files without a path dropped, patches over the
/// limits left out (and marked).
fn file_changes(diffs: Vec<FileDiff>) -> Vec<FileChange> {
    let mut budget = TOTAL_PATCH_LIMIT;
    diffs
        .into_iter()
        .filter(|d| !d.file.is_empty())
        .map(|d| {
            let (patch, too_large) = match d.patch {
                // Headers without a hunk: the server left the lines out (a file too large for
                // it, or binary); counted lines mean too large, none binary or a mode change.
                Some(p) if !p.lines().any(|l| l.starts_with("@@")) => {
                    (None, d.additions > 0 || d.deletions > 0)
                }
                Some(p) if p.len() > FILE_PATCH_LIMIT || p.len() > budget => (None, true),
                Some(p) => {
                    budget -= p.len();
                    (Some(p), false)
                }
                None => (None, false),
            };
            FileChange {
                path: d.file,
                status: d.status,
                additions: d.additions,
                deletions: d.deletions,
                patch,
                too_large,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(file: &str, patch_len: usize) -> FileDiff {
        let hunk = "@@ -0,0 +1 @@\n";
        FileDiff {
            file: file.into(),
            patch: Some(format!(
                "{hunk}{}",
                "+".repeat(patch_len.saturating_sub(hunk.len()))
            )),
            additions: 1,
            deletions: 0,
            status: FileStatus::Added,
        }
    }

    #[test]
    fn patches_over_the_limits_are_left_out_and_marked() {
        let files = file_changes(vec![
            diff("small", 10),
            diff("", 10),
            diff("huge", FILE_PATCH_LIMIT + 1),
            diff("fits", FILE_PATCH_LIMIT),
        ]);
        let shown: Vec<(&str, bool, bool)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.patch.is_some(), f.too_large))
            .collect();
        assert_eq!(
            shown,
            [
                ("small", true, false),
                ("huge", false, true),
                ("fits", true, false)
            ]
        );
        let many: Vec<FileDiff> = (0..20)
            .map(|i| diff(&format!("f{i}"), FILE_PATCH_LIMIT))
            .collect();
        let files = file_changes(many);
        let sent: usize = files
            .iter()
            .filter_map(|f| f.patch.as_ref())
            .map(String::len)
            .sum();
        assert!(sent <= TOTAL_PATCH_LIMIT, "{sent}");
        assert!(files.last().is_some_and(|f| f.too_large));
    }

    /// What OpenCode sends for a file whose lines it left out (a 20 MB file, or past its own
    /// budget) and for a binary file: the headers only. The Changes tab showed "No changes."
    /// beside "+270000"; the file is too large, or binary, and the UI is told so.
    #[test]
    fn a_patch_of_headers_only_is_too_large_or_binary_not_empty() {
        let headers = "Index: big.txt\n===================================================================\n--- big.txt\n+++ big.txt\n";
        let files = file_changes(vec![
            FileDiff {
                file: "big.txt".into(),
                patch: Some(headers.into()),
                additions: 270_000,
                deletions: 0,
                status: FileStatus::Added,
            },
            FileDiff {
                file: "logo.png".into(),
                patch: Some(headers.replace("big.txt", "logo.png")),
                additions: 0,
                deletions: 0,
                status: FileStatus::Modified,
            },
            FileDiff {
                file: "empty-patch.bin".into(),
                patch: Some(String::new()),
                additions: 0,
                deletions: 0,
                status: FileStatus::Modified,
            },
        ]);
        let shown: Vec<(&str, bool, bool)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.patch.is_some(), f.too_large))
            .collect();
        assert_eq!(
            shown,
            [
                ("big.txt", false, true),
                ("logo.png", false, false),
                ("empty-patch.bin", false, false)
            ]
        );
    }
}
