//! What each session needs the person for, as the store knows it: pending permissions and
//! questions (the server's), and the marks the attention follower raises (a finished turn, a
//! stopped loop, ...). [`Store::attention_of`] is the one answer everything reads.

use crosscheck_opencode::QuestionRequest;

use super::Store;
use crate::api_types::Change;
use crate::model::attention::{AttentionKind, AttentionReason};
use crate::model::now_ms;

impl Store {
    /// Why the session needs the person now, newest first.
    pub fn attention_of(&self, session_id: &str) -> Vec<AttentionReason> {
        let mut out = Vec::new();
        let fallback = self.sessions.get(session_id).map_or(0, |s| s.time.updated);
        for p in self
            .permissions
            .get(session_id)
            .into_iter()
            .flat_map(|m| m.values())
        {
            let words = [p.permission.as_str()]
                .into_iter()
                .chain(p.patterns.iter().map(String::as_str))
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let since = self.asked_at.get(&p.id).copied().unwrap_or(fallback);
            let mut reason = AttentionReason::new(AttentionKind::Permission, since, words);
            reason.request_id = Some(p.id.clone());
            out.push(reason);
        }
        let questions = self.questions.get(session_id);
        for q in questions.into_iter().flat_map(|m| m.values()) {
            let words = q
                .questions
                .iter()
                .map(|x| x.question.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let since = self.asked_at.get(&q.id).copied().unwrap_or(fallback);
            let mut reason = AttentionReason::new(AttentionKind::Question, since, words);
            reason.request_id = Some(q.id.clone());
            reason.questions = q.questions.clone();
            out.push(reason);
        }
        // A question tool call seen in the transcript before (or without) its request.
        if questions.is_none_or(|m| m.is_empty()) && self.question_tool_running(session_id) {
            out.push(AttentionReason::new(
                AttentionKind::Question,
                fallback,
                String::new(),
            ));
        }
        if let Some(marks) = self.marks.get(session_id) {
            out.extend(marks.iter().cloned());
        }
        out.sort_by(|a, b| b.since.cmp(&a.since).then(a.kind.cmp(&b.kind)));
        out
    }

    /// Whether the session waits for a permission or an answer to a question.
    pub fn waits_for_answer(&self, session_id: &str) -> Option<AttentionKind> {
        self.attention_of(session_id)
            .into_iter()
            .map(|r| r.kind)
            .find(|k| matches!(k, AttentionKind::Permission | AttentionKind::Question))
    }

    /// Pending questions of every session.
    pub fn questions(&self) -> Vec<QuestionRequest> {
        self.questions
            .values()
            .flat_map(|m| m.values().cloned())
            .collect()
    }

    /// Keeps a pending question; answers the session's view with it.
    pub fn add_question(&mut self, request: QuestionRequest) -> Option<Change> {
        self.asked_at
            .entry(request.id.clone())
            .or_insert_with(now_ms);
        let session_id = request.session_id.clone();
        self.questions
            .entry(session_id.clone())
            .or_default()
            .insert(request.id.clone(), request);
        self.session_change(&session_id)
    }

    /// Forgets an answered or rejected question; `None` when it was not pending.
    pub fn resolve_question(&mut self, session_id: &str, request_id: &str) -> Option<Change> {
        let by_id = self.questions.get_mut(session_id)?;
        by_id.remove(request_id)?;
        if by_id.is_empty() {
            self.questions.remove(session_id);
        }
        self.asked_at.remove(request_id);
        self.session_change(session_id)
    }

    /// Replaces every pending question (after a reconnect), keeping when each was first seen.
    pub fn reset_questions(&mut self, requests: Vec<QuestionRequest>) {
        self.questions.clear();
        for request in requests {
            self.asked_at
                .entry(request.id.clone())
                .or_insert_with(now_ms);
            self.questions
                .entry(request.session_id.clone())
                .or_default()
                .insert(request.id.clone(), request);
        }
    }

    /// Notes when a permission request was first seen here.
    pub(super) fn note_asked(&mut self, request_id: &str) {
        self.asked_at
            .entry(request_id.to_owned())
            .or_insert_with(now_ms);
    }

    /// Raises a mark (replacing one of the same kind); false when it was already raised so.
    pub fn raise_mark(&mut self, session_id: &str, reason: AttentionReason) -> bool {
        let marks = self.marks.entry(session_id.to_owned()).or_default();
        if marks.contains(&reason) {
            return false;
        }
        marks.retain(|m| m.kind != reason.kind);
        marks.push(reason);
        true
    }

    /// Settles the session's marks `settle` picks; true when one was raised.
    pub fn settle_marks(
        &mut self,
        session_id: &str,
        settle: impl Fn(&AttentionReason) -> bool,
    ) -> bool {
        let Some(marks) = self.marks.get_mut(session_id) else {
            return false;
        };
        let before = marks.len();
        marks.retain(|m| !settle(m));
        let changed = marks.len() != before;
        if marks.is_empty() {
            self.marks.remove(session_id);
        }
        changed
    }

    /// The session's mark of `kind`, if raised.
    pub fn mark(&self, session_id: &str, kind: AttentionKind) -> Option<&AttentionReason> {
        self.marks.get(session_id)?.iter().find(|m| m.kind == kind)
    }

    /// The session's view as a change, when the session is known.
    pub fn session_change(&self, session_id: &str) -> Option<Change> {
        let session = self.sessions.get(session_id)?;
        Some(Change::SessionUpserted {
            session: self.view(session),
        })
    }

    /// Whether a `question` tool call waits for the user in the session's loaded transcript.
    fn question_tool_running(&self, session_id: &str) -> bool {
        self.transcripts.get(session_id).is_some_and(|t| {
            t.messages().iter().rev().take(4).any(|m| {
                m.parts.iter().any(|p| {
                    p.kind == "tool"
                        && p.tool.as_deref() == Some("question")
                        && p.state
                            .as_ref()
                            .and_then(|s| s.get("status"))
                            .and_then(|s| s.as_str())
                            .is_some_and(|s| s == "pending" || s == "running")
                })
            })
        })
    }
}
