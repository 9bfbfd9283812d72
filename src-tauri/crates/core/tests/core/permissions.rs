//! Permission requests against the fake OpenCode server: a request asked on the event stream
//! shows up in changes and the snapshot, replying posts the answer and clears it, and a resync
//! drops requests that were answered while the client was away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::support::{Harness, SHORT, wait_change};
use crosscheck_core::api_types::{Connection, PermissionReplyKind};
use crosscheck_core::{Change, Request};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_permission_is_pending_until_replied() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Needs a push", None);
    let mut changes = h.core.subscribe();
    let per = h.fake.ask_permission(&s, "bash", &["git push origin main"]);
    let asked_id = per.clone();
    let change = wait_change(
        &mut changes,
        SHORT,
        "PermissionAsked",
        move |c| matches!(c, Change::PermissionAsked { request } if request.id == asked_id),
    )
    .await;
    let Change::PermissionAsked { request } = change else {
        unreachable!()
    };
    assert_eq!(request.session_id, s);
    assert_eq!(request.permission, "bash");
    assert_eq!(request.patterns, ["git push origin main"]);
    let snapshot = h.snapshot().await;
    assert_eq!(snapshot.permissions.len(), 1);
    assert_eq!(snapshot.permissions[0].id, per);

    h.request(Request::ReplyPermission(
        crosscheck_core::requests::ReplyPermission {
            session_id: s.clone(),
            request_id: per.clone(),
            reply: PermissionReplyKind::Always,
        },
    ))
    .await
    .expect("reply");
    let posted = h.fake.requests_to("POST /permission/:id/reply", &per);
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].body, json!({"reply": "always"}));
    assert_eq!(
        posted[0].query.get("directory"),
        Some(&h.fake.directory),
        "answered in the session's directory"
    );
    let resolved_id = per.clone();
    wait_change(&mut changes, SHORT, "PermissionResolved", move |c| {
        matches!(c, Change::PermissionResolved { request_id, .. } if *request_id == resolved_id)
    })
    .await;
    assert!(h.snapshot().await.permissions.is_empty());

    // Answering it again: the server no longer knows it; an error, and still nothing pending.
    let err = h
        .request(Request::ReplyPermission(
            crosscheck_core::requests::ReplyPermission {
                session_id: s.clone(),
                request_id: per.clone(),
                reply: PermissionReplyKind::Reject,
            },
        ))
        .await
        .expect_err("already answered");
    assert_eq!(err.code, crosscheck_core::ErrorCode::NotFound);
    assert!(h.snapshot().await.permissions.is_empty());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_must_be_once_always_or_reject() {
    let h = Harness::start().await;
    let err = h
        .api
        .handle_json(json!({"cmd": "replyPermission", "sessionId": "ses_1", "requestId": "per_1", "reply": "maybe"}))
        .await
        .expect_err("invalid");
    assert_eq!(err.code, crosscheck_core::ErrorCode::InvalidRequest);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_drops_permissions_answered_while_away_and_keeps_the_rest() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Two questions", None);
    let mut changes = h.core.subscribe();
    let answered = h.fake.ask_permission(&s, "edit", &["src/a.rs"]);
    let still = h
        .fake
        .ask_permission(&s, "webfetch", &["https://example.com"]);
    let still_id = still.clone();
    wait_change(
        &mut changes,
        SHORT,
        "both PermissionAsked",
        move |c| matches!(c, Change::PermissionAsked { request } if request.id == still_id),
    )
    .await;
    assert_eq!(h.snapshot().await.permissions.len(), 2);

    h.fake.block_event_streams(true);
    h.fake.drop_event_streams();
    wait_change(&mut changes, SHORT, "Connection::Reconnecting", |c| {
        matches!(
            c,
            Change::Connection {
                connection: Connection::Reconnecting { .. }
            }
        )
    })
    .await;
    assert!(h.fake.answer_permission_silently(&answered));
    h.fake.block_event_streams(false);
    let reset = wait_change(
        &mut changes,
        Duration::from_secs(20),
        "SessionsReset after the reconnect",
        |c| matches!(c, Change::SessionsReset { .. }),
    )
    .await;
    let Change::SessionsReset { permissions, .. } = reset else {
        unreachable!()
    };
    let ids: Vec<_> = permissions.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, [still.as_str()]);
    wait_change(
        &mut changes,
        Duration::from_secs(20),
        "Connection::Ready",
        |c| {
            matches!(
                c,
                Change::Connection {
                    connection: Connection::Ready { .. }
                }
            )
        },
    )
    .await;
    let snapshot = h.snapshot().await;
    let ids: Vec<_> = snapshot.permissions.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, [still.as_str()]);
    assert!(
        h.fake.count("GET /permission") >= 2,
        "listed with and without a directory"
    );
    h.stop().await;
}
