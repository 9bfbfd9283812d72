//! The flows under the faults users meet (issue 8, "Nothing hangs, nothing is lost"): prompts
//! that fail up front, two processes racing on one session's metadata, originals deleted
//! mid-handoff, time-outs, multi-step and compacted turns, late Cancels, a server clock that is
//! behind, and prompt templates or settings that would drop the payload. Every test here fails
//! on the code before these fixes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::{Duration, Instant};

use crate::support::{FlowRun, Harness, Reply, SHORT, sole_text};
use crosscheck_core::api_types::NoticeLevel;
use crosscheck_core::flows::{FlowState, FlowStep};
use crosscheck_core::prompts;
use crosscheck_core::settings::Settings;
use crosscheck_core::{
    Api, Change, Core, CoreOptions, ErrorCode, OpencodeTarget, Request, ReviewSetup,
};
use crosscheck_opencode::ServerConfig;
use crosscheck_review::{Env, Logger};
use serde_json::{Value, json};

const REVIEW_HEAD: &str = "Please review the changes described in this handoff.\n\nFocus on correctness, regressions, missing implementation, missing tests, and whether the implementation satisfies the stated intent. Provide concise, actionable feedback for the agent implementing the changes.\n\n";
const MODEL_NOT_FOUND: &str = "Model not found: fake/nope.";
/// Far below the 30-minute default limit: a flow that ends only at its limit fails these.
const PROMPTLY: Duration = Duration::from_secs(20);

fn marker(original: &str) -> Value {
    json!({"openchamber": {"kind": "review", "originalSessionID": original}})
}

fn assert_failed_with(run: &FlowRun, code: ErrorCode, words: &str) {
    assert_eq!(run.flow.step, FlowStep::Failed, "{:?}", run.flow);
    let error = run
        .flow
        .error
        .as_ref()
        .expect("a failed flow carries its error");
    assert_eq!(error.code, code, "{error:?}");
    assert!(
        error.message.contains(words),
        "{error:?} should say {words:?}"
    );
    assert!(
        run.notices
            .iter()
            .any(|n| n.level == NoticeLevel::Error && n.message.contains(words)),
        "an error notice with the server's words: {:?}",
        run.notices
    );
}

fn done_review(run: &FlowRun) -> String {
    assert_eq!(run.flow.step, FlowStep::Done, "{:?}", run.flow.error);
    run.flow.review_session_id.clone().expect("review session")
}

/// The ids of the fake's sessions marked as review sessions of `original`.
fn reviews_of(h: &Harness, original: &str) -> Vec<String> {
    h.fake.with_state(|s| {
        s.sessions
            .iter()
            .filter(|(_, v)| v["metadata"]["openchamber"]["originalSessionID"] == original)
            .map(|(id, _)| id.clone())
            .collect()
    })
}

