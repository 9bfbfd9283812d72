//! What a review loop may spend before it stops (tokens, cost, minutes): a setting's value and
//! a loop's option, kept apart from the loop's record so the settings need nothing of it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The longest time budget accepted, in minutes (a week).
pub const MAX_BUDGET_MINUTES: u32 = 7 * 24 * 60;

/// What a loop may spend before it stops as `budget`; every limit is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[ts(export)]
pub struct LoopBudget {
    /// Tokens over every round.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub tokens: Option<u64>,
    /// Cost over every round, in millionths of a dollar.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub cost_micros: Option<u64>,
    /// Minutes since the loop started.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub minutes: Option<u32>,
}

impl LoopBudget {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_none() && self.cost_micros.is_none() && self.minutes.is_none()
    }

    /// Why this budget cannot be used, if it cannot: a limit of zero, or over a week.
    pub fn problem(&self) -> Option<&'static str> {
        if self.tokens == Some(0) || self.cost_micros == Some(0) || self.minutes == Some(0) {
            return Some("a budget's limits must be more than zero");
        }
        if self.minutes.is_some_and(|m| m > MAX_BUDGET_MINUTES) {
            return Some("a budget's time limit must be at most a week");
        }
        None
    }
}
