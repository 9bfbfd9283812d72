//! An in-process fake OpenCode server (axum on 127.0.0.1:0) that behaves like `opencode serve`
//! 1.18.33 for the routes the core uses (see the team's notes on the OpenCode server):
//! sessions with metadata that PATCH replaces whole, paged transcripts, `prompt_async` that
//! answers 204 at once and then plays one turn on `/global/event` in the real order, abort,
//! statuses, pending permission requests and their replies, and the catalogs.
//!
//! Tests script it: the reply of the next turn of a session (text, a delay in tokio time, an
//! assistant error, an abort, or a hang), one-shot 500s for the next PATCH/DELETE of a session,
//! a prompt taken whose answer is lost on the way,
//! dropping and refusing the event stream, and ending a turn silently (as if it ended while the
//! client was away). Every request is recorded with its body and the instant it arrived.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use crosscheck_opencode::ids;
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot, watch};

mod diffs;
mod events;
mod history;
mod questions;
mod routes;
mod turns;

use routes::{bad_request, handle, injected_failure, json_response, list_messages, not_found};

/// The server's version, as `/global/health` reports it.
pub const VERSION: &str = "1.18.33";
/// The real server sends a heartbeat every 10 s.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// How a scripted turn ends.
#[derive(Debug, Clone)]
pub enum End {
    /// Streams the text and completes (`finish: "stop"`).
    Complete,
    /// Ends with this assistant `error` (e.g. `{"name":"APIError","data":{"message":"boom"}}`).
    Error(Value),
    /// Ends as aborted (`MessageAbortedError`).
    Aborted,
    /// Runs until `POST /session/:id/abort` or [`FakeOpencode::finish_silently`].
    Hang,
    /// Makes this many model calls that write no text (one assistant step each, a tool call
    /// between them), then hangs as [`End::Hang`] does: a model answering garbage forever.
    SilentThenHang(usize),
    /// Fails before any assistant message, as the real server does for a model it does not
    /// have: busy, `session.error`, idle, `session.idle`, then `session.error` again with a
    /// stack trace in its message.
    UpFront(Value),
    /// Fails up front as [`End::UpFront`] does, but the repeat names only the error (its
    /// message is the error's name and a stack trace), as the real server does for an agent it
    /// does not have.
    UpFrontNameOnly(Value),
    /// One assistant message per step (a tool call between them), each answering the prompt;
    /// with `after`, an automatic compaction follows the `before` steps (compaction request,
    /// summary, synthetic continue message) and the `after` steps answer the continuation.
    Steps {
        /// Step texts before any compaction.
        before: Vec<String>,
        /// Step texts after an automatic compaction, if one happens.
        after: Option<Vec<String>>,
    },
}

/// The scripted answer to one prompt.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The assistant text.
    pub text: String,
    /// Time (tokio time) between the assistant message starting and the turn ending.
    pub delay: Duration,
    /// How it ends.
    pub end: End,
}

impl Reply {
    /// A reply with this text that completes at once.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            delay: Duration::ZERO,
            end: End::Complete,
        }
    }

    /// The same reply, after `delay` of tokio time.
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// A turn that ends with an assistant error.
    pub fn error(error: Value) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::Error(error),
        }
    }

    /// A turn that fails up front with `{"name":"UnknownError","data":{"message":message}}`.
    pub fn fails_up_front(message: &str) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::UpFront(json!({"name": "UnknownError", "data": {"message": message}})),
        }
    }

    /// A turn that fails up front the way the real server refuses an unknown agent: first the
    /// words (`Agent not found: ...`), then a repeat whose message is only the error's name.
    pub fn unknown_agent(message: &str) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::UpFrontNameOnly(
                json!({"name": "UnknownError", "data": {"message": message}}),
            ),
        }
    }

    /// A turn that makes `calls` model calls without writing any text, then runs until aborted.
    pub fn silent_forever(calls: usize) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::SilentThenHang(calls),
        }
    }

    /// A turn of several steps, one assistant message each.
    pub fn steps(steps: &[&str]) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::Steps {
                before: steps.iter().map(|s| (*s).to_owned()).collect(),
                after: None,
            },
        }
    }

    /// A turn compacted automatically between `before` and `after` steps.
    pub fn compacted(before: &[&str], after: &[&str]) -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::Steps {
                before: before.iter().map(|s| (*s).to_owned()).collect(),
                after: Some(after.iter().map(|s| (*s).to_owned()).collect()),
            },
        }
    }

    /// A turn that ends aborted.
    pub fn aborted() -> Self {
        Self {
            text: String::new(),
            delay: Duration::ZERO,
            end: End::Aborted,
        }
    }

    /// A turn that runs until aborted or finished silently; `text` is what it would have said.
    pub fn hang(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            delay: Duration::ZERO,
            end: End::Hang,
        }
    }
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Route label, e.g. `PATCH /session/:id`.
    pub route: String,
    /// The session id in the path, if any.
    pub session_id: Option<String>,
    /// Decoded query.
    pub query: HashMap<String, String>,
    /// JSON body (`Null` when none).
    pub body: Value,
    /// When it arrived.
    pub at: Instant,
    /// Status answered.
    pub status: u16,
}

