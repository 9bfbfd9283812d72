//! The types callers and the UI see.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What is being reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ReviewKind {
    /// A plan draft, checked against P1-P8.
    Plan,
    /// A staged diff, checked against J1-J8.
    Commit,
}

impl ReviewKind {
    /// The stable lower-case name stored in the ledger and used in log events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Commit => "commit",
        }
    }

    /// Parses [`Self::as_str`] back.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "plan" => Some(Self::Plan),
            "commit" => Some(Self::Commit),
            _ => None,
        }
    }

    /// The noun used in messages to people ("plan", "commit").
    pub fn noun(self) -> &'static str {
        self.as_str()
    }
}

/// Where the reviewed text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ReviewSource {
    /// A plan draft file on disk (wins over the parameter).
    Draft,
    /// The plan passed as the tool's parameter (`tool_input.plan`, `--text`).
    Parameter,
    /// A chat message picked in the app.
    Message,
    /// The staged diff of a commit.
    Staged,
}

impl ReviewSource {
    /// The stable lower-case name stored in the ledger and used in log events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Parameter => "parameter",
            Self::Message => "message",
            Self::Staged => "staged",
        }
    }

    /// Parses [`Self::as_str`] back.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "draft" => Some(Self::Draft),
            "parameter" => Some(Self::Parameter),
            "message" => Some(Self::Message),
            "staged" => Some(Self::Staged),
            _ => None,
        }
    }
}

/// The state of one key in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ReviewStatus {
    /// The reviewer ran and every check passed on the whole text.
    Clean,
    /// The reviewer ran and flagged findings, or its reply could not be trusted to be clean
    /// (truncated input, malformed verdict).
    Flagged,
    /// The review could not run (timeout, transport, auth, unusable reply).
    Unreviewed,
    /// A review for this key is in flight.
    Pending,
}

impl ReviewStatus {
    /// The stable lower-case name stored in the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Flagged => "flagged",
            Self::Unreviewed => "unreviewed",
            Self::Pending => "pending",
        }
    }

    /// Parses [`Self::as_str`] back.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "clean" => Some(Self::Clean),
            "flagged" => Some(Self::Flagged),
            "unreviewed" => Some(Self::Unreviewed),
            "pending" => Some(Self::Pending),
            _ => None,
        }
    }
}

/// What the host should do with the gated action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum Action {
    /// Let the plan exit / commit go through.
    Proceed,
    /// Stop it and show [`ReviewDecision::reason`].
    Block,
}

/// Whether the key must follow the cadence or be reviewed regardless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum Cadence {
    /// One pause per distinct text: the first attempt is reviewed, the same text again proceeds.
    #[default]
    Gate,
    /// Review now even when the key is in the ledger (`crosscheck review FILE`, the app's button).
    Always,
}

/// One thing to review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewRequest {
    /// Plan or commit.
    pub kind: ReviewKind,
    /// Where the text came from.
    pub source: ReviewSource,
    /// The working directory the text belongs to; part of the key.
    pub cwd: String,
    /// The plan text or the staged diff.
    pub text: String,
    /// The draft file, when the text came from one.
    pub path: Option<String>,
    /// For commits: the staged file list.
    #[serde(default)]
    pub files: Vec<String>,
    /// The model that wrote the text, if known; drives the reviewer choice.
    pub author: Option<String>,
    /// Cadence to apply.
    #[serde(default)]
    pub cadence: Cadence,
    /// The app's session the text came from, when a review is started from one (gates
    /// leave it out); the ledger keeps it so the row can open that session.
    #[serde(default)]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// The assistant message reviewed, within [`Self::session_id`].
    #[serde(default)]
    #[ts(optional)]
    pub message_id: Option<String>,
}

impl ReviewRequest {
    /// A plan request with the gate cadence.
    pub fn plan(cwd: impl Into<String>, text: impl Into<String>, source: ReviewSource) -> Self {
        Self {
            kind: ReviewKind::Plan,
            source,
            cwd: cwd.into(),
            text: text.into(),
            path: None,
            files: Vec::new(),
            author: None,
            cadence: Cadence::Gate,
            session_id: None,
            message_id: None,
        }
    }

