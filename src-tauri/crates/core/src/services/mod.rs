//! Core services that flows, the resync and request handlers share: opening tabs, following a
//! transcript, finding a review link. They sit below both (nothing here imports `flows/` or
//! `requests/`), so a flow never calls a request handler.

pub mod review_link;
pub mod tabs;
pub mod transcripts;
