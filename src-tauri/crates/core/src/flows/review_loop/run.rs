//! The loop's task: wait (on the change stream) for the awaited turn, reconcile over REST,
//! record, decide, choose the next prompt's id and save it before sending, send, and so on.
//!
//! Every step is written to the loop's record before it acts, so a restart resumes from the
//! last completed step: a prompt whose id is in the record is sent only when the server does
//! not have that id yet, and a reply recorded before is recorded once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use crosscheck_opencode::{MessageWithParts, ids};
use crosscheck_review::findings::Reviewed;
use tokio::sync::watch;

use super::coverage::{self, Coverage};
use super::hidden;
use super::reconcile::{self, Checked, RECONCILE_PAGE};
use super::record::{self, LoopPhase, LoopState, LoopStop, PendingSend, StopReason};
use super::recorder;
use super::rules::{Decision, after_review};
use crate::api_types::{Change, NoticeLevel};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::findings;
use crate::flows::now_ms;
use crate::flows::reply::interrupted;
use crate::model::attention::AttentionKind;
use crate::prompts;
use crate::turn::{self, Delivery, Follow, Prompt, Seen, TurnEnd, current_choice};

/// The stop detail when the user wrote in one of the sessions.
const TOOK_OVER: &str = "you wrote in one of the sessions, so the loop left it to you";

/// A task aborted when its handle is dropped (a step that ends early leaves nothing running).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why waiting ended without a reply.
enum Interrupt {
    Stop(StopReason, String),
}

/// A running loop.
pub(crate) struct LoopTask {
    pub core: Core,
    pub state: LoopState,
    pub stop: watch::Receiver<bool>,
    /// The hot path's marks of the step under way (from the reply seen to the prompt accepted).
    pub timer: Option<super::timing::StepTimer>,
    /// The person's open line comments, read before the reviewer's reply is decided on.
    pub comments: Vec<crate::comments::LineComment>,
    /// The stream mark taken just before the awaited prompt was sent, when this process sent it
    /// (the handoff's review prompt): the first step may then act on the store.
    pub sent_after: Option<u64>,
}

impl LoopTask {
    fn publish(&self) {
        if let Err(e) = record::save(self.core.db(), &self.state) {
            tracing::warn!(loop_id = %self.state.id, "could not save the loop's record: {e}");
        }
        self.core.emit(Change::Loop {
            state: self.state.clone(),
        });
    }

    /// Saves and pushes the state; a record that cannot be saved ends the loop (a restart
    /// could not resume it without sending a step twice).
    fn save(&self) -> Result<()> {
        record::save(self.core.db(), &self.state)?;
        self.core.emit(Change::Loop {
            state: self.state.clone(),
        });
        Ok(())
    }