fn change_type(change: &Change) -> String {
    serde_json::to_value(change).expect("change serializes")["type"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A second core (another Crosscheck process) on the same fake server, with its own database.
async fn second_process(h: &Harness) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let core = Core::start_with_review(
        CoreOptions {
            target: OpencodeTarget::Attach(ServerConfig {
                base_url: h.fake.base_url.clone(),
                password: None,
            }),
            database: dir.path().join("second.db"),
        },
        ReviewSetup {
            config_dir: dir.path().join("config"),
            env: Env::Map(Default::default()),
            logger: Logger::memory().0,
        },
    )
    .expect("second core starts");
    let mut changes = core.subscribe();
    crate::support::wait_ready(&core, &mut changes, SHORT).await;
    Harness {
        fake: h.fake.clone(),
        api: Api::new(core.clone()),
        core,
        dir,
    }
}

// ---- 1. a prompt that fails up front ---------------------------------------------------------

/// The server's `session.error` for a prompt it cannot run (no assistant message at all) is kept
/// on the session, pushed once (the server repeats it with a stack trace), listed in the
/// snapshot, and cleared when the next turn starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_that_fails_up_front_reaches_the_ui_with_the_servers_words() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Stale model pick", None);
    h.fake.script(&o, Reply::fails_up_front(MODEL_NOT_FOUND));
    let mut changes = h.core.subscribe();
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: o.clone(),
        text: "hello".into(),
        choice: None,
        attachments: Vec::new(),
        revert_to: None,
    }))
    .await
    .expect("sent");
    let error = crate::support::wait_change(&mut changes, SHORT, "the session error", |c| {
        change_type(c) == "sessionError"
    })
    .await;
    let error = serde_json::to_value(&error).expect("json");
    assert_eq!(error["sessionId"], json!(o));
    assert_eq!(error["error"]["message"], json!(MODEL_NOT_FOUND));
    assert_eq!(error["error"]["name"], json!("UnknownError"));

    h.fake.wait_turns(&o, 1, SHORT).await;
    // The repeat with the stack trace comes after idle: let it arrive, then count.
    let mut repeats = 0;
    let settle = tokio::time::Instant::now() + Duration::from_millis(300);
    while let Ok(Ok(stamped)) = tokio::time::timeout_at(settle, changes.recv()).await {
        repeats += usize::from(change_type(&stamped.change) == "sessionError");
    }
    assert_eq!(repeats, 0, "the repeated error is no second change");
    let snapshot = serde_json::to_value(h.snapshot().await).expect("json");
    assert_eq!(
        snapshot["sessionErrors"][&o]["message"],
        json!(MODEL_NOT_FOUND)
    );
    assert!(snapshot["statuses"].get(&o).is_none(), "nothing left busy");

    h.fake.script(&o, Reply::text("Now it works."));
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: o.clone(),
        text: "again".into(),
        choice: None,
        attachments: Vec::new(),
        revert_to: None,
    }))
    .await
    .expect("sent");
    h.fake.wait_turns(&o, 2, SHORT).await;
    crate::support::wait_change(
        &mut changes,
        SHORT,
        "the next turn",
        |c| matches!(c, Change::Status { session_id, .. } if *session_id == o),
    )
    .await;
    let snapshot = serde_json::to_value(h.snapshot().await).expect("json");
    assert!(
        snapshot["sessionErrors"].get(&o).is_none(),
        "a new turn clears the error: {}",
        snapshot["sessionErrors"]
    );
    h.stop().await;
}

/// A handoff whose turn fails up front ends at once as failed with the server's words, and
/// creates no review session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_whose_turn_fails_up_front_ends_at_once() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Stale model pick", None);
    h.fake.script(&o, Reply::fails_up_front(MODEL_NOT_FOUND));
    let started = Instant::now();
    let run = h.handoff(&o, PROMPTLY).await;
    let took = started.elapsed();
    assert_failed_with(&run, ErrorCode::HandoffFailed, MODEL_NOT_FOUND);
    println!("TIMING up-front failure -> flow failed: {took:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(h.fake.count("POST /session"), 0, "no review session");
    h.stop().await;
}

// ---- 2. two processes on one session ---------------------------------------------------------

/// Two processes start the same handoff at the same moment (both find no link before either
/// writes one): exactly one review session is left, linked, used by both, unrelated keys kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_starting_the_same_handoff_leave_one_linked_review_session() {
    let h = Harness::start().await;
    let other = second_process(&h).await;
    let o = h.fake.seed_session(
        "Shared session",
        Some(json!({"ticket": 42, "openchamber": {"pinned": true}})),
    );
    h.fake.script(&o, Reply::text("Handoff one."));
    h.fake.script(&o, Reply::text("Handoff two."));
    // Both reach "create the review session" before either links one.
    h.fake
        .delay_route("POST /session", Duration::from_millis(300));
    let (a, b) = tokio::join!(h.handoff(&o, SHORT), other.handoff(&o, SHORT));
    let (ra, rb) = (done_review(&a), done_review(&b));
    assert_eq!(ra, rb, "both processes use the same review session");
    assert_eq!(
        reviews_of(&h, &o),
        vec![ra.clone()],
        "one review session is left"
    );
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"ticket": 42, "openchamber": {"pinned": true, "reviewSessionID": ra}}))
    );
    assert!(
        a.flow.reused || b.flow.reused,
        "the loser continues with the winner's"
    );
    // (20.6) The process that lost the link race stops before sending: the review session
    // receives the handoff once.
    assert_eq!(
        h.fake.prompts_to(&ra).len(),
        1,
        "only the winner sent its review"
    );
    other.stop().await;
    h.stop().await;
}

