//! Transcript requests: following a session's messages, loading older pages, letting go.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::TranscriptPage;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::store::Transcript;
use crate::sync::PAGE_SIZE;

/// Fields of [`Request::OpenSession`](super::Request::OpenSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct OpenSession {
    /// The session whose transcript the UI shows.
    pub session_id: String,
}

/// Fields of [`Request::LoadOlder`](super::Request::LoadOlder).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoadOlder {
    /// An open session whose older messages the UI scrolled to.
    pub session_id: String,
}

/// Fields of [`Request::CloseSession`](super::Request::CloseSession).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CloseSession {
    /// A session the UI no longer shows.
    pub session_id: String,
}

/// Follows a transcript and answers its loaded window.
pub async fn open(core: &Core, req: OpenSession) -> Result<TranscriptPage> {
    follow_transcript(core, &req.session_id).await?;
    loaded_page(core, &req.session_id)
}

/// Loads the page before the oldest loaded message and answers the loaded window.
pub async fn load_older(core: &Core, req: LoadOlder) -> Result<TranscriptPage> {
    let session_id = &req.session_id;
    let cursor = core
        .read_store(|s, _| s.transcript(session_id).map(|t| t.older_cursor.clone()))
        .ok_or_else(|| {
            Error::InvalidRequest("open the session before loading older messages".into())
        })?;
    if let Some(cursor) = cursor {
        let page = core
            .client()?
            .messages(session_id, Some(PAGE_SIZE), Some(&cursor))
            .await?;
        core.with_store(|s| {
            if let Some(t) = s.transcript_mut(session_id) {
                t.prepend(page.messages, page.next_cursor);
            }
            ((), None)
        });
    }
    loaded_page(core, session_id)
}

/// Stops following a transcript.
pub async fn close(core: &Core, req: CloseSession) -> Result<()> {
    core.with_store(|s| {
        s.unfollow(&req.session_id);
        ((), None)
    });
    Ok(())
}

fn loaded_page(core: &Core, session_id: &str) -> Result<TranscriptPage> {
    core.read_store(|s, seq| s.page(session_id, seq))
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))
}

/// Follows a transcript, loading its newest page when nobody followed it yet.
pub(crate) async fn follow_transcript(core: &Core, session_id: &str) -> Result<()> {
    if core.with_store(|s| (s.follow(session_id), None)) {
        return Ok(());
    }
    let page = core
        .client()?
        .messages(session_id, Some(PAGE_SIZE), None)
        .await
        .map_err(|e| match e {
            crosscheck_opencode::Error::NotFound { .. } => {
                Error::SessionNotFound(session_id.to_owned())
            }
            e => e.into(),
        })?;
    core.with_store(|s| {
        if !s.follow(session_id) {
            let mut t = Transcript::from_page(page.messages, page.next_cursor);
            t.followers = 1;
            s.put_transcript(session_id, t);
        }
        ((), None)
    });
    Ok(())
}
