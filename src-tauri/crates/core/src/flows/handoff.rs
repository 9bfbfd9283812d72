//! The review handoff: ask the implementing session for a handoff (visible request plus
//! hidden instructions), wait on the event stream for that turn to complete, then create or
//! reuse the one review session linked to it, send it the review prompt, and open its tab.
//!
//! The wait ends at once when the turn fails (also up front, with only a `session.error`), when
//! the implementing session is deleted, on Cancel, and at the time limit (which aborts the
//! turn, as Cancel does). A Cancel is honoured between every step, up to sending the review.

use std::panic::AssertUnwindSafe;

use crosscheck_opencode::{ModelRef, PromptRequest, Session, TextPartInput, ids};
use futures_util::FutureExt;
use tokio::sync::{broadcast, watch};

use super::reply::{interrupted, reply_outcome};
use super::review_link::create_or_reuse_review_session;
use super::{FlowState, FlowStep, Started, now_ms};
use crate::api_types::{Change, ModelChoice, NoticeLevel};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::prompts;
use crate::settings::Tab;

/// How often progress (streamed characters) is pushed while waiting, at most.
const PROGRESS_EVERY_MS: i64 = 250;

/// Starts a handoff flow in the background; returns its first state, or the state of the
/// session's flow that already runs.
pub fn start(
    core: &Core,
    session_id: &str,
    choice: Option<ModelChoice>,
    reviewer: Option<ModelChoice>,
) -> Result<FlowState> {
    let started = core.flows().start_or_running(session_id, || FlowState {
        id: ids::ascending("flw"),
        session_id: session_id.to_owned(),
        review_session_id: None,
        step: FlowStep::RequestingHandoff,
        started_at: now_ms(),
        deadline: None,
        streamed_chars: 0,
        error: None,
        reused: false,
        ended: false,
    });
    let (state, cancel) = match started {
        Started::Running(running) => return Ok(running),
        Started::New(state, cancel) => (state, cancel),
    };
    core.emit(Change::Flow {
        flow: state.clone(),
    });
    let mut flow = Flow {
        core: core.clone(),
        state: state.clone(),
        cancel,
    };
    core.push_task(tokio::spawn(async move {
        let outcome = supervised(flow.run(choice, reviewer)).await;
        flow.finish(outcome);
    }));
    Ok(state)
}

/// Runs a flow's work, turning a panic into an error so the flow still ends (and does not
/// block its session's next handoff).
pub(crate) async fn supervised(work: impl std::future::Future<Output = Result<()>>) -> Result<()> {
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!("a flow panicked: {what}");
            Err(Error::Internal(format!(
                "the flow stopped unexpectedly: {what}"
            )))
        }
    }
}

struct Flow {
    core: Core,
    state: FlowState,
    cancel: watch::Receiver<bool>,
}

impl Flow {
    fn step(&mut self, step: FlowStep) {
        self.state.step = step;
        self.publish();
    }

    fn publish(&mut self) {
        self.state.ended = self.state.step.is_final();
        self.core.flows().update(&self.state);
        self.core.emit(Change::Flow {
            flow: self.state.clone(),
        });
    }

    /// Ends the flow with `Cancelled` when a Cancel came in since the last step.
    fn check_cancel(&self) -> Result<()> {
        if *self.cancel.borrow() {
            return Err(Error::Cancelled);
        }
        Ok(())
    }

    fn finish(&mut self, outcome: Result<()>) {
        match outcome {
            Ok(()) => {
                self.state.step = FlowStep::Done;
                let code = if self.state.reused {
                    "notice.reviewReused"
                } else {
                    "notice.reviewStarted"
                };
                self.core.notice(
                    NoticeLevel::Success,
                    code,
                    &[],
                    "The review session has the handoff.".into(),
                );
            }
            Err(Error::Cancelled) => self.state.step = FlowStep::Cancelled,
            Err(e) => {
                tracing::warn!(flow = %self.state.id, "handoff failed: {e}");
                self.state.step = FlowStep::Failed;
                self.state.error = Some(e.to_api());
                self.core.notice(
                    NoticeLevel::Error,
                    "notice.handoffFailed",
                    &[("code", &e.code().as_str()), ("message", &e.to_string())],
                    format!("Review handoff failed: {e}"),
                );
            }
        }
        self.publish();
    }