/// A linked session that is a review session of another original is not reused: a new one is
/// made, and the other original's review session is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reuse_checks_the_review_sessions_original() {
    let h = Harness::start().await;
    let elsewhere = h.fake.seed_session("Another original", None);
    let foreign = h
        .fake
        .seed_session("Review: another", Some(marker(&elsewhere)));
    let o = h.fake.seed_session(
        "Copied metadata",
        Some(json!({"openchamber": {"reviewSessionID": foreign}})),
    );
    h.fake.script(&o, Reply::text("The handoff."));
    let run = h.handoff(&o, SHORT).await;
    let review = done_review(&run);
    assert!(!run.flow.reused);
    assert_ne!(review, foreign);
    assert_eq!(h.fake.metadata(&foreign), Some(marker(&elsewhere)));
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"openchamber": {"reviewSessionID": review}}))
    );
    assert!(h.fake.prompts_to(&foreign).is_empty());
    h.stop().await;
}

/// The stale-link repair removes only the id it checked: another client that links a valid
/// review session right after the check keeps its link, and this flow uses that session and
/// deletes its own new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_link_repair_removes_only_the_checked_id() {
    let h = Harness::start().await;
    let o = h.fake.seed_session(
        "Relinked meanwhile",
        Some(json!({"keep": 1, "openchamber": {"reviewSessionID": "ses_gone"}})),
    );
    let theirs = h.fake.seed_session("Review: theirs", Some(marker(&o)));
    h.fake.script(&o, Reply::text("The handoff."));
    let fake = h.fake.clone();
    let (o2, theirs2) = (o.clone(), theirs.clone());
    h.fake
        .after_response("GET /session/:id", "ses_gone", move || {
            fake.set_metadata(
                &o2,
                json!({"keep": 1, "openchamber": {"reviewSessionID": theirs2}}),
            );
        });
    let run = h.handoff(&o, SHORT).await;
    assert_eq!(
        done_review(&run),
        theirs,
        "the other client's session is used"
    );
    assert!(run.flow.reused);
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"keep": 1, "openchamber": {"reviewSessionID": theirs}}))
    );
    assert_eq!(
        reviews_of(&h, &o),
        vec![theirs],
        "our new one was deleted again"
    );
    h.stop().await;
}

/// A write another client replaces right after it landed (from a read made before it) is
/// written again: the key survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_write_replaced_by_another_client_is_written_again() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Contested", Some(json!({"theirs": 0})));
    let fake = h.fake.clone();
    let s2 = s.clone();
    // The other client read `{"theirs": 0}` before our write and writes its change after it.
    h.fake.after_response("PATCH /session/:id", &s, move || {
        fake.set_metadata(&s2, json!({"theirs": 1}));
    });
    crosscheck_core::flows::patch::patch_session_metadata(&h.core, &s, |m| {
        let mut next = m.cloned().unwrap_or_default();
        if next.get("ours") == Some(&json!(true)) {
            return None;
        }
        next.insert("ours".into(), json!(true));
        Some(next)
    })
    .await
    .expect("patched");
    assert_eq!(
        h.fake.metadata(&s),
        Some(json!({"theirs": 1, "ours": true}))
    );
    assert_eq!(h.fake.requests_to("PATCH /session/:id", &s).len(), 2);
    h.stop().await;
}

