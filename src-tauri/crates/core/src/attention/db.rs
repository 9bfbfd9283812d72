//! The attention marks and the time each session was last looked at, kept in SQLite.

use rusqlite::{OptionalExtension, params};

use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::attention::{AttentionKind, AttentionReason};

/// The tables (created when the database opens).
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS attention_marks (
    session_id TEXT NOT NULL, kind TEXT NOT NULL, since INTEGER NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY (session_id, kind));
CREATE TABLE IF NOT EXISTS attention_seen (session_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);";

/// Every kept mark with its session.
pub(crate) fn marks(db: &Db) -> Result<Vec<(String, AttentionReason)>> {
    db.with(|c| {
        let mut stmt = c.prepare("SELECT session_id, reason FROM attention_marks")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (session, text) = row?;
            match serde_json::from_str::<AttentionReason>(&text) {
                Ok(reason) => out.push((session, reason)),
                Err(e) => tracing::warn!("an unreadable attention mark of {session}: {e}"),
            }
        }
        Ok(out)
    })
}

/// Keeps a mark (replacing the session's mark of the same kind).
pub(crate) fn save(db: &Db, session_id: &str, reason: &AttentionReason) -> Result<()> {
    let text = serde_json::to_string(reason).map_err(|e| Error::Internal(e.to_string()))?;
    db.with(|c| {
        c.execute(
            "INSERT INTO attention_marks (session_id, kind, since, reason) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session_id, kind) DO UPDATE SET since = excluded.since,
               reason = excluded.reason",
            params![session_id, reason.kind.as_str(), reason.since, text],
        )?;
        Ok(())
    })
}

/// Removes the session's marks of these kinds.
pub(crate) fn remove(db: &Db, session_id: &str, kinds: &[AttentionKind]) -> Result<()> {
    db.with(|c| {
        for kind in kinds {
            c.execute(
                "DELETE FROM attention_marks WHERE session_id = ?1 AND kind = ?2",
                params![session_id, kind.as_str()],
            )?;
        }
        Ok(())
    })
}

/// Forgets everything kept for a deleted session.
pub(crate) fn forget(db: &Db, session_id: &str) -> Result<()> {
    db.with(|c| {
        c.execute(
            "DELETE FROM attention_marks WHERE session_id = ?1",
            [session_id],
        )?;
        c.execute(
            "DELETE FROM attention_seen WHERE session_id = ?1",
            [session_id],
        )?;
        Ok(())
    })
}

/// When the person last looked at the session (ms since the epoch).
pub(crate) fn seen_at(db: &Db, session_id: &str) -> Result<Option<i64>> {
    db.with(|c| {
        Ok(c.query_row(
            "SELECT seen_at FROM attention_seen WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?)
    })
}

/// Keeps when the person looked at the session.
pub(crate) fn set_seen(db: &Db, session_id: &str, at: i64) -> Result<()> {
    db.with(|c| {
        c.execute(
            "INSERT INTO attention_seen (session_id, seen_at) VALUES (?1, ?2)
             ON CONFLICT (session_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)",
            params![session_id, at],
        )?;
        Ok(())
    })
}
