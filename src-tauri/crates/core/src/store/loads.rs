//! Fetching pages and session lists without losing the events that arrive meanwhile: the
//! events a fetch answers for are recorded from before it is sent and applied again onto its
//! answer (see [`crate::replay`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use crosscheck_opencode::{
    Event, MessageWithParts, PermissionRequest, QuestionRequest, Session, SessionStatus,
};

use super::{Store, Transcript, is_scratch};
use crate::api_types::Change;
use crate::model::ids::ServerId;

/// Most events a fetch records; past it the oldest are dropped (the server's final snapshot of
/// a part or a message still replaces what was streamed, and a resync comes after a failure).
const MAX_RECORDED: usize = 50_000;

/// What a fetched session list replaces, and what it must keep.
#[derive(Debug, Default)]
pub struct SessionsSnapshot {
    /// The server listed (only its sessions are replaced).
    pub server: ServerId,
    /// Every session listed.
    pub sessions: Vec<Session>,
    /// Projects whose listing failed: their known sessions are kept. `None` in the set means
    /// a listing of unknown scope failed: every known session is kept.
    pub failed_projects: HashSet<Option<String>>,
    /// Non-idle statuses listed.
    pub statuses: HashMap<String, SessionStatus>,
    /// Pending permission requests listed.
    pub permissions: Vec<PermissionRequest>,
    /// Directories whose statuses or permission requests could not be listed: their known
    /// ones are kept.
    pub failed_directories: HashSet<String>,
}

/// A fetch in progress, to hand back to [`Store::finish_load`] or [`Store::cancel_load`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadToken(u64);

impl Store {
    pub(super) fn next_token(&mut self) -> u64 {
        self.last_token += 1;
        self.last_token
    }

    /// Records `event` for the fetches in progress; false when it must not be applied now
    /// (its transcript's first page is still loading).
    pub(super) fn record(&mut self, server: &ServerId, event: &Event) -> bool {
        if let Some(session_id) = crate::replay::transcript_session(event) {
            let Some(t) = self.transcripts.get_mut(session_id) else {
                return true;
            };
            if !t.loads.is_empty() {
                push_capped(&mut t.recording, &mut t.loads, event);
            }
            return t.loaded;
        }
        if !self.sessions_loads.is_empty() && is_session_level(event) {
            push_capped(
                &mut self.sessions_recording,
                &mut self.sessions_loads,
                &(server.clone(), event.clone()),
            );
        }
        true
    }

    /// Starts recording a transcript's events before its page is fetched; `None` when nobody
    /// follows it (there is nothing to load into).
    pub fn begin_load(&mut self, id: &str) -> Option<LoadToken> {
        let token = self.next_token();
        let t = self.transcripts.get_mut(id)?;
        t.loads.insert(token, t.recording.len());
        Some(LoadToken(token))
    }

    /// Installs a fetched page and merges onto it what was recorded since [`Store::begin_load`].
    /// Returns the reset to push when the transcript was shown already and the page changed it
    /// (otherwise the caller hands the page out itself, or there is nothing to push), or `None`.
    pub fn finish_load(
        &mut self,
        id: &str,
        token: LoadToken,
        messages: Vec<MessageWithParts>,
        older_cursor: Option<String>,
        seq: u64,
    ) -> Option<Change> {
        let t = self.transcripts.get_mut(id)?;
        let start = t.loads.remove(&token.0)?;
        let was_loaded = t.loaded;
        let recorded: Vec<Event> = t.recording.get(start..).unwrap_or_default().to_vec();
        if t.loads.is_empty() {
            t.recording.clear();
        }
        let mut fresh = Transcript::from_page(messages, older_cursor);
        let mut skip = crate::replay::deltas_in_page(&fresh.messages, &recorded);
        for event in recorded {
            match &event {
                Event::MessageUpdated(info) => fresh.upsert_info((**info).clone()),
                Event::MessageRemoved { message_id, .. } => {
                    fresh.remove_message(message_id);
                }
                Event::PartUpdated(part) => {
                    fresh.upsert_part((**part).clone());
                }
                Event::PartDelta {
                    message_id,
                    part_id,
                    field,
                    delta,
                    ..
                } => {
                    if let Some(n) = skip.get_mut(part_id.as_str())
                        && *n > 0
                    {
                        *n -= 1;
                        continue;
                    }
                    fresh.append_delta(message_id, part_id, field, delta);
                }
                Event::PartRemoved {
                    message_id,
                    part_id,
                    ..
                } => {
                    fresh.remove_part(message_id, part_id);
                }
                _ => {}
            }
        }
        if was_loaded {
            keep_older_pages(t, &mut fresh);
            if fresh.messages == t.messages && fresh.older_cursor == t.older_cursor {
                return None; // a reload that found it in step pushes nothing
            }
        }
        t.messages = fresh.messages;
        t.index = fresh.index;
        t.older_cursor = fresh.older_cursor;
        t.loaded = true;
        if !was_loaded {
            return None;
        }
        self.page(id, seq)
            .map(|page| Change::TranscriptReset { page })
    }

