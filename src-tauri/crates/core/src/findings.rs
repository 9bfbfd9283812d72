//! Findings of a review link, kept in SQLite across rounds: every reviewer reply is a round
//! (its verdict, the code fingerprint it saw, the findings it opened and the status it gave
//! earlier ones), and the implementer's answers by id are kept beside the round they answer.
//!
//! A link is keyed by its review session (one review session per original). Recording is
//! idempotent by message id, so a reply seen twice (event and reconcile, or after a restart)
//! is one round.

use crosscheck_review::findings::{
    FindingStatus, FindingsReply, Reviewed, Severity, parse_answers, uncovered,
};
use rusqlite::{OptionalExtension, params};

use crate::db::Db;
use crate::error::Result;
pub use crate::model::findings::{
    FindingRound, FindingView, FindingsView, ReviewRound, RoundCoverage, RoundSide, UnchangedLines,
};

/// What recording a reviewer reply did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Its round number.
    pub round: u32,
    /// False when this message was recorded before (nothing changed).
    pub new: bool,
}

/// Creates the findings tables (called when the database opens).
pub(crate) fn create_tables(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS loop_rounds (
            review_session TEXT NOT NULL, round INTEGER NOT NULL, message_id TEXT NOT NULL,
            original_session TEXT, verdict TEXT, unparsed TEXT, fingerprint TEXT, at INTEGER NOT NULL,
            PRIMARY KEY (review_session, round), UNIQUE (review_session, message_id));
         CREATE TABLE IF NOT EXISTS loop_findings (
            review_session TEXT NOT NULL, id TEXT NOT NULL, severity TEXT NOT NULL, location TEXT,
            title TEXT NOT NULL, detail TEXT, first_round INTEGER NOT NULL, message_id TEXT NOT NULL,
            PRIMARY KEY (review_session, id));
         CREATE TABLE IF NOT EXISTS loop_finding_status (
            review_session TEXT NOT NULL, id TEXT NOT NULL, round INTEGER NOT NULL, side TEXT NOT NULL,
            status TEXT NOT NULL, note TEXT, claimed_unchanged INTEGER NOT NULL DEFAULT 0,
            message_id TEXT NOT NULL, seq INTEGER NOT NULL,
            PRIMARY KEY (review_session, id, round, side));
         CREATE TABLE IF NOT EXISTS loop_round_coverage (
            review_session TEXT NOT NULL, round INTEGER NOT NULL, reviewed TEXT NOT NULL,
            changed TEXT, directory TEXT, PRIMARY KEY (review_session, round));
         CREATE TABLE IF NOT EXISTS loop_answers (
            review_session TEXT NOT NULL, message_id TEXT NOT NULL, round INTEGER NOT NULL,
            PRIMARY KEY (review_session, message_id));",
    )?;
    // A table made before the lines of a claimed-unchanged finding were kept gets the column.
    let has_lines = conn
        .prepare(
            "SELECT 1 FROM pragma_table_info('loop_finding_status') WHERE name = 'unchanged_lines'",
        )?
        .exists([])?;
    if !has_lines {
        conn.execute_batch("ALTER TABLE loop_finding_status ADD COLUMN unchanged_lines TEXT")?;
    }
    Ok(())
}

/// How an implementer's FIXED claim left its finding's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimCheck {
    /// The code changed (or cannot be told: the claim is taken at its word).
    Changed,
    /// The code is as the last review saw it: these lines of the finding, or (`None`) its
    /// whole file, or no file at all for a finding without a location.
    Unchanged(Option<UnchangedLines>),
}

fn severity_of(word: &str) -> Severity {
    Severity::from_word(word).unwrap_or(Severity::Major)
}

fn status_of(word: &str) -> FindingStatus {
    FindingStatus::from_word(word).unwrap_or(FindingStatus::Open)
}

fn side_str(side: RoundSide) -> &'static str {
    match side {
        RoundSide::Reviewer => "reviewer",
        RoundSide::Implementer => "implementer",
    }
}

