//! The contract's state types: what the UI sees of flows, review loops, cold reviews, pins,
//! transfers and findings. They sit below every flow and request handler (nothing here imports
//! `flows/` or `requests/`), so [`crate::api_types`] can name them without reaching up.

pub mod attention;
pub mod budget;
pub mod comment;
pub mod findings;
pub mod flow;
pub mod ids;
pub mod loop_record;
pub mod pin;
pub mod review_progress;
pub mod transfer;

/// Milliseconds since the epoch (the timestamps the model carries).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