    /// Gives up a fetch; a transcript whose first page never came is dropped again when no
    /// other fetch is waiting for it, and `follower` (if given) stops following it.
    pub fn cancel_load(&mut self, id: &str, token: LoadToken, follower: Option<&str>) {
        let Some(t) = self.transcripts.get_mut(id) else {
            return;
        };
        t.loads.remove(&token.0);
        if t.loads.is_empty() {
            t.recording.clear();
        }
        if let Some(f) = follower
            && !t.loaded
        {
            t.followers.remove(f);
        }
        if (!t.loaded && t.loads.is_empty()) || t.followers.is_empty() {
            self.transcripts.remove(id);
        }
    }

    /// Starts recording session-level events before the session list is fetched.
    pub fn begin_sessions_load(&mut self) -> LoadToken {
        let token = self.next_token();
        self.sessions_loads
            .insert(token, self.sessions_recording.len());
        LoadToken(token)
    }

    /// Gives up a session list fetch.
    pub fn cancel_sessions_load(&mut self, token: LoadToken) {
        self.sessions_loads.remove(&token.0);
        if self.sessions_loads.is_empty() {
            self.sessions_recording.clear();
        }
    }

    /// Replaces sessions, statuses and pending permission requests with a fetched snapshot,
    /// keeping what a failed listing could not say, and never a session older than the one
    /// known (`time.updated`); then applies again what was recorded since
    /// [`Store::begin_sessions_load`]. The reset to push, or `None` when nothing listed changed
    /// (a resync that found the store in step pushes nothing).
    pub fn finish_sessions_load(
        &mut self,
        token: LoadToken,
        snapshot: SessionsSnapshot,
    ) -> Option<Change> {
        if self.is_removed_server(&snapshot.server) {
            // A listing of a server removed while it was on its way.
            self.take_sessions_recording(token);
            return None;
        }
        let before = (
            self.sessions.clone(),
            self.statuses.clone(),
            self.permissions.clone(),
            self.server_of.clone(),
        );
        let recorded = self.take_sessions_recording(token);
        let keep_all = snapshot.failed_projects.contains(&None);
        let mut snapshot = snapshot;
        snapshot.sessions.retain(|s| !is_scratch(s));
        let server = snapshot.server.clone();
        let (known, others): (HashMap<String, Session>, HashMap<String, Session>) =
            std::mem::take(&mut self.sessions)
                .into_iter()
                .partition(|(id, _)| self.server_of(id) == server);
        for session in &snapshot.sessions {
            self.set_server(&session.id, &server);
            self.removed.remove(&session.id);
        }
        let mut merged: HashMap<String, Session> = others;
        for session in snapshot.sessions {
            let newest = match known.get(&session.id) {
                Some(k) if k.time.updated > session.time.updated => k.clone(),
                _ => session,
            };
            merged.insert(newest.id.clone(), newest);
        }
        for (id, k) in known {
            let unknown = keep_all
                || snapshot
                    .failed_projects
                    .contains(&Some(k.project_id.clone()));
            if unknown && !merged.contains_key(&id) {
                merged.insert(id, k);
            }
        }
        self.sessions = merged;
        // Another server's statuses and requests are kept as they are.
        let in_failed_dir = |store: &Store, session_id: &str| {
            store.server_of(session_id) != server
                || store
                    .sessions
                    .get(session_id)
                    .is_some_and(|s| snapshot.failed_directories.contains(&s.directory))
        };
        let mut statuses: HashMap<String, SessionStatus> = snapshot
            .statuses
            .into_iter()
            .filter(|(_, s)| !s.is_idle())
            .collect();
        for (id, status) in &self.statuses {
            if in_failed_dir(self, id) && !statuses.contains_key(id) {
                statuses.insert(id.clone(), status.clone());
            }
        }
        self.statuses = statuses;
        let mut kept: BTreeMap<String, BTreeMap<String, PermissionRequest>> = BTreeMap::new();
        for (session_id, by_id) in std::mem::take(&mut self.permissions) {
            if in_failed_dir(self, &session_id) {
                kept.insert(session_id, by_id);
            }
        }
        self.permissions = kept;
        for request in snapshot.permissions {
            self.permissions
                .entry(request.session_id.clone())
                .or_default()
                .insert(request.id.clone(), request);
        }
        // Every recorded event was applied when it came, errors included (they are not
        // recorded): a replayed busy status must not clear an error that came after it.
        let errors = self.errors.clone();
        for (from, event) in recorded {
            if from == server {
                self.apply_now(&from, event);
            }
        }
        self.errors = errors;
        // What a listed or held session keeps (a cold review's scratch session is never
        // listed, but a turn waiting on it follows its transcript).
        let (sessions, scratch) = (&self.sessions, &self.scratch);
        let held = |id: &String| sessions.contains_key(id) || scratch.contains(id);
        self.server_of.retain(|id, _| held(id));
        self.transcripts.retain(|id, _| held(id));
        self.errors.retain(|id, _| held(id));
        let unchanged = before.0 == self.sessions
            && before.1 == self.statuses
            && before.2 == self.permissions
            && before.3 == self.server_of;
        (!unchanged).then(|| self.sessions_reset_change())
    }

