//! What was transferred between linked sessions, kept in SQLite so the sent mark on a message
//! survives reloads and is the same in every window and process. A send claims its row before
//! it goes out (one transaction checks for an earlier send and claims), so two clicks at the same
//! moment, here or in another process, send once unless the user asked to send again.
//!
//! A claim is *pending* until the server accepted the prompt; only then is it *sent*. A claim
//! still pending from before this process opened the database was left by a process that died
//! mid-send: it is checked against the target's messages (the prompt's id is ours) and marked
//! sent when it arrived, dropped when it did not.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::db::Db;
use crate::error::{Error, Result};
pub use crate::model::transfer::{TransferDirection, TransferRecord};

/// Creates the table; called when the database opens.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS app_transfers (
    sent_message_id TEXT PRIMARY KEY,
    source_session_id TEXT NOT NULL,
    source_message_id TEXT NOT NULL,
    target_session_id TEXT NOT NULL,
    direction TEXT NOT NULL,
    sent_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS app_transfers_source ON app_transfers (source_session_id, source_message_id);";

fn direction_str(d: TransferDirection) -> &'static str {
    match d {
        TransferDirection::ToImplementer => "toImplementer",
        TransferDirection::ToReviewer => "toReviewer",
    }
}

fn direction_of(s: &str) -> TransferDirection {
    if s == "toReviewer" {
        TransferDirection::ToReviewer
    } else {
        TransferDirection::ToImplementer
    }
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TransferRecord> {
    Ok(TransferRecord {
        sent_message_id: r.get(0)?,
        source_session_id: r.get(1)?,
        source_message_id: r.get(2)?,
        target_session_id: r.get(3)?,
        direction: direction_of(&r.get::<_, String>(4)?),
        sent_at: r.get(5)?,
        pending: r.get(6)?,
    })
}

const COLUMNS: &str = "sent_message_id, source_session_id, source_message_id, target_session_id, direction, sent_at, pending";

/// Creates the table, and adds the `pending` column to a table made before it existed.
pub(crate) fn create_table(conn: &rusqlite::Connection) -> Result<()> {
    conn.execute_batch(SCHEMA)?;
    let has_pending = conn
        .prepare("SELECT 1 FROM pragma_table_info('app_transfers') WHERE name = 'pending'")?
        .exists([])?;
    if !has_pending {
        conn.execute_batch(
            "ALTER TABLE app_transfers ADD COLUMN pending INTEGER NOT NULL DEFAULT 0",
        )?;
    }
    Ok(())
}

/// Writes `record` whole (replacing a row with the same sent id).
fn insert(c: &rusqlite::Connection, record: &TransferRecord) -> Result<()> {
    c.execute(
        &format!(
            "INSERT OR REPLACE INTO app_transfers ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        ),
        params![
            record.sent_message_id,
            record.source_session_id,
            record.source_message_id,
            record.target_session_id,
            direction_str(record.direction),
            record.sent_at,
            record.pending
        ],
    )?;
    Ok(())
}

impl Db {
    /// Records `record` (pending until [`Db::accept_transfer`]), unless the same message was
    /// sent (or is being sent) before and `resend` is false: then nothing is written and the
    /// latest earlier send is returned as the error.
    pub(crate) fn claim_transfer(&self, record: &TransferRecord, resend: bool) -> Result<()> {
        self.with(|c| {
            let tx = rusqlite::Transaction::new_unchecked(c, TransactionBehavior::Immediate)?;
            if !resend {
                let earlier = tx
                    .query_row(
                        &format!(
                            "SELECT {COLUMNS} FROM app_transfers WHERE source_session_id = ?1 AND source_message_id = ?2
                             ORDER BY sent_at DESC LIMIT 1"
                        ),
                        params![record.source_session_id, record.source_message_id],
                        read_row,
                    )
                    .optional()?;
                if let Some(earlier) = earlier {
                    return Err(Error::AlreadyTransferred {
                        sent_at: earlier.sent_at,
                    });
                }
            }
            insert(&tx, record)?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Marks a claim sent (the server accepted it). Written whole, so a claim another process
    /// took back meanwhile (it found the prompt not there yet) is recorded again.
    pub(crate) fn accept_transfer(&self, record: &TransferRecord) -> Result<()> {
        let sent = TransferRecord {
            pending: false,
            ..record.clone()
        };
        self.with(|c| insert(c, &sent))
    }

    /// Claims still pending from before this process opened the database; with `source`, only
    /// those of that (session, message).
    pub(crate) fn stale_claims(&self, source: Option<(&str, &str)>) -> Result<Vec<TransferRecord>> {
        let before = self.opened_at();
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM app_transfers WHERE pending = 1 AND sent_at < ?1
                 AND (?2 IS NULL OR (source_session_id = ?2 AND source_message_id = ?3))
                 ORDER BY sent_at"
            ))?;
            let (session, message) = source.unzip();
            let rows = stmt.query_map(params![before, session, message], read_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Takes back a claim whose send did not go out.
    pub(crate) fn drop_transfer(&self, sent_message_id: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "DELETE FROM app_transfers WHERE sent_message_id = ?1",
                [sent_message_id],
            )?;
            Ok(())
        })
    }

    /// Every transfer sent from a session's messages, oldest first.
    pub(crate) fn transfers_from(&self, session_id: &str) -> Result<Vec<TransferRecord>> {
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM app_transfers WHERE source_session_id = ?1 ORDER BY sent_at, sent_message_id"
            ))?;
            let rows = stmt.query_map([session_id], read_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(sent: &str, message: &str, at: i64) -> TransferRecord {
        TransferRecord {
            source_session_id: "ses_r".into(),
            source_message_id: message.into(),
            target_session_id: "ses_o".into(),
            direction: TransferDirection::ToImplementer,
            sent_message_id: sent.into(),
            sent_at: at,
            pending: false,
        }
    }

    #[test]
    fn a_second_send_is_refused_unless_asked_for_and_survives_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.db");
        {
            let db = Db::open(&path).expect("open");
            db.claim_transfer(&record("msg_1", "msg_a", 10), false)
                .expect("first send");
            match db.claim_transfer(&record("msg_2", "msg_a", 20), false) {
                Err(Error::AlreadyTransferred { sent_at }) => assert_eq!(sent_at, 10),
                other => panic!("expected already_transferred, got {other:?}"),
            }
            db.claim_transfer(&record("msg_3", "msg_a", 30), true)
                .expect("a resend the user asked for");
            db.claim_transfer(&record("msg_4", "msg_b", 40), false)
                .expect("another message");
        }
        let db = Db::open(&path).expect("reopen");
        let sent: Vec<_> = db
            .transfers_from("ses_r")
            .expect("list")
            .into_iter()
            .map(|r| {
                (
                    r.sent_message_id.into_string(),
                    r.source_message_id.into_string(),
                )
            })
            .collect();
        assert_eq!(
            sent,
            [
                ("msg_1".to_owned(), "msg_a".to_owned()),
                ("msg_3".to_owned(), "msg_a".to_owned()),
                ("msg_4".to_owned(), "msg_b".to_owned())
            ]
        );
        db.drop_transfer("msg_4").expect("drop");
        db.claim_transfer(&record("msg_5", "msg_b", 50), false)
            .expect("a dropped claim does not count");
        assert!(db.transfers_from("ses_o").expect("list").is_empty());
    }

    #[test]
    fn a_claim_stays_pending_until_accepted_and_only_an_older_process_claim_is_stale() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.db");
        let db = Db::open(&path).expect("open");
        let before = db.opened_at() - 1_000;
        let pending = |sent: &str, at: i64| TransferRecord {
            pending: true,
            ..record(sent, "msg_a", at)
        };
        db.claim_transfer(&pending("msg_old", before), false)
            .expect("a claim of a process that is gone");
        assert!(db.transfers_from("ses_r").expect("list")[0].pending);
        match db.claim_transfer(&pending("msg_now", db.opened_at() + 1), false) {
            Err(Error::AlreadyTransferred { .. }) => {}
            other => panic!("a pending claim still counts as sent until settled: {other:?}"),
        }
        let stale = db.stale_claims(Some(("ses_r", "msg_a"))).expect("stale");
        assert_eq!(stale.len(), 1);
        assert!(
            db.stale_claims(Some(("ses_r", "msg_b")))
                .expect("stale")
                .is_empty()
        );
        db.accept_transfer(&stale[0]).expect("accept");
        let listed = db.transfers_from("ses_r").expect("list");
        assert_eq!(listed.len(), 1);
        assert!(!listed[0].pending, "accepted: sent");
        assert!(db.stale_claims(None).expect("stale").is_empty());
        // A claim this process makes is never stale for it.
        db.claim_transfer(
            &TransferRecord {
                pending: true,
                ..record("msg_c", "msg_c", db.opened_at() + 5)
            },
            false,
        )
        .expect("claim");
        assert!(db.stale_claims(None).expect("stale").is_empty());
    }

    #[test]
    fn a_table_from_before_pending_existed_gets_the_column_and_keeps_its_marks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.db");
        {
            let c = rusqlite::Connection::open(&path).expect("open");
            c.execute_batch(SCHEMA).expect("old table");
            c.execute(
                "INSERT INTO app_transfers (sent_message_id, source_session_id, source_message_id, target_session_id, direction, sent_at)
                 VALUES ('msg_1', 'ses_r', 'msg_a', 'ses_o', 'toImplementer', 10)",
                [],
            )
            .expect("an old mark");
        }
        let db = Db::open(&path).expect("open migrates");
        let marks = db.transfers_from("ses_r").expect("list");
        assert_eq!(
            marks,
            vec![record("msg_1", "msg_a", 10)],
            "an old mark is sent"
        );
        drop(db);
        Db::open(&path).expect("opens again");
    }
}
