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
    // The store sees the review turn end a moment after the fake does: ask until the reply is
    // recorded (ListFindings records a completed reply itself), its coverage too (written just
    // after the round).
    let deadline = std::time::Instant::now() + SHORT;
    let view = loop {
        let view = list_findings(&h, &o).await;
        let settled = view.rounds.first().is_some_and(|r| r.coverage.is_some());
        if settled || std::time::Instant::now() > deadline {
            break view;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
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
        resend: None,
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

// ---------------------------------------------------------------------------------------------
// The loop.
// ---------------------------------------------------------------------------------------------

use crosscheck_core::flows::review_loop::{LoopPhase, LoopState, StopReason};
use crosscheck_core::prompts;

const FEEDBACK_HEAD: &str = "Another agent reviewed your changes and left the feedback below.\n\nPlease review the feedback, resolve the relevant issues, and explain what you changed.\n\n";
const RESPONSE_HEAD: &str = "The agent implementing the changes has responded to the previous review feedback.\n\nPlease review the latest state again and report any remaining issues.\n\n";
const FIXED_F1: &str = "Guarded the empty name and added a test.\n\n- [F1] FIXED";
const CLEAN_2: &str = "FINDINGS\n- [F1] FIXED\nREVIEWED src/lib.rs\nVERDICT: CLEAN";
const CLEAN_NOTHING_REVIEWED: &str = "Looks right to me.\n\nFINDINGS\nVERDICT: CLEAN";

async fn loops(h: &Harness) -> Vec<LoopState> {
    serde_json::from_value(h.request(Request::ListLoops).await.expect("loops")).expect("shape")
}

/// The pair's loop, once it satisfies `pred` (checked after every change).
async fn wait_loop(
    h: &Harness,
    original: &str,
    what: &str,
    pred: impl Fn(&LoopState) -> bool,
) -> LoopState {
    let mut changes = h.core.subscribe();
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        if let Some(s) = loops(h)
            .await
            .into_iter()
            .find(|s| s.original_session_id == original && pred(s))
        {
            return s;
        }
        crate::support::next_change(&mut changes, deadline, what).await;
    }
}

async fn wait_end(h: &Harness, original: &str) -> LoopState {
    wait_loop(h, original, "the loop to stop", |s| s.ended).await
}

/// Starts a handoff with the loop on, the implementer's replies scripted on the original (its
/// handoff first) and the reviewer's on any new session; answers (original, review).
async fn start_looped(
    h: &Harness,
    max_rounds: u32,
    reviewer: Vec<Reply>,
    implementer: Vec<Reply>,
) -> (String, String) {
    let o = h.fake.seed_session("Add greet", None);
    start_looped_on(h, o, max_rounds, reviewer, implementer).await
}

/// [`start_looped`] on a session seeded by the caller.
async fn start_looped_on(
    h: &Harness,
    o: String,
    max_rounds: u32,
    reviewer: Vec<Reply>,
    implementer: Vec<Reply>,
) -> (String, String) {
    h.fake
        .script(&o, Reply::text("## Intent\ngreet() for every name"));
    for r in implementer {
        h.fake.script(&o, r);
    }
    for r in reviewer {
        h.fake.script_any(r);
    }
    let mut changes = h.core.subscribe();
    h.request(Request::StartHandoffReview(
        crosscheck_core::requests::StartHandoffReview {
            session_id: o.clone(),
            choice: None,
            reviewer: None,
            review_loop: Some(crosscheck_core::requests::LoopSettings {
                max_rounds: Some(max_rounds),
                threshold: None,
                budget: None,
            }),
        },
    ))
    .await
    .expect("handoff starts");
    let started = crate::support::wait_change(
        &mut changes,
        SHORT,
        "the loop to start",
        |c| matches!(c, Change::Loop { state } if state.original_session_id == o),
    )
    .await;
    let Change::Loop { state } = started else {
        unreachable!()
    };
    assert_eq!(state.original_session_id, o);
    (o, state.review_session_id.into_string())
}

fn stop_reason(s: &LoopState) -> StopReason {
    s.stop.as_ref().expect("a stopped loop says why").reason
}

/// Two rounds: the major goes to the implementer (the nit never does), its answer goes back,
/// and the CLEAN verdict ends the loop. Each prompt is sent once with the seed's words visible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_round_loop_ends_clean_and_never_forwards_the_nit() {
    let h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
        vec![Reply::text(FIXED_F1)],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    assert_eq!(end.round, 2);
    assert_eq!(end.phase, LoopPhase::Stopped);

    let to_implementer = h.fake.prompts_to(&o);
    assert_eq!(
        to_implementer.len(),
        2,
        "the handoff request and one feedback"
    );
    let parts = crate::support::part_texts(&to_implementer[1]);
    assert_eq!(
        parts[0].0,
        format!(
            "{FEEDBACK_HEAD}FINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name"
        )
    );
    assert!(!parts[0].0.contains("doc comment") && !parts[0].0.contains("[F2]"));
    assert_eq!(
        parts[1],
        (
            prompts::default_template(prompts::REVIEW_ANSWER_INSTRUCTIONS)
                .unwrap()
                .to_owned(),
            true
        )
    );
    let to_reviewer = h.fake.prompts_to(&review);
    assert_eq!(to_reviewer.len(), 2, "the first review and one response");
    let parts = crate::support::part_texts(&to_reviewer[1]);
    assert_eq!(parts[0].0, format!("{RESPONSE_HEAD}{FIXED_F1}"));
    assert_eq!(
        parts[1],
        (
            prompts::default_template(prompts::REVIEW_FINDINGS_INSTRUCTIONS)
                .unwrap()
                .to_owned(),
            true
        )
    );
    for body in to_implementer.iter().chain(&to_reviewer) {
        for (text, _) in crate::support::part_texts(body) {
            crate::support::assert_leaks_nothing(&text);
        }
    }
    let view = list_findings(&h, &o).await;
    assert_eq!(view.rounds.len(), 2);
    assert_eq!(view.findings[0].status, FindingStatus::Fixed);
    assert!(
        view.findings[0]
            .history
            .iter()
            .any(|r| r.side == crosscheck_core::findings::RoundSide::Implementer)
    );
    h.stop().await;
}

