//! Transcript requests: following a session's messages, loading older pages, letting go.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{OlderPage, TranscriptPage};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::services::transcripts::{PAGE_SIZE, follow_transcript};
use crate::store::client_follower;

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

/// Follows a transcript for `client` (once, however often it opens it) and answers its loaded
/// window.
pub async fn open(core: &Core, client: &str, req: OpenSession) -> Result<TranscriptPage> {
    follow_transcript(core, &req.session_id, &client_follower(client)).await?;
    // A review reply that ended before its transcript was followed is recorded (and its
    // findings pushed) now: a first load is no reset, so the recorder did not see it.
    let (recorder_core, id) = (core.clone(), req.session_id.clone());
    tokio::spawn(async move {
        if let Err(e) =
            crate::flows::review_loop::recorder::record_latest(&recorder_core, &id).await
        {
            tracing::warn!(session = %id, "could not record the review's findings: {e}");
        }
    });
    if let Some(dir) =
        core.read_store(|s, _| s.session(&req.session_id).map(|x| x.directory.clone()))
    {
        core.remember_project(&dir);
    }
    loaded_page(core, &req.session_id)
}

/// Loads the page before the oldest loaded message and answers that page only. The page is
/// copied for the answer before the store's lock is taken; under the lock it is only moved in.
pub async fn load_older(core: &Core, req: LoadOlder) -> Result<OlderPage> {
    let session_id = &req.session_id;
    let cursor = core
        .read_store(|s, _| s.transcript(session_id).map(|t| t.older_cursor.clone()))
        .ok_or_else(|| {
            Error::InvalidRequest("open the session before loading older messages".into())
        })?;
    let Some(cursor) = cursor else {
        let seq = core.read_store(|_, seq| seq);
        return Ok(OlderPage {
            seq,
            session_id: session_id.clone(),
            messages: Vec::new(),
            has_older: false,
        });
    };
    let page = core
        .client_for(session_id)?
        .messages(session_id, Some(PAGE_SIZE), Some(&cursor))
        .await?;
    // A server that hands back the cursor it was given would page forever.
    let next_cursor = page.next_cursor.filter(|next| *next != cursor);
    let mut messages = page.messages.clone();
    messages.sort_by(|a, b| a.info.id.cmp(&b.info.id));
    let (seq, has_older) = core.with_store_seq(|s, next| {
        let has_older = match s.transcript_mut(session_id) {
            Some(t) => {
                t.prepend(page.messages, next_cursor);
                t.older_cursor.is_some()
            }
            None => false,
        };
        ((next - 1, has_older), None)
    });
    Ok(OlderPage {
        seq,
        session_id: session_id.clone(),
        messages,
        has_older,
    })
}

/// Stops following a transcript for `client`.
pub async fn close(core: &Core, client: &str, req: CloseSession) -> Result<()> {
    let follower = client_follower(client);
    core.with_store(|s| {
        s.unfollow(&req.session_id, &follower);
        ((), None)
    });
    Ok(())
}

fn loaded_page(core: &Core, session_id: &str) -> Result<TranscriptPage> {
    core.read_store(|s, seq| s.page(session_id, seq))
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))
}
