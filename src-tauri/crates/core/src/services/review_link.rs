//! Finding a review link: the review session of the pair a session belongs to. The loop and
//! the findings requests both ask here.

use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::{get_review_session_id, is_review_session};

/// The review session of the link `session_id` belongs to.
pub(crate) async fn review_session_of(core: &Core, session_id: &str) -> Result<String> {
    let session = match core.read_store(|s, _| s.session(session_id).cloned()) {
        Some(s) => s,
        None => core.session(session_id).await?,
    };
    if is_review_session(&session) {
        return Ok(session.id);
    }
    get_review_session_id(&session)
        .map(str::to_owned)
        .ok_or(Error::NoLinkedSession)
}
