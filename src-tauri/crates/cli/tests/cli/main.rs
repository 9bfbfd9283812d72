//! The gate's integration tests: the real `crosscheck` binary run as a separate process against
//! the test kit's scripted model server, in an isolated environment.
//! One test binary for the whole crate: on two cores, linking one binary instead of one per
//! file saves most of the tests' build time.

mod gate_support;

mod gate_chaos;
mod gate_commit;
mod gate_install;
mod gate_plan;
mod gate_review;
mod gate_trust;
mod serve_port;
