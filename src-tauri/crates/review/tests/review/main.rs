//! The review engine's integration tests: cadence, the provider contract and the verdict shapes,
//! against the test kit's scripted model server.
//! One test binary for the whole crate: on two cores, linking one binary instead of one per
//! file saves most of the tests' build time.

mod common;

mod cadence;
mod contract;
mod findings_shapes;
mod trust;
mod verdict_shapes;
mod verdict_spellings;
