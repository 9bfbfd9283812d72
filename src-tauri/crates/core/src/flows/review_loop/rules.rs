//! The loop's decisions after a reviewer reply, as pure functions of the link's findings: stop
//! (clean, nothing at the threshold, disputed, stalled, round cap, unparsed) or forward the open
//! findings at or above the threshold to the implementer. A CLEAN is clean only when it closes
//! by id every finding at or above the threshold that was open before it.

use std::collections::BTreeSet;

use crosscheck_review::findings::{FindingStatus, FindingsReply, Severity};

use super::record::StopReason;
use crate::findings::{FindingView, FindingsView, RoundSide};

/// What the loop does after reviewer round `round`.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Stop, with the reason, the English detail and the findings concerned.
    Stop(StopReason, String, Vec<String>),
    /// Send these findings to the implementer.
    Forward(Vec<FindingView>),
}

/// A finding's status right after reviewer round `round` (the implementer's answers to that
/// round come later).
fn status_after_review(f: &FindingView, round: u32) -> Option<FindingStatus> {
    f.history
        .iter()
        .rev()
        .find(|h| h.round < round || (h.round == round && h.side == RoundSide::Reviewer))
        .map(|h| h.status)
}

/// The ids at or above `threshold` open right after reviewer round `round`.
fn open_after(view: &FindingsView, round: u32, threshold: Severity) -> BTreeSet<String> {
    view.findings
        .iter()
        .filter(|f| f.severity.at_least(threshold))
        .filter(|f| status_after_review(f, round).is_some_and(FindingStatus::is_open))
        .map(|f| f.id.clone())
        .collect()
}

/// Decides after the reviewer reply recorded as link round `round` of `view`, which is round
/// `loop_round` of this loop (a link may have had manual rounds before the loop started).
pub fn after_review(
    view: &FindingsView,
    reply: &FindingsReply,
    round: u32,
    loop_round: u32,
    threshold: Severity,
    max_rounds: u32,
) -> Decision {
    if let FindingsReply::Unparsed { reason } = reply {
        return Decision::Stop(
            StopReason::Unparsed,
            format!("the reviewer's reply could not be read: {reason}"),
            Vec::new(),
        );
    }
    if reply.is_clean() {
        let unclosed = unclosed_by_clean(view, reply, round, threshold);
        if unclosed.is_empty() {
            return Decision::Stop(
                StopReason::Clean,
                "the reviewer found nothing open".into(),
                Vec::new(),
            );
        }
        // Not clean: what was open stays open, and the rules below decide.
        let ids = unclosed.iter().cloned().collect::<Vec<_>>().join(", ");
        let note = format!(
            "the reviewer's CLEAN does not close {ids} by id (fixed or withdrawn), so the loop does not end clean"
        );
        return match decide_open(view, unclosed, round, loop_round, threshold, max_rounds) {
            Decision::Stop(reason, detail, ids) => {
                Decision::Stop(reason, format!("{note}; {detail}"), ids)
            }
            forward => forward,
        };
    }
    let open = open_after(view, round, threshold);
    if open.is_empty() {
        let below: Vec<String> = view.open().map(|f| f.id.clone()).collect();
        return Decision::Stop(
            StopReason::BelowThreshold,
            format!(
                "only findings below {} are open: {}",
                threshold.as_str(),
                below.join(", ")
            ),
            below,
        );
    }
    decide_open(view, open, round, loop_round, threshold, max_rounds)
}

/// The findings at or above `threshold` that were open before reviewer round `round` (open,
/// disputed, or only claimed fixed by the implementer) and that its CLEAN reply neither fixes
/// nor withdraws by id: a CLEAN does not close them.
fn unclosed_by_clean(
    view: &FindingsView,
    reply: &FindingsReply,
    round: u32,
    threshold: Severity,
) -> BTreeSet<String> {
    let FindingsReply::Parsed { statuses, .. } = reply else {
        return BTreeSet::new();
    };
    let closed: BTreeSet<&str> = statuses
        .iter()
        .filter(|s| s.status.is_settled())
        .map(|s| s.id.as_str())
        .collect();
    view.findings
        .iter()
        .filter(|f| f.severity.at_least(threshold) && !closed.contains(f.id.as_str()))
        .filter(|f| {
            f.history
                .iter()
                .rev()
                .find(|h| h.round < round)
                .is_some_and(|h| !h.status.is_settled())
        })
        .map(|f| f.id.clone())
        .collect()
}