/// A CLEAN that names no file it reviewed does not end the loop: the loop asks once, in a
/// prompt that is all hidden, and a second CLEAN naming nothing stops it as `uncovered`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_that_reviewed_nothing_is_asked_once_then_stops_uncovered() {
    let h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![
            Reply::text(CLEAN_NOTHING_REVIEWED),
            Reply::text(CLEAN_NOTHING_REVIEWED),
        ],
        vec![],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Uncovered, "{end:?}");
    let stop = end.stop.clone().unwrap();
    assert!(stop.detail.contains("named no file"), "{}", stop.detail);
    let to_reviewer = h.fake.prompts_to(&review);
    assert_eq!(to_reviewer.len(), 2, "the first review and one ask");
    let parts = crate::support::part_texts(&to_reviewer[1]);
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert!(parts[0].1, "the ask is hidden");
    assert!(parts[0].0.contains("REVIEWED"), "{}", parts[0].0);
    assert_eq!(
        h.fake.prompts_to(&o).len(),
        1,
        "nothing went to the implementer"
    );
    let view = list_findings(&h, &o).await;
    assert_eq!(view.rounds.len(), 2);
    assert!(
        view.rounds[0]
            .coverage
            .as_ref()
            .unwrap()
            .reviewed
            .is_empty()
    );
    h.stop().await;
}

/// Asked once, a CLEAN that now names what it reviewed ends the loop clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_that_names_its_files_when_asked_ends_clean() {
    let h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![
            Reply::text(CLEAN_NOTHING_REVIEWED),
            Reply::text("FINDINGS\nREVIEWED src/lib.rs:1-20\nVERDICT: CLEAN"),
        ],
        vec![],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    assert_eq!(h.fake.prompts_to(&review).len(), 2);
    let view = list_findings(&h, &o).await;
    let covered = view.rounds[1].coverage.as_ref().unwrap();
    assert_eq!(covered.reviewed[0].label(), "src/lib.rs:1-20");
    h.stop().await;
}

/// The reviewer keeps the same finding open: the loop stops at round 2 of 5, "stalled".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_finding_open_again_stops_the_loop_as_stalled() {
    let h = Harness::start().await;
    let (o, _) = start_looped(
        &h,
        5,
        vec![
            Reply::text(ROUND_1),
            Reply::text("FINDINGS\n- [F1] OPEN — still panics\nVERDICT: FLAGS (1)"),
        ],
        vec![Reply::text(FIXED_F1)],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Stalled, "{end:?}");
    assert_eq!(end.round, 2);
    let stop = end.stop.unwrap();
    assert!(stop.detail.contains("stalled"), "{}", stop.detail);
    assert_eq!(stop.finding_ids, ["F1"]);
    assert_eq!(
        h.fake.prompts_to(&o).len(),
        2,
        "nothing more went to the implementer"
    );
    h.stop().await;
}

/// A cap of 1: the first review with findings open is the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_cap_stops_the_loop() {
    let h = Harness::start().await;
    let (o, _) = start_looped(&h, 1, vec![Reply::text(ROUND_1)], vec![]).await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::RoundCap, "{end:?}");
    assert_eq!(h.fake.prompts_to(&o).len(), 1, "only the handoff request");
    h.stop().await;
}

