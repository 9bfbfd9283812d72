//! The turn room: the one way a flow sends a prompt and waits for the turn that answers it.
//!
//! - **Sending** ([`send`]): the prompt's message id is chosen (and saved, where a restart must
//!   find it) before it goes out. After a transport error, or for a prompt that may have been
//!   sent before a restart ([`Delivery::MaybeSent`]), the target's messages are searched for the
//!   id before it is sent again, so a prompt is never delivered twice. A refusal the server
//!   answered (a status) is final: nothing was delivered.
//! - **"Ended, how?"** ([`turn_end`]): one answer read from the store — completed (with the
//!   turn's text), failed with the server's words, aborted — and, from [`await_turn`], the
//!   session deleted, the server restarted mid-turn, cancelled, or the time limit.
//! - **Waiting** ([`Waiter`], and [`wait_for`] on it): one loop on the change stream with a
//!   filter (which changes can end the wait), a predicate (asked at the start, after such
//!   changes, and after the stream lagged; [`await_turn`] then also reads the server), a
//!   deadline and a cancel switch. No flow writes its own `select!` over the stream.
//!
//! Beside them: the model/agent/variant a session is using ([`current_choice`]), the visible +
//! hidden prompt shape ([`with_hidden`]), and keeping a transcript followed while waiting
//! ([`Follow`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crosscheck_opencode::{
    MessageWithParts, ModelRef, PartInput, PromptRequest, Session, TextPartInput,
};
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::api_types::{Change, ModelChoice};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::flows::reply::{interrupted, reply_message_id, reply_outcome, turn_progress};
use crate::store::{Store, Transcript};

/// How many of the target's newest messages are searched for a prompt's id.
const LOOK_PAGE: u32 = 40;
/// After a send failed on the way, how long to keep looking for the prompt before sending it
/// again: the server answers `prompt_async` before it records the user message, so a prompt
/// it took may not be there yet at the first look.
const LOOK_GRACE: [std::time::Duration; 4] = [
    std::time::Duration::from_millis(100),
    std::time::Duration::from_millis(200),
    std::time::Duration::from_millis(400),
    std::time::Duration::from_millis(800),
];

/// Whether a prompt may have reached the server before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Its id was chosen by this run and never sent: one request on the hot path.
    Fresh,
    /// Its id was saved before a restart (or by another attempt): looked for first.
    MaybeSent,
}

/// One prompt: where it goes, under which id, what it says and who answers it.
#[derive(Debug, Clone)]
pub(crate) struct Prompt {
    /// The target session.
    pub session_id: String,
    /// The user message id, chosen (and saved) before sending.
    pub message_id: String,
    /// The parts, visible and hidden.
    pub parts: Vec<PartInput>,
    /// Model, agent and variant.
    pub choice: ModelChoice,
}

impl Prompt {
    fn request(&self) -> PromptRequest {
        PromptRequest {
            message_id: Some(self.message_id.clone()),
            parts: self.parts.clone(),
            model: self.choice.model.clone(),
            agent: self.choice.agent.clone(),
            variant: self.choice.variant.clone(),
            ..PromptRequest::default()
        }
    }
}

/// What a turn may use beyond its session's own settings: text after the server's system
/// prompt, and tools switched on or off (a cold review's scratch prompt: a system prompt, no
/// tools).
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnRules {
    /// Text the server adds after its own system prompt.
    pub system: Option<String>,
    /// Tools on or off by name (`"*"`: every tool).
    pub tools: Option<std::collections::BTreeMap<String, bool>>,
}

/// A prompt's parts: the visible text, then the hidden (synthetic) one.
pub(crate) fn with_hidden(visible: String, hidden: String) -> Vec<PartInput> {
    vec![
        TextPartInput::visible(visible),
        TextPartInput::synthetic(hidden),
    ]
}

/// Whether an error says the target session does not exist (any more).
pub(crate) fn is_gone(error: &Error) -> bool {
    matches!(
        error,
        Error::Opencode(crosscheck_opencode::Error::NotFound { .. }) | Error::SessionNotFound(_)
    )
}

/// Sends `prompt` by the one delivery policy (see the module's doc). A target that is gone
/// answers an error for which [`is_gone`] holds.
pub(crate) async fn send(core: &Core, prompt: &Prompt, delivery: Delivery) -> Result<()> {
    send_ruled(core, prompt, &TurnRules::default(), delivery).await
}