    /// A commit request (source `staged`) with the gate cadence.
    pub fn commit(cwd: impl Into<String>, diff: impl Into<String>, files: Vec<String>) -> Self {
        Self {
            kind: ReviewKind::Commit,
            source: ReviewSource::Staged,
            cwd: cwd.into(),
            text: diff.into(),
            path: None,
            files,
            author: None,
            cadence: Cadence::Gate,
            session_id: None,
            message_id: None,
        }
    }

    /// The ledger key of this request: see [`crate::review_key`].
    pub fn key(&self) -> String {
        crate::review_key(&self.cwd, &self.text)
    }
}

/// The engine's answer for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewDecision {
    /// Ledger key (sha256 hex of `cwd + "\n" + text`).
    pub key: String,
    /// Plan or commit.
    pub kind: ReviewKind,
    /// Where the text came from.
    pub source: ReviewSource,
    /// Proceed or block.
    pub action: Action,
    /// The key's status after this attempt.
    pub status: ReviewStatus,
    /// Detailed outcome code: `clean`, `flagged`, `truncated`, `malformed`, `timeout`,
    /// `transport`, `auth`, `rate_limited`, `http_error`, `bad_reply`, or for ledger hits
    /// `unchanged` / `in_progress`.
    pub outcome: String,
    /// The reviewer model, when a review ran.
    pub reviewer: Option<String>,
    /// The reviewer's reply, when one was usable.
    pub review: Option<String>,
    /// The verdict line's value (`CLEAN`, `FLAGS (2)`), when parsed.
    pub verdict: Option<String>,
    /// Number of FAIL lines in the reply.
    pub findings: Option<u32>,
    /// Text for the host: the block reason, or a note when proceeding unreviewed.
    pub reason: Option<String>,
    /// Whether the text sent to the reviewer was cut at the size limit.
    pub truncated: bool,
    /// True when the answer came from the ledger without a review.
    pub ledger_hit: bool,
    /// Time spent in the reviewer call(s), in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// One row of the ledger, as the app lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct LedgerEntry {
    /// Ledger key.
    pub key: String,
    /// Plan or commit.
    pub kind: ReviewKind,
    /// Where the text came from (of the latest claim).
    pub source: ReviewSource,
    /// The working directory.
    pub cwd: String,
    /// The draft file, if any.
    pub path: Option<String>,
    /// The author model, if known.
    pub author: Option<String>,
    /// The reviewer model, once chosen.
    pub reviewer: Option<String>,
    /// Current status.
    pub status: ReviewStatus,
    /// Detailed outcome code (see [`ReviewDecision::outcome`]).
    pub outcome: String,
    /// The verdict line's value, when parsed.
    pub verdict: Option<String>,
    /// Number of FAIL lines.
    pub findings: Option<u32>,
    /// The reviewer's reply.
    pub review: Option<String>,
    /// The reply's lines that fail a check, as the engine counted them.
    pub failed_checks: Vec<String>,
    /// Reviewer time in milliseconds.
    #[ts(type = "number | null")]
    pub duration_ms: Option<u64>,
    /// Reviews that could not run for this key (bounded by two).
    pub attempts: u32,
    /// When the key was first claimed, ms since the Unix epoch.
    #[ts(type = "number")]
    pub created_at: i64,
    /// Last change, ms since the Unix epoch.
    #[ts(type = "number")]
    pub updated_at: i64,
    /// The app's session the latest review started from a session came from (a gate's
    /// review keeps the earlier one).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The assistant message that review read, within [`Self::session_id`].
    #[serde(default)]
    pub message_id: Option<String>,
    /// The key's earlier reviews, newest first (the row itself holds the latest).
    #[serde(default)]
    pub earlier: Vec<ReviewRun>,
}

/// One finished review of a key, as the ledger's history keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewRun {
    /// Clean, flagged or unreviewed.
    pub status: ReviewStatus,
    /// Detailed outcome code (see [`ReviewDecision::outcome`]).
    pub outcome: String,
    /// The verdict line's value, when parsed.
    pub verdict: Option<String>,
    /// Number of FAIL lines.
    pub findings: Option<u32>,
    /// The reviewer model.
    pub reviewer: Option<String>,
    /// Reviewer time in milliseconds.
    #[ts(type = "number | null")]
    pub duration_ms: Option<u64>,
    /// The app's session it was started from, if any.
    pub session_id: Option<String>,
    /// The assistant message it read, if any.
    pub message_id: Option<String>,
    /// When it was recorded, ms since the Unix epoch.
    #[ts(type = "number")]
    pub reviewed_at: i64,
}
