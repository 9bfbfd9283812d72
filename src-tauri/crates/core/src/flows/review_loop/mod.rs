//! The automatic review loop: the reviewer's reply completes, its findings are parsed and
//! recorded; the open ones at or above the threshold go to the implementer in the seed's
//! feedback words (with a hidden instruction to answer each by id); the implementer's answer
//! goes back to the reviewer in the seed's response words; and so on until a stop rule ends it.
//! One loop per pair; its record in SQLite lets it resume after a restart.

mod ahead;
pub(crate) mod code;
mod comments;
pub mod coverage;
pub(crate) mod evidence;
pub mod hidden;
mod reconcile;
pub use crate::model::loop_record as record;
pub(crate) mod recorder;
pub mod rules;
mod run;
pub(crate) mod timing;

use std::collections::HashMap;
use std::sync::Mutex;

use crosscheck_opencode::ids;
use crosscheck_review::findings::Severity;
use tokio::sync::watch;

pub use record::{LoopBudget, LoopPhase, LoopState, LoopStop, PendingSend, RoundCost, StopReason};

use crate::api_types::Change;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::flows::claim::{self, Claimed};
use crate::flows::now_ms;
use crate::metadata::get_original_session_id;

/// How a loop is asked to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopOptions {
    /// The round cap.
    pub max_rounds: u32,
    /// Findings at or above this severity are forwarded.
    pub threshold: Severity,
    /// What the loop may spend (none set: no limit).
    pub budget: LoopBudget,
}

impl LoopOptions {
    /// Options from a request, defaults filled in and the cap checked.
    pub fn new(max_rounds: Option<u32>, threshold: Option<Severity>) -> Result<Self> {
        let max_rounds = max_rounds.unwrap_or(record::DEFAULT_MAX_ROUNDS);
        if !(1..=record::MAX_MAX_ROUNDS).contains(&max_rounds) {
            return Err(Error::InvalidRequest(format!(
                "the round cap must be between 1 and {}",
                record::MAX_MAX_ROUNDS
            )));
        }
        Ok(Self {
            max_rounds,
            threshold: threshold.unwrap_or(Severity::Minor),
            budget: LoopBudget::default(),
        })
    }

    /// These options with a budget, checked.
    pub fn with_budget(mut self, budget: LoopBudget) -> Result<Self> {
        if let Some(why) = budget.problem() {
            return Err(Error::InvalidRequest(why.into()));
        }
        self.budget = budget;
        Ok(self)
    }
}

/// How long a new loop waits for the pair's previous loop of this process to be gone: a loop
/// that has stopped still takes its claim off the server (a few requests and a settle).
const PREVIOUS_LOOP_GONE: std::time::Duration = std::time::Duration::from_secs(15);

/// The running loops, one per pair (keyed by the implementing session), each with its stop
/// switch.
#[derive(Default)]
pub struct Loops {
    running: Mutex<HashMap<String, (String, watch::Sender<bool>)>>,
}

impl Loops {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, watch::Sender<bool>)>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a loop for the pair unless one runs: answers its stop switch.
    fn claim(&self, original: &str, loop_id: &str) -> Option<watch::Receiver<bool>> {
        let mut running = self.lock();
        if running.contains_key(original) {
            return None;
        }
        let (tx, rx) = watch::channel(false);
        running.insert(original.to_owned(), (loop_id.to_owned(), tx));
        Some(rx)
    }

    fn release(&self, original: &str, loop_id: &str) {
        let mut running = self.lock();
        if running.get(original).is_some_and(|(id, _)| id == loop_id) {
            running.remove(original);
        }
    }

    /// Asks the pair's loop to stop; false when none runs here.
    fn stop(&self, original: &str) -> bool {
        self.lock()
            .get(original)
            .is_some_and(|(_, tx)| tx.send(true).is_ok())
    }

    /// Whether a loop runs here for the pair of the implementing session `original`.
    pub(crate) fn runs_for(&self, original: &str) -> bool {
        self.lock().contains_key(original)
    }

    /// Stops the loops of these implementing sessions (their server was removed).
    pub(crate) fn stop_for(&self, originals: &[String]) {
        for original in originals {
            self.stop(original);
        }
    }

    /// Stops every loop (shutdown); their records stay as they are, so they resume.
    pub(crate) fn cancel_all(&self) {
        self.lock().clear();
    }
}

