//! The review handoff: ask the implementing session for a handoff (visible request plus
//! hidden instructions), wait on the event stream for that turn to complete, then create or
//! reuse the one review session linked to it, send it the review prompt, and open its tab.

use crosscheck_opencode::{CreateSession, ModelRef, PromptRequest, Session, TextPartInput, ids};
use tokio::sync::{broadcast, watch};

use super::patch::patch_session_metadata;
use super::{FlowState, FlowStep, now_ms};
use crate::api_types::{Change, ModelChoice, NoticeLevel};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::{
    get_review_session_id, is_review_session, with_review_session_link, with_review_session_marker,
    without_any_review_session_link,
};
use crate::prompts;
use crate::settings::Tab;
use crate::store::assistant_text;

/// How often progress (streamed characters) is pushed while waiting, at most.
const PROGRESS_EVERY_MS: i64 = 250;

/// Starts a handoff flow in the background; returns its first state.
pub fn start(
    core: &Core,
    session_id: &str,
    choice: Option<ModelChoice>,
    reviewer: Option<ModelChoice>,
) -> Result<FlowState> {
    if let Some(running) = core.flows().running_for(session_id) {
        return Ok(running);
    }
    let state = FlowState {
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
    };
    let cancel = core.flows().insert(state.clone());
    core.emit(Change::Flow {
        flow: state.clone(),
    });
    let mut flow = Flow {
        core: core.clone(),
        state: state.clone(),
        cancel,
    };
    core.push_task(tokio::spawn(async move {
        let outcome = flow.run(choice, reviewer).await;
        flow.finish(outcome);
    }));
    Ok(state)
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

        let timeout_ms = core.settings().handoff_timeout_ms;
        self.state.deadline = Some(now_ms() + timeout_ms as i64);
        self.step(FlowStep::WaitingForHandoff);
        let handoff = self
            .wait_for_reply(&mut changes, &handoff_id, timeout_ms)
            .await?;

        self.step(FlowStep::PreparingReviewSession);
        let (review, reused) = create_or_reuse_review_session(&core, &original.id).await?;
        self.state.review_session_id = Some(review.id.clone());
        self.state.reused = reused;
        self.step(FlowStep::SendingReview);

        let prompt = registry.render(prompts::REVIEW_SESSION_VISIBLE, &[("handoff", &handoff)])?;
        let reviewer = reviewer.unwrap_or(choice);
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

    /// Waits, driven by the change stream, for the assistant reply to `message_id` to complete.
    async fn wait_for_reply(
        &mut self,
        changes: &mut broadcast::Receiver<crate::api_types::Stamped>,
        message_id: &str,
        timeout_ms: u64,
    ) -> Result<String> {
        let session_id = self.state.session_id.clone();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        let mut last_progress = 0i64;
        // Re-read the store only after changes that can end this turn, not on every delta of
        // every session.
        let mut recheck = true;
        loop {
            if recheck
                && let Some(outcome) = self
                    .core
                    .read_store(|s, _| reply_outcome(s, &session_id, message_id))
            {
                return outcome;
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
                _ = tokio::time::sleep_until(deadline) => return Err(Error::HandoffTimeout(timeout_ms / 1000)),
                _ = self.cancel.changed() => {
                    if let Ok(client) = self.core.client() {
                        let _ = client.abort(&session_id).await;
                    }
                    return Err(Error::Cancelled);
                }
            }
        }
    }
}

/// Whether a change can end a turn of `session_id` (a status, a message or part snapshot, or
/// a reload); streamed deltas cannot.
fn may_end_turn(change: &Change, session_id: &str) -> bool {
    match change {
        Change::Status {
            session_id: sid, ..
        } => sid == session_id,
        Change::MessageUpserted { info } => info.session_id == session_id,
        Change::PartUpserted { part } => part.session_id == session_id,
        Change::TranscriptReset { page } => page.session_id == session_id,
        Change::SessionsReset { .. } => true,
        _ => false,
    }
}

