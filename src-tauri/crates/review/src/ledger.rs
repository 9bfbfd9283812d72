//! The ledger: one row per claimed key, in the shared SQLite database, and the history of
//! every finished review of a key (`review_history`), so reviewing a text again keeps the
//! earlier verdicts.
//!
//! Tables are prefixed `review_` (the app's core crate keeps its own tables in the same file).
//! Every process opens the file in WAL mode with a busy timeout. A claim reads first (a WAL
//! read waits for no writer) and takes the write lock only when the key is claimable; inside
//! that one immediate transaction it reads again and claims, so parallel gates for the same
//! key run exactly one review. A `pending` row names its owner (pid and process start time):
//! a claim that finds the owner gone takes the review over.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::error::{Error, Result};
use crate::types::{LedgerEntry, ReviewKind, ReviewRun, ReviewSource, ReviewStatus};

/// How long a process waits for another one's write lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS review_ledger (
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    source      TEXT NOT NULL,
    cwd         TEXT NOT NULL,
    path        TEXT,
    author      TEXT,
    reviewer    TEXT,
    status      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    verdict     TEXT,
    findings    INTEGER,
    review      TEXT,
    duration_ms INTEGER,
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    owner_pid   INTEGER,
    owner_start INTEGER,
    session_id  TEXT,
    message_id  TEXT,
    PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS review_ledger_created ON review_ledger (created_at);
CREATE INDEX IF NOT EXISTS review_ledger_updated ON review_ledger (updated_at);
CREATE TABLE IF NOT EXISTS review_texts (
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    text        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE TABLE IF NOT EXISTS review_history (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    status      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    verdict     TEXT,
    findings    INTEGER,
    reviewer    TEXT,
    duration_ms INTEGER,
    session_id  TEXT,
    message_id  TEXT,
    reviewed_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS review_history_key ON review_history (kind, key, id);
";

/// Columns added to `review_ledger` after its first release, each added on open when missing.
const ADDED_COLUMNS: [(&str, &str); 4] = [
    ("owner_pid", "INTEGER"),
    ("owner_start", "INTEGER"),
    ("session_id", "TEXT"),
    ("message_id", "TEXT"),
];

/// The upsert's rule for the origin columns: a claim or record that names a session replaces
/// both, one that names none (a gate) keeps the row's earlier origin.
const KEEP_ORIGIN: &str = "session_id = CASE WHEN excluded.session_id IS NULL \
     THEN review_ledger.session_id ELSE excluded.session_id END, \
     message_id = CASE WHEN excluded.session_id IS NULL \
     THEN review_ledger.message_id ELSE excluded.message_id END";

/// Finished reviews kept per key in `review_history`; older ones are dropped.
pub const HISTORY_KEPT: i64 = 50;

const HISTORY_COLUMNS: &str = "status, outcome, verdict, findings, reviewer, duration_ms, session_id, message_id, reviewed_at";

/// Reviewed texts kept for the app to show next to their review; older ones are dropped
/// (the ledger rows stay). Each text is at most the config's `maxInputChars`.
pub const TEXTS_KEPT: i64 = 500;

const COLUMNS: &str = "kind, key, source, cwd, path, author, reviewer, status, outcome, verdict, \
                       findings, review, duration_ms, attempts, created_at, updated_at, \
                       session_id, message_id";

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Who is claiming a key.
#[derive(Debug, Clone)]
pub struct ClaimInfo<'a> {
    /// Plan or commit.
    pub kind: ReviewKind,
    /// The key.
    pub key: &'a str,
    /// Where the text came from.
    pub source: ReviewSource,
    /// Working directory.
    pub cwd: &'a str,
    /// Draft path.
    pub path: Option<&'a str>,
    /// Author model.
    pub author: Option<&'a str>,
    /// The app's session the text came from (a gate has none: the row keeps an earlier one).
    pub session: Option<&'a str>,
    /// The assistant message reviewed, within `session`.
    pub message: Option<&'a str>,
}

/// The rules a claim is decided by.
#[derive(Debug, Clone, Copy)]
pub struct ClaimRules {
    /// Claim even when the key is held (review regardless of the cadence).
    pub force: bool,
    /// An `unreviewed` key with fewer attempts than this is claimed again.
    pub max_unreviewed_attempts: u32,
    /// A `pending` key last touched before this time (ms) is taken over as abandoned.
    pub stale_before_ms: i64,
    /// Rows kept; the oldest beyond this are pruned when a key is claimed.
    pub max_rows: u64,
}

/// The result of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// This caller owns the review; the row is now `pending`.
    Mine,
    /// The key is decided: the row as it stands.
    Held(Box<LedgerEntry>),
    /// A live process is reviewing the key now: the `pending` row and its owner (pid 0 when
    /// the row does not say).
    InFlight(Box<LedgerEntry>, Owner),
}

