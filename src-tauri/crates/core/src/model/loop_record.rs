//! The loop's record: what the UI shows (round n of N, whose turn, since when, why it stopped)
//! and what a restart resumes from (the step in progress and the message id it chose), kept in
//! SQLite as one JSON row per pair, keyed by the implementing session.

pub use super::budget::{LoopBudget, MAX_BUDGET_MINUTES};
use crosscheck_review::findings::Severity;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ids::SessionId;
use crate::db::Db;
use crate::error::{Error, Result};

/// Default round cap.
pub const DEFAULT_MAX_ROUNDS: u32 = 5;
/// The highest round cap accepted.
pub const MAX_MAX_ROUNDS: u32 = 50;

/// Whose turn it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum LoopPhase {
    /// The reviewer's turn: waiting for its reply.
    Reviewing,
    /// The implementer's turn: waiting for its answer to the findings.
    Implementing,
    /// The loop has stopped; see `stop`.
    Stopped,
}

/// Why a loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum StopReason {
    /// The reviewer's verdict is CLEAN.
    Clean,
    /// Only findings below the threshold are open (nothing to forward).
    BelowThreshold,
    /// The round cap was reached with findings still open.
    RoundCap,
    /// No progress: the same finding open three rounds running, or the open set unchanged.
    Stalled,
    /// The reviewer kept open a finding the implementer disputes.
    Disputed,
    /// The reviewer's reply has no findings block and verdict the loop can read.
    Unparsed,
    /// The reviewer said CLEAN but, asked once, still did not say it reviewed every changed
    /// file (or named none at all).
    Uncovered,
    /// A turn failed.
    TurnFailed,
    /// A turn was aborted.
    Aborted,
    /// A permission request waits in one of the sessions.
    PermissionWaiting,
    /// A question to the user waits in one of the sessions.
    QuestionWaiting,
    /// The user typed in one of the sessions and took over.
    UserTookOver,
    /// The user pressed Stop.
    UserStopped,
    /// One of the two sessions is gone (deleted or unlinked).
    SessionGone,
    /// The loop's budget (tokens, money or minutes) is spent.
    Budget,
    /// Another Crosscheck process runs this pair's loop (its claim on the implementing session
    /// stands on the server): this one sends nothing.
    RunsElsewhere,
}

/// How and when a loop stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoopStop {
    /// Why.
    pub reason: StopReason,
    /// The English words shown with the reason (the UI localizes `reason` and shows this as
    /// the detail: the findings concerned, the error's words).
    pub detail: String,
    /// The findings the reason concerns (stalled, disputed).
    pub finding_ids: Vec<String>,
    /// When, ms since the epoch.
    #[ts(type = "number")]
    pub at: i64,
}

/// A prompt the loop chose an id for: written before it is sent, so a restart can tell by the
/// id whether it went out (dedupe) and send it when it did not (nothing missed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct PendingSend {
    /// The session it goes to.
    pub session_id: String,
    /// The id the loop chose.
    pub message_id: String,
    /// The visible text (the seed's words).
    pub visible: String,
    /// The hidden synthetic instructions.
    pub hidden: String,
}

/// One review loop of a pair, as stored and as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct LoopState {
    /// Loop id.
    pub id: String,
    /// The implementing session.
    pub original_session_id: SessionId,
    /// The reviewing session.
    pub review_session_id: SessionId,
    /// The round in progress (1 is the first review).
    pub round: u32,
    /// The round cap.
    pub max_rounds: u32,
    /// Findings at or above this severity are forwarded.
    pub threshold: Severity,
    /// Whose turn it is.
    pub phase: LoopPhase,
    /// When the loop started, ms since the epoch.
    #[ts(type = "number")]
    pub started_at: i64,
    /// When the current turn started, ms since the epoch.
    #[ts(type = "number")]
    pub phase_started_at: i64,
    /// The user message whose reply the loop waits for.
    #[ts(optional)]
    pub awaiting_message_id: Option<String>,
    /// A prompt chosen but maybe not yet sent.
    #[ts(optional)]
    pub pending: Option<PendingSend>,
    /// Every message id the loop chose (its own prompts, never the user's).
    pub sent_message_ids: Vec<String>,
    /// Findings the implementer claimed fixed while the code did not change (told to the
    /// reviewer in the next hidden part).
    pub claimed_unchanged: Vec<String>,
    /// The code fingerprint of the last reviewer reply.
    #[ts(optional)]
    pub review_fingerprint: Option<String>,
    /// The changed files the loop asked the reviewer about after a CLEAN that did not cover
    /// them (empty: the CLEAN named no file); set while that ask is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub coverage_asked: Option<Vec<String>>,
    /// The implementer was sent back once, in this round, for disputes without evidence.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(skip)]
    pub evidence_asked: bool,
    /// Why it stopped, once it has.
    #[ts(optional)]
    pub stop: Option<LoopStop>,
    /// Whether it has stopped.
    pub ended: bool,
    /// What each round used (tokens, cost, wall time), in round order.
    #[serde(default)]
    pub costs: Vec<RoundCost>,
    /// The budget that stops the loop once it is spent.
    #[serde(default)]
    pub budget: LoopBudget,
}

