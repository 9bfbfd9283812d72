//! Sessions as the UI sees them: each with its review link resolved against the sessions known.

use crosscheck_opencode::Session;

use super::Store;
use crate::api_types::{LinkKind, ReviewLink, SessionView};
use crate::metadata;

/// Review links resolved for the UI.
impl Store {
    /// A session with its review link resolved against the sessions known now.
    pub fn view(&self, session: &Session) -> SessionView {
        SessionView {
            link: link_of(session).map(|(kind, other)| ReviewLink {
                kind,
                other_session_id: other.into(),
                other_exists: self.sessions.contains_key(other),
            }),
            attention: self.attention_of(&session.id),
            session: session.clone(),
            server_id: self.server_of(&session.id),
        }
    }

    /// Every session as the UI shows it, newest first.
    pub fn session_views(&self) -> Vec<SessionView> {
        let mut all: Vec<&Session> = self.sessions.values().collect();
        all.sort_by(|a, b| {
            b.time
                .updated
                .cmp(&a.time.updated)
                .then_with(|| a.id.cmp(&b.id))
        });
        all.into_iter().map(|s| self.view(s)).collect()
    }

    /// The sessions whose review link names `id`: whether their link resolves follows `id`.
    /// Runs on every session change, so only the sessions that name `id` are copied.
    pub fn linked_to(&self, id: &str) -> Vec<SessionView> {
        self.sessions
            .values()
            .filter(|s| s.id != id && link_of(s).is_some_and(|(_, other)| other == id))
            .map(|s| self.view(s))
            .collect()
    }
}

/// Which side of a review link a session is on, and the other session's id.
fn link_of(session: &Session) -> Option<(LinkKind, &str)> {
    match metadata::get_original_session_id(session)
        .filter(|_| metadata::is_review_session(session))
    {
        Some(original) => Some((LinkKind::Review, original)),
        None => metadata::get_review_session_id(session).map(|review| (LinkKind::Original, review)),
    }
}