/// [`send`] for a turn with its own [`TurnRules`]: the same delivery policy.
pub(crate) async fn send_ruled(
    core: &Core,
    prompt: &Prompt,
    rules: &TurnRules,
    delivery: Delivery,
) -> Result<()> {
    let client = core.client_for(&prompt.session_id)?;
    if delivery == Delivery::MaybeSent
        && delivered(core, &prompt.session_id, &prompt.message_id).await?
    {
        return Ok(());
    }
    let mut request = prompt.request();
    request.system = rules.system.clone();
    request.tools = rules.tools.clone();
    match client.prompt_async(&prompt.session_id, &request).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_transport() => {
            // Maybe delivered although the answer was lost: look before sending again, once,
            // and give a prompt the server took the time to show up.
            match delivered_within(core, &prompt.session_id, &prompt.message_id).await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(_) => return Err(e.into()),
            }
            tracing::warn!(
                session = %prompt.session_id,
                "a prompt's send failed on the way ({e}); it is not there, sending it again"
            );
            client.prompt_async(&prompt.session_id, &request).await?;
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// [`delivered`], asked again over [`LOOK_GRACE`] while the answer is no.
async fn delivered_within(core: &Core, session_id: &str, message_id: &str) -> Result<bool> {
    if delivered(core, session_id, message_id).await? {
        return Ok(true);
    }
    for pause in LOOK_GRACE {
        tokio::time::sleep(pause).await;
        if delivered(core, session_id, message_id).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the target's messages hold `message_id`: the followed transcript first, else the
/// server's newest page.
pub(crate) async fn delivered(core: &Core, session_id: &str, message_id: &str) -> Result<bool> {
    if core.read_store(|s, _| {
        s.transcript(session_id)
            .is_some_and(|t| t.message(message_id).is_some())
    }) {
        return Ok(true);
    }
    let page = core
        .client_for(session_id)?
        .messages(session_id, Some(LOOK_PAGE), None)
        .await
        .map_err(|e| match e {
            crosscheck_opencode::Error::NotFound { .. } => {
                Error::SessionNotFound(session_id.to_owned())
            }
            e => e.into(),
        })?;
    Ok(page.messages.iter().any(|m| m.info.id == message_id))
}

// ---- "ended, how?" ---------------------------------------------------------------------------

/// How an awaited turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TurnEnd {
    /// The turn completed; `text` is every step's text (empty when it wrote none), `reply_id`
    /// its last step carrying the answer.
    Completed {
        /// The turn's text.
        text: String,
        /// The last assistant message of the answer, when there is one.
        reply_id: Option<String>,
    },
    /// The turn failed; the server's words.
    Failed(String),
    /// The turn was aborted.
    Aborted,
    /// The session was deleted.
    SessionDeleted,
    /// The server restarted before the turn ended.
    Interrupted,
    /// The waiter's Cancel.
    Cancelled,
    /// The waiter's time limit.
    TimedOut,
}

/// Where a turn is, as the store tells it.
#[derive(Debug)]
pub(crate) enum Seen {
    /// Still running.
    Running,
    /// Ended (completed, failed or aborted).
    Ended(TurnEnd),
    /// The store does not hold the session (deleted, or missing from a reloaded list); a
    /// cold review's scratch session is held while a turn room waits on it, though never
    /// listed.
    Unlisted,
}

/// The one answer to "did the turn answering `prompt_id` end, and how": a `session.error`
/// recorded after `errors_before` fails it (also up front, before any assistant message);
/// else the transcript decides ([`reply_outcome`]).
pub(crate) fn turn_end(
    store: &Store,
    session_id: &str,
    prompt_id: &str,
    errors_before: u64,
) -> Seen {
    if !store.holds(session_id) {
        return Seen::Unlisted;
    }
    match transcript_end(store, session_id, prompt_id, errors_before) {
        None => Seen::Running,
        Some(end) => Seen::Ended(end),
    }
}

/// [`turn_end`] without asking whether the session is listed: the error and the transcript.
pub(crate) fn transcript_end(
    store: &Store,
    session_id: &str,
    prompt_id: &str,
    errors_before: u64,
) -> Option<TurnEnd> {
    if let Some(failed) = error_since(store, session_id, errors_before) {
        return Some(failed);
    }
    reply_outcome(store, session_id, prompt_id)
        .map(|outcome| ended(store, session_id, prompt_id, outcome))
}

/// A failure of the session recorded after `errors_before`.
pub(crate) fn error_since(store: &Store, session_id: &str, errors_before: u64) -> Option<TurnEnd> {
    (store.session_error_serial(session_id) > errors_before)
        .then(|| store.session_error(session_id))
        .flatten()
        .map(|e| TurnEnd::Failed(e.message.clone()))
}

fn ended(store: &Store, session_id: &str, prompt_id: &str, outcome: Result<String>) -> TurnEnd {
    match outcome {
        Ok(text) => TurnEnd::Completed {
            text,
            reply_id: reply_message_id(store, session_id, prompt_id),
        },
        Err(Error::NoAssistantText) => TurnEnd::Completed {
            text: String::new(),
            reply_id: reply_message_id(store, session_id, prompt_id),
        },
        Err(Error::HandoffAborted) => TurnEnd::Aborted,
        Err(Error::HandoffFailed(words)) => TurnEnd::Failed(words),
        Err(e) => TurnEnd::Failed(e.to_string()),
    }
}

/// How the turn answering `prompt_id` in `messages` ended as far as a page read from the server
/// shows (a page alone holds no status: the caller knows the session is idle, or asks).
pub(crate) fn ended_on_page(
    messages: Vec<MessageWithParts>,
    session_id: &str,
    prompt_id: &str,
) -> Option<TurnEnd> {
    let store = page_store(session_id, messages);
    reply_outcome(&store, session_id, prompt_id)
        .map(|outcome| ended(&store, session_id, prompt_id, outcome))
}

/// A store holding only `messages` as the session's transcript, for reading a page fetched
/// from the server with the store's own rules.
fn page_store(session_id: &str, messages: Vec<MessageWithParts>) -> Store {
    let mut store = Store::default();
    store.put_transcript(session_id, Transcript::from_page(messages, None));
    store
}

/// Whether a change can end (or tell about) a turn of one of `sessions`: a status, a message or
/// part snapshot, an error, a permission request, the session's removal, or a reload. Streamed
/// deltas cannot.
pub(crate) fn may_end_turn(change: &Change, sessions: &[&str]) -> bool {
    let ours = |sid: &str| sessions.contains(&sid);
    match change {
        Change::Status { session_id, .. }
        | Change::SessionError { session_id, .. }
        | Change::SessionRemoved { session_id }
        | Change::PermissionAsked {
            request: crosscheck_opencode::PermissionRequest { session_id, .. },
        } => ours(session_id),
        Change::MessageUpserted { info } => ours(&info.session_id),
        Change::PartUpserted { part } => ours(&part.session_id),
        Change::TranscriptReset { page } => ours(&page.session_id),
        Change::SessionsReset { .. } => true,
        _ => false,
    }
}

// ---- waiting on the change stream ------------------------------------------------------------

/// Why the predicate of [`wait_for`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Before the first change.
    Start,
    /// After a change the filter let through.
    Change,
    /// After the stream lagged (changes were dropped): read the truth, from the server if the
    /// store cannot tell.
    Lagged,
}

/// How a [`wait_for`] ended.
#[derive(Debug)]
pub(crate) enum Waited<T> {
    /// The predicate answered.
    Done(T),
    /// The deadline passed first.
    TimedOut,
    /// The cancel switch was set first.
    Cancelled,
}

/// What woke a [`Waiter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// Ask the predicate (and why).
    Check(Wake),
    /// The deadline passed.
    TimedOut,
    /// The cancel switch was set.
    Cancelled,
}

