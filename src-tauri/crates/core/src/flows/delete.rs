//! Deleting a session with review-link clean-up: a review session's link is removed from its
//! original first (no delete when that fails), and put back if the delete itself fails.
//! Deleting an original never fails because of review clean-up.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::{get_original_session_id, link_review_session, without_review_session_link};

use super::patch::patch_session_metadata;

/// Deletes `session_id`, cleaning up the review link when it is a review session.
pub async fn delete_session(core: &Core, session_id: &str) -> Result<()> {
    let client = core.client_for(session_id)?;
    let session = match core.session(session_id).await {
        Ok(s) => s,
        Err(Error::SessionNotFound(_)) => {
            core.with_store(|s| ((), Some(s.remove_session(session_id))));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let mut unlinked_original: Option<String> = None;
    if let Some(original_id) = get_original_session_id(&session) {
        let removed = AtomicBool::new(false);
        let cleaned = patch_session_metadata(core, original_id, |m| {
            let next = without_review_session_link(m, session_id);
            if next.is_some() {
                removed.store(true, Ordering::Relaxed);
            }
            next
        })
        .await;
        let removed = removed.load(Ordering::Relaxed);
        match cleaned {
            Ok(_) => {
                if removed {
                    unlinked_original = Some(original_id.to_owned());
                }
            }
            // The original is gone: nothing to clean.
            Err(Error::SessionNotFound(_)) => {}
            Err(e) => return Err(Error::ReviewLinkFailed(e.to_string())),
        }
    }
    match client.delete_session(session_id).await {
        Ok(()) | Err(crosscheck_opencode::Error::NotFound { .. }) => {
            core.with_store(|s| ((), Some(s.remove_session(session_id))));
            Ok(())
        }
        Err(delete_error) => {
            let Some(original_id) = unlinked_original else {
                return Err(delete_error.into());
            };
            let restored =
                patch_session_metadata(core, &original_id, |m| link_review_session(m, session_id))
                    .await;
            match restored {
                Ok(_) => Err(delete_error.into()),
                Err(e) => Err(Error::ReviewLinkFailed(format!(
                    "the delete failed ({delete_error}) and the review link could not be put back: {e}"
                ))),
            }
        }
    }
}
