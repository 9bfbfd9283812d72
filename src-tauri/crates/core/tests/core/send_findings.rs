//! "Send selected findings" against the fake OpenCode: the implementer gets exactly the chosen
//! findings in the seed's feedback words with the hidden answer-by-id part, the send is a
//! transfer (sent mark, a second send asks first), and each fault a user meets is refused with
//! its own code while nothing is sent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, Reply, SHORT, wait_change};
use crosscheck_core::findings::FindingsView;
use crosscheck_core::requests::{ListFindings, ListTransfers, OpenSession, SendFindings};
use crosscheck_core::transfer_log::TransferRecord;
use crosscheck_core::{Change, ErrorCode, Request};

const THREE: &str = "Three things.\n\nFINDINGS\n- [F1] blocker src/lib.rs:3 — greet() panics on an empty name\n- [F2] major src/lib.rs:7 — the error is swallowed\n  it returns Ok(()) on failure\n- [F3] nit src/lib.rs:1 — prefer a doc comment\nVERDICT: FLAGS (3)";
const FEEDBACK_HEAD: &str = "Another agent reviewed your changes and left the feedback below.\n\nPlease review the feedback, resolve the relevant issues, and explain what you changed.\n\n";

/// A reviewed pair whose reviewer reply `reply` is recorded: (original, review, reply id).
async fn reviewed(h: &Harness, reply: &str) -> (String, String, String) {
    let o = h.fake.seed_session("Add greet", None);
    h.fake.script(&o, Reply::text("## Intent\ngreet()"));
    h.fake.script_any(Reply::text(reply));
    let run = h.handoff(&o, SHORT).await;
    let review = run.flow.review_session_id.clone().expect("review session");
    h.fake.wait_turns(&review, 1, SHORT).await;
    h.request(Request::OpenSession(OpenSession {
        session_id: review.clone(),
    }))
    .await
    .expect("open");
    let deadline = std::time::Instant::now() + SHORT;
    let view: FindingsView = loop {
        let view: FindingsView = serde_json::from_value(
            h.request(Request::ListFindings(ListFindings {
                session_id: review.clone(),
            }))
            .await
            .expect("findings"),
        )
        .expect("shape");
        if !view.rounds.is_empty() || std::time::Instant::now() > deadline {
            break view;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(view.rounds.len(), 1, "the reply is recorded");
    let reply_id = view.rounds[0].message_id.clone();
    (o, review, reply_id)
}

fn send(review: &str, message: &str, ids: &[&str], resend: Option<bool>) -> Request {
    Request::SendFindings(SendFindings {
        review_session_id: review.to_owned(),
        message_id: message.to_owned(),
        finding_ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        resend,
    })
}

/// The implementer gets the chosen findings and no other, each with its severity, location and
/// detail, in the seed's words, with the answer-by-id instruction hidden; the send is marked
/// like a transfer and a second one needs a yes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_chosen_findings_reach_the_implementer() {
    let h = Harness::start().await;
    let (o, review, reply) = reviewed(&h, THREE).await;
    let before = h.fake.prompts_to(&o).len();
    let mut changes = h.core.subscribe();
    h.request(send(&review, &reply, &["F2", "F1"], None))
        .await
        .expect("send");
    let sent = h.fake.prompts_to(&o);
    assert_eq!(sent.len(), before + 1, "one prompt");
    let parts = crate::support::part_texts(sent.last().unwrap());
    assert_eq!(parts.len(), 2, "visible words and the hidden part");
    assert_eq!(
        parts[0],
        (
            format!(
                "{FEEDBACK_HEAD}FINDINGS\n- [F1] blocker src/lib.rs:3 — greet() panics on an empty name\n- [F2] major src/lib.rs:7 — the error is swallowed\n  it returns Ok(()) on failure"
            ),
            false
        )
    );
    assert!(!parts[0].0.contains("F3"), "the nit stays behind");
    let answers = crosscheck_core::prompts::default_template(
        crosscheck_core::prompts::REVIEW_ANSWER_INSTRUCTIONS,
    )
    .unwrap();
    assert_eq!(parts[1], (answers.to_owned(), true));
    for (text, _) in &parts {
        crate::support::assert_leaks_nothing(text);
    }
    let pushed = wait_change(&mut changes, SHORT, "the Transferred change", |c| {
        matches!(c, Change::Transferred { .. })
    })
    .await;
    let Change::Transferred { transfer } = pushed else {
        unreachable!()
    };
    assert_eq!(transfer.source_message_id, reply);
    assert_eq!(transfer.target_session_id, o);
    let records: Vec<TransferRecord> = serde_json::from_value(
        h.request(Request::ListTransfers(ListTransfers {
            session_id: review.clone(),
        }))
        .await
        .expect("transfers"),
    )
    .unwrap();
    assert_eq!(records.len(), 1);

    // Sent before: a second send asks first, then goes with a yes.
    let err = h
        .request(send(&review, &reply, &["F3"], None))
        .await
        .expect_err("sent before");
    assert_eq!(err.code, ErrorCode::AlreadyTransferred);
    assert_eq!(h.fake.prompts_to(&o).len(), before + 1);
    h.request(send(&review, &reply, &["F3"], Some(true)))
        .await
        .expect("send again");
    let sent = h.fake.prompts_to(&o);
    let parts = crate::support::part_texts(sent.last().unwrap());
    assert_eq!(
        parts[0].0,
        format!("{FEEDBACK_HEAD}FINDINGS\n- [F3] nit src/lib.rs:1 — prefer a doc comment")
    );
    h.stop().await;
}

/// Unknown ids, none chosen, a message that is not a recorded reply, a reply without open
/// findings, a message that does not exist and a deleted original: each has its own code, and
/// the implementer gets nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_is_refused_with_its_code_and_sends_nothing() {
    let h = Harness::start().await;
    let (o, review, reply) = reviewed(&h, THREE).await;
    let before = h.fake.prompts_to(&o).len();

    let err = h
        .request(send(&review, &reply, &["F1", "F9"], None))
        .await
        .expect_err("unknown id");
    assert_eq!(err.code, ErrorCode::UnknownFindings);
    assert!(
        err.message.contains("F9") && !err.message.contains("F1"),
        "{}",
        err.message
    );

    let err = h
        .request(send(&review, &reply, &[], None))
        .await
        .expect_err("none chosen");
    assert_eq!(err.code, ErrorCode::NoFindingsSelected);

    // The user's own prompt in the review session is no reviewer reply.
    let prompt = h
        .fake
        .messages(&review)
        .into_iter()
        .find(|m| m.info["role"] == "user")
        .and_then(|m| m.info["id"].as_str().map(str::to_owned))
        .unwrap();
    let err = h
        .request(send(&review, &prompt, &["F1"], None))
        .await
        .expect_err("not a reply with findings");
    assert_eq!(err.code, ErrorCode::NoFindings);

    let err = h
        .request(send(&review, "msg_gone", &["F1"], None))
        .await
        .expect_err("no such message");
    assert_eq!(err.code, ErrorCode::NotFound);

    // From the implementing session: findings are sent from the review session.
    let err = h
        .request(send(&o, &reply, &["F1"], None))
        .await
        .expect_err("wrong side");
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert_eq!(h.fake.prompts_to(&o).len(), before, "nothing was sent");

    // The original deleted: the send says the link is gone and leaves no mark.
    h.fake.remove_session(&o);
    let err = h
        .request(send(&review, &reply, &["F1"], None))
        .await
        .expect_err("original deleted");
    assert_eq!(err.code, ErrorCode::NoLinkedSession);
    let records: Vec<TransferRecord> = serde_json::from_value(
        h.request(Request::ListTransfers(ListTransfers {
            session_id: review.clone(),
        }))
        .await
        .expect("transfers"),
    )
    .unwrap();
    assert!(records.is_empty(), "no sent mark: {records:?}");
    h.stop().await;
}