/// One stored message.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    /// The `info` object.
    pub info: Value,
    /// Its parts.
    pub parts: Vec<Value>,
}

/// What a running turn is told to do.
enum Action {
    Abort,
    Silent,
}

/// A one-shot action run after a response.
type Hook = Box<dyn FnOnce() + Send>;

/// The fake's whole state.
#[derive(Default)]
pub struct FakeState {
    /// The default directory (for sessions created without one).
    pub directory: String,
    /// Sessions by id, as the server sends them.
    pub sessions: BTreeMap<String, Value>,
    /// Messages by session, oldest first.
    pub messages: HashMap<String, Vec<StoredMessage>>,
    /// Non-idle statuses.
    pub statuses: HashMap<String, Value>,
    /// Every request, in order of arrival.
    pub requests: Vec<Recorded>,
    /// When `session.idle` was emitted, per session.
    pub idle_emitted: HashMap<String, Vec<Instant>>,
    /// Turns that ended, per session (silently or not).
    pub turns_done: HashMap<String, usize>,
    /// How many event streams were opened (accepted ones).
    pub streams_opened: usize,
    /// Pending permission requests by id, as the server sends them.
    pub permissions: BTreeMap<String, Value>,
    /// Pending questions by id, as `GET /question` lists them.
    pub questions: BTreeMap<String, Value>,
    replies: HashMap<String, VecDeque<Reply>>,
    any_replies: VecDeque<Reply>,
    default_replies: usize,
    fail_next: Vec<(String, String)>,
    stall_next: Vec<(String, String)>,
    cut_next: Vec<(String, String)>,
    /// Every request's answer breaks off (a server that died).
    down: bool,
    streams_blocked: bool,
    running: HashMap<String, oneshot::Sender<Action>>,
    turn_locks: HashMap<String, Arc<tokio::sync::Mutex<()>>>,
    /// How far the server's clock is behind the real one (its message ids and times).
    clock_behind_ms: i64,
    id_counter: u64,
    /// Sessions whose message pages all name this same older-page cursor (a broken server).
    repeated_cursor: HashMap<String, String>,
    /// Extra time (real time) some routes take before they are handled.
    route_delays: HashMap<String, Duration>,
    /// One-shot actions run right after a route for a session was answered.
    after_hooks: Vec<(String, String, Hook)>,
    /// Listing faults and holds (see [`FakeOpencode::fail_listings`]).
    sync: SyncFaults,
    /// The diff, todo and config routes' answers (see `diffs`).
    diffs: diffs::DiffState,
    /// What `GET /find/file` searches ([`FakeOpencode::set_files`]).
    files: Vec<String>,
    /// The next `GET /find/file` answers 500.
    fail_find: bool,
}

impl FakeState {
    fn put_info(&mut self, session_id: &str, info: Value) {
        let list = self.messages.entry(session_id.to_owned()).or_default();
        let id = info["id"].as_str().unwrap_or_default().to_owned();
        match list.iter_mut().find(|m| m.info["id"] == id.as_str()) {
            Some(m) => m.info = info,
            None => {
                list.push(StoredMessage {
                    info,
                    parts: Vec::new(),
                });
                list.sort_by(|a, b| a.info["id"].as_str().cmp(&b.info["id"].as_str()));
            }
        }
    }

    fn put_part(&mut self, session_id: &str, part: Value) {
        let Some(list) = self.messages.get_mut(session_id) else {
            return;
        };
        let Some(message) = list.iter_mut().find(|m| m.info["id"] == part["messageID"]) else {
            return;
        };
        match message.parts.iter_mut().find(|p| p["id"] == part["id"]) {
            Some(p) => *p = part,
            None => message.parts.push(part),
        }
    }

    /// Now, by the server's clock.
    fn server_now(&self) -> i64 {
        now_ms() - self.clock_behind_ms
    }

    /// A message id the way the server makes them, from its own clock.
    fn server_message_id(&mut self) -> String {
        self.id_counter = (self.id_counter + 1) % 0x1000;
        let value = (self.server_now() as u64 * 0x1000 + self.id_counter) & ((1 << 48) - 1);
        let random: String = ids::part_id().chars().rev().take(14).collect();
        format!("msg_{value:012x}{random}")
    }