/// A looped handoff in which the implementer disputes F1 and the reviewer keeps it open (F3 is
/// fixed): the loop stops on the dispute. Answers the implementing session.
async fn start_disputed(h: &Harness) -> String {
    let (o, _) = start_looped(
        h,
        5,
        vec![
            Reply::text("FINDINGS\n- [F1] major — empty names panic\n- [F3] minor — no test\nVERDICT: FLAGS (2)"),
            Reply::text("FINDINGS\n- [F1] OPEN — the CLI passes user input\n- [F3] FIXED\nVERDICT: FLAGS (1)"),
        ],
        vec![Reply::text(
            "- [F1] DISPUTED — names are checked upstream: `check(name)?` in cli.rs\n- [F3] FIXED",
        )],
    )
    .await;
    o
}

/// The implementer disputes, the reviewer keeps it open: stopped with both sides' words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispute_the_reviewer_keeps_open_stops_with_both_sides() {
    let h = Harness::start().await;
    let o = start_disputed(&h).await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Disputed, "{end:?}");
    let detail = end.stop.unwrap().detail;
    assert!(
        detail.contains("names are checked upstream")
            && detail.contains("the CLI passes user input"),
        "{detail}"
    );
    h.stop().await;
}

/// "One more round" the moment a loop stopped on a dispute: the stopped loop still takes its
/// claim off the server then, and the new loop waits for that instead of failing, or finding
/// the old claim and stopping as if another process ran the pair.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_more_round_right_after_a_dispute_starts_a_new_loop() {
    let h = Harness::start().await;
    let o = start_disputed(&h).await;
    let stopped = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&stopped), StopReason::Disputed, "{stopped:?}");
    h.fake.script(&o, Reply::text(FIXED_F1));
    h.fake.script_any(Reply::text(CLEAN_2));
    let next: LoopState = serde_json::from_value(
        h.request(Request::StartLoop(crosscheck_core::requests::StartLoop {
            session_id: o.clone(),
            max_rounds: Some(1),
            threshold: None,
            budget: None,
        }))
        .await
        .expect("one more round starts"),
    )
    .expect("shape");
    assert_ne!(next.id, stopped.id, "a new loop");
    let end = wait_loop(&h, &o, "the new loop to stop", |s| {
        s.id == next.id && s.ended
    })
    .await;
    assert_ne!(stop_reason(&end), StopReason::RunsElsewhere, "{end:?}");
    assert_ne!(stop_reason(&end), StopReason::TurnFailed, "{end:?}");
    h.stop().await;
}

/// A dispute without evidence is sent back to the implementer once, all hidden; its answer
/// with evidence goes to the reviewer with the note to accept or keep it with its own, and the
/// reviewer's withdrawal ends the loop clean with both sides in the history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispute_without_evidence_is_sent_back_once_then_reaches_the_reviewer() {
    let h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![
            Reply::text("FINDINGS\n- [F1] major src/lib.rs:2 — empty names panic\nREVIEWED src/lib.rs\nVERDICT: FLAGS (1)"),
            Reply::text("FINDINGS\n- [F1] WITHDRAWN — right, line 2 guards it\nREVIEWED src/lib.rs\nVERDICT: CLEAN"),
        ],
        vec![
            Reply::text("- [F1] DISPUTED — names are never empty"),
            Reply::text("- [F1] DISPUTED — line 2 reads `if name.is_empty() { return }`"),
        ],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    let to_implementer = h.fake.prompts_to(&o);
    assert_eq!(
        to_implementer.len(),
        3,
        "handoff, feedback, one ask for evidence"
    );
    let ask = crate::support::part_texts(&to_implementer[2]);
    assert_eq!(ask.len(), 1, "{ask:?}");
    assert!(
        ask[0].1 && ask[0].0.contains("You disputed F1 without evidence"),
        "{ask:?}"
    );
    let to_reviewer = h.fake.prompts_to(&review);
    assert_eq!(to_reviewer.len(), 2, "the review and one response");
    let parts = crate::support::part_texts(&to_reviewer[1]);
    assert!(parts[0].0.contains("if name.is_empty()"), "{parts:?}");
    assert!(
        parts[1].1 && parts[1].0.contains("The implementer disputes F1"),
        "{parts:?}"
    );
    let view = list_findings(&h, &o).await;
    let f1 = &view.findings[0];
    assert_eq!(f1.status, FindingStatus::Withdrawn);
    let notes: Vec<_> = f1.history.iter().filter_map(|h| h.note.clone()).collect();
    assert!(
        notes.iter().any(|n| n.contains("if name.is_empty()")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("line 2 guards it")),
        "{notes:?}"
    );
    h.stop().await;
}

/// A reply without a verdict is unparsed: the loop stops, nothing is forwarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparsed_reply_stops_the_loop() {
    let h = Harness::start().await;
    let (o, _) = start_looped(&h, 5, vec![Reply::text("Looks fine to me.")], vec![]).await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Unparsed, "{end:?}");
    assert_eq!(h.fake.prompts_to(&o).len(), 1);
    h.stop().await;
}

