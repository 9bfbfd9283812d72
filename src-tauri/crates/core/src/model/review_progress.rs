//! Progress of an in-app cold review and a ledger row with its text, as the UI sees them
//! ([`crate::flows::cold_review`] runs the review).

use crosscheck_review::{LedgerEntry, ReviewKind, ReviewSource};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ApiError;

/// Where an in-app cold review is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ReviewRunStatus {
    /// The reviewer is reading.
    Running,
    /// The reviewer answered; `entry` holds the verdict.
    Done,
    /// The review could not run; `error` says why (`entry` is the `unreviewed` row when the
    /// reviewer was unreachable).
    Failed,
}

/// Progress of one in-app cold review, pushed as [`Change::Review`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewProgress {
    /// Id of this run.
    pub id: String,
    /// The session the plan came from.
    pub session_id: String,
    /// Running, done or failed.
    pub status: ReviewRunStatus,
    /// Always `plan` for now.
    pub kind: ReviewKind,
    /// Ledger key of the reviewed text.
    pub key: String,
    /// `message` or `draft` (a file).
    pub source: ReviewSource,
    /// The reviewed assistant message, for source `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    /// The reviewed file (absolute), for source `draft`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// When it started, ms since the epoch.
    #[ts(type = "number")]
    pub started_at: i64,
    /// The ledger row once the reviewer answered or could not be reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub entry: Option<LedgerEntry>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ApiError>,
}

/// A ledger row with the text it was reviewed on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewDetail {
    /// The row.
    pub entry: LedgerEntry,
    /// The reviewed text as the reviewer was sent it, while the ledger keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
}
