//! Flows that run in the backend and survive UI reloads: the review handoff and transfers.

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
    /// Error code and message when failed.
    #[ts(optional)]
    pub error: Option<crate::api_types::ApiError>,
    /// Whether the review session was reused.
    pub reused: bool,
    /// Whether the flow has ended (done, failed or cancelled): the UI need not know the steps.
    pub ended: bool,
}

pub mod cold_review;
pub mod delete;
pub mod handoff;
pub mod patch;
pub mod transfer;

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// Running and recently ended flows, with a cancel switch for each running one.
#[derive(Default)]
pub struct FlowRegistry {
    flows: Mutex<HashMap<String, (FlowState, watch::Sender<bool>)>>,
}

impl FlowRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (FlowState, watch::Sender<bool>)>> {
        self.flows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a flow; returns the receiver its task watches for cancellation.
    pub fn insert(&self, state: FlowState) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        let mut flows = self.lock();
        // Keep the list short: drop ended flows beyond the newest 20.
        let mut ended: Vec<(String, i64)> = flows
            .iter()
            .filter(|(_, (s, _))| s.step.is_final())
            .map(|(id, (s, _))| (id.clone(), s.started_at))
            .collect();
        if ended.len() > 20 {
            ended.sort_by_key(|(_, t)| *t);
            for (id, _) in &ended[..ended.len() - 20] {
                flows.remove(id);
            }
        }
        flows.insert(state.id.clone(), (state, tx));
        rx
    }

    /// Updates a flow's state.
    pub fn update(&self, state: &FlowState) {
        if let Some(entry) = self.lock().get_mut(&state.id) {
            entry.0 = state.clone();
        }
    }

    /// Asks a flow to stop; false when it is unknown or already ended.
    pub fn cancel(&self, id: &str) -> bool {
        match self.lock().get(id) {
            Some((state, tx)) if !state.step.is_final() => tx.send(true).is_ok(),
            _ => false,
        }
    }

    /// Cancels every running flow (shutdown).
    pub fn cancel_all(&self) {
        for (_, tx) in self.lock().values() {
            let _ = tx.send(true);
        }
    }

    /// The running flow of a session, if any.
    pub fn running_for(&self, session_id: &str) -> Option<FlowState> {
        self.lock()
            .values()
            .map(|(s, _)| s)
            .find(|s| s.session_id == session_id && !s.step.is_final())
            .cloned()
    }

    /// All flows, oldest first.
    pub fn list(&self) -> Vec<FlowState> {
        let mut all: Vec<FlowState> = self.lock().values().map(|(s, _)| s.clone()).collect();
        all.sort_by_key(|s| s.started_at);
        all
    }
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

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
