//! Where a handoff flow is, as the UI sees it ([`crate::flows`] runs it).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a handoff flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum FlowStep {
    /// Asking the implementer for the handoff.
    RequestingHandoff,
    /// Waiting for the implementer's turn to complete.
    WaitingForHandoff,
    /// Creating or reusing the review session.
    PreparingReviewSession,
    /// Sending the review prompt.
    SendingReview,
    /// Another Crosscheck process (another window) runs this session's handoff: this one
    /// waits for it and then shows its review session.
    RunningElsewhere,
    /// Done: the reviewer has the handoff.
    Done,
    /// Failed; see `error`.
    Failed,
    /// Cancelled by the user.
    Cancelled,
}

/// Progress of one flow, pushed to the UI on every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FlowState {
    /// Flow id.
    pub id: String,
    /// The implementing session.
    pub session_id: String,
    /// The review session, once known.
    #[ts(optional)]
    pub review_session_id: Option<String>,
    /// Current step.
    pub step: FlowStep,
    /// When it started, ms since the epoch.
    #[ts(type = "number")]
    pub started_at: i64,
    /// When the wait gives up, ms since the epoch.
    #[ts(optional, type = "number")]
    pub deadline: Option<i64>,
    /// Characters of handoff text streamed so far.
    #[ts(type = "number")]
    pub streamed_chars: u64,
    /// Model calls the awaited turn has made without writing any text yet (0 once text
    /// appears): a model that answers garbage forever shows here.
    pub calls_without_text: u32,
    /// Error code and message when failed.
    #[ts(optional)]
    pub error: Option<crate::error::ApiError>,
    /// Whether the review session was reused.
    pub reused: bool,
    /// Whether the flow has ended (done, failed or cancelled): the UI need not know the steps.
    pub ended: bool,
}

impl FlowStep {
    /// Whether the flow has ended.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            FlowStep::Done | FlowStep::Failed | FlowStep::Cancelled
        )
    }
}