    /// Ends the loop with `reason`, telling the user.
    pub(crate) fn finish(&mut self, reason: StopReason, detail: String, ids: Vec<String>) {
        self.state.phase = LoopPhase::Stopped;
        self.state.ended = true;
        // Comments that were to go with a prompt never sent wait for the next send again.
        if let Some(pending) = self.state.pending.take()
            && let Err(e) = crate::comments::unforward(self.core.db(), &pending.message_id)
        {
            tracing::warn!(loop_id = %self.state.id, "could not take comments back: {e}");
        }
        self.state.stop = Some(LoopStop {
            reason,
            detail: detail.clone(),
            finding_ids: ids,
            at: now_ms(),
        });
        self.publish();
        let level = if matches!(reason, StopReason::Clean | StopReason::BelowThreshold) {
            NoticeLevel::Success
        } else {
            NoticeLevel::Info
        };
        let reason_key = serde_json::to_value(reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let ids = self
            .state
            .stop
            .as_ref()
            .map(|s| s.finding_ids.join(", "))
            .unwrap_or_default();
        self.core.notice(
            level,
            &format!("notice.loopStopped.{reason_key}"),
            &[
                ("round", &self.state.round.to_string()),
                ("ids", &ids),
                ("detail", &detail),
            ],
            format!("The review loop stopped: {detail}"),
        );
    }

    /// Runs the loop until a stop rule ends it.
    pub(crate) async fn run(&mut self) {
        let outcome = crate::flows::handoff::supervised(self.steps()).await;
        match outcome {
            Ok((reason, detail, ids)) => self.finish(reason, detail, ids),
            Err(Error::SessionNotFound(id)) => self.finish(
                StopReason::SessionGone,
                format!("the session {id} is gone"),
                Vec::new(),
            ),
            Err(Error::NoLinkedSession) => self.finish(
                StopReason::SessionGone,
                "the sessions are no longer linked".into(),
                Vec::new(),
            ),
            Err(e) => self.finish(StopReason::TurnFailed, e.to_string(), Vec::new()),
        }
    }

    async fn steps(&mut self) -> Result<(StopReason, String, Vec<String>)> {
        let core = self.core.clone();
        let _follow_review = Follow::new(&core, &self.state.review_session_id).await?;
        let _follow_original = Follow::new(&core, &self.state.original_session_id).await?;
        // A prompt chosen in this run has not been sent; one found in the record after a
        // restart may have been.
        let mut fresh = false;
        // The first review prompt, sent by the handoff just now: read over REST while its
        // turn runs, as for the loop's own sends.
        let mut first = self.sent_after.take().and_then(|gaps| {
            let awaiting = self.state.awaiting_message_id.as_ref()?;
            (self.state.pending.is_none() && self.state.sent_message_ids == [awaiting.clone()])
                .then(|| {
                    reconcile::Continuity::after_send(
                        &core,
                        gaps,
                        (self.state.review_session_id.as_str(), awaiting.as_str()),
                        self.state.sent_message_ids.iter().cloned().collect(),
                        self.state.started_at,
                    )
                })
        });
        loop {
            if *self.stop.borrow() {
                return Ok((
                    StopReason::UserStopped,
                    "stopped by the user".into(),
                    vec![],
                ));
            }
            if let Some(detail) = self.state.budget_spent(now_ms()) {
                return Ok((StopReason::Budget, detail, vec![]));
            }
            let mut continuity = first.take();
            if let Some(pending) = self.state.pending.clone() {
                let gaps = reconcile::Continuity::before_send(&core);
                self.ensure_sent(&pending, fresh).await?;
                if let Some(mut timer) = self.timer.take() {
                    timer.mark("accepted");
                    timer.log(&self.state.id, self.state.round);
                }
                if self.state.phase == LoopPhase::Reviewing {
                    // The implementer's answers, recorded before the send.
                    recorder::push(&core, &self.state.review_session_id)?;
                }
                // Sent by this run after subscribing: the store follows the whole turn.
                if let (true, Some(gaps)) = (fresh, gaps) {
                    let ours = self.state.sent_message_ids.iter().cloned().collect();
                    continuity = Some(reconcile::Continuity::after_send(
                        &core,
                        gaps,
                        (pending.session_id.as_str(), pending.message_id.as_str()),
                        ours,
                        self.state.started_at,
                    ));
                }
                self.state.awaiting_message_id = Some(pending.message_id.clone());
                self.state.pending = None;
                self.save()?;
            }
            let Some(awaiting) = self.state.awaiting_message_id.clone() else {
                return Err(Error::Internal("the loop waits for nothing".into()));
            };
            let session = self.current_session().to_owned();
            let directory = self.directory().await?;
            // The reviewer cannot edit and the implementer waits: the code the review sees is
            // the code now, fingerprinted while the review runs.
            // Started once the server shows the prompt, so that git does not compete with it.
            let seen = (self.state.phase == LoopPhase::Reviewing).then(|| {
                let (core, directory) = (core.clone(), directory.clone());
                let (session, prompt) = (session.clone(), awaiting.clone());
                AbortOnDrop(tokio::spawn(async move {
                    reconcile::prompt_shown(&core, &session, &prompt).await;
                    super::code::full(&directory).await
                }))
            });
            // The implementer's code is fingerprinted while its turn runs (again after each
            // edit), so a claimed fix is checked without waiting for git after the reply.
            let mut ahead = None;
            let code = (self.state.phase == LoopPhase::Implementing).then_some(directory.as_str());
            let waited = self
                .wait_reply(&session, &awaiting, continuity, (code, &mut ahead))
                .await?;
            let (text, reply_id) = match waited {
                Ok(done) => done,
                Err(Interrupt::Stop(reason, detail)) => return Ok((reason, detail, vec![])),
            };
            self.account(&session, &awaiting);
            fresh = true;
            match self.state.phase {
                LoopPhase::Reviewing => {
                    let seen = match seen {
                        Some(mut task) => (&mut task.0).await.ok().flatten(),
                        None => None,
                    };
                    if let Some(t) = &mut self.timer {
                        t.mark("fingerprint");
                    }
                    // The person's comments, checked against the code the implementer left.
                    let comments = match crate::comments::refresh(
                        &core,
                        &self.state.original_session_id,
                    )
                    .await
                    {
                        Ok(all) => super::comments::open(all),
                        Err(e) => {
                            tracing::warn!("the line comments could not be checked: {e}");
                            Vec::new()
                        }
                    };
                    self.comments = comments;
                    // The round, its coverage and windows, the comments forwarded and the
                    // record with the next prompt's id: one write, committed before the send.
                    let stopped = core
                        .db()
                        .batch(|| self.after_reviewer(&text, &reply_id, &directory, seen))?;
                    if let Some(stop) = stopped {
                        return Ok(stop);
                    }
                }
                LoopPhase::Implementing => {
                    // Only a claimed fix needs to know whether the code moved; the claims are
                    // read as the findings record reads them (FIXED, RESOLVED, DONE).
                    let claimed: Vec<String> = crosscheck_review::findings::parse_answers(&text)
                        .into_iter()
                        .filter(|a| a.status == crosscheck_review::findings::FindingStatus::Fixed)
                        .map(|a| a.id)
                        .collect();
                    // Judged by the lines around each finding (only those files are read); a
                    // claim without kept lines by its file's fingerprint.
                    let by_lines = super::evidence::judge_claims(
                        core.db(),
                        &self.state.review_session_id,
                        &directory,
                        &claimed,
                    )?;
                    let moved = if claimed.iter().any(|id| !by_lines.contains_key(id)) {
                        self.moved_files(&directory, ahead.take()).await
                    } else {
                        None
                    };
                    if let Some(t) = &mut self.timer {
                        t.mark("fingerprint");
                    }
                    // The answers and the record with the next prompt's id: one write.
                    core.db()
                        .batch(|| self.after_implementer(&text, &reply_id, &by_lines, moved))?;
                }
                LoopPhase::Stopped => {
                    return Err(Error::Internal("a stopped loop ran".into()));
                }
            }
            if let Some(t) = &mut self.timer {
                t.mark("recorded and chosen");
            }
        }
    }

    /// Adds the turn that answered `awaiting` (tokens, cost, wall time) to the round's figures.
    fn account(&mut self, session: &str, awaiting: &str) {
        let usage = self.core.read_store(|s, _| {
            s.transcript(session)
                .and_then(|t| crate::flows::reply::turn_usage(t.messages(), awaiting))
        });
        let (tokens, cost) = usage.unwrap_or_default();
        let ms = u64::try_from(now_ms().saturating_sub(self.state.phase_started_at)).unwrap_or(0);
        self.state.add_turn(tokens, cost, ms);
    }

    /// When a minutes budget is set: the moment it is spent.
    fn budget_deadline(&self) -> Option<tokio::time::Instant> {
        let minutes = self.state.budget.minutes?;
        let end = self.state.started_at + i64::from(minutes) * 60_000;
        let left = u64::try_from(end.saturating_sub(now_ms())).unwrap_or(0);
        Some(tokio::time::Instant::now() + std::time::Duration::from_millis(left))
    }

    fn current_session(&self) -> &str {
        match self.state.phase {
            LoopPhase::Implementing => &self.state.original_session_id,
            _ => &self.state.review_session_id,
        }
    }

    /// The reviewer replied: record it, decide, and (to go on) choose the implementer's prompt.
    fn after_reviewer(
        &mut self,
        text: &str,
        reply_id: &str,
        directory: &str,
        seen: Option<crate::fingerprint::Fingerprint>,
    ) -> Result<Option<(StopReason, String, Vec<String>)>> {
        let core = self.core.clone();
        let parsed = crosscheck_review::findings::parse_findings(text);
        let recorded = recorder::record_parsed(
            &core,
            &self.state.review_session_id,
            Some(&self.state.original_session_id),
            reply_id,
            &parsed,
            seen.as_ref().map(|f| f.digest.as_str()),
        )?;
        if let Some(t) = &mut self.timer {
            t.mark("recorded");
        }
        // Pinned to the code it saw, as a manual review is, so the review tab can tell when
        // the code moves on.
        if recorded.new
            && let Some(seen) = &seen
        {
            crate::review_pin::pin(
                &core,
                &self.state.review_session_id,
                reply_id,
                directory,
                seen,
            );
        }
        let asked = self.state.coverage_asked.take();
        let (reviewed, changed) = self.record_coverage(
            &parsed,
            recorded.round,
            directory,
            asked.is_some(),
            seen.as_ref(),
        )?;
        let view = findings::view(core.db(), &self.state.review_session_id)?;
        // The lines around each open finding, as this review saw them, for the next claim.
        super::evidence::save(
            core.db(),
            &self.state.review_session_id,
            recorded.round,
            &super::evidence::windows_of_open(directory, &view),
        )?;
        if recorded.new {
            core.emit(Change::Findings {
                findings: view.clone(),
            });
        }
        self.state.review_fingerprint = view
            .rounds
            .iter()
            .find(|r| r.round == recorded.round)
            .and_then(|r| r.fingerprint.clone());
        let decision = after_review(
            &view,
            &parsed,
            recorded.round,
            self.state.round,
            self.state.threshold,
            self.state.max_rounds,
        );
        // A reply recorded before this loop began, read by its first step (it has sent nothing
        // but the prompt it started on): the person started it on that reply ("one more
        // round"), so it goes on.
        let decision =
            if !recorded.new && self.state.round == 1 && self.state.sent_message_ids.len() <= 1 {
                super::rules::overruled(decision, &view, recorded.round, self.state.threshold)
            } else {
                decision
            };
        let comments = std::mem::take(&mut self.comments);
        let decision =
            super::comments::decide(decision, &comments, self.state.round, self.state.max_rounds);
        let forward = match decision {
            // A CLEAN ends the loop only when it says it reviewed every changed file.
            Decision::Stop(StopReason::Clean, detail, ids) => {
                match coverage::after_clean(&reviewed, changed.as_deref(), asked.is_some()) {
                    Coverage::Covered => return Ok(Some((StopReason::Clean, detail, ids))),
                    Coverage::Uncovered(detail, _) => {
                        return Ok(Some((StopReason::Uncovered, detail, Vec::new())));
                    }
                    Coverage::Ask(missing) => {
                        let hidden = hidden::coverage_ask(&core.prompts(), &missing)?;
                        self.state.coverage_asked = Some(missing);
                        let review = self.state.review_session_id.clone();
                        self.choose(
                            review.to_string(),
                            String::new(),
                            hidden,
                            LoopPhase::Reviewing,
                        )?;
                        return Ok(None);
                    }
                }
            }
            Decision::Stop(reason, detail, ids) => return Ok(Some((reason, detail, ids))),
            Decision::Forward(f) => f,
        };
        let registry = core.prompts();
        let (visible, hidden) = super::comments::prompt(&registry, &forward, &comments)?;
        self.choose(
            self.state.original_session_id.to_string(),
            visible,
            hidden,
            LoopPhase::Implementing,
        )?;
        if let Some(pending) = &self.state.pending
            && !comments.is_empty()
        {
            let ids: Vec<String> = comments.iter().map(|c| c.id.clone()).collect();
            crate::comments::forwarded(core.db(), &ids, &pending.message_id)?;
        }
        Ok(None)
    }

    /// Records what reviewer round `round` says it reviewed (with the round before it when
    /// that one was asked for missing files) against the files the code it saw changed;
    /// answers both.
    fn record_coverage(
        &self,
        parsed: &crosscheck_review::findings::FindingsReply,
        round: u32,
        directory: &str,
        asked: bool,
        seen: Option<&crate::fingerprint::Fingerprint>,
    ) -> Result<(Vec<Reviewed>, Option<Vec<String>>)> {
        let crosscheck_review::findings::FindingsReply::Parsed { reviewed, .. } = parsed else {
            return Ok((Vec::new(), None));
        };
        let db = self.core.db();
        let session = &self.state.review_session_id;
        let reviewed = if asked {
            let before = findings::view(db, session)?
                .rounds
                .into_iter()
                .find(|r| r.round + 1 == round)
                .and_then(|r| r.coverage)
                .map(|c| c.reviewed)
                .unwrap_or_default();
            coverage::union(&before, reviewed)
        } else {
            reviewed.clone()
        };
        let changed = seen.map(findings::changed_paths);
        findings::record_coverage(db, session, round, directory, &reviewed, changed.as_deref())?;
        Ok((reviewed, changed))
    }

    /// The files the implementer's turn changed: the code now against the code the last
    /// review was pinned to; `None` when that cannot be told (no repository, no pin).
    async fn moved_files(
        &self,
        directory: &str,
        ahead: Option<super::ahead::Ahead>,
    ) -> Option<Vec<String>> {
        let now = match ahead {
            Some(ahead) => ahead.now().await,
            None => super::code::full(directory).await,
        }?;
        let view = findings::view(self.core.db(), &self.state.review_session_id).ok()?;
        let last = view.rounds.last()?;
        let before = crate::report::pinned_fingerprint(
            self.core.db(),
            &self.state.review_session_id,
            &last.message_id,
        )
        .ok()
        .flatten();
        let Some(before) = before else {
            // No pin: the digest alone tells only whether nothing changed.
            return (self.state.review_fingerprint.as_deref() == Some(now.digest.as_str()))
                .then(Vec::new);
        };
        if before.digest == now.digest {
            return Some(Vec::new());
        }
        crate::fingerprint::changed_files(std::path::Path::new(directory), &before, &now)
            .await
            .ok()
    }

    /// The implementer answered: record its answers (a FIXED claim judged by its finding's
    /// lines when they were kept, else by its file), send it back once for disputes without
    /// evidence, else choose the reviewer's next prompt.
    fn after_implementer(
        &mut self,
        text: &str,
        reply_id: &str,
        by_lines: &std::collections::HashMap<String, findings::ClaimCheck>,
        moved: Option<Vec<String>>,
    ) -> Result<()> {
        let core = self.core.clone();
        let unchanged = findings::record_answers_judged(
            core.db(),
            &self.state.review_session_id,
            reply_id,
            text,
            |id, location| match (by_lines.get(id), &moved) {
                (Some(check), _) => check.clone(),
                (None, Some(files)) if findings::unchanged_file(files, location) => {
                    findings::ClaimCheck::Unchanged(None)
                }
                _ => findings::ClaimCheck::Changed,
            },
        )?;
        if let Some(t) = &mut self.timer {
            t.mark("recorded");
        }
        // The findings are pushed once the next prompt is out (see `steps`).
        if !unchanged.is_empty() {
            self.state.claimed_unchanged = unchanged;
        }
        let registry = core.prompts();
        let bare = crosscheck_review::findings::disputes_without_evidence(text);
        if !bare.is_empty() && !self.state.evidence_asked {
            self.state.evidence_asked = true;
            let hidden = hidden::evidence_ask(&registry, &bare)?;
            let original = self.state.original_session_id.clone();
            return self.choose(
                original.to_string(),
                String::new(),
                hidden,
                LoopPhase::Implementing,
            );
        }
        self.state.evidence_asked = false;
        let disputed: Vec<String> = crosscheck_review::findings::parse_answers(text)
            .into_iter()
            .filter(|a| a.status == crosscheck_review::findings::FindingStatus::Disputed)
            .map(|a| a.id)
            .collect();
        let visible = registry.render(
            prompts::IMPLEMENTATION_RESPONSE_TO_REVIEWER,
            &[("implementation_response", text)],
        )?;
        let claims = findings::unchanged_claims(
            core.db(),
            &self.state.review_session_id,
            &self.state.claimed_unchanged,
        )?;
        let hidden = hidden::for_reviewer(&registry, &claims, &disputed)?;
        self.state.round += 1;
        self.choose(
            self.state.review_session_id.to_string(),
            visible,
            hidden,
            LoopPhase::Reviewing,
        )?;
        self.state.claimed_unchanged.clear();
        Ok(())
    }

    /// Chooses the next prompt's id and saves it before anything is sent.
    fn choose(
        &mut self,
        session_id: String,
        visible: String,
        hidden: String,
        phase: LoopPhase,
    ) -> Result<()> {
        let message_id = ids::message_id();
        self.state.sent_message_ids.push(message_id.clone());
        self.state.pending = Some(PendingSend {
            session_id,
            message_id,
            visible,
            hidden,
        });
        self.state.phase = phase;
        self.state.phase_started_at = now_ms();
        if let Some(t) = &mut self.timer {
            t.mark("rendered");
        }
        self.save()
    }

    async fn directory(&self) -> Result<String> {
        let known = self.core.read_store(|s, _| {
            s.session(&self.state.original_session_id)
                .map(|s| s.directory.clone())
        });
        match known {
            Some(d) => Ok(d),
            None => Ok(self
                .core
                .session(&self.state.original_session_id)
                .await?
                .directory),
        }
    }

    /// Sends a chosen prompt through the turn room: a prompt chosen in this run goes out at once;
    /// one found in the record after a restart only when the server does not have its id yet.
    async fn ensure_sent(&self, pending: &PendingSend, fresh: bool) -> Result<()> {
        let session = self.core.known_session(&pending.session_id).await?;
        // A prompt with no visible words (the ask for coverage) is all hidden; one with no
        // hidden words (a person's comments alone) is all visible.
        let parts = if pending.visible.is_empty() {
            vec![crosscheck_opencode::TextPartInput::synthetic(
                pending.hidden.clone(),
            )]
        } else if pending.hidden.is_empty() {
            vec![crosscheck_opencode::TextPartInput::visible(
                pending.visible.clone(),
            )]
        } else {
            turn::with_hidden(pending.visible.clone(), pending.hidden.clone())
        };
        let prompt = Prompt {
            session_id: pending.session_id.clone(),
            message_id: pending.message_id.clone(),
            parts,
            choice: current_choice(&self.core, &session),
        };
        let delivery = if fresh {
            Delivery::Fresh
        } else {
            Delivery::MaybeSent
        };
        match turn::send(&self.core, &prompt, delivery).await {
            Err(e) if turn::is_gone(&e) => Err(Error::SessionNotFound(pending.session_id.clone())),
            other => other,
        }
    }

    /// Waits (in the turn room) for the reply to `awaiting` in `session`, or for a stop rule.
    async fn wait_reply(
        &mut self,
        session: &str,
        awaiting: &str,
        mut continuity: Option<reconcile::Continuity>,
        (code, ahead): (Option<&str>, &mut Option<super::ahead::Ahead>),
    ) -> Result<std::result::Result<(String, String), Interrupt>> {
        let errors_before = self.core.read_store(|s, _| s.session_error_serial(session));
        let pair = [
            self.state.original_session_id.to_string(),
            self.state.review_session_id.to_string(),
        ];
        let reset = AtomicBool::new(false);
        let moved = AtomicBool::new(false);
        let filter = |change: &Change| {
            if matches!(change, Change::TranscriptReset { page } if page.session_id == session) {
                reset.store(true, Ordering::Relaxed);
            }
            if super::ahead::moves_code(change, session) {
                moved.store(true, Ordering::Relaxed);
            }
            turn::may_end_turn(change, &[&pair[0], &pair[1]])
        };
        let mut waiter =
            turn::Waiter::new(&self.core, self.budget_deadline(), Some(self.stop.clone()));
        // Started once subscribed: every later edit restarts it.
        *ahead = code.map(super::ahead::Ahead::start);
        loop {
            match waiter.next(&filter).await? {
                turn::Woke::Check(why) => {
                    // Lagged: what moved the code may be among the changes dropped.
                    let lagged = why == turn::Wake::Lagged;
                    if (moved.swap(false, Ordering::Relaxed) || lagged)
                        && let Some(ahead) = ahead.as_mut()
                    {
                        ahead.restart();
                    }
                }
                turn::Woke::TimedOut => {
                    // The minutes budget ran out mid-turn: the turn is cut, what it used counts.
                    if let Err(e) = self.core.client_for(session)?.abort(session).await {
                        tracing::warn!(session, "could not abort the turn over budget: {e}");
                    }
                    self.account(session, awaiting);
                    let detail = self.state.budget_spent(now_ms()).unwrap_or_default();
                    return Ok(Err(Interrupt::Stop(StopReason::Budget, detail)));
                }
                turn::Woke::Cancelled => {
                    return Ok(Err(Interrupt::Stop(
                        StopReason::UserStopped,
                        "stopped by the user".into(),
                    )));
                }
            }
            let reloaded = reset.swap(false, Ordering::Relaxed);
            if let Some(done) = self
                .step_ended(session, awaiting, errors_before, reloaded, &mut continuity)
                .await?
            {
                return Ok(done);
            }
        }
    }

    /// Asked by [`Self::wait_reply`] after each change that can end the turn: `Some` when the
    /// reply is in (and the server agrees) or a stop rule holds.
    async fn step_ended(
        &mut self,
        session: &str,
        awaiting: &str,
        errors_before: u64,
        reloaded: bool,
        continuity: &mut Option<reconcile::Continuity>,
    ) -> Result<Option<std::result::Result<(String, String), Interrupt>>> {
        if reloaded
            && self
                .core
                .read_store(|s, _| interrupted(s, session, awaiting))
            && crate::turn::server_says_interrupted(&self.core, session, awaiting).await?
        {
            return Ok(Some(Err(Interrupt::Stop(
                StopReason::TurnFailed,
                "the server restarted in the middle of a turn".into(),
            ))));
        }
        if let Some(stop) = self.check() {
            return Ok(Some(Err(stop)));
        }
        let seen = self
            .core
            .read_store(|s, _| turn::turn_end(s, session, awaiting, errors_before));
        let end = match seen {
            Seen::Ended(end) => end,
            Seen::Running => return Ok(None),
            Seen::Unlisted => {
                // Not in the list (deleted, or missing from a reload): the server decides.
                if let Err(Error::SessionNotFound(id)) = self.core.session(session).await {
                    return Err(Error::SessionNotFound(id));
                }
                match self
                    .core
                    .read_store(|s, _| turn::transcript_end(s, session, awaiting, errors_before))
                {
                    Some(end) => end,
                    None => return Ok(None),
                }
            }
        };
        let (text, reply_id) = match end {
            TurnEnd::Completed { text, .. } if text.is_empty() => {
                return Ok(Some(Err(Interrupt::Stop(
                    StopReason::TurnFailed,
                    format!("a turn failed: {}", Error::NoAssistantText),
                ))));
            }
            TurnEnd::Completed {
                text,
                reply_id: Some(reply_id),
            } => (text, reply_id),
            TurnEnd::Aborted => {
                return Ok(Some(Err(Interrupt::Stop(
                    StopReason::Aborted,
                    "a turn was aborted".into(),
                ))));
            }
            TurnEnd::Failed(words) => {
                return Ok(Some(Err(Interrupt::Stop(
                    StopReason::TurnFailed,
                    format!("a turn failed: {words}"),
                ))));
            }
            _ => return Ok(None),
        };
        self.timer = Some(super::timing::StepTimer::for_reply(&reply_id));
        // The event stream is lossy where it breaks: unbroken since the send and read over REST
        // while the turn ran, the store's transcript is the server's; else the server's own
        // transcript decides now.
        if let Some(c) = continuity.take() {
            let verdict = c.verdict(&self.core).await;
            if let Some(t) = &mut self.timer {
                t.mark("continuity");
            }
            match verdict {
                Some(Checked::Clear) => return Ok(Some(Ok((text, reply_id)))),
                Some(Checked::TookOver) => {
                    return Ok(Some(Err(Interrupt::Stop(
                        StopReason::UserTookOver,
                        TOOK_OVER.into(),
                    ))));
                }
                None => {}
            }
        }
        let reconciled = self.reconcile(session, awaiting).await;
        if let Some(t) = &mut self.timer {
            t.mark("read");
        }
        match reconciled? {
            Some(done) => Ok(Some(done)),
            None => {
                tracing::debug!(session, "the server has not finished {reply_id} yet");
                Ok(None)
            }
        }
    }

    /// The loop's own stop rules the store can tell while a turn runs (a failed turn is the
    /// turn room's answer).
    fn check(&self) -> Option<Interrupt> {
        let ours: HashSet<&str> = self
            .state
            .sent_message_ids
            .iter()
            .map(String::as_str)
            .collect();
        let pair = [
            self.state.original_session_id.as_str(),
            self.state.review_session_id.as_str(),
        ];
        self.core.read_store(|s, _| {
            for sid in pair {
                // The session's attention says whether it waits for the person.
                match s.waits_for_answer(sid) {
                    Some(AttentionKind::Permission) => {
                        return Some(Interrupt::Stop(
                            StopReason::PermissionWaiting,
                            "a permission request is waiting for you".into(),
                        ));
                    }
                    Some(_) => {
                        return Some(Interrupt::Stop(
                            StopReason::QuestionWaiting,
                            "a question is waiting for you".into(),
                        ));
                    }
                    None => {}
                }
                if let Some(t) = s.transcript(sid)
                    && foreign_prompt(t.messages(), &ours, self.state.started_at)
                {
                    return Some(Interrupt::Stop(StopReason::UserTookOver, TOOK_OVER.into()));
                }
            }
            None
        })
    }

    /// Reads the awaited turn from the server: `Some(Ok)` when it has ended there too,
    /// `Some(Err)` for a stop rule the server shows, `None` while it still runs there.
    async fn reconcile(
        &self,
        session: &str,
        awaiting: &str,
    ) -> Result<Option<std::result::Result<(String, String), Interrupt>>> {
        let page = self
            .core
            .client_for(session)?
            .messages(session, Some(RECONCILE_PAGE), None)
            .await?;
        let ours: HashSet<&str> = self
            .state
            .sent_message_ids
            .iter()
            .map(String::as_str)
            .collect();
        if foreign_prompt(&page.messages, &ours, self.state.started_at) {
            return Ok(Some(Err(Interrupt::Stop(
                StopReason::UserTookOver,
                TOOK_OVER.into(),
            ))));
        }
        Ok(
            match turn::ended_on_page(page.messages, session, awaiting) {
                Some(TurnEnd::Completed {
                    text,
                    reply_id: Some(id),
                }) if !text.is_empty() => Some(Ok((text, id))),
                Some(TurnEnd::Completed { text, .. }) if text.is_empty() => {
                    Some(Err(Interrupt::Stop(
                        StopReason::TurnFailed,
                        format!("a turn failed: {}", Error::NoAssistantText),
                    )))
                }
                Some(TurnEnd::Aborted) => Some(Err(Interrupt::Stop(
                    StopReason::Aborted,
                    "a turn was aborted".into(),
                ))),
                Some(TurnEnd::Failed(words)) => Some(Err(Interrupt::Stop(
                    StopReason::TurnFailed,
                    format!("a turn failed: {words}"),
                ))),
                _ => None,
            },
        )
    }
}

/// A user message the loop did not send, written since it started: the user took over.
/// Compaction requests and the server's own continuations are not the user's; a message
/// without parts yet is not judged.
pub(super) fn foreign_prompt(
    messages: &[MessageWithParts],
    ours: &HashSet<&str>,
    since: i64,
) -> bool {
    messages.iter().any(|m| {
        m.info.role == "user"
            && !ours.contains(m.info.id.as_str())
            && m.info.time.created >= since
            && !m.parts.is_empty()
            && !m.parts.iter().any(|p| p.kind == "compaction")
            && !m.parts.iter().all(|p| p.kind == "text" && p.synthetic)
    })
}