/// A failed turn and an aborted turn stop the loop with their reasons.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_and_aborted_turns_stop_the_loop() {
    let h = Harness::start().await;
    let (o, _) = start_looped(
        &h,
        5,
        vec![Reply::error(
            serde_json::json!({"name": "APIError", "data": {"message": "rate limited"}}),
        )],
        vec![],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::TurnFailed, "{end:?}");
    assert!(end.stop.unwrap().detail.contains("rate limited"));
    let (o2, _) = start_looped(&h, 5, vec![Reply::text(ROUND_1)], vec![Reply::aborted()]).await;
    let end = wait_end(&h, &o2).await;
    assert_eq!(stop_reason(&end), StopReason::Aborted, "{end:?}");
    h.stop().await;
}

/// While the implementer works: a permission request stops the loop; on another pair, the user
/// typing in the review session does; on a third, Stop does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_the_user_typing_and_stop_end_the_loop() {
    let h = Harness::start().await;
    let (o, _) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1)],
        vec![Reply::hang("working")],
    )
    .await;
    wait_loop(&h, &o, "the implementer's turn", |s| {
        s.phase == LoopPhase::Implementing && s.pending.is_none()
    })
    .await;
    h.fake.ask_permission(&o, "bash", &["rm -rf target"]);
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::PermissionWaiting, "{end:?}");

    let (o2, review2) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1), Reply::text("ok")],
        vec![Reply::hang("working")],
    )
    .await;
    wait_loop(&h, &o2, "the implementer's turn", |s| {
        s.phase == LoopPhase::Implementing && s.pending.is_none()
    })
    .await;
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: review2.clone(),
        text: "Also check the README".into(),
        choice: None,
        attachments: vec![],
        revert_to: None,
    }))
    .await
    .expect("the user types");
    let end = wait_end(&h, &o2).await;
    assert_eq!(stop_reason(&end), StopReason::UserTookOver, "{end:?}");

    let (o3, _) = start_looped(&h, 5, vec![Reply::hang("thinking")], vec![]).await;
    let stopped: Option<LoopState> = serde_json::from_value(
        h.request(Request::StopLoop(crosscheck_core::requests::StopLoop {
            session_id: o3.clone(),
        }))
        .await
        .expect("stop"),
    )
    .unwrap();
    let stopped = stopped.expect("a loop");
    assert!(stopped.ended);
    assert_eq!(stop_reason(&stopped), StopReason::UserStopped);
    h.stop().await;
}

/// A question (OpenCode's `question` tool waiting for the user's answer) in either session
/// stops the loop with its reason, in the implementer's turn and in the reviewer's, and
/// nothing more is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waiting_in_either_session_stops_the_loop() {
    let h = Harness::start().await;
    // In the implementer's turn.
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1)],
        vec![Reply::hang("let me ask")],
    )
    .await;
    let implementing = wait_loop(&h, &o, "the implementer's turn", |s| {
        s.phase == LoopPhase::Implementing && s.pending.is_none()
    })
    .await;
    assert!(!implementing.ended);
    wait_for_assistant(&h, &o).await;
    h.fake
        .ask_question(&o, "Should an empty name be an error?")
        .expect("a running turn");
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::QuestionWaiting, "{end:?}");
    assert_eq!(end.round, 1);
    assert!(
        end.stop
            .as_ref()
            .is_some_and(|s| s.detail.contains("question"))
    );
    assert_eq!(
        h.fake.prompts_to(&o).len(),
        2,
        "the handoff and the feedback"
    );
    assert_eq!(h.fake.prompts_to(&review).len(), 1, "the review only");

    // In the reviewer's turn.
    let (o2, review2) = start_looped(&h, 5, vec![Reply::hang("let me ask")], vec![]).await;
    wait_for_assistant(&h, &review2).await;
    h.fake
        .ask_question(&review2, "Is the README in scope?")
        .expect("a running turn");
    let end = wait_end(&h, &o2).await;
    assert_eq!(stop_reason(&end), StopReason::QuestionWaiting, "{end:?}");
    assert_eq!(end.phase, LoopPhase::Stopped);
    assert_eq!(h.fake.prompts_to(&o2).len(), 1, "the handoff only");
    h.stop().await;
}

