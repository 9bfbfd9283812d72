//! Going back and branching off: revert a session to one of its messages, redo what was
//! reverted, fork a session from a message, and the file search behind `@` mentions.

use crosscheck_opencode::Session;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::SessionView;
use crate::core::Core;
use crate::error::{Error, Result};

/// How many paths a file search answers.
const FIND_RESULTS: usize = 50;

/// Fields of [`Request::RevertSession`](super::Request::RevertSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RevertSession {
    /// The session to revert.
    pub session_id: String,
    /// The user message to go back to: it and everything after it are undone.
    pub message_id: String,
}

/// Fields of [`Request::UnrevertSession`](super::Request::UnrevertSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct UnrevertSession {
    /// The reverted session whose messages come back.
    pub session_id: String,
}

/// Fields of [`Request::ForkSession`](super::Request::ForkSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ForkSession {
    /// The session to branch off.
    pub session_id: String,
    /// The new session holds copies of the messages before this one; all of them when absent.
    #[serde(default)]
    #[ts(optional)]
    pub message_id: Option<String>,
}

/// Fields of [`Request::FindFiles`](super::Request::FindFiles).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct FindFiles {
    /// The session whose folder is searched.
    pub session_id: String,
    /// What the user typed after `@` (may be empty).
    pub query: String,
}

/// Reverts a session to a message; answers the session with its `revert` set.
pub async fn revert(core: &Core, req: RevertSession) -> Result<SessionView> {
    let session = revert_to(core, &req.session_id, &req.message_id).await?;
    Ok(core.remember_session(session))
}

/// Brings back what a revert undid; answers the session without `revert`.
pub async fn unrevert(core: &Core, req: UnrevertSession) -> Result<SessionView> {
    let session = core
        .client_for(&req.session_id)?
        .unrevert(&req.session_id)
        .await
        .map_err(|e| busy_or(e, &req.session_id))?;
    Ok(core.remember_session(session))
}

/// Forks a session from a message; answers the new session.
pub async fn fork(core: &Core, req: ForkSession) -> Result<SessionView> {
    let server = core.server_of(&req.session_id);
    let client = core.server_client(&server)?;
    if let Some(message_id) = &req.message_id {
        // The server copies the whole session for a message it does not know.
        client
            .message(&req.session_id, message_id)
            .await
            .map_err(|e| gone_or(e, message_id))?;
    }
    let session = client
        .fork(&req.session_id, req.message_id.as_deref())
        .await?;
    Ok(core.remember_session_on(&server, session))
}

/// Files in the session's folder whose names match the query, best first.
pub async fn find_files(core: &Core, req: FindFiles) -> Result<Vec<String>> {
    let directory = session_directory(core, &req.session_id).await?;
    let query = req.query.trim();
    Ok(core
        .client_for(&req.session_id)?
        .find_files(&directory, query, FIND_RESULTS)
        .await?)
}

/// Reverts `session_id` to `message_id` and checks the server took it: it answers 409 while a
/// turn runs, and ignores a message it does not know.
pub(crate) async fn revert_to(core: &Core, session_id: &str, message_id: &str) -> Result<Session> {
    let session = core
        .client_for(session_id)?
        .revert(session_id, message_id)
        .await
        .map_err(|e| busy_or(e, session_id))?;
    if session.revert.as_ref().map(|r| r.message_id.as_str()) != Some(message_id) {
        // Whatever the server kept (an earlier revert, or none) is what the UI must show.
        core.remember_session(session);
        return Err(Error::MessageNotFound(message_id.to_owned()));
    }
    Ok(session)
}

/// The folder a session works in: from the store, else from the server.
pub(crate) async fn session_directory(core: &Core, session_id: &str) -> Result<String> {
    let known = core.read_store(|s, _| {
        s.session(session_id)
            .map(|session| session.directory.clone())
            .filter(|d| !d.is_empty())
    });
    match known {
        Some(directory) => Ok(directory),
        None => Ok(core.session(session_id).await?.directory),
    }
}

/// A 409 from the server as [`Error::SessionBusy`]; any other error as it is.
fn busy_or(error: crosscheck_opencode::Error, session_id: &str) -> Error {
    match error {
        crosscheck_opencode::Error::Status { status: 409, .. } => {
            Error::SessionBusy(session_id.to_owned())
        }
        other => other.into(),
    }
}

/// A 404 while reading a message as [`Error::MessageNotFound`]; any other error as it is.
fn gone_or(error: crosscheck_opencode::Error, message_id: &str) -> Error {
    match error {
        crosscheck_opencode::Error::NotFound { .. } => {
            Error::MessageNotFound(message_id.to_owned())
        }
        other => other.into(),
    }
}