/// Many starts of one session's handoff at once in one process make one flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_at_once_in_one_process_make_one_flow() {
    let h = Harness::start().await;
    for round in 0..5 {
        let o = h.fake.seed_session(&format!("Round {round}"), None);
        h.fake.script(&o, Reply::hang("never"));
        let starts: Vec<_> = (0..8)
            .map(|_| {
                let api = h.api.clone();
                let o = o.clone();
                tokio::spawn(async move {
                    api.handle(Request::StartHandoffReview(
                        crosscheck_core::requests::StartHandoffReview {
                            session_id: o,
                            choice: None,
                            reviewer: None,
                            review_loop: None,
                        },
                    ))
                    .await
                })
            })
            .collect();
        let mut ids = Vec::new();
        for start in starts {
            let response = start.await.expect("task").expect("started");
            let state: FlowState =
                serde_json::from_value(serde_json::to_value(response).expect("json"))
                    .expect("state");
            ids.push(state.id);
        }
        ids.dedup();
        assert_eq!(ids.len(), 1, "round {round}: one flow, got {ids:?}");
        let id = ids.remove(0);
        h.fake
            .wait_until("the handoff prompt", SHORT, |s| s.statuses.contains_key(&o))
            .await;
        assert_eq!(h.fake.prompts_to(&o).len(), 1);
        assert_eq!(
            h.request(Request::CancelFlow(crosscheck_core::requests::CancelFlow {
                flow_id: id
            }))
            .await
            .expect("cancel"),
            json!(true)
        );
    }
    h.stop().await;
}

// ---- 8. the original goes away; time-outs ----------------------------------------------------

async fn start_hanging(h: &Harness, o: &str) -> FlowState {
    h.fake.script(o, Reply::hang("never"));
    let started = h.start_handoff(o).await;
    h.fake
        .wait_until("the handoff turn to run", SHORT, |s| {
            s.statuses.contains_key(o)
        })
        .await;
    started
}

async fn flow_end(
    changes: &mut tokio::sync::broadcast::Receiver<crosscheck_core::Stamped>,
    id: &str,
) -> FlowState {
    let id = id.to_owned();
    let end = crate::support::wait_change(
        changes,
        PROMPTLY,
        "the flow to end",
        move |c| matches!(c, Change::Flow { flow } if flow.id == id && flow.step.is_final()),
    )
    .await;
    let Change::Flow { flow } = end else {
        unreachable!()
    };
    flow
}

/// Deleting the original through Crosscheck mid-handoff ends the flow at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_original_through_crosscheck_ends_the_handoff() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Deleted mid-handoff", None);
    let mut changes = h.core.subscribe();
    let flow = start_hanging(&h, &o).await;
    let started = Instant::now();
    h.request(Request::DeleteSession(
        crosscheck_core::requests::DeleteSession {
            session_id: o.clone(),
        },
    ))
    .await
    .expect("deleted");
    let end = flow_end(&mut changes, &flow.id).await;
    println!("TIMING delete -> flow failed: {:?}", started.elapsed());
    assert_eq!(end.step, FlowStep::Failed);
    let error = end.error.expect("error");
    assert!(error.message.contains("deleted"), "{error:?}");
    let left = h.fake.with_state(|s| s.sessions.len());
    assert_eq!(
        left, 0,
        "the review session prepared meanwhile is deleted too"
    );
    h.stop().await;
}

/// Deleting the original in OpenCode itself (an event only) ends the flow at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_original_in_opencode_ends_the_handoff() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Deleted elsewhere", None);
    let mut changes = h.core.subscribe();
    let flow = start_hanging(&h, &o).await;
    h.fake.remove_session(&o);
    let end = flow_end(&mut changes, &flow.id).await;
    assert_eq!(end.step, FlowStep::Failed);
    assert!(end.error.expect("error").message.contains("deleted"));
    h.stop().await;
}

