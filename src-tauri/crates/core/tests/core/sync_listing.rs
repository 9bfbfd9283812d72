//! The session list after a (re)connect against the fake OpenCode server: every session the
//! server has, past its page of 100 and in folders outside git, once each; and a listing or a
//! transcript reload that fails is retried while the stream stays open, without failing the rest.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::{Harness, SHORT, wait_change};
use crosscheck_core::api_types::{Connection, TranscriptPage};
use crosscheck_core::{Change, Request};

fn listed(snapshot: &crosscheck_core::api_types::Snapshot) -> Vec<String> {
    snapshot
        .sessions
        .iter()
        .map(|s| s.session.id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_survives_a_reconnect_past_the_servers_page() {
    let h = Harness::start().await;
    let plain_dir = h.dir.path().join("notes outside git");
    let plain_dir = plain_dir.to_str().expect("utf-8").to_owned();
    let mut wanted: BTreeSet<String> = h
        .fake
        .seed_sessions_in(&h.fake.directory, 298)
        .into_iter()
        .collect();
    wanted.extend(h.fake.seed_sessions_in(&plain_dir, 3));
    h.reconnect().await;
    let ids = listed(&h.snapshot().await);
    let unique: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(ids.len(), unique.len(), "each session once");
    assert_eq!(
        unique.len(),
        301,
        "all 298 of the project and 3 outside git"
    );
    assert_eq!(unique, wanted);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_in_folders_outside_git_are_listed() {
    let h = Harness::start().await;
    let plain = h.dir.path().join("plain");
    let plain = plain.to_str().expect("utf-8").to_owned();
    let kept = h.fake.seed_sessions_in(&plain, 2);
    let own = h.fake.seed_sessions_in(&h.fake.directory, 1);
    h.reconnect().await;
    let snapshot = h.snapshot().await;
    for id in kept.iter().chain(&own) {
        assert!(
            snapshot.sessions.iter().any(|s| &s.session.id == id),
            "{id} is listed"
        );
    }
    assert!(
        snapshot
            .sessions
            .iter()
            .filter(|s| kept.contains(&s.session.id))
            .all(|s| s.session.project_id == "global")
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_project_listing_is_retried_and_does_not_fail_the_rest() {
    let h = Harness::start().await;
    let other = h.dir.path().join("other repo");
    let other = other.to_str().expect("utf-8").to_owned();
    h.fake.add_project("prj_other", &other);
    let theirs = h.fake.seed_sessions_in(&other, 2);
    let ours = h.fake.seed_sessions_in(&h.fake.directory, 2);
    // The other project's listing fails twice, then answers.
    h.fake.fail_listings(Some(&other), 2);
    let mut changes = h.core.subscribe();
    h.reconnect().await;
    let snapshot = h.snapshot().await;
    for id in &ours {
        assert!(
            snapshot.sessions.iter().any(|s| &s.session.id == id),
            "the answering project's {id} is listed at once"
        );
    }
    assert!(matches!(snapshot.connection, Connection::Ready { .. }));
    // The failure is shown...
    wait_change(
        &mut changes,
        SHORT,
        "a notice naming the failed listing",
        |c| matches!(c, Change::Notice { notice } if notice.message.contains("other repo")),
    )
    .await;
    // ...and retried while the stream stays open, until it answers.
    let route = |r: &crosscheck_testkit::fake_opencode::Recorded| {
        r.route == "GET /session" && r.query.get("directory") == Some(&other)
    };
    let streams = h.fake.with_state(|st| st.streams_opened);
    h.fake
        .wait_until("the failed listing retried until it answers", SHORT, |st| {
            st.requests
                .iter()
                .filter(|r| route(r) && r.status == 200)
                .count()
                >= 1
        })
        .await;
    assert_eq!(
        h.fake.with_state(|st| st.streams_opened),
        streams,
        "retried without a new stream"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let snapshot = h.snapshot().await;
    for id in theirs.iter().chain(&ours) {
        assert!(
            snapshot.sessions.iter().any(|s| &s.session.id == id),
            "{id} listed"
        );
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_transcript_reload_is_retried_and_the_others_reload() {
    let h = Harness::start().await;
    let bad = h.fake.seed_session("Bad reload", None);
    let good = h.fake.seed_session("Good reload", None);
    for id in [&bad, &good] {
        h.request(Request::OpenSession(
            crosscheck_core::requests::OpenSession {
                session_id: id.clone(),
            },
        ))
        .await
        .expect("open");
    }
    // While away, both sessions get a reply nobody hears.
    h.fake.block_event_streams(true);
    h.fake.drop_event_streams();
    for id in [&bad, &good] {
        let stream = h.fake.begin_stream(id);
        h.fake.stream_delta(&stream, "said while away");
        h.fake.end_stream(&stream);
    }
    h.fake.fail_messages(&bad, 2);
    // Reloads that answered before the reconnect (a startup resync may reload it too) do not
    // count: only one after the failures shows the retry.
    let answered = |st: &crosscheck_testkit::fake_opencode::FakeState| {
        st.requests
            .iter()
            .filter(|r| {
                r.route == "GET /session/:id/message"
                    && r.session_id.as_deref() == Some(bad.as_str())
                    && r.status == 200
            })
            .count()
    };
    let answered_before = h.fake.with_state(answered);
    let mut changes = h.core.subscribe();
    // The notice may come before or after Ready: it is looked for from here.
    let mut notices = h.core.subscribe();
    h.fake.block_event_streams(false);
    wait_change(&mut changes, SHORT, "Connection::Ready", |c| {
        matches!(
            c,
            Change::Connection {
                connection: Connection::Ready { .. }
            }
        )
    })
    .await;
    let text_of = |page: &TranscriptPage| {
        page.messages
            .iter()
            .filter(|m| m.info.role == "assistant")
            .map(crosscheck_core::store::assistant_text)
            .collect::<Vec<_>>()
    };
    let page = |id: String| async {
        let v = h
            .request(Request::OpenSession(
                crosscheck_core::requests::OpenSession { session_id: id },
            ))
            .await
            .expect("page");
        serde_json::from_value::<TranscriptPage>(v).expect("page")
    };
    assert_eq!(text_of(&page(good.clone()).await), ["said while away"]);
    let bad_id = bad.clone();
    wait_change(
        &mut notices,
        SHORT,
        "a notice for the failed reload",
        move |c| matches!(c, Change::Notice { notice } if notice.message.contains(&bad_id)),
    )
    .await;
    h.fake
        .wait_until("the failed reload retried until it answers", SHORT, |st| {
            answered(st) > answered_before
        })
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(text_of(&page(bad.clone()).await), ["said while away"]);
    h.stop().await;
}