/// The pair `session_id` belongs to: (original, review).
async fn pair_of(core: &Core, session_id: &str) -> Result<(String, String)> {
    let review = crate::services::review_link::review_session_of(core, session_id).await?;
    let session = core.session(&review).await?;
    let original = get_original_session_id(&session)
        .ok_or(Error::NoLinkedSession)?
        .to_owned();
    Ok((original, review))
}

/// Starts a loop on the pair of `session_id`, waiting first for the reviewer's reply to its
/// newest prompt; answers the running loop when the pair has one.
pub async fn start(core: &Core, session_id: &str, options: LoopOptions) -> Result<LoopState> {
    let (original, review) = pair_of(core, session_id).await?;
    if let Some(running) = previous_loop_gone(core, &original).await? {
        return Ok(running);
    }
    let follow = crate::turn::Follow::new(core, &review).await?;
    let awaiting = core
        .read_store(|s, _| crate::flows::reply::last_prompt_id(s, &review))
        .ok_or_else(|| {
            Error::InvalidRequest(
                "the review session has no review yet: start one with /handoff-review".into(),
            )
        })?;
    drop(follow);
    launch(core, &original, &review, &awaiting, options, None)
}

/// The event stream's state just before a prompt is sent (see [`reconcile`]): the handoff notes
/// it before it sends the first review prompt, so that the loop's first step may act on the
/// store as every later one does.
pub(crate) fn stream_mark(core: &Core) -> Option<u64> {
    reconcile::Continuity::before_send(core)
}

