//! The findings of a review link, as the Findings list shows them ([`crate::findings`] records
//! them).

use crosscheck_review::findings::{FindingStatus, Reviewed, Severity};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Who gave a finding its status in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum RoundSide {
    /// The reviewer's reply (a new finding, or a status line).
    Reviewer,
    /// The implementer's answer by id.
    Implementer,
}

/// The lines around a finding (its line or range plus a margin, as the last review saw them)
/// that an implementer's turn claiming the finding fixed left as they were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct UnchangedLines {
    /// The file, relative to the session's folder.
    pub path: String,
    /// The first line, as the last review saw the file (1-based).
    pub first_line: u32,
    /// The last line, as the last review saw the file.
    pub last_line: u32,
    /// Where the same lines start now, when lines added or removed above them moved them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub now_first_line: Option<u32>,
}

/// A finding's status as one side gave it in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FindingRound {
    /// The round (1 is the first reviewer reply).
    pub round: u32,
    /// Who said it.
    pub side: RoundSide,
    /// The status given.
    pub status: FindingStatus,
    /// The reason given (a dispute's, a withdrawal's), if any.
    #[ts(optional)]
    pub note: Option<String>,
    /// The implementer said FIXED but the code fingerprint did not change that round.
    pub claimed_unchanged: bool,
    /// With `claimed_unchanged`: the lines around the finding that the claimed fix left as
    /// they were, when the finding had a line (absent: judged by its whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unchanged_lines: Option<UnchangedLines>,
    /// The message that said it.
    pub message_id: String,
}

/// One finding of a link, as the Findings list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FindingView {
    /// `F1`, `F2`, ...
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// `path:line`, when given.
    #[ts(optional)]
    pub location: Option<String>,
    /// One line.
    pub title: String,
    /// The lines under it, when any.
    #[ts(optional)]
    pub detail: Option<String>,
    /// Its status now (the newest entry of `history`).
    pub status: FindingStatus,
    /// The round that opened it.
    pub first_round: u32,
    /// The reviewer message that opened it.
    pub message_id: String,
    /// The newest implementer answer claimed a fix the code does not show.
    pub claimed_unchanged: bool,
    /// With `claimed_unchanged`: the finding's lines that stayed as they were, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unchanged_lines: Option<UnchangedLines>,
    /// Every status it had, oldest first.
    pub history: Vec<FindingRound>,
}

/// What a reviewer reply says it reviewed, against the files the work changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct RoundCoverage {
    /// The files its `REVIEWED` lines name (with the lines read, when given); a reply that
    /// answered a request for missing files counts what the reply before it named too.
    pub reviewed: Vec<Reviewed>,
    /// The files the work changed (uncommitted against the checked-out commit, deleted ones
    /// left out) when the review's folder is a git repository; absent when unknown.
    #[ts(optional)]
    pub changed: Option<Vec<String>>,
    /// The changed files no `REVIEWED` line names.
    pub uncovered: Vec<String>,
}

/// One reviewer reply of a link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewRound {
    /// 1 for the first reply.
    pub round: u32,
    /// The reviewer's assistant message.
    pub message_id: String,
    /// `CLEAN` or `FLAGS (n)`; absent when the reply did not parse.
    #[ts(optional)]
    pub verdict: Option<String>,
    /// Why the reply did not parse, when it did not.
    #[ts(optional)]
    pub unparsed: Option<String>,
    /// The code fingerprint when the reply completed, when known.
    #[ts(optional)]
    pub fingerprint: Option<String>,
    /// When it was recorded, ms since the epoch.
    #[ts(type = "number")]
    pub at: i64,
    /// What it says it reviewed, when recorded.
    #[ts(optional)]
    pub coverage: Option<RoundCoverage>,
}

/// Everything tracked for one review link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FindingsView {
    /// The review session (the link's key).
    pub review_session_id: String,
    /// The implementing session, when known.
    #[ts(optional)]
    pub original_session_id: Option<String>,
    /// Findings by id order (F1, F2, ..., F10).
    pub findings: Vec<FindingView>,
    /// Reviewer replies, oldest first.
    pub rounds: Vec<ReviewRound>,
}

impl FindingsView {
    /// The findings open now (open or disputed).
    pub fn open(&self) -> impl Iterator<Item = &FindingView> {
        self.findings.iter().filter(|f| f.status.is_open())
    }
}
