//! The app's SQLite file: settings, prompt overrides, the context panel's tabs and the recent
//! folders of new sessions.
//! The cold review ledger lives in the same file under its own `review_` tables.

use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{Error, Result};
use crate::settings::{Settings, Tab};

/// The open database. Calls are short and run on the caller's thread.
pub struct Db {
    conn: Mutex<Held>,
    /// Signalled when a [`Db::batch`] ends, for the calls of other threads waiting on it.
    batch_over: Condvar,
    /// When this process opened the file (ms since the epoch): a transfer claim still pending
    /// from before then was left by a process that is gone.
    opened_at: i64,
}

/// The connection and the thread whose [`Db::batch`] holds it, if any.
struct Held {
    conn: Connection,
    batch: Option<ThreadId>,
}

/// Saved tabs and the active one.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedTabs {
    /// Tabs in order.
    pub tabs: Vec<Tab>,
    /// Active tab key.
    pub active: Option<String>,
    /// Key of the tab that follows the main view (the selected session's partner); every
    /// other tab was pinned by the person or a flow.
    #[serde(default)]
    pub follow: Option<String>,
    /// The session the main view shows (the last one selected), which the panel never shows.
    #[serde(default)]
    pub main: Option<String>,
}

impl Db {
    /// Opens (creating if needed) the database file with Crosscheck's own key-value tables,
    /// then lets `schema` create the tables of the modules that keep state in it ([`Db::open`]
    /// passes them all; `db` itself names none of them).
    pub(crate) fn open_with(
        path: &Path,
        schema: impl FnOnce(&Connection) -> Result<()>,
    ) -> Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::StoredData(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // A commit is synced at checkpoints, not each time: the writes on a flow's hot path (a
        // loop step's record, a transfer's claim, a pin) cost ~0.03 ms instead of an fsync each
        // (~4 ms here). In WAL mode this keeps the file intact, and a commit survives the app
        // crashing; only a power loss can undo the newest commits. The ledger's own connection
        // to the same file does the same.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS app_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS app_prompt_overrides (name TEXT PRIMARY KEY, template TEXT NOT NULL, updated_at INTEGER NOT NULL);",
        )?;
        schema(&conn)?;
        Ok(Self {
            conn: Mutex::new(Held { conn, batch: None }),
            batch_over: Condvar::new(),
            opened_at: crate::model::now_ms(),
        })
    }

    /// The connection, once no other thread's batch holds it.
    fn lock(&self) -> Result<MutexGuard<'_, Held>> {
        let me = std::thread::current().id();
        let mut held = self
            .conn
            .lock()
            .map_err(|_| Error::Internal("database lock poisoned".into()))?;
        while held.batch.is_some_and(|owner| owner != me) {
            held = self
                .batch_over
                .wait(held)
                .map_err(|_| Error::Internal("database lock poisoned".into()))?;
        }
        Ok(held)
    }

    /// When this process opened the database (ms since the epoch).
    pub(crate) fn opened_at(&self) -> i64 {
        self.opened_at
    }

    /// Runs `f` on the connection (held for the call).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let held = self.lock()?;
        f(&held.conn)
    }

    /// Runs `f` as one write transaction: every call `f` makes on this thread (each function's
    /// own transaction becomes a savepoint in it, see [`Tx`]) is committed at once when it
    /// answers `Ok`, and none of it when it fails. Other threads' calls wait until it ends; `f`
    /// must not wait on another thread's use of the database.
    pub(crate) fn batch<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        {
            let mut held = self.lock()?;
            if held.batch.is_some() {
                // Already inside this thread's batch: part of it.
                drop(held);
                return f();
            }
            held.conn.execute_batch("BEGIN IMMEDIATE")?;
            held.batch = Some(std::thread::current().id());
        }
        let mut open = OpenBatch {
            db: self,
            ended: false,
        };
        let out = f();
        let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
        open.end(end)?;
        out
    }

    fn get_json<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let raw: Option<String> = self.with(|c| {
            Ok(
                c.query_row("SELECT value FROM app_kv WHERE key = ?1", [key], |r| {
                    r.get(0)
                })
                .optional()?,
            )
        })?;
        raw.map(|s| serde_json::from_str(&s).map_err(|e| Error::StoredData(format!("{key}: {e}"))))
            .transpose()
    }

    fn put_json<T: serde::Serialize>(&self, key: &str, value: &T) -> Result<()> {
        let text = serde_json::to_string(value).map_err(|e| Error::Internal(e.to_string()))?;
        self.with(|c| {
            c.execute(
                "INSERT INTO app_kv (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, text],
            )?;
            Ok(())
        })
    }

    /// The saved settings; defaults when none were saved or the saved ones are unreadable.
    pub fn settings(&self) -> Settings {
        match self.get_json::<Settings>("settings") {
            Ok(Some(s)) => s.migrated(),
            Ok(None) => Settings::default(),
            Err(e) => {
                tracing::warn!("settings unreadable, using defaults: {e}");
                Settings::default()
            }
        }
    }

    /// Saves settings.
    pub fn set_settings(&self, settings: &Settings) -> Result<()> {
        self.put_json("settings", settings)
    }

    /// The saved context panel tabs.
    pub fn tabs(&self) -> SavedTabs {
        self.get_json("tabs").ok().flatten().unwrap_or_default()
    }

    /// Saves the context panel tabs.
    pub fn set_tabs(&self, tabs: &SavedTabs) -> Result<()> {
        self.put_json("tabs", tabs)
    }

    /// The folder the user last worked in (opened or created a session in), if any.
    pub fn last_project(&self) -> Option<std::path::PathBuf> {
        self.get_json::<String>("last_project")
            .ok()
            .flatten()
            .map(std::path::PathBuf::from)
    }

    /// Remembers the folder the user works in (a session's directory).
    pub fn set_last_project(&self, dir: &str) -> Result<()> {
        if self.last_project().is_some_and(|d| d.as_os_str() == dir) {
            return Ok(());
        }
        self.put_json("last_project", &dir)
    }

    /// Folders the user created sessions in, newest first.
    pub fn recent_folders(&self) -> Vec<String> {
        self.get_json("recentFolders")
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Saves the recent folders.
    pub fn set_recent_folders(&self, folders: &[String]) -> Result<()> {
        self.put_json("recentFolders", &folders)
    }

    /// Every prompt override, by name.
    pub fn prompt_overrides(&self) -> Result<std::collections::HashMap<String, String>> {
        self.with(|c| {
            let mut stmt = c.prepare("SELECT name, template FROM app_prompt_overrides")?;
            let rows =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Saves or (with `None`) removes a prompt override.
    pub fn set_prompt_override(&self, name: &str, template: Option<&str>) -> Result<()> {
        self.with(|c| {
            match template {
                Some(t) => c.execute(
                    "INSERT INTO app_prompt_overrides (name, template, updated_at) VALUES (?1, ?2, strftime('%s','now'))
                     ON CONFLICT(name) DO UPDATE SET template = excluded.template, updated_at = excluded.updated_at",
                    params![name, t],
                )?,
                None => c.execute("DELETE FROM app_prompt_overrides WHERE name = ?1", [name])?,
            };
            Ok(())
        })
    }
}

/// A [`Db::batch`] under way: ended with a commit or a rollback, and rolled back when `f`
/// unwinds, so other threads never wait on a batch that is gone.
struct OpenBatch<'a> {
    db: &'a Db,
    ended: bool,
}

impl OpenBatch<'_> {
    fn end(&mut self, sql: &str) -> Result<()> {
        self.ended = true;
        let mut held = self
            .db
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = held.conn.execute_batch(sql);
        if done.is_err() && !held.conn.is_autocommit() {
            // A commit that failed leaves the transaction open: nothing of it is kept.
            let _ = held.conn.execute_batch("ROLLBACK");
        }
        held.batch = None;
        drop(held);
        self.db.batch_over.notify_all();
        Ok(done?)
    }
}

impl Drop for OpenBatch<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.end("ROLLBACK");
        }
    }
}