/// A handoff that times out aborts the implementer's turn, as Cancel does.
#[tokio::test(start_paused = true)]
async fn a_timed_out_handoff_aborts_the_turn() {
    let h = Harness::start().await;
    let settings = Settings {
        handoff_timeout_ms: 10_000,
        ..Settings::default()
    };
    h.request(Request::SetSettings(
        crosscheck_core::requests::SetSettings { settings },
    ))
    .await
    .expect("settings saved");
    let o = h.fake.seed_session("Slow implementer", None);
    h.fake.script(&o, Reply::hang("never"));
    let run = h.handoff(&o, Duration::from_secs(3600)).await;
    assert_eq!(
        run.flow.error.as_ref().map(|e| e.code),
        Some(ErrorCode::HandoffTimeout)
    );
    assert_eq!(
        h.fake.requests_to("POST /session/:id/abort", &o).len(),
        1,
        "the turn is aborted"
    );
    h.fake.wait_turns(&o, 1, SHORT).await;
    assert!(
        h.fake.with_state(|s| !s.statuses.contains_key(&o)),
        "nothing left busy"
    );
    h.stop().await;
}

// ---- 6. every step of the turn ---------------------------------------------------------------

/// A handoff written around a tool call (two assistant messages) is sent whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handoff_joins_every_step_of_the_turn() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Tool call midway", None);
    h.fake.script(
        &o,
        Reply::steps(&["## Intent\nFirst half.", "## Tests\nSecond half."]),
    );
    let review = done_review(&h.handoff(&o, PROMPTLY).await);
    assert_eq!(
        sole_text(&h.fake.prompts_to(&review)[0]),
        format!("{REVIEW_HEAD}## Intent\nFirst half.\n\n## Tests\nSecond half.")
    );
    h.stop().await;
}

/// After an automatic compaction mid-turn, the continuation's steps are part of the handoff and
/// the summary is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handoff_follows_a_compaction_continuation() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Long session", None);
    h.fake.script(
        &o,
        Reply::compacted(&["Before compaction."], &["After.", "The end."]),
    );
    let review = done_review(&h.handoff(&o, PROMPTLY).await);
    assert_eq!(
        sole_text(&h.fake.prompts_to(&review)[0]),
        format!("{REVIEW_HEAD}Before compaction.\n\nAfter.\n\nThe end.")
    );
    h.stop().await;
}

// ---- 11. smaller ones ------------------------------------------------------------------------

/// The server's clock is a minute behind: its reply ids sort before the request's, and the
/// wait still finds the reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_clock_behind_does_not_hide_the_reply() {
    let h = Harness::start().await;
    h.fake.set_clock_behind(Duration::from_secs(60));
    let o = h.fake.seed_session("Clock behind", None);
    h.fake.script(&o, Reply::text("Found despite the clock."));
    let review = done_review(&h.handoff(&o, PROMPTLY).await);
    assert_eq!(
        sole_text(&h.fake.prompts_to(&review)[0]),
        format!("{REVIEW_HEAD}Found despite the clock.")
    );
    h.stop().await;
}

/// A Cancel that comes after the handoff arrived (while the review session is prepared) is
/// honoured: no review prompt is sent, and CancelFlow says it cancelled. Cancelling an ended
/// flow says it did not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_cancel_is_honoured_and_cancel_flow_says_so() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Late cancel", None);
    h.fake.script(&o, Reply::text("The handoff."));
    h.fake
        .delay_route("POST /session", Duration::from_millis(500));
    let mut changes = h.core.subscribe();
    let started = h.start_handoff(&o).await;
    crate::support::wait_change(
        &mut changes,
        SHORT,
        "preparing the review session",
        |c| matches!(c, Change::Flow { flow } if flow.step == FlowStep::PreparingReviewSession),
    )
    .await;
    let answer = h
        .request(Request::CancelFlow(crosscheck_core::requests::CancelFlow {
            flow_id: started.id.clone(),
        }))
        .await
        .expect("cancel");
    assert_eq!(answer, json!(true));
    let end = flow_end(&mut changes, &started.id).await;
    assert_eq!(end.step, FlowStep::Cancelled);
    let prompts: usize = reviews_of(&h, &o)
        .iter()
        .map(|r| h.fake.prompts_to(r).len())
        .sum();
    assert_eq!(prompts, 0, "no review is sent after a Cancel");
    let left = h.fake.with_state(|s| s.sessions.len());
    assert_eq!(
        left, 1,
        "the review session prepared for it is deleted again"
    );
    let again = h
        .request(Request::CancelFlow(crosscheck_core::requests::CancelFlow {
            flow_id: started.id,
        }))
        .await
        .expect("cancel again");
    assert_eq!(again, json!(false));
    h.stop().await;
}