/// The one loop over the change stream, for waits whose predicate must itself wait (read the
/// server): `next` answers when to ask it. [`wait_for`] is this with a predicate on the store.
pub(crate) struct Waiter {
    changes: broadcast::Receiver<crate::api_types::Stamped>,
    deadline: Option<Instant>,
    cancel: Option<watch::Receiver<bool>>,
    started: bool,
}

impl Waiter {
    /// Subscribes now: nothing that changes after this is missed by the first question.
    pub(crate) fn new(
        core: &Core,
        deadline: Option<Instant>,
        cancel: Option<watch::Receiver<bool>>,
    ) -> Self {
        Self {
            changes: core.subscribe(),
            deadline,
            cancel,
            started: false,
        }
    }

    /// The next moment to ask the predicate: at once the first time, then after a change
    /// `filter` lets through or after the stream lagged; or the deadline, or Cancel (a cancel
    /// switch whose sender is gone, at shutdown, is no cancel).
    pub(crate) async fn next(&mut self, mut filter: impl FnMut(&Change) -> bool) -> Result<Woke> {
        if self.cancel.as_ref().is_some_and(|c| *c.borrow()) {
            return Ok(Woke::Cancelled);
        }
        if !self.started {
            self.started = true;
            return Ok(Woke::Check(Wake::Start));
        }
        let deadline = self.deadline;
        let limit = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        let cancel = &mut self.cancel;
        let cancelled = async {
            match cancel.as_mut() {
                Some(c) => loop {
                    let closed = c.changed().await.is_err();
                    if *c.borrow() {
                        return;
                    }
                    if closed {
                        std::future::pending::<()>().await;
                    }
                },
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(limit, cancelled);
        loop {
            tokio::select! {
                received = self.changes.recv() => match received {
                    Ok(stamped) => {
                        if filter(&stamped.change) {
                            return Ok(Woke::Check(Wake::Change));
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => return Ok(Woke::Check(Wake::Lagged)),
                    Err(broadcast::error::RecvError::Closed) => {
                        return Err(Error::Internal("change stream closed".into()));
                    }
                },
                () = &mut limit => return Ok(Woke::TimedOut),
                () = &mut cancelled => return Ok(Woke::Cancelled),
            }
        }
    }
}

/// Waits on the change stream until `predicate` answers `Some`: it is asked at once, after
/// every change `filter` lets through, and after the stream lagged (the store is then still
/// whole: only the notifications were dropped). Ends at `deadline` and when `cancel` is set.
pub(crate) async fn wait_for<T>(
    core: &Core,
    mut filter: impl FnMut(&Change) -> bool,
    mut predicate: impl FnMut(Wake) -> Option<T>,
    deadline: Option<Instant>,
    cancel: Option<watch::Receiver<bool>>,
) -> Result<Waited<T>> {
    let mut waiter = Waiter::new(core, deadline, cancel);
    loop {
        match waiter.next(&mut filter).await? {
            Woke::Check(why) => {
                if let Some(done) = predicate(why) {
                    return Ok(Waited::Done(done));
                }
            }
            Woke::TimedOut => return Ok(Waited::TimedOut),
            Woke::Cancelled => return Ok(Waited::Cancelled),
        }
    }
}

/// Waits until the core is connected and in sync (`Ready`); an error when the core shuts down.
pub(crate) async fn until_ready(core: &Core) -> Result<()> {
    wait_for(
        core,
        |change| matches!(change, Change::Connection { .. }),
        |_| {
            matches!(
                core.connection(),
                crate::api_types::Connection::Ready { .. }
            )
            .then_some(())
        },
        None,
        None,
    )
    .await
    .map(|_| ())
}

/// What [`await_turn`] waits for.
pub(crate) struct TurnWait<'a> {
    /// The session the turn runs in.
    pub session_id: &'a str,
    /// The prompt the turn answers.
    pub prompt_id: &'a str,
    /// The session's error serial before the prompt was sent.
    pub errors_before: u64,
    /// The time limit (the turn is aborted when it passes).
    pub deadline: Option<Instant>,
    /// Cancel (the turn is aborted then too).
    pub cancel: Option<watch::Receiver<bool>>,
}

/// What a running turn has done so far, for a progress strip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TurnProgress {
    /// Characters of text streamed.
    pub streamed_chars: u64,
    /// Model calls (assistant steps) made with no text written yet; 0 once text appears.
    pub calls_without_text: u32,
}

/// How often streamed characters wake the progress callback, at most.
const PROGRESS_EVERY_MS: u64 = 250;

/// Waits for the turn answering `wait.prompt_id` to end, telling `progress` as it moves.
/// On Cancel and at the time limit the session's turn is aborted.
pub(crate) async fn await_turn(
    core: &Core,
    wait: TurnWait<'_>,
    mut progress: impl FnMut(TurnProgress) + Send,
) -> Result<TurnEnd> {
    let session_id = wait.session_id;
    let prompt_id = wait.prompt_id;
    let streamed = AtomicU64::new(0);
    let reset = AtomicBool::new(false);
    let began = std::time::Instant::now();
    let last_wake = AtomicU64::new(0);
    let mut told = TurnProgress::default();
    let filter = |change: &Change| {
        if let Change::PartDelta {
            session_id: sid,
            delta,
            ..
        } = change
            && sid == session_id
        {
            streamed.fetch_add(delta.chars().count() as u64, Ordering::Relaxed);
            let now = began.elapsed().as_millis() as u64;
            if now - last_wake.load(Ordering::Relaxed) >= PROGRESS_EVERY_MS {
                last_wake.store(now, Ordering::Relaxed);
                return true;
            }
            return false;
        }
        if matches!(change, Change::TranscriptReset { page } if page.session_id == session_id) {
            reset.store(true, Ordering::Relaxed);
        }
        may_end_turn(change, &[session_id])
    };
    let mut waiter = Waiter::new(core, wait.deadline, wait.cancel);
    let end = loop {
        let why = match waiter.next(&filter).await? {
            Woke::Check(why) => why,
            Woke::TimedOut => break TurnEnd::TimedOut,
            Woke::Cancelled => break TurnEnd::Cancelled,
        };
        let (seen, calls) = core.read_store(|s, _| {
            let calls = s
                .transcript(session_id)
                .and_then(|t| turn_progress(t.messages(), prompt_id))
                .map_or(0, |(steps, has_text)| if has_text { 0 } else { steps });
            (
                turn_end(s, session_id, prompt_id, wait.errors_before),
                calls,
            )
        });
        tracing::debug!(session = %session_id, prompt = %prompt_id, ?why, ?seen, "a turn's wait woke");
        let now = TurnProgress {
            streamed_chars: streamed.load(Ordering::Relaxed),
            calls_without_text: u32::try_from(calls).unwrap_or(u32::MAX),
        };
        if now != told {
            told = now;
            progress(now);
        }
        match seen {
            Seen::Ended(end) => return Ok(end),
            Seen::Unlisted => {
                // Removed, or missing from a reloaded list: only the server's "not found" ends
                // the wait; when it cannot tell now, keep waiting.
                if let Err(Error::SessionNotFound(_)) = core.session(session_id).await {
                    return Ok(TurnEnd::SessionDeleted);
                }
            }
            Seen::Running => {}
        }
        if reset.swap(false, Ordering::Relaxed)
            && core.read_store(|s, _| interrupted(s, session_id, prompt_id))
            && server_says_interrupted(core, session_id, prompt_id)
                .await
                .unwrap_or(true)
        {
            return Ok(TurnEnd::Interrupted);
        }
        if why == Wake::Lagged
            && let Some(end) = on_server(core, session_id, prompt_id).await
        {
            return Ok(end);
        }
    };
    if let Ok(client) = core.client_for(session_id)
        && let Err(e) = client.abort(session_id).await
    {
        tracing::warn!(
            session = session_id,
            "could not abort the awaited turn: {e}"
        );
    }
    Ok(end)
}

/// The session's newest page as the server has it once it is idle there; `None` while it
/// runs there. The status is read in the session's own folder (a cold review's scratch
/// session is not in the store's list, so it is asked of the server).
async fn idle_page_on_server(
    core: &Core,
    session_id: &str,
) -> Result<Option<Vec<MessageWithParts>>> {
    let client = core.client_for(session_id)?;
    let directory = core.known_session(session_id).await?.directory;
    if client
        .statuses(Some(&directory))
        .await?
        .get(session_id)
        .is_some_and(|s| !s.is_idle())
    {
        return Ok(None);
    }
    Ok(Some(
        client
            .messages(session_id, Some(LOOK_PAGE), None)
            .await?
            .messages,
    ))
}

/// Whether the server itself shows the turn answering `prompt_id` cut off: the session is not
/// running there and the turn's last message never completed. A reloaded page alone does not
/// say so: it may have been read just as the turn started, beside a status listed before it.
pub(crate) async fn server_says_interrupted(
    core: &Core,
    session_id: &str,
    prompt_id: &str,
) -> Result<bool> {
    let Some(page) = idle_page_on_server(core, session_id).await? else {
        return Ok(false);
    };
    Ok(interrupted(
        &page_store(session_id, page),
        session_id,
        prompt_id,
    ))
}

/// The turn's end as the server shows it (asked after the change stream lagged): ended there
/// only when the session is idle there too. Errors count as "cannot tell".
async fn on_server(core: &Core, session_id: &str, prompt_id: &str) -> Option<TurnEnd> {
    let page = idle_page_on_server(core, session_id).await.ok().flatten()?;
    ended_on_page(page, session_id, prompt_id)
}

// ---- who answers, and keeping the transcript --------------------------------------------------

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

/// Keeps a transcript followed for the life of the guard (so a turn's events land in the store).
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