/// One function's write transaction: `BEGIN IMMEDIATE` on its own, a savepoint inside a
/// [`Db::batch`] (committed with it). Rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx<'c> {
    conn: &'c Connection,
    nested: bool,
    done: bool,
}

impl<'c> Tx<'c> {
    /// Begins a write on `conn`.
    pub(crate) fn begin(conn: &'c Connection) -> rusqlite::Result<Self> {
        let nested = !conn.is_autocommit();
        conn.execute_batch(if nested {
            "SAVEPOINT nested_write"
        } else {
            "BEGIN IMMEDIATE"
        })?;
        Ok(Self {
            conn,
            nested,
            done: false,
        })
    }

    /// Keeps the writes (into the batch's transaction, when nested).
    pub(crate) fn commit(mut self) -> rusqlite::Result<()> {
        self.done = true;
        self.conn.execute_batch(if self.nested {
            "RELEASE nested_write"
        } else {
            "COMMIT"
        })
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.conn.execute_batch(if self.nested {
                "ROLLBACK TO nested_write; RELEASE nested_write"
            } else {
                "ROLLBACK"
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_tabs_and_overrides_survive_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested").join("crosscheck.db");
        {
            let db = Db::open(&path).expect("open");
            assert_eq!(db.settings(), Settings::default());
            let s = Settings {
                locale: "de".into(),
                ..Settings::default()
            };
            db.set_settings(&s).expect("save");
            db.set_tabs(&SavedTabs {
                tabs: vec![Tab::session("ses_1", "/p", "One")],
                active: Some("session:ses_1".into()),
                ..SavedTabs::default()
            })
            .expect("tabs");
            db.set_prompt_override("a", Some("x {{y}}"))
                .expect("override");
        }
        let db = Db::open(&path).expect("reopen");
        assert_eq!(db.settings().locale, "de");
        assert_eq!(db.tabs().tabs[0].dedupe_key, "session:ses_1");
        assert_eq!(db.prompt_overrides().expect("overrides")["a"], "x {{y}}");
        db.set_prompt_override("a", None).expect("reset");
        assert!(db.prompt_overrides().expect("overrides").is_empty());
    }

    /// A write on a flow's hot path (a loop step's record, a transfer's claim, a pin) must not
    /// wait for an fsync: in WAL mode `synchronous=NORMAL` syncs at checkpoints only, and a
    /// commit survives the app crashing (the loop's restart safety), as the ledger's does.
    #[test]
    fn writes_do_not_wait_for_an_fsync_each() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("s.db")).expect("open");
        let (journal, synchronous): (String, i64) = db
            .with(|c| {
                Ok((
                    c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?,
                    c.query_row("PRAGMA synchronous", [], |r| r.get(0))?,
                ))
            })
            .expect("pragmas");
        assert_eq!(journal, "wal");
        assert_eq!(synchronous, 1, "NORMAL");
    }

