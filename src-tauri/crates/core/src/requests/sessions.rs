//! Session requests: the first-frame snapshot, and creating, renaming, archiving and deleting
//! sessions.

use crosscheck_opencode::{CreateSession as CreateBody, SessionPatch, TimePatch};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{SessionView, Snapshot};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::flows::{delete, now_ms};

/// Fields of [`Request::CreateSession`](super::Request::CreateSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CreateSession {
    /// Absolute folder the session works in.
    pub directory: String,
    /// Title to start with; the server names it after the first prompt when absent.
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
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

/// Creates a session in an absolute directory.
pub async fn create(core: &Core, req: CreateSession) -> Result<SessionView> {
    if !std::path::Path::new(&req.directory).is_absolute() {
        return Err(Error::InvalidRequest(format!(
            "directory must be an absolute path: {}",
            req.directory
        )));
    }
    let body = CreateBody {
        title: req.title,
        ..Default::default()
    };
    let session = core.client()?.create_session(&req.directory, &body).await?;
    core.remember_project(&req.directory);
    Ok(core.remember_session(session))
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
    let session = core.client()?.update_session(session_id, &patch).await?;
    Ok(core.remember_session(session))
}
