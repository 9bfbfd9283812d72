//! Reconciling a loop step with the server while the awaited turn runs, so that once the reply
//! completes only the next prompt is left to send.
//!
//! The event stream is lossy only where it breaks: it connects again, drops, or skips a
//! malformed event (each counted by [`Core::stream_gaps`]); within one unbroken stream the
//! server's events arrive complete and in order, and the store applies every one. So a step
//! may act on the store's transcript when
//! - this run sent the awaited prompt itself, after subscribing, with the core in sync;
//! - the stream had no gap from just before that send to the moment the reply was seen
//!   complete (the store then saw every event of the turn); and
//! - the server's own transcript, read over REST while the turn ran (after the send), shows
//!   no prompt of someone else's (the user took over) since the loop started.
//!
//! Otherwise the step reads the server's transcript after the reply as before
//! ([`super::run`]'s full reconcile), which decides.

use std::collections::HashSet;

use tokio::task::JoinHandle;

use crate::api_types::Connection;
use crate::core::Core;
use crate::error::Result;

/// How many newest messages the REST reconcile reads.
pub(super) const RECONCILE_PAGE: u32 = 40;

/// What the server's transcript, read while the turn ran, says about the step.
pub(super) enum Checked {
    /// Nothing against acting on the store's transcript.
    Clear,
    /// Someone else wrote in the session since the loop started.
    TookOver,
}

/// A step's claim to act on the store alone: the stream's gap count before the send, and the
/// REST read made while the turn runs.
pub(super) struct Continuity {
    gaps: u64,
    check: JoinHandle<Result<Checked>>,
}

impl Continuity {
    /// Notes the stream's state before a prompt is sent: `None` when the core is not in sync
    /// (a resync may be under way), so that the step reconciles after the reply.
    pub(super) fn before_send(core: &Core) -> Option<u64> {
        let gaps = core.stream_gaps();
        matches!(core.connection(), Connection::Ready { .. }).then_some(gaps)
    }

    /// Starts the REST read of `session` once the server shows the prompt `prompt_id` it
    /// accepted (see [`prompt_shown`]).
    pub(super) fn after_send(
        core: &Core,
        gaps: u64,
        (session, prompt_id): (&str, &str),
        ours: HashSet<String>,
        since: i64,
    ) -> Self {
        let (core, session, prompt_id) = (core.clone(), session.to_owned(), prompt_id.to_owned());
        let check = tokio::spawn(async move {
            prompt_shown(&core, &session, &prompt_id).await;
            let page = core
                .client_for(&session)?
                .messages(&session, Some(RECONCILE_PAGE), None)
                .await?;
            let ours: HashSet<&str> = ours.iter().map(String::as_str).collect();
            Ok(
                if super::run::foreign_prompt(&page.messages, &ours, since) {
                    Checked::TookOver
                } else {
                    Checked::Clear
                },
            )
        });
        Self { gaps, check }
    }

    /// Whether the store saw every event since the send (asked once the reply is complete in
    /// the store), and if so what the read said; `None` when the step must reconcile now.
    pub(super) async fn verdict(mut self, core: &Core) -> Option<Checked> {
        if core.stream_gaps() != self.gaps {
            return None;
        }
        match (&mut self.check).await {
            Ok(Ok(checked)) => Some(checked),
            Ok(Err(e)) => {
                tracing::debug!("the loop's read during the turn failed: {e}");
                None
            }
            Err(_) => None,
        }
    }
}

/// The longest a step's work beside the turn waits for the server to show the prompt.
const SHOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits until the store shows the user message `prompt_id` in `session` (the server created
/// it), or [`SHOWN_WAIT`]: the server accepts a prompt before it creates its message, and a
/// request or a process started in between competes with that for the machine.
pub(super) async fn prompt_shown(core: &Core, session: &str, prompt_id: &str) {
    let shown = |core: &Core| {
        core.read_store(|s, _| {
            s.transcript(session)
                .is_some_and(|t| t.message(prompt_id).is_some())
        })
    };
    let _ = crate::turn::wait_for(
        core,
        |change| {
            matches!(change, crate::api_types::Change::MessageUpserted { info } if info.id == prompt_id)
        },
        |_| shown(core).then_some(()),
        Some(tokio::time::Instant::now() + SHOWN_WAIT),
        None,
    )
    .await;
}

impl Drop for Continuity {
    fn drop(&mut self) {
        self.check.abort();
    }
}