/// A CLEAN reply has nothing open to send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_reply_has_no_findings_to_send() {
    let h = Harness::start().await;
    let (o, review, reply) = reviewed(&h, "All good.\n\nFINDINGS\nVERDICT: CLEAN").await;
    let before = h.fake.prompts_to(&o).len();
    let err = h
        .request(send(&review, &reply, &["F1"], None))
        .await
        .expect_err("clean");
    assert_eq!(err.code, ErrorCode::NoFindings);
    assert_eq!(h.fake.prompts_to(&o).len(), before);
    h.stop().await;
}

/// Settings → Reviewer's shell list: the defaults come from the backend (what "Reset to
/// defaults" uses), a pattern that allows everything is refused with a reason and the saved
/// list stays, and a reset after an edit brings the defaults back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reviewer_shell_list_is_checked_and_resets_to_the_defaults() {
    use crosscheck_core::requests::SetSettings;
    use crosscheck_core::settings::{DEFAULT_REVIEWER_SHELL_ALLOW, Settings};
    let h = Harness::start().await;
    let defaults: Settings =
        serde_json::from_value(h.request(Request::DefaultSettings).await.expect("defaults"))
            .unwrap();
    assert_eq!(defaults.reviewer_shell_allow, DEFAULT_REVIEWER_SHELL_ALLOW);

    let edited = Settings {
        reviewer_shell_allow: vec!["git status*".into(), "cargo tree*".into()],
        ..defaults.clone()
    };
    h.request(Request::SetSettings(SetSettings {
        settings: edited.clone(),
    }))
    .await
    .expect("saved");
    for bad in ["*", "  ", &"x".repeat(201)] {
        let err = h
            .request(Request::SetSettings(SetSettings {
                settings: Settings {
                    reviewer_shell_allow: vec!["ls*".into(), bad.to_owned()],
                    ..defaults.clone()
                },
            }))
            .await
            .expect_err("refused");
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad:?}");
        assert!(err.message.contains("shell pattern"), "{}", err.message);
    }
    assert_eq!(
        h.snapshot().await.settings.reviewer_shell_allow,
        vec!["git status*", "cargo tree*"],
        "the saved list stays"
    );
    h.request(Request::SetSettings(SetSettings {
        settings: Settings {
            reviewer_shell_allow: defaults.reviewer_shell_allow.clone(),
            ..edited
        },
    }))
    .await
    .expect("reset");
    assert_eq!(
        h.snapshot().await.settings.reviewer_shell_allow,
        DEFAULT_REVIEWER_SHELL_ALLOW
    );
    h.stop().await;
}

/// A review reply that ended before the review tab opened is recorded and pushed when the tab
/// opens its transcript, without anyone asking for the list (the list follows pushes only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_ended_before_the_tab_opened_is_pushed_when_it_opens() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Add greet", None);
    h.fake.script(&o, Reply::text("## Intent\ngreet()"));
    h.fake.script_any(Reply::text(THREE));
    let run = h.handoff(&o, SHORT).await;
    let review = run.flow.review_session_id.clone().expect("review session");
    h.fake.wait_turns(&review, 1, SHORT).await;
    let mut changes = h.core.subscribe();
    h.request(Request::OpenSession(OpenSession {
        session_id: review.clone(),
    }))
    .await
    .expect("open");
    let pushed = wait_change(&mut changes, SHORT, "the findings push", |c| {
        matches!(c, Change::Findings { findings } if findings.review_session_id == review && findings.findings.len() == 3)
    })
    .await;
    assert!(matches!(pushed, Change::Findings { .. }));
    h.stop().await;
}