    /// Ends a session-level load: the events recorded since it began.
    fn take_sessions_recording(&mut self, token: LoadToken) -> Vec<(ServerId, Event)> {
        let start = self.sessions_loads.remove(&token.0).unwrap_or(0);
        let recorded = self
            .sessions_recording
            .get(start..)
            .unwrap_or_default()
            .to_vec();
        if self.sessions_loads.is_empty() {
            self.sessions_recording.clear();
        }
        recorded
    }

    /// Replaces every pending question with a fetched listing (keeping those of the servers in
    /// `kept`, whose listing failed), then applies again the question events recorded since
    /// [`Store::begin_sessions_load`]: a question asked or answered while the listing was on
    /// its way is not undone by it.
    pub fn finish_questions_load(
        &mut self,
        token: LoadToken,
        listed: Vec<QuestionRequest>,
        kept: &HashSet<ServerId>,
    ) {
        let recorded = self.take_sessions_recording(token);
        let mut questions = listed;
        let mut ids: HashSet<String> = questions.iter().map(|q| q.id.clone()).collect();
        for question in self.questions() {
            if kept.contains(&self.server_of(&question.session_id))
                && ids.insert(question.id.clone())
            {
                questions.push(question);
            }
        }
        self.reset_questions(questions);
        for (from, event) in recorded {
            if matches!(
                event,
                Event::QuestionAsked(_) | Event::QuestionResolved { .. }
            ) {
                self.apply_now(&from, event);
            }
        }
    }

    /// Keeps a session fetched from the server unless the store has a newer one (from events)
    /// or removed it since: a fetch answered before an update or a deletion must not undo it.
    pub fn upsert_fetched_session(&mut self, session: Session) -> Option<Change> {
        if is_scratch(&session) {
            // A cold review's scratch session (read back while a turn waits on it): held,
            // never listed.
            self.scratch.insert(session.id.clone());
            return None;
        }
        if self.removed.contains(&session.id)
            || self.is_removed_server(&self.server_of(&session.id))
        {
            // Asked before it was deleted (or its server removed), answered after: it stays gone.
            return None;
        }
        if let Some(known) = self.sessions.get(&session.id)
            && known.time.updated > session.time.updated
        {
            return None;
        }
        Some(self.upsert_session(session))
    }
}

/// Keeps the older pages a transcript had loaded when it is reloaded (a reload fetches only the
/// newest page): when the fresh page starts at a message the window holds, the window's
/// messages before that one are still the ones before it on the server (a revert only removes
/// newer ones), so the user's scrolled-back history stays. Otherwise the fresh page replaces
/// the window.
fn keep_older_pages(window: &Transcript, fresh: &mut Transcript) {
    if fresh.older_cursor.is_none() {
        return; // the fresh page is the whole history
    }
    let Some(first) = fresh.messages.first() else {
        return;
    };
    let Some(&at) = window.index.get(first.info.id.as_str()) else {
        return;
    };
    if at == 0 {
        return;
    }
    let mut messages = window.messages[..at].to_vec();
    messages.append(&mut fresh.messages);
    fresh.messages = messages;
    fresh.older_cursor.clone_from(&window.older_cursor);
    fresh.reindex();
}

/// Session-level events: what a session list fetch answers for.
fn is_session_level(event: &Event) -> bool {
    matches!(
        event,
        Event::SessionCreated(_)
            | Event::SessionUpdated(_)
            | Event::SessionDeleted(_)
            | Event::SessionStatus { .. }
            | Event::SessionIdle { .. }
            | Event::PermissionAsked(_)
            | Event::PermissionReplied { .. }
            | Event::QuestionAsked(_)
            | Event::QuestionResolved { .. }
    )
}

/// Appends to a recording, dropping the oldest event past [`MAX_RECORDED`].
fn push_capped<T: Clone>(recording: &mut Vec<T>, loads: &mut HashMap<u64, usize>, event: &T) {
    if recording.len() >= MAX_RECORDED {
        recording.remove(0);
        for start in loads.values_mut() {
            *start = start.saturating_sub(1);
        }
    }
    recording.push(event.clone());
}
