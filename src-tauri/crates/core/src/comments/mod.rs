//! A person's own line comments on a session's diffs: kept in SQLite from the moment they are
//! written (nothing is lost on a restart or a failed send), sent as one batch in natural words
//! through the turn room, and tracked: addressed when the lines they quote change after the
//! send, outdated when those lines are gone. The review loop forwards the open ones.

mod send;
mod track;
mod words;

use rusqlite::{OptionalExtension, params};

pub use crate::model::comment::{CommentStatus, LineComment};
pub use send::{SendOutcome, send_batch};
pub(crate) use track::{refresh, relative_path};
pub use words::comments_text;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::now_ms;

/// The longest comment accepted, in characters.
pub const MAX_BODY_CHARS: usize = 10_000;
/// The most lines one comment may quote.
pub const MAX_QUOTED_LINES: u32 = 200;
/// The longest quote accepted, in characters.
pub const MAX_QUOTE_CHARS: usize = 40_000;

/// Creates the comments table (called when the database opens).
pub(crate) fn create_table(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS line_comments (
            id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL,
            start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, quote TEXT NOT NULL,
            body TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
            sent_at INTEGER, message_id TEXT, updated_at INTEGER NOT NULL);
         CREATE INDEX IF NOT EXISTS line_comments_session ON line_comments (session_id);",
    )
}

/// A new comment, checked: the lines in order, a quote and a comment within their limits.
pub struct NewComment<'a> {
    /// The implementing session.
    pub session_id: &'a str,
    /// The file, relative to the session's folder.
    pub path: &'a str,
    /// First line quoted (1-based).
    pub start_line: u32,
    /// Last line quoted.
    pub end_line: u32,
    /// The quoted lines.
    pub quote: &'a str,
    /// What the person wrote.
    pub body: &'a str,
}

/// Keeps a new draft comment and answers it.
pub fn add(db: &Db, new: &NewComment<'_>) -> Result<LineComment> {
    let body = new.body.trim();
    if body.is_empty() {
        return Err(Error::InvalidRequest("a comment needs some words".into()));
    }
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(Error::InvalidRequest(format!(
            "a comment may have at most {MAX_BODY_CHARS} characters"
        )));
    }
    if new.start_line == 0 || new.end_line < new.start_line {
        return Err(Error::InvalidRequest(
            "a comment's lines run from a first line (1 or more) to a last line".into(),
        ));
    }
    if new.end_line - new.start_line >= MAX_QUOTED_LINES {
        return Err(Error::InvalidRequest(format!(
            "a comment may quote at most {MAX_QUOTED_LINES} lines"
        )));
    }
    let quote = new.quote.replace("\r\n", "\n");
    if quote.chars().count() > MAX_QUOTE_CHARS
        || quote.lines().count() > (new.end_line - new.start_line + 1) as usize
    {
        return Err(Error::InvalidRequest(
            "the quoted text does not fit the lines it names".into(),
        ));
    }
    let now = now_ms();
    let comment = LineComment {
        id: crosscheck_opencode::ids::ascending("cmt"),
        session_id: new.session_id.to_owned(),
        path: new.path.to_owned(),
        start_line: new.start_line,
        end_line: new.end_line,
        quote,
        body: body.to_owned(),
        status: CommentStatus::Draft,
        created_at: now,
        sent_at: None,
        message_id: None,
        updated_at: now,
    };
    db.with(|c| {
        c.execute(
            "INSERT INTO line_comments (id, session_id, path, start_line, end_line, quote, body,
               status, created_at, sent_at, message_id, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, NULL, ?9)",
            params![
                comment.id,
                comment.session_id,
                comment.path,
                comment.start_line,
                comment.end_line,
                comment.quote,
                comment.body,
                comment.status.as_str(),
                now
            ],
        )?;
        Ok(())
    })?;
    Ok(comment)
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LineComment> {
    let status: String = r.get(7)?;
    Ok(LineComment {
        id: r.get(0)?,
        session_id: r.get(1)?,
        path: r.get(2)?,
        start_line: r.get(3)?,
        end_line: r.get(4)?,
        quote: r.get(5)?,
        body: r.get(6)?,
        status: CommentStatus::parse(&status),
        created_at: r.get(8)?,
        sent_at: r.get(9)?,
        message_id: r.get(10)?,
        updated_at: r.get(11)?,
    })
}