/// Waits until the fake has the assistant message of a session's running turn.
async fn wait_for_assistant(h: &Harness, session_id: &str) {
    let deadline = tokio::time::Instant::now() + SHORT;
    while !h
        .fake
        .messages(session_id)
        .iter()
        .any(|m| m.info["role"] == "assistant" && m.info["time"]["completed"].is_null())
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no running turn in {session_id}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Restarts: resume from the last completed step, never sending one twice.
// ---------------------------------------------------------------------------------------------

/// The app stops while the reviewer works and the reply completes while it is away (no event
/// reaches anyone): the restarted app reads it and forwards it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_while_the_reviewer_works_resumes_and_forwards_once() {
    let mut h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::hang(ROUND_1), Reply::text(CLEAN_2)],
        vec![Reply::text(FIXED_F1)],
    )
    .await;
    h.fake
        .wait_until("the review turn runs", SHORT, |_| true)
        .await;
    wait_loop(&h, &o, "the reviewer's turn", |s| {
        s.phase == LoopPhase::Reviewing
    })
    .await;
    h.core.shutdown().await;
    // Let the review turn start on the fake, then end it while nobody listens.
    let deadline = tokio::time::Instant::now() + SHORT;
    while !h.fake.finish_silently(&review) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the review turn never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.restart_core().await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    assert_eq!(h.fake.prompts_to(&o).len(), 2, "one feedback, not two");
    assert_eq!(h.fake.prompts_to(&review).len(), 2, "one response, not two");
    assert_eq!(
        list_findings(&h, &o).await.rounds.len(),
        2,
        "each reply is one round"
    );
    h.stop().await;
}

/// The app stops while the implementer works: after the restart its answer goes to the
/// reviewer once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_while_the_implementer_works_resumes_and_answers_once() {
    let mut h = Harness::start().await;
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
        vec![Reply::hang(FIXED_F1)],
    )
    .await;
    wait_loop(&h, &o, "the implementer's turn", |s| {
        s.phase == LoopPhase::Implementing && s.pending.is_none()
    })
    .await;
    h.core.shutdown().await;
    let deadline = tokio::time::Instant::now() + SHORT;
    while !h.fake.finish_silently(&o) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the implementer's turn never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.restart_core().await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    assert_eq!(h.fake.prompts_to(&o).len(), 2);
    assert_eq!(h.fake.prompts_to(&review).len(), 2);
    h.stop().await;
}

/// The lines kept around a finding survive a restart in the middle of the implementer's turn:
/// its claim is still judged by them after the app comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_mid_loop_keeps_the_findings_lines() {
    let mut h = Harness::start().await;
    let project = h.dir.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let source: String = (1..=40).map(|i| format!("fn line_{i}() {{}}\n")).collect();
    std::fs::write(project.join("src/lib.rs"), &source).unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "-q", "-m", "start"]);
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
        vec![Reply::hang(FIXED_F1)],
    )
    .await;
    wait_loop(&h, &o, "the implementer's turn", |s| {
        s.phase == LoopPhase::Implementing && s.pending.is_none()
    })
    .await;
    h.core.shutdown().await;
    // The implementer edits far from F1's lines while the app is down.
    std::fs::write(
        project.join("src/lib.rs"),
        source.replace("fn line_30() {}", "fn line_30(name: &str) {}"),
    )
    .unwrap();
    let deadline = tokio::time::Instant::now() + SHORT;
    while !h.fake.finish_silently(&o) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the implementer's turn never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.restart_core().await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    let hidden = &crate::support::part_texts(&h.fake.prompts_to(&review)[1])[1].0;
    assert!(
        hidden.contains("F1: claimed fixed, but lines 1-6 of src/lib.rs are unchanged"),
        "{hidden}"
    );
    h.stop().await;
}

/// A step chosen before the restart: sent once when the server does not have its id, not
/// again when it does (the app stopped between sending and saving).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chosen_step_is_sent_once_across_a_restart() {
    for already_sent in [false, true] {
        let mut h = Harness::start().await;
        let (o, review) = start_looped(
            &h,
            5,
            vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
            vec![Reply::hang(FIXED_F1)],
        )
        .await;
        let at = wait_loop(&h, &o, "the implementer's turn", |s| {
            s.phase == LoopPhase::Implementing && s.pending.is_none()
        })
        .await;
        // The server accepts a prompt before its turn starts: wait for the turn to end it below.
        h.fake
            .wait_running(&o, std::time::Duration::from_secs(10))
            .await;
        h.core.shutdown().await;
        // Rewind the record to "feedback chosen, maybe not sent".
        let sent = h.fake.prompts_to(&o).pop().unwrap();
        let message_id = sent["messageID"].as_str().unwrap().to_owned();
        let parts = crate::support::part_texts(&sent);
        let mut rewound = at.clone();
        rewound.awaiting_message_id = None;
        let chosen = if already_sent {
            message_id.clone()
        } else {
            crosscheck_opencode::ids::message_id()
        };
        if !already_sent {
            rewound.sent_message_ids.push(chosen.clone());
        }
        rewound.pending = Some(crosscheck_core::flows::review_loop::PendingSend {
            session_id: o.clone(),
            message_id: chosen,
            visible: parts[0].0.clone(),
            hidden: parts[1].0.clone(),
        });
        if !already_sent {
            // The first send never happened: its turn is not on the server.
            assert!(h.fake.finish_silently(&o));
            h.fake.script(&o, Reply::text(FIXED_F1));
        }
        let db =
            crosscheck_core::db::Db::open(&h.dir.path().join("db").join("crosscheck.db")).unwrap();
        crosscheck_core::flows::review_loop::record::save(&db, &rewound).unwrap();
        drop(db);
        let before = h.fake.prompts_to(&o).len();
        if already_sent {
            assert!(h.fake.finish_silently(&o));
        }
        h.restart_core().await;
        let end = wait_end(&h, &o).await;
        assert_eq!(
            stop_reason(&end),
            StopReason::Clean,
            "{already_sent}: {end:?}"
        );
        let after = h.fake.prompts_to(&o).len();
        assert_eq!(
            after - before,
            usize::from(!already_sent),
            "already sent: {already_sent}"
        );
        assert_eq!(h.fake.prompts_to(&review).len(), 2);
        h.stop().await;
    }
}

