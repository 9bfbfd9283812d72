//! The in-memory state: sessions, statuses, pending permission requests, and the transcripts
//! of sessions someone follows.
//! Applying an event mutates in place (deltas append to the part's text) and returns the
//! [`Change`] the UI needs, never a copy of a whole transcript.

use std::collections::{BTreeMap, HashMap, HashSet};

use crosscheck_opencode::shared::IdHash;
use crosscheck_opencode::{Event, PermissionRequest, QuestionRequest, Session, SessionStatus};

use crate::model::attention::AttentionReason;

use crate::api_types::{Change, SessionFailure, TranscriptPage};
use crate::model::ids::ServerId;

mod attention;
mod loads;
mod transcripts;
mod views;

pub use loads::{LoadToken, SessionsSnapshot};
pub use transcripts::{Transcript, assistant_text, client_follower};

/// Everything the backend knows about the servers' sessions.
#[derive(Debug, Default)]
pub struct Store {
    sessions: HashMap<String, Session>,
    statuses: HashMap<String, SessionStatus>,
    /// Pending permission requests: by session, then by request id.
    permissions: BTreeMap<String, BTreeMap<String, PermissionRequest>>,
    /// Followed transcripts by session id (looked up for every streamed event).
    transcripts: HashMap<String, Transcript, IdHash>,
    /// The last up-front or turn error of each session, with the serial it was recorded under.
    errors: HashMap<String, (u64, SessionFailure)>,
    /// Counts recorded errors, so a waiter can tell an error newer than its prompt.
    error_serial: u64,
    /// Session-level events recorded while a session list is being fetched, with the server
    /// each came from.
    sessions_recording: Vec<(ServerId, Event)>,
    /// The server of each session not on the main one.
    server_of: HashMap<String, ServerId>,
    /// Session list fetches in progress: token and where in the recording each started.
    sessions_loads: HashMap<u64, usize>,
    /// The last token handed out for a fetch.
    last_token: u64,
    /// Cold reviews' scratch sessions seen on the event stream or held for a turn: never
    /// listed, their status events dropped; a deletion is told only to a turn waiting on one.
    scratch: HashSet<String>,
    /// Pending questions (OpenCode's `question` tool): by session, then by request id.
    questions: BTreeMap<String, BTreeMap<String, QuestionRequest>>,
    /// When each pending permission or question was first seen here (ms), by request id.
    asked_at: HashMap<String, i64>,
    /// Attention marks raised by the attention follower (a finished turn, a stopped loop...).
    marks: HashMap<String, Vec<AttentionReason>>,
    /// Sessions removed as deleted or gone: a fetched copy asked for before the removal and
    /// answered after it must not bring one back (only the server's events and listings do).
    removed: HashSet<String>,
    /// Servers removed from the list: nothing of theirs comes back, neither a late event, a
    /// listing finishing nor a flow's answer (a server's id is never given again).
    removed_servers: HashSet<ServerId>,
}

/// Most removed sessions remembered; past it the memory starts over (a late answer about a
/// session deleted that long ago is unlikely).
const MAX_REMOVED: usize = 10_000;

/// Whether a session is a cold review's scratch session (any process's), which no view lists.
pub fn is_scratch(session: &Session) -> bool {
    crosscheck_review::opencode_route::is_scratch_session(session.metadata.as_ref())
}

impl Store {
    /// All sessions, newest first.
    pub fn sessions(&self) -> Vec<Session> {
        let mut all: Vec<Session> = self.sessions.values().cloned().collect();
        all.sort_by(|a, b| {
            b.time
                .updated
                .cmp(&a.time.updated)
                .then_with(|| a.id.cmp(&b.id))
        });
        all
    }

    /// A session by id.
    pub fn session(&self, id: &str) -> Option<&Session> {
        self.sessions.get(id)
    }

    /// Whether the store holds a session: listed, or a cold review's scratch session (never
    /// listed) that has not been deleted.
    pub fn holds(&self, id: &str) -> bool {
        self.sessions.contains_key(id) || self.scratch.contains(id)
    }

    /// Holds a cold review's scratch session on `server` for a turn that runs in it (before
    /// its creation reaches the event stream): its transcript can then be followed and its
    /// deletion ends the wait. It is never listed.
    pub fn hold_scratch(&mut self, id: &str, server: &ServerId) {
        self.set_server(id, server);
        self.scratch.insert(id.to_owned());
    }

    /// A scratch session was deleted: forgets what a turn kept of it. A turn waiting on it
    /// (its transcript followed) is told by a removal, which no view lists anyway.
    fn forget_scratch(&mut self, id: &str) -> Option<Change> {
        self.server_of.remove(id);
        self.errors.remove(id);
        self.transcripts.remove(id).map(|_| Change::SessionRemoved {
            session_id: id.to_owned(),
        })
    }

