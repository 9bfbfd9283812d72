//! Flows that run in the backend and survive UI reloads: the review handoff and transfers.

pub use crate::model::flow::{FlowState, FlowStep};

pub mod claim;
pub mod cold_review;
pub mod delete;
pub mod handoff;
pub mod patch;
pub mod reply;
pub mod review_link;
pub mod review_loop;
pub(crate) mod scratch_turns;
pub mod send_findings;
pub mod transfer;

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// What [`FlowRegistry::start_or_running`] did.
pub enum Started {
    /// The session already had this running flow.
    Running(FlowState),
    /// A new flow was registered; its task watches the receiver for cancellation.
    New(FlowState, watch::Receiver<bool>),
}

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

    /// The session's running flow, or a new one from `make`, registered under the same lock
    /// as the check so two starts at once never make two flows.
    pub fn start_or_running(&self, session_id: &str, make: impl FnOnce() -> FlowState) -> Started {
        let mut flows = self.lock();
        if let Some((running, _)) = flows
            .values()
            .find(|(s, _)| s.session_id == session_id && !s.step.is_final())
        {
            return Started::Running(running.clone());
        }
        let state = make();
        let (tx, rx) = watch::channel(false);
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
        flows.insert(state.id.clone(), (state.clone(), tx));
        Started::New(state, rx)
    }

    /// A flow's current state.
    pub fn state(&self, id: &str) -> Option<FlowState> {
        self.lock().get(id).map(|(s, _)| s.clone())
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

/// Asks flow `id` to stop and waits for it to end; true when it ended as cancelled (false when
/// it was unknown, had ended already, or finished its last step before it saw the request).
pub async fn cancel(core: &crate::core::Core, id: &str) -> bool {
    if !core.flows().cancel(id) {
        return false;
    }
    let ended = crate::turn::wait_for(
        core,
        |change| matches!(change, crate::api_types::Change::Flow { flow } if flow.id == id),
        |_| {
            core.flows()
                .state(id)
                .filter(|s| s.step.is_final())
                .map(|s| s.step == FlowStep::Cancelled)
        },
        Some(tokio::time::Instant::now() + CANCEL_WAIT),
        None,
    )
    .await;
    matches!(ended, Ok(crate::turn::Waited::Done(true)))
}

/// How long [`cancel`] waits for a flow to notice.
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

pub(crate) use crate::model::now_ms;