/// Runs git in `dir` for a test repository.
fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An implementer that says FIXED (or RESOLVED, which the findings read as fixed too) while
/// the code did not move: marked on the finding and told to the reviewer in the next hidden
/// part; when the code did move, neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_claimed_without_a_code_change_is_marked_and_told_to_the_reviewer() {
    let resolved = FIXED_F1.replace("FIXED", "RESOLVED");
    // (the file the implementer edits, its answer, whether the claim is "code unchanged"):
    // judged per finding, an edit of another file leaves F1's code (src/lib.rs) unchanged.
    for (edited, answer, unchanged) in [
        (None, FIXED_F1, true),
        (Some("src/lib.rs"), FIXED_F1, false),
        (Some("README.md"), FIXED_F1, true),
        (None, resolved.as_str(), true),
    ] {
        let h = Harness::start().await;
        let project = h.dir.path().join("project");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/lib.rs"), "fn greet() {}\n").unwrap();
        std::fs::write(project.join("README.md"), "# greet\n").unwrap();
        git(&project, &["init", "-q"]);
        git(&project, &["add", "."]);
        git(&project, &["commit", "-q", "-m", "start"]);
        let (o, review) = start_looped(
            &h,
            5,
            vec![
                Reply::text(ROUND_1),
                Reply::text(
                    "FINDINGS\n- [F1] FIXED\nREVIEWED src/lib.rs, README.md\nVERDICT: CLEAN",
                ),
            ],
            vec![Reply::text(answer).delayed(std::time::Duration::from_millis(400))],
        )
        .await;
        wait_loop(&h, &o, "the implementer's turn", |s| {
            s.phase == LoopPhase::Implementing
        })
        .await;
        if let Some(file) = edited {
            // The implementer's edit, and the server's word for it (as its edit tool's).
            std::fs::write(project.join(file), "fn greet(name: &str) {}\n").unwrap();
            h.fake.emit_file_edited(project.to_str().unwrap(), file);
        }
        let end = wait_end(&h, &o).await;
        assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
        let view = list_findings(&h, &o).await;
        let claim = view.findings[0]
            .history
            .iter()
            .find(|r| r.side == crosscheck_core::findings::RoundSide::Implementer)
            .expect("the answer is recorded");
        assert_eq!(
            claim.claimed_unchanged, unchanged,
            "edited: {edited:?}, {answer}"
        );
        assert!(
            view.rounds[0].fingerprint.is_some(),
            "the round is pinned to the code"
        );
        let hidden = &crate::support::part_texts(&h.fake.prompts_to(&review)[1])[1].0;
        assert_eq!(
            hidden.contains("F1: claimed fixed, but src/lib.rs did not change"),
            unchanged,
            "edited: {edited:?}: {hidden}"
        );
        h.stop().await;
    }
}

