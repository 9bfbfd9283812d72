//! Older pages of a long transcript against the fake OpenCode server: each `LoadOlder` answers
//! the page it fetched, so the hundredth page costs what the first does, and together the pages
//! rebuild the whole transcript in order.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::Harness;
use crosscheck_core::Request;
use crosscheck_core::requests::{LoadOlder, OpenSession};
use serde_json::Value;

/// Message ids of a response's `messages`, oldest first.
fn ids_of(page: &Value) -> Vec<String> {
    page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["info"]["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_older_page_costs_what_the_first_does() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Long", None);
    let seeded = h.fake.seed_messages(&s, 1_000, 600);
    let opened = h
        .request(Request::OpenSession(OpenSession {
            session_id: s.clone(),
        }))
        .await
        .expect("open");
    assert_eq!(ids_of(&opened).len(), 50, "the newest page");
    assert_eq!(opened["hasOlder"], true);

    let mut sizes = Vec::new();
    let mut pages: Vec<Vec<String>> = vec![ids_of(&opened)];
    loop {
        let page = h
            .request(Request::LoadOlder(LoadOlder {
                session_id: s.clone(),
            }))
            .await
            .expect("load older");
        sizes.push(serde_json::to_vec(&page).expect("serializes").len());
        pages.push(ids_of(&page));
        if page["hasOlder"] == false {
            break;
        }
        assert!(sizes.len() < 100, "the pages end");
    }
    assert_eq!(sizes.len(), 19, "1,000 messages are 20 pages of 50");
    let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
    assert!(
        last as f64 <= first as f64 * 1.2,
        "page {} is {last} bytes, page 1 {first} bytes",
        sizes.len()
    );
    // Prepending the pages in the order they came gives the whole transcript, each message once.
    let rebuilt: Vec<String> = pages.into_iter().rev().flatten().collect();
    assert_eq!(rebuilt, seeded);
    // The backend's window holds them all too: a reopened view gets the whole window.
    let reopened = h
        .request(Request::OpenSession(OpenSession { session_id: s }))
        .await
        .expect("reopen");
    assert_eq!(ids_of(&reopened), seeded);
    assert_eq!(reopened["hasOlder"], false);
    h.stop().await;
}
