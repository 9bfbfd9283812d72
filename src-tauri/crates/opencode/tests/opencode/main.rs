//! The OpenCode client's integration tests: faults of the HTTP client and the event stream, the
//! supervisor, and the contract against the real `opencode serve`.
//! One test binary for the whole crate: on two cores, linking one binary instead of one per
//! file saves most of the tests' build time.

mod client_fault;
mod message_tokens;
mod real_changes;
mod real_server;
mod stream_fault;
mod supervisor;
