//! Going back and branching off against the fake OpenCode: revert and redo (and the session's
//! `revert` reaching the UI), fork, edit-and-resend, files attached to a prompt, the `@` file
//! search, and the faults a user meets first: a busy session, a message that is gone, a server
//! error, a file that is too large.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, Reply, SHORT, wait_change};
use crosscheck_core::attachments::Attachment;
use crosscheck_core::requests::{
    FindFiles, ForkSession, RevertSession, SendPrompt, UnrevertSession,
};
use crosscheck_core::{Change, ErrorCode, Request};
use serde_json::{Value, json};

fn revert(session_id: &str, message_id: &str) -> Request {
    Request::RevertSession(RevertSession {
        session_id: session_id.into(),
        message_id: message_id.into(),
    })
}

fn unrevert(session_id: &str) -> Request {
    Request::UnrevertSession(UnrevertSession {
        session_id: session_id.into(),
    })
}

fn prompt(session_id: &str, text: &str, attachments: Vec<Attachment>) -> SendPrompt {
    SendPrompt {
        session_id: session_id.into(),
        text: text.into(),
        choice: None,
        attachments,
        revert_to: None,
    }
}

/// A session with four finished messages (user, assistant, user, assistant).
fn seeded(h: &Harness) -> (String, Vec<String>) {
    let s = h.fake.seed_session("History", None);
    let ids = h.fake.seed_messages(&s, 4, 8);
    (s, ids)
}

/// Starts a turn that runs until aborted, and waits until the server says it is busy.
async fn busy_turn(h: &Harness, s: &str) {
    h.fake.script(s, Reply::hang("never"));
    h.request(Request::SendPrompt(prompt(s, "run long", vec![])))
        .await
        .expect("prompt");
    let sid = s.to_owned();
    h.fake
        .wait_until("the turn to run", SHORT, move |st| {
            st.statuses.contains_key(&sid)
        })
        .await;
}