    async fn run(
        &mut self,
        choice: Option<ModelChoice>,
        reviewer: Option<ModelChoice>,
    ) -> Result<()> {
        let core = self.core.clone();
        let original = core.session(&self.state.session_id).await?;
        let choice = match choice {
            Some(c) => c,
            None => current_choice(&core, &original),
        };
        let client = core.client()?;

        // Follow the transcript so the reply lands in the store; subscribe before sending.
        let _follow = Follow::new(&core, &original.id).await?;
        self.check_cancel()?;
        let mut changes = core.subscribe();
        let handoff_id = ids::message_id();
        let registry = core
            .inner
            .prompts
            .read()
            .map_err(|_| Error::Internal("prompts lock".into()))?
            .clone();
        let visible = registry.render(prompts::REVIEW_HANDOFF_VISIBLE, &[])?;
        let instructions = registry.render(prompts::REVIEW_HANDOFF_INSTRUCTIONS, &[])?;
        // An error recorded after this one belongs to the turn about to start.
        let errors_before = core.read_store(|s, _| s.session_error_serial(&original.id));
        client
            .prompt_async(
                &original.id,
                &PromptRequest {
                    message_id: Some(handoff_id.clone()),
                    parts: vec![
                        TextPartInput::visible(visible),
                        TextPartInput::synthetic(instructions),
                    ],
                    model: choice.model.clone(),
                    agent: choice.agent.clone(),
                    variant: choice.variant.clone(),
                },
            )
            .await?;

        let timeout_ms = core.settings().handoff_timeout();
        self.state.deadline = Some(now_ms() + timeout_ms as i64);
        self.step(FlowStep::WaitingForHandoff);
        let handoff = self
            .wait_for_reply(&mut changes, &handoff_id, errors_before, timeout_ms)
            .await?;

        self.check_cancel()?;
        self.step(FlowStep::PreparingReviewSession);
        let (review, reused) = create_or_reuse_review_session(&core, &original.id).await?;
        self.state.review_session_id = Some(review.id.clone());
        self.state.reused = reused;
        self.check_cancel()?;
        self.step(FlowStep::SendingReview);

        let prompt = registry.render(prompts::REVIEW_SESSION_VISIBLE, &[("handoff", &handoff)])?;
        let reviewer = reviewer.unwrap_or(choice);
        self.check_cancel()?;
        client
            .prompt_async(
                &review.id,
                &PromptRequest {
                    message_id: Some(ids::message_id()),
                    parts: vec![TextPartInput::visible(prompt)],
                    model: reviewer.model,
                    agent: reviewer.agent,
                    variant: reviewer.variant,
                },
            )
            .await?;
        crate::requests::settings::show_tab(
            &core,
            Tab::session(&review.id, &review.directory, &review.title),
        )?;
        Ok(())
    }

    /// Aborts the implementer's running turn (on Cancel and on time-out).
    async fn abort_turn(&self) {
        if let Ok(client) = self.core.client()
            && let Err(e) = client.abort(&self.state.session_id).await
        {
            tracing::warn!(flow = %self.state.id, "could not abort the handoff turn: {e}");
        }
    }