/// `handoffTimeoutMs` is bounded on the server side, above as below.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handoff_time_limit_is_bounded() {
    let h = Harness::start().await;
    for ms in [0, 9_999, 24 * 60 * 60 * 1000 + 1, u64::MAX] {
        let refused = h
            .request(Request::SetSettings(
                crosscheck_core::requests::SetSettings {
                    settings: Settings {
                        handoff_timeout_ms: ms,
                        ..Settings::default()
                    },
                },
            ))
            .await
            .expect_err("out of bounds");
        assert_eq!(refused.code, ErrorCode::InvalidRequest, "{ms}: {refused:?}");
    }
    assert_eq!(
        h.snapshot().await.settings.handoff_timeout_ms,
        30 * 60 * 1000,
        "nothing was saved"
    );
    h.request(Request::SetSettings(
        crosscheck_core::requests::SetSettings {
            settings: Settings {
                handoff_timeout_ms: 24 * 60 * 60 * 1000,
                ..Settings::default()
            },
        },
    ))
    .await
    .expect("24 h is allowed");
    h.stop().await;
}

// ---- 10. prompt templates --------------------------------------------------------------------

/// Every template saved without its required placeholder, or with one it does not know, is
/// refused with a message naming the placeholder; nothing is saved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_without_their_placeholder_or_with_unknown_ones_are_refused() {
    let h = Harness::start().await;
    for (name, default) in prompts::DEFAULTS {
        let required = prompts::placeholders(default);
        for missing in &required {
            let refused = h
                .request(Request::SetPrompt(crosscheck_core::requests::SetPrompt {
                    name: (*name).to_owned(),
                    template: default.replace(&format!("{{{{{missing}}}}}"), ""),
                }))
                .await
                .expect_err("a missing placeholder is refused");
            assert_eq!(refused.code, ErrorCode::InvalidRequest, "{name}");
            assert!(
                refused.message.contains(&format!("{{{{{missing}}}}}")),
                "{name}: {}",
                refused.message
            );
        }
        let refused = h
            .request(Request::SetPrompt(crosscheck_core::requests::SetPrompt {
                name: (*name).to_owned(),
                template: format!("{default}\n{{{{bogus}}}}"),
            }))
            .await
            .expect_err("an unknown placeholder is refused");
        assert!(
            refused.message.contains("{{bogus}}"),
            "{name}: {}",
            refused.message
        );
        let kept = h
            .request(Request::SetPrompt(crosscheck_core::requests::SetPrompt {
                name: (*name).to_owned(),
                template: format!(
                    "Reworded.\n\n{}",
                    required
                        .iter()
                        .map(|p| format!("{{{{{p}}}}}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }))
            .await
            .expect("a template with its placeholders is saved");
        assert_eq!(kept["overridden"], json!(true));
    }
    h.stop().await;
}

/// A server that repeats its older-page cursor cannot make a transfer page forever: the
/// message is reported as not found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_page_cursor_cannot_loop_forever() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Original", None);
    let r = h.fake.seed_session("Review: Original", Some(marker(&o)));
    h.fake
        .set_metadata(&o, json!({"openchamber": {"reviewSessionID": r}}));
    h.fake.repeat_cursor(&r, "msg_0000000000000000000000000");
    let answer = tokio::time::timeout(
        SHORT,
        h.request(Request::Transfer(crosscheck_core::requests::Transfer {
            session_id: r.clone(),
            message_id: "msg_not_there".into(),
            resend: None,
        })),
    )
    .await
    .expect("the transfer gives up instead of paging forever");
    assert_eq!(answer.expect_err("not found").code, ErrorCode::NotFound);
    assert!(h.fake.requests_to("GET /session/:id/message", &r).len() <= 3);
    h.stop().await;
}

// ---- issue 20: what a daily user still trips on ----------------------------------------------

/// (20.4) The review session is deleted in OpenCode during a second handoff, after it was
/// picked for reuse and before the review prompt goes out (right after its check, and right
/// after its permission rules were patched): the handoff clears that link, makes a new review
/// session, links it and sends it the handoff (it used to fail with `not_found` and leave the
/// original linked to the deleted session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_session_deleted_during_a_second_handoff_is_replaced() {
    for route in ["GET /session/:id", "PATCH /session/:id"] {
        let h = Harness::start().await;
        let o = h.fake.seed_session("Second handoff", None);
        h.fake.script(&o, Reply::text("Handoff one."));
        let first = done_review(&h.handoff(&o, PROMPTLY).await);
        h.fake.wait_turns(&first, 1, SHORT).await;
        // The second turn takes a moment; the review session is deleted in the middle.
        h.fake.script(
            &o,
            Reply::text("Handoff two.").delayed(Duration::from_millis(600)),
        );
        let fake = h.fake.clone();
        let doomed = first.clone();
        h.fake.after_response(route, &first, move || {
            fake.remove_session(&doomed);
        });
        let run = h.handoff(&o, PROMPTLY).await;
        let second = done_review(&run);
        assert_ne!(second, first, "{route}: a new review session");
        assert!(
            h.fake.session(&first).is_none(),
            "{route}: the first one is gone"
        );
        assert_eq!(
            h.fake.metadata(&o),
            Some(json!({"openchamber": {"reviewSessionID": second}})),
            "{route}: the original links the new one, not the deleted one"
        );
        let prompts = h.fake.prompts_to(&second);
        assert_eq!(prompts.len(), 1, "{route}");
        assert!(sole_text(&prompts[0]).contains("Handoff two."));
        h.stop().await;
    }
}

/// (20.5) An unknown agent: the server says `Agent not found: ...` and then repeats the error
/// with only its name. The session keeps the words, not "UnknownError".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_agent_keeps_the_servers_words() {
    const WORDS: &str = "Agent not found: \"no-such-agent\". Available agents: build, compaction, explore, general, plan";
    let h = Harness::start().await;
    let o = h.fake.seed_session("Unknown agent", None);
    h.fake.script(&o, Reply::unknown_agent(WORDS));
    let mut changes = h.core.subscribe();
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: o.clone(),
        text: "hello".into(),
        choice: None,
        attachments: Vec::new(),
        revert_to: None,
    }))
    .await
    .expect("sent");
    h.fake.wait_turns(&o, 1, SHORT).await;
    let mut errors = Vec::new();
    let settle = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Ok(stamped)) = tokio::time::timeout_at(settle, changes.recv()).await {
        if let Change::SessionError { error, .. } = stamped.change {
            errors.push(error.message);
        }
    }
    assert_eq!(errors, vec![WORDS.to_owned()], "one error, with the words");
    let snapshot = serde_json::to_value(h.snapshot().await).expect("json");
    assert_eq!(snapshot["sessionErrors"][&o]["message"], json!(WORDS));

    // A handoff asked of that agent fails with the same words.
    h.fake.script(&o, Reply::unknown_agent(WORDS));
    let run = h.handoff(&o, PROMPTLY).await;
    assert_failed_with(&run, ErrorCode::HandoffFailed, "Agent not found");
    h.stop().await;
}