/// A process as the ledger records it: pid and start time (clock ticks since boot), so a
/// recycled pid is not mistaken for the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// Start time, or 0 where the system does not say.
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        Self {
            pid,
            start: process_start(pid).unwrap_or(0),
        }
    }

    /// Whether the process still runs: `Some(false)` when it is gone (or its pid now names
    /// another process), `None` when this system cannot tell.
    pub fn alive(self) -> Option<bool> {
        if std::fs::metadata("/proc/self/stat").is_err() {
            return None;
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Err(_) => Some(false),
            Ok(stat) => {
                let fields = stat_fields(&stat);
                // A zombie (killed, not yet reaped) no longer reviews anything.
                let running = !matches!(fields.first().copied(), Some("Z" | "X" | "x"));
                let same = self.start == 0
                    || fields.get(19).and_then(|s| s.parse::<u64>().ok()) == Some(self.start);
                Some(running && same)
            }
        }
    }
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 onwards).
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rfind(')')
        .map(|i| stat[i + 1..].split_whitespace().collect())
        .unwrap_or_default()
}

/// Start time of a process in clock ticks since boot (`/proc/<pid>/stat` field 22).
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat).get(19)?.parse().ok()
}

/// What a finished review writes.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// Who claimed it.
    pub info: ClaimInfo<'a>,
    /// Reviewer model.
    pub reviewer: Option<&'a str>,
    /// New status.
    pub status: ReviewStatus,
    /// Outcome code.
    pub outcome: &'a str,
    /// Verdict label.
    pub verdict: Option<&'a str>,
    /// FAIL count.
    pub findings: Option<u32>,
    /// Reviewer reply.
    pub review: Option<&'a str>,
    /// Reviewer time.
    pub duration_ms: u64,
    /// Whether this review could not run (adds one to `attempts`).
    pub unreviewed_attempt: bool,
}

/// The ledger over one SQLite connection.
#[derive(Debug)]
pub struct Ledger {
    conn: Mutex<Connection>,
    path: PathBuf,
}

struct RawRow {
    kind: String,
    key: String,
    source: String,
    cwd: String,
    path: Option<String>,
    author: Option<String>,
    reviewer: Option<String>,
    status: String,
    outcome: String,
    verdict: Option<String>,
    findings: Option<i64>,
    review: Option<String>,
    duration_ms: Option<i64>,
    attempts: i64,
    created_at: i64,
    updated_at: i64,
    session_id: Option<String>,
    message_id: Option<String>,
}

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        kind: row.get(0)?,
        key: row.get(1)?,
        source: row.get(2)?,
        cwd: row.get(3)?,
        path: row.get(4)?,
        author: row.get(5)?,
        reviewer: row.get(6)?,
        status: row.get(7)?,
        outcome: row.get(8)?,
        verdict: row.get(9)?,
        findings: row.get(10)?,
        review: row.get(11)?,
        duration_ms: row.get(12)?,
        attempts: row.get(13)?,
        created_at: row.get(14)?,
        updated_at: row.get(15)?,
        session_id: row.get(16)?,
        message_id: row.get(17)?,
    })
}

/// A `review_history` row, read in [`HISTORY_COLUMNS`] order.
fn read_run(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<ReviewRun>> {
    let status: String = row.get(0)?;
    let findings: Option<i64> = row.get(3)?;
    let duration: Option<i64> = row.get(5)?;
    let run = ReviewRun {
        status: ReviewStatus::Clean,
        outcome: row.get(1)?,
        verdict: row.get(2)?,
        findings: findings.and_then(|f| u32::try_from(f).ok()),
        reviewer: row.get(4)?,
        duration_ms: duration.and_then(|d| u64::try_from(d).ok()),
        session_id: row.get(6)?,
        message_id: row.get(7)?,
        reviewed_at: row.get(8)?,
    };
    Ok(match ReviewStatus::parse(&status) {
        Some(status) => Ok(ReviewRun { status, ..run }),
        None => Err(Error::Corrupt {
            what: "status",
            value: status,
        }),
    })
}

/// The earlier reviews of a row, newest first: every history row but the newest, which is the
/// row's own result (while a review of it is pending, every history row is earlier).
fn earlier_runs(conn: &Connection, path: &Path, entry: &LedgerEntry) -> Result<Vec<ReviewRun>> {
    let sql = |source| Error::Ledger {
        path: path.to_owned(),
        source,
    };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {HISTORY_COLUMNS} FROM review_history WHERE kind = ?1 AND key = ?2 \
             ORDER BY id DESC LIMIT -1 OFFSET ?3"
        ))
        .map_err(sql)?;
    let skip = i64::from(entry.status != ReviewStatus::Pending);
    let rows = stmt
        .query_map(params![entry.kind.as_str(), entry.key, skip], read_run)
        .map_err(sql)?;
    let mut out = Vec::new();
    for run in rows {
        out.push(run.map_err(sql)??);
    }
    Ok(out)
}

