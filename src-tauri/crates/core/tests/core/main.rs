//! The core's integration tests, through the typed Api against the test kit's fake OpenCode: flows,
//! faults, sync, followers, permissions and the in-app cold review.
//! One test binary for the whole crate: on two cores, linking one binary instead of one per
//! file saves most of the tests' build time.

mod support;

mod attention;
mod changes;
mod cold_review;
mod comments;
mod fingerprint;
mod flow_faults;
mod folders;
mod followers;
mod handoff_claim;
mod handoff_flows;
mod history;
mod pair_view;
mod permissions;
mod review_loop;
mod search;
mod send_findings;
mod server_passwords;
mod servers;
mod sync_buffering;
mod sync_listing;
mod sync_reconnect;
mod transcripts;
mod transfers;
mod worktree_merge;
