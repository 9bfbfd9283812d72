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
    review_loop: Option<super::review_loop::LoopOptions>,
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
        created_review: None,
    };
    core.push_task(tokio::spawn(async move {
        let outcome = supervised(flow.run(choice, reviewer, review_loop)).await;
        flow.finish(outcome);
    }));
    Ok(state)
}

/// Runs a flow's work, turning a panic into an error so the flow still ends (and does not
/// block its session's next handoff).
pub(crate) async fn supervised<T>(work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
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
    /// A review session this flow created and has not sent the review yet: removed (and
    /// unlinked) again when the handoff fails.
    created_review: Option<String>,
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
        review_loop: Option<super::review_loop::LoopOptions>,
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
        let registry = core.prompts();
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

        // The review session is found or created and linked while the handoff turn runs, so
        // that once the reply completes only the review prompt is left to send. It starts at
        // the turn's first sign of life (its assistant message), so a turn the server refuses
        // up front creates nothing; once started, it always runs to its end (never dropped
        // half-way), and a handoff that fails afterwards removes what it created.
        let (ended_tx, ended_rx) = watch::channel(false);
        let life = core.subscribe();
        let prepare = prepare_when_alive(&core, &original.id, &handoff_id, life, ended_rx);
        let wait = async {
            let outcome = self
                .wait_for_reply(&mut changes, &handoff_id, errors_before, timeout_ms)
                .await;
            let _ = ended_tx.send(true);
            if outcome.is_ok() {
                // Shown while the preparation, when it is slower than the turn, finishes.
                self.step(FlowStep::PreparingReviewSession);
            }
            outcome
        };
        let (handoff, prepared) = tokio::join!(wait, prepare);
        if let Some(Ok((review, false))) = &prepared {
            self.created_review = Some(review.id.clone());
        }
        let outcome = match handoff {
            Ok(handoff) => {
                self.send_review(
                    &registry,
                    &original,
                    prepared,
                    handoff,
                    (choice, reviewer),
                    review_loop,
                )
                .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = &outcome
            && let Some(created) = self.created_review.take()
        {
            undo_review_session(&core, &original.id, &created, e).await;
        }
        outcome
    }

    /// Sends the review prompt to the prepared review session (preparing it now when the turn
    /// ended before it could be), then opens its tab.
    async fn send_review(
        &mut self,
        registry: &prompts::Registry,
        original: &Session,
        prepared: Option<Result<(Session, bool)>>,
        handoff: String,
        (choice, reviewer): (ModelChoice, Option<ModelChoice>),
        review_loop: Option<super::review_loop::LoopOptions>,
    ) -> Result<()> {
        let core = self.core.clone();
        let (review, reused) = match prepared {
            Some(prepared) => prepared?,
            None => {
                self.check_cancel()?;
                self.step(FlowStep::PreparingReviewSession);
                create_or_reuse_review_session(&core, &original.id).await?
            }
        };
        if !reused {
            self.created_review = Some(review.id.clone());
        }
        self.state.review_session_id = Some(review.id.clone());
        self.state.reused = reused;
        self.check_cancel()?;
        let prompt = registry.render(prompts::REVIEW_SESSION_VISIBLE, &[("handoff", &handoff)])?;
        let findings_instructions = super::review_loop::hidden::for_reviewer(registry, &[])?;
        let review_prompt_id = ids::message_id();
        let reviewer = reviewer.unwrap_or(choice);
        self.step(FlowStep::SendingReview);
        core.client()?
            .prompt_async(
                &review.id,
                &PromptRequest {
                    message_id: Some(review_prompt_id.clone()),
                    parts: super::review_loop::hidden::parts(prompt, findings_instructions),
                    model: reviewer.model,
                    agent: reviewer.agent,
                    variant: reviewer.variant,
                },
            )
            .await?;
        // Sent: from here on the review session is the handoff's result, kept whatever happens.
        self.created_review = None;
        crate::services::tabs::show_tab(
            &core,
            Tab::session(&review.id, &review.directory, &review.title),
        )?;
        if let Some(options) = review_loop {
            super::review_loop::start_after_handoff(
                &core,
                &original.id,
                &review.id,
                &review_prompt_id,
                options,
            )?;
        }
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

/// Finds or creates and links the review session once the handoff turn shows its first sign of
/// life (its assistant message). `None` when the turn ended first: nothing was started.
async fn prepare_when_alive(
    core: &Core,
    original_id: &str,
    handoff_id: &str,
    mut changes: broadcast::Receiver<crate::api_types::Stamped>,
    mut ended: watch::Receiver<bool>,
) -> Option<Result<(Session, bool)>> {
    let alive = core.read_store(|s, _| answer_started(s, original_id, handoff_id));
    if !alive {
        loop {
            tokio::select! {
                received = changes.recv() => match received {
                    Ok(stamped) => {
                        if let Change::MessageUpserted { info } = &stamped.change
                            && info.session_id == original_id
                            && info.role == "assistant"
                            && info.parent_id.as_deref() == Some(handoff_id)
                        {
                            break;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        if core.read_store(|s, _| answer_started(s, original_id, handoff_id)) {
                            break;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = ended.changed() => return None,
            }
        }
    }
    drop(changes);
    Some(create_or_reuse_review_session(core, original_id).await)
}

/// Whether the store holds an assistant message answering `handoff_id`.
fn answer_started(store: &crate::store::Store, session_id: &str, handoff_id: &str) -> bool {
    store.transcript(session_id).is_some_and(|t| {
        t.messages()
            .iter()
            .any(|m| m.info.role == "assistant" && m.info.parent_id.as_deref() == Some(handoff_id))
    })
}

/// Removes a review session a failed handoff created: unlinks it from the original first (only
/// while the link still names it), then deletes it. Failures are logged: the handoff's own
/// error is what the user sees.
async fn undo_review_session(core: &Core, original_id: &str, review_id: &str, why: &Error) {
    tracing::info!(
        original = original_id,
        review = review_id,
        "handoff failed ({why}); removing the review session it prepared"
    );
    if let Err(e) = super::patch::patch_session_metadata(core, original_id, |m| {
        crate::metadata::without_review_session_link(m, review_id)
    })
    .await
    {
        tracing::warn!(
            original = original_id,
            "could not unlink the prepared review session: {e}"
        );
    }
    match core.client() {
        Ok(client) => match client.delete_session(review_id).await {
            Ok(()) | Err(crosscheck_opencode::Error::NotFound { .. }) => {
                core.with_store(|s| ((), Some(s.remove_session(review_id))));
            }
            Err(e) => tracing::warn!(
                review = review_id,
                "could not delete the prepared review session: {e}"
            ),
        },
        Err(e) => tracing::warn!(
            review = review_id,
            "could not delete the prepared review session: {e}"
        ),
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
        crate::services::transcripts::follow_transcript(core, session_id, &follower).await?;
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
