//! Transcript requests: following a session's messages, loading older pages, letting go.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{OlderPage, TranscriptPage};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::store::{LoadToken, client_follower};
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
        .client()?
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

/// Follows a transcript for `follower` (loading its newest page when nobody follows it yet).
/// Events that arrive while the page loads are recorded and merged onto it.
pub(crate) async fn follow_transcript(core: &Core, session_id: &str, follower: &str) -> Result<()> {
    let token = core.with_store(|s| {
        let loaded = s.follow(session_id, follower);
        let token = if loaded {
            None
        } else {
            s.begin_load(session_id)
        };
        (token, None)
    });
    let Some(token) = token else {
        return Ok(());
    };
    let load = PageLoad::new(core, session_id, token, Some(follower));
    let client = core.client()?;
    let page = client
        .messages(session_id, Some(PAGE_SIZE), None)
        .await
        .map_err(|e| match e {
            crosscheck_opencode::Error::NotFound { .. } => {
                Error::SessionNotFound(session_id.to_owned())
            }
            e => e.into(),
        })?;
    load.finish(page);
    Ok(())
}

/// A transcript page being fetched: hands the page to the store, or gives the fetch up when
/// dropped unfinished (an error, or the request was cancelled).
pub(crate) struct PageLoad {
    core: Core,
    session_id: String,
    token: Option<LoadToken>,
    follower: Option<String>,
}

impl PageLoad {
    /// Watches the fetch `token` of `session_id`; `follower` stops following if it fails.
    pub(crate) fn new(
        core: &Core,
        session_id: &str,
        token: LoadToken,
        follower: Option<&str>,
    ) -> Self {
        Self {
            core: core.clone(),
            session_id: session_id.to_owned(),
            token: Some(token),
            follower: follower.map(str::to_owned),
        }
    }

    /// Installs the page, merging what was recorded meanwhile, and pushes a reset when the
    /// transcript was shown already.
    pub(crate) fn finish(mut self, page: crosscheck_opencode::MessagePage) {
        let Some(token) = self.token.take() else {
            return;
        };
        let id = self.session_id.clone();
        self.core.with_store_seq(|s, seq| {
            let change = s.finish_load(&id, token, page.messages, page.next_cursor, seq);
            ((), change)
        });
    }
}

impl Drop for PageLoad {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            let (id, follower) = (&self.session_id, self.follower.as_deref());
            self.core.with_store(|s| {
                s.cancel_load(id, token, follower);
                ((), None)
            });
        }
    }
}
