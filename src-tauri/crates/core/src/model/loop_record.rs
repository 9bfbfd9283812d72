//! The loop's record: what the UI shows (round n of N, whose turn, since when, why it stopped)
//! and what a restart resumes from (the step in progress and the message id it chose), kept in
//! SQLite as one JSON row per pair, keyed by the implementing session.

use crosscheck_review::findings::Severity;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ids::SessionId;
use crate::db::Db;
use crate::error::{Error, Result};

/// Default round cap.
pub const DEFAULT_MAX_ROUNDS: u32 = 5;
/// The highest round cap accepted.
pub const MAX_MAX_ROUNDS: u32 = 50;

/// Whose turn it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum LoopPhase {
    /// The reviewer's turn: waiting for its reply.
    Reviewing,
    /// The implementer's turn: waiting for its answer to the findings.
    Implementing,
    /// The loop has stopped; see `stop`.
    Stopped,
}

/// Why a loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum StopReason {
    /// The reviewer's verdict is CLEAN.
    Clean,
    /// Only findings below the threshold are open (nothing to forward).
    BelowThreshold,
    /// The round cap was reached with findings still open.
    RoundCap,
    /// No progress: the same finding open three rounds running, or the open set unchanged.
    Stalled,
    /// The reviewer kept open a finding the implementer disputes.
    Disputed,
    /// The reviewer's reply has no findings block and verdict the loop can read.
    Unparsed,
    /// A turn failed.
    TurnFailed,
    /// A turn was aborted.
    Aborted,
    /// A permission request waits in one of the sessions.
    PermissionWaiting,
    /// A question to the user waits in one of the sessions.
    QuestionWaiting,
    /// The user typed in one of the sessions and took over.
    UserTookOver,
    /// The user pressed Stop.
    UserStopped,
    /// One of the two sessions is gone (deleted or unlinked).
    SessionGone,
}

/// How and when a loop stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoopStop {
    /// Why.
    pub reason: StopReason,
    /// The English words shown with the reason (the UI localizes `reason` and shows this as
    /// the detail: the findings concerned, the error's words).
    pub detail: String,
    /// The findings the reason concerns (stalled, disputed).
    pub finding_ids: Vec<String>,
    /// When, ms since the epoch.
    #[ts(type = "number")]
    pub at: i64,
}

/// A prompt the loop chose an id for: written before it is sent, so a restart can tell by the
/// id whether it went out (dedupe) and send it when it did not (nothing missed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct PendingSend {
    /// The session it goes to.
    pub session_id: String,
    /// The id the loop chose.
    pub message_id: String,
    /// The visible text (the seed's words).
    pub visible: String,
    /// The hidden synthetic instructions.
    pub hidden: String,
}

/// One review loop of a pair, as stored and as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoopState {
    /// Loop id.
    pub id: String,
    /// The implementing session.
    pub original_session_id: SessionId,
    /// The reviewing session.
    pub review_session_id: SessionId,
    /// The round in progress (1 is the first review).
    pub round: u32,
    /// The round cap.
    pub max_rounds: u32,
    /// Findings at or above this severity are forwarded.
    pub threshold: Severity,
    /// Whose turn it is.
    pub phase: LoopPhase,
    /// When the loop started, ms since the epoch.
    #[ts(type = "number")]
    pub started_at: i64,
    /// When the current turn started, ms since the epoch.
    #[ts(type = "number")]
    pub phase_started_at: i64,
    /// The user message whose reply the loop waits for.
    #[ts(optional)]
    pub awaiting_message_id: Option<String>,
    /// A prompt chosen but maybe not yet sent.
    #[ts(optional)]
    pub pending: Option<PendingSend>,
    /// Every message id the loop chose (its own prompts, never the user's).
    pub sent_message_ids: Vec<String>,
    /// Findings the implementer claimed fixed while the code did not change (told to the
    /// reviewer in the next hidden part).
    pub claimed_unchanged: Vec<String>,
    /// The code fingerprint of the last reviewer reply.
    #[ts(optional)]
    pub review_fingerprint: Option<String>,
    /// Why it stopped, once it has.
    #[ts(optional)]
    pub stop: Option<LoopStop>,
    /// Whether it has stopped.
    pub ended: bool,
}

/// Creates the loop table (called when the database opens).
pub(crate) fn create_table(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS loop_records (
            original_session TEXT PRIMARY KEY, review_session TEXT NOT NULL, ended INTEGER NOT NULL,
            record TEXT NOT NULL, updated_at INTEGER NOT NULL);",
    )
}

/// Saves a loop's record (one row per pair: a new loop replaces the pair's old one).
pub fn save(db: &Db, state: &LoopState) -> Result<()> {
    let text = serde_json::to_string(state).map_err(|e| Error::Internal(e.to_string()))?;
    db.with(|c| {
        c.execute(
            "INSERT INTO loop_records (original_session, review_session, ended, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (original_session) DO UPDATE SET review_session = excluded.review_session,
               ended = excluded.ended, record = excluded.record, updated_at = excluded.updated_at",
            params![
                state.original_session_id,
                state.review_session_id,
                state.ended,
                text,
                crate::model::now_ms()
            ],
        )?;
        Ok(())
    })
}

fn parse(text: &str) -> Option<LoopState> {
    match serde_json::from_str(text) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("an unreadable loop record is skipped: {e}");
            None
        }
    }
}

/// The loop record of the pair that `session_id` belongs to (either side).
pub fn load(db: &Db, session_id: &str) -> Result<Option<LoopState>> {
    let text: Option<String> = db.with(|c| {
        Ok(c.query_row(
            "SELECT record FROM loop_records WHERE original_session = ?1 OR review_session = ?1
             ORDER BY updated_at DESC LIMIT 1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    Ok(text.as_deref().and_then(parse))
}

/// Every loop record, running ones and the newest 200 that ended.
pub fn list(db: &Db) -> Result<Vec<LoopState>> {
    let rows: Vec<String> = db.with(|c| {
        let mut stmt = c.prepare(
            "SELECT record FROM loop_records WHERE ended = 0
             UNION ALL SELECT record FROM (SELECT record FROM loop_records WHERE ended = 1
               ORDER BY updated_at DESC LIMIT 200)",
        )?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    Ok(rows.iter().filter_map(|t| parse(t)).collect())
}