/// Restores `metadata` on `session` right after each of the next `times` PATCHes of it: another
/// client that keeps writing what it read before our write.
fn keep_overwriting(
    fake: crate::support::FakeOpencode,
    session: String,
    metadata: Value,
    times: usize,
) {
    if times == 0 {
        return;
    }
    let (f, s, m) = (fake.clone(), session.clone(), metadata.clone());
    fake.after_response("PATCH /session/:id", &session, move || {
        f.set_metadata(&s, m.clone());
        keep_overwriting(f, s, m, times - 1);
    });
}

/// (20.7) Another client overwrites the original's metadata after each of our link writes, more
/// often than the four tries the link used to get: linking keeps trying (with jittered backoff)
/// and the finished handoff links its review session, with the other client's key kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linking_outlasts_a_busy_metadata_writer() {
    let h = Harness::start().await;
    let o = h
        .fake
        .seed_session("Busy writer", Some(json!({"theirs": 1})));
    h.fake.script(&o, Reply::text("Handoff."));
    keep_overwriting(h.fake.clone(), o.clone(), json!({"theirs": 1}), 6);
    let run = h.handoff(&o, PROMPTLY).await;
    let review = done_review(&run);
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"theirs": 1, "openchamber": {"reviewSessionID": review}}))
    );
    assert_eq!(reviews_of(&h, &o), vec![review]);
    h.stop().await;
}