/// Records a reviewer reply as the link's next round (or finds the round it already is).
pub fn record_review(
    db: &Db,
    review_session: &str,
    original_session: Option<&str>,
    message_id: &str,
    reply: &FindingsReply,
    fingerprint: Option<&str>,
    at: i64,
) -> Result<Recorded> {
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        if let Some(round) = tx
            .query_row(
                "SELECT round FROM loop_rounds WHERE review_session = ?1 AND message_id = ?2",
                params![review_session, message_id],
                |r| r.get::<_, u32>(0),
            )
            .optional()?
        {
            return Ok(Recorded { round, new: false });
        }
        let round: u32 = tx.query_row(
            "SELECT COALESCE(MAX(round), 0) + 1 FROM loop_rounds WHERE review_session = ?1",
            [review_session],
            |r| r.get(0),
        )?;
        let (verdict, unparsed) = match reply {
            FindingsReply::Parsed { verdict, .. } => (Some(verdict.label()), None),
            FindingsReply::Unparsed { reason } => (None, Some(reason.clone())),
        };
        tx.execute(
            "INSERT INTO loop_rounds (review_session, round, message_id, original_session, verdict, unparsed, fingerprint, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![review_session, round, message_id, original_session, verdict, unparsed, fingerprint, at],
        )?;
        if let FindingsReply::Parsed {
            findings, statuses, ..
        } = reply
        {
            let mut seq = next_seq(&tx, review_session)?;
            for f in findings {
                let known: bool = tx
                    .query_row(
                        "SELECT 1 FROM loop_findings WHERE review_session = ?1 AND id = ?2",
                        params![review_session, f.id],
                        |_| Ok(true),
                    )
                    .optional()?
                    .unwrap_or(false);
                if known {
                    // An id the reviewer used before: it is that finding again, open.
                    put_status(&tx, review_session, &f.id, round, RoundSide::Reviewer, FindingStatus::Open, Some(&f.title), false, message_id, seq)?;
                } else {
                    tx.execute(
                        "INSERT INTO loop_findings (review_session, id, severity, location, title, detail, first_round, message_id)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![review_session, f.id, f.severity.as_str(), f.location, f.title, f.detail, round, message_id],
                    )?;
                    put_status(&tx, review_session, &f.id, round, RoundSide::Reviewer, FindingStatus::Open, None, false, message_id, seq)?;
                }
                seq += 1;
            }
            for s in statuses {
                // A status for an id never opened has nothing to attach to.
                let known = tx
                    .query_row(
                        "SELECT 1 FROM loop_findings WHERE review_session = ?1 AND id = ?2",
                        params![review_session, s.id],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                if known {
                    put_status(&tx, review_session, &s.id, round, RoundSide::Reviewer, s.status, s.reason.as_deref(), false, message_id, seq)?;
                    seq += 1;
                }
            }
            // A CLEAN closes nothing by itself: a finding is fixed or withdrawn only when the
            // reviewer says so by id, and one it does not name stays as it was.
        }
        tx.commit()?;
        Ok(Recorded { round, new: true })
    })
}

/// The files a fingerprint shows changed (uncommitted against its commit, untracked ones
/// included), deleted files left out: what a review's `REVIEWED` lines should cover.
pub fn changed_paths(fp: &crate::fingerprint::Fingerprint) -> Vec<String> {
    fp.files
        .iter()
        .filter(|(_, hash)| hash.as_str() != "deleted")
        .map(|(path, _)| path.clone())
        .collect()
}

/// Records what round `round` of the link says it reviewed and, when known, the files the
/// work changed, with the folder reviewed (replacing what was recorded for that round before).
pub fn record_coverage(
    db: &Db,
    review_session: &str,
    round: u32,
    directory: &str,
    reviewed: &[Reviewed],
    changed: Option<&[String]>,
) -> Result<()> {
    let reviewed = serde_json::to_string(reviewed)
        .map_err(|e| crate::error::Error::Internal(e.to_string()))?;
    let changed = changed
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| crate::error::Error::Internal(e.to_string()))?;
    db.with(|c| {
        c.execute(
            "INSERT INTO loop_round_coverage (review_session, round, reviewed, changed, directory)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (review_session, round) DO UPDATE SET reviewed = excluded.reviewed,
               changed = excluded.changed, directory = excluded.directory",
            params![review_session, round, reviewed, changed, directory],
        )?;
        Ok(())
    })
}

