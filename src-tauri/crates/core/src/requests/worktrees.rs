//! Worktree requests: where sessions work, a new worktree (for a new session, or a started one
//! moved there with its uncommitted changes), making a folder a repository, the merge preview,
//! the merge back, and removing a worktree with its branch.

use std::path::Path;

use crosscheck_opencode::client::WorktreeInfo;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{ServerId, SessionView};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::folders::absolute_folder;
use crate::worktree::merge::{self, MergeMode, MergeOutcome, MergePreview};
use crate::worktree::{
    Workplace, busy_session, check_name, git, server_words, uncommitted, workplace,
};

/// Fields of [`Request::Workplaces`](super::Request::Workplaces).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Workplaces {
    /// The folders to describe (sessions' directories).
    pub directories: Vec<String>,
}

/// Fields of [`Request::CreateWorktree`](super::Request::CreateWorktree).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CreateWorktree {
    /// A folder of the repository.
    pub directory: String,
    /// The worktree's name; its branch is `opencode/<name>`.
    pub name: String,
    /// The server the folder is on; the main one when absent.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// A worktree that was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CreatedWorktree {
    /// Its name.
    pub name: String,
    /// Its branch.
    pub branch: String,
    /// Its folder.
    pub directory: String,
}

/// Fields of [`Request::MoveToWorktree`](super::Request::MoveToWorktree).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct MoveToWorktree {
    /// The session to move.
    pub session_id: String,
    /// The new worktree's name.
    pub name: String,
}

/// Fields of [`Request::InitRepository`](super::Request::InitRepository).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct InitRepository {
    /// The folder to make a git repository.
    pub directory: String,
    /// The server the folder is on; the main one when absent.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// Fields of [`Request::MergePreview`](super::Request::MergePreview).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct PreviewMerge {
    /// The session whose worktree would be merged.
    pub session_id: String,
}

/// Fields of [`Request::MergeWorktree`](super::Request::MergeWorktree).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct MergeWorktree {
    /// The session whose worktree to merge back.
    pub session_id: String,
    /// Merge commit or squash.
    pub mode: MergeMode,
}

/// Fields of [`Request::RemoveWorktree`](super::Request::RemoveWorktree).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RemoveWorktree {
    /// The worktree's folder.
    pub directory: String,
    /// Remove it although it has uncommitted changes (the second confirmation).
    #[serde(default)]
    pub force: bool,
    /// The server the folder is on; the main one when absent.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// Where each folder works.
pub async fn workplaces(_core: &Core, req: Workplaces) -> Result<Vec<Workplace>> {
    let mut places = Vec::with_capacity(req.directories.len());
    for directory in req.directories.iter().take(500) {
        places.push(workplace(directory).await);
    }
    Ok(places)
}