impl RawRow {
    fn into_entry(self) -> Result<LedgerEntry> {
        let corrupt = |what, value: &str| Error::Corrupt {
            what,
            value: value.to_owned(),
        };
        let kind = ReviewKind::parse(&self.kind).ok_or_else(|| corrupt("kind", &self.kind))?;
        let failed_checks = self
            .review
            .as_deref()
            .map(|r| crate::verdict::failed_check_lines(r, kind))
            .unwrap_or_default();
        Ok(LedgerEntry {
            kind,
            failed_checks,
            source: ReviewSource::parse(&self.source)
                .ok_or_else(|| corrupt("source", &self.source))?,
            status: ReviewStatus::parse(&self.status)
                .ok_or_else(|| corrupt("status", &self.status))?,
            key: self.key,
            cwd: self.cwd,
            path: self.path,
            author: self.author,
            reviewer: self.reviewer,
            outcome: self.outcome,
            verdict: self.verdict,
            findings: self.findings.and_then(|f| u32::try_from(f).ok()),
            review: self.review,
            duration_ms: self.duration_ms.and_then(|d| u64::try_from(d).ok()),
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            created_at: self.created_at,
            updated_at: self.updated_at,
            session_id: self.session_id,
            message_id: self.message_id,
            earlier: Vec::new(),
        })
    }
}

/// A row with its owner columns.
struct OwnedRow {
    raw: RawRow,
    owner: Option<Owner>,
}

fn select_owned(conn: &Connection, info: &ClaimInfo<'_>) -> rusqlite::Result<Option<OwnedRow>> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS}, owner_pid, owner_start FROM review_ledger \
             WHERE kind = ?1 AND key = ?2"
        ),
        params![info.kind.as_str(), info.key],
        |row| {
            let pid: Option<i64> = row.get(18)?;
            let start: Option<i64> = row.get(19)?;
            Ok(OwnedRow {
                raw: read_row(row)?,
                owner: pid.and_then(|p| u32::try_from(p).ok()).map(|pid| Owner {
                    pid,
                    start: start.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
                }),
            })
        },
    )
    .optional()
}

/// `Some` when the row is not claimable under `rules` (not forced): decided, or in flight.
fn held(row: OwnedRow, rules: ClaimRules) -> Result<Option<Claimed>> {
    let OwnedRow { raw, owner } = row;
    let entry = raw.into_entry()?;
    Ok(match entry.status {
        ReviewStatus::Clean | ReviewStatus::Flagged => Some(Claimed::Held(Box::new(entry))),
        ReviewStatus::Unreviewed if entry.attempts >= rules.max_unreviewed_attempts => {
            Some(Claimed::Held(Box::new(entry)))
        }
        ReviewStatus::Unreviewed => None,
        ReviewStatus::Pending => {
            let stale = entry.updated_at < rules.stale_before_ms;
            let alive = owner.and_then(Owner::alive);
            match (alive, owner) {
                (Some(false), _) => None,
                (_, _) if stale => None,
                (_, Some(o)) => Some(Claimed::InFlight(Box::new(entry), o)),
                (_, None) => Some(Claimed::InFlight(
                    Box::new(entry),
                    Owner { pid: 0, start: 0 },
                )),
            }
        }
    })
}

/// Whether every table and column of [`SCHEMA`] and [`ADDED_COLUMNS`] exists (a read only).
fn schema_is_current(conn: &Connection) -> rusqlite::Result<bool> {
    let columns: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('review_ledger') \
         WHERE name IN ('owner_pid', 'owner_start', 'session_id', 'message_id')",
        [],
        |r| r.get(0),
    )?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
         AND name IN ('review_texts', 'review_history')",
        [],
        |r| r.get(0),
    )?;
    Ok(columns == ADDED_COLUMNS.len() as i64 && tables == 2)
}

/// Brings a ledger of any earlier shape to [`SCHEMA`] in one write transaction: missing tables
/// are created, missing columns added, and a history that did not exist yet starts with each
/// decided row's result, so no review recorded before is lost.
fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let had_history: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'review_history'",
        [],
        |r| r.get(0),
    )?;
    let had_ledger: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'review_ledger'",
        [],
        |r| r.get(0),
    )?;
    tx.execute_batch(SCHEMA)?;
    for (column, ty) in ADDED_COLUMNS {
        let present: i64 = tx.query_row(
            "SELECT count(*) FROM pragma_table_info('review_ledger') WHERE name = ?1",
            params![column],
            |r| r.get(0),
        )?;
        if present == 0 {
            tx.execute_batch(&format!(
                "ALTER TABLE review_ledger ADD COLUMN {column} {ty}"
            ))?;
        }
    }
    if had_history == 0 && had_ledger > 0 {
        tx.execute(
            "INSERT INTO review_history (kind, key, status, outcome, verdict, findings, reviewer, \
             duration_ms, session_id, message_id, reviewed_at)
             SELECT kind, key, status, outcome, verdict, findings, reviewer, duration_ms, \
             session_id, message_id, updated_at FROM review_ledger
             WHERE status <> 'pending' ORDER BY updated_at, rowid",
            [],
        )?;
    }
    tx.commit()
}