    /// The stored messages of a session (empty when none).
    pub fn messages_of(&self, session_id: &str) -> &[StoredMessage] {
        self.messages
            .get(session_id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

struct Shared {
    state: Mutex<FakeState>,
    events: broadcast::Sender<String>,
    drop_streams: watch::Sender<u64>,
    /// While true, a new event stream subscribes to events only once it turns false
    /// ([`FakeOpencode::hold_subscriptions`]).
    subscriptions_held: watch::Sender<bool>,
    version: watch::Sender<u64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, FakeState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Broadcasts one event frame to every open event stream.
    fn emit(&self, directory: &str, kind: &str, properties: Value) {
        let frame = json!({
            "directory": directory,
            "payload": {"id": ids::ascending("evt"), "type": kind, "properties": properties},
        });
        let _ = self.events.send(frame.to_string());
    }

    /// Wakes everyone waiting in [`FakeOpencode::wait_until`].
    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }
}

/// A running fake server; dropping it leaves the server running until the runtime ends.
#[derive(Clone)]
pub struct FakeOpencode {
    shared: Arc<Shared>,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The project directory sessions are created in by default.
    pub directory: String,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

impl FakeOpencode {
    /// Starts the server on a free loopback port.
    pub async fn start(directory: &str) -> FakeOpencode {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake server");
        let addr = listener.local_addr().expect("fake server address");
        let (events, _) = broadcast::channel(16_384);
        let shared = Arc::new(Shared {
            state: Mutex::new(FakeState {
                directory: directory.to_owned(),
                ..FakeState::default()
            }),
            events,
            drop_streams: watch::Sender::new(0),
            subscriptions_held: watch::Sender::new(false),
            version: watch::Sender::new(0),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeOpencode {
            shared,
            base_url: format!("http://{addr}"),
            directory: directory.to_owned(),
        }
    }

    /// Reads the state.
    pub fn with_state<T>(&self, f: impl FnOnce(&FakeState) -> T) -> T {
        f(&self.shared.lock())
    }

    /// Adds a session directly (not a recorded request), emitting `session.created`.
    pub fn seed_session(&self, title: &str, metadata: Option<Value>) -> String {
        let id = ids::ascending("ses");
        let now = now_ms();
        let mut session = json!({
            "id": id, "slug": "seeded", "projectID": OWN_PROJECT, "directory": self.directory,
            "title": title, "version": VERSION, "time": {"created": now, "updated": now},
        });
        if let Some(m) = metadata {
            session["metadata"] = m;
        }
        let mut st = self.shared.lock();
        st.sessions.insert(id.clone(), session.clone());
        self.shared.emit(
            &self.directory,
            "session.created",
            json!({"sessionID": id, "info": session}),
        );
        drop(st);
        self.shared.bump();
        id
    }

    /// Adds `count` finished messages to a session directly (no events), alternating user and
    /// assistant, each with one text part of `text_len` characters; the ids of the new messages.
    pub fn seed_messages(&self, session_id: &str, count: usize, text_len: usize) -> Vec<String> {
        let now = now_ms();
        let text = "x".repeat(text_len);
        let mut st = self.shared.lock();
        let mut ids_out = Vec::with_capacity(count);
        let list = st.messages.entry(session_id.to_owned()).or_default();
        for i in 0..count {
            let id = ids::message_id();
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let info = json!({"id": id, "sessionID": session_id, "role": role, "time": {"created": now, "completed": now}});
            let part = json!({"id": ids::part_id(), "sessionID": session_id, "messageID": id, "type": "text", "text": text});
            list.push(StoredMessage {
                info,
                parts: vec![part],
            });
            ids_out.push(id);
        }
        list.sort_by(|a, b| a.info["id"].as_str().cmp(&b.info["id"].as_str()));
        ids_out
    }

    /// Adds one finished message with one text part to a session directly (no events); its id.
    pub fn seed_text(&self, session_id: &str, role: &str, text: &str) -> String {
        let now = now_ms();
        let id = ids::message_id();
        let info = json!({"id": id, "sessionID": session_id, "role": role, "time": {"created": now, "completed": now}});
        let part = json!({"id": ids::part_id(), "sessionID": session_id, "messageID": id, "type": "text", "text": text});
        let mut st = self.shared.lock();
        let list = st.messages.entry(session_id.to_owned()).or_default();
        list.push(StoredMessage {
            info,
            parts: vec![part],
        });
        list.sort_by(|a, b| a.info["id"].as_str().cmp(&b.info["id"].as_str()));
        id
    }

    /// Removes a session directly (not a recorded request), emitting `session.deleted`.
    pub fn remove_session(&self, id: &str) {
        let mut st = self.shared.lock();
        if let Some(session) = st.sessions.remove(id) {
            st.messages.remove(id);
            st.statuses.remove(id);
            let dir = session["directory"].as_str().unwrap_or_default().to_owned();
            self.shared.emit(
                &dir,
                "session.deleted",
                json!({"sessionID": id, "info": session}),
            );
        }
        drop(st);
        self.shared.bump();
    }

    /// Removes a session without emitting anything, as if its `session.deleted` was lost.
    pub fn remove_session_silently(&self, id: &str) {
        let mut st = self.shared.lock();
        st.sessions.remove(id);
        st.messages.remove(id);
        st.statuses.remove(id);
    }

    /// Replaces a session's metadata directly (another client writing), emitting `session.updated`.
    pub fn set_metadata(&self, id: &str, metadata: Value) {
        let mut st = self.shared.lock();
        if let Some(session) = st.sessions.get_mut(id) {
            session["metadata"] = metadata;
            session["time"]["updated"] = json!(now_ms());
            let info = session.clone();
            let dir = info["directory"].as_str().unwrap_or_default().to_owned();
            self.shared.emit(
                &dir,
                "session.updated",
                json!({"sessionID": id, "info": info}),
            );
        }
        drop(st);
        self.shared.bump();
    }

    /// Makes a tool call of `session_id` ask for `permission` on `patterns`, emitting
    /// `permission.asked`. Returns the `per_...` id.
    pub fn ask_permission(&self, session_id: &str, permission: &str, patterns: &[&str]) -> String {
        let id = ids::ascending("per");
        let request = json!({
            "id": id, "sessionID": session_id, "permission": permission, "patterns": patterns,
            "metadata": {}, "always": patterns,
            "tool": {"messageID": ids::message_id(), "callID": format!("call_{id}")},
        });
        let mut st = self.shared.lock();
        let dir = st
            .sessions
            .get(session_id)
            .and_then(|s| s["directory"].as_str())
            .map_or_else(|| self.directory.clone(), str::to_owned);
        st.permissions.insert(id.clone(), request.clone());
        self.shared.emit(&dir, "permission.asked", request);
        drop(st);
        self.shared.bump();
        id
    }

    /// Makes the running turn of `session_id` call OpenCode's `question` tool, as the real
    /// server shows it: a `question` tool part left `running` on the newest assistant message
    /// (the turn stays busy until the user answers), and `question.asked`. Returns the
    /// `que_...` id, or `None` when the session has no assistant message.
    pub fn ask_question(&self, session_id: &str, question: &str) -> Option<String> {
        let id = ids::ascending("que");
        let mut st = self.shared.lock();
        let message_id = st
            .messages_of(session_id)
            .iter()
            .rev()
            .find(|m| m.info["role"] == "assistant")
            .and_then(|m| m.info["id"].as_str())?
            .to_owned();
        let dir = st
            .sessions
            .get(session_id)
            .and_then(|s| s["directory"].as_str())
            .map_or_else(|| self.directory.clone(), str::to_owned);
        let call_id = format!("call_{id}");
        let questions = json!([{"question": question, "header": "Question",
            "options": [{"label": "Yes", "description": "yes"}, {"label": "No", "description": "no"}]}]);
        let part = json!({"id": ids::part_id(), "messageID": message_id, "sessionID": session_id,
            "type": "tool", "tool": "question", "callID": call_id,
            "state": {"status": "running", "input": {"questions": questions},
                "time": {"start": now_ms()}}});
        st.put_part(session_id, part.clone());
        self.shared.emit(
            &dir,
            "message.part.updated",
            json!({"sessionID": session_id, "part": part, "time": now_ms()}),
        );
        let request = json!({"id": id, "sessionID": session_id, "questions": questions,
            "tool": {"messageID": message_id, "callID": call_id}});
        st.questions.insert(id.clone(), request.clone());
        self.shared.emit(&dir, "question.asked", request);
        drop(st);
        self.shared.bump();
        Some(id)
    }

    /// Answers a pending permission request without emitting anything, as if another client
    /// answered it while nobody listened. Returns whether it was pending.
    pub fn answer_permission_silently(&self, id: &str) -> bool {
        let removed = self.shared.lock().permissions.remove(id).is_some();
        self.shared.bump();
        removed
    }

    /// The session as the server has it.
    pub fn session(&self, id: &str) -> Option<Value> {
        self.with_state(|s| s.sessions.get(id).cloned())
    }

    /// The session's metadata (`None` when absent or when the session is gone).
    pub fn metadata(&self, id: &str) -> Option<Value> {
        self.session(id).and_then(|s| s.get("metadata").cloned())
    }

    /// The reply to the next prompt of `session_id`.
    pub fn script(&self, session_id: &str, reply: Reply) {
        self.shared
            .lock()
            .replies
            .entry(session_id.to_owned())
            .or_default()
            .push_back(reply);
    }

    /// The reply to the next prompt of any session without its own script (e.g. one not created yet).
    pub fn script_any(&self, reply: Reply) {
        self.shared.lock().any_replies.push_back(reply);
    }

    /// Makes the next `method` (PATCH, DELETE, or PROMPT for `prompt_async`) of `session_id`
    /// answer 500 without effect.
    pub fn fail_next(&self, method: &str, session_id: &str) {
        self.shared
            .lock()
            .fail_next
            .push((method.to_owned(), session_id.to_owned()));
    }

    /// Makes the next `method` (PROMPT for `prompt_async`) of `session_id` never answer and have
    /// no effect (the request is recorded): a server that never accepted it, as when the client
    /// dies before the server took the prompt.
    pub fn stall_next(&self, method: &str, session_id: &str) {
        self.shared
            .lock()
            .stall_next
            .push((method.to_owned(), session_id.to_owned()));
    }

    /// Makes the next `method` (PROMPT for `prompt_async`) of `session_id` (`"*"`: of any
    /// session) take effect and then lose its answer: the client reads a body cut short (a
    /// transport error) although the server took the prompt.
    pub fn cut_next(&self, method: &str, session_id: &str) {
        self.shared
            .lock()
            .cut_next
            .push((method.to_owned(), session_id.to_owned()));
    }

    /// Plays a server that died: open event streams end and every request's answer breaks off
    /// (a transport error), until [`Self::come_back`].
    pub fn go_down(&self) {
        self.shared.lock().down = true;
        self.drop_event_streams();
    }

    /// Answers again after [`Self::go_down`].
    pub fn come_back(&self) {
        self.shared.lock().down = false;
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.with_state(|s| s.requests.clone())
    }

    /// How many requests hit a route, e.g. `count("POST /session")`.
    pub fn count(&self, route: &str) -> usize {
        self.with_state(|s| s.requests.iter().filter(|r| r.route == route).count())
    }

    /// Requests of a route concerning one session, in order.
    pub fn requests_to(&self, route: &str, session_id: &str) -> Vec<Recorded> {
        self.with_state(|s| {
            s.requests
                .iter()
                .filter(|r| r.route == route && r.session_id.as_deref() == Some(session_id))
                .cloned()
                .collect()
        })
    }

    /// The bodies of the prompts sent to a session, in order.
    pub fn prompts_to(&self, session_id: &str) -> Vec<Value> {
        self.requests_to("POST /session/:id/prompt_async", session_id)
            .into_iter()
            .map(|r| r.body)
            .collect()
    }

    /// The stored messages of a session.
    pub fn messages(&self, session_id: &str) -> Vec<StoredMessage> {
        self.with_state(|s| s.messages_of(session_id).to_vec())
    }

    /// When `session.idle` was emitted for a session, in order.
    pub fn idle_emitted(&self, session_id: &str) -> Vec<Instant> {
        self.with_state(|s| s.idle_emitted.get(session_id).cloned().unwrap_or_default())
    }

    /// Waits (tokio time) until `pred` holds; panics naming `what` after `limit`.
    pub async fn wait_until(&self, what: &str, limit: Duration, pred: impl Fn(&FakeState) -> bool) {
        let mut version = self.shared.version.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if pred(&self.shared.lock()) {
                return;
            }
            match tokio::time::timeout_at(deadline, version.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => panic!("fake server gone while waiting for {what}"),
                Err(_) => panic!("timed out waiting for {what}"),
            }
        }
    }

    /// Waits until a turn of `session_id` is under way on the server (the prompt's answer comes
    /// before the turn starts), so a test can then end it with [`Self::finish_silently`].
    pub async fn wait_running(&self, session_id: &str, limit: Duration) {
        let what = format!("a running turn of {session_id}");
        self.wait_until(&what, limit, |s| s.running.contains_key(session_id))
            .await;
    }

    /// Waits until `session_id` has finished `turns` turns.
    pub async fn wait_turns(&self, session_id: &str, turns: usize, limit: Duration) {
        let what = format!("{turns} finished turn(s) of {session_id}");
        self.wait_until(&what, limit, |s| {
            s.turns_done.get(session_id).copied().unwrap_or(0) >= turns
        })
        .await;
    }

    /// Puts the server's clock `behind` the real one: the ids and times of the messages it makes
    /// from now on are that much older.
    pub fn set_clock_behind(&self, behind: Duration) {
        self.shared.lock().clock_behind_ms = behind.as_millis() as i64;
    }

    /// Makes every page of `session_id`'s messages name `cursor` as the older page, forever.
    pub fn repeat_cursor(&self, session_id: &str, cursor: &str) {
        self.shared
            .lock()
            .repeated_cursor
            .insert(session_id.to_owned(), cursor.to_owned());
    }

    /// Makes every request to `route` (e.g. `POST /session`) wait `delay` of real time first.
    pub fn delay_route(&self, route: &str, delay: Duration) {
        self.shared
            .lock()
            .route_delays
            .insert(route.to_owned(), delay);
    }

    /// Runs `action` once, right after the fake answered `route` for `session_id` (the answer is
    /// on its way, the client has not read it yet).
    pub fn after_response(
        &self,
        route: &str,
        session_id: &str,
        action: impl FnOnce() + Send + 'static,
    ) {
        self.shared.lock().after_hooks.push((
            route.to_owned(),
            session_id.to_owned(),
            Box::new(action),
        ));
    }

    /// Refuses (503) or accepts new event streams.
    pub fn block_event_streams(&self, blocked: bool) {
        self.shared.lock().streams_blocked = blocked;
    }

    /// While `held`, a new event stream sends `server.connected` at once but subscribes to
    /// events only when released: what is emitted in between never reaches it. The real
    /// server subscribes a stream some time after its `server.connected` (sessions created up to
    /// ~40 ms after it were lost on a busy 1.18.33), so a client must not take the stream as
    /// complete from its first frame.
    pub fn hold_subscriptions(&self, held: bool) {
        self.shared.subscriptions_held.send_replace(held);
    }

    /// Ends every open event stream (the client sees the server end it).
    pub fn drop_event_streams(&self) {
        self.shared.drop_streams.send_modify(|g| *g += 1);
    }

    /// Ends the running turn of `session_id` as completed without emitting any event, as if it
    /// ended while nobody listened. Returns whether a turn was running.
    pub fn finish_silently(&self, session_id: &str) -> bool {
        let sender = self.shared.lock().running.remove(session_id);
        sender.is_some_and(|s| s.send(Action::Silent).is_ok())
    }
}

// ---------------------------------------------------------------------------------------------
// Projects, paged listings, and the faults a resync meets.

/// The id of the git project the fake's own directory is.
pub const OWN_PROJECT: &str = "prj_fake";

/// A held `GET /session/:id/message`: the test releases it.
struct Hold {
    release: oneshot::Receiver<()>,
    /// Whether the page is read when released (else when the request arrived).
    snapshot_at_release: bool,
}

/// Listing faults and holds.
#[derive(Default)]
struct SyncFaults {
    /// Listings that answer 500, by `directory` (`""` is the plain `GET /session`, `"*"` the
    /// cross-project listing), with how many more times.
    listings: HashMap<String, usize>,
    /// `GET /session/:id/message` that answer 500, with how many more times.
    messages: HashMap<String, usize>,
    /// Holds for the next `GET /session/:id/message`.
    holds: HashMap<String, Hold>,
    /// Sessions whose messages request is being held now.
    held: Vec<String>,
    /// Git projects besides the own one: `(id, worktree)`.
    projects: Vec<(String, String)>,
}

/// The project a directory belongs to: a git project whose worktree holds it, else `global`.
fn project_of(st: &FakeState, directory: &str) -> String {
    let inside =
        |worktree: &str| directory == worktree || directory.starts_with(&format!("{worktree}/"));
    if inside(&st.directory) {
        return OWN_PROJECT.to_owned();
    }
    st.sync
        .projects
        .iter()
        .find(|(_, w)| inside(w))
        .map_or_else(|| "global".to_owned(), |(id, _)| id.clone())
}

/// A streamed reply the test drives delta by delta ([`FakeOpencode::begin_stream`]).
#[derive(Debug, Clone)]
pub struct Streaming {
    /// The session.
    pub session_id: String,
    /// The assistant message.
    pub message_id: String,
    /// Its text part.
    pub part_id: String,
    directory: String,
}

impl FakeOpencode {
    /// Adds a git project (worktree `worktree`): its sessions are listed under its id.
    pub fn add_project(&self, id: &str, worktree: &str) {
        self.shared
            .lock()
            .sync
            .projects
            .push((id.to_owned(), worktree.to_owned()));
    }

    /// Adds `n` sessions in `directory` directly (no events), each updated 1 ms after the last.
    pub fn seed_sessions_in(&self, directory: &str, n: usize) -> Vec<String> {
        let mut st = self.shared.lock();
        let project = project_of(&st, directory);
        let base = now_ms();
        let ids: Vec<String> = (0..n)
            .map(|i| {
                let id = ids::ascending("ses");
                let t = base + i as i64;
                let session = json!({
                    "id": id, "slug": "seeded", "projectID": project, "directory": directory,
                    "title": format!("seeded {i}"), "version": VERSION,
                    "time": {"created": t, "updated": t},
                });
                st.sessions.insert(id.clone(), session);
                id
            })
            .collect();
        drop(st);
        self.shared.bump();
        ids
    }

    /// Makes the next `times` listings of `directory` answer 500: `Some("")` the plain
    /// `GET /session`, `Some(dir)` that directory's, `None` the cross-project listing.
    pub fn fail_listings(&self, directory: Option<&str>, times: usize) {
        let key = directory.unwrap_or("*").to_owned();
        self.shared.lock().sync.listings.insert(key, times);
    }

    /// Makes the next `times` `GET /session/:id/message` of `session_id` answer 500.
    pub fn fail_messages(&self, session_id: &str, times: usize) {
        self.shared
            .lock()
            .sync
            .messages
            .insert(session_id.to_owned(), times);
    }

    /// Holds the next `GET /session/:id/message` of `session_id` until the returned sender is
    /// used (or dropped). The page is read when released if `snapshot_at_release`, else when
    /// the request arrives.
    pub fn hold_messages(
        &self,
        session_id: &str,
        snapshot_at_release: bool,
    ) -> oneshot::Sender<()> {
        let (tx, release) = oneshot::channel();
        self.shared.lock().sync.holds.insert(
            session_id.to_owned(),
            Hold {
                release,
                snapshot_at_release,
            },
        );
        tx
    }

    /// Waits until a messages request of `session_id` is being held.
    pub async fn wait_held(&self, session_id: &str, limit: Duration) {
        self.wait_until("a held messages request", limit, |st| {
            st.sync.held.iter().any(|s| s == session_id)
        })
        .await;
    }

    /// Starts an assistant reply the test streams itself: session busy, assistant message
    /// (not completed) and an empty text part, each emitted as the real server does.
    pub fn begin_stream(&self, session_id: &str) -> Streaming {
        let mut st = self.shared.lock();
        let directory = st
            .sessions
            .get(session_id)
            .and_then(|s| s["directory"].as_str())
            .map_or_else(|| self.directory.clone(), str::to_owned);
        let user_id = ids::message_id();
        let user = json!({"id": user_id, "sessionID": session_id, "role": "user",
            "time": {"created": now_ms()}, "agent": "build",
            "model": {"providerID": "fake", "modelID": "fake-model"}});
        st.put_info(session_id, user.clone());
        self.shared.emit(
            &directory,
            "message.updated",
            json!({"sessionID": session_id, "info": user}),
        );
        st.statuses
            .insert(session_id.to_owned(), json!({"type": "busy"}));
        self.shared.emit(
            &directory,
            "session.status",
            json!({"sessionID": session_id, "status": {"type": "busy"}}),
        );
        let message_id = ids::message_id();
        let assistant = json!({"id": message_id, "parentID": user_id, "role": "assistant",
            "agent": "build", "modelID": "fake-model", "providerID": "fake",
            "time": {"created": now_ms()}, "sessionID": session_id});
        st.put_info(session_id, assistant.clone());
        self.shared.emit(
            &directory,
            "message.updated",
            json!({"sessionID": session_id, "info": assistant}),
        );
        let part_id = ids::part_id();
        let part = json!({"id": part_id, "messageID": message_id, "sessionID": session_id,
            "type": "text", "text": "", "time": {"start": now_ms()}});
        st.put_part(session_id, part.clone());
        self.shared.emit(
            &directory,
            "message.part.updated",
            json!({"sessionID": session_id, "part": part, "time": now_ms()}),
        );
        drop(st);
        self.shared.bump();
        Streaming {
            session_id: session_id.to_owned(),
            message_id,
            part_id,
            directory,
        }
    }

    /// The text part of a streamed reply as the server has it now.
    pub fn streamed_text(&self, stream: &Streaming) -> String {
        self.with_state(|st| {
            st.messages_of(&stream.session_id)
                .iter()
                .find(|m| m.info["id"] == stream.message_id.as_str())
                .and_then(|m| m.parts.iter().find(|p| p["id"] == stream.part_id.as_str()))
                .and_then(|p| p["text"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
    }

    /// Streams one delta of a reply: stored, then emitted as `message.part.delta`.
    pub fn stream_delta(&self, stream: &Streaming, delta: &str) {
        let mut st = self.shared.lock();
        if let Some(part) = st
            .messages
            .get_mut(&stream.session_id)
            .and_then(|l| {
                l.iter_mut()
                    .find(|m| m.info["id"] == stream.message_id.as_str())
            })
            .and_then(|m| {
                m.parts
                    .iter_mut()
                    .find(|p| p["id"] == stream.part_id.as_str())
            })
        {
            let text = format!("{}{delta}", part["text"].as_str().unwrap_or_default());
            part["text"] = json!(text);
        }
        self.shared.emit(
            &stream.directory,
            "message.part.delta",
            json!({
            "sessionID": stream.session_id, "messageID": stream.message_id,
            "partID": stream.part_id, "field": "text", "delta": delta}),
        );
        drop(st);
        self.shared.bump();
    }

    /// Ends a streamed reply: the full part, the completed message, idle.
    pub fn end_stream(&self, stream: &Streaming) {
        let mut st = self.shared.lock();
        let sid = stream.session_id.clone();
        let Some(message) = st.messages.get_mut(&sid).and_then(|l| {
            l.iter_mut()
                .find(|m| m.info["id"] == stream.message_id.as_str())
        }) else {
            return;
        };
        message.info["time"]["completed"] = json!(now_ms());
        message.info["finish"] = json!("stop");
        let info = message.info.clone();
        let part = message
            .parts
            .iter()
            .find(|p| p["id"] == stream.part_id.as_str())
            .cloned();
        if let Some(part) = part {
            self.shared.emit(
                &stream.directory,
                "message.part.updated",
                json!({"sessionID": sid, "part": part, "time": now_ms()}),
            );
        }
        self.shared.emit(
            &stream.directory,
            "message.updated",
            json!({"sessionID": sid, "info": info}),
        );
        st.statuses.remove(&sid);
        self.shared.emit(
            &stream.directory,
            "session.status",
            json!({"sessionID": sid, "status": {"type": "idle"}}),
        );
        self.shared
            .emit(&stream.directory, "session.idle", json!({"sessionID": sid}));
        drop(st);
        self.shared.bump();
    }
}

/// Takes one injected failure of a listing.
fn take_listing_failure(st: &mut FakeState, key: &str) -> bool {
    match st.sync.listings.get_mut(key) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

fn take_message_failure(shared: &Shared, id: &str) -> bool {
    let mut st = shared.lock();
    match st.sync.messages.get_mut(id) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

fn take_message_hold(shared: &Shared, id: &str) -> Option<Hold> {
    shared.lock().sync.holds.remove(id)
}

async fn held_messages(
    shared: &Arc<Shared>,
    id: &str,
    query: &HashMap<String, String>,
    hold: Hold,
) -> Response {
    let early = (!hold.snapshot_at_release).then(|| list_messages(shared, id, query));
    shared.lock().sync.held.push(id.to_owned());
    shared.bump();
    let _ = hold.release.await;
    shared.lock().sync.held.retain(|s| s != id);
    early.unwrap_or_else(|| list_messages(shared, id, query))
}

/// `GET /project`: the own project, the added ones, and `global` (worktree `/`).
fn list_projects(shared: &Shared) -> Response {
    let st = shared.lock();
    let mut list = vec![json!({"id": OWN_PROJECT, "worktree": st.directory, "sandboxes": []})];
    for (id, worktree) in &st.sync.projects {
        list.push(json!({"id": id, "worktree": worktree, "sandboxes": []}));
    }
    list.push(json!({"id": "global", "worktree": "/", "sandboxes": []}));
    json_response(StatusCode::OK, Value::Array(list))
}

/// `GET /session` as OpenCode answers it: without a directory the own project's sessions, with
/// one that directory's; `everywhere` (`/experimental/session`) every project's, archived ones
/// only with `archived=true`. The newest `limit` (100 without one) by `time.updated`.
fn list_sessions(
    shared: &Shared,
    directory: Option<&str>,
    query: &HashMap<String, String>,
    everywhere: bool,
) -> Response {
    let mut st = shared.lock();
    let key = if everywhere {
        "*"
    } else {
        directory.unwrap_or("")
    };
    if take_listing_failure(&mut st, key) {
        drop(st);
        return injected_failure();
    }
    let archived = query.get("archived").is_some_and(|a| a == "true");
    let mut list: Vec<&Value> = st
        .sessions
        .values()
        .filter(|s| {
            let dir = s["directory"].as_str().unwrap_or_default();
            match (everywhere, directory) {
                (true, _) => archived || s["time"]["archived"].is_null(),
                (false, Some(d)) => dir == d,
                (false, None) => project_of(&st, dir) == OWN_PROJECT,
            }
        })
        .collect();
    list.sort_by(|a, b| {
        b["time"]["updated"]
            .as_i64()
            .cmp(&a["time"]["updated"].as_i64())
    });
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(100);
    let page: Vec<Value> = list.into_iter().take(limit).cloned().collect();
    json_response(StatusCode::OK, Value::Array(page))
}