/// A new worktree of the repository that holds `directory`, on a new branch from its HEAD.
/// Refused when the folder is not an absolute path or not a repository, or the branch exists
/// already (the server would pick another name silently).
pub async fn create(core: &Core, req: CreateWorktree) -> Result<CreatedWorktree> {
    let directory = named_folder(&req.directory)?;
    let name = check_name(&req.name)?;
    let place = workplace(&directory).await;
    if !place.remote {
        let Some(repository) = &place.repository else {
            return Err(Error::NotARepository(directory));
        };
        let branch = format!("opencode/{name}");
        let exists = git::run(
            Path::new(repository),
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .await?
        .ok;
        if exists {
            return Err(Error::Worktree(format!(
                "the branch {branch} exists already; choose another name"
            )));
        }
    }
    let client = folder_client(core, req.server_id.as_ref())?;
    let made: WorktreeInfo = client
        .create_worktree(&directory, name)
        .await
        .map_err(|e| refused(&directory, &e))?;
    Ok(CreatedWorktree {
        name: made.name,
        branch: made.branch,
        directory: made.directory,
    })
}

/// The folder a request names, as an absolute path (a relative one is refused: the server would
/// read it against its own working folder).
fn named_folder(raw: &str) -> Result<String> {
    absolute_folder(raw, std::env::home_dir().as_deref())
}

/// The client of the server a folder request names (the main one when it names none).
fn folder_client(core: &Core, server_id: Option<&ServerId>) -> Result<crosscheck_opencode::Client> {
    super::catalog::client_of(core, None, server_id)
}

/// The server's refusal in its words; "not a git project" becomes [`Error::NotARepository`].
fn refused(directory: &str, error: &crosscheck_opencode::Error) -> Error {
    let words = server_words(error);
    if words.contains("only supported for git") || words.contains("WorktreeNotGit") {
        Error::NotARepository(directory.to_owned())
    } else {
        Error::Worktree(words)
    }
}

/// Moves a started session into a new worktree, taking its uncommitted changes along.
pub async fn move_to_worktree(core: &Core, req: MoveToWorktree) -> Result<SessionView> {
    let session = core.session(&req.session_id).await?;
    if let Some(busy) = busy_session(core, &session.directory) {
        return Err(Error::SessionBusy(busy));
    }
    let made = create(
        core,
        CreateWorktree {
            directory: session.directory.clone(),
            name: req.name,
            server_id: Some(core.server_of(&session.id)),
        },
    )
    .await?;
    let client = core.client_for(&session.id)?;
    client
        .move_session(&session.id, &made.directory, true)
        .await
        .map_err(|e| Error::Worktree(server_words(&e)))?;
    let moved = client.get_session(&session.id).await?;
    Ok(core.remember_session(moved))
}

/// Makes a folder a git repository (through the server, which then knows it as one).
pub async fn init_repository(core: &Core, req: InitRepository) -> Result<()> {
    let directory = named_folder(&req.directory)?;
    folder_client(core, req.server_id.as_ref())?
        .git_init(&directory)
        .await
        .map_err(|e| Error::Worktree(server_words(&e)))
}

/// What merging the session's worktree back would do.
pub async fn preview(core: &Core, req: PreviewMerge) -> Result<MergePreview> {
    let session = core.session(&req.session_id).await?;
    let place = workplace(&session.directory).await;
    let (worktree, repository, branch) = merge::merge_sides(&place)?;
    merge::preview(&worktree, &repository, &branch).await
}

/// Merges the session's worktree back into the main checkout's branch: refused while a session
/// in the worktree (or the main checkout) runs; uncommitted work in the worktree is committed
/// on its branch first; a conflict aborts the merge.
pub async fn merge_back(core: &Core, req: MergeWorktree) -> Result<MergeOutcome> {
    let session = core.session(&req.session_id).await?;
    let place = workplace(&session.directory).await;
    let (worktree, repository, branch) = merge::merge_sides(&place)?;
    for dir in [&worktree, &repository] {
        if let Some(busy) = busy_session(core, dir) {
            return Err(Error::SessionBusy(busy));
        }
    }
    let title = one_line(&session.title);
    let pending = merge::commit_pending(&worktree, &format!("{title} (work of {branch})")).await?;
    let message = match req.mode {
        MergeMode::Merge => format!("Merge {branch}: {title}"),
        MergeMode::Squash => format!("{title} (squashed from {branch})"),
    };
    let mut outcome = merge::merge(&repository, &branch, req.mode, &message).await?;
    outcome.committed_pending = pending;
    Ok(outcome)
}

/// A title as one commit-message line.
fn one_line(title: &str) -> String {
    let line: String = title
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(120)
        .collect();
    let line = line.trim();
    if line.is_empty() {
        "Session work".to_owned()
    } else {
        line.to_owned()
    }
}

/// Removes a worktree and its branch through the server. Refused while a session in it runs,
/// and (unless `force`) while it has uncommitted changes.
pub async fn remove(core: &Core, req: RemoveWorktree) -> Result<()> {
    let directory = named_folder(&req.directory)?;
    if let Some(busy) = busy_session(core, &directory) {
        return Err(Error::SessionBusy(busy));
    }
    let place = workplace(&directory).await;
    if !place.remote && !place.gone {
        if !place.worktree {
            return Err(Error::Worktree(format!(
                "{directory} is not a worktree; only worktrees are removed"
            )));
        }
        if !req.force && !uncommitted(Path::new(&directory)).await?.is_empty() {
            return Err(Error::WorktreeDirty(directory));
        }
    }
    let repo = place.repository.as_deref().unwrap_or(&directory);
    folder_client(core, req.server_id.as_ref())?
        .remove_worktree(repo, &directory)
        .await
        .map_err(|e| Error::Worktree(server_words(&e)))?;
    // The server removes the branch too; a branch it left behind is deleted here.
    if let (Some(repository), Some(branch)) = (&place.repository, &place.branch) {
        let repo = Path::new(repository);
        let left = git::run(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .await?
        .ok;
        if left {
            git::ok(repo, &["branch", "-D", branch]).await?;
        }
    }
    Ok(())
}