/// A FIXED claim is judged by the lines around its finding's line, not by its whole file: an
/// edit far away in the same file leaves the finding's code unchanged (told to the reviewer per
/// finding, with the lines), lines inserted above only move it, an edit inside its lines or
/// the file's deletion is a change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_claimed_with_edits_elsewhere_in_its_file_is_unchanged_by_its_lines() {
    let source: String = (1..=40).map(|i| format!("fn line_{i}() {{}}\n")).collect();
    let edit_line = |n: usize, to: &str| -> String {
        source
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == n {
                    format!("{to}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    };
    let far = edit_line(30, "fn line_30(name: &str) {}");
    let inside = edit_line(
        3,
        "fn line_3(name: &str) { if name.is_empty() { return; } }",
    );
    let above = format!("// a\n// b\n// c\n// d\n// e\n{source}");
    // (the file after the implementer's turn, None: deleted; the note the reviewer gets, if any)
    for (after, note) in [
        (
            Some(far.as_str()),
            Some("F1: claimed fixed, but lines 1-6 of src/lib.rs are unchanged"),
        ),
        (Some(inside.as_str()), None),
        (
            Some(above.as_str()),
            Some("F1: claimed fixed, but lines 1-6 of src/lib.rs are unchanged (now lines 6-11)"),
        ),
        (None, None),
    ] {
        let h = Harness::start().await;
        let project = h.dir.path().join("project");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/lib.rs"), &source).unwrap();
        git(&project, &["init", "-q"]);
        git(&project, &["add", "."]);
        git(&project, &["commit", "-q", "-m", "start"]);
        let (o, review) = start_looped(
            &h,
            5,
            vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
            vec![Reply::text(FIXED_F1).delayed(std::time::Duration::from_millis(400))],
        )
        .await;
        wait_loop(&h, &o, "the implementer's turn", |s| {
            s.phase == LoopPhase::Implementing
        })
        .await;
        match after {
            Some(text) => std::fs::write(project.join("src/lib.rs"), text).unwrap(),
            None => std::fs::remove_file(project.join("src/lib.rs")).unwrap(),
        }
        let end = wait_end(&h, &o).await;
        assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
        let view = list_findings(&h, &o).await;
        let claim = view.findings[0]
            .history
            .iter()
            .find(|r| r.side == crosscheck_core::findings::RoundSide::Implementer)
            .expect("the answer is recorded");
        assert_eq!(claim.claimed_unchanged, note.is_some(), "{note:?}");
        let hidden = &crate::support::part_texts(&h.fake.prompts_to(&review)[1])[1].0;
        match note {
            Some(note) => assert!(hidden.contains(note), "{note}: {hidden}"),
            None => assert!(!hidden.contains("claimed fixed"), "{hidden}"),
        }
        h.stop().await;
    }
}

/// A loop round's review reply is pinned to the code it saw, like a manual review's: fresh
/// while the code stays, stale (with the file) once a file changes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_rounds_review_is_pinned_and_goes_stale_when_the_code_moves() {
    let h = Harness::start().await;
    let project = h.dir.path().join("project");
    std::fs::write(project.join("lib.rs"), "fn greet() {}\n").unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "-q", "-m", "start"]);
    std::fs::write(project.join("lib.rs"), "fn greet(name: &str) {}\n").unwrap();
    let (o, review) = start_looped(
        &h,
        5,
        vec![Reply::text("FINDINGS\nREVIEWED lib.rs\nVERDICT: CLEAN")],
        vec![],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    let check = || async {
        let pin: Option<crosscheck_core::review_pin::ReviewPin> = serde_json::from_value(
            h.request(Request::CheckReviewPin(
                crosscheck_core::requests::CheckReviewPin {
                    session_id: review.clone(),
                },
            ))
            .await
            .expect("check"),
        )
        .unwrap();
        pin.expect("the loop's round is pinned")
    };
    let pin = check().await;
    let view = list_findings(&h, &o).await;
    assert_eq!(
        pin.message_id, view.rounds[0].message_id,
        "the round's reply"
    );
    assert_eq!(Some(&pin.digest), view.rounds[0].fingerprint.as_ref());
    assert_eq!(pin.uncommitted, ["lib.rs"], "it saw the uncommitted change");
    assert!(!pin.stale, "{pin:?}");

    std::fs::write(project.join("lib.rs"), "fn greet(name: &str) { todo!() }\n").unwrap();
    let pin = check().await;
    assert!(pin.stale, "{pin:?}");
    assert_eq!(pin.changed_files, ["lib.rs"]);
    h.stop().await;
}

/// The requests the fake got for `session_id`'s messages after the turn of `session_id` went
/// idle for the last time and before the loop's prompt to `next`.
fn reads_after_idle(h: &Harness, session_id: &str, next: &str) -> Vec<String> {
    let idle = *h
        .fake
        .idle_emitted(session_id)
        .last()
        .expect("the turn ended");
    let requests = h.fake.requests();
    let prompt = requests
        .iter()
        .find(|r| {
            r.at > idle
                && r.route == "POST /session/:id/prompt_async"
                && r.session_id.as_deref() == Some(next)
        })
        .map(|r| r.at)
        .expect("the next prompt");
    requests
        .iter()
        .filter(|r| r.at > idle && r.at < prompt)
        .map(|r| format!("{} {:?}", r.route, r.session_id))
        .collect()
}

/// A step whose turn the event stream followed unbroken acts on the store, read over REST
/// while the turn ran: after the reply only the next prompt is sent. When the stream broke in
/// the turn (it may have lost events), the server's transcript is read after the reply first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_reconciles_during_the_turn_and_again_after_a_stream_gap() {
    let slow = std::time::Duration::from_millis(600);
    for gap in [false, true] {
        let h = Harness::start().await;
        let (o, review) = start_looped(
            &h,
            5,
            vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
            vec![Reply::text(FIXED_F1).delayed(slow)],
        )
        .await;
        wait_loop(&h, &o, "the implementer's turn", |s| {
            s.phase == LoopPhase::Implementing && s.pending.is_none()
        })
        .await;
        if gap {
            h.fake.drop_event_streams();
        }
        let end = wait_end(&h, &o).await;
        assert_eq!(stop_reason(&end), StopReason::Clean, "gap {gap}: {end:?}");
        let after = reads_after_idle(&h, &o, &review);
        let read_after = after
            .iter()
            .any(|r| r.starts_with("GET /session/:id/message") && r.contains(&o));
        assert_eq!(
            read_after, gap,
            "gap {gap}: requests after the reply: {after:?}"
        );
        if !gap {
            assert!(after.is_empty(), "only the prompt: {after:?}");
            // The read while the turn ran.
            let reads = h.fake.requests_to("GET /session/:id/message", &o);
            assert!(!reads.is_empty());
        }
        let prompts = h.fake.prompts_to(&review);
        assert_eq!(prompts.len(), 2, "gap {gap}: the response once");
        assert!(
            crate::support::part_texts(&prompts[1])[0]
                .0
                .ends_with(FIXED_F1)
        );
        h.stop().await;
    }
}

