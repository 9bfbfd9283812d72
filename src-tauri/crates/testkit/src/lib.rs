//! Test parts shared by Crosscheck's crates (a dev-dependency only): a scripted model server
//! that stands in for the reviewer's and the agents' model providers, and the canned reviewer
//! replies the suites script it with. A panic here is the calling test failing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod model_server;
pub mod replies;

pub use model_server::{ModelServer, Reply, Seen, unreachable_base_url};
