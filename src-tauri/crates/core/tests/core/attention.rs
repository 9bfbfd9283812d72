//! Attention as a backend fact, against the fake OpenCode server: each session's view carries
//! why it needs the person (a permission, a question, a finished turn), looking at the session
//! settles what seeing settles, a restart does not raise it again, answering an item whose
//! session is gone says so, and with two servers each item is read from and answered on its
//! session's own server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::support::{Harness, Reply, SHORT, add_second_server, session_runs, wait_change};
use crosscheck_core::api_types::PermissionReplyKind;
use crosscheck_core::model::attention::AttentionKind;
use crosscheck_core::requests::{AnswerQuestion, ReplyPermission};
use crosscheck_core::{Change, ErrorCode, Request};

/// The kinds of the session's reasons in the snapshot.
async fn kinds(h: &Harness, session_id: &str) -> Vec<AttentionKind> {
    let snapshot = h.snapshot().await;
    let session = snapshot
        .sessions
        .iter()
        .find(|s| s.session.id == session_id)
        .expect("the session is listed");
    session.attention.iter().map(|r| r.kind).collect()
}

fn carries(kind: AttentionKind, session_id: String) -> impl Fn(&Change) -> bool {
    move |c| {
        matches!(c, Change::SessionUpserted { session }
            if session.session.id == session_id && session.attention.iter().any(|r| r.kind == kind))
    }
}

/// Waits for the session's finished turn and checks it is its only reason.
async fn finished_and_unread(
    h: &Harness,
    changes: &mut tokio::sync::broadcast::Receiver<crosscheck_core::Stamped>,
    session_id: &str,
    what: &str,
) {
    wait_change(
        changes,
        SHORT,
        what,
        carries(AttentionKind::TurnFinished, session_id.to_owned()),
    )
    .await;
    assert_eq!(kinds(h, session_id).await, [AttentionKind::TurnFinished]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_turn_is_unread_until_seen_and_stays_seen_after_a_restart() {
    let mut h = Harness::start().await;
    let s = h.fake.seed_session("Fix the parser", None);
    let mut changes = h.core.subscribe();
    h.fake.script(&s, Reply::text("Fixed."));
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: s.clone(),
        text: "Fix it".into(),
        choice: None,
        attachments: Vec::new(),
        revert_to: None,
    }))
    .await
    .expect("sent");
    finished_and_unread(&h, &mut changes, &s, "the finished turn").await;

    // Kept across a restart while not seen.
    h.restart_core().await;
    assert_eq!(kinds(&h, &s).await, [AttentionKind::TurnFinished]);

    // Looking at it settles it, and a restart does not raise it again.
    h.request(Request::SeeSessions(
        crosscheck_core::requests::SeeSessions {
            session_ids: vec![s.clone()],
        },
    ))
    .await
    .expect("seen");
    assert!(kinds(&h, &s).await.is_empty(), "seen: nothing left");
    h.restart_core().await;
    assert!(
        kinds(&h, &s).await.is_empty(),
        "not raised again after a restart"
    );
    h.stop().await;
}

