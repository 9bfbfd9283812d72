//! The review handoff: ask the implementing session for a handoff (visible request plus
//! hidden instructions), wait on the event stream for that turn to complete, then create or
//! reuse the one review session linked to it, send it the review prompt, and open its tab.
//!
//! Before the request goes out, the handoff claims the implementing session on its server
//! ([`super::claim`]): of two Crosscheck processes starting the same handoff at once, the one
//! whose claim does not stand sends nothing; it waits for the other's handoff to end and then
//! shows its review session. The claim is released when the flow ends, however it ends.
//!
//! The wait ends at once when the turn fails (also up front, with only a `session.error`), when
//! the implementing session is deleted, on Cancel, and at the time limit (which aborts the
//! turn, as Cancel does). A Cancel is honoured between every step, up to sending the review.

use std::panic::AssertUnwindSafe;

use crosscheck_opencode::{Session, TextPartInput, ids};
use futures_util::FutureExt;
use tokio::sync::watch;

use super::claim::{self, Claim, ClaimEntry, Claimed};
use super::review_link::{Prepared, create_or_reuse_review_session, replace_gone_review_session};
use super::{FlowState, FlowStep, Started, now_ms};
use crate::api_types::{Change, ModelChoice, NoticeLevel};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::prompts;
use crate::settings::Tab;
use crate::turn::{
    self, Delivery, Follow, Prompt, TurnEnd, TurnWait, Waited, current_choice, wait_for,
};

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
        calls_without_text: 0,
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
        claim: None,
        elsewhere: false,
    };
    core.push_task(tokio::spawn(async move {
        let outcome = supervised(flow.run(choice, reviewer, review_loop)).await;
        flow.finish(outcome).await;
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
    /// This flow's claim on the implementing session, released when it ends.
    claim: Option<Claim>,
    /// Another process ran this handoff; this flow only followed it.
    elsewhere: bool,
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

    async fn finish(&mut self, outcome: Result<()>) {
        // Released before the end is published: whoever sees the flow ended sees no claim.
        if let Some(claim) = self.claim.take() {
            claim.release(&self.core).await;
        }
        match outcome {
            Ok(()) => {
                self.state.step = FlowStep::Done;
                let (code, message) = if self.elsewhere {
                    (
                        "notice.reviewElsewhere",
                        "The handoff ran in another window; its review session is open here.",
                    )
                } else if self.state.reused {
                    ("notice.reviewReused", "The review session has the handoff.")
                } else {
                    (
                        "notice.reviewStarted",
                        "The review session has the handoff.",
                    )
                };
                self.core
                    .notice(NoticeLevel::Success, code, &[], message.into());
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
        core.client_for(&self.state.session_id)?;

        // Follow the transcript so the reply lands in the store.
        let _follow = Follow::new(&core, &original.id).await?;
        self.check_cancel()?;
        // One process of those starting this handoff now sends it; the others follow it.
        match claim::acquire(&core, &original.id, claim::HANDOFF).await? {
            Claimed::Ours(held) => self.claim = Some(held),
            Claimed::Theirs(theirs) => return self.follow_elsewhere(&original.id, theirs).await,
        }
        self.check_cancel()?;
        let handoff_id = ids::message_id();
        let registry = core.prompts();
        let visible = registry.render(prompts::REVIEW_HANDOFF_VISIBLE, &[])?;
        let instructions = registry.render(prompts::REVIEW_HANDOFF_INSTRUCTIONS, &[])?;
        // An error recorded after this one belongs to the turn about to start.
        let errors_before = core.read_store(|s, _| s.session_error_serial(&original.id));
        turn::send(
            &core,
            &Prompt {
                session_id: original.id.clone(),
                message_id: handoff_id.clone(),
                parts: vec![
                    TextPartInput::visible(visible),
                    TextPartInput::synthetic(instructions),
                ],
                choice: choice.clone(),
            },
            Delivery::Fresh,
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
        let prepare = prepare_when_alive(&core, &original.id, &handoff_id, ended_rx);
        let wait = async {
            let outcome = self
                .wait_for_reply(&handoff_id, errors_before, timeout_ms)
                .await;
            let _ = ended_tx.send(true);
            if outcome.is_ok() {
                // Shown while the preparation, when it is slower than the turn, finishes.
                self.step(FlowStep::PreparingReviewSession);
            }
            outcome
        };
        let (handoff, prepared) = tokio::join!(wait, prepare);
        if let Some(Ok(Prepared::Created(review))) = &prepared {
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
    /// ended before it could be), then opens its tab. A process that lost the race to link the
    /// review session stops here: the winner sends the review. A review session deleted since
    /// it was picked is unlinked and replaced by a new one.
    async fn send_review(
        &mut self,
        registry: &prompts::Registry,
        original: &Session,
        prepared: Option<Result<Prepared>>,
        handoff: String,
        (choice, reviewer): (ModelChoice, Option<ModelChoice>),
        review_loop: Option<super::review_loop::LoopOptions>,
    ) -> Result<()> {
        let core = self.core.clone();
        let mut prepared = match prepared {
            Some(prepared) => prepared?,
            None => {
                self.check_cancel()?;
                self.step(FlowStep::PreparingReviewSession);
                create_or_reuse_review_session(&core, &original.id).await?
            }
        };
        if let Prepared::Created(review) = &prepared {
            self.created_review = Some(review.id.clone());
        }
        self.check_cancel()?;
        let prompt = registry.render(prompts::REVIEW_SESSION_VISIBLE, &[("handoff", &handoff)])?;
        let findings_instructions = super::review_loop::hidden::for_reviewer(registry, &[], &[])?;
        let review_prompt_id = ids::message_id();
        let reviewer = reviewer.unwrap_or(choice);
        let (review, mark) = loop {
            let review = prepared.session().clone();
            self.state.review_session_id = Some(review.id.clone());
            self.state.reused = !matches!(prepared, Prepared::Created(_));
            if let Prepared::LostRace(_) = prepared {
                // Another process linked its review session first and sends it the review.
                tracing::info!(
                    original = %original.id,
                    "another process linked the review session first; it sends the review"
                );
                return Ok(());
            }
            self.step(FlowStep::SendingReview);
            let mark = super::review_loop::stream_mark(&core);
            let sent = turn::send(
                &core,
                &Prompt {
                    session_id: review.id.clone(),
                    message_id: review_prompt_id.clone(),
                    parts: turn::with_hidden(prompt.clone(), findings_instructions.clone()),
                    choice: reviewer.clone(),
                },
                Delivery::Fresh,
            )
            .await;
            match sent {
                Ok(()) => break (review, mark),
                Err(e) if turn::is_gone(&e) && !matches!(prepared, Prepared::Created(_)) => {
                    // Deleted since it was picked: unlink it and make a new one.
                    self.check_cancel()?;
                    self.step(FlowStep::PreparingReviewSession);
                    prepared = replace_gone_review_session(&core, &original.id, &review.id).await?;
                    if let Prepared::Created(review) = &prepared {
                        self.created_review = Some(review.id.clone());
                    }
                }
                Err(e) => return Err(e),
            }
        };
        // Sent: from here on the review session is the handoff's result, kept whatever happens.
        self.created_review = None;
        crate::services::tabs::show_partner_tab(
            &core,
            &original.id,
            Tab::session(&review.id, &review.directory, &review.title),
        )?;
        if let Some(options) = review_loop {
            super::review_loop::start_after_handoff(
                &core,
                &original.id,
                &review.id,
                &review_prompt_id,
                options,
                mark,
            )
            .await?;
        }
        Ok(())
    }

    /// Follows a handoff of this session that another process holds the claim for: waits until
    /// that claim is released (or lapses), then shows the review session it sent the review to.
    /// Fails when that handoff ended without sending a review; Cancel stops only the waiting.
    async fn follow_elsewhere(&mut self, original_id: &str, mut theirs: ClaimEntry) -> Result<()> {
        tracing::info!(
            original = original_id,
            "another process runs this handoff; following it instead of sending it again"
        );
        self.elsewhere = true;
        let core = self.core.clone();
        let timeout_ms = core.settings().handoff_timeout();
        self.state.deadline = Some(now_ms() + timeout_ms as i64);
        self.step(FlowStep::RunningElsewhere);
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        loop {
            // Until it is released (seen on the event stream) or its expiry passes unrenewed.
            let lapses = std::time::Duration::from_millis(
                u64::try_from(theirs.expires_at - now_ms()).unwrap_or(0) + 500,
            );
            let until = deadline.min(tokio::time::Instant::now() + lapses);
            let token = theirs.token.clone();
            let waited = wait_for(
                &core,
                |change| {
                    matches!(change, Change::SessionUpserted { session } if session.session.id == original_id)
                },
                |_| {
                    core.read_store(|s, _| {
                        let session = s.session(original_id)?;
                        let holder =
                            claim::live_claim(session.metadata.as_ref(), claim::HANDOFF, now_ms());
                        (holder.map(|c| c.token) != Some(token.clone())).then_some(())
                    })
                },
                Some(until),
                Some(self.cancel.clone()),
            )
            .await?;
            if matches!(waited, Waited::Cancelled) {
                return Err(Error::Cancelled);
            }
            let session = core.session(original_id).await?;
            match claim::live_claim(session.metadata.as_ref(), claim::HANDOFF, now_ms()) {
                Some(_) if tokio::time::Instant::now() >= deadline => {
                    return Err(Error::HandoffTimeout(timeout_ms / 1000));
                }
                // Renewed, or taken by yet another process: keep following.
                Some(next) => theirs = next,
                None => break,
            }
        }
        let review = self
            .review_sent_elsewhere(original_id)
            .await?
            .ok_or_else(|| {
                Error::HandoffFailed(
                    "the handoff running in another window ended without sending the review".into(),
                )
            })?;
        self.state.review_session_id = Some(review.id.clone());
        self.state.reused = true;
        crate::services::tabs::show_partner_tab(
            &core,
            original_id,
            Tab::session(&review.id, &review.directory, &review.title),
        )?;
        Ok(())
    }

    /// The review session linked from the original, when it is a valid one that received a
    /// prompt since shortly before this flow started (the other process's review).
    async fn review_sent_elsewhere(&self, original_id: &str) -> Result<Option<Session>> {
        let core = &self.core;
        let original = core.session(original_id).await?;
        let Some(linked) = crate::metadata::get_review_session_id(&original) else {
            return Ok(None);
        };
        let review = match core.session(linked).await {
            Ok(r) if crate::metadata::is_review_of(&r, original_id) => r,
            Ok(_) | Err(Error::SessionNotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let since = self.state.started_at - claim::TTL.as_millis() as i64;
        let page = core
            .client_for(&review.id)?
            .messages(&review.id, Some(5), None)
            .await?;
        let prompted = page
            .messages
            .iter()
            .any(|m| m.info.role == "user" && m.info.time.created >= since);
        Ok(prompted.then_some(review))
    }

    /// Waits (in the turn room) for the assistant reply to `message_id` to complete, pushing
    /// progress as it streams; on Cancel and at the time limit the turn is aborted.
    async fn wait_for_reply(
        &mut self,
        message_id: &str,
        errors_before: u64,
        timeout_ms: u64,
    ) -> Result<String> {
        let session_id = self.state.session_id.clone();
        let core = self.core.clone();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        let end = turn::await_turn(
            &core,
            TurnWait {
                session_id: &session_id,
                prompt_id: message_id,
                errors_before,
                deadline: Some(deadline),
                cancel: Some(self.cancel.clone()),
            },
            |progress| {
                self.state.streamed_chars = progress.streamed_chars;
                self.state.calls_without_text = progress.calls_without_text;
                self.publish();
            },
        )
        .await?;
        match end {
            TurnEnd::Completed { text, .. } if text.is_empty() => Err(Error::NoAssistantText),
            TurnEnd::Completed { text, .. } => Ok(text),
            TurnEnd::Failed(words) => Err(Error::HandoffFailed(words)),
            TurnEnd::Aborted => Err(Error::HandoffAborted),
            TurnEnd::SessionDeleted => Err(Error::HandoffFailed(
                "the implementing session was deleted".into(),
            )),
            TurnEnd::Interrupted => Err(Error::HandoffFailed(
                "the server restarted before the handoff was finished".into(),
            )),
            TurnEnd::Cancelled => Err(Error::Cancelled),
            TurnEnd::TimedOut => Err(Error::HandoffTimeout(timeout_ms / 1000)),
        }
    }
}

/// Finds or creates and links the review session once the handoff turn shows its first sign of
/// life (its assistant message). `None` when the turn ended first: nothing was started.
async fn prepare_when_alive(
    core: &Core,
    original_id: &str,
    handoff_id: &str,
    ended: watch::Receiver<bool>,
) -> Option<Result<Prepared>> {
    let alive = wait_for(
        core,
        |change| {
            matches!(change, Change::MessageUpserted { info }
                if info.session_id == original_id
                    && info.role == "assistant"
                    && info.parent_id.as_deref() == Some(handoff_id))
        },
        |_| {
            core.read_store(|s, _| answer_started(s, original_id, handoff_id))
                .then_some(())
        },
        None,
        Some(ended),
    )
    .await;
    match alive {
        Ok(Waited::Done(())) => Some(create_or_reuse_review_session(core, original_id).await),
        Ok(Waited::Cancelled | Waited::TimedOut) | Err(_) => None,
    }
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
    match core.client_for(review_id) {
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
            calls_without_text: 0,
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
