//! Following a transcript: its newest page loaded when nobody follows it yet, the events that
//! arrive meanwhile merged onto it. Request handlers, flows and the resync all load pages here.

use crate::core::Core;
use crate::error::{Error, Result};
use crate::store::LoadToken;

/// Messages per transcript page.
pub(crate) const PAGE_SIZE: u32 = 50;

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
    let client = core.client_for(session_id)?;
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
