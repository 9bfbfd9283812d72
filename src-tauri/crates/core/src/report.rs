//! A review link's history as markdown, for a pull request: its loop (how it stopped), every
//! round (the verdict, what it says it reviewed against the changed files), every finding with
//! how it ended and what each side said, and the code the final verdict saw. The review tab's
//! "Copy report" and `crosscheck review report` print the same text.
//!
//! Everything a model wrote (titles, details, notes, paths, the stop's detail) is untrusted:
//! it is neutralised before it goes into the markdown, so it can open no HTML tag, code fence,
//! link, heading or table of its own and cannot end the report's structure early.

use rusqlite::{OptionalExtension, params};

use crate::db::Db;
use crate::error::Result;
use crate::findings::{self, FindingsView, ReviewRound, RoundCoverage, RoundSide};
use crate::model::loop_record::{self, LoopState};

/// Text a model wrote, made inert for the middle of one markdown line (it never starts a
/// line of the report, so list and heading marks need no escape there): line breaks become
/// spaces, `<`, `>` and `&` become entities (no raw HTML), and every character markdown gives
/// a meaning inside a line (emphasis, code, links, images, tables, escapes) is escaped with a
/// backslash.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' | '\n' | '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '|' | '~' | '!' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.trim().to_owned()
}

/// The coverage of a round in words: "covered 12 of 14 changed files", or what is known.
pub fn coverage_words(c: &RoundCoverage) -> String {
    match &c.changed {
        _ if c.reviewed.is_empty() => "named no file it reviewed".to_owned(),
        Some(changed) => format!(
            "covered {} of {} changed files",
            changed.len() - c.uncovered.len(),
            changed.len()
        ),
        None => format!(
            "reviewed {} file(s) (changed files unknown)",
            c.reviewed.len()
        ),
    }
}

fn round_line(r: &ReviewRound) -> String {
    let verdict = match (&r.verdict, &r.unparsed) {
        (Some(v), _) => inert(v),
        (None, Some(why)) => format!("unreadable ({})", inert(why)),
        (None, None) => "no verdict".to_owned(),
    };
    let mut line = format!("- Round {}: {verdict}", r.round);
    if let Some(c) = &r.coverage {
        line.push_str(&format!("; {}", coverage_words(c)));
        if !c.reviewed.is_empty() {
            let files: Vec<String> = c.reviewed.iter().map(|f| inert(&f.label())).collect();
            line.push_str(&format!("; reviewed: {}", files.join(", ")));
        }
        if !c.uncovered.is_empty() {
            let files: Vec<String> = c.uncovered.iter().map(|f| inert(f)).collect();
            line.push_str(&format!("; not reviewed: {}", files.join(", ")));
        }
    }
    line
}

/// The pinned fingerprint of a reviewer message: (commit, digest) when pinned.
fn pinned(
    db: &Db,
    review_session: &str,
    message_id: &str,
) -> Result<Option<(Option<String>, String)>> {
    Ok(pinned_fingerprint(db, review_session, message_id)?.map(|f| (f.head, f.digest)))
}

