//! Pushes review ledger changes to the UI. Gate processes (`crosscheck gate ...`) write the
//! ledger in the app's SQLite file; a watch on the file's folder wakes this task, SQLite's
//! `data_version` confirms that another connection committed, and the newest rows go out as one
//! [`Change::Ledger`]. Nothing polls: without writes the task sleeps.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use rusqlite::Connection;
use tokio::sync::mpsc;

use crate::api_types::Change;
use crate::core::Core;

/// Rows pushed with each change (the Reviews tab lists this many).
pub const PUSHED_ROWS: usize = 200;
/// Writes that land this close together are pushed once.
const SETTLE: Duration = Duration::from_millis(40);

/// Starts watching `database`; `None` (logged) when the folder cannot be watched.
pub(crate) fn spawn(core: Core, database: PathBuf) -> Option<tokio::task::JoinHandle<()>> {
    let folder = database.parent()?.to_path_buf();
    let name = database.file_name()?.to_string_lossy().into_owned();
    let (tx, rx) = mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let touches_database = event.is_ok_and(|e| {
            e.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with(&name))
            })
        });
        if touches_database {
            let _ = tx.send(());
        }
    })
    .map_err(|e| tracing::warn!("the review ledger cannot be watched: {e}"))
    .ok()?;
    watcher
        .watch(&folder, RecursiveMode::NonRecursive)
        .map_err(|e| tracing::warn!("the review ledger folder cannot be watched: {e}"))
        .ok()?;
    Some(tokio::spawn(run(core, database, watcher, rx)))
}

async fn run(
    core: Core,
    database: PathBuf,
    // Kept alive for as long as the task runs.
    _watcher: notify::RecommendedWatcher,
    mut wakes: mpsc::UnboundedReceiver<()>,
) {
    let mut version = DataVersion::open(&database);
    while wakes.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        while wakes.try_recv().is_ok() {}
        let (changed, back) = tokio::task::spawn_blocking(move || {
            let changed = version.changed();
            (changed, version)
        })
        .await
        .unwrap_or_else(|_| (true, DataVersion::open(&database)));
        version = back;
        if changed {
            push_rows(&core).await;
        }
    }
}

async fn push_rows(core: &Core) {
    let Ok(engine) = core.review_engine() else {
        return;
    };
    match tokio::task::spawn_blocking(move || engine.list(PUSHED_ROWS)).await {
        Ok(Ok(entries)) => core.emit(Change::Ledger { entries }),
        Ok(Err(e)) => tracing::warn!("the review ledger could not be read: {e}"),
        Err(e) => tracing::warn!("the review ledger read task failed: {e}"),
    }
}

/// SQLite's `data_version` on a connection of its own: it changes when any other connection
/// (a gate process, or the app's own engine) commits to the file.
struct DataVersion {
    connection: Option<Connection>,
    last: Option<i64>,
}

impl DataVersion {
    fn open(path: &Path) -> Self {
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| tracing::warn!("the review ledger's version cannot be read: {e}"))
        .ok();
        let mut this = Self {
            connection,
            last: None,
        };
        this.last = this.read();
        this
    }

    fn read(&self) -> Option<i64> {
        self.connection
            .as_ref()?
            .query_row("PRAGMA data_version", [], |row| row.get(0))
            .ok()
    }

    /// Whether a commit landed since the last call (true when it cannot tell).
    fn changed(&mut self) -> bool {
        let now = self.read();
        let changed = now.is_none() || now != self.last;
        self.last = now;
        changed
    }
}