    /// Non-idle statuses.
    pub fn statuses(&self) -> BTreeMap<String, SessionStatus> {
        self.statuses
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// A session's status (idle when unknown).
    pub fn status(&self, id: &str) -> SessionStatus {
        self.statuses
            .get(id)
            .cloned()
            .unwrap_or_else(SessionStatus::idle)
    }

    /// Pending permission requests, grouped by session, each session's in id order.
    pub fn permissions(&self) -> Vec<PermissionRequest> {
        self.permissions
            .values()
            .flat_map(|by_id| by_id.values().cloned())
            .collect()
    }

    /// A pending permission request.
    pub fn permission(&self, session_id: &str, request_id: &str) -> Option<&PermissionRequest> {
        self.permissions.get(session_id)?.get(request_id)
    }

    /// Keeps a pending permission request (replacing one with the same id).
    pub fn add_permission(&mut self, request: PermissionRequest) -> Change {
        self.note_asked(&request.id);
        self.permissions
            .entry(request.session_id.clone())
            .or_default()
            .insert(request.id.clone(), request.clone());
        Change::PermissionAsked { request }
    }

    /// Forgets an answered permission request; `None` when it was not pending.
    pub fn resolve_permission(&mut self, session_id: &str, request_id: &str) -> Option<Change> {
        let by_id = self.permissions.get_mut(session_id)?;
        by_id.remove(request_id)?;
        if by_id.is_empty() {
            self.permissions.remove(session_id);
        }
        self.asked_at.remove(request_id);
        Some(Change::PermissionResolved {
            session_id: session_id.to_owned(),
            request_id: request_id.to_owned(),
        })
    }

    /// A followed transcript.
    pub fn transcript(&self, id: &str) -> Option<&Transcript> {
        self.transcripts.get(id)
    }

    /// A followed transcript, for changes.
    pub fn transcript_mut(&mut self, id: &str) -> Option<&mut Transcript> {
        self.transcripts.get_mut(id)
    }

    /// Starts keeping a transcript (or replaces its window, keeping its followers and fetches).
    pub fn put_transcript(&mut self, id: &str, mut transcript: Transcript) {
        if let Some(old) = self.transcripts.remove(id) {
            transcript.followers = old.followers;
            transcript.recording = old.recording;
            transcript.loads = old.loads;
        }
        self.transcripts.insert(id.to_owned(), transcript);
    }

    /// Ids of loaded transcripts someone follows.
    pub fn followed(&self) -> Vec<String> {
        self.transcripts
            .iter()
            .filter(|(_, t)| t.loaded)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Ids of loaded transcripts someone follows of sessions on `server`.
    pub fn followed_on(&self, server: &ServerId) -> Vec<String> {
        self.transcripts
            .iter()
            .filter(|(id, t)| t.loaded && self.server_of(id) == *server)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The server a session lives on (the main one when not known otherwise).
    pub fn server_of(&self, session_id: &str) -> ServerId {
        self.server_of
            .get(session_id)
            .cloned()
            .unwrap_or_else(ServerId::main)
    }

    /// Notes which server a session lives on (before it is upserted).
    pub fn set_server(&mut self, session_id: &str, server: &ServerId) {
        if server.is_main() {
            self.server_of.remove(session_id);
        } else {
            self.server_of.insert(session_id.to_owned(), server.clone());
        }
    }

    /// Sessions, followed transcripts, followers and kept text per server (for `/api/stats`).
    pub fn server_stats(&self) -> BTreeMap<String, crate::api::ServerStats> {
        let mut out: BTreeMap<String, crate::api::ServerStats> = BTreeMap::new();
        for id in self.sessions.keys() {
            out.entry(self.server_of(id).into_string())
                .or_default()
                .sessions += 1;
        }
        for (id, t) in &self.transcripts {
            let entry = out.entry(self.server_of(id).into_string()).or_default();
            entry.transcripts += 1;
            entry.followers += t.followers.len();
            entry.transcript_bytes += t.text_bytes();
        }
        out
    }

    /// Forgets every session of a removed server, and takes nothing of it from then on.
    pub fn remove_server(&mut self, server: &ServerId) -> Option<Change> {
        self.removed_servers.insert(server.clone());
        let gone: Vec<String> = self
            .sessions
            .keys()
            .filter(|id| self.server_of(id) == *server)
            .cloned()
            .collect();
        if gone.is_empty() {
            return None;
        }
        for id in &gone {
            self.forget_session(id);
        }
        Some(self.sessions_reset_change())
    }

    /// A page for the UI: the whole loaded window.
    pub fn page(&self, id: &str, seq: u64) -> Option<TranscriptPage> {
        let t = self.transcripts.get(id)?;
        Some(TranscriptPage {
            seq,
            session_id: id.to_owned(),
            messages: t.messages.clone(),
            has_older: t.older_cursor.is_some(),
        })
    }

    /// Replaces sessions, statuses and pending permission requests after a (re)connect.
    pub fn reset_sessions(
        &mut self,
        sessions: Vec<Session>,
        statuses: HashMap<String, SessionStatus>,
        permissions: Vec<PermissionRequest>,
    ) -> Change {
        self.sessions = sessions.into_iter().map(|s| (s.id.clone(), s)).collect();
        self.statuses = statuses.into_iter().filter(|(_, s)| !s.is_idle()).collect();
        self.permissions.clear();
        for request in permissions {
            self.permissions
                .entry(request.session_id.clone())
                .or_default()
                .insert(request.id.clone(), request);
        }
        self.transcripts
            .retain(|id, _| self.sessions.contains_key(id));
        self.errors.retain(|id, _| self.sessions.contains_key(id));
        self.sessions_reset_change()
    }

    fn sessions_reset_change(&self) -> Change {
        Change::SessionsReset {
            sessions: self.session_views(),
            statuses: self.statuses(),
            permissions: self.permissions(),
        }
    }

    /// Upserts one session, unchecked: for the server's events. An Api reply goes through
    /// [`Store::upsert_fetched_session`], which keeps newer and removed sessions as they are.
    fn upsert_session(&mut self, session: Session) -> Change {
        self.sessions.insert(session.id.clone(), session.clone());
        Change::SessionUpserted {
            session: self.view(&session),
        }
    }

    /// Forgets a session that was deleted or is gone from its server.
    pub fn remove_session(&mut self, id: &str) -> Change {
        self.forget_session(id);
        Change::SessionRemoved {
            session_id: id.to_owned(),
        }
    }

    /// Drops everything held about a session and notes it as removed (see `removed`): for a
    /// deletion and for a removed server alike.
    fn forget_session(&mut self, id: &str) {
        if self.removed.len() >= MAX_REMOVED {
            self.removed.clear();
        }
        self.removed.insert(id.to_owned());
        self.sessions.remove(id);
        self.server_of.remove(id);
        self.statuses.remove(id);
        self.permissions.remove(id);
        self.questions.remove(id);
        self.marks.remove(id);
        self.transcripts.remove(id);
        self.errors.remove(id);
    }

    /// Whether a server was removed from the list (see `removed_servers`).
    fn is_removed_server(&self, server: &ServerId) -> bool {
        self.removed_servers.contains(server)
    }

    /// Applies one server event; returns the change to push, if any. While a fetch is in
    /// progress the event is also recorded, to be merged onto the fetched page; a transcript
    /// whose first page is still loading only records it.
    pub fn apply(&mut self, event: Event) -> Option<Change> {
        self.apply_from(&ServerId::main(), event)
    }

    /// [`Store::apply`] for an event from `server`'s stream.
    pub fn apply_from(&mut self, server: &ServerId, event: Event) -> Option<Change> {
        if !self.record(server, &event) {
            return None;
        }
        self.apply_now(server, event)
    }

    /// Applies an event now: as it comes, or replayed after a listing. A removed server's
    /// events are dropped here, so that neither path brings anything of it back.
    fn apply_now(&mut self, server: &ServerId, event: Event) -> Option<Change> {
        if self.is_removed_server(server) {
            return None;
        }
        if let Event::SessionCreated(s) | Event::SessionUpdated(s) = &event {
            self.set_server(&s.id, server);
        }
        match &event {
            Event::SessionCreated(s) | Event::SessionUpdated(s) if is_scratch(s) => {
                self.scratch.insert(s.id.clone());
                return None;
            }
            Event::SessionDeleted(s) if self.scratch.remove(&s.id) => {
                return self.forget_scratch(&s.id);
            }
            Event::SessionStatus { session_id, .. } | Event::SessionIdle { session_id }
                if self.scratch.contains(session_id) =>
            {
                return None;
            }
            _ => {}
        }
        match event {
            Event::SessionCreated(s) | Event::SessionUpdated(s) => {
                self.removed.remove(&s.id);
                Some(self.upsert_session(*s))
            }
            Event::SessionDeleted(s) => Some(self.remove_session(&s.id)),
            // OpenCode says `busy` again at each step of a turn: a status the session already
            // has changes nothing, so no change goes out (each one cost every UI a redraw).
            Event::SessionStatus { session_id, status }
                if !status.is_idle() && self.statuses.get(&session_id) == Some(&status) =>
            {
                None
            }
            Event::SessionStatus { session_id, status } => {
                Some(self.set_status(session_id, status))
            }
            Event::SessionIdle { session_id } => {
                if self.statuses.contains_key(&session_id) {
                    Some(self.set_status(session_id, SessionStatus::idle()))
                } else {
                    None
                }
            }
            Event::MessageUpdated(info) => {
                let t = self.transcripts.get_mut(&info.session_id)?;
                t.upsert_info((*info).clone());
                Some(Change::MessageUpserted { info: *info })
            }
            Event::MessageRemoved {
                session_id,
                message_id,
            } => {
                let t = self.transcripts.get_mut(&session_id)?;
                t.remove_message(&message_id)
                    .then_some(Change::MessageRemoved {
                        session_id,
                        message_id,
                    })
            }
            Event::PartUpdated(part) => {
                let t = self.transcripts.get_mut(&part.session_id)?;
                t.upsert_part((*part).clone())
                    .then_some(Change::PartUpserted { part: *part })
            }
            Event::PartDelta {
                session_id,
                message_id,
                part_id,
                field,
                delta,
            } => {
                let t = self.transcripts.get_mut(session_id.as_str())?;
                t.append_delta(&message_id, &part_id, &field, &delta)
                    .then_some(Change::PartDelta {
                        session_id,
                        message_id,
                        part_id,
                        field,
                        delta,
                    })
            }
            Event::PartRemoved {
                session_id,
                message_id,
                part_id,
            } => {
                let t = self.transcripts.get_mut(&session_id)?;
                t.remove_part(&message_id, &part_id)
                    .then_some(Change::PartRemoved {
                        session_id,
                        message_id,
                        part_id,
                    })
            }
            Event::PermissionAsked(request) => Some(self.add_permission(*request)),
            Event::PermissionReplied {
                session_id,
                request_id,
                ..
            } => self.resolve_permission(&session_id, &request_id),
            Event::QuestionAsked(request) => self.add_question(*request),
            Event::QuestionResolved {
                session_id,
                request_id,
            } => self.resolve_question(&session_id, &request_id),
            Event::SessionError { session_id, error } => {
                self.record_session_error(session_id?, error.as_ref())
            }
            Event::TodoUpdated { session_id, todos } => Some(Change::Todos { session_id, todos }),
            Event::Worktree {
                name,
                branch,
                failure,
            } => Some(Change::Worktree {
                name,
                branch,
                failure,
            }),
            // Pushed once per batch and directory instead (`file_events`).
            Event::SessionDiff { .. }
            | Event::FileEdited { .. }
            | Event::FileWatcherUpdated { .. }
            | Event::BranchUpdated => None,
            Event::ServerConnected
            | Event::Heartbeat
            | Event::CommandExecuted { .. }
            | Event::Other(_) => None,
        }
    }

    fn set_status(&mut self, session_id: String, status: SessionStatus) -> Change {
        if status.is_idle() {
            self.statuses.remove(&session_id);
        } else {
            // A new turn runs: the previous turn's error no longer describes the session.
            self.errors.remove(&session_id);
            self.statuses.insert(session_id.clone(), status.clone());
        }
        Change::Status { session_id, status }
    }
}

// ---- session errors (`session.error`) -------------------------------------------------------

impl Store {
    /// The last error a session's turn failed with, until its next turn starts.
    pub fn session_error(&self, id: &str) -> Option<&SessionFailure> {
        self.errors.get(id).map(|(_, e)| e)
    }

    /// The serial of the session's last recorded error (0 when none): an error recorded after
    /// a prompt was sent has a larger serial than this had before sending.
    pub fn session_error_serial(&self, id: &str) -> u64 {
        self.errors.get(id).map_or(0, |(serial, _)| *serial)
    }

    /// Every session's last error.
    pub fn session_errors(&self) -> BTreeMap<String, SessionFailure> {
        self.errors
            .iter()
            .map(|(id, (_, e))| (id.clone(), e.clone()))
            .collect()
    }

    /// Keeps the error of a `session.error` event and returns the change for the UI. The
    /// server sends an up-front failure twice (the second time with a stack trace, and for some
    /// errors, such as an unknown agent, with only the error's name for words): the repeat is
    /// no change, and the first words are kept. An abort is the user's own doing, not an error
    /// to show.
    fn record_session_error(
        &mut self,
        session_id: String,
        error: Option<&serde_json::Value>,
    ) -> Option<Change> {
        let failure = SessionFailure::from_server(error);
        if failure.name == "MessageAbortedError" {
            return None;
        }
        if let Some((_, known)) = self.errors.get(&session_id)
            && known.name == failure.name
            && (failure.message.contains(known.message.as_str())
                || failure.message.trim() == failure.name)
        {
            return None;
        }
        self.error_serial += 1;
        self.errors
            .insert(session_id.clone(), (self.error_serial, failure.clone()));
        Some(Change::SessionError {
            session_id,
            error: failure,
        })
    }
}

#[cfg(test)]
mod tests {
    use crosscheck_opencode::{MessageInfo, MessageWithParts, Part};

    use super::*;
    use crate::api_types::LinkKind;

    fn session(id: &str, openchamber: Option<serde_json::Value>) -> Session {
        let metadata = openchamber.map(|o| {
            let mut m = serde_json::Map::new();
            m.insert("openchamber".into(), o);
            m
        });
        Session {
            id: id.into(),
            metadata,
            ..Default::default()
        }
    }

    #[test]
    fn review_links_are_resolved_for_the_ui() {
        let mut store = Store::default();
        store.upsert_session(session(
            "ses_a",
            Some(serde_json::json!({"reviewSessionID": "ses_r"})),
        ));
        let review = session(
            "ses_r",
            Some(serde_json::json!({"kind": "review", "originalSessionID": "ses_a"})),
        );
        // Before the review session is known, the original's link does not resolve.
        let a = store.session("ses_a").cloned().expect("a");
        let link = store.view(&a).link.expect("a link");
        assert_eq!(link.kind, LinkKind::Original);
        assert_eq!(link.other_session_id, "ses_r");
        assert!(!link.other_exists);

        store.upsert_session(review.clone());
        assert!(store.view(&a).link.is_some_and(|l| l.other_exists));
        let r = store.view(&review).link.expect("r link");
        assert_eq!(
            (r.kind, r.other_session_id.as_str(), r.other_exists),
            (LinkKind::Review, "ses_a", true)
        );
        // The original is what changes when the review session comes or goes; a session linked
        // elsewhere is not.
        store.upsert_session(session(
            "ses_x",
            Some(serde_json::json!({"reviewSessionID": "ses_other"})),
        ));
        let partners = store.linked_to("ses_r");
        assert_eq!(partners.len(), 1);
        assert_eq!(partners[0].session.id, "ses_a");
        store.remove_session("ses_r");
        assert!(store.view(&a).link.is_some_and(|l| !l.other_exists));
        // A session without the namespace, or with a review kind but no original, has no link.
        assert!(store.view(&session("ses_b", None)).link.is_none());
        let bad = session("ses_c", Some(serde_json::json!({"kind": "review"})));
        assert!(store.view(&bad).link.is_none());
    }
    use crosscheck_opencode::event::parse_frame;

    const SAMPLE: &str = include_str!("../../../opencode/tests/fixtures/sample-events.sse");

    fn events() -> Vec<Event> {
        SAMPLE
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|l| parse_frame(l).expect("parses").event)
            .collect()
    }

    #[test]
    fn replaying_the_recorded_stream_builds_the_transcript() {
        let mut store = Store::default();
        let sid = "ses_dd2f44b87ffewDAwEqU3YCuAT7";
        store.put_transcript(sid, Transcript::from_page(Vec::new(), None));
        let mut deltas = 0;
        let mut saw_busy = false;
        for e in events() {
            if let Some(Change::PartDelta { .. }) = store.apply(e.clone()) {
                deltas += 1;
            }
            if let Event::SessionStatus { status, .. } = &e {
                saw_busy |= status.kind == "busy";
            }
            // Deleted at the end of the recording.
            if matches!(e, Event::SessionDeleted(_)) {
                assert!(store.session(sid).is_none());
                assert!(store.transcript(sid).is_none());
                return assert!(deltas > 0 && saw_busy);
            }
            if let Some(t) = store.transcript(sid) {
                for m in t.messages() {
                    assert_eq!(m.info.session_id, sid);
                }
            }
        }
        panic!("the recording ends with a delete");
    }

    #[test]
    fn deltas_find_their_part_after_messages_and_parts_move_in_front_of_it() {
        let sid = "ses_1";
        let info = |id: &str| MessageInfo {
            id: id.into(),
            session_id: sid.into(),
            role: "assistant".into(),
            ..MessageInfo::default()
        };
        let part = |message: &str, id: &str| Part {
            id: id.into(),
            session_id: sid.into(),
            message_id: message.into(),
            kind: "text".into(),
            text: Some(String::new()),
            ..Part::default()
        };
        let delta = |message: &str, id: &str, text: &str| Event::PartDelta {
            session_id: sid.into(),
            message_id: message.into(),
            part_id: id.into(),
            field: "text".into(),
            delta: text.into(),
        };
        let mut store = Store::default();
        store.put_transcript(sid, Transcript::from_page(Vec::new(), None));
        store.apply(Event::MessageUpdated(Box::new(info("msg_5"))));
        store.apply(Event::PartUpdated(Box::new(part("msg_5", "prt_5"))));
        store.apply(delta("msg_5", "prt_5", "a"));
        // A message sorted before it and a part sorted before its part shift both positions.
        store.apply(Event::MessageUpdated(Box::new(info("msg_1"))));
        store.apply(Event::PartUpdated(Box::new(part("msg_1", "prt_1"))));
        store.apply(delta("msg_5", "prt_5", "b"));
        store.apply(Event::PartUpdated(Box::new(part("msg_5", "prt_2"))));
        store.apply(delta("msg_5", "prt_5", "c"));
        store.apply(delta("msg_5", "prt_2", "x"));
        store.apply(delta("msg_1", "prt_1", "y"));
        store.apply(Event::PartRemoved {
            session_id: sid.into(),
            message_id: "msg_5".into(),
            part_id: "prt_2".into(),
        });
        store.apply(delta("msg_5", "prt_5", "d"));
        assert!(store.apply(delta("msg_5", "prt_2", "lost")).is_none());
        let t = store.transcript(sid).expect("followed");
        let text = |m: &str, p: &str| {
            let message = t.message(m).expect("message");
            let part = message.parts.iter().find(|x| x.id == p).expect("part");
            part.text.clone().unwrap_or_default()
        };
        assert_eq!(text("msg_5", "prt_5"), "abcd");
        assert_eq!(text("msg_1", "prt_1"), "y");
        assert_eq!(t.message("msg_5").expect("message").parts.len(), 1);
    }

    #[test]
    fn deltas_append_in_place_and_final_snapshot_matches() {
        let mut store = Store::default();
        let sid = "ses_dd2f44b87ffewDAwEqU3YCuAT7";
        store.put_transcript(sid, Transcript::from_page(Vec::new(), None));
        for e in events() {
            if matches!(e, Event::SessionDeleted(_)) {
                break;
            }
            store.apply(e);
        }
        let t = store.transcript(sid).expect("followed");
        let assistant: Vec<_> = t
            .messages()
            .iter()
            .filter(|m| m.info.role == "assistant")
            .collect();
        assert!(!assistant.is_empty());
        let text = assistant_text(assistant[0]);
        assert!(text.starts_with("FAKE-REPLY:"), "{text}");
        assert!(store.statuses().is_empty(), "idle at the end");
    }

    #[test]
    fn a_delta_for_an_unknown_part_or_message_changes_nothing_and_loses_nothing() {
        use crosscheck_opencode::event::FrameParser;
        let sid = "ses_1";
        let mut store = Store::default();
        store.put_transcript(sid, Transcript::from_page(Vec::new(), None));
        let mut parser = FrameParser::new();
        let mut apply = |store: &mut Store, kind: &str, props: String| {
            let frame = format!(
                r#"{{"directory":"/p","payload":{{"type":"{kind}","properties":{props}}}}}"#
            );
            store.apply(parser.parse(&frame).expect("parses").event)
        };
        let delta = |part: &str, text: &str| {
            format!(
                r#"{{"sessionID":"{sid}","messageID":"msg_1","partID":"{part}","field":"text","delta":"{text}"}}"#
            )
        };
        // No message yet, then a message without that part: nothing to append to.
        assert!(apply(&mut store, "message.part.delta", delta("prt_1", "lost")).is_none());
        let info = format!(r#"{{"info":{{"id":"msg_1","sessionID":"{sid}","role":"assistant"}}}}"#);
        assert!(apply(&mut store, "message.updated", info).is_some());
        assert!(apply(&mut store, "message.part.delta", delta("prt_9", "stray")).is_none());
        let part = format!(
            r#"{{"part":{{"id":"prt_1","messageID":"msg_1","sessionID":"{sid}","type":"text","text":"a"}}}}"#
        );
        assert!(apply(&mut store, "message.part.updated", part).is_some());
        let Some(Change::PartDelta {
            session_id,
            part_id,
            delta: appended,
            ..
        }) = apply(&mut store, "message.part.delta", delta("prt_1", r"b\u00e9"))
        else {
            panic!("a delta for a loaded part is pushed")
        };
        assert_eq!(
            (session_id.as_str(), part_id.as_str(), appended.as_str()),
            (sid, "prt_1", "bé")
        );
        // A delta for another field is not appended to the text.
        let other_field = format!(
            r#"{{"sessionID":"{sid}","messageID":"msg_1","partID":"prt_1","field":"reasoning","delta":"x"}}"#
        );
        assert!(apply(&mut store, "message.part.delta", other_field).is_none());
        let t = store.transcript(sid).expect("followed");
        let parts = &t.messages()[0].parts;
        assert_eq!(parts.len(), 1, "a stray delta adds no part");
        assert_eq!(parts[0].text.as_deref(), Some("abé"));
    }

    #[test]
    fn events_for_unfollowed_sessions_only_touch_the_list() {
        let mut store = Store::default();
        let mut changes = 0;
        for e in events() {
            if let Some(c) = store.apply(e) {
                assert!(!matches!(
                    c,
                    Change::PartDelta { .. }
                        | Change::MessageUpserted { .. }
                        | Change::PartUpserted { .. }
                ));
                changes += 1;
            }
        }
        assert!(changes > 0);
    }

    #[test]
    fn a_status_the_session_already_has_is_no_change() {
        let mut store = Store::default();
        let status = |kind: &str, attempt: Option<u32>| Event::SessionStatus {
            session_id: "a".into(),
            status: SessionStatus {
                kind: kind.into(),
                attempt,
                ..Default::default()
            },
        };
        assert!(store.apply(status("busy", None)).is_some());
        assert!(store.apply(status("busy", None)).is_none());
        // A retry, and its next attempt, are news; so is the turn's end, said twice.
        assert!(store.apply(status("retry", Some(1))).is_some());
        assert!(store.apply(status("retry", Some(2))).is_some());
        assert!(store.apply(status("retry", Some(2))).is_none());
        assert!(store.apply(status("idle", None)).is_some());
        assert!(store.apply(status("idle", None)).is_some());
        assert!(store.status("a").is_idle());
    }

    #[test]
    fn reset_clears_stale_busy() {
        let mut store = Store::default();
        store.apply(Event::SessionStatus {
            session_id: "a".into(),
            status: SessionStatus {
                kind: "busy".into(),
                ..Default::default()
            },
        });
        assert_eq!(store.status("a").kind, "busy");
        store.reset_sessions(
            vec![Session {
                id: "a".into(),
                ..Default::default()
            }],
            HashMap::new(),
            Vec::new(),
        );
        assert!(store.status("a").is_idle());
    }

    fn asked(id: &str, session_id: &str) -> Event {
        let frame = format!(
            r#"{{"directory":"/p","payload":{{"id":"evt_1","type":"permission.asked","properties":{{"id":"{id}","sessionID":"{session_id}","permission":"bash","patterns":["rm -rf build"],"metadata":{{"command":"rm -rf build"}},"always":["rm *"],"tool":{{"messageID":"msg_1","callID":"call_1"}}}}}}}}"#
        );
        parse_frame(&frame).expect("parses").event
    }

    fn replied(id: &str, session_id: &str) -> Event {
        Event::PermissionReplied {
            session_id: session_id.into(),
            request_id: id.into(),
            reply: "once".into(),
        }
    }

    #[test]
    fn permissions_are_kept_until_replied() {
        let mut store = Store::default();
        let Some(Change::PermissionAsked { request }) = store.apply(asked("per_2", "ses_b")) else {
            panic!("expected PermissionAsked")
        };
        assert_eq!(request.patterns, ["rm -rf build"]);
        store.apply(asked("per_1", "ses_a"));
        store.apply(asked("per_3", "ses_b"));
        let ids: Vec<_> = store.permissions().into_iter().map(|p| p.id).collect();
        assert_eq!(
            ids,
            ["per_1", "per_2", "per_3"],
            "grouped by session, by id"
        );
        assert!(store.permission("ses_b", "per_2").is_some());

        let change = store.apply(replied("per_2", "ses_b"));
        assert!(matches!(
            change,
            Some(Change::PermissionResolved { ref session_id, ref request_id })
                if session_id == "ses_b" && request_id == "per_2"
        ));
        assert!(store.permission("ses_b", "per_2").is_none());
        // A reply to something not pending (answered here already, or never seen) is no change.
        assert!(store.apply(replied("per_2", "ses_b")).is_none());
        assert!(store.apply(replied("per_9", "ses_z")).is_none());
        assert_eq!(store.permissions().len(), 2);
    }

    /// A read of a session sent before it was deleted and answered after must not bring it
    /// back (a handoff waiting on it would wait for ever); the server's own word does.
    #[test]
    fn a_session_fetched_after_its_removal_stays_removed_until_the_server_lists_it() {
        let mut store = Store::default();
        store.upsert_session(session("ses_a", None));
        store.remove_session("ses_a");
        assert!(
            store
                .upsert_fetched_session(session("ses_a", None))
                .is_none()
        );
        assert!(
            store.session("ses_a").is_none(),
            "a late answer brought it back"
        );
        assert!(!store.holds("ses_a"));
        // Another session is kept as fetched.
        assert!(
            store
                .upsert_fetched_session(session("ses_b", None))
                .is_some()
        );
        // An event from the server is its word: the session is there again.
        store.apply(Event::SessionUpdated(Box::new(session("ses_a", None))));
        assert!(store.session("ses_a").is_some());
        store.remove_session("ses_a");
        store.apply(Event::SessionCreated(Box::new(session("ses_a", None))));
        assert!(
            store
                .upsert_fetched_session(session("ses_a", None))
                .is_some()
        );
    }

    #[test]
    fn asking_again_replaces_and_removing_a_session_drops_its_permissions() {
        let mut store = Store::default();
        store.apply(asked("per_1", "ses_a"));
        store.apply(asked("per_1", "ses_a"));
        store.apply(asked("per_2", "ses_b"));
        assert_eq!(store.permissions().len(), 2);
        store.remove_session("ses_a");
        let ids: Vec<_> = store.permissions().into_iter().map(|p| p.id).collect();
        assert_eq!(ids, ["per_2"]);
    }

    #[test]
    fn reset_replaces_the_pending_permissions() {
        let mut store = Store::default();
        store.apply(asked("per_old", "ses_a"));
        let Event::PermissionAsked(fresh) = asked("per_new", "ses_b") else {
            unreachable!()
        };
        let change = store.reset_sessions(Vec::new(), HashMap::new(), vec![*fresh]);
        let Change::SessionsReset { permissions, .. } = change else {
            panic!("expected SessionsReset")
        };
        assert_eq!(permissions.len(), 1);
        assert_eq!(permissions[0].id, "per_new");
        assert!(store.permission("ses_a", "per_old").is_none());
        assert!(store.permission("ses_b", "per_new").is_some());
    }

    #[test]
    fn assistant_text_skips_reasoning_and_synthetic() {
        let part = |kind: &str, text: &str, synthetic: bool| Part {
            id: format!("prt_{kind}{text}"),
            kind: kind.into(),
            text: Some(text.into()),
            synthetic,
            ..Default::default()
        };
        let m = MessageWithParts {
            info: MessageInfo {
                id: "m".into(),
                role: "assistant".into(),
                ..Default::default()
            },
            parts: vec![
                part("reasoning", "think", false),
                part("text", "one", false),
                part("text", "hidden", true),
                part("text", "two", false),
            ],
        };
        assert_eq!(assistant_text(&m), "one\n\ntwo");
    }

    #[test]
    fn prepend_keeps_order_and_skips_duplicates() {
        let msg = |id: &str| MessageWithParts {
            info: MessageInfo {
                id: id.into(),
                ..Default::default()
            },
            parts: vec![],
        };
        let mut t = Transcript::from_page(vec![msg("m3"), msg("m4")], Some("c".into()));
        t.prepend(vec![msg("m1"), msg("m2"), msg("m3")], None);
        let ids: Vec<_> = t.messages().iter().map(|m| m.info.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m2", "m3", "m4"]);
        assert!(t.older_cursor.is_none());
        assert!(t.message("m2").is_some());
    }

    #[test]
    fn a_cold_reviews_scratch_session_never_reaches_a_view() {
        let mut store = Store::default();
        let mut scratch = session_at("ses_scratch", "Crosscheck cold review", 10);
        scratch.metadata = serde_json::json!({"crosscheck": {"coldReview": {"expiresAt": 99}}})
            .as_object()
            .cloned();
        // Another process's review: its events arrive on our stream.
        assert!(
            store
                .apply(Event::SessionCreated(scratch.clone().into()))
                .is_none()
        );
        assert!(
            store
                .apply(Event::SessionStatus {
                    session_id: "ses_scratch".into(),
                    status: SessionStatus {
                        kind: "busy".into(),
                        ..Default::default()
                    },
                })
                .is_none()
        );
        assert!(
            store
                .apply(Event::SessionUpdated(scratch.clone().into()))
                .is_none()
        );
        assert!(store.session("ses_scratch").is_none());
        assert!(store.session_views().is_empty());
        assert!(store.statuses().is_empty());
        assert!(
            store
                .apply(Event::SessionDeleted(scratch.clone().into()))
                .is_none()
        );
        // A listing that still has it (a review elsewhere runs) keeps it out too.
        let token = store.begin_sessions_load();
        store.finish_sessions_load(
            token,
            SessionsSnapshot {
                sessions: vec![scratch, session_at("ses_real", "Real", 5)],
                ..Default::default()
            },
        );
        let ids: Vec<String> = store
            .session_views()
            .into_iter()
            .map(|v| v.session.id)
            .collect();
        assert_eq!(ids, vec!["ses_real".to_owned()]);
    }

    #[test]
    fn a_scratch_session_held_for_a_turn_is_never_listed_and_its_deletion_ends_the_wait() {
        let mut store = Store::default();
        let mut scratch = session_at("ses_scratch", "Crosscheck cold review", 10);
        scratch.metadata = serde_json::json!({"crosscheck": {"coldReview": {"expiresAt": 99}}})
            .as_object()
            .cloned();
        let other = ServerId::from("srv_2");
        store.hold_scratch("ses_scratch", &other);
        assert!(store.holds("ses_scratch"));
        assert_eq!(store.server_of("ses_scratch"), other);
        // Read back from the server (a turn asking whether it still exists): held, not listed.
        assert!(store.upsert_fetched_session(scratch.clone()).is_none());
        assert!(store.session("ses_scratch").is_none());
        assert!(store.session_views().is_empty());
        // A turn follows its transcript; its deletion is told (to the waiter) and forgotten.
        store.follow("ses_scratch", "flow:x");
        assert!(matches!(
            store.apply(Event::SessionDeleted(scratch.into())),
            Some(Change::SessionRemoved { session_id }) if session_id == "ses_scratch"
        ));
        assert!(!store.holds("ses_scratch"));
        assert!(store.transcript("ses_scratch").is_none());
        assert_eq!(store.server_of("ses_scratch"), ServerId::main());
        assert!(store.session_views().is_empty());
    }

    fn session_at(id: &str, title: &str, updated: i64) -> Session {
        Session {
            id: id.into(),
            title: title.into(),
            time: crosscheck_opencode::SessionTime {
                updated,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_fetched_session_never_undoes_a_newer_one_from_events() {
        let mut store = Store::default();
        store.apply(Event::SessionUpdated(
            session_at("ses_a", "newer", 20).into(),
        ));
        assert!(
            store
                .upsert_fetched_session(session_at("ses_a", "older", 10))
                .is_none()
        );
        assert_eq!(
            store.session("ses_a").map(|s| s.title.as_str()),
            Some("newer")
        );
        assert!(
            store
                .upsert_fetched_session(session_at("ses_a", "newest", 30))
                .is_some()
        );
        assert_eq!(
            store.session("ses_a").map(|s| s.title.as_str()),
            Some("newest")
        );
    }

    #[test]
    fn a_session_list_keeps_newer_copies_and_replays_what_arrived_meanwhile() {
        let mut store = Store::default();
        let token = store.begin_sessions_load();
        // While the list is fetched: one session changes, one is created, one goes busy.
        store.apply(Event::SessionUpdated(
            session_at("ses_a", "renamed", 20).into(),
        ));
        store.apply(Event::SessionCreated(
            session_at("ses_new", "new", 25).into(),
        ));
        store.apply(Event::SessionStatus {
            session_id: "ses_b".into(),
            status: SessionStatus {
                kind: "busy".into(),
                ..Default::default()
            },
        });
        let snapshot = SessionsSnapshot {
            sessions: vec![session_at("ses_a", "old", 10), session_at("ses_b", "b", 5)],
            ..Default::default()
        };
        store.finish_sessions_load(token, snapshot);
        let titles: Vec<(String, String)> = store
            .sessions()
            .into_iter()
            .map(|s| (s.id, s.title))
            .collect();
        assert_eq!(
            titles,
            [
                ("ses_new".to_owned(), "new".to_owned()),
                ("ses_a".to_owned(), "renamed".to_owned()),
                ("ses_b".to_owned(), "b".to_owned())
            ]
        );
        assert_eq!(store.status("ses_b").kind, "busy");
    }

    #[test]
    fn one_servers_resync_leaves_the_other_servers_sessions_alone() {
        let mut store = Store::default();
        let other = ServerId::from("srv_b");
        store.apply_from(
            &other,
            Event::SessionCreated(Box::new(session_at("ses_b", "on b", 1))),
        );
        store.apply_from(
            &other,
            Event::SessionStatus {
                session_id: "ses_b".into(),
                status: SessionStatus {
                    kind: "busy".into(),
                    ..SessionStatus::idle()
                },
            },
        );
        store.upsert_session(session_at("ses_a", "on main", 1));
        // The main server's resync lists only its own session, and not b's.
        let token = store.begin_sessions_load();
        store.finish_sessions_load(
            token,
            SessionsSnapshot {
                sessions: vec![session_at("ses_a2", "new on main", 2)],
                ..Default::default()
            },
        );
        let ids: Vec<String> = store.sessions().into_iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            ["ses_a2", "ses_b"],
            "main's gone session went, b's stayed"
        );
        assert!(store.statuses().contains_key("ses_b"), "b's status kept");
        assert_eq!(store.server_of("ses_b"), other);
        assert_eq!(store.view(store.session("ses_b").unwrap()).server_id, other);
        assert!(store.server_of("ses_a2").is_main());
        // b's own resync replaces b's sessions only.
        let token = store.begin_sessions_load();
        store.finish_sessions_load(
            token,
            SessionsSnapshot {
                server: other.clone(),
                ..Default::default()
            },
        );
        let ids: Vec<String> = store.sessions().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["ses_a2"]);
        // Removing a server drops what is left of it.
        store.apply_from(
            &other,
            Event::SessionCreated(Box::new(session_at("ses_b2", "again", 3))),
        );
        assert!(store.remove_server(&other).is_some());
        let ids: Vec<String> = store.sessions().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["ses_a2"]);
    }

    #[test]
    fn a_removed_server_takes_nothing_back_from_late_events_listings_or_answers() {
        let mut store = Store::default();
        let other = ServerId::from("srv_b");
        store.upsert_session(session_at("ses_a", "on main", 1));
        store.apply_from(
            &other,
            Event::SessionCreated(Box::new(session_at("ses_b", "on b", 1))),
        );
        // A listing of b, the questions' listing and a flow's request on b are on their way
        // when b is removed; a question of b's came meanwhile.
        let token = store.begin_sessions_load();
        let questions = store.begin_sessions_load();
        store.apply_from(
            &other,
            Event::QuestionAsked(Box::new(crosscheck_opencode::QuestionRequest {
                id: "que_b".into(),
                session_id: "ses_b".into(),
                questions: Vec::new(),
            })),
        );
        assert!(store.remove_server(&other).is_some());
        store.finish_questions_load(questions, Vec::new(), &HashSet::new());
        assert!(
            store.questions().is_empty(),
            "a question of the removed server, replayed after the questions' listing"
        );
        assert!(
            store
                .finish_sessions_load(
                    token,
                    SessionsSnapshot {
                        server: other.clone(),
                        sessions: vec![session_at("ses_b", "listed late", 2)],
                        ..Default::default()
                    },
                )
                .is_none(),
            "a late listing of the removed server"
        );
        assert!(
            store
                .apply_from(
                    &other,
                    Event::SessionUpdated(Box::new(session_at("ses_b", "late event", 3))),
                )
                .is_none(),
            "a late event of the removed server"
        );
        assert!(
            store
                .upsert_fetched_session(session_at("ses_b", "late answer", 4))
                .is_none(),
            "a late answer about one of its sessions"
        );
        // A review session a handoff made on b just before b went.
        store.set_server("ses_review", &other);
        assert!(
            store
                .upsert_fetched_session(session_at("ses_review", "Review", 5))
                .is_none(),
            "a session made on the removed server"
        );
        let ids: Vec<String> = store.sessions().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["ses_a"]);
        // The main server goes on as before.
        assert!(
            store
                .apply_from(
                    &ServerId::main(),
                    Event::SessionUpdated(Box::new(session_at("ses_a", "renamed", 6))),
                )
                .is_some()
        );
        assert!(
            store
                .upsert_fetched_session(session_at("ses_m", "new on main", 7))
                .is_some()
        );
    }

    #[test]
    fn a_failed_project_listing_keeps_that_projects_sessions() {
        let mut store = Store::default();
        let mut theirs = session_at("ses_t", "theirs", 1);
        theirs.project_id = "prj_other".into();
        let mut gone = session_at("ses_g", "gone", 1);
        gone.project_id = "prj_own".into();
        store.upsert_session(theirs);
        store.upsert_session(gone);
        let token = store.begin_sessions_load();
        let snapshot = SessionsSnapshot {
            sessions: vec![session_at("ses_o", "own", 2)],
            failed_projects: [Some("prj_other".to_owned())].into_iter().collect(),
            ..Default::default()
        };
        store.finish_sessions_load(token, snapshot);
        let ids: Vec<String> = store.sessions().into_iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            ["ses_o", "ses_t"],
            "the unlisted project's kept, the listed one's gone"
        );
    }

    /// Messages `msg_<n>` for each n, each with no parts.
    fn messages(ns: std::ops::Range<u32>) -> Vec<MessageWithParts> {
        ns.map(|n| MessageWithParts {
            info: MessageInfo {
                id: format!("msg_{n:03}"),
                ..Default::default()
            },
            parts: Vec::new(),
        })
        .collect()
    }

    fn ids(store: &Store, id: &str) -> Vec<String> {
        store
            .transcript(id)
            .map(|t| t.messages().iter().map(|m| m.info.id.clone()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_reloaded_transcript_keeps_the_older_pages_it_had_loaded() {
        let mut store = Store::default();
        store.put_transcript(
            "ses_a",
            Transcript::from_page(messages(20..30), Some("cursor_20".into())),
        );
        store.follow("ses_a", "client:one");
        store
            .transcripts
            .get_mut("ses_a")
            .expect("followed")
            .prepend(messages(10..20), Some("cursor_10".into()));
        // The newest page again, one message newer: it starts inside the window.
        let token = store.begin_load("ses_a").expect("followed");
        let change = store.finish_load("ses_a", token, messages(21..31), Some("c".into()), 1);
        assert!(matches!(change, Some(Change::TranscriptReset { .. })));
        let expected: Vec<String> = messages(10..31).into_iter().map(|m| m.info.id).collect();
        assert_eq!(ids(&store, "ses_a"), expected, "the older pages stay");
        assert_eq!(
            store
                .transcript("ses_a")
                .and_then(|t| t.older_cursor.clone()),
            Some("cursor_10".into()),
            "and so does the cursor before them"
        );

        // The same page again changes nothing, and says so.
        let token = store.begin_load("ses_a").expect("followed");
        assert!(
            store
                .finish_load("ses_a", token, messages(21..31), Some("c".into()), 2)
                .is_none()
        );
        assert_eq!(ids(&store, "ses_a").len(), 21);

        // A page that does not meet the window (many messages since) replaces it.
        let token = store.begin_load("ses_a").expect("followed");
        store.finish_load(
            "ses_a",
            token,
            messages(50..60),
            Some("cursor_50".into()),
            2,
        );
        let expected: Vec<String> = messages(50..60).into_iter().map(|m| m.info.id).collect();
        assert_eq!(ids(&store, "ses_a"), expected);
        assert_eq!(
            store
                .transcript("ses_a")
                .and_then(|t| t.older_cursor.clone()),
            Some("cursor_50".into())
        );
    }

    /// A listing of `server` holding the one session `id`.
    fn listing_of(server: &ServerId, id: &str) -> SessionsSnapshot {
        SessionsSnapshot {
            server: server.clone(),
            sessions: vec![session_at(id, "a", 1)],
            ..Default::default()
        }
    }

    #[test]
    fn a_list_reload_keeps_a_held_scratch_sessions_transcript() {
        let mut store = Store::default();
        let server = ServerId::main();
        store.hold_scratch("ses_scratch", &server);
        store.put_transcript("ses_scratch", Transcript::from_page(messages(1..3), None));
        store.follow("ses_scratch", "turn");
        let token = store.begin_sessions_load();
        store.finish_sessions_load(token, listing_of(&server, "ses_a"));
        assert_eq!(
            ids(&store, "ses_scratch").len(),
            2,
            "the turn waiting on it still sees its transcript"
        );
        assert_eq!(store.server_of("ses_scratch"), server);
    }

    #[test]
    fn a_turns_error_that_came_while_the_list_loaded_stays() {
        let mut store = Store::default();
        let server = ServerId::main();
        store.upsert_session(session_at("ses_a", "a", 1));
        let token = store.begin_sessions_load();
        let status = |kind: &str| Event::SessionStatus {
            session_id: "ses_a".into(),
            status: SessionStatus {
                kind: kind.into(),
                ..Default::default()
            },
        };
        store.apply_from(&server, status("busy"));
        store.apply_from(
            &server,
            Event::SessionError {
                session_id: Some("ses_a".into()),
                error: Some(serde_json::json!({"name": "UnknownError", "data": {"message": "Model not found"}})),
            },
        );
        store.apply_from(&server, status("idle"));
        let serial = store.session_error_serial("ses_a");
        store.finish_sessions_load(token, listing_of(&server, "ses_a"));
        assert_eq!(
            store.session_error("ses_a").map(|e| e.message.as_str()),
            Some("Model not found"),
            "the replayed busy status does not clear the error after it"
        );
        assert_eq!(store.session_error_serial("ses_a"), serial, "nor renews it");
    }

    #[test]
    fn a_question_asked_or_answered_while_the_questions_were_listed_is_not_undone() {
        let mut store = Store::default();
        let server = ServerId::main();
        store.upsert_session(session_at("ses_a", "a", 1));
        let question = |id: &str| crosscheck_opencode::QuestionRequest {
            id: id.into(),
            session_id: "ses_a".into(),
            questions: Vec::new(),
        };
        store.add_question(question("que_answered"));
        let token = store.begin_sessions_load();
        // The listing left before these came.
        store.apply_from(&server, Event::QuestionAsked(Box::new(question("que_new"))));
        store.apply_from(
            &server,
            Event::QuestionResolved {
                session_id: "ses_a".into(),
                request_id: "que_answered".into(),
            },
        );
        let listed = vec![question("que_answered"), question("que_old")];
        store.finish_questions_load(token, listed, &HashSet::new());
        let mut pending: Vec<String> = store.questions().into_iter().map(|q| q.id).collect();
        pending.sort();
        assert_eq!(pending, ["que_new", "que_old"]);
    }

    #[test]
    fn a_listing_that_changes_nothing_pushes_no_reset() {
        let mut store = Store::default();
        let listing = || SessionsSnapshot {
            sessions: vec![session_at("ses_a", "a", 1), session_at("ses_b", "b", 2)],
            ..Default::default()
        };
        let token = store.begin_sessions_load();
        assert!(
            store.finish_sessions_load(token, listing()).is_some(),
            "the first listing is news"
        );
        let token = store.begin_sessions_load();
        assert!(
            store.finish_sessions_load(token, listing()).is_none(),
            "the same listing again changes nothing"
        );
        let token = store.begin_sessions_load();
        let mut renamed = listing();
        renamed.sessions[1] = session_at("ses_b", "b renamed", 3);
        let Some(Change::SessionsReset { sessions, .. }) =
            store.finish_sessions_load(token, renamed)
        else {
            panic!("a renamed session is a reset");
        };
        assert!(sessions.iter().any(|s| s.session.title == "b renamed"));
    }

    #[test]
    fn followers_count_once_per_client_and_the_last_one_releases() {
        let mut store = Store::default();
        store.put_transcript("ses_a", Transcript::from_page(Vec::new(), None));
        store.follow("ses_a", "client:one");
        store.follow("ses_a", "client:one");
        store.follow("ses_a", "client:two");
        assert_eq!(store.follow_counts(), (1, 2));
        store.unfollow("ses_a", "client:one");
        assert!(store.transcript("ses_a").is_some());
        assert_eq!(store.unfollow_all("client:two"), 1);
        assert_eq!(store.follow_counts(), (0, 0));
    }

    #[test]
    fn prepend_in_front_keeps_every_lookup_right() {
        let msg = |id: &str| MessageWithParts {
            info: MessageInfo {
                id: id.into(),
                ..Default::default()
            },
            parts: vec![],
        };
        let mut t = Transcript::from_page(vec![msg("m5"), msg("m6")], Some("c".into()));
        t.prepend(vec![msg("m4"), msg("m3")], Some("b".into()));
        // Out of front (a message newer than the oldest loaded) still lands in order.
        t.prepend(vec![msg("m1"), msg("m7"), msg("m2")], None);
        let ids: Vec<_> = t.messages().iter().map(|m| m.info.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
        for id in ids {
            assert_eq!(t.message(id).map(|m| m.info.id.as_str()), Some(id));
        }
    }
}
