//! Where a loop step's time goes, on the hot path from "the awaited reply is complete in the
//! store" to "the next prompt is accepted": logged at debug level under the target
//! `crosscheck_core::loop_timing` (`CROSSCHECK_LOG=crosscheck_core::loop_timing=debug`); a
//! transfer's, from the request to the prompt accepted, under `crosscheck_core::transfer_timing`.

use std::time::Instant;

/// The marks of one step, from the moment the store showed the reply complete.
#[derive(Debug)]
pub(crate) struct StepTimer {
    seen: Instant,
    /// The same moment on the wall clock (ms since the epoch), to set beside the server's own
    /// timestamps (the reply's completion, the next prompt's creation).
    seen_at: f64,
    /// The reply the step answers (a loop step's).
    reply_id: Option<String>,
    marks: Vec<(&'static str, Instant)>,
}

impl StepTimer {
    /// Starts timing a step now (the reply was just seen complete, or a transfer was asked for).
    pub(crate) fn start() -> Self {
        let seen_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        Self {
            seen: Instant::now(),
            seen_at,
            reply_id: None,
            marks: Vec::with_capacity(8),
        }
    }

    /// Starts timing the loop step that answers `reply_id` (just seen complete).
    pub(crate) fn for_reply(reply_id: &str) -> Self {
        Self {
            reply_id: Some(reply_id.to_owned()),
            ..Self::start()
        }
    }

    /// Marks the end of a stage.
    pub(crate) fn mark(&mut self, stage: &'static str) {
        self.mark_at(stage, Instant::now());
    }

    /// Marks the end of a stage that ended at `at` (one of several run at once).
    pub(crate) fn mark_at(&mut self, stage: &'static str, at: Instant) {
        self.marks.push((stage, at));
    }

    /// Each stage's time since the start and the total, as the logs print them.
    fn stages(&self) -> (String, f64) {
        // Each stage is timed from the step's start: stages run at once overlap.
        let mut stages = String::new();
        let mut last = self.seen;
        for (stage, at) in &self.marks {
            let ms = at.duration_since(self.seen).as_secs_f64() * 1000.0;
            stages.push_str(&format!(" {stage} @{ms:.2}"));
            last = last.max(*at);
        }
        (
            stages,
            last.duration_since(self.seen).as_secs_f64() * 1000.0,
        )
    }

    /// Logs a transfer's stages (from the request's start to the prompt accepted) under the
    /// target `crosscheck_core::transfer_timing`.
    pub(crate) fn log_transfer(&self) {
        if !tracing::enabled!(target: "crosscheck_core::transfer_timing", tracing::Level::DEBUG) {
            return;
        }
        let (stages, total) = self.stages();
        tracing::debug!(
            target: "crosscheck_core::transfer_timing",
            "transfer (ms):{stages}, total {total:.2}"
        );
    }

    /// Logs each stage's time and the total, with the reply the step answered and when (on the
    /// wall clock) the store showed it complete.
    pub(crate) fn log(&self, loop_id: &str, round: u32) {
        let (stages, total) = self.stages();
        tracing::debug!(
            target: "crosscheck_core::loop_timing",
            loop_id,
            round,
            reply_id = self.reply_id.as_deref().unwrap_or_default(),
            seen_at = format!("{:.2}", self.seen_at),
            "loop step (ms):{stages}, total {total:.2}"
        );
    }
}
