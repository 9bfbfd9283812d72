//! Read-modify-write of a session's metadata that keeps every unrelated key, even with other
//! writers. The server replaces metadata whole and has no compare-and-set, so:
//! - inside one process, writes to one session run one at a time ([`MetadataLocks`]);
//! - across processes (another Crosscheck, OpenChamber), every write is left to settle and then
//!   read back: when another writer's write (based on a read from before ours) replaced it, the
//!   change is applied again on top of what is there now.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crosscheck_opencode::{Metadata, Session, SessionPatch};

use crate::core::Core;
use crate::error::{Error, Result};

/// How long a write is left before it is read back: another client that read the metadata
/// before our write landed has written by then (its read-to-write gap is one round trip).
pub const SETTLE: Duration = Duration::from_millis(150);

/// How many times a change is written before giving up on a session others keep rewriting.
pub const ATTEMPTS: usize = 4;

/// Reads the session, applies `updater` to its whole metadata, writes it all back, and reads it
/// again after [`SETTLE`] to confirm the change stuck; writes again (up to [`ATTEMPTS`] times)
/// when another client replaced it meanwhile. `updater` returns `None` when the metadata is
/// already as wanted; it may run more than once. Writes to one session in this process run one
/// at a time. Returns the session as last read.
pub async fn patch_session_metadata(
    core: &Core,
    session_id: &str,
    updater: impl Fn(Option<&Metadata>) -> Option<Metadata>,
) -> Result<Session> {
    let _guard = core.metadata_locks().lock(session_id).await;
    let mut current = core.session(session_id).await?;
    for _ in 0..ATTEMPTS {
        let Some(next) = updater(current.metadata.as_ref()) else {
            return Ok(current);
        };
        write_metadata(core, session_id, next.clone()).await?;
        current = settled(core, session_id).await?;
        if current.metadata.as_ref() == Some(&next) || updater(current.metadata.as_ref()).is_none()
        {
            return Ok(current);
        }
        tracing::info!(
            session = session_id,
            "another client replaced a metadata write; writing it again"
        );
    }
    Err(Error::MetadataConflict(session_id.to_owned()))
}

/// Writes `next` as the session's whole metadata and upserts the answer into the store.
/// Callers hold the session's [`MetadataLocks`] guard.
pub(crate) async fn write_metadata(core: &Core, session_id: &str, next: Metadata) -> Result<()> {
    let updated = core
        .client_for(session_id)?
        .update_session(
            session_id,
            &SessionPatch {
                metadata: Some(next),
                ..SessionPatch::default()
            },
        )
        .await?;
    // Through the check of fetched copies: not over a newer copy from the events, nor for a
    // session deleted (or its server removed) while the request was on its way.
    core.with_store(|s| ((), s.upsert_fetched_session(updated)));
    Ok(())
}

/// The session read again once a write had [`SETTLE`] time to meet competing writes.
pub(crate) async fn settled(core: &Core, session_id: &str) -> Result<Session> {
    tokio::time::sleep(SETTLE).await;
    core.session(session_id).await
}

/// One async lock per session for metadata writes; an entry lives only while someone holds or
/// waits for it, so the map does not grow with every session ever written.
#[derive(Default)]
pub struct MetadataLocks {
    map: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds a session's metadata lock; dropping it releases the lock and prunes the entry.
pub struct MetadataGuard<'a> {
    locks: &'a MetadataLocks,
    session_id: String,
    mutex: Arc<tokio::sync::Mutex<()>>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl MetadataLocks {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for the session's lock.
    pub async fn lock(&self, session_id: &str) -> MetadataGuard<'_> {
        let mutex = self.map().entry(session_id.to_owned()).or_default().clone();
        let guard = mutex.clone().lock_owned().await;
        MetadataGuard {
            locks: self,
            session_id: session_id.to_owned(),
            mutex,
            guard: Some(guard),
        }
    }

    /// How many sessions have an entry (held or waited for).
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether no session has an entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for MetadataGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self.locks.map();
        // Ours and the map's: nobody else holds or waits for it (clones are made under the map
        // lock, so none can appear between this check and the removal).
        if Arc::strong_count(&self.mutex) == 2 {
            map.remove(&self.session_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_are_pruned_once_nobody_holds_or_waits() {
        let locks = Arc::new(MetadataLocks::default());
        for i in 0..50 {
            let _g = locks.lock(&format!("ses_{i}")).await;
            assert_eq!(locks.len(), 1);
        }
        assert!(
            locks.is_empty(),
            "one entry per session ever written would leak"
        );

        let first = locks.lock("ses_a").await;
        let waiter = {
            let locks = locks.clone();
            tokio::spawn(async move {
                let _g = locks.lock("ses_a").await;
            })
        };
        tokio::task::yield_now().await;
        drop(first);
        waiter.await.expect("waiter");
        assert!(locks.is_empty());
    }
}