impl Ledger {
    /// Opens (creating if needed) the database at `path`: WAL, busy timeout, `review_` tables.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::private::create_dir_all(parent).map_err(|source| Error::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        // The ledger holds what was reviewed: the file and its journals are the user's alone.
        // SQLite gives the WAL and shared-memory files the database file's mode.
        crate::private::touch_private(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        let sql = |source| Error::Ledger {
            path: path.to_owned(),
            source,
        };
        let mut conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // WAL lets readers and one writer work at once. Where the file system cannot do WAL,
        // SQLite keeps its rollback journal; the busy timeout still serialises writers.
        let _mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(sql)?;
        conn.execute_batch("PRAGMA synchronous=NORMAL;")
            .map_err(sql)?;
        // Creating the tables takes the write lock: skip it when they exist, so a ledger hit
        // never waits for another process's write.
        if !schema_is_current(&conn).map_err(sql)? {
            migrate(&mut conn).map_err(sql)?;
        }
        for suffix in ["-wal", "-shm"] {
            let mut journal = path.as_os_str().to_owned();
            journal.push(suffix);
            crate::private::restrict(Path::new(&journal)).map_err(|source| Error::Io {
                path: PathBuf::from(&journal),
                source,
            })?;
        }
        Ok(Self {
            conn: Mutex::new(conn),
            path: path.to_owned(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, source: rusqlite::Error) -> Error {
        Error::Ledger {
            path: self.path.clone(),
            source,
        }
    }

    /// Claims a key: inserts a `pending` row owned by this process, or takes over a row that
    /// may be reviewed again (forced, `unreviewed` below the attempt bound, or `pending` with
    /// its owner gone or silent past `stale_before_ms`). Otherwise returns the row as it
    /// stands. Reads first without the write lock, so a decided key never waits for a writer.
    pub fn claim(&self, info: &ClaimInfo<'_>, rules: ClaimRules) -> Result<Claimed> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if !rules.force
            && let Some(row) = select_owned(&conn, info).map_err(|e| self.sql(e))?
            && let Some(held) = held(row, rules)?
        {
            return Ok(held);
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))?;
        if !rules.force
            && let Some(row) = select_owned(&tx, info).map_err(|e| self.sql(e))?
            && let Some(held) = held(row, rules)?
        {
            tx.commit().map_err(|e| self.sql(e))?;
            return Ok(held);
        }
        let me = Owner::current();
        tx.execute(
            &format!(
                "INSERT INTO review_ledger (kind, key, source, cwd, path, author, status, outcome, \
                 attempts, created_at, updated_at, owner_pid, owner_start, session_id, message_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 'pending', 0, ?7, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (kind, key) DO UPDATE SET
                    status = 'pending', outcome = 'pending', source = excluded.source,
                    path = excluded.path, author = excluded.author, updated_at = excluded.updated_at,
                    owner_pid = excluded.owner_pid, owner_start = excluded.owner_start, {KEEP_ORIGIN}"
            ),
            params![
                info.kind.as_str(),
                info.key,
                info.source.as_str(),
                info.cwd,
                info.path,
                info.author,
                now_ms(),
                me.pid,
                i64::try_from(me.start).unwrap_or(0),
                info.session,
                info.message,
            ],
        )
        .map_err(|e| self.sql(e))?;
        let pruned = tx
            .execute(
                "DELETE FROM review_ledger WHERE rowid IN (
                SELECT rowid FROM review_ledger ORDER BY created_at DESC, rowid DESC
                LIMIT -1 OFFSET ?1)",
                params![i64::try_from(rules.max_rows).unwrap_or(i64::MAX)],
            )
            .map_err(|e| self.sql(e))?;
        if pruned > 0 {
            tx.execute(
                "DELETE FROM review_history WHERE NOT EXISTS (SELECT 1 FROM review_ledger l
                 WHERE l.kind = review_history.kind AND l.key = review_history.key)",
                [],
            )
            .map_err(|e| self.sql(e))?;
        }
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(Claimed::Mine)
    }

