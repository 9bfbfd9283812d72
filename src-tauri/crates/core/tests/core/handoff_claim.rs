//! Two Crosscheck processes (two cores, each with its own database) on one OpenCode server start
//! the handoff of the same session at once: the implementer gets the request once, the review
//! session the review once, and the core that lost the claim follows the other's handoff to the
//! same review session. A claim a crashed process left behind lapses; a cancelled flow releases
//! its claim at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::support::{Harness, Reply, SHORT, wait_ready};
use crosscheck_core::flows::FlowStep;
use crosscheck_core::{Api, Core, CoreOptions, OpencodeTarget, ReviewSetup};
use crosscheck_opencode::ServerConfig;
use crosscheck_review::{Env, Logger};
use serde_json::json;

const PROMPT_ASYNC: &str = "POST /session/:id/prompt_async";

/// A second core on the harness's fake server with a database of its own (another process).
async fn second_core(h: &Harness) -> Harness2 {
    let dir = tempfile::tempdir().expect("tempdir");
    let core = Core::start_with_review(
        CoreOptions {
            target: OpencodeTarget::Attach(ServerConfig {
                base_url: h.fake.base_url.clone(),
                password: None,
            }),
            database: dir.path().join("db").join("crosscheck.db"),
        },
        ReviewSetup {
            config_dir: dir.path().join("config"),
            env: Env::Map(Default::default()),
            logger: Logger::memory().0,
        },
    )
    .expect("second core starts");
    let mut changes = core.subscribe();
    wait_ready(&core, &mut changes, SHORT).await;
    Harness2 { core, _dir: dir }
}

struct Harness2 {
    core: Core,
    _dir: tempfile::TempDir,
}

async fn handoff_in(core: &Core, session_id: &str) -> crosscheck_core::flows::FlowState {
    let api = Api::new(core.clone());
    let mut changes = core.subscribe();
    let started = api
        .handle(crosscheck_core::Request::StartHandoffReview(
            crosscheck_core::requests::StartHandoffReview {
                session_id: session_id.to_owned(),
                choice: None,
                reviewer: None,
                review_loop: None,
            },
        ))
        .await
        .expect("the handoff starts");
    let first: crosscheck_core::flows::FlowState =
        serde_json::from_value(serde_json::to_value(started).unwrap()).unwrap();
    let id = first.id.clone();
    let end = crate::support::wait_change(&mut changes, SHORT, "the flow to end", move |c| {
        matches!(c, crosscheck_core::Change::Flow { flow } if flow.id == id && flow.step.is_final())
    })
    .await;
    let crosscheck_core::Change::Flow { flow } = end else {
        unreachable!()
    };
    flow
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_cores_starting_one_handoff_send_it_once_and_both_show_one_review() {
    let h = Harness::start().await;
    let other = second_core(&h).await;
    for round in 0..3 {
        let o = h
            .fake
            .seed_session(&format!("Shared {round}"), Some(json!({"ticket": round})));
        h.fake.script(
            &o,
            Reply::text("The handoff.").delayed(Duration::from_millis(300)),
        );
        // Both know the session before they race.
        for core in [&h.core, &other.core] {
            let deadline = tokio::time::Instant::now() + SHORT;
            while !core.snapshot().sessions.iter().any(|s| s.session.id == o) {
                assert!(tokio::time::Instant::now() < deadline, "{o} never listed");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let (a, b) = tokio::join!(handoff_in(&h.core, &o), handoff_in(&other.core, &o));
        for f in [&a, &b] {
            assert_eq!(f.step, FlowStep::Done, "round {round}: {f:?}");
            assert!(f.error.is_none());
        }
        assert_eq!(a.review_session_id, b.review_session_id, "round {round}");
        let review = a.review_session_id.clone().expect("a review session");
        assert_eq!(
            h.fake.requests_to(PROMPT_ASYNC, &o).len(),
            1,
            "round {round}: the implementer is asked once"
        );
        h.fake.wait_turns(&review, 1, SHORT).await;
        assert_eq!(
            h.fake.requests_to(PROMPT_ASYNC, &review).len(),
            1,
            "round {round}: the review session gets the review once"
        );
        assert_eq!(
            h.fake.metadata(&o),
            Some(json!({"ticket": round, "openchamber": {"reviewSessionID": review}})),
            "round {round}: no claim left, unrelated keys kept"
        );
    }
    other.core.shutdown().await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_left_by_a_crashed_process_lapses() {
    let h = Harness::start().await;
    // Expired a second ago: its holder stopped renewing it.
    let expired = crosscheck_review::ledger::now_ms() - 1000;
    let o = h.fake.seed_session(
        "Left claimed",
        Some(
            json!({"crosscheck": {"claims": {"handoff": {"token": "dead", "expiresAt": expired}}}}),
        ),
    );
    let flow = handoff_in(&h.core, &o).await;
    assert_eq!(flow.step, FlowStep::Done, "{flow:?}");
    assert_eq!(h.fake.requests_to(PROMPT_ASYNC, &o).len(), 1);
    let review = flow.review_session_id.expect("review");
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"openchamber": {"reviewSessionID": review}})),
        "the stale claim was taken over and released"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_claim_of_another_process_is_followed_not_sent_again() {
    let h = Harness::start().await;
    let live = crosscheck_review::ledger::now_ms() + 60_000;
    let o = h.fake.seed_session(
        "Claimed elsewhere",
        Some(json!({"crosscheck": {"claims": {"handoff": {"token": "other", "expiresAt": live}}}})),
    );
    let api = Api::new(h.core.clone());
    let mut changes = h.core.subscribe();
    api.handle(crosscheck_core::Request::StartHandoffReview(
        crosscheck_core::requests::StartHandoffReview {
            session_id: o.clone(),
            choice: None,
            reviewer: None,
            review_loop: None,
        },
    ))
    .await
    .expect("starts");
    crate::support::wait_change(&mut changes, SHORT, "following the other", |c| {
        matches!(c, crosscheck_core::Change::Flow { flow } if flow.step == FlowStep::RunningElsewhere)
    })
    .await;
    // The other process ends without a review: this one says so, having sent nothing.
    h.fake.set_metadata(&o, json!({}));
    let end = crate::support::wait_change(
        &mut changes,
        SHORT,
        "the flow to end",
        |c| matches!(c, crosscheck_core::Change::Flow { flow } if flow.step.is_final()),
    )
    .await;
    let crosscheck_core::Change::Flow { flow } = end else {
        unreachable!()
    };
    assert_eq!(flow.step, FlowStep::Failed, "{flow:?}");
    assert!(
        flow.error
            .as_ref()
            .unwrap()
            .message
            .contains("another window"),
        "{flow:?}"
    );
    assert_eq!(
        h.fake.requests_to(PROMPT_ASYNC, &o).len(),
        0,
        "nothing sent"
    );
    assert_eq!(h.fake.count("POST /session"), 0, "no review session made");
    h.stop().await;
}