    fn put(db: &Db, key: &str) -> Result<()> {
        db.with(|c| {
            let tx = Tx::begin(c)?;
            tx.execute("INSERT INTO app_kv (key, value) VALUES (?1, 'v')", [key])?;
            tx.commit()?;
            Ok(())
        })
    }

    fn keys(db: &Db) -> Vec<String> {
        db.with(|c| {
            let mut stmt = c.prepare("SELECT key FROM app_kv ORDER BY key")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .expect("keys")
    }

    /// A loop step's writes are one transaction: the functions' own transactions inside a batch
    /// are kept together when it succeeds, and none of them when it fails.
    #[test]
    fn a_batch_keeps_all_of_its_writes_or_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("b.db")).expect("open");
        db.batch(|| {
            put(&db, "a")?;
            put(&db, "b")
        })
        .expect("batch");
        assert_eq!(keys(&db), ["a", "b"]);
        let failed = db.batch(|| {
            put(&db, "c")?;
            put(&db, "a") // a duplicate key: this write fails, and so does the batch
        });
        assert!(failed.is_err());
        assert_eq!(keys(&db), ["a", "b"], "nothing of a failed batch is kept");
        // A write that failed inside a batch that goes on is undone alone.
        db.batch(|| {
            assert!(put(&db, "a").is_err());
            put(&db, "d")
        })
        .expect("batch");
        assert_eq!(keys(&db), ["a", "b", "d"]);
        put(&db, "e").expect("a write on its own after the batches");
        assert_eq!(keys(&db), ["a", "b", "d", "e"]);
    }

    /// Another thread's call waits for the batch to end, so it neither joins the batch's
    /// transaction nor sees half of it.
    #[test]
    fn other_threads_wait_for_a_batch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = std::sync::Arc::new(Db::open(&dir.path().join("w.db")).expect("open"));
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let other = {
            let db = db.clone();
            std::thread::spawn(move || {
                started_rx.recv().expect("the batch began");
                keys(&db)
            })
        };
        db.batch(|| {
            put(&db, "a")?;
            started_tx.send(()).expect("send");
            // The other thread's read is blocked now; give it the chance to run.
            let _ = go_rx.recv_timeout(std::time::Duration::from_millis(50));
            put(&db, "b")
        })
        .expect("batch");
        drop(go_tx);
        assert_eq!(other.join().expect("join"), ["a", "b"]);
    }

    #[test]
    fn unreadable_settings_fall_back_to_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("c.db")).expect("open");
        db.with(|c| {
            Ok(c.execute(
                "INSERT INTO app_kv VALUES ('settings', '{\"bogus\":1}')",
                [],
            )?)
        })
        .expect("raw");
        assert_eq!(db.settings(), Settings::default());
    }

    #[test]
    fn notification_switches_are_kept_and_older_settings_read_as_all_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.db");
        {
            let db = Db::open(&path).expect("open");
            // Saved by a version without notification settings.
            db.with(|c| {
                Ok(c.execute(
                    "INSERT INTO app_kv VALUES ('settings', '{\"theme\":\"dark\",\"locale\":\"de\",\"handoffTimeoutMs\":60000}')",
                    [],
                )?)
            })
            .expect("raw");
            let old = db.settings();
            assert_eq!(
                old.locale, "de",
                "the older settings are read, not replaced"
            );
            assert_eq!(
                old.notifications,
                crate::settings::NotificationSettings::default()
            );
            assert!(old.notifications.review_done && old.notifications.permission);
            let mut s = old;
            s.notifications.permission = false;
            db.set_settings(&s).expect("save");
        }
        let db = Db::open(&path).expect("reopen");
        let s = db.settings();
        assert!(!s.notifications.permission);
        assert!(s.notifications.review_done && s.notifications.loop_stopped);
        assert_eq!(s.locale, "de");
    }
}
