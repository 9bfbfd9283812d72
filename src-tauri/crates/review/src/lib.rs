//! Cold review of plans and commits.
//!
//! A plan draft or a staged diff is reviewed by a reviewer model with no session context,
//! against a fixed checklist ([`PLAN_REVIEW_SYSTEM_PROMPT`] P1-P8,
//! [`COMMIT_REVIEW_SYSTEM_PROMPT`] J1-J8). Reviews are keyed by [`review_key`] and recorded
//! in a ledger shared by every process; the cadence is one pause per distinct text:
//!
//! - the first attempt for a key is reviewed and pauses ([`Action::Block`]) with the findings;
//! - the same key again proceeds;
//! - an edited text is a new key and is reviewed afresh;
//! - when the reviewer cannot be reached, attempt 1 blocks asking for a retry and attempt 2
//!   proceeds, recorded as [`ReviewStatus::Unreviewed`].
//!
//! The app uses [`Engine::open`], [`Engine::review`] and [`Engine::list`]. The `crosscheck
//! gate` command uses [`Engine::claim`] (synchronous: a ledger hit needs no async runtime and
//! no HTTP client), [`Engine::wait_blocking`] when another process reviews the same key, and
//! [`Engine::run`] only when a review is due.
//!
//! What a repository may set in its `.crosscheck/review.json` is limited: see [`config`].

#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod app_server;
pub mod config;
pub mod engine;
pub mod error;
pub mod findings;
pub mod ledger;
pub mod log;
pub mod opencode_route;
pub mod paths;
pub mod private;
pub mod prompt;
pub mod provider;
pub mod rank;
pub mod reply;
pub mod route;
pub mod settings;
pub mod text;
pub mod types;
pub mod verdict;

use sha2::{Digest, Sha256};

pub use config::{Config, Env};
pub use engine::{
    Claim, Engine, EngineOptions, MAX_UNREVIEWED_ATTEMPTS, Ticket, Wait, pause_heading,
    pause_trailer,
};
pub use error::{Error, Result};
pub use log::{LogSink, Logger, MemorySink};
pub use prompt::{COMMIT_REVIEW_SYSTEM_PROMPT, PLAN_REVIEW_SYSTEM_PROMPT};
pub use rank::{ChoiceMode, ReviewerChoice, choose_reviewer, normalize_model_id};
pub use types::{
    Action, Cadence, LedgerEntry, ReviewDecision, ReviewKind, ReviewRequest, ReviewRun,
    ReviewSource, ReviewStatus,
};

/// The ledger key of a text: lower-case sha256 hex of `cwd + "\n" + text`.
pub fn review_key(cwd: &str, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(cwd.as_bytes());
    hasher.update(b"\n");
    hasher.update(text.as_bytes());
    format!("{:x}", hasher.finalize())
}

#[cfg(test)]
mod tests {
    #[test]
    fn key_is_sha256_of_cwd_newline_text() {
        // printf '/w\nplan' | sha256sum
        assert_eq!(
            super::review_key("/w", "plan"),
            "9a0b5592ea3772ea45f3070c6211c87adb1c710bd8aeafca22df66be2ecce53a"
        );
        assert_ne!(
            super::review_key("/w", "plan"),
            super::review_key("/v", "plan")
        );
    }
}
