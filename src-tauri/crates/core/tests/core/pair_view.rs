//! The pair view through the Api: selecting a session shows its partner in the panel's follow
//! tab, and moving between sessions keeps one follow tab, never piling them up.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::Harness;
use crosscheck_core::Request;
use crosscheck_core::requests::{OpenTab, ShowPair};
use crosscheck_core::settings::Tab;
use serde_json::json;

async fn select(h: &Harness, id: &str) {
    h.request(Request::ShowPair(ShowPair {
        session_id: id.to_owned(),
    }))
    .await
    .expect("show pair");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_follows_the_selected_pair_without_piling_up_tabs() {
    let h = Harness::start().await;
    let mut pairs = Vec::new();
    for i in 0..3 {
        let original = h.fake.seed_session(&format!("Impl {i}"), None);
        let review = h.fake.seed_session(
            &format!("Review {i}"),
            Some(json!({"openchamber": {"kind": "review", "originalSessionID": original}})),
        );
        h.fake.set_metadata(
            &original,
            json!({"openchamber": {"reviewSessionID": review}}),
        );
        pairs.push((original, review));
    }
    let solo = h.fake.seed_session("Solo", None);
    for _ in 0..200 {
        let s = h.snapshot().await;
        if s.sessions.len() >= 7 && s.sessions.iter().filter(|v| v.link.is_some()).count() == 6 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The person pinned one tab.
    h.request(Request::OpenTab(OpenTab {
        tab: Tab::reviews(),
    }))
    .await
    .expect("pin");

    let (a, ra) = &pairs[0];
    select(&h, a).await;
    let s = h.snapshot().await;
    assert_eq!(s.follow_tab, Some(format!("session:{ra}")));
    assert_eq!(s.active_tab, s.follow_tab);

    // From the reviewer's side the panel shows the implementer.
    select(&h, ra).await;
    assert_eq!(h.snapshot().await.active_tab, Some(format!("session:{a}")));

    for id in [&pairs[1].0, &pairs[2].1, &solo, &pairs[0].0, &pairs[2].0] {
        select(&h, id).await;
    }
    let s = h.snapshot().await;
    let keys: Vec<&str> = s.tabs.iter().map(|t| t.dedupe_key.as_str()).collect();
    assert_eq!(
        keys,
        vec!["reviews".to_owned(), format!("session:{}", pairs[2].1)]
    );

    // A session without a partner: the follow tab goes, the pinned tab shows.
    select(&h, &solo).await;
    let s = h.snapshot().await;
    assert_eq!(s.follow_tab, None);
    assert_eq!(s.active_tab.as_deref(), Some("reviews"));
    h.stop().await;
}
