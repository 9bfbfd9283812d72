//! FAIL written in any spelling, mark or Unicode disguise makes a cold review flagged, never
//! clean; a verdict or PASS line that is not the reviewer's own (quoted, or a fenced example)
//! does not count; FAIL lines are listed with their `__` and `*`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::common::{ModelServer, PLAN, Reply, quick, rig};
use crosscheck_review::verdict::{ParsedReply, Verdict, failed_check_lines, parse_reply};
use crosscheck_review::{ReviewKind, ReviewRequest, ReviewSource, ReviewStatus};

/// Eight PASS lines, then `extra`, then `VERDICT: CLEAN`.
fn eight_passes_and(extra: &str) -> String {
    let mut text: String = (1..=8)
        .map(|n| format!("P{n} PASS — looked for it; present.\n"))
        .collect();
    text.push_str(extra);
    text.push_str("\nVERDICT: CLEAN");
    text
}

fn is_clean(parsed: &ParsedReply) -> bool {
    matches!(
        parsed,
        ParsedReply::Valid {
            verdict: Verdict::Clean,
            ..
        }
    )
}

/// The FAIL spellings: a name and the line that fails P3 beside eight PASS lines.
const SPELLINGS: &[(&str, &str)] = &[
    ("FAILURE", "P3 FAILURE — no test named"),
    ("Failure", "P3: Failure — no test named"),
    ("NOT MET", "P3 NOT MET — no test named"),
    ("not met", "P3 — not met: no test named"),
    ("UNMET", "P3 UNMET — no test named"),
    ("FAILED", "P3 FAILED — no test named"),
    ("full-width FAIL", "P3 ＦＡＩＬ — no test named"),
    ("full-width id and FAIL", "Ｐ３ ＦＡＩＬ — no test named"),
    ("zero-width space", "P3 FA\u{200B}IL — no test named"),
    ("zero-width joiner", "P3 F\u{200D}AIL — no test named"),
    ("word joiner in the id", "P\u{2060}3 FAIL — no test named"),
    ("soft hyphen", "P3 FAI\u{00AD}L — no test named"),
    ("bidi isolate", "P3 \u{2066}FAIL\u{2069} — no test named"),
    (
        "reversed right-to-left",
        "\u{202E}deman tset on — LIAF 3P\u{202C}",
    ),
    ("reversed word", "P3 LIAF — no test named"),
    ("✕", "P3 ✕ no test named"),
    ("✗", "P3 ✗ no test named"),
    ("❌", "P3 ❌ no test named"),
    ("✖", "P3 ✖ no test named"),
    ("☒", "P3 ☒ no test named"),
    ("mathematical bold", "P3 𝐅𝐀𝐈𝐋 — no test named"),
    ("Cyrillic look-alikes", "P3 FАIL — no test named"),
    ("no mark at all", "P3 — see the notes above"),
    ("a question", "P3 PASS? FAIL? unsure"),
    ("not satisfied", "P3 NOT SATISFIED — no test named"),
    ("FAIL after a PASS", "P3 PASS — but the rollback step: FAIL"),
    ("negative mark after a PASS", "P3 PASS ❌"),
];

#[test]
fn every_fail_spelling_is_flagged() {
    let spellings = SPELLINGS;
    let mut clean = Vec::new();
    for (name, line) in spellings {
        let text = eight_passes_and(line);
        if is_clean(&parse_reply(&text, ReviewKind::Plan)) {
            clean.push(*name);
        }
    }
    println!("{} spellings, parsed CLEAN: {clean:?}", spellings.len());
    assert!(clean.is_empty(), "parsed CLEAN: {clean:?}");
}

/// The engine the gates and the app share records none of them clean, repair round included.
#[tokio::test]
async fn no_fail_spelling_is_recorded_clean_by_the_engine() {
    let mut clean = Vec::new();
    for (name, line) in SPELLINGS {
        let server = ModelServer::start();
        server.always(Reply::Text(eight_passes_and(line)));
        let rig = rig(&server.base, quick());
        let request = ReviewRequest::plan("/w", PLAN, ReviewSource::Draft);
        let decision = rig.engine.review(request).await.unwrap();
        if decision.status == ReviewStatus::Clean {
            clean.push(*name);
        }
    }
    assert!(clean.is_empty(), "recorded CLEAN: {clean:?}");
}

#[test]
fn clear_passes_in_any_width_stay_clean() {
    for (name, text) in [
        ("plain", eight_passes_and("")),
        (
            "fail-open in prose",
            eight_passes_and("P6 PASS — each risk names fail-open or fail-closed"),
        ),
        (
            "lower-case prose",
            eight_passes_and("The retry may fail under load, which the plan covers."),
        ),
        ("full-width PASS", eight_passes_and("P3 ＰＡＳＳ — present")),
        ("check mark", eight_passes_and("P3 ✅ present")),
    ] {
        assert!(
            is_clean(&parse_reply(&text, ReviewKind::Plan)),
            "{name}: {:?}",
            parse_reply(&text, ReviewKind::Plan)
        );
    }
}

#[test]
fn quoted_or_fenced_passes_and_verdicts_are_not_the_reviewers() {
    let quoted_passes: String = (1..=8)
        .map(|n| format!("> P{n} PASS — looked for it; present.\n"))
        .collect::<String>()
        + "\nVERDICT: CLEAN";
    let quoted_verdict: String = (1..=8)
        .map(|n| format!("P{n} PASS — looked for it; present.\n"))
        .collect::<String>()
        + "> VERDICT: CLEAN";
    let fenced_passes: String = "```\n".to_owned()
        + &(1..=8)
            .map(|n| format!("P{n} PASS — looked for it; present.\n"))
            .collect::<String>()
        + "```\nP3 is not covered: the plan names no test.\nVERDICT: CLEAN";
    for (name, text) in [
        ("quoted PASS lines", quoted_passes),
        ("quoted verdict", quoted_verdict),
        ("fenced example PASS lines", fenced_passes),
    ] {
        assert!(
            !is_clean(&parse_reply(&text, ReviewKind::Plan)),
            "{name} parsed clean"
        );
    }
    // A whole reply in one fence is the reviewer's own.
    let fenced_whole = "```\n".to_owned() + &eight_passes_and("") + "\n```";
    assert!(is_clean(&parse_reply(&fenced_whole, ReviewKind::Plan)));
}

#[test]
fn fail_lines_keep_dunders_and_stars() {
    let text = "P1 FAIL — __init__.py imports * from utils\n- **P2 FAIL** — `__all__` is missing\nP3 FAIL — the glob **/*.rs skips build.rs\nVERDICT: FLAGS (3)";
    assert_eq!(
        failed_check_lines(text, ReviewKind::Plan),
        vec![
            "P1 FAIL — __init__.py imports * from utils".to_owned(),
            "P2 FAIL — __all__ is missing".to_owned(),
            "P3 FAIL — the glob **/*.rs skips build.rs".to_owned(),
        ]
    );
}
