//! Line comment requests: write one on a diff's lines, list a session's, close or remove one,
//! and send the batch. A comment written from a review session goes to its original (the
//! review session's diffs are its original's).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::comments::{self, CommentStatus, LineComment, NewComment, SendOutcome};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::get_original_session_id;

/// The implementing session the comments of `session_id`'s diffs go to.
async fn target(core: &Core, session_id: &str) -> Result<crosscheck_opencode::Session> {
    let session = core.known_session(session_id).await?;
    match get_original_session_id(&session) {
        Some(original) => {
            let original = original.to_owned();
            core.known_session(&original).await
        }
        None => Ok(session),
    }
}

/// Fields of [`Request::AddComment`](super::Request::AddComment).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AddComment {
    /// The session whose diff the lines are in (a review session: its original's).
    pub session_id: String,
    /// The file: relative to the session's folder, or absolute inside it.
    pub path: String,
    /// First line (new side, 1-based).
    pub start_line: u32,
    /// Last line (equal to the first for one line).
    pub end_line: u32,
    /// The lines as the diff shows them, joined by newlines.
    pub quote: String,
    /// What the person writes about them.
    pub body: String,
}

/// Keeps a new comment in the session's batch; answers every comment of the session.
pub async fn add(core: &Core, req: AddComment) -> Result<Vec<LineComment>> {
    let session = target(core, &req.session_id).await?;
    let path = comments::relative_path(&session.directory, &req.path)?;
    comments::add(
        core.db(),
        &NewComment {
            session_id: &session.id,
            path: &path,
            start_line: req.start_line,
            end_line: req.end_line,
            quote: &req.quote,
            body: &req.body,
        },
    )?;
    push(core, &session.id)
}

fn push(core: &Core, session_id: &str) -> Result<Vec<LineComment>> {
    let list = comments::list(core.db(), session_id)?;
    core.emit(crate::api_types::Change::Comments {
        session_id: session_id.to_owned(),
        comments: list.clone(),
    });
    Ok(list)
}

/// Fields of [`Request::ListComments`](super::Request::ListComments).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ListComments {
    /// Either session of a pair (or a session without a reviewer).
    pub session_id: String,
}

/// Every comment of the implementing session, each checked against its lines now.
pub async fn list(core: &Core, req: ListComments) -> Result<Vec<LineComment>> {
    let session = target(core, &req.session_id).await?;
    comments::refresh(core, &session.id).await
}

/// Fields of [`Request::CloseComment`](super::Request::CloseComment).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CloseComment {
    /// The comment.
    pub comment_id: String,
}

/// Closes a comment (a draft is removed from the batch instead); answers the session's comments.
pub async fn close(core: &Core, req: CloseComment) -> Result<Vec<LineComment>> {
    let comment = comments::get(core.db(), &req.comment_id)?
        .ok_or_else(|| Error::InvalidRequest("no such comment".into()))?;
    if !comments::delete_draft(core.db(), &comment.id)? {
        comments::set_status(core.db(), &comment.id, CommentStatus::Closed)?;
    }
    push(core, &comment.session_id)
}

/// Fields of [`Request::SendComments`](super::Request::SendComments).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SendComments {
    /// Either session of a pair: the batch goes to the implementing one.
    pub session_id: String,
}

/// Sends the batch of draft comments to the implementer in words (or hands it to the loop).
pub async fn send(core: &Core, req: SendComments) -> Result<SendOutcome> {
    let session = target(core, &req.session_id).await?;
    comments::send_batch(core, &session.id).await
}