/// Tokens, cost and wall time one round of a loop used: the reviewer's turn and the
/// implementer's answer to it, as OpenCode counts them on the assistant messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RoundCost {
    /// The round (1 is the first review).
    pub round: u32,
    /// Tokens: prompt, completion, reasoning and prompt cache, of every step.
    #[ts(type = "number")]
    pub tokens: u64,
    /// Cost in millionths of a dollar (the server's figure; 0 when the model has no price).
    #[ts(type = "number")]
    pub cost_micros: u64,
    /// Wall time of the round's turns, ms.
    #[ts(type = "number")]
    pub ms: u64,
}

/// A loop's figures over every round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopTotals {
    /// Tokens.
    pub tokens: u64,
    /// Cost, millionths of a dollar.
    pub cost_micros: u64,
    /// Wall time since the loop started, ms.
    pub ms: u64,
}

impl LoopState {
    /// The figures of every round so far, with the wall time up to `now` (ms since the epoch).
    pub fn totals(&self, now: i64) -> LoopTotals {
        LoopTotals {
            tokens: self.costs.iter().map(|c| c.tokens).sum(),
            cost_micros: self.costs.iter().map(|c| c.cost_micros).sum(),
            ms: u64::try_from(now.saturating_sub(self.started_at)).unwrap_or(0),
        }
    }

    /// Adds one turn's figures to the round in progress.
    pub fn add_turn(&mut self, tokens: u64, cost_micros: u64, ms: u64) {
        let round = self.round;
        let entry = match self.costs.iter().position(|c| c.round == round) {
            Some(i) => &mut self.costs[i],
            None => {
                self.costs.push(RoundCost {
                    round,
                    ..RoundCost::default()
                });
                let last = self.costs.len() - 1;
                &mut self.costs[last]
            }
        };
        entry.tokens = entry.tokens.saturating_add(tokens);
        entry.cost_micros = entry.cost_micros.saturating_add(cost_micros);
        entry.ms = entry.ms.saturating_add(ms);
    }

    /// Which limit of the budget is spent at `now`, in words with the figures; `None` while
    /// every limit holds.
    pub fn budget_spent(&self, now: i64) -> Option<String> {
        let t = self.totals(now);
        let b = &self.budget;
        let limit = if b.tokens.is_some_and(|max| t.tokens >= max) {
            format!("{} tokens", b.tokens.unwrap_or_default())
        } else if b.cost_micros.is_some_and(|max| t.cost_micros >= max) {
            format!("${}", dollars(b.cost_micros.unwrap_or_default()))
        } else if b.minutes.is_some_and(|max| t.ms >= u64::from(max) * 60_000) {
            format!("{} min", b.minutes.unwrap_or_default())
        } else {
            return None;
        };
        Some(format!(
            "the budget of {limit} is spent: {} tokens, ${}, {} over {} round(s)",
            t.tokens,
            dollars(t.cost_micros),
            duration(t.ms),
            self.costs.len().max(1)
        ))
    }
}

/// Millionths of a dollar as dollars with four decimals.
pub fn dollars(micros: u64) -> String {
    format!("{}.{:04}", micros / 1_000_000, (micros % 1_000_000) / 100)
}

/// A wall time as `1 min 5 s` or `42 s`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// Creates the loop table (called when the database opens).
pub(crate) fn create_table(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS loop_records (
            original_session TEXT PRIMARY KEY, review_session TEXT NOT NULL, ended INTEGER NOT NULL,
            record TEXT NOT NULL, updated_at INTEGER NOT NULL);",
    )
}

/// Saves a loop's record (one row per pair: a new loop replaces the pair's old one).
pub fn save(db: &Db, state: &LoopState) -> Result<()> {
    let text = serde_json::to_string(state).map_err(|e| Error::Internal(e.to_string()))?;
    db.with(|c| {
        c.execute(
            "INSERT INTO loop_records (original_session, review_session, ended, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (original_session) DO UPDATE SET review_session = excluded.review_session,
               ended = excluded.ended, record = excluded.record, updated_at = excluded.updated_at",
            params![
                state.original_session_id,
                state.review_session_id,
                state.ended,
                text,
                crate::model::now_ms()
            ],
        )?;
        Ok(())
    })
}

fn parse(text: &str) -> Option<LoopState> {
    match serde_json::from_str(text) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("an unreadable loop record is skipped: {e}");
            None
        }
    }
}

