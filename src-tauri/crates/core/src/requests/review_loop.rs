//! Review loop requests: the findings of a link, and starting and stopping its automatic loop.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::Core;
use crate::error::{Error, Result};
use crate::findings::{self, FindingsView};
use crate::flows::review_loop::{LoopState, record};
use crate::metadata::{get_review_session_id, is_review_session};

/// Fields of [`Request::ListFindings`](super::Request::ListFindings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ListFindings {
    /// Either session of the link: the implementing or the reviewing one.
    pub session_id: String,
}

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

/// Every finding of the link with its round history, and the reviewer's rounds.
pub async fn list_findings(core: &Core, req: ListFindings) -> Result<FindingsView> {
    let review = review_session_of(core, &req.session_id).await?;
    // A reply that completed before its transcript was followed is recorded now.
    crate::flows::review_loop::recorder::record_latest(core, &review).await?;
    findings::view(core.db(), &review)
}

/// Every loop: the running ones and the newest that ended.
pub async fn list_loops(core: &Core) -> Result<Vec<LoopState>> {
    record::list(core.db())
}