/// The review session of the newest recorded round in `directory` (a review's folder as the
/// session has it), when any.
pub fn newest_review_in(db: &Db, directory: &str) -> Result<Option<String>> {
    db.with(|c| {
        Ok(c.query_row(
            "SELECT r.review_session FROM loop_rounds r JOIN loop_round_coverage v
               ON v.review_session = r.review_session
             WHERE v.directory = ?1 ORDER BY r.at DESC, r.round DESC LIMIT 1",
            [directory],
            |r| r.get(0),
        )
        .optional()?)
    })
}

/// The coverage of a stored row: the reviewed files, the changed ones, what is left out.
fn coverage_of(reviewed: &str, changed: Option<&str>) -> Option<RoundCoverage> {
    let reviewed: Vec<Reviewed> = serde_json::from_str(reviewed).ok()?;
    let changed: Option<Vec<String>> = changed.and_then(|c| serde_json::from_str(c).ok());
    let left_out = changed
        .as_deref()
        .map(|c| uncovered(c, &reviewed))
        .unwrap_or_default();
    Some(RoundCoverage {
        reviewed,
        changed,
        uncovered: left_out,
    })
}

/// Records the implementer's answers by id to the link's newest round (its FIXED as
/// [`FindingStatus::ClaimedFixed`] until the reviewer confirms it); `code_changed` false
/// marks every FIXED claim "claimed fixed, code unchanged". Answers the ids so marked; nothing
/// when this message was recorded before.
pub fn record_answers(
    db: &Db,
    review_session: &str,
    message_id: &str,
    text: &str,
    code_changed: bool,
) -> Result<Vec<String>> {
    record_answers_judged(db, review_session, message_id, text, |_, _| {
        if code_changed {
            ClaimCheck::Changed
        } else {
            ClaimCheck::Unchanged(None)
        }
    })
}

/// Whether a finding at `location` (`path` or `path:line`) lies in none of the `changed`
/// files (a finding without a location: whether no file changed at all).
pub fn unchanged_file(changed: &[String], location: Option<&str>) -> bool {
    match location
        .and_then(|l| l.split(':').next())
        .filter(|p| !p.is_empty())
    {
        Some(path) => {
            let named = [Reviewed {
                path: path.to_owned(),
                lines: None,
            }];
            uncovered(changed, &named).len() == changed.len()
        }
        None => changed.is_empty(),
    }
}

/// Records the implementer's answers by id as [`record_answers`] does, each FIXED claim
/// judged by `judge(id, location)`. Answers the ids marked unchanged; nothing when this
/// message was recorded before.
pub fn record_answers_judged(
    db: &Db,
    review_session: &str,
    message_id: &str,
    text: &str,
    judge: impl Fn(&str, Option<&str>) -> ClaimCheck,
) -> Result<Vec<String>> {
    let answers = parse_answers(text);
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        let round: u32 = tx.query_row(
            "SELECT COALESCE(MAX(round), 0) FROM loop_rounds WHERE review_session = ?1",
            [review_session],
            |r| r.get(0),
        )?;
        let fresh = tx.execute(
            "INSERT OR IGNORE INTO loop_answers (review_session, message_id, round) VALUES (?1, ?2, ?3)",
            params![review_session, message_id, round],
        )? == 1;
        if !fresh || round == 0 {
            return Ok(Vec::new());
        }
        let mut seq = next_seq(&tx, review_session)?;
        let mut unchanged = Vec::new();
        for a in answers {
            let location: Option<Option<String>> = tx
                .query_row(
                    "SELECT location FROM loop_findings WHERE review_session = ?1 AND id = ?2",
                    params![review_session, a.id],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(location) = location else {
                continue;
            };
            if a.status == FindingStatus::Withdrawn {
                continue;
            }
            // The implementer's FIXED is a claim: fixed is the reviewer's word, by id.
            let status = match a.status {
                FindingStatus::Fixed => FindingStatus::ClaimedFixed,
                other => other,
            };
            let check = if status == FindingStatus::ClaimedFixed {
                judge(&a.id, location.as_deref())
            } else {
                ClaimCheck::Changed
            };
            let (claimed, lines) = match check {
                ClaimCheck::Changed => (false, None),
                ClaimCheck::Unchanged(lines) => (true, lines),
            };
            if claimed {
                unchanged.push(a.id.clone());
            }
            put_status_with(&tx, review_session, &a.id, round, RoundSide::Implementer, status, a.reason.as_deref(), claimed, lines.as_ref(), message_id, seq)?;
            seq += 1;
        }
        tx.commit()?;
        Ok(unchanged)
    })
}