/// The loop record of the pair that `session_id` belongs to (either side).
pub fn load(db: &Db, session_id: &str) -> Result<Option<LoopState>> {
    let text: Option<String> = db.with(|c| {
        Ok(c.query_row(
            "SELECT record FROM loop_records WHERE original_session = ?1 OR review_session = ?1
             ORDER BY updated_at DESC LIMIT 1",
            [session_id],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    Ok(text.as_deref().and_then(parse))
}

/// Every loop record, running ones and the newest 200 that ended.
pub fn list(db: &Db) -> Result<Vec<LoopState>> {
    let rows: Vec<String> = db.with(|c| {
        let mut stmt = c.prepare(
            "SELECT record FROM loop_records WHERE ended = 0
             UNION ALL SELECT record FROM (SELECT record FROM loop_records WHERE ended = 1
               ORDER BY updated_at DESC LIMIT 200)",
        )?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    })?;
    Ok(rows.iter().filter_map(|t| parse(t)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(budget: LoopBudget) -> LoopState {
        LoopState {
            id: "lop_1".into(),
            original_session_id: "ses_o".into(),
            review_session_id: "ses_r".into(),
            round: 1,
            max_rounds: 5,
            threshold: Severity::Minor,
            phase: LoopPhase::Reviewing,
            started_at: 1_000,
            phase_started_at: 1_000,
            awaiting_message_id: None,
            pending: None,
            sent_message_ids: Vec::new(),
            claimed_unchanged: Vec::new(),
            review_fingerprint: None,
            coverage_asked: None,
            evidence_asked: false,
            stop: None,
            ended: false,
            costs: Vec::new(),
            budget,
        }
    }

    #[test]
    fn each_round_adds_up_its_turns_and_the_budget_names_the_figures() {
        let mut s = state(LoopBudget {
            tokens: Some(1_000),
            ..LoopBudget::default()
        });
        s.add_turn(300, 1_500, 2_000);
        s.add_turn(200, 500, 1_000);
        s.round = 2;
        s.add_turn(400, 2_000, 4_000);
        assert_eq!(
            s.costs,
            vec![
                RoundCost {
                    round: 1,
                    tokens: 500,
                    cost_micros: 2_000,
                    ms: 3_000
                },
                RoundCost {
                    round: 2,
                    tokens: 400,
                    cost_micros: 2_000,
                    ms: 4_000
                },
            ]
        );
        assert_eq!(s.budget_spent(66_000), None, "900 of 1000 tokens");
        s.add_turn(100, 0, 10);
        assert_eq!(
            s.budget_spent(66_000).as_deref(),
            Some(
                "the budget of 1000 tokens is spent: 1000 tokens, $0.0040, 1 min 5 s over 2 round(s)"
            )
        );
    }

    #[test]
    fn money_and_minutes_budgets_stop_too_and_zero_limits_are_refused() {
        let mut s = state(LoopBudget {
            cost_micros: Some(10_000),
            ..LoopBudget::default()
        });
        s.add_turn(1, 9_999, 1);
        assert_eq!(s.budget_spent(2_000), None);
        s.add_turn(1, 1, 1);
        assert!(
            s.budget_spent(2_000)
                .unwrap()
                .starts_with("the budget of $0.0100 is spent")
        );
        let s = state(LoopBudget {
            minutes: Some(2),
            ..LoopBudget::default()
        });
        assert_eq!(s.budget_spent(1_000 + 119_000), None);
        assert!(
            s.budget_spent(1_000 + 120_000)
                .unwrap()
                .starts_with("the budget of 2 min is spent")
        );
        assert!(
            LoopBudget {
                tokens: Some(0),
                ..LoopBudget::default()
            }
            .problem()
            .is_some()
        );
        assert!(
            LoopBudget {
                minutes: Some(MAX_BUDGET_MINUTES + 1),
                ..LoopBudget::default()
            }
            .problem()
            .is_some()
        );
        assert!(LoopBudget::default().problem().is_none());
    }

    #[test]
    fn a_budget_leaves_out_the_limits_it_does_not_set() {
        let budget = LoopBudget {
            tokens: Some(1000),
            ..LoopBudget::default()
        };
        assert_eq!(
            serde_json::to_value(budget).unwrap(),
            serde_json::json!({"tokens": 1000})
        );
    }

    #[test]
    fn a_record_from_before_costs_reads_with_none() {
        let mut value = serde_json::to_value(state(LoopBudget::default())).unwrap();
        let obj = value.as_object_mut().unwrap();
        obj.remove("costs");
        obj.remove("budget");
        let back: LoopState = serde_json::from_value(value).unwrap();
        assert!(back.costs.is_empty());
        assert!(back.budget.is_empty());
    }
}
