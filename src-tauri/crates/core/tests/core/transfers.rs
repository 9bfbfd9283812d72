//! Transfers keep a record: the sent mark survives a restart of the core, shows in every client
//! (a `Transferred` change), a second send of the same message needs a yes, and a send that did
//! not go out leaves no mark.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, Reply, SHORT, wait_change, wait_ready};
use crosscheck_core::api_types::TransferDirection;
use crosscheck_core::flows::FlowStep;
use crosscheck_core::requests::{ListTransfers, Transfer};
use crosscheck_core::transfer_log::TransferRecord;
use crosscheck_core::{Api, Core, CoreOptions, OpencodeTarget, ReviewSetup};
use crosscheck_core::{Change, ErrorCode, Request};
use crosscheck_opencode::ServerConfig;
use crosscheck_review::{Env, Logger};

/// A linked pair after a handoff: (original, review session, the reviewer's reply id).
async fn reviewed(h: &Harness) -> (String, String, String) {
    let o = h.fake.seed_session("Add login form", None);
    h.fake.script(&o, Reply::text("Added a login form."));
    h.fake.script_any(Reply::text("Reject empty passwords."));
    let run = h.handoff(&o, SHORT).await;
    assert_eq!(run.flow.step, FlowStep::Done, "{:?}", run.flow.error);
    let review = run.flow.review_session_id.expect("review session");
    h.fake.wait_turns(&review, 1, SHORT).await;
    let reply = h
        .fake
        .messages(&review)
        .into_iter()
        .find(|m| m.info["role"] == "assistant")
        .and_then(|m| m.info["id"].as_str().map(str::to_owned))
        .expect("the reviewer's reply");
    (o, review, reply)
}

fn transfer(session_id: &str, message_id: &str, resend: Option<bool>) -> Request {
    Request::Transfer(Transfer {
        session_id: session_id.to_owned(),
        message_id: message_id.to_owned(),
        resend,
    })
}

async fn list(h: &Harness, session_id: &str) -> Vec<TransferRecord> {
    serde_json::from_value(
        h.request(Request::ListTransfers(ListTransfers {
            session_id: session_id.to_owned(),
        }))
        .await
        .expect("list transfers"),
    )
    .expect("records")
}

/// The records as the UI reads them.
async fn list_json(h: &Harness, session_id: &str) -> Vec<serde_json::Value> {
    serde_json::from_value(
        h.request(Request::ListTransfers(ListTransfers {
            session_id: session_id.to_owned(),
        }))
        .await
        .expect("list transfers"),
    )
    .expect("records")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_send_asks_first_and_the_marks_survive_a_restart() {
    let mut h = Harness::start().await;
    let (o, review, reply) = reviewed(&h).await;
    assert!(list(&h, &review).await.is_empty());

    let mut changes = h.core.subscribe();
    h.request(transfer(&review, &reply, None))
        .await
        .expect("first send");
    let pushed = wait_change(&mut changes, SHORT, "the Transferred change", |c| {
        matches!(c, Change::Transferred { .. })
    })
    .await;
    let Change::Transferred { transfer: record } = pushed else {
        unreachable!()
    };
    assert_eq!(record.source_message_id, reply);
    assert_eq!(record.target_session_id, o);
    assert_eq!(record.direction, TransferDirection::ToImplementer);
    assert_eq!(h.fake.prompts_to(&o).len(), 2, "handoff + one feedback");

    // Again without a yes: refused, nothing sent, and the refusal says it is this case.
    let refused = h
        .request(transfer(&review, &reply, Some(false)))
        .await
        .expect_err("a second send without confirmation");
    assert_eq!(refused.code, ErrorCode::AlreadyTransferred);
    assert_eq!(h.fake.prompts_to(&o).len(), 2, "nothing more was sent");

    // With the user's yes it goes, and both sends are recorded.
    h.request(transfer(&review, &reply, Some(true)))
        .await
        .expect("a confirmed resend");
    assert_eq!(h.fake.prompts_to(&o).len(), 3);
    let marks = list(&h, &review).await;
    assert_eq!(marks.len(), 2);
    assert!(marks[0].sent_at <= marks[1].sent_at);
    assert_eq!(marks[0], record);

    // After a restart of the core on the same database the marks are still there.
    h.core.shutdown().await;
    let core = Core::start_with_review(
        CoreOptions {
            target: OpencodeTarget::Attach(ServerConfig {
                base_url: h.fake.base_url.clone(),
                password: None,
            }),
            database: h.dir.path().join("db").join("crosscheck.db"),
        },
        ReviewSetup {
            config_dir: h.dir.path().join("config"),
            env: Env::Map(Default::default()),
            logger: Logger::memory().0,
        },
    )
    .expect("the core starts again");
    let mut changes = core.subscribe();
    wait_ready(&core, &mut changes, SHORT).await;
    h.core = core.clone();
    h.api = Api::new(core);
    assert_eq!(list(&h, &review).await, marks);
    let refused = h
        .request(transfer(&review, &reply, None))
        .await
        .expect_err("still refused after a restart");
    assert_eq!(refused.code, ErrorCode::AlreadyTransferred);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_the_server_refused_leaves_no_mark() {
    let h = Harness::start().await;
    let (o, review, reply) = reviewed(&h).await;
    h.fake.fail_next("PROMPT", &o);
    let failed = h
        .request(transfer(&review, &reply, None))
        .await
        .expect_err("the server refused the prompt");
    assert_eq!(failed.code, ErrorCode::OpencodeStatus);
    assert!(
        list(&h, &review).await.is_empty(),
        "no mark for a failed send"
    );
    h.request(transfer(&review, &reply, None))
        .await
        .expect("the retry is a first send, not a resend");
    assert_eq!(list(&h, &review).await.len(), 1);
    h.stop().await;
}

/// (20.3) Crosscheck dies after the click and before OpenCode accepted the prompt: nothing
/// reached the implementer, so after the restart the message carries no sent mark (its pending
/// claim is checked against the implementer's messages and dropped), and the next click is a
/// first send, not "Send again?".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_lost_in_a_crash_is_not_marked_sent() {
    let mut h = Harness::start().await;
    let (o, review, reply) = reviewed(&h).await;
    // The server never accepts the prompt: the process is killed while it waits.
    h.fake.stall_next("PROMPT", &o);
    let api = h.api.clone();
    let request = transfer(&review, &reply, None);
    let click = tokio::spawn(async move { api.handle(request).await });
    h.fake
        .wait_until("the transfer's prompt to arrive", SHORT, |s| {
            s.requests
                .iter()
                .filter(|r| {
                    r.route == "POST /session/:id/prompt_async"
                        && r.session_id.as_deref() == Some(o.as_str())
                })
                .count()
                == 2
        })
        .await;
    click.abort();
    let _ = click.await;
    assert_eq!(
        h.fake
            .messages(&o)
            .iter()
            .filter(|m| m.info["role"] == "user")
            .count(),
        1,
        "only the handoff request reached the implementer"
    );
    h.restart_core().await;
    let after_restart = list_json(&h, &review).await;
    assert!(
        after_restart.iter().all(|r| r["pending"] == true),
        "a send the server never accepted is not marked sent: {after_restart:?}"
    );
    h.request(transfer(&review, &reply, None))
        .await
        .expect("the next click is a first send");
    let marks = list_json(&h, &review).await;
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert_eq!(marks[0]["pending"], false, "accepted: sent");
    assert_eq!(
        h.fake
            .messages(&o)
            .iter()
            .filter(|m| m.info["role"] == "user")
            .count(),
        2,
        "the feedback reached the implementer once"
    );
    h.stop().await;
}
