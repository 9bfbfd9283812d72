//! Session requests: the first-frame snapshot, and creating, renaming, archiving and deleting
//! sessions.

use crosscheck_opencode::{CreateSession as CreateBody, SessionPatch, TimePatch};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{SessionView, Snapshot};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::flows::{delete, now_ms};
use crate::folders::{check_folder, push_recent};

/// Fields of [`Request::CreateSession`](super::Request::CreateSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CreateSession {
    /// Folder the session works in: an absolute path (or `~/...`) to an existing directory.
    pub directory: String,
    /// Title to start with; the server names it after the first prompt when absent.
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// The server to create it on (the main one when absent).
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<crate::model::ids::ServerId>,
}

/// Fields of [`Request::RenameSession`](super::Request::RenameSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RenameSession {
    /// The session to rename.
    pub session_id: String,
    /// Its new title (trimmed; must not be empty).
    pub title: String,
}

/// Fields of [`Request::ArchiveSession`](super::Request::ArchiveSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ArchiveSession {
    /// The session to archive or restore.
    pub session_id: String,
    /// Archive (true) or restore (false).
    pub archived: bool,
}

/// Fields of [`Request::DeleteSession`](super::Request::DeleteSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct DeleteSession {
    /// The session to delete; its review link is removed first.
    pub session_id: String,
}

/// Everything for the UI's first frame, at one sequence number.
pub async fn snapshot(core: &Core) -> Result<Snapshot> {
    Ok(core.snapshot())
}

/// Creates a session in a folder that exists on this machine (checked here: in web mode the
/// browser cannot), and remembers the folder as the newest recent one.
pub async fn create(core: &Core, req: CreateSession) -> Result<SessionView> {
    let home = std::env::home_dir();
    let directory = check_folder(&req.directory, home.as_deref())?;
    let body = CreateBody {
        title: req
            .title
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty()),
        ..Default::default()
    };
    let server = req.server_id.unwrap_or_default();
    let session = core
        .server_client(&server)?
        .create_session(&directory, &body)
        .await?;
    core.remember_project(&directory);
    let recent = push_recent(&core.db().recent_folders(), &directory);
    if let Err(e) = core.db().set_recent_folders(&recent) {
        tracing::warn!("could not save the recent folders: {e}");
    }
    Ok(core.remember_session_on(&server, session))
}

/// Renames a session.
pub async fn rename(core: &Core, req: RenameSession) -> Result<SessionView> {
    let title = req.title.trim().to_owned();
    if title.is_empty() {
        return Err(Error::InvalidRequest("a title cannot be empty".into()));
    }
    let patch = SessionPatch {
        title: Some(title),
        ..Default::default()
    };
    patch_session(core, &req.session_id, patch).await
}

/// Archives (now) or restores a session.
pub async fn archive(core: &Core, req: ArchiveSession) -> Result<SessionView> {
    let patch = SessionPatch {
        time: Some(TimePatch {
            archived: req.archived.then(now_ms),
        }),
        ..Default::default()
    };
    patch_session(core, &req.session_id, patch).await
}

/// Deletes a session after removing its review link.
pub async fn delete(core: &Core, req: DeleteSession) -> Result<()> {
    delete::delete_session(core, &req.session_id).await
}

async fn patch_session(core: &Core, session_id: &str, patch: SessionPatch) -> Result<SessionView> {
    let session = core
        .client_for(session_id)?
        .update_session(session_id, &patch)
        .await?;
    Ok(core.remember_session(session))
}
