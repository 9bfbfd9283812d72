//! The automatic review loop: the reviewer's reply completes, its findings are parsed and
//! recorded; the open ones at or above the threshold go to the implementer in the seed's
//! feedback words (with a hidden instruction to answer each by id); the implementer's answer
//! goes back to the reviewer in the seed's response words; and so on until a stop rule ends it.

pub(crate) mod code;
pub mod hidden;
pub mod record;
pub(crate) mod recorder;

pub use record::{LoopPhase, LoopState, LoopStop, PendingSend, StopReason};
