//! Test parts shared by Crosscheck's crates (a dev-dependency only): a scripted model server
//! that stands in for the reviewer's and the agents' model providers, the canned reviewer
//! replies the suites script it with, a fake OpenCode server for the core's flows and fault
//! injection, and waits on the core's change stream. A panic here is the calling test failing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod changes;
pub mod fake_opencode;
pub mod model_server;
pub mod replies;

pub use model_server::{ModelServer, Reply, Seen, unreachable_base_url};
