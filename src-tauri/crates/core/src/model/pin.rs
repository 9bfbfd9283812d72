//! What a reviewer reply saw of the code and whether the code moved on since, as the UI sees
//! it ([`crate::review_pin`] takes and checks pins).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the newest reply of a review session saw, and whether the code has moved on since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewPin {
    /// The review session.
    pub review_session_id: String,
    /// The reviewer reply the pin belongs to.
    pub message_id: String,
    /// When the reply was pinned (ms since the epoch).
    #[ts(type = "number")]
    pub pinned_at: i64,
    /// The commit the review saw (`null` in a repository without commits).
    pub head: Option<String>,
    /// The digest of the code the review saw.
    pub digest: String,
    /// The files the review saw differing from that commit (uncommitted or untracked).
    pub uncommitted: Vec<String>,
    /// The code moved on since the review.
    pub stale: bool,
    /// The files that changed since the review, sorted.
    pub changed_files: Vec<String>,
    /// Why the code could not be checked now, when it could not (the pin is then not stale).
    #[ts(optional)]
    pub check_error: Option<String>,
    /// When this was checked (ms since the epoch).
    #[ts(type = "number")]
    pub checked_at: i64,
}
