//! Structured log lines: one JSON object per line.
//!
//! Events: `plan_review.done {mode, reviewer, outcome, ms, source}`,
//! `plan_review.skipped {reason}` and the `commit_review.*` twins. The default sink writes to
//! stderr; tests and the app inject their own.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use crate::types::{ReviewKind, ReviewSource};

/// Somewhere log lines go.
pub trait LogSink: Send + Sync {
    /// Writes one complete line (a JSON object, without the newline).
    fn write_line(&self, line: &str);
}

/// Writes each line to stderr.
#[derive(Debug, Default)]
pub struct StderrSink;

impl LogSink for StderrSink {
    fn write_line(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        // A closed stderr must not turn a review into a failure.
        let _ = writeln!(err, "{line}");
    }
}

/// Keeps lines in memory (tests, or an app that forwards them elsewhere).
#[derive(Debug, Default)]
pub struct MemorySink {
    lines: Mutex<Vec<String>>,
}

impl MemorySink {
    /// The lines written so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The lines parsed back as JSON values.
    pub fn events(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl LogSink for MemorySink {
    fn write_line(&self, line: &str) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.to_owned());
    }
}

/// A cheap, clonable handle on a [`LogSink`].
#[derive(Clone)]
pub struct Logger(Arc<dyn LogSink>);

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Logger")
    }
}

impl Default for Logger {
    fn default() -> Self {
        Self::stderr()
    }
}

/// The fields of a `*.done` event.
#[derive(Debug, Clone)]
pub struct DoneFields<'a> {
    /// How the reviewer was chosen: `self` (the author) or `floor`.
    pub mode: &'a str,
    /// The reviewer model.
    pub reviewer: &'a str,
    /// The outcome code.
    pub outcome: &'a str,
    /// Milliseconds spent in the reviewer call(s).
    pub ms: u64,
    /// Where the text came from.
    pub source: ReviewSource,
    /// Why the rule's reviewer was passed over for the floor, when it was.
    pub fallback: Option<&'a str>,
    /// How the reviewer was reached: `direct`, `opencode`, or `none` (it could not be).
    pub route: &'a str,
}

impl Logger {
    /// Logs to stderr.
    pub fn stderr() -> Self {
        Self(Arc::new(StderrSink))
    }

    /// Logs to the given sink.
    pub fn new(sink: Arc<dyn LogSink>) -> Self {
        Self(sink)
    }

    /// Logs to a fresh [`MemorySink`], returned alongside.
    pub fn memory() -> (Self, Arc<MemorySink>) {
        let sink = Arc::new(MemorySink::default());
        (Self(sink.clone()), sink)
    }

    /// Writes `{"event": name, ...fields}`.
    pub fn event(&self, name: &str, fields: Value) {
        let mut object = Map::new();
        object.insert("event".into(), Value::String(name.into()));
        if let Value::Object(rest) = fields {
            object.extend(rest);
        }
        self.0.write_line(&Value::Object(object).to_string());
    }

    /// `plan_review.done` / `commit_review.done`.
    pub fn done(&self, kind: ReviewKind, fields: DoneFields<'_>) {
        let mut event = json!({
            "mode": fields.mode,
            "reviewer": fields.reviewer,
            "outcome": fields.outcome,
            "ms": fields.ms,
            "source": fields.source.as_str(),
            "route": fields.route,
        });
        if let (Some(fallback), Value::Object(map)) = (fields.fallback, &mut event) {
            map.insert("fallback".into(), Value::String(fallback.into()));
        }
        self.event(&format!("{}_review.done", kind.as_str()), event);
    }

    /// `plan_review.skipped` / `commit_review.skipped`.
    pub fn skipped(&self, kind: ReviewKind, reason: &str) {
        self.event(
            &format!("{}_review.skipped", kind.as_str()),
            json!({ "reason": reason }),
        );
    }
}
