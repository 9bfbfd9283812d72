//! Transcript followers against the fake OpenCode server: counted once per client connection
//! however often a view re-opens (a UI resync), released when the connection goes, and a
//! transcript nobody shows is not kept.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::support::{Harness, SHORT};
use crosscheck_core::{Change, Request};

/// Streams one delta into `session_id` and says whether the core pushed it (it only does for
/// a transcript it keeps).
async fn delta_is_pushed(h: &Harness, session_id: &str) -> bool {
    let mut changes = h.core.subscribe();
    let stream = h.fake.begin_stream(session_id);
    h.fake.stream_delta(&stream, "tick");
    h.fake.end_stream(&stream);
    let id = session_id.to_owned();
    let mut pushed = false;
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        let stamped = crate::support::next_change(&mut changes, deadline, "the turn to end").await;
        match stamped.change {
            Change::PartDelta { session_id, .. } if session_id == id => pushed = true,
            Change::Status { session_id, status } if session_id == id && status.is_idle() => {
                return pushed;
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_after_a_ui_resync_does_not_add_a_follower() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Shown", None);
    // The view opens it; a UI resync (stream lost and back) opens it again.
    for _ in 0..3 {
        h.request(Request::OpenSession(
            crosscheck_core::requests::OpenSession {
                session_id: s.clone(),
            },
        ))
        .await
        .expect("open");
    }
    assert!(delta_is_pushed(&h, &s).await, "followed while shown");
    h.request(Request::CloseSession(
        crosscheck_core::requests::CloseSession {
            session_id: s.clone(),
        },
    ))
    .await
    .expect("close");
    assert!(
        !delta_is_pushed(&h, &s).await,
        "one close releases what one view opened, however often it re-opened"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_releases_its_transcripts_and_others_keep_theirs() {
    let h = Harness::start().await;
    let a = h.fake.seed_session("Tab A", None);
    let b = h.fake.seed_session("Tab B", None);
    let tab_a = h.api.connect("tab-a");
    let tab_b = h.api.connect("tab-b");
    for (client, id) in [("tab-a", &a), ("tab-a", &b), ("tab-b", &b)] {
        h.api
            .handle_as(
                client,
                Request::OpenSession(crosscheck_core::requests::OpenSession {
                    session_id: id.clone(),
                }),
            )
            .await
            .expect("open");
    }
    let stats = h.api.stats();
    assert_eq!(
        (stats.transcripts, stats.followers, stats.connections),
        (2, 3, 2)
    );
    // Tab A's page reloads: its stream goes, a new one comes.
    drop(tab_a);
    assert_eq!(h.api.stats().transcripts, 1, "only tab B's is kept");
    assert!(!delta_is_pushed(&h, &a).await);
    assert!(delta_is_pushed(&h, &b).await);
    // Two streams of one client (a reconnect racing the old one's end) count as one client.
    let again = h.api.connect("tab-b");
    drop(tab_b);
    assert_eq!(h.api.stats().transcripts, 1, "tab B still has a stream");
    drop(again);
    let stats = h.api.stats();
    assert_eq!(
        (stats.transcripts, stats.followers, stats.connections),
        (0, 0, 0)
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!delta_is_pushed(&h, &b).await);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_open_keeps_nothing() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Unreadable", None);
    h.fake.fail_messages(&s, 1);
    h.request(Request::OpenSession(
        crosscheck_core::requests::OpenSession {
            session_id: s.clone(),
        },
    ))
    .await
    .expect_err("the page cannot be read");
    assert_eq!(h.api.stats().transcripts, 0);
    assert!(!delta_is_pushed(&h, &s).await);
    h.request(Request::OpenSession(
        crosscheck_core::requests::OpenSession {
            session_id: s.clone(),
        },
    ))
    .await
    .expect("opens when the server answers");
    assert!(delta_is_pushed(&h, &s).await);
    h.stop().await;
}