/// A finding an implementer claimed fixed while its code stayed as it was: its id, its
/// location as the reviewer wrote it, and the lines left unchanged when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnchangedClaim {
    /// `F1`, ...
    pub id: String,
    /// `path` or `path:line`, when the finding has one.
    pub location: Option<String>,
    /// The finding's lines that stayed as they were (absent: judged by its whole file).
    pub lines: Option<UnchangedLines>,
}

/// The newest "claimed fixed, code unchanged" answer of each of `ids` in the link, in the
/// order of `ids` (an id without one is left out).
pub fn unchanged_claims(
    db: &Db,
    review_session: &str,
    ids: &[String],
) -> Result<Vec<UnchangedClaim>> {
    db.with(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT f.location, s.unchanged_lines FROM loop_finding_status s
               JOIN loop_findings f ON f.review_session = s.review_session AND f.id = s.id
             WHERE s.review_session = ?1 AND s.id = ?2 AND s.side = 'implementer'
               AND s.claimed_unchanged = 1
             ORDER BY s.seq DESC LIMIT 1",
        )?;
        let mut out = Vec::new();
        for id in ids {
            let row = stmt
                .query_row(params![review_session, id], |r| {
                    Ok((
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, Option<String>>(1)?,
                    ))
                })
                .optional()?;
            if let Some((location, lines)) = row {
                out.push(UnchangedClaim {
                    id: id.clone(),
                    location,
                    lines: lines.and_then(|j| serde_json::from_str(&j).ok()),
                });
            }
        }
        Ok(out)
    })
}

/// The person accepts the implementer's dispute of these findings after a loop stopped: each
/// known one is withdrawn in the link's newest round, on the reviewer's side, with `note` (who
/// decided). Answers the ids withdrawn.
pub fn withdraw_by_person(
    db: &Db,
    review_session: &str,
    ids: &[String],
    note: &str,
) -> Result<Vec<String>> {
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        let round: u32 = tx.query_row(
            "SELECT COALESCE(MAX(round), 0) FROM loop_rounds WHERE review_session = ?1",
            [review_session],
            |r| r.get(0),
        )?;
        let mut seq = next_seq(&tx, review_session)?;
        let mut done = Vec::new();
        for id in ids {
            let known = tx
                .query_row(
                    "SELECT 1 FROM loop_findings WHERE review_session = ?1 AND id = ?2",
                    params![review_session, id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if !known || round == 0 {
                continue;
            }
            put_status(
                &tx,
                review_session,
                id,
                round,
                RoundSide::Reviewer,
                FindingStatus::Withdrawn,
                Some(note),
                false,
                "",
                seq,
            )?;
            seq += 1;
            done.push(id.clone());
        }
        tx.commit()?;
        Ok(done)
    })
}

#[allow(clippy::too_many_arguments)]
fn put_status(
    tx: &rusqlite::Connection,
    review_session: &str,
    id: &str,
    round: u32,
    side: RoundSide,
    status: FindingStatus,
    note: Option<&str>,
    claimed_unchanged: bool,
    message_id: &str,
    seq: i64,
) -> rusqlite::Result<()> {
    put_status_with(
        tx,
        review_session,
        id,
        round,
        side,
        status,
        note,
        claimed_unchanged,
        None,
        message_id,
        seq,
    )
}

/// [`put_status`] with the lines a claimed-unchanged answer left as they were.
#[allow(clippy::too_many_arguments)]
fn put_status_with(
    tx: &rusqlite::Connection,
    review_session: &str,
    id: &str,
    round: u32,
    side: RoundSide,
    status: FindingStatus,
    note: Option<&str>,
    claimed_unchanged: bool,
    lines: Option<&UnchangedLines>,
    message_id: &str,
    seq: i64,
) -> rusqlite::Result<()> {
    let lines = lines.and_then(|l| serde_json::to_string(l).ok());
    tx.execute(
        "INSERT INTO loop_finding_status (review_session, id, round, side, status, note, claimed_unchanged, unchanged_lines, message_id, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (review_session, id, round, side) DO UPDATE SET status = excluded.status,
           note = excluded.note, claimed_unchanged = excluded.claimed_unchanged,
           unchanged_lines = excluded.unchanged_lines,
           message_id = excluded.message_id, seq = excluded.seq",
        params![review_session, id, round, side_str(side), status.as_str(), note, claimed_unchanged, lines, message_id, seq],
    )?;
    Ok(())
}

