//! A person's line comments against the fake OpenCode: kept through a failed send, sent once
//! as one prompt in words, addressed when their lines change, outdated when their lines are gone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, Reply, SHORT};
use crosscheck_core::comments::{CommentStatus, LineComment};
use crosscheck_core::{Change, Request};

const LIB: &str = "pub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}\")\n}\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

async fn add(
    h: &Harness,
    session: &str,
    path: &str,
    lines: (u32, u32),
    quote: &str,
    body: &str,
) -> Vec<LineComment> {
    let value = h
        .request(Request::AddComment(crosscheck_core::requests::AddComment {
            session_id: session.to_owned(),
            path: path.to_owned(),
            start_line: lines.0,
            end_line: lines.1,
            quote: quote.to_owned(),
            body: body.to_owned(),
        }))
        .await
        .expect("comment kept");
    serde_json::from_value(value).expect("comments shape")
}

async fn list(h: &Harness, session: &str) -> Vec<LineComment> {
    let value = h
        .request(Request::ListComments(
            crosscheck_core::requests::ListComments {
                session_id: session.to_owned(),
            },
        ))
        .await
        .expect("comments");
    serde_json::from_value(value).expect("comments shape")
}

async fn send(h: &Harness, session: &str) -> Result<serde_json::Value, crosscheck_core::ApiError> {
    h.request(Request::SendComments(
        crosscheck_core::requests::SendComments {
            session_id: session.to_owned(),
        },
    ))
    .await
}

fn statuses(comments: &[LineComment]) -> Vec<CommentStatus> {
    comments.iter().map(|c| c.status).collect()
}

/// Two comments stay drafts through a send the server refuses; the next send carries both in
/// one prompt, in words (file, lines, the quoted lines, the comment; no ids); the implementer's
/// edit of one's lines addresses it, and removing the other's lines outdates it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_survives_a_failed_send_goes_once_in_words_and_is_tracked() {
    let h = Harness::start().await;
    let project = std::path::PathBuf::from(&h.fake.directory);
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), LIB).unwrap();
    let o = h.fake.seed_session("Add greet", None);
    let mut changes = h.core.subscribe();
    add(
        &h,
        &o,
        "src/lib.rs",
        (2, 2),
        "    format!(\"Hello, {name}\")",
        "An empty name reads badly; greet \"stranger\" then.",
    )
    .await;
    let absolute = project.join("src/lib.rs");
    let both = add(
        &h,
        &o,
        absolute.to_str().unwrap(),
        (5, 7),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}",
        "This can overflow.",
    )
    .await;
    assert_eq!(both.len(), 2);
    assert_eq!(both[1].path, "src/lib.rs", "kept relative to the folder");
    assert_eq!(statuses(&both), vec![CommentStatus::Draft; 2]);
    crate::support::wait_change(
        &mut changes,
        SHORT,
        "a comments change",
        |c| matches!(c, Change::Comments { comments, .. } if comments.len() == 2),
    )
    .await;

    h.fake.fail_next("PROMPT", &o);
    send(&h, &o)
        .await
        .expect_err("the server refused the prompt");
    let kept = list(&h, &o).await;
    assert_eq!(
        statuses(&kept),
        vec![CommentStatus::Draft; 2],
        "nothing is lost"
    );

    h.fake.script(&o, Reply::text("Handled both."));
    send(&h, &o).await.expect("sent");
    let sent = h.fake.prompts_to(&o);
    let text = crate::support::sole_text(sent.last().unwrap());
    assert!(
        text.starts_with("I went through your changes and left comments on some lines below."),
        "{text}"
    );
    assert!(
        text.ends_with("src/lib.rs, line 2:\n>     format!(\"Hello, {name}\")\nAn empty name reads badly; greet \"stranger\" then.\n\nsrc/lib.rs, lines 5-7:\n> pub fn add(a: i32, b: i32) -> i32 {\n>     a + b\n> }\nThis can overflow."),
        "{text}"
    );
    crate::support::assert_leaks_nothing(&text);
    assert!(!text.contains("cmt_"), "{text}");
    let delivered = sent
        .iter()
        .filter(|b| crate::support::sole_text(b).contains("This can overflow."))
        .count();
    assert!(delivered <= 2, "the refused try and the one that went");
    let open = list(&h, &o).await;
    assert_eq!(statuses(&open), vec![CommentStatus::Open; 2]);
    assert!(
        open.iter()
            .all(|c| c.message_id.is_some() && c.sent_at.is_some())
    );
    h.fake.wait_turns(&o, 1, SHORT).await;
    // Nothing is sent twice: the batch is empty now.
    send(&h, &o).await.expect_err("no drafts left");

    // The implementer changes line 2 and removes the add function.
    std::fs::write(
        project.join("src/lib.rs"),
        "pub fn greet(name: &str) -> String {\n    if name.is_empty() { return \"Hello, stranger\".into(); }\n}\n",
    )
    .unwrap();
    let tracked = list(&h, &o).await;
    assert_eq!(
        statuses(&tracked),
        vec![CommentStatus::Addressed, CommentStatus::Outdated]
    );

    // The person closes the addressed one.
    let value = h
        .request(Request::CloseComment(
            crosscheck_core::requests::CloseComment {
                comment_id: tracked[0].id.clone(),
            },
        ))
        .await
        .expect("closed");
    let closed: Vec<LineComment> = serde_json::from_value(value).unwrap();
    assert_eq!(closed[0].status, CommentStatus::Closed);
    h.stop().await;
}

/// A draft on lines that no longer exist is outdated and never sent; a path out of the folder
/// is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_on_lines_that_are_gone_is_outdated_and_not_sent() {
    let h = Harness::start().await;
    let project = std::path::PathBuf::from(&h.fake.directory);
    std::fs::write(project.join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    let o = h.fake.seed_session("Edit a", None);
    add(&h, &o, "a.txt", (3, 4), "three\nfour", "Merge these.").await;
    std::fs::write(project.join("a.txt"), "one\ntwo\n").unwrap();
    assert_eq!(statuses(&list(&h, &o).await), vec![CommentStatus::Outdated]);
    send(&h, &o).await.expect_err("nothing left to send");
    assert!(h.fake.prompts_to(&o).is_empty(), "no prompt went out");

    let refused = h
        .request(Request::AddComment(crosscheck_core::requests::AddComment {
            session_id: o.clone(),
            path: "../outside.txt".into(),
            start_line: 1,
            end_line: 1,
            quote: "x".into(),
            body: "no".into(),
        }))
        .await
        .expect_err("outside the folder");
    assert_eq!(refused.code, crosscheck_core::ErrorCode::InvalidRequest);
    h.stop().await;
}
