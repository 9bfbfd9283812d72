//! Typed client for OpenCode servers: HTTP routes, the global event stream with reconnect,
//! and a supervisor that starts and restarts a local `opencode serve`.

pub mod changes;
pub mod client;
mod delta_frame;
pub mod error;
pub mod event;
pub mod ids;
pub mod shared;
pub mod stream;
pub mod supervisor;
pub mod types;

pub use changes::{FileDiff, FileStatus, Todo, TodoStatus};
pub use client::{Client, ListingFailure, ServerConfig, SessionListing, Timeouts};
pub use error::Error;
pub use event::{Envelope, Event};
pub use shared::SharedStr;
pub use stream::{DropCause, StreamHandle, StreamItem, StreamOptions, spawn_event_stream};
pub use supervisor::{ServerState, Supervisor, SupervisorOptions, SupervisorTuning};
pub use types::*;
