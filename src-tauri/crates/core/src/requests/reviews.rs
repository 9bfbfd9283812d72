//! Cold review requests: reviewing a plan from a session, and reading the ledger.

use crosscheck_review::config::ReviewerRoute;
use crosscheck_review::settings::{ReviewerSettings, ReviewerTest};
use crosscheck_review::{LedgerEntry, ReviewKind};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::Core;
use crate::error::Result;
use crate::flows::cold_review::{self, ReviewDetail, ReviewProgress};

/// Fields of [`Request::ColdReview`](super::Request::ColdReview).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ColdReview {
    /// The session the plan comes from.
    pub session_id: String,
    /// The assistant message to review; the latest reply when absent.
    #[serde(default)]
    #[ts(optional)]
    pub message_id: Option<String>,
    /// A plan file (relative to the session's folder) to review instead of a message.
    #[serde(default)]
    #[ts(optional)]
    pub path: Option<String>,
}

/// Fields of [`Request::ListReviews`](super::Request::ListReviews).
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ListReviews {
    /// At most this many rows (default 200, at most 1000).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// Fields of [`Request::GetReview`](super::Request::GetReview).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct GetReview {
    /// Plan or commit.
    pub kind: ReviewKind,
    /// The row's ledger key.
    pub key: String,
}

/// Starts a cold review in the background; answers its first progress.
pub async fn cold_review(core: &Core, req: ColdReview) -> Result<ReviewProgress> {
    cold_review::start(
        core,
        &req.session_id,
        req.message_id.as_deref(),
        req.path.as_deref(),
    )
    .await
}

/// The ledger's rows, most recently updated first.
pub async fn list(core: &Core, req: ListReviews) -> Result<Vec<LedgerEntry>> {
    cold_review::list(core, req.limit).await
}

/// One row with the text it was reviewed on and its findings.
pub async fn detail(core: &Core, req: GetReview) -> Result<Option<ReviewDetail>> {
    cold_review::detail(core, req.kind, req.key).await
}

/// Fields of [`Request::SetReviewerSettings`](super::Request::SetReviewerSettings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SetReviewerSettings {
    /// Which way reviews go.
    pub route: ReviewerRoute,
    /// The floor model; empty for the default.
    pub floor_model: String,
}

/// The Reviewer section: route, floor and which direct keys are there, from the user's file.
pub async fn reviewer_settings(core: &Core) -> Result<ReviewerSettings> {
    let engine = core.review_engine()?;
    tokio::task::spawn_blocking(move || {
        crosscheck_review::settings::load(engine.config_dir(), engine.env())
    })
    .await
    .map_err(|e| crate::error::Error::Internal(format!("reviewer settings task: {e}")))?
    .map_err(Into::into)
}

/// Saves route and floor into the user's `review.json` (other keys kept), where the gate
/// reads them too.
pub async fn set_reviewer_settings(
    core: &Core,
    req: SetReviewerSettings,
) -> Result<ReviewerSettings> {
    let engine = core.review_engine()?;
    tokio::task::spawn_blocking(move || {
        crosscheck_review::settings::save(
            engine.config_dir(),
            req.route,
            &req.floor_model,
            engine.env(),
        )
    })
    .await
    .map_err(|e| crate::error::Error::Internal(format!("reviewer settings task: {e}")))?
    .map_err(Into::into)
}

/// Runs a tiny review through the configured route (nothing is recorded).
pub async fn test_reviewer(core: &Core) -> Result<ReviewerTest> {
    let engine = core.review_engine()?;
    engine
        .test_reviewer(core.client().ok().map(|client| {
            crate::flows::scratch_turns::connected(
                core,
                crate::model::ids::ServerId::main(),
                client,
            )
        }))
        .await
        .map_err(Into::into)
}
