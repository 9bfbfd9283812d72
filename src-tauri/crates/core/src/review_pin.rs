//! A review pinned to the code it saw: each completed reviewer reply keeps the directory's
//! fingerprint (HEAD plus a digest of every uncommitted change, untracked files included), and
//! the review is "stale" as soon as the code moves on, with the files that changed. Checked
//! again when OpenCode says files changed (`file.edited`, `file.watcher.updated`,
//! `session.diff`: the [`Change::FilesChanged`] the event stream pushes) and when the UI asks (a review tab
//! opens, the window regains focus); never on a timer.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use tokio::sync::broadcast;

use crate::api_types::Change;
use crate::core::Core;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, changed_files, fingerprint};
pub use crate::model::pin::ReviewPin;

/// Creates the table; called when the database opens.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS review_pins (
    review_session TEXT NOT NULL,
    message_id TEXT NOT NULL,
    directory TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (review_session, message_id)
);";

/// How long a burst of file events is gathered before the pins are checked once.
const SETTLE: Duration = Duration::from_millis(150);

/// A stored pin: the reply, its directory and what it saw.
struct Stored {
    message_id: String,
    directory: String,
    fingerprint: Fingerprint,
    at: i64,
}

impl Db {
    /// Keeps what a reviewer reply saw (a reply pinned before keeps its first pin).
    pub(crate) fn save_pin(
        &self,
        review_session: &str,
        message_id: &str,
        directory: &str,
        fp: &Fingerprint,
        at: i64,
    ) -> Result<()> {
        let json = serde_json::to_string(fp).map_err(|e| Error::Internal(e.to_string()))?;
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO review_pins (review_session, message_id, directory, fingerprint, at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![review_session, message_id, directory, json, at],
            )?;
            Ok(())
        })
    }

    /// The newest pin of a review session.
    fn latest_pin(&self, review_session: &str) -> Result<Option<Stored>> {
        let row = self.with(|c| {
            Ok(c.query_row(
                "SELECT message_id, directory, fingerprint, at FROM review_pins
                 WHERE review_session = ?1 ORDER BY at DESC, rowid DESC LIMIT 1",
                [review_session],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()?)
        })?;
        row.map(|(message_id, directory, json, at)| {
            let fingerprint = serde_json::from_str(&json)
                .map_err(|e| Error::StoredData(format!("review pin: {e}")))?;
            Ok(Stored {
                message_id,
                directory,
                fingerprint,
                at,
            })
        })
        .transpose()
    }

    /// The review sessions that have a pin, with their directories.
    fn pinned_sessions(&self) -> Result<Vec<(String, String)>> {
        self.with(|c| {
            let mut stmt =
                c.prepare("SELECT DISTINCT review_session, directory FROM review_pins")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}

/// The directory's fingerprint, or `None` when it has none (not a repository, git failed).
pub(crate) async fn current(directory: &str) -> Option<Fingerprint> {
    match fingerprint(Path::new(directory)).await {
        Ok(fp) => Some(fp),
        Err(e) => {
            tracing::debug!(directory, "no code fingerprint: {e}");
            None
        }
    }
}

/// Pins a reviewer reply to `fp` and pushes the (fresh) pin.
pub(crate) fn pin(
    core: &Core,
    review_session: &str,
    message_id: &str,
    directory: &str,
    fp: &Fingerprint,
) {
    let at = crate::model::now_ms();
    if let Err(e) = core
        .db()
        .save_pin(review_session, message_id, directory, fp, at)
    {
        tracing::warn!(
            session = review_session,
            "could not pin the review to the code: {e}"
        );
        return;
    }
    let view = compare(review_session, message_id, at, fp, fp, Vec::new(), None);
    core.emit(Change::ReviewPin { pin: view });
}

fn compare(
    review_session: &str,
    message_id: &str,
    pinned_at: i64,
    saw: &Fingerprint,
    now: &Fingerprint,
    changed: Vec<String>,
    check_error: Option<String>,
) -> ReviewPin {
    ReviewPin {
        review_session_id: review_session.to_owned(),
        message_id: message_id.to_owned(),
        pinned_at,
        head: saw.head.clone(),
        digest: saw.digest.clone(),
        uncommitted: saw.files.keys().cloned().collect(),
        stale: saw.digest != now.digest,
        changed_files: changed,
        check_error,
        checked_at: crate::model::now_ms(),
    }
}

/// The review session's newest pin checked against the code now; `None` when no reply of it
/// was pinned (no reply yet, or its folder is not a git repository).
pub async fn check(core: &Core, review_session: &str) -> Result<Option<ReviewPin>> {
    let Some(stored) = core.db().latest_pin(review_session)? else {
        return Ok(None);
    };
    let dir = Path::new(&stored.directory);
    let view = match fingerprint(dir).await {
        Ok(now) => {
            let changed = if now.digest == stored.fingerprint.digest {
                Vec::new()
            } else {
                changed_files(dir, &stored.fingerprint, &now)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::warn!("could not list the changed files: {e}");
                        Vec::new()
                    })
            };
            compare(
                review_session,
                &stored.message_id,
                stored.at,
                &stored.fingerprint,
                &now,
                changed,
                None,
            )
        }
        Err(e) => compare(
            review_session,
            &stored.message_id,
            stored.at,
            &stored.fingerprint,
            &stored.fingerprint,
            Vec::new(),
            Some(e.to_string()),
        ),
    };
    Ok(Some(view))
}

/// Checks the pins again after code events, a burst at a time, and pushes each pin whose
/// state changed. Runs until the change stream closes.
pub(crate) async fn run(core: Core) {
    let mut changes = core.subscribe();
    let mut last: HashMap<String, ReviewPin> = HashMap::new();
    loop {
        let mut directories: Vec<Option<String>> = Vec::new();
        match changes.recv().await {
            Ok(stamped) => match stamped.change {
                Change::FilesChanged { directory, .. } => directories.push(directory),
                Change::ReviewPin { pin } => {
                    last.insert(pin.review_session_id.clone(), pin);
                    continue;
                }
                _ => continue,
            },
            Err(broadcast::error::RecvError::Lagged(_)) => directories.push(None),
            Err(broadcast::error::RecvError::Closed) => return,
        }
        // Gather the rest of the burst.
        let settle = tokio::time::sleep(SETTLE);
        tokio::pin!(settle);
        loop {
            tokio::select! {
                () = &mut settle => break,
                got = changes.recv() => match got {
                    Ok(stamped) => if let Change::FilesChanged { directory, .. } = stamped.change {
                        directories.push(directory);
                    },
                    Err(broadcast::error::RecvError::Lagged(_)) => directories.push(None),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
        let pinned = match core.db().pinned_sessions() {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("could not read the review pins: {e}");
                continue;
            }
        };
        // Every pinned review session that is still there: an event's directory may name the
        // folder differently (a symlink, a subfolder), and a check is one `git status`.
        let _ = directories;
        for (session, _directory) in pinned {
            if core.read_store(|s, _| s.session(&session).is_none()) {
                continue;
            }
            match check(&core, &session).await {
                Ok(Some(view)) => {
                    let same = last.get(&session).is_some_and(|old| {
                        old.stale == view.stale
                            && old.changed_files == view.changed_files
                            && old.message_id == view.message_id
                    });
                    if !same {
                        last.insert(session.clone(), view.clone());
                        core.emit(Change::ReviewPin { pin: view });
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(session = %session, "could not check the review pin: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[tokio::test]
    async fn a_pin_is_kept_and_goes_stale_when_a_file_changes_or_appears() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("src")).expect("mkdir");
        git(&repo, &["init", "-q"]);
        git(&repo, &["config", "user.email", "t@example.com"]);
        git(&repo, &["config", "user.name", "T"]);
        std::fs::write(repo.join("src/lib.rs"), "fn a() {}\n").expect("write");
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "one"]);
        let directory = repo.to_str().expect("utf-8");
        let saw = current(directory).await.expect("a fingerprint");

        let db = Db::open(&dir.path().join("c.db")).expect("db");
        db.save_pin("ses_r", "msg_1", directory, &saw, 10)
            .expect("pin");
        let stored = db.latest_pin("ses_r").expect("read").expect("a pin");
        assert_eq!(stored.message_id, "msg_1");
        assert_eq!(stored.fingerprint, saw);
        assert!(db.latest_pin("ses_other").expect("read").is_none());

        let same = current(directory).await.expect("again");
        assert!(!compare("ses_r", "msg_1", 10, &saw, &same, vec![], None).stale);

        std::fs::write(repo.join("src/lib.rs"), "fn a() { b() }\n").expect("edit");
        std::fs::write(repo.join("NEW.txt"), "x\n").expect("untracked");
        let now = current(directory).await.expect("after the edit");
        let changed = changed_files(&repo, &saw, &now).await.expect("changed");
        assert_eq!(changed, ["NEW.txt", "src/lib.rs"]);
        let view = compare("ses_r", "msg_1", 10, &saw, &now, changed, None);
        assert!(view.stale);
        assert!(view.uncommitted.is_empty(), "the review saw a clean tree");

        // A later reply is the newest pin; a reply pinned twice keeps its first pin.
        db.save_pin("ses_r", "msg_2", directory, &now, 20)
            .expect("pin 2");
        db.save_pin("ses_r", "msg_2", directory, &saw, 30)
            .expect("again");
        let newest = db.latest_pin("ses_r").expect("read").expect("a pin");
        assert_eq!(newest.message_id, "msg_2");
        assert_eq!(newest.fingerprint, now);
        assert!(
            current(dir.path().join("nope").to_str().expect("utf-8"))
                .await
                .is_none()
        );
    }
}
