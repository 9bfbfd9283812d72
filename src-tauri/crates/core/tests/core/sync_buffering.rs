//! Events that arrive while a transcript page loads, against the fake OpenCode server: they are
//! recorded and merged onto the page, so opening a busy session misses nothing and a resync
//! never doubles streamed text. The final text is always the server's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, SHORT, wait_change};
use crosscheck_core::api_types::{Connection, TranscriptPage};
use crosscheck_core::{Change, Request};
use crosscheck_testkit::fake_opencode::Streaming;

async fn page(h: &Harness, session_id: &str) -> TranscriptPage {
    let v = h
        .request(Request::OpenSession(
            crosscheck_core::requests::OpenSession {
                session_id: session_id.to_owned(),
            },
        ))
        .await
        .expect("open");
    serde_json::from_value(v).expect("page")
}

/// The text of the streamed part in a page, and whether its message completed.
fn streamed(page: &TranscriptPage, stream: &Streaming) -> (String, bool) {
    let message = page
        .messages
        .iter()
        .find(|m| m.info.id == stream.message_id)
        .expect("the streamed message is in the page");
    let text = message
        .parts
        .iter()
        .find(|p| p.id == stream.part_id)
        .and_then(|p| p.text.clone())
        .unwrap_or_default();
    (text, message.info.is_completed_assistant())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_busy_session_keeps_the_events_of_its_first_page_load() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Busy", None);
    let stream = h.fake.begin_stream(&s);
    h.fake.stream_delta(&stream, "Hello ");
    // The page is read when the request arrives; the rest of the reply streams meanwhile.
    let release = h.fake.hold_messages(&s, false);
    let api = h.api.clone();
    let id = s.clone();
    let opening = tokio::spawn(async move {
        api.handle(Request::OpenSession(
            crosscheck_core::requests::OpenSession { session_id: id },
        ))
        .await
        .expect("open")
    });
    h.fake.wait_held(&s, SHORT).await;
    h.fake.stream_delta(&stream, "world, ");
    h.fake.stream_delta(&stream, "all of it.");
    h.fake.end_stream(&stream);
    // Let the events reach the core before the page does.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _ = release.send(());
    opening.await.expect("open task");
    let server = h.fake.streamed_text(&stream);
    assert_eq!(server, "Hello world, all of it.");
    let (text, completed) = streamed(&page(&h, &s).await, &stream);
    assert_eq!(text, server, "the text is the server's");
    assert!(completed, "the reply is complete, not an empty one");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_while_a_reply_streams_neither_doubles_nor_drops_text() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Streaming", None);
    page(&h, &s).await;
    let stream = h.fake.begin_stream(&s);
    h.fake.stream_delta(&stream, "one ");
    h.fake.stream_delta(&stream, "two ");
    // The reconnect's reload of this transcript is held; its page is read when released,
    // so it holds the delta that streams meanwhile too.
    let release = h.fake.hold_messages(&s, true);
    let mut changes = h.core.subscribe();
    h.fake.drop_event_streams();
    h.fake.wait_held(&s, SHORT).await;
    h.fake.stream_delta(&stream, "three ");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _ = release.send(());
    wait_change(&mut changes, SHORT, "Connection::Ready", |c| {
        matches!(
            c,
            Change::Connection {
                connection: Connection::Ready { .. }
            }
        )
    })
    .await;
    // Whatever the core still had queued is applied by now.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (text, completed) = streamed(&page(&h, &s).await, &stream);
    assert_eq!(text, "one two three ", "mid-stream, exactly the server's");
    assert!(!completed);
    h.fake.stream_delta(&stream, "four.");
    h.fake.end_stream(&stream);
    let id = s.clone();
    wait_change(&mut changes, SHORT, "the turn to end", move |c| {
        matches!(c, Change::Status { session_id, status } if *session_id == id && status.is_idle())
    })
    .await;
    let (text, completed) = streamed(&page(&h, &s).await, &stream);
    assert_eq!(text, h.fake.streamed_text(&stream));
    assert_eq!(text, "one two three four.");
    assert!(completed);
    h.stop().await;
}