const COLUMNS: &str = "id, session_id, path, start_line, end_line, quote, body, status, \
                       created_at, sent_at, message_id, updated_at";

/// Every comment of a session, oldest first (by file and line within one moment).
pub fn list(db: &Db, session_id: &str) -> Result<Vec<LineComment>> {
    db.with(|c| {
        let mut stmt = c.prepare(&format!(
            "SELECT {COLUMNS} FROM line_comments WHERE session_id = ?1
             ORDER BY created_at, path, start_line, id"
        ))?;
        let rows = stmt
            .query_map([session_id], from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// One comment by id.
pub fn get(db: &Db, id: &str) -> Result<Option<LineComment>> {
    db.with(|c| {
        Ok(c.query_row(
            &format!("SELECT {COLUMNS} FROM line_comments WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?)
    })
}

/// Sets a comment's status.
pub fn set_status(db: &Db, id: &str, status: CommentStatus) -> Result<()> {
    db.with(|c| {
        c.execute(
            "UPDATE line_comments SET status = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, status.as_str(), now_ms()],
        )?;
        Ok(())
    })
}

/// Sets a comment's status from `from` to `to` unless it changed meanwhile (the person closed
/// it while its lines were being checked); whether it did.
pub(crate) fn set_status_if(
    db: &Db,
    id: &str,
    from: CommentStatus,
    to: CommentStatus,
) -> Result<bool> {
    db.with(|c| {
        let changed = c.execute(
            "UPDATE line_comments SET status = ?3, updated_at = ?4 WHERE id = ?1 AND status = ?2",
            params![id, from.as_str(), to.as_str(), now_ms()],
        )?;
        Ok(changed > 0)
    })
}

/// Saves the prompt id chosen for these comments, before it is sent.
pub(crate) fn set_message(db: &Db, ids: &[String], message_id: &str) -> Result<()> {
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        for id in ids {
            tx.execute(
                "UPDATE line_comments SET message_id = ?2 WHERE id = ?1",
                params![id, message_id],
            )?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// Marks these comments sent (open) by `message_id`.
pub(crate) fn mark_sent(db: &Db, ids: &[String], message_id: Option<&str>) -> Result<()> {
    let now = now_ms();
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        for id in ids {
            tx.execute(
                "UPDATE line_comments SET status = 'open', sent_at = ?2, updated_at = ?2,
                   message_id = COALESCE(?3, message_id) WHERE id = ?1",
                params![id, now, message_id],
            )?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// Marks comments the review loop forwarded in its prompt `message_id` (sent, still open).
pub(crate) fn forwarded(db: &Db, ids: &[String], message_id: &str) -> Result<()> {
    let now = now_ms();
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        for id in ids {
            tx.execute(
                "UPDATE line_comments SET message_id = ?2, sent_at = ?3 WHERE id = ?1",
                params![id, message_id, now],
            )?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// Takes back the comments the loop meant to forward in its prompt `message_id`, which was
/// never sent (the loop stopped first): they stay open, waiting for the next forward.
pub(crate) fn unforward(db: &Db, message_id: &str) -> Result<()> {
    db.with(|c| {
        c.execute(
            "UPDATE line_comments SET message_id = NULL, sent_at = NULL
             WHERE message_id = ?1 AND status = 'open'",
            [message_id],
        )?;
        Ok(())
    })
}

/// Removes a draft (a sent comment is closed instead, so its history stays).
pub fn delete_draft(db: &Db, id: &str) -> Result<bool> {
    db.with(|c| {
        Ok(c.execute(
            "DELETE FROM line_comments WHERE id = ?1 AND status = 'draft'",
            [id],
        )? > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_does_not_undo_a_close_made_meanwhile() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("c.db")).expect("db");
        let comment = add(
            &db,
            &NewComment {
                session_id: "ses_1",
                path: "src/a.rs",
                start_line: 1,
                end_line: 1,
                quote: "a",
                body: "why",
            },
        )
        .expect("added");
        set_status(&db, &comment.id, CommentStatus::Closed).expect("closed");
        let moved = set_status_if(
            &db,
            &comment.id,
            CommentStatus::Draft,
            CommentStatus::Outdated,
        )
        .expect("asked");
        assert!(!moved);
        let now = get(&db, &comment.id).expect("read").expect("kept");
        assert_eq!(now.status, CommentStatus::Closed);
    }
}
