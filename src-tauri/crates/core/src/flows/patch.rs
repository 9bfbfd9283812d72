//! The explicit read-modify-write of a session's metadata, serialized per session so two
//! flows at once never lose a key. The client's update replaces metadata, as the server does.

use crosscheck_opencode::{Metadata, Session, SessionPatch};

use crate::core::Core;
use crate::error::Result;

/// Reads the session, applies `updater` to its whole metadata (`{}` when absent), writes it
/// all back, and upserts the result into the store. Writes to one session run one at a time.
/// `updater` returning `None` means "nothing to change" and skips the write.
pub async fn patch_session_metadata(
    core: &Core,
    session_id: &str,
    updater: impl FnOnce(Option<&Metadata>) -> Option<Metadata>,
) -> Result<Session> {
    let lock = core.metadata_lock(session_id);
    let _guard = lock.lock().await;
    let current = core.session(session_id).await?;
    let Some(next) = updater(current.metadata.as_ref()) else {
        return Ok(current);
    };
    let updated = core
        .client()?
        .update_session(
            session_id,
            &SessionPatch {
                metadata: Some(next),
                ..SessionPatch::default()
            },
        )
        .await?;
    core.with_store(|s| ((), Some(s.upsert_session(updated.clone()))));
    Ok(updated)
}