/// The rules for a round that leaves `open` (non-empty) open at or above the threshold:
/// disputed, stalled, round cap, or forward.
fn decide_open(
    view: &FindingsView,
    open: BTreeSet<String>,
    round: u32,
    loop_round: u32,
    threshold: Severity,
    max_rounds: u32,
) -> Decision {
    // A finding the implementer disputed in the last round that the reviewer keeps open.
    let disputed: Vec<&FindingView> = view
        .findings
        .iter()
        .filter(|f| open.contains(&f.id))
        .filter(|f| {
            f.history.iter().any(|h| {
                h.round + 1 == round
                    && h.side == RoundSide::Implementer
                    && h.status == FindingStatus::Disputed
            })
        })
        .collect();
    if !disputed.is_empty() {
        let detail = disputed
            .iter()
            .map(|f| {
                let said = |side: RoundSide, r: u32| {
                    f.history
                        .iter()
                        .rev()
                        .find(|h| h.side == side && h.round == r)
                        .and_then(|h| h.note.clone())
                        .unwrap_or_else(|| "no reason given".into())
                };
                format!(
                    "{} {}: the implementer disputes it ({}); the reviewer keeps it open ({})",
                    f.id,
                    f.title,
                    said(RoundSide::Implementer, round - 1),
                    said(RoundSide::Reviewer, round)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Decision::Stop(
            StopReason::Disputed,
            detail,
            disputed.iter().map(|f| f.id.clone()).collect(),
        );
    }
    if loop_round >= 2 && round >= 2 {
        let before = open_after(view, round - 1, threshold);
        if before == open {
            return Decision::Stop(
                StopReason::Stalled,
                format!(
                    "stalled: the same findings are open two rounds running ({})",
                    open.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
                open.into_iter().collect(),
            );
        }
        if loop_round >= 3 && round >= 3 {
            let earlier = open_after(view, round - 2, threshold);
            let stuck: Vec<String> = open
                .iter()
                .filter(|id| before.contains(*id) && earlier.contains(*id))
                .cloned()
                .collect();
            if !stuck.is_empty() {
                return Decision::Stop(
                    StopReason::Stalled,
                    format!("stalled: {} open three rounds running", stuck.join(", ")),
                    stuck,
                );
            }
        }
    }
    if loop_round >= max_rounds {
        return Decision::Stop(
            StopReason::RoundCap,
            format!(
                "the round cap of {max_rounds} was reached with {} finding(s) open",
                open.len()
            ),
            open.into_iter().collect(),
        );
    }
    Decision::Forward(
        view.findings
            .iter()
            .filter(|f| open.contains(&f.id))
            .cloned()
            .collect(),
    )
}

/// The decision on a reviewer reply recorded before the loop started, when the person started
/// it ("one more round" after a loop stopped on a dispute or a stall): that stop was already
/// theirs to decide, so the findings it names go to the implementer again, with every other
/// finding open at the threshold, instead of stopping the new loop on them at once.
pub fn overruled(
    decision: Decision,
    view: &FindingsView,
    round: u32,
    threshold: Severity,
) -> Decision {
    let Decision::Stop(StopReason::Disputed | StopReason::Stalled, _, ids) = decision else {
        return decision;
    };
    let mut open = open_after(view, round, threshold);
    open.extend(ids);
    Decision::Forward(
        view.findings
            .iter()
            .filter(|f| open.contains(&f.id))
            .cloned()
            .collect(),
    )
}

/// The findings as the implementer gets them (the `{{review_feedback}}` of the seed's
/// feedback words): one line each, detail indented below.
pub fn feedback_text(findings: &[FindingView]) -> String {
    let mut out = String::from("FINDINGS\n");
    for f in findings {
        out.push_str(&format!("- [{}] {}", f.id, f.severity.as_str()));
        if let Some(loc) = &f.location {
            out.push(' ');
            out.push_str(loc);
        }
        out.push_str(" — ");
        out.push_str(&f.title);
        out.push('\n');
        if let Some(detail) = &f.detail {
            for line in detail.lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;
    use crate::findings::{record_answers, record_review, view};
    use crosscheck_review::findings::parse_findings;

    struct Link {
        _dir: tempfile::TempDir,
        db: Db,
        n: u32,
    }

    impl Link {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = Db::open(&dir.path().join("c.db")).expect("open");
            Self {
                _dir: dir,
                db,
                n: 0,
            }
        }

        /// Records a reviewer reply and decides.
        fn review(&mut self, text: &str, max: u32) -> Decision {
            self.n += 1;
            let reply = parse_findings(text);
            let rec = record_review(
                &self.db,
                "r",
                None,
                &format!("m{}", self.n),
                &reply,
                None,
                0,
            )
            .expect("record");
            let v = view(&self.db, "r").expect("view");
            after_review(&v, &reply, rec.round, rec.round, Severity::Minor, max)
        }

        fn answer(&mut self, text: &str) {
            self.n += 1;
            record_answers(&self.db, "r", &format!("m{}", self.n), text, true).expect("answers");
        }
    }

    fn reason(d: &Decision) -> Option<StopReason> {
        match d {
            Decision::Stop(r, ..) => Some(*r),
            Decision::Forward(_) => None,
        }
    }

    #[test]
    fn nits_are_not_forwarded_and_alone_stop_the_loop() {
        let mut l = Link::new();
        let d = l.review(
            "FINDINGS\n- [F1] major a.rs — x\n- [F2] nit — y\nVERDICT: FLAGS (2)",
            5,
        );
        let Decision::Forward(f) = d else {
            panic!("forward: {d:?}")
        };
        assert_eq!(f.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["F1"]);
        assert!(!feedback_text(&f).contains("F2"));
        l.answer("- [F1] FIXED");
        let d = l.review("FINDINGS\n- [F1] FIXED\n- [F2] OPEN\nVERDICT: FLAGS (1)", 5);
        assert_eq!(reason(&d), Some(StopReason::BelowThreshold));
    }

    #[test]
    fn clean_and_unparsed() {
        let mut l = Link::new();
        assert_eq!(
            reason(&l.review("VERDICT: CLEAN", 5)),
            Some(StopReason::Clean)
        );
        assert_eq!(
            reason(&l.review("Looks fine", 5)),
            Some(StopReason::Unparsed)
        );
    }

    #[test]
    fn the_same_open_set_two_rounds_running_is_stalled() {
        let mut l = Link::new();
        l.review("FINDINGS\n- [F1] major — x\nVERDICT: FLAGS (1)", 5);
        l.answer("- [F1] FIXED");
        let d = l.review("FINDINGS\n- [F1] OPEN — still\nVERDICT: FLAGS (1)", 5);
        let Decision::Stop(StopReason::Stalled, detail, ids) = d else {
            panic!("stalled: {d:?}")
        };
        assert!(detail.contains("stalled"), "{detail}");
        assert_eq!(ids, ["F1"]);
    }

    #[test]
    fn one_finding_open_three_rounds_while_others_change_is_stalled() {
        let mut l = Link::new();
        l.review(
            "FINDINGS\n- [F1] major — x\n- [F2] minor — y\nVERDICT: FLAGS (2)",
            9,
        );
        l.answer("- [F1] FIXED\n- [F2] FIXED");
        let d = l.review(
            "FINDINGS\n- [F1] OPEN\n- [F2] FIXED\n- [F3] minor — z\nVERDICT: FLAGS (2)",
            9,
        );
        assert!(matches!(d, Decision::Forward(_)), "{d:?}");
        l.answer("- [F1] FIXED\n- [F3] FIXED");
        let d = l.review(
            "FINDINGS\n- [F1] OPEN\n- [F3] FIXED\n- [F4] minor — w\nVERDICT: FLAGS (2)",
            9,
        );
        let Decision::Stop(StopReason::Stalled, _, ids) = d else {
            panic!("stalled: {d:?}")
        };
        assert_eq!(ids, ["F1"]);
    }

    #[test]
    fn a_disputed_finding_the_reviewer_keeps_open_stops_with_both_sides() {
        let mut l = Link::new();
        l.review(
            "FINDINGS\n- [F1] major — x\n- [F2] minor — y\nVERDICT: FLAGS (2)",
            5,
        );
        l.answer("- [F1] DISPUTED — the name is never empty\n- [F2] FIXED");
        let d = l.review(
            "FINDINGS\n- [F1] OPEN — callers pass user input\n- [F2] FIXED\nVERDICT: FLAGS (1)",
            5,
        );
        let Decision::Stop(StopReason::Disputed, detail, ids) = d else {
            panic!("disputed: {d:?}")
        };
        assert_eq!(ids, ["F1"]);
        assert!(detail.contains("the name is never empty"), "{detail}");
        assert!(detail.contains("callers pass user input"), "{detail}");
    }

    #[test]
    fn one_more_round_forwards_a_disputed_finding_instead_of_stopping_on_it_again() {
        let mut l = Link::new();
        l.review(
            "FINDINGS\n- [F1] major — x\n- [F2] major — y\nVERDICT: FLAGS (2)",
            5,
        );
        l.answer("- [F1] DISPUTED — the name is never empty\n- [F2] FIXED");
        let d = l.review(
            "FINDINGS\n- [F1] OPEN — callers pass user input\n- [F2] OPEN — still\nVERDICT: FLAGS (2)",
            5,
        );
        assert!(
            matches!(d, Decision::Stop(StopReason::Disputed, ..)),
            "{d:?}"
        );
        let view = view(&l.db, "r").expect("view");
        let Decision::Forward(sent) = overruled(d, &view, 2, Severity::Minor) else {
            panic!("forwarded")
        };
        let ids: Vec<&str> = sent.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["F1", "F2"]);
        // Any other stop stays a stop.
        let clean = Decision::Stop(StopReason::Clean, String::new(), Vec::new());
        assert_eq!(overruled(clean.clone(), &view, 2, Severity::Minor), clean);
    }

    #[test]
    fn clean_does_not_end_the_loop_while_a_finding_open_before_it_is_not_closed_by_id() {
        let mut l = Link::new();
        l.review(
            "FINDINGS\n- [F1] major — greet() panics\n- [F2] nit — doc comment\nVERDICT: FLAGS (2)",
            5,
        );
        l.answer("- [F1] FIXED");
        // CLEAN without a word on F1: F1 was open (the implementer only claims it fixed).
        let d = l.review("Looks good to me.\nVERDICT: CLEAN", 5);
        assert_ne!(reason(&d), Some(StopReason::Clean), "{d:?}");
        let Decision::Stop(_, detail, ids) = &d else {
            panic!("stops for the person: {d:?}")
        };
        assert_eq!(ids, &["F1"]);
        assert!(detail.contains("F1"), "{detail}");
        let v = view(&l.db, "r").expect("view");
        assert_ne!(v.findings[0].status, FindingStatus::Fixed);
        // Closed by id, the same CLEAN ends it; the nit below the threshold need not be named.
        let d = l.review("FINDINGS\n- [F1] FIXED\nVERDICT: CLEAN", 5);
        assert_eq!(reason(&d), Some(StopReason::Clean), "{d:?}");
    }

    #[test]
    fn clean_after_a_withdrawal_by_id_ends_the_loop() {
        let mut l = Link::new();
        l.review("FINDINGS\n- [F1] blocker — x\nVERDICT: FLAGS (1)", 5);
        l.answer("- [F1] DISPUTED — not reachable");
        let d = l.review(
            "FINDINGS\n- [F1] WITHDRAWN — right, it is not reachable\nVERDICT: CLEAN",
            5,
        );
        assert_eq!(reason(&d), Some(StopReason::Clean), "{d:?}");
    }

    #[test]
    fn the_round_cap_stops_with_findings_open() {
        let mut l = Link::new();
        l.review("FINDINGS\n- [F1] major — x\nVERDICT: FLAGS (1)", 2);
        l.answer("- [F1] FIXED");
        let d = l.review(
            "FINDINGS\n- [F1] FIXED\n- [F2] major — y\nVERDICT: FLAGS (1)",
            2,
        );
        assert_eq!(reason(&d), Some(StopReason::RoundCap));
    }
}