/// (20.7) When linking fails for good and our review session is deleted, a late write of the
/// other client that brought our link back is cleared: the original never names a session we
/// deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_a_review_session_we_deleted_is_cleared() {
    let h = Harness::start().await;
    let o = h
        .fake
        .seed_session("Hopeless writer", Some(json!({"theirs": 1})));
    h.fake.script(&o, Reply::text("Handoff."));
    keep_overwriting(h.fake.clone(), o.clone(), json!({"theirs": 1}), 1000);
    let running = {
        let h2 = Harness {
            fake: h.fake.clone(),
            core: h.core.clone(),
            api: h.api.clone(),
            dir: tempfile::tempdir().expect("tempdir"),
        };
        let o = o.clone();
        tokio::spawn(async move { h2.handoff(&o, PROMPTLY).await })
    };
    h.fake
        .wait_until("the review session", SHORT, |s| s.sessions.len() == 2)
        .await;
    let review = h.fake.with_state(|s| {
        s.sessions
            .keys()
            .find(|id| **id != o)
            .cloned()
            .expect("the review session")
    });
    // Once it is deleted, the other client writes back what it read while our link was there.
    let fake = h.fake.clone();
    let (o2, r2) = (o.clone(), review.clone());
    h.fake
        .after_response("DELETE /session/:id", &review, move || {
            fake.set_metadata(
                &o2,
                json!({"theirs": 1, "openchamber": {"reviewSessionID": r2}}),
            );
        });
    let run = running.await.expect("the handoff task");
    assert_eq!(run.flow.step, FlowStep::Failed, "{:?}", run.flow);
    assert!(
        h.fake.session(&review).is_none(),
        "our review session is deleted"
    );
    assert_eq!(
        h.fake.metadata(&o),
        Some(json!({"theirs": 1})),
        "no link to the deleted session is left"
    );
    h.stop().await;
}

/// (20.8) A model that answers garbage forever: the flow's progress says how many model calls
/// the turn made without writing text (the progress strip shows it), and Cancel still undoes the
/// handoff (the turn aborted, the prepared review session removed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_without_text_shows_its_model_calls_and_cancel_undoes_it() {
    let h = Harness::start().await;
    let o = h.fake.seed_session("Garbage model", None);
    h.fake.script(&o, Reply::silent_forever(5));
    let mut changes = h.core.subscribe();
    let flow = h.start_handoff(&o).await;
    let id = flow.id.clone();
    crate::support::wait_change(&mut changes, SHORT, "calls without text", move |c| {
        let Change::Flow { flow } = c else {
            return false;
        };
        flow.id == id
            && serde_json::to_value(flow).expect("json")["callsWithoutText"]
                .as_u64()
                .is_some_and(|n| n >= 5)
    })
    .await;
    h.fake
        .wait_until("the review session", SHORT, |s| s.sessions.len() == 2)
        .await;
    assert_eq!(
        h.request(Request::CancelFlow(crosscheck_core::requests::CancelFlow {
            flow_id: flow.id.clone()
        }))
        .await
        .expect("cancel"),
        json!(true)
    );
    assert!(
        !h.fake.requests_to("POST /session/:id/abort", &o).is_empty(),
        "the turn is aborted"
    );
    assert!(
        reviews_of(&h, &o).is_empty(),
        "the review session is removed"
    );
    h.stop().await;
}
