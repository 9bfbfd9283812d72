//! Why a session needs the person: the reasons each [`crate::api_types::SessionView`] carries,
//! each with the time it began and its words. Everything that asks "does this session need the
//! user" (the loop's stop rules, the sidebar, the notifier) reads these.

use crosscheck_opencode::QuestionInfo;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kinds of reason a session needs the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum AttentionKind {
    /// A tool call waits for a permission.
    Permission,
    /// OpenCode's `question` tool waits for an answer.
    Question,
    /// The last turn failed (words: the server's).
    TurnFailed,
    /// A turn finished and the person has not looked since.
    TurnFinished,
    /// A review loop stopped for the person (cap, stall, dispute, unparsed reply, error).
    LoopStopped,
    /// A review loop ended (clean) and the person has not looked since.
    LoopEnded,
    /// The code moved on since the review session's newest review.
    ReviewStale,
    /// A review handoff failed.
    HandoffFailed,
}

impl AttentionKind {
    /// Whether looking at the session settles it (a permission, a question and a stale review
    /// stay until they are answered or reviewed again).
    pub fn cleared_by_seeing(self) -> bool {
        !matches!(self, Self::Permission | Self::Question | Self::ReviewStale)
    }

    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Permission => "permission",
            Self::Question => "question",
            Self::TurnFailed => "turnFailed",
            Self::TurnFinished => "turnFinished",
            Self::LoopStopped => "loopStopped",
            Self::LoopEnded => "loopEnded",
            Self::ReviewStale => "reviewStale",
            Self::HandoffFailed => "handoffFailed",
        }
    }

    /// The kind a stored name names.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Permission,
            Self::Question,
            Self::TurnFailed,
            Self::TurnFinished,
            Self::LoopStopped,
            Self::LoopEnded,
            Self::ReviewStale,
            Self::HandoffFailed,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// One reason a session needs the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AttentionReason {
    /// What it is.
    pub kind: AttentionKind,
    /// When it began, ms since the epoch.
    #[ts(type = "number")]
    pub since: i64,
    /// Its words: what a permission asks, the question, the server's error, the loop's stop
    /// detail (untrusted text: shown as text only).
    pub words: String,
    /// The permission or question request it is (`per_...`, `que_...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request_id: Option<String>,
    /// A question's questions with their options.
    #[serde(default)]
    pub questions: Vec<QuestionInfo>,
    /// A loop stop's reason (`disputed`, `stalled`, ...), for the loop kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stop: Option<crate::model::loop_record::StopReason>,
}

impl AttentionReason {
    /// A reason of `kind` since `since` with `words`.
    pub fn new(kind: AttentionKind, since: i64, words: impl Into<String>) -> Self {
        Self {
            kind,
            since,
            words: words.into(),
            request_id: None,
            questions: Vec::new(),
            stop: None,
        }
    }
}