    /// Waits, driven by the change stream, for the assistant reply to `message_id` to complete.
    async fn wait_for_reply(
        &mut self,
        changes: &mut broadcast::Receiver<crate::api_types::Stamped>,
        message_id: &str,
        errors_before: u64,
        timeout_ms: u64,
    ) -> Result<String> {
        let session_id = self.state.session_id.clone();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        let mut last_progress = 0i64;
        // Re-read the store only after changes that can end this turn, not on every delta of
        // every session.
        let mut recheck = true;
        loop {
            if recheck {
                match self
                    .core
                    .read_store(|s, _| turn_state(s, &session_id, message_id, errors_before))
                {
                    TurnState::Running => {}
                    TurnState::Ended(outcome) => return outcome,
                    TurnState::Unlisted => {
                        // Removed, or missing from a reloaded list: ask the server. Only its
                        // "not found" ends the flow; when it cannot tell now, keep waiting.
                        if let Err(Error::SessionNotFound(_)) = self.core.session(&session_id).await
                        {
                            return Err(Error::HandoffFailed(
                                "the implementing session was deleted".into(),
                            ));
                        }
                    }
                }
            }
            tokio::select! {
                received = changes.recv() => match received {
                    Ok(stamped) => {
                        recheck = may_end_turn(&stamped.change, &session_id);
                        let reloaded = matches!(&stamped.change, Change::TranscriptReset { page } if page.session_id == session_id);
                        if reloaded && self.core.read_store(|s, _| interrupted(s, &session_id, message_id)) {
                            return Err(Error::HandoffFailed(
                                "the server restarted before the handoff was finished".into(),
                            ));
                        }
                        if let Change::PartDelta { session_id: sid, delta, .. } = &stamped.change
                            && *sid == session_id
                        {
                            self.state.streamed_chars += delta.chars().count() as u64;
                            let now = now_ms();
                            if now - last_progress >= PROGRESS_EVERY_MS {
                                last_progress = now;
                                self.publish();
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => recheck = true,
                    Err(broadcast::error::RecvError::Closed) => return Err(Error::Internal("change stream closed".into())),
                },
                _ = tokio::time::sleep_until(deadline) => {
                    self.abort_turn().await;
                    return Err(Error::HandoffTimeout(timeout_ms / 1000));
                }
                _ = self.cancel.changed() => {
                    self.abort_turn().await;
                    return Err(Error::Cancelled);
                }
            }
        }
    }
}

/// Where the awaited turn is, as the store says.
enum TurnState {
    Running,
    Ended(Result<String>),
    /// The session is not in the store's list (a reload did not list it).
    Unlisted,
}

fn turn_state(
    store: &crate::store::Store,
    session_id: &str,
    message_id: &str,
    errors_before: u64,
) -> TurnState {
    if store.session(session_id).is_none() {
        return TurnState::Unlisted;
    }
    if store.session_error_serial(session_id) > errors_before
        && let Some(error) = store.session_error(session_id)
    {
        return TurnState::Ended(Err(Error::HandoffFailed(error.message.clone())));
    }
    match reply_outcome(store, session_id, message_id) {
        Some(outcome) => TurnState::Ended(outcome),
        None => TurnState::Running,
    }
}

/// Whether a change can end a turn of `session_id` (a status, a message or part snapshot, an
/// error, the session's removal, or a reload); streamed deltas cannot.
fn may_end_turn(change: &Change, session_id: &str) -> bool {
    match change {
        Change::Status {
            session_id: sid, ..
        }
        | Change::SessionError {
            session_id: sid, ..
        }
        | Change::SessionRemoved { session_id: sid } => sid == session_id,
        Change::MessageUpserted { info } => info.session_id == session_id,
        Change::PartUpserted { part } => part.session_id == session_id,
        Change::TranscriptReset { page } => page.session_id == session_id,
        Change::SessionsReset { .. } => true,
        _ => false,
    }
}

/// Keeps a transcript followed for the life of the guard.
pub(crate) struct Follow {
    core: Core,
    session_id: String,
    follower: String,
}

impl Follow {
    /// Follows `session_id`, loading its newest page when nobody follows it yet.
    pub(crate) async fn new(core: &Core, session_id: &str) -> Result<Follow> {
        let follower = format!("flow:{}", crosscheck_opencode::ids::ascending("flw"));
        crate::requests::transcripts::follow_transcript(core, session_id, &follower).await?;
        Ok(Follow {
            core: core.clone(),
            session_id: session_id.to_owned(),
            follower,
        })
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.core.with_store(|s| {
            s.unfollow(&self.session_id, &self.follower);
            ((), None)
        });
    }
}

/// The model, agent and variant a session is using: its last user message's, else the session's.
pub(crate) fn current_choice(core: &Core, session: &Session) -> ModelChoice {
    let from_transcript = core.read_store(|s, _| {
        s.transcript(&session.id).and_then(|t| {
            t.messages()
                .iter()
                .rev()
                .find(|m| m.info.role == "user")
                .map(|m| ModelChoice {
                    model: m.info.model.clone(),
                    agent: m.info.agent.clone(),
                    variant: m.info.variant.clone(),
                })
        })
    });
    from_transcript.unwrap_or_else(|| ModelChoice {
        model: session
            .model
            .as_ref()
            .filter(|m| !m.id.is_empty())
            .map(|m| ModelRef {
                provider_id: m.provider_id.clone(),
                model_id: m.id.clone(),
            }),
        agent: session.agent.clone(),
        variant: session
            .model
            .as_ref()
            .and_then(|m| m.variant.clone())
            .filter(|v| v != "default"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_flow_ends_with_an_error() {
        let outcome = supervised(async {
            let parts: Vec<&str> = Vec::new();
            // Index out of bounds, as a bug would.
            let _ = parts[3];
            Ok(())
        })
        .await;
        let Err(Error::Internal(message)) = outcome else {
            panic!("a panic must become an internal error: {outcome:?}");
        };
        assert!(message.contains("index out of bounds"), "{message}");
        assert!(supervised(async { Ok(()) }).await.is_ok());
    }

    #[test]
    fn a_flow_that_ended_does_not_block_the_next_start() {
        let registry = super::super::FlowRegistry::default();
        let state = |id: &str| FlowState {
            id: id.into(),
            session_id: "ses_a".into(),
            review_session_id: None,
            step: FlowStep::RequestingHandoff,
            started_at: 1,
            deadline: None,
            streamed_chars: 0,
            error: None,
            reused: false,
            ended: false,
        };
        let Started::New(mut first, _cancel) =
            registry.start_or_running("ses_a", || state("flw_1"))
        else {
            panic!("the first start makes a flow");
        };
        assert!(matches!(
            registry.start_or_running("ses_a", || state("flw_2")),
            Started::Running(ref s) if s.id == "flw_1"
        ));
        first.step = FlowStep::Failed;
        registry.update(&first);
        assert!(matches!(
            registry.start_or_running("ses_a", || state("flw_3")),
            Started::New(ref s, _) if s.id == "flw_3"
        ));
    }
}
