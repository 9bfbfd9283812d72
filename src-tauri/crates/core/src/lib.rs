//! Crosscheck's core: it follows OpenCode servers, keeps sessions and transcripts current,
//! runs the review flows, and serves one typed [`api::Api`] to both the desktop and web UIs.
//! Nothing here depends on Tauri.

pub mod api;
pub mod api_types;
pub mod attachments;
mod attention;
pub mod comments;
pub mod core;
pub mod db;
pub mod error;
mod file_events;
pub mod findings;
pub mod fingerprint;
pub mod flows;
pub mod folders;
pub mod launch;
mod ledger_watch;
pub mod metadata;
pub mod model;
pub mod prompts;
mod replay;
pub mod report;
pub mod requests;
pub mod review_pin;
mod schema;
pub mod search;
pub mod servers;
mod services;
pub mod settings;
pub mod store;
mod sync;
pub mod transfer_log;
mod turn;
pub mod worktree;

pub use api::Api;
pub use api_types::{ApiError, Change, Stamped};
pub use core::{Core, CoreOptions, OpencodeTarget, ReviewSetup};
pub use error::ErrorCode;
pub use error::{Error, Result};
pub use requests::{Request, Response};