/// The whole fingerprint a reviewer message was pinned to, when it was.
pub(crate) fn pinned_fingerprint(
    db: &Db,
    review_session: &str,
    message_id: &str,
) -> Result<Option<crate::fingerprint::Fingerprint>> {
    let json: Option<String> = db.with(|c| {
        Ok(c.query_row(
            "SELECT fingerprint FROM review_pins WHERE review_session = ?1 AND message_id = ?2
             ORDER BY at DESC LIMIT 1",
            params![review_session, message_id],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    Ok(json.and_then(|j| serde_json::from_str::<crate::fingerprint::Fingerprint>(&j).ok()))
}

/// The markdown of the link `view` (with its loop, when it had one, and the pinned code of
/// its final round when known).
pub fn render(
    view: &FindingsView,
    run: Option<&LoopState>,
    final_code: Option<(Option<String>, String)>,
) -> String {
    let mut out = String::from("## Crosscheck review report\n\n");
    if let Some(run) = run {
        let how = match &run.stop {
            Some(stop) => {
                let reason = serde_json::to_value(stop.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("stopped as `{reason}`: {}", inert(&stop.detail))
            }
            None => "still running".to_owned(),
        };
        out.push_str(&format!(
            "Review loop: {} of at most {} rounds, {how}.\n\n",
            run.round, run.max_rounds
        ));
    }
    let last = view.rounds.last();
    let verdict = last
        .and_then(|r| r.verdict.as_deref())
        .map_or_else(|| "none readable".to_owned(), inert);
    out.push_str(&format!("**Final verdict:** {verdict}"));
    if let Some(c) = last.and_then(|r| r.coverage.as_ref()) {
        out.push_str(&format!(" ({})", coverage_words(c)));
    }
    out.push('\n');
    match final_code {
        Some((head, digest)) => {
            let head = head.map_or_else(|| "no commit".to_owned(), |h| inert(&h));
            out.push_str(&format!(
                "**Code it saw:** commit {head}, fingerprint {}\n",
                inert(&digest)
            ));
        }
        None => match last.and_then(|r| r.fingerprint.as_deref()) {
            Some(digest) => {
                out.push_str(&format!("**Code it saw:** fingerprint {}\n", inert(digest)))
            }
            None => out.push_str("**Code it saw:** unknown (not a git repository)\n"),
        },
    }
    out.push_str("\n### Rounds\n\n");
    if view.rounds.is_empty() {
        out.push_str("No round recorded.\n");
    }
    for r in &view.rounds {
        out.push_str(&round_line(r));
        out.push('\n');
    }
    out.push_str("\n### Findings\n\n");
    if view.findings.is_empty() {
        out.push_str("No findings.\n");
    }
    for f in &view.findings {
        let location = f
            .location
            .as_deref()
            .map(|l| format!(" {}", inert(l)))
            .unwrap_or_default();
        out.push_str(&format!(
            "- **{}** {}{location}: {} — {}\n",
            inert(&f.id),
            f.severity.as_str(),
            inert(&f.title),
            f.status.as_str()
        ));
        for h in &f.history {
            let who = match h.side {
                RoundSide::Reviewer => "reviewer",
                RoundSide::Implementer => "implementer",
            };
            let note = h
                .note
                .as_deref()
                .map(|n| format!(": {}", inert(n)))
                .unwrap_or_default();
            let unchanged = if h.claimed_unchanged {
                " (claimed fixed, code unchanged)"
            } else {
                ""
            };
            out.push_str(&format!(
                "  - round {}, {who}: {}{note}{unchanged}\n",
                h.round,
                h.status.as_str()
            ));
        }
    }
    out
}

/// The report of the link keyed by `review_session`; `None` when it has no round.
pub fn for_review(db: &Db, review_session: &str) -> Result<Option<String>> {
    let view = findings::view(db, review_session)?;
    if view.rounds.is_empty() {
        return Ok(None);
    }
    let run =
        loop_record::load(db, review_session)?.filter(|s| s.review_session_id == review_session);
    let code = match view.rounds.last() {
        Some(r) => pinned(db, review_session, &r.message_id)?,
        None => None,
    };
    Ok(Some(render(&view, run.as_ref(), code)))
}

/// The report of the newest review recorded in `directory`; `None` when there is none.
pub fn newest_in(db: &Db, directory: &str) -> Result<Option<String>> {
    match findings::newest_review_in(db, directory)? {
        Some(session) => for_review(db, &session),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crosscheck_review::findings::parse_findings;

    #[test]
    fn model_markdown_is_inert() {
        let s = inert("<img src=x onerror=alert(1)>\n```\n# head [a](http://x) | t |");
        assert!(!s.contains('<') && !s.contains('\n'), "{s}");
        assert!(!s.contains("```"), "{s}");
        assert!(s.contains("&lt;img"), "{s}");
        assert!(s.contains("\\[a\\]\\(http://x\\)"), "{s}");
    }

    #[test]
    fn a_report_lists_rounds_coverage_and_how_each_finding_ended() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("c.db")).expect("open");
        let r1 = parse_findings(
            "FINDINGS\n- [F1] major src/lib.rs:3 — greet() <b>panics</b> ```\nREVIEWED src/lib.rs\nVERDICT: FLAGS (1)",
        );
        findings::record_review(&db, "r", Some("o"), "m1", &r1, Some("fp1"), 1).expect("r1");
        findings::record_answers(
            &db,
            "r",
            "m2",
            "- [F1] DISPUTED — never empty: `if name.is_empty()`",
            true,
        )
        .expect("answers");
        let r2 = parse_findings(
            "FINDINGS\n- [F1] WITHDRAWN — right\nREVIEWED src/lib.rs\nVERDICT: CLEAN",
        );
        findings::record_review(&db, "r", Some("o"), "m3", &r2, Some("fp2"), 2).expect("r2");
        let reviewed = match &r2 {
            crosscheck_review::findings::FindingsReply::Parsed { reviewed, .. } => reviewed.clone(),
            other => panic!("{other:?}"),
        };
        let changed = vec!["src/lib.rs".to_owned(), "README.md".to_owned()];
        findings::record_coverage(&db, "r", 2, "/repo", &reviewed, Some(&changed)).expect("cov");
        let report = newest_in(&db, "/repo").expect("report").expect("some");
        assert!(
            report.contains("**Final verdict:** CLEAN (covered 1 of 2 changed files)"),
            "{report}"
        );
        assert!(report.contains("not reviewed: README.md"), "{report}");
        assert!(report.contains("round 2, reviewer: withdrawn"), "{report}");
        assert!(report.contains("implementer: disputed"), "{report}");
        assert!(!report.contains("<b>"), "{report}");
        assert_eq!(report.matches("```").count() % 2, 0, "{report}");
        assert!(newest_in(&db, "/elsewhere").expect("none").is_none());
    }
}