/// Whether the turn answering `message_id` has ended, and how: `None` while it runs.
/// It has ended when the session is idle and an assistant message answering it is complete.
pub(crate) fn reply_outcome(
    store: &crate::store::Store,
    session_id: &str,
    message_id: &str,
) -> Option<Result<String>> {
    let transcript = store.transcript(session_id)?;
    let replies: Vec<_> = transcript
        .messages()
        .iter()
        .rev()
        .take_while(|m| {
            m.info.id.as_str() > message_id || m.info.parent_id.as_deref() == Some(message_id)
        })
        .filter(|m| m.info.role == "assistant" && m.info.parent_id.as_deref() == Some(message_id))
        .collect();
    if let Some(failed) = replies.iter().find(|m| m.info.error.is_some()) {
        let error = failed.info.error.as_ref()?;
        let name = error
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        if name == "MessageAbortedError" {
            return Some(Err(Error::HandoffAborted));
        }
        let message = error
            .get("data")
            .and_then(|d| d.get("message"))
            .and_then(|v| v.as_str())
            .unwrap_or(if name.is_empty() {
                "unknown error"
            } else {
                name
            });
        return Some(Err(Error::HandoffFailed(message.to_owned())));
    }
    let newest = replies.first()?;
    if !newest.info.is_completed_assistant() || !store.status(session_id).is_idle() {
        return None;
    }
    let text = replies
        .iter()
        .map(|m| assistant_text(m))
        .find(|t| !t.is_empty());
    Some(text.ok_or(Error::NoAssistantText))
}

/// After its transcript was reloaded: whether the turn answering `message_id` was cut off (the server restarted
/// mid-turn, so its reply will never complete while the session reads idle).
fn interrupted(store: &crate::store::Store, session_id: &str, message_id: &str) -> bool {
    if !store.status(session_id).is_idle() {
        return false;
    }
    let Some(t) = store.transcript(session_id) else {
        return false;
    };
    t.messages()
        .iter()
        .rev()
        .find(|m| m.info.role == "assistant" && m.info.parent_id.as_deref() == Some(message_id))
        .is_some_and(|m| !m.info.is_completed_assistant())
}

/// Keeps a transcript followed for the life of the guard.
pub(crate) struct Follow {
    core: Core,
    session_id: String,
}

impl Follow {
    /// Follows `session_id`, loading its newest page when nobody follows it yet.
    pub(crate) async fn new(core: &Core, session_id: &str) -> Result<Follow> {
        crate::requests::transcripts::follow_transcript(core, session_id).await?;
        Ok(Follow {
            core: core.clone(),
            session_id: session_id.to_owned(),
        })
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.core.with_store(|s| {
            s.unfollow(&self.session_id);
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

/// Finds the original's review session, reusing it when it still exists, clearing a stale link
/// and creating a fresh one otherwise. A new session is removed again if linking fails.
pub async fn create_or_reuse_review_session(
    core: &Core,
    original_id: &str,
) -> Result<(Session, bool)> {
    let client = core.client()?;
    let original = core.session(original_id).await?;
    if let Some(review_id) = get_review_session_id(&original) {
        match core.session(review_id).await {
            Ok(review) if is_review_session(&review) => return Ok((review, true)),
            Ok(_) | Err(Error::SessionNotFound(_)) => {
                patch_session_metadata(core, original_id, without_any_review_session_link).await?;
            }
            Err(e) => return Err(e),
        }
    }
    let review = client
        .create_session(
            &original.directory,
            &CreateSession {
                title: Some(format!("Review: {}", original.title)),
                parent_id: None,
                metadata: Some(with_review_session_marker(None, original_id)),
            },
        )
        .await?;
    core.with_store(|s| ((), Some(s.upsert_session(review.clone()))));
    let linked = patch_session_metadata(core, original_id, |m| {
        Some(with_review_session_link(m, &review.id))
    })
    .await;
    if let Err(link_error) = linked {
        let cleanup = client.delete_session(&review.id).await;
        if cleanup.is_ok() {
            core.with_store(|s| ((), Some(s.remove_session(&review.id))));
        }
        let detail = match cleanup {
            Ok(()) => link_error.to_string(),
            Err(e) => format!("{link_error}; removing the new review session also failed: {e}"),
        };
        return Err(Error::ReviewLinkFailed(detail));
    }
    Ok((review, false))
}