/// A turn that ends while the event stream is away (its idle event never arrives) is still a
/// finished turn: the listing after the reconnect shows it idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_finished_while_the_stream_was_away_is_unread() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Runs while away", None);
    let mut changes = h.core.subscribe();
    let stream = h.fake.begin_stream(&s);
    wait_change(&mut changes, SHORT, "the session runs", session_runs(&s)).await;
    h.fake.block_event_streams(true);
    h.fake.drop_event_streams();
    h.fake.stream_delta(&stream, "done while away");
    h.fake.end_stream(&stream);
    h.fake.block_event_streams(false);
    finished_and_unread(
        &h,
        &mut changes,
        &s,
        "the finished turn after the reconnect",
    )
    .await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_and_questions_are_reasons_and_a_gone_session_says_so() {
    let h = Harness::start().await;
    let a = h.fake.seed_session("Needs a push", None);
    let b = h.fake.seed_session("Asks which", None);
    let mut changes = h.core.subscribe();
    let per = h.fake.ask_permission(&a, "bash", &["git push origin main"]);
    wait_change(
        &mut changes,
        SHORT,
        "the permission reason",
        carries(AttentionKind::Permission, a.clone()),
    )
    .await;
    let snapshot = h.snapshot().await;
    let view = snapshot
        .sessions
        .iter()
        .find(|v| v.session.id == a)
        .unwrap();
    assert_eq!(view.attention[0].words, "bash git push origin main");
    assert_eq!(view.attention[0].request_id.as_deref(), Some(per.as_str()));

    h.fake.seed_messages(&b, 2, 10);
    h.fake.ask_question(&b, "Which branch?").expect("asked");
    wait_change(
        &mut changes,
        SHORT,
        "the question reason",
        carries(AttentionKind::Question, b.clone()),
    )
    .await;
    let snapshot = h.snapshot().await;
    let view = snapshot
        .sessions
        .iter()
        .find(|v| v.session.id == b)
        .unwrap();
    assert_eq!(view.attention[0].words, "Which branch?");
    assert_eq!(view.attention[0].questions[0].question, "Which branch?");

    // The session goes while its request is listed: answering says the session is gone.
    h.fake.remove_session_silently(&a);
    let mut h = h;
    h.restart_core().await;
    let err = h
        .request(Request::ReplyPermission(
            crosscheck_core::requests::ReplyPermission {
                session_id: a.clone(),
                request_id: per,
                reply: PermissionReplyKind::Once,
            },
        ))
        .await
        .expect_err("the session is gone");
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(
        err.message.contains(&a),
        "it names the session: {}",
        err.message
    );
    h.stop().await;
}

/// Waits until the session is listed with a reason of `kind`.
async fn wait_kind(h: &Harness, session_id: &str, kind: AttentionKind) {
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        let snapshot = h.snapshot().await;
        let found = snapshot
            .sessions
            .iter()
            .find(|s| s.session.id == session_id)
            .is_some_and(|s| s.attention.iter().any(|r| r.kind == kind));
        if found {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{session_id} never carried {kind:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_and_a_question_on_the_second_server_are_answered_there() {
    let h = Harness::start().await;
    let (second, _) = add_second_server(&h, None, "Second").await;
    let asking = second.seed_session("Asks on the second server", None);
    second.seed_messages(&asking, 2, 10);

    let per = second.ask_permission(&asking, "bash", &["git push origin main"]);
    wait_kind(&h, &asking, AttentionKind::Permission).await;
    h.request(Request::ReplyPermission(ReplyPermission {
        session_id: asking.clone(),
        request_id: per,
        reply: PermissionReplyKind::Once,
    }))
    .await
    .expect("the permission is answered");
    assert_eq!(second.count("POST /permission/:id/reply"), 1);
    assert_eq!(h.fake.count("POST /permission/:id/reply"), 0);

    let que = second
        .ask_question(&asking, "Which branch?")
        .expect("asked");
    wait_kind(&h, &asking, AttentionKind::Question).await;
    h.request(Request::AnswerQuestion(AnswerQuestion {
        session_id: asking.clone(),
        request_id: que.clone(),
        answers: Some(vec![vec!["Yes".into()]]),
    }))
    .await
    .expect("the question is answered on its own server");
    assert_eq!(second.count("POST /question/:id/reply"), 1);
    assert_eq!(h.fake.count("POST /question/:id/reply"), 0);
    assert!(
        !kinds(&h, &asking).await.contains(&AttentionKind::Question),
        "the answered question is no longer listed"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_pending_on_the_second_server_shows_after_a_restart() {
    let mut h = Harness::start().await;
    let (second, _) = add_second_server(&h, None, "Second").await;
    let asking = second.seed_session("Asked while away", None);
    second.seed_messages(&asking, 2, 10);
    h.core.shutdown().await;
    // Asked while Crosscheck was not running: only reading the pending questions finds it.
    second
        .ask_question(&asking, "Which branch?")
        .expect("asked");
    h.restart_core().await;
    wait_kind(&h, &asking, AttentionKind::Question).await;
    assert!(
        second.count("GET /question") > 0,
        "the second server was asked for its questions"
    );
    h.stop().await;
}