fn revert_of(snapshot_session: &Value) -> Option<String> {
    snapshot_session["revert"]["messageID"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revert_marks_the_session_and_redo_clears_it_in_the_store_too() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    let mut changes = h.core.subscribe();
    let answer = h.request(revert(&s, &ids[2])).await.expect("revert");
    assert_eq!(
        revert_of(&answer).as_deref(),
        Some(ids[2].as_str()),
        "{answer}"
    );
    let posted = h.fake.requests_to("POST /session/:id/revert", &s);
    assert_eq!(posted[0].body, json!({"messageID": ids[2]}));
    let sid = s.clone();
    wait_change(&mut changes, SHORT, "the reverted session", move |c| {
        matches!(c, Change::SessionUpserted { session } if session.session.id == sid
            && session.session.revert.is_some())
    })
    .await;
    let snapshot = serde_json::to_value(h.snapshot().await).unwrap();
    let listed = snapshot["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == s.as_str())
        .cloned()
        .unwrap();
    assert_eq!(revert_of(&listed).as_deref(), Some(ids[2].as_str()));

    let answer = h.request(unrevert(&s)).await.expect("redo");
    assert_eq!(revert_of(&answer), None, "{answer}");
    assert!(h.fake.session(&s).unwrap().get("revert").is_none());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revert_and_redo_of_a_busy_session_say_so() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    busy_turn(&h, &s).await;
    let error = h.request(revert(&s, &ids[2])).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::SessionBusy, "{error:?}");
    assert_eq!(error.code.http_status(), 409);
    let error = h.request(unrevert(&s)).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::SessionBusy, "{error:?}");
    assert!(h.fake.session(&s).unwrap().get("revert").is_none());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revert_to_a_message_that_is_gone_is_not_found() {
    let h = Harness::start().await;
    let (s, _) = seeded(&h);
    // The server answers 200 and changes nothing for a message it does not know.
    let error = h
        .request(revert(&s, "msg_0000000000gone"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound, "{error:?}");
    assert!(error.message.contains("msg_0000000000gone"), "{error:?}");
    let error = h.request(revert("ses_nope", "msg_1")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound, "{error:?}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_answers_a_new_session_with_the_earlier_messages() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    let answer = h
        .request(Request::ForkSession(ForkSession {
            session_id: s.clone(),
            message_id: Some(ids[2].clone()),
        }))
        .await
        .expect("fork");
    let forked = answer["id"].as_str().unwrap().to_owned();
    assert_ne!(forked, s);
    assert_eq!(answer["directory"], h.fake.directory.as_str());
    assert_eq!(
        h.fake.messages(&forked).len(),
        2,
        "the two messages before the third"
    );
    assert_eq!(
        h.fake.requests_to("POST /session/:id/fork", &s)[0].body,
        json!({"messageID": ids[2]})
    );
    // Without a message, the whole session.
    let whole = h
        .request(Request::ForkSession(ForkSession {
            session_id: s.clone(),
            message_id: None,
        }))
        .await
        .expect("fork");
    assert_eq!(h.fake.messages(whole["id"].as_str().unwrap()).len(), 4);
    assert_eq!(
        h.fake.requests_to("POST /session/:id/fork", &s)[1].body,
        json!({})
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_from_a_message_that_is_gone_makes_no_session() {
    let h = Harness::start().await;
    let (s, _) = seeded(&h);
    let before = h.fake.with_state(|st| st.sessions.len());
    let error = h
        .request(Request::ForkSession(ForkSession {
            session_id: s.clone(),
            message_id: Some("msg_0000000000gone".into()),
        }))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound, "{error:?}");
    assert_eq!(h.fake.count("POST /session/:id/fork"), 0);
    assert_eq!(h.fake.with_state(|st| st.sessions.len()), before);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_go_out_as_file_parts_after_the_text() {
    let h = Harness::start().await;
    let (s, _) = seeded(&h);
    // A mention is sent only when it is a file of the session's folder on this machine.
    let project = std::path::Path::new(&h.fake.directory);
    std::fs::create_dir_all(project.join("src")).expect("src");
    std::fs::write(project.join("src/main.rs"), "fn main() {}").expect("main.rs");
    std::fs::write(project.join("a.png"), "png").expect("a.png");
    let attachments = vec![
        Attachment::Data {
            filename: "notes.txt".into(),
            mime: "text/plain".into(),
            url: "data:text/plain;base64,aGVsbG8=".into(),
        },
        Attachment::File {
            path: "src/main.rs".into(),
        },
    ];
    h.request(Request::SendPrompt(prompt(&s, "look", attachments)))
        .await
        .expect("sent");
    let body = &h.fake.prompts_to(&s)[0];
    assert_eq!(
        body["parts"],
        json!([
            {"type": "text", "text": "look"},
            {"type": "file", "mime": "text/plain", "filename": "notes.txt", "url": "data:text/plain;base64,aGVsbG8="},
            {"type": "file", "mime": "text/plain", "filename": "src/main.rs",
                "url": format!("file://{}/src/main.rs", h.fake.directory)},
        ])
    );
    // Files alone are a message too.
    let only_file = vec![Attachment::File {
        path: "a.png".into(),
    }];
    h.request(Request::SendPrompt(prompt(&s, " ", only_file)))
        .await
        .expect("sent");
    let body = &h.fake.prompts_to(&s)[1];
    assert_eq!(body["parts"].as_array().unwrap().len(), 1);
    assert_eq!(body["parts"][0]["mime"], "image/png");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_too_large_is_refused_and_nothing_is_sent() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    let big = format!("data:text/plain;base64,{}", "QUJD".repeat(3_700_000));
    let mut req = prompt(
        &s,
        "look",
        vec![Attachment::Data {
            filename: "huge.log".into(),
            mime: "text/plain".into(),
            url: big,
        }],
    );
    req.revert_to = Some(ids[2].clone());
    let error = h.request(Request::SendPrompt(req)).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::FileTooLarge, "{error:?}");
    assert!(
        error.message.contains("huge.log") && error.message.contains("10.0 MB"),
        "{error:?}"
    );
    assert!(h.fake.prompts_to(&s).is_empty());
    assert_eq!(
        h.fake.count("POST /session/:id/revert"),
        0,
        "not reverted either"
    );
    let error = h
        .request(Request::SendPrompt(prompt(
            &s,
            "look",
            vec![Attachment::File {
                path: "../secrets".into(),
            }],
        )))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidRequest, "{error:?}");
    assert!(h.fake.prompts_to(&s).is_empty());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_resend_reverts_then_sends_and_the_server_drops_the_old_messages() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    let mut req = prompt(&s, "edited", vec![]);
    req.revert_to = Some(ids[2].clone());
    h.request(Request::SendPrompt(req)).await.expect("sent");
    let routes: Vec<String> = h
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.session_id.as_deref() == Some(s.as_str()) && r.method == "POST")
        .map(|r| r.route)
        .collect();
    assert_eq!(
        routes,
        ["POST /session/:id/revert", "POST /session/:id/prompt_async"]
    );
    h.fake.wait_turns(&s, 1, SHORT).await;
    let kept: Vec<String> = h
        .fake
        .messages(&s)
        .iter()
        .map(|m| m.info["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(&kept[..2], &ids[..2]);
    assert!(
        !kept.contains(&ids[2]) && !kept.contains(&ids[3]),
        "{kept:?}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_resend_of_a_busy_session_sends_nothing() {
    let h = Harness::start().await;
    let (s, ids) = seeded(&h);
    busy_turn(&h, &s).await;
    let mut req = prompt(&s, "edited", vec![]);
    req.revert_to = Some(ids[2].clone());
    let error = h.request(Request::SendPrompt(req)).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::SessionBusy, "{error:?}");
    assert_eq!(
        h.fake.prompts_to(&s).len(),
        1,
        "only the running turn's prompt"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_files_searches_the_session_folder() {
    let h = Harness::start().await;
    let (s, _) = seeded(&h);
    h.fake
        .set_files(&["src/main.rs", "src/lib.rs", "README.md"]);
    let answer = h
        .request(Request::FindFiles(FindFiles {
            session_id: s.clone(),
            query: " src ".into(),
        }))
        .await
        .expect("found");
    assert_eq!(answer, json!(["src/main.rs", "src/lib.rs"]));
    let asked = &h
        .fake
        .requests()
        .into_iter()
        .rfind(|r| r.route == "GET /find/file")
        .unwrap();
    assert_eq!(asked.query.get("directory"), Some(&h.fake.directory));
    assert_eq!(asked.query.get("query").map(String::as_str), Some("src"));
    assert_eq!(asked.query.get("type").map(String::as_str), Some("file"));
    assert_eq!(asked.query.get("limit").map(String::as_str), Some("50"));

    h.fake.fail_next_find();
    let error = h
        .request(Request::FindFiles(FindFiles {
            session_id: s.clone(),
            query: "x".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::OpencodeStatus, "{error:?}");
    let error = h
        .request(Request::FindFiles(FindFiles {
            session_id: "ses_nope".into(),
            query: "x".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound, "{error:?}");
    h.stop().await;
}