    /// Writes a finished review (re-inserting the row if it was pruned meanwhile), adds it to
    /// the key's history (keeping the newest [`HISTORY_KEPT`]) and returns the row.
    pub fn record(&self, record: &Record<'_>) -> Result<LedgerEntry> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let now = now_ms();
        let i = &record.info;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))?;
        let raw = tx
            .query_row(
                &format!(
                    "INSERT INTO review_ledger (kind, key, source, cwd, path, author, reviewer, \
                     status, outcome, verdict, findings, review, duration_ms, attempts, \
                     created_at, updated_at, session_id, message_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15,
                             ?16, ?17)
                     ON CONFLICT (kind, key) DO UPDATE SET
                        reviewer = excluded.reviewer, status = excluded.status,
                        outcome = excluded.outcome, verdict = excluded.verdict,
                        findings = excluded.findings, review = excluded.review,
                        duration_ms = excluded.duration_ms,
                        attempts = CASE WHEN excluded.attempts = 0 THEN 0
                                        ELSE review_ledger.attempts + excluded.attempts END,
                        updated_at = excluded.updated_at, {KEEP_ORIGIN}
                     RETURNING {COLUMNS}"
                ),
                params![
                    i.kind.as_str(),
                    i.key,
                    i.source.as_str(),
                    i.cwd,
                    i.path,
                    i.author,
                    record.reviewer,
                    record.status.as_str(),
                    record.outcome,
                    record.verdict,
                    record.findings,
                    record.review,
                    i64::try_from(record.duration_ms).unwrap_or(i64::MAX),
                    u32::from(record.unreviewed_attempt),
                    now,
                    i.session,
                    i.message,
                ],
                read_row,
            )
            .map_err(|e| self.sql(e))?;
        tx.execute(
            "INSERT INTO review_history (kind, key, status, outcome, verdict, findings, reviewer, \
             duration_ms, session_id, message_id, reviewed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                i.kind.as_str(),
                i.key,
                record.status.as_str(),
                record.outcome,
                record.verdict,
                record.findings,
                record.reviewer,
                i64::try_from(record.duration_ms).unwrap_or(i64::MAX),
                i.session,
                i.message,
                now,
            ],
        )
        .map_err(|e| self.sql(e))?;
        tx.execute(
            "DELETE FROM review_history WHERE kind = ?1 AND key = ?2 AND id IN (
                SELECT id FROM review_history WHERE kind = ?1 AND key = ?2
                ORDER BY id DESC LIMIT -1 OFFSET ?3)",
            params![i.kind.as_str(), i.key, HISTORY_KEPT],
        )
        .map_err(|e| self.sql(e))?;
        let mut entry = raw.into_entry()?;
        entry.earlier = earlier_runs(&tx, &self.path, &entry)?;
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(entry)
    }

    /// One row by kind and key.
    pub fn get(&self, kind: ReviewKind, key: &str) -> Result<Option<LedgerEntry>> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let raw = conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM review_ledger WHERE kind = ?1 AND key = ?2"),
                params![kind.as_str(), key],
                read_row,
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let mut entry = raw.into_entry()?;
        entry.earlier = earlier_runs(&conn, &self.path, &entry)?;
        Ok(Some(entry))
    }

    /// The most recently updated rows, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<LedgerEntry>> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM review_ledger ORDER BY updated_at DESC, rowid DESC LIMIT ?1"
            ))
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], read_row)
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        for raw in rows {
            let mut entry = raw.map_err(|e| self.sql(e))?.into_entry()?;
            entry.earlier = earlier_runs(&conn, &self.path, &entry)?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Keeps the text a claimed key is reviewed on (what the reviewer is sent, before the
    /// size cut), replacing an earlier one, and drops texts beyond the newest [`TEXTS_KEPT`]
    /// and those whose ledger row was pruned.
    pub fn put_text(&self, kind: ReviewKind, key: &str, text: &str) -> Result<()> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))?;
        tx.execute(
            "INSERT INTO review_texts (kind, key, text, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (kind, key) DO UPDATE SET text = excluded.text, created_at = excluded.created_at",
            params![kind.as_str(), key, text, now_ms()],
        )
        .map_err(|e| self.sql(e))?;
        tx.execute(
            "DELETE FROM review_texts WHERE rowid IN (
                SELECT rowid FROM review_texts ORDER BY created_at DESC, rowid DESC
                LIMIT -1 OFFSET ?1)
             OR NOT EXISTS (SELECT 1 FROM review_ledger l
                            WHERE l.kind = review_texts.kind AND l.key = review_texts.key)",
            params![TEXTS_KEPT],
        )
        .map_err(|e| self.sql(e))?;
        tx.commit().map_err(|e| self.sql(e))
    }

    /// The text kept for a key, if it is still kept.
    pub fn text(&self, kind: ReviewKind, key: &str) -> Result<Option<String>> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        conn.query_row(
            "SELECT text FROM review_texts WHERE kind = ?1 AND key = ?2",
            params![kind.as_str(), key],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.sql(e))
    }

    /// Number of rows (tests and diagnostics).
    pub fn count(&self) -> Result<u64> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        conn.query_row("SELECT count(*) FROM review_ledger", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| u64::try_from(n).unwrap_or(0))
        .map_err(|e| self.sql(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(key: &str) -> ClaimInfo<'_> {
        ClaimInfo {
            kind: ReviewKind::Plan,
            key,
            source: ReviewSource::Draft,
            cwd: "/w",
            path: None,
            author: None,
            session: None,
            message: None,
        }
    }

    fn finished<'a>(
        info: ClaimInfo<'a>,
        status: ReviewStatus,
        reviewer: &'a str,
        findings: Option<u32>,
    ) -> Record<'a> {
        Record {
            info,
            reviewer: Some(reviewer),
            status,
            outcome: status.as_str(),
            verdict: None,
            findings,
            review: None,
            duration_ms: 5,
            unreviewed_attempt: status == ReviewStatus::Unreviewed,
        }
    }

    fn forced() -> ClaimRules {
        ClaimRules {
            force: true,
            ..rules()
        }
    }

    /// The ledger's tables as the first release created them: no owner or origin columns, no
    /// history.
    const FIRST_SCHEMA: &str = "
    CREATE TABLE review_ledger (
        kind TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL, cwd TEXT NOT NULL,
        path TEXT, author TEXT, reviewer TEXT, status TEXT NOT NULL, outcome TEXT NOT NULL,
        verdict TEXT, findings INTEGER, review TEXT, duration_ms INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, PRIMARY KEY (kind, key));
    CREATE TABLE review_texts (kind TEXT NOT NULL, key TEXT NOT NULL, text TEXT NOT NULL,
        created_at INTEGER NOT NULL, PRIMARY KEY (kind, key));
    ";

    #[test]
    fn a_plan_reviewed_twice_keeps_both_reviews_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        let first = ledger
            .record(&finished(info("a"), ReviewStatus::Flagged, "m1", Some(2)))
            .unwrap();
        assert_eq!(first.earlier, vec![]);
        // Reviewed again: while it runs, the first review is the earlier one.
        assert_eq!(ledger.claim(&info("a"), forced()).unwrap(), Claimed::Mine);
        let pending = ledger.get(ReviewKind::Plan, "a").unwrap().unwrap();
        assert_eq!(pending.status, ReviewStatus::Pending);
        assert_eq!(pending.earlier.len(), 1);
        let second = ledger
            .record(&finished(info("a"), ReviewStatus::Clean, "m2", Some(0)))
            .unwrap();
        assert_eq!(second.status, ReviewStatus::Clean);
        assert_eq!(second.reviewer.as_deref(), Some("m2"));
        assert_eq!(second.earlier.len(), 1, "{:?}", second.earlier);
        let earlier = &second.earlier[0];
        assert_eq!(earlier.status, ReviewStatus::Flagged);
        assert_eq!(earlier.reviewer.as_deref(), Some("m1"));
        assert_eq!(earlier.findings, Some(2));
        // A third: both earlier ones, newest first, in the list as in the row.
        assert_eq!(ledger.claim(&info("a"), forced()).unwrap(), Claimed::Mine);
        ledger
            .record(&finished(info("a"), ReviewStatus::Unreviewed, "m3", None))
            .unwrap();
        let listed = ledger.list(10).unwrap();
        let statuses: Vec<_> = listed[0].earlier.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [ReviewStatus::Clean, ReviewStatus::Flagged]);
        assert_eq!(listed[0].status, ReviewStatus::Unreviewed);
    }

    #[test]
    fn a_keys_history_is_bounded_and_goes_with_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        for _ in 0..HISTORY_KEPT + 3 {
            assert_eq!(ledger.claim(&info("a"), forced()).unwrap(), Claimed::Mine);
            ledger
                .record(&finished(info("a"), ReviewStatus::Clean, "m", None))
                .unwrap();
        }
        let entry = ledger.get(ReviewKind::Plan, "a").unwrap().unwrap();
        assert_eq!(entry.earlier.len() as i64, HISTORY_KEPT - 1);
        let small = ClaimRules {
            max_rows: 1,
            ..rules()
        };
        assert_eq!(ledger.claim(&info("b"), small).unwrap(), Claimed::Mine);
        let left: i64 = ledger
            .conn
            .lock()
            .unwrap()
            .query_row("SELECT count(*) FROM review_history", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "the pruned row's history is dropped");
    }

    #[test]
    fn a_review_started_from_a_session_keeps_it_and_a_gate_does_not_erase_it() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        let from_app = ClaimInfo {
            session: Some("ses_1"),
            message: Some("msg_1"),
            ..info("a")
        };
        assert_eq!(ledger.claim(&from_app, rules()).unwrap(), Claimed::Mine);
        let entry = ledger
            .record(&finished(
                from_app.clone(),
                ReviewStatus::Flagged,
                "m",
                Some(1),
            ))
            .unwrap();
        assert_eq!(entry.session_id.as_deref(), Some("ses_1"));
        assert_eq!(entry.message_id.as_deref(), Some("msg_1"));
        // A gate reviews the same text: the row still opens the session.
        assert_eq!(ledger.claim(&info("a"), forced()).unwrap(), Claimed::Mine);
        let gated = ledger
            .record(&finished(info("a"), ReviewStatus::Clean, "m", None))
            .unwrap();
        assert_eq!(gated.session_id.as_deref(), Some("ses_1"));
        assert_eq!(gated.message_id.as_deref(), Some("msg_1"));
        assert_eq!(gated.earlier[0].session_id.as_deref(), Some("ses_1"));
        // Another session's review (of a file: no message) takes its place.
        let from_file = ClaimInfo {
            session: Some("ses_2"),
            ..info("a")
        };
        assert_eq!(ledger.claim(&from_file, forced()).unwrap(), Claimed::Mine);
        let pending = ledger.get(ReviewKind::Plan, "a").unwrap().unwrap();
        assert_eq!(pending.session_id.as_deref(), Some("ses_2"));
        assert_eq!(pending.message_id, None);
    }

    #[test]
    fn a_ledger_from_before_history_keeps_its_rows_as_history() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(FIRST_SCHEMA).unwrap();
        old.execute_batch(
            "INSERT INTO review_ledger (kind, key, source, cwd, reviewer, status, outcome, \
             findings, attempts, created_at, updated_at)
             VALUES ('plan', 'a', 'draft', '/w', 'old-model', 'flagged', 'flagged', 3, 0, 1, 2),
                    ('plan', 'b', 'draft', '/w', NULL, 'pending', 'pending', NULL, 0, 3, 4);",
        )
        .unwrap();
        drop(old);
        let ledger = Ledger::open(&path).unwrap();
        let kept = ledger.get(ReviewKind::Plan, "a").unwrap().unwrap();
        assert_eq!(kept.status, ReviewStatus::Flagged);
        assert_eq!(kept.findings, Some(3));
        assert_eq!(kept.session_id, None);
        assert_eq!(ledger.count().unwrap(), 2);
        // Reviewed again: the result from before the upgrade is the earlier review.
        assert_eq!(ledger.claim(&info("a"), forced()).unwrap(), Claimed::Mine);
        let again = ledger
            .record(&finished(info("a"), ReviewStatus::Clean, "m", None))
            .unwrap();
        assert_eq!(again.earlier.len(), 1);
        assert_eq!(again.earlier[0].reviewer.as_deref(), Some("old-model"));
        assert_eq!(again.earlier[0].findings, Some(3));
        assert_eq!(again.earlier[0].reviewed_at, 2);
        // Opening the upgraded file again seeds nothing twice.
        drop(ledger);
        let ledger = Ledger::open(&path).unwrap();
        assert_eq!(
            ledger
                .get(ReviewKind::Plan, "a")
                .unwrap()
                .unwrap()
                .earlier
                .len(),
            1
        );
    }

    fn rules() -> ClaimRules {
        ClaimRules {
            force: false,
            max_unreviewed_attempts: 2,
            stale_before_ms: 0,
            max_rows: 5000,
        }
    }

    #[test]
    fn schema_is_wal_and_prefixed() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("sub").join("x.db")).unwrap();
        let conn = ledger.conn.lock().unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let names: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert!(names.iter().all(|n| n.starts_with("review_")), "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn the_database_its_journals_and_its_folder_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data").join("x.db");
        let ledger = Ledger::open(&path).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            assert_eq!(mode(Path::new(&p)), 0o600, "x.db{suffix}");
        }
        // A database left readable by others is narrowed on open.
        drop(ledger);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        Ledger::open(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn a_review_that_runs_resets_the_unreviewed_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        let record = |ran: bool| {
            ledger
                .record(&Record {
                    info: info("a"),
                    reviewer: Some("m"),
                    status: if ran {
                        ReviewStatus::Clean
                    } else {
                        ReviewStatus::Unreviewed
                    },
                    outcome: if ran { "clean" } else { "timeout" },
                    verdict: None,
                    findings: None,
                    review: None,
                    duration_ms: 5,
                    unreviewed_attempt: !ran,
                })
                .unwrap()
        };
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        record(false);
        assert_eq!(record(false).attempts, 2);
        assert_eq!(
            record(true).attempts,
            0,
            "a later failure must block for a retry again"
        );
        assert_eq!(record(false).attempts, 1);
    }

    #[test]
    fn a_key_is_claimed_once_and_unreviewed_keys_twice() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        assert!(matches!(ledger.claim(&info("a"), rules()).unwrap(),
                     Claimed::InFlight(e, o) if e.status == ReviewStatus::Pending && o == Owner::current()));
        let unreviewed = |ledger: &Ledger| {
            ledger
                .record(&Record {
                    info: info("a"),
                    reviewer: Some("m"),
                    status: ReviewStatus::Unreviewed,
                    outcome: "timeout",
                    verdict: None,
                    findings: None,
                    review: None,
                    duration_ms: 5,
                    unreviewed_attempt: true,
                })
                .unwrap()
        };
        assert_eq!(unreviewed(&ledger).attempts, 1);
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        assert_eq!(unreviewed(&ledger).attempts, 2);
        assert!(
            matches!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Held(e) if e.status == ReviewStatus::Unreviewed)
        );
        let forced = ClaimRules {
            force: true,
            ..rules()
        };
        assert_eq!(ledger.claim(&info("a"), forced).unwrap(), Claimed::Mine);
    }

    #[test]
    fn abandoned_pending_rows_are_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        let stale = ClaimRules {
            stale_before_ms: now_ms() + 1,
            ..rules()
        };
        assert_eq!(ledger.claim(&info("a"), stale).unwrap(), Claimed::Mine);
    }

    #[test]
    fn a_pending_row_whose_owner_is_gone_is_taken_over_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        // A process that has exited: its pid names nothing (or another process) now.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        ledger
            .conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE review_ledger SET owner_pid = ?1, owner_start = 1",
                params![gone],
            )
            .unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        // The same pid with another start time is another process.
        let me = Owner::current();
        assert_eq!(
            Owner {
                start: me.start + 1,
                ..me
            }
            .alive(),
            Some(false)
        );
        assert_eq!(me.alive(), Some(true));
    }

    #[test]
    fn a_ledger_from_before_owners_gains_the_owner_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch(FIRST_SCHEMA)
            .unwrap();
        let ledger = Ledger::open(&path).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        assert!(matches!(
            ledger.claim(&info("a"), rules()).unwrap(),
            Claimed::InFlight(_, o) if o == Owner::current()
        ));
        // A second open of the upgraded file changes nothing.
        Ledger::open(&path).unwrap();
    }

    #[test]
    fn a_decided_key_is_read_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        let ledger = Ledger::open(&path).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        ledger
            .record(&Record {
                info: info("a"),
                reviewer: Some("m"),
                status: ReviewStatus::Flagged,
                outcome: "flagged",
                verdict: None,
                findings: None,
                review: None,
                duration_ms: 5,
                unreviewed_attempt: false,
            })
            .unwrap();
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "BEGIN IMMEDIATE; INSERT INTO review_texts VALUES ('plan', 'z', 't', 0);",
            )
            .unwrap();
        let started = std::time::Instant::now();
        let other = Ledger::open(&path).unwrap();
        let held = other.claim(&info("a"), rules()).unwrap();
        let waited = started.elapsed();
        writer.execute_batch("COMMIT").unwrap();
        assert!(matches!(held, Claimed::Held(e) if e.status == ReviewStatus::Flagged));
        assert!(
            waited < Duration::from_secs(1),
            "waited {waited:?} for the writer"
        );
    }

    #[test]
    fn the_ledger_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        let small = ClaimRules {
            max_rows: 3,
            ..rules()
        };
        for k in ["a", "b", "c", "d", "e"] {
            assert_eq!(ledger.claim(&info(k), small).unwrap(), Claimed::Mine);
        }
        assert_eq!(ledger.count().unwrap(), 3);
        assert!(ledger.get(ReviewKind::Plan, "a").unwrap().is_none());
        assert!(ledger.get(ReviewKind::Plan, "e").unwrap().is_some());
    }

    #[test]
    fn texts_are_kept_for_ledger_rows_only_and_replaced_on_a_new_claim() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("x.db")).unwrap();
        assert_eq!(ledger.claim(&info("a"), rules()).unwrap(), Claimed::Mine);
        ledger.put_text(ReviewKind::Plan, "a", "first").unwrap();
        ledger.put_text(ReviewKind::Plan, "a", "second").unwrap();
        assert_eq!(
            ledger.text(ReviewKind::Plan, "a").unwrap().as_deref(),
            Some("second")
        );
        assert_eq!(ledger.text(ReviewKind::Commit, "a").unwrap(), None);
        // A text whose row was pruned goes with the next write.
        let small = ClaimRules {
            max_rows: 1,
            ..rules()
        };
        assert_eq!(ledger.claim(&info("b"), small).unwrap(), Claimed::Mine);
        ledger.put_text(ReviewKind::Plan, "b", "bee").unwrap();
        assert_eq!(ledger.text(ReviewKind::Plan, "a").unwrap(), None);
        assert_eq!(
            ledger.text(ReviewKind::Plan, "b").unwrap().as_deref(),
            Some("bee")
        );
    }

    #[test]
    fn parallel_claims_from_separate_connections_yield_one_owner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db");
        Ledger::open(&path).unwrap();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let ledger = Ledger::open(&path).unwrap();
                    ledger.claim(&info("same"), rules()).unwrap() == Claimed::Mine
                })
            })
            .collect();
        let owners = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|mine| *mine)
            .count();
        assert_eq!(owners, 1);
    }
}
