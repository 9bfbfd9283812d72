//! A person's own line comment on a diff: what the UI shows and the backend keeps (SQLite), from
//! the draft in the batch to addressed, outdated or closed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a line comment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum CommentStatus {
    /// In the batch, not sent yet.
    Draft,
    /// Sent to the implementer (or handed to the running review loop), not yet addressed.
    Open,
    /// The lines it quotes changed after it was sent.
    Addressed,
    /// The lines it quotes are gone, or changed before it was sent.
    Outdated,
    /// The person closed it.
    Closed,
}

impl CommentStatus {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Open => "open",
            Self::Addressed => "addressed",
            Self::Outdated => "outdated",
            Self::Closed => "closed",
        }
    }

    /// The status a stored word names (an unknown word reads as open: nothing is dropped).
    pub fn parse(word: &str) -> Self {
        match word {
            "draft" => Self::Draft,
            "addressed" => Self::Addressed,
            "outdated" => Self::Outdated,
            "closed" => Self::Closed,
            _ => Self::Open,
        }
    }

    /// Whether the comment still waits for something (in the batch, or sent and not addressed).
    pub fn is_live(self) -> bool {
        matches!(self, Self::Draft | Self::Open)
    }
}

/// One line comment: the lines it quotes (new side of the diff, 1-based, inclusive) and what
/// the person wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LineComment {
    /// Comment id.
    pub id: String,
    /// The implementing session the comment goes to.
    pub session_id: String,
    /// The file, relative to the session's folder.
    pub path: String,
    /// First line quoted.
    pub start_line: u32,
    /// Last line quoted (equal to `start_line` for one line).
    pub end_line: u32,
    /// The quoted lines as they were when the comment was written, joined by newlines.
    pub quote: String,
    /// What the person wrote.
    pub body: String,
    /// Where it stands.
    pub status: CommentStatus,
    /// When it was written, ms since the epoch.
    #[ts(type = "number")]
    pub created_at: i64,
    /// When it was sent, ms since the epoch.
    #[ts(optional, type = "number")]
    pub sent_at: Option<i64>,
    /// The prompt that carries (or is to carry) it: chosen and saved before the send.
    #[ts(optional)]
    pub message_id: Option<String>,
    /// When its status last changed, ms since the epoch.
    #[ts(type = "number")]
    pub updated_at: i64,
}