/// Review sessions are created read-only (edit, shell, subagents and fetches denied); a reused
/// one gets the rules by PATCH; with the setting off, neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_sessions_are_created_and_reused_read_only() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Add greet", None);
    let run = h.handoff(&o, SHORT).await;
    let review = run.flow.review_session_id.clone().expect("review");
    let create = h
        .fake
        .requests()
        .into_iter()
        .find(|r| r.route == "POST /session")
        .expect("POST /session");
    let rules = create.body["permission"]
        .as_array()
        .expect("a ruleset")
        .clone();
    // No shell, no edit, no subagent, no fetch: the whole ruleset, nothing allowed back.
    let expected: Vec<serde_json::Value> = [
        ("edit", "*", "deny"),
        ("task", "*", "deny"),
        ("bash", "*", "deny"),
        ("webfetch", "*", "deny"),
    ]
    .iter()
    .map(|(permission, pattern, action)| {
        serde_json::json!({"permission": permission, "pattern": pattern, "action": action})
    })
    .collect();
    assert_eq!(rules, expected);
    h.fake.wait_turns(&review, 1, SHORT).await;
    let again = h.handoff(&o, SHORT).await;
    assert_eq!(
        again.flow.review_session_id.as_deref(),
        Some(review.as_str())
    );
    let patches = h.fake.requests_to("PATCH /session/:id", &review);
    assert!(
        patches
            .iter()
            .any(|p| p.body["permission"].as_array() == Some(&rules)),
        "the reused review session gets the rules: {patches:?}"
    );

    let mut settings: crosscheck_core::settings::Settings =
        serde_json::from_value(serde_json::to_value(h.snapshot().await.settings).unwrap()).unwrap();
    settings.reviewer_read_only = false;
    h.request(Request::SetSettings(
        crosscheck_core::requests::SetSettings { settings },
    ))
    .await
    .expect("settings");
    let o2 = h.fake.seed_session("Other", None);
    h.handoff(&o2, SHORT).await;
    let create = h
        .fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.route == "POST /session")
        .unwrap();
    assert!(create.body.get("permission").is_none(), "{}", create.body);
    h.stop().await;
}

/// Of several Crosscheck processes on one server, one runs a pair's loop: a live loop claim of
/// another process on the implementing session stops this one's loop before it sends anything,
/// and leaves that claim as it was; a loop that ran leaves no claim of its own behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_claimed_by_another_process_runs_there_only() {
    let h = Harness::start().await;
    let live = crosscheck_review::ledger::now_ms() + 60_000;
    let theirs = serde_json::json!({"crosscheck": {"claims": {"reviewLoop": {"token": "other", "expiresAt": live}}}});
    let o = h.fake.seed_session("Claimed loop", Some(theirs.clone()));
    let (o, review) = start_looped_on(
        &h,
        o,
        5,
        vec![Reply::text(ROUND_1)],
        vec![Reply::text(FIXED_F1)],
    )
    .await;
    let end = wait_end(&h, &o).await;
    assert_eq!(stop_reason(&end), StopReason::RunsElsewhere, "{end:?}");
    h.fake.wait_turns(&review, 1, SHORT).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        h.fake.prompts_to(&o).len(),
        1,
        "the handoff only: no feedback"
    );
    assert_eq!(h.fake.prompts_to(&review).len(), 1, "the review only");
    let kept = h.fake.metadata(&o).expect("metadata");
    assert_eq!(
        kept["crosscheck"], theirs["crosscheck"],
        "their claim stands"
    );

    // A loop that runs here holds its claim while it runs and leaves none behind.
    let (o2, _) = start_looped(
        &h,
        5,
        vec![Reply::text(ROUND_1), Reply::text(CLEAN_2)],
        vec![Reply::text(FIXED_F1)],
    )
    .await;
    let end = wait_end(&h, &o2).await;
    assert_eq!(stop_reason(&end), StopReason::Clean, "{end:?}");
    // Released right after the loop ends.
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        let left = h.fake.metadata(&o2).unwrap_or_default();
        if left.get("crosscheck").is_none() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a claim was left behind: {left}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.stop().await;
}
