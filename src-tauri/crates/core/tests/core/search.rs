//! Searching inside transcripts against the fake OpenCode: the held transcripts answer at once,
//! the others are read in the background with progress, and a session whose transcript the
//! server fails to send is named, not silently left out.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, SHORT, wait_change};
use crosscheck_core::requests::OpenSession;
use crosscheck_core::requests::search::SearchTranscripts;
use crosscheck_core::search::SearchProgress;
use crosscheck_core::{Change, Request};

async fn search(h: &Harness, query: &str) -> SearchProgress {
    let answer = h
        .request(Request::SearchTranscripts(SearchTranscripts {
            query: query.to_owned(),
        }))
        .await
        .expect("search");
    serde_json::from_value(answer).expect("progress")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_reads_the_sessions_not_held_and_names_the_one_it_could_not_read() {
    let h = Harness::start().await;
    let held = h.fake.seed_session("Held", None);
    h.fake
        .seed_text(&held, "assistant", "intro\nthe parser drops CRLF here");
    let cold = h.fake.seed_session("Cold", None);
    h.fake
        .seed_text(&cold, "user", "why does the Parser hang?\nsecond line");
    let broken = h.fake.seed_session("Broken", None);
    h.fake.seed_text(&broken, "user", "parser too");
    let quiet = h.fake.seed_session("Quiet", None);
    h.fake.seed_text(&quiet, "user", "nothing to see");
    for _ in 0..200 {
        if h.snapshot().await.sessions.len() >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    h.request(Request::OpenSession(OpenSession {
        session_id: held.clone(),
    }))
    .await
    .expect("open");
    h.fake.fail_messages(&broken, 5);

    let mut changes = h.core.subscribe();
    let first = search(&h, "parser").await;
    assert_eq!(first.read, 1, "the held transcript is searched at once");
    assert_eq!(first.total, 4);
    assert!(!first.done);
    let lines: Vec<&str> = first.hits.iter().map(|x| x.line.as_str()).collect();
    assert_eq!(lines, vec!["the parser drops CRLF here"]);

    let last = wait_change(&mut changes, SHORT, "the search to finish", |c| {
        matches!(c, Change::Search { progress } if progress.done && progress.search_id == first.search_id)
    })
    .await;
    let Change::Search { progress } = last else {
        unreachable!()
    };
    assert_eq!(progress.read, 4);
    let found: Vec<(&str, &str)> = progress
        .hits
        .iter()
        .map(|x| (x.session_id.as_str(), x.line.as_str()))
        .collect();
    assert!(
        found.contains(&(cold.as_str(), "why does the Parser hang?")),
        "{found:?}"
    );
    assert!(!found.iter().any(|(s, _)| *s == quiet));
    assert_eq!(progress.unread.len(), 1, "{:?}", progress.unread);
    assert_eq!(progress.unread[0].session_id, broken);
    assert!(!progress.unread[0].reason.is_empty());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_search_replaces_the_older_and_a_short_query_reads_nothing() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("One", None);
    h.fake.seed_text(&s, "user", "alpha beta");
    let before = h.fake.count("GET /session/:id/message");
    let short = search(&h, "a").await;
    assert!(short.done && short.hits.is_empty() && short.total == 0);
    assert_eq!(
        h.fake.count("GET /session/:id/message"),
        before,
        "nothing read"
    );
    let a = search(&h, "alpha").await;
    let b = search(&h, "beta").await;
    assert!(b.search_id > a.search_id);
    h.stop().await;
}