/// The pair's running loop, or `None` once no loop of this process is registered for it. A
/// loop that has just stopped (its record says so) may still be taking its claim off the
/// server: it is waited for (up to [`PREVIOUS_LOOP_GONE`]), or the new loop's claim would meet
/// the old one's.
async fn previous_loop_gone(core: &Core, original: &str) -> Result<Option<LoopState>> {
    let deadline = tokio::time::Instant::now() + PREVIOUS_LOOP_GONE;
    loop {
        if let Some(running) = running_state(core, original)? {
            return Ok(Some(running));
        }
        if !core.loops().runs_for(original) {
            return Ok(None);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::LoopEnding(original.to_owned()));
        }
        // Two in-memory reads a round: a short pause costs nothing and keeps the start prompt.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Starts a loop right after the handoff sent the first review prompt `prompt_id`; `mark` is
/// the [`stream_mark`] taken just before that send.
pub async fn start_after_handoff(
    core: &Core,
    original: &str,
    review: &str,
    prompt_id: &str,
    options: LoopOptions,
    mark: Option<u64>,
) -> Result<LoopState> {
    if let Some(running) = previous_loop_gone(core, original).await? {
        return Ok(running);
    }
    launch(core, original, review, prompt_id, options, mark)
}

fn running_state(core: &Core, original: &str) -> Result<Option<LoopState>> {
    if !core.loops().lock().contains_key(original) {
        return Ok(None);
    }
    Ok(record::load(core.db(), original)?.filter(|s| !s.ended))
}

fn launch(
    core: &Core,
    original: &str,
    review: &str,
    awaiting: &str,
    options: LoopOptions,
    sent_after: Option<u64>,
) -> Result<LoopState> {
    let now = now_ms();
    let state = LoopState {
        id: ids::ascending("lop"),
        original_session_id: original.into(),
        review_session_id: review.into(),
        round: 1,
        max_rounds: options.max_rounds,
        threshold: options.threshold,
        phase: LoopPhase::Reviewing,
        started_at: now,
        phase_started_at: now,
        awaiting_message_id: Some(awaiting.to_owned()),
        pending: None,
        sent_message_ids: vec![awaiting.to_owned()],
        claimed_unchanged: Vec::new(),
        review_fingerprint: None,
        coverage_asked: None,
        evidence_asked: false,
        stop: None,
        ended: false,
        costs: Vec::new(),
        budget: options.budget,
    };
    let Some(stop) = core.loops().claim(original, &state.id) else {
        return running_state(core, original)?
            .ok_or_else(|| Error::LoopEnding(original.to_owned()));
    };
    if let Err(e) = record::save(core.db(), &state) {
        core.loops().release(original, &state.id);
        return Err(e);
    }
    spawn(core, state.clone(), stop, sent_after);
    Ok(state)
}

/// Runs the loop; `sent_after` is the stream mark taken before its awaited prompt was sent by
/// this process (none on a resume).
fn spawn(core: &Core, state: LoopState, stop: watch::Receiver<bool>, sent_after: Option<u64>) {
    core.emit(Change::Loop {
        state: state.clone(),
    });
    let core2 = core.clone();
    core.push_task(tokio::spawn(async move {
        let mut task = run::LoopTask {
            core: core2.clone(),
            state,
            stop,
            timer: None,
            comments: Vec::new(),
            sent_after,
        };
        // One process of those sharing the server runs the pair's loop: the same claim on the
        // implementing session a handoff takes, under its own purpose, held under the loop's
        // id (a loop resumed after a restart finds its own claim still live and goes on).
        let claimed = claim::acquire_as(
            &core2,
            &task.state.original_session_id,
            claim::REVIEW_LOOP,
            task.state.id.clone(),
        )
        .await;
        match claimed {
            Ok(Claimed::Ours(held)) => {
                task.run().await;
                held.release(&core2).await;
            }
            Ok(Claimed::Theirs(_)) => {
                tracing::info!(loop_id = %task.state.id, "another process runs this pair's review loop");
                task.finish(
                    StopReason::RunsElsewhere,
                    "another Crosscheck runs this pair's review loop".into(),
                    Vec::new(),
                );
            }
            Err(e) => task.finish(
                StopReason::TurnFailed,
                format!("the loop could not claim its pair on the server: {e}"),
                Vec::new(),
            ),
        }
        core2
            .loops()
            .release(&task.state.original_session_id, &task.state.id);
    }));
}

/// Stops the loop of the pair `session_id` belongs to and answers its final state; a record
/// left running by a process that is gone is marked stopped.
pub async fn stop(core: &Core, session_id: &str) -> Result<Option<LoopState>> {
    let Some(state) = record::load(core.db(), session_id)? else {
        return Ok(None);
    };
    if state.ended {
        return Ok(Some(state));
    }
    if core.loops().stop(&state.original_session_id) {
        let limit = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        let loop_id = state.id.clone();
        let ended = crate::turn::wait_for(
            core,
            |change| matches!(change, Change::Loop { state: s } if s.id == loop_id),
            |_| {
                record::load(core.db(), session_id)
                    .ok()
                    .flatten()
                    .filter(|s| s.ended)
            },
            Some(limit),
            None,
        )
        .await;
        return match ended {
            Ok(crate::turn::Waited::Done(s)) => Ok(Some(s)),
            _ => record::load(core.db(), session_id),
        };
    }
    let mut task = run::LoopTask {
        core: core.clone(),
        state,
        stop: watch::channel(false).1,
        timer: None,
        comments: Vec::new(),
        sent_after: None,
    };
    task.finish(
        StopReason::UserStopped,
        "stopped by the user".into(),
        Vec::new(),
    );
    Ok(Some(task.state))
}

/// Resumes the loops whose records say they were running, once the core is connected.
pub(crate) async fn resume_all(core: Core) {
    if crate::turn::until_ready(&core).await.is_err() {
        return;
    }
    let records = match record::list(core.db()) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("the review loops cannot be resumed: {e}");
            return;
        }
    };
    for state in records.into_iter().filter(|s| !s.ended) {
        if let Some(stop) = core.loops().claim(&state.original_session_id, &state.id) {
            tracing::info!(loop_id = %state.id, round = state.round, "resuming a review loop");
            spawn(&core, state, stop, None);
        }
    }
}