fn next_seq(tx: &rusqlite::Connection, review_session: &str) -> rusqlite::Result<i64> {
    tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM loop_finding_status WHERE review_session = ?1",
        [review_session],
        |r| r.get(0),
    )
}

/// Everything tracked for the link of `review_session`.
pub fn view(db: &Db, review_session: &str) -> Result<FindingsView> {
    db.with(|c| {
        let mut rounds_stmt = c.prepare(
            "SELECT r.round, r.message_id, r.verdict, r.unparsed, r.fingerprint, r.at,
               r.original_session, v.reviewed, v.changed
             FROM loop_rounds r LEFT JOIN loop_round_coverage v
               ON v.review_session = r.review_session AND v.round = r.round
             WHERE r.review_session = ?1 ORDER BY r.round",
        )?;
        let mut original = None;
        let rounds = rounds_stmt
            .query_map([review_session], |r| {
                Ok((
                    ReviewRound {
                        round: r.get(0)?,
                        message_id: r.get(1)?,
                        verdict: r.get(2)?,
                        unparsed: r.get(3)?,
                        fingerprint: r.get(4)?,
                        at: r.get(5)?,
                        coverage: r.get::<_, Option<String>>(7)?.and_then(|reviewed| {
                            coverage_of(&reviewed, r.get::<_, Option<String>>(8).ok().flatten().as_deref())
                        }),
                    },
                    r.get::<_, Option<String>>(6)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .map(|(round, o)| {
                if o.is_some() {
                    original = o;
                }
                round
            })
            .collect();
        let mut history_stmt = c.prepare(
            "SELECT id, round, side, status, note, claimed_unchanged, message_id, unchanged_lines FROM loop_finding_status
             WHERE review_session = ?1 ORDER BY seq",
        )?;
        let history: Vec<(String, FindingRound)> = history_stmt
            .query_map([review_session], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    FindingRound {
                        round: r.get(1)?,
                        side: if r.get::<_, String>(2)? == "implementer" {
                            RoundSide::Implementer
                        } else {
                            RoundSide::Reviewer
                        },
                        status: status_of(&r.get::<_, String>(3)?),
                        note: r.get(4)?,
                        claimed_unchanged: r.get(5)?,
                        unchanged_lines: r
                            .get::<_, Option<String>>(7)?
                            .and_then(|j| serde_json::from_str(&j).ok()),
                        message_id: r.get(6)?,
                    },
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut stmt = c.prepare(
            "SELECT id, severity, location, title, detail, first_round, message_id FROM loop_findings
             WHERE review_session = ?1",
        )?;
        let mut findings: Vec<FindingView> = stmt
            .query_map([review_session], |r| {
                Ok(FindingView {
                    id: r.get(0)?,
                    severity: severity_of(&r.get::<_, String>(1)?),
                    location: r.get(2)?,
                    title: r.get(3)?,
                    detail: r.get(4)?,
                    status: FindingStatus::Open,
                    first_round: r.get(5)?,
                    message_id: r.get(6)?,
                    claimed_unchanged: false,
                    unchanged_lines: None,
                    history: Vec::new(),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        for f in &mut findings {
            f.history = history
                .iter()
                .filter(|(id, _)| *id == f.id)
                .map(|(_, h)| h.clone())
                .collect();
            if let Some(last) = f.history.last() {
                f.status = last.status;
                f.claimed_unchanged = last.claimed_unchanged;
                f.unchanged_lines = last.unchanged_lines.clone();
            }
        }
        findings.sort_by_key(|f| f.id[1..].parse::<u32>().unwrap_or(u32::MAX));
        Ok(FindingsView {
            review_session_id: review_session.to_owned(),
            original_session_id: original,
            findings,
            rounds,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crosscheck_review::findings::parse_findings;

    fn db() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("c.db")).expect("open");
        (dir, db)
    }

    #[test]
    fn rounds_statuses_and_answers_are_kept_per_link() {
        let (_dir, db) = db();
        let r1 = parse_findings(
            "FINDINGS\n- [F1] major src/lib.rs:3 — panics\n- [F2] nit — doc comment\nVERDICT: FLAGS (2)",
        );
        let rec = record_review(&db, "ses_r", Some("ses_o"), "msg_1", &r1, Some("fp1"), 1)
            .expect("record");
        assert_eq!(
            rec,
            Recorded {
                round: 1,
                new: true
            }
        );
        // The same message again is the same round.
        let again = record_review(&db, "ses_r", Some("ses_o"), "msg_1", &r1, Some("fp1"), 2)
            .expect("again");
        assert_eq!(
            again,
            Recorded {
                round: 1,
                new: false
            }
        );
        let unchanged = record_answers(
            &db,
            "ses_r",
            "msg_a",
            "- [F1] FIXED\n- [F2] DISPUTED — no",
            false,
        )
        .expect("answers");
        assert_eq!(unchanged, vec!["F1".to_owned()]);
        assert!(
            record_answers(&db, "ses_r", "msg_a", "- [F1] FIXED", false)
                .expect("again")
                .is_empty()
        );
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.original_session_id.as_deref(), Some("ses_o"));
        assert_eq!(v.findings.len(), 2);
        assert!(v.findings[0].claimed_unchanged);
        assert_eq!(v.findings[1].status, FindingStatus::Disputed);
        let r2 = parse_findings("FINDINGS\n- [F1] FIXED\n- [F2] WITHDRAWN\nVERDICT: CLEAN");
        assert_eq!(
            record_review(&db, "ses_r", None, "msg_2", &r2, Some("fp2"), 3)
                .expect("r2")
                .round,
            2
        );
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.open().count(), 0);
        assert_eq!(v.rounds.len(), 2);
        assert_eq!(v.rounds[1].verdict.as_deref(), Some("CLEAN"));
        assert_eq!(v.findings[0].history.len(), 3);
        // Another link sees none of it.
        assert!(view(&db, "ses_x").expect("view").findings.is_empty());
    }

    #[test]
    fn a_bare_fixed_is_a_claim_and_clean_leaves_unmentioned_findings_as_they_were() {
        let (_dir, db) = db();
        let r1 = parse_findings(
            "FINDINGS\n- [F1] major src/lib.rs:3 — panics\n- [F2] nit — doc comment\nVERDICT: FLAGS (2)",
        );
        record_review(&db, "ses_r", None, "msg_1", &r1, None, 1).expect("record");
        record_answers(&db, "ses_r", "msg_a", "- [F1] FIXED", true).expect("answers");
        let v = view(&db, "ses_r").expect("view");
        // The implementer's word is a claim until the reviewer confirms it.
        assert_eq!(v.findings[0].status.as_str(), "claimedFixed");
        let r2 = parse_findings("FINDINGS\n- [F1] FIXED\nVERDICT: CLEAN");
        record_review(&db, "ses_r", None, "msg_2", &r2, None, 2).expect("r2");
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.findings[0].status, FindingStatus::Fixed);
        // The nit was never mentioned: still open, with no reviewer entry of round 2.
        assert_eq!(v.findings[1].status, FindingStatus::Open);
        assert!(v.findings[1].history.iter().all(|h| h.round == 1));
        assert_eq!(v.open().count(), 1);
    }

    #[test]
    fn an_unparsed_reply_is_a_round_without_a_verdict() {
        let (_dir, db) = db();
        let r = parse_findings("Looks fine.");
        record_review(&db, "ses_r", None, "msg_1", &r, None, 1).expect("record");
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.rounds[0].verdict, None);
        assert!(v.rounds[0].unparsed.is_some());
    }

    #[test]
    fn a_claim_judged_by_its_lines_keeps_them_for_the_history_and_the_note() {
        let (dir, db) = db();
        let r1 = parse_findings(
            "FINDINGS\n- [F1] major src/greet.rs:11 — panics\n- [F2] minor src/x.rs — y\n- [F3] nit — z\nVERDICT: FLAGS (3)",
        );
        record_review(&db, "ses_r", None, "msg_1", &r1, None, 1).expect("record");
        let lines = UnchangedLines {
            path: "src/greet.rs".into(),
            first_line: 8,
            last_line: 14,
            now_first_line: None,
        };
        let unchanged = record_answers_judged(
            &db,
            "ses_r",
            "msg_a",
            "- [F1] FIXED\n- [F2] FIXED\n- [F3] FIXED",
            |id, _| match id {
                "F1" => ClaimCheck::Unchanged(Some(lines.clone())),
                "F2" => ClaimCheck::Unchanged(None),
                _ => ClaimCheck::Changed,
            },
        )
        .expect("answers");
        assert_eq!(unchanged, ["F1", "F2"]);
        // Read again from the file, as after a restart.
        drop(db);
        let db = Db::open(&dir.path().join("c.db")).expect("reopen");
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.findings[0].unchanged_lines.as_ref(), Some(&lines));
        assert_eq!(
            v.findings[0].history[1].unchanged_lines.as_ref(),
            Some(&lines)
        );
        assert!(v.findings[1].claimed_unchanged && v.findings[1].unchanged_lines.is_none());
        assert!(!v.findings[2].claimed_unchanged);
        let ids = ["F2".to_owned(), "F1".to_owned(), "F3".to_owned()];
        let claims = unchanged_claims(&db, "ses_r", &ids).expect("claims");
        assert_eq!(
            claims,
            [
                UnchangedClaim {
                    id: "F2".into(),
                    location: Some("src/x.rs".into()),
                    lines: None
                },
                UnchangedClaim {
                    id: "F1".into(),
                    location: Some("src/greet.rs:11".into()),
                    lines: Some(lines)
                },
            ]
        );
    }

    #[test]
    fn a_database_from_before_the_kept_lines_gains_the_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.db");
        {
            let conn = rusqlite::Connection::open(&path).expect("open");
            conn.execute_batch(
                "CREATE TABLE loop_finding_status (
                    review_session TEXT NOT NULL, id TEXT NOT NULL, round INTEGER NOT NULL, side TEXT NOT NULL,
                    status TEXT NOT NULL, note TEXT, claimed_unchanged INTEGER NOT NULL DEFAULT 0,
                    message_id TEXT NOT NULL, seq INTEGER NOT NULL,
                    PRIMARY KEY (review_session, id, round, side));
                 INSERT INTO loop_finding_status VALUES ('ses_r', 'F1', 1, 'implementer', 'claimedFixed', NULL, 1, 'msg_a', 2);",
            )
            .expect("old schema");
        }
        let db = Db::open(&path).expect("open migrates");
        let has = db
            .with(|c| {
                Ok(c.prepare("SELECT 1 FROM pragma_table_info('loop_finding_status') WHERE name = 'unchanged_lines'")?
                    .exists([])?)
            })
            .expect("pragma");
        assert!(has);
        let r1 = parse_findings("FINDINGS\n- [F1] major src/a.rs:3 — x\nVERDICT: FLAGS (1)");
        record_review(&db, "ses_r", None, "msg_1", &r1, None, 1).expect("record");
        let v = view(&db, "ses_r").expect("view");
        let old = v.findings[0]
            .history
            .iter()
            .find(|h| h.message_id == "msg_a")
            .expect("the old row");
        assert!(old.claimed_unchanged && old.unchanged_lines.is_none());
        drop(db);
        Db::open(&path).expect("opens again");
    }

    #[test]
    fn the_person_accepting_a_dispute_withdraws_the_finding() {
        let (_dir, db) = db();
        let r1 = parse_findings("FINDINGS\n- [F1] major src/lib.rs:3 — panics\nVERDICT: FLAGS (1)");
        record_review(&db, "ses_r", None, "msg_1", &r1, None, 1).expect("record");
        record_answers(
            &db,
            "ses_r",
            "msg_a",
            "- [F1] DISPUTED — it cannot panic",
            true,
        )
        .expect("answers");
        assert_eq!(
            view(&db, "ses_r").expect("view").findings[0].status,
            FindingStatus::Disputed
        );
        let done = withdraw_by_person(&db, "ses_r", &["F1".into(), "F9".into()], "by you")
            .expect("withdraw");
        assert_eq!(done, ["F1"], "an unknown id is skipped");
        let v = view(&db, "ses_r").expect("view");
        assert_eq!(v.findings[0].status, FindingStatus::Withdrawn);
        assert_eq!(v.open().count(), 0);
    }
}
