//! Review loop requests: the findings of a link, and starting and stopping its automatic loop.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::Core;
use crate::error::Result;
use crate::findings::{self, FindingsView};
use crate::flows::review_loop::{self, LoopBudget, LoopOptions, LoopState, record};
use crate::services::review_link::review_session_of;

/// Fields of [`Request::ListFindings`](super::Request::ListFindings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ListFindings {
    /// Either session of the link: the implementing or the reviewing one.
    pub session_id: String,
}

/// Every finding of the link with its round history, and the reviewer's rounds.
pub async fn list_findings(core: &Core, req: ListFindings) -> Result<FindingsView> {
    let review = review_session_of(core, &req.session_id).await?;
    // A reply that completed before its transcript was followed is recorded now.
    crate::flows::review_loop::recorder::record_latest(core, &review).await?;
    findings::view(core.db(), &review)
}

/// Fields of [`Request::ReviewReport`](super::Request::ReviewReport).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ReviewReport {
    /// Either session of the link: the implementing or the reviewing one.
    pub session_id: String,
}

/// The link's history as markdown (see [`crate::report`]); `None` before its first round.
pub async fn review_report(core: &Core, req: ReviewReport) -> Result<Option<String>> {
    let review = review_session_of(core, &req.session_id).await?;
    crate::flows::review_loop::recorder::record_latest(core, &review).await?;
    crate::report::for_review(core.db(), &review)
}

/// Every loop: the running ones and the newest that ended.
pub async fn list_loops(core: &Core) -> Result<Vec<LoopState>> {
    record::list(core.db())
}

/// The round cap and threshold of a loop to start; defaults 5 and minor.
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoopSettings {
    /// The round cap (1 to 50); 5 when absent.
    #[serde(default)]
    #[ts(optional)]
    pub max_rounds: Option<u32>,
    /// Findings at or above this severity are forwarded; minor when absent.
    #[serde(default)]
    #[ts(optional)]
    pub threshold: Option<crosscheck_review::findings::Severity>,
    /// What the loop may spend; the budget in Settings when absent.
    #[serde(default)]
    #[ts(optional)]
    pub budget: Option<LoopBudget>,
}

impl LoopSettings {
    /// The options, checked.
    pub fn options(&self) -> Result<LoopOptions> {
        LoopOptions::new(self.max_rounds, self.threshold)
    }

    /// The options, checked, with this budget or else `fallback` (the one in Settings).
    pub fn options_with(&self, fallback: LoopBudget) -> Result<LoopOptions> {
        self.options()?.with_budget(self.budget.unwrap_or(fallback))
    }
}

/// Fields of [`Request::StartLoop`](super::Request::StartLoop).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct StartLoop {
    /// Either session of the pair.
    pub session_id: String,
    /// The round cap (1 to 50); 5 when absent.
    #[serde(default)]
    #[ts(optional)]
    pub max_rounds: Option<u32>,
    /// Findings at or above this severity are forwarded; minor when absent.
    #[serde(default)]
    #[ts(optional)]
    pub threshold: Option<crosscheck_review::findings::Severity>,
    /// What the loop may spend; the budget in Settings when absent.
    #[serde(default)]
    #[ts(optional)]
    pub budget: Option<LoopBudget>,
}

/// Fields of [`Request::StopLoop`](super::Request::StopLoop).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct StopLoop {
    /// Either session of the pair.
    pub session_id: String,
}

/// Starts the pair's loop on the reviewer's newest prompt (or answers the running one).
pub async fn start_loop(core: &Core, req: StartLoop) -> Result<LoopState> {
    let budget = req.budget.unwrap_or(core.settings().loop_budget);
    let options = LoopOptions::new(req.max_rounds, req.threshold)?.with_budget(budget)?;
    review_loop::start(core, &req.session_id, options).await
}

/// Stops the pair's loop; answers its final state, or `null` when the pair never had one.
pub async fn stop_loop(core: &Core, req: StopLoop) -> Result<Option<LoopState>> {
    review_loop::stop(core, &req.session_id).await
}
