//! The review loop against the fake OpenCode: findings recorded per link, the loop's steps,
//! every stop rule, resume after a restart in each phase, and no step sent twice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, Reply, SHORT};
use crosscheck_core::findings::FindingsView;
use crosscheck_core::{Change, Request};
use crosscheck_review::findings::{FindingStatus, Severity};

const ROUND_1: &str = "Two things.\n\nFINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name\n- [F2] nit src/lib.rs:1 — prefer a doc comment\nVERDICT: FLAGS (2)";

async fn list_findings(h: &Harness, session_id: &str) -> FindingsView {
    let value = h
        .request(Request::ListFindings(
            crosscheck_core::requests::ListFindings {
                session_id: session_id.to_owned(),
            },
        ))
        .await
        .expect("findings");
    serde_json::from_value(value).expect("findings shape")
}

/// A manual review's reply is recorded as round 1 of its link, listed from either session and
/// pushed as a `Findings` change; the unlinked session has none to list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_reply_is_recorded_as_findings_of_its_link() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Add greet", None);
    h.fake.script(&o, Reply::text("## Intent\ngreet()"));
    h.fake.script_any(Reply::text(ROUND_1));
    let mut changes = h.core.subscribe();
    let run = h.handoff(&o, SHORT).await;
    let review = run.flow.review_session_id.clone().expect("review session");
    h.fake.wait_turns(&review, 1, SHORT).await;
    // The review tab follows the review transcript.
    h.request(Request::OpenSession(
        crosscheck_core::requests::OpenSession {
            session_id: review.clone(),
        },
    ))
    .await
    .expect("open");
    let view = list_findings(&h, &o).await;
    assert_eq!(view.review_session_id, review);
    assert_eq!(view.original_session_id.as_deref(), Some(o.as_str()));
    assert_eq!(view.rounds.len(), 1);
    assert_eq!(view.rounds[0].verdict.as_deref(), Some("FLAGS (2)"));
    let ids: Vec<(&str, Severity, FindingStatus)> = view
        .findings
        .iter()
        .map(|f| (f.id.as_str(), f.severity, f.status))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("F1", Severity::Major, FindingStatus::Open),
            ("F2", Severity::Nit, FindingStatus::Open)
        ]
    );
    assert_eq!(view.findings[0].location.as_deref(), Some("src/lib.rs:3"));
    assert_eq!(list_findings(&h, &review).await, view);
    let pushed = crate::support::wait_change(
        &mut changes,
        SHORT,
        "a findings change",
        |c| matches!(c, Change::Findings { findings } if findings.review_session_id == review),
    )
    .await;
    assert!(matches!(pushed, Change::Findings { .. }));

    let lone = h.fake.seed_session("Unrelated", None);
    let err = h
        .request(Request::ListFindings(
            crosscheck_core::requests::ListFindings { session_id: lone },
        ))
        .await
        .expect_err("no link");
    assert_eq!(err.code, crosscheck_core::ErrorCode::NoLinkedSession);
    h.stop().await;
}

/// The first review prompt and both transfers carry the seed's words visibly and the findings
/// format (to the reviewer) or the answer-by-id instruction (to the implementer) hidden.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_prompts_carry_the_findings_instructions_hidden() {
    use crosscheck_core::prompts;
    let h = Harness::start().await;
    let o = h.fake.seed_session("Add greet", None);
    h.fake.script(&o, Reply::text("## Intent\ngreet()"));
    h.fake.script_any(Reply::text(ROUND_1));
    let run = h.handoff(&o, SHORT).await;
    let review = run.flow.review_session_id.clone().expect("review session");
    h.fake.wait_turns(&review, 1, SHORT).await;
    let findings = prompts::default_template(prompts::REVIEW_FINDINGS_INSTRUCTIONS).unwrap();
    let answers = prompts::default_template(prompts::REVIEW_ANSWER_INSTRUCTIONS).unwrap();
    let first = &h.fake.prompts_to(&review)[0];
    let parts = crate::support::part_texts(first);
    assert_eq!(parts.len(), 2, "{first}");
    assert!(
        parts[0]
            .0
            .starts_with("Please review the changes described in this handoff.\n\n")
    );
    assert_eq!(parts[1], (findings.to_owned(), true));

    let reply_id = h.fake.messages(&review).last().unwrap().info["id"]
        .as_str()
        .unwrap()
        .to_owned();
    h.request(Request::Transfer(crosscheck_core::requests::Transfer {
        session_id: review.clone(),
        message_id: reply_id,
    }))
    .await
    .expect("to the implementer");
    let sent = h.fake.prompts_to(&o);
    let parts = crate::support::part_texts(sent.last().unwrap());
    assert!(
        parts[0]
            .0
            .starts_with("Another agent reviewed your changes")
    );
    assert!(parts[0].0.ends_with(ROUND_1), "the reviewer's words, whole");
    assert_eq!(parts[1], (answers.to_owned(), true));
    for (text, _) in &parts {
        crate::support::assert_leaks_nothing(text);
    }
    h.stop().await;
}
