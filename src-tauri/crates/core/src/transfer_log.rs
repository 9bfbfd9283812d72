//! What was transferred between linked sessions, kept in SQLite so the sent mark on a message
//! survives reloads and is the same in every window and process. A send claims its row before
//! it goes out (one transaction checks for an earlier send and claims), so two clicks at the same
//! moment, here or in another process, send once unless the user asked to send again.

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
    })
}

const COLUMNS: &str =
    "sent_message_id, source_session_id, source_message_id, target_session_id, direction, sent_at";

impl Db {
    /// Records `record` as sent, unless the same message was sent before and `resend` is false:
    /// then nothing is written and the latest earlier send is returned as the error.
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
            tx.execute(
                &format!("INSERT INTO app_transfers ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
                params![
                    record.sent_message_id,
                    record.source_session_id,
                    record.source_message_id,
                    record.target_session_id,
                    direction_str(record.direction),
                    record.sent_at
                ],
            )?;
            tx.commit()?;
            Ok(())
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
            .map(|r| (r.sent_message_id, r.source_message_id))
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
}
