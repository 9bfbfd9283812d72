//! The Changes tab's and the todo dock's requests against the fake OpenCode: the three scopes,
//! a review session showing its original's changes, what is said when there is nothing to
//! compare (no git, no snapshots, no turn), the faults a user meets (a server error, a reply
//! that is not a diff, a huge diff, a session that is gone), and the changes pushed when the
//! server's file, diff and todo events arrive.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::support::{Harness, SHORT, wait_change};
use crosscheck_core::requests::changes::{ChangeScope, ChangeSet, Changes, Todos};
use crosscheck_core::{Change, ErrorCode, Request};
use serde_json::{Value, json};

fn changes(session_id: &str, scope: ChangeScope) -> Request {
    Request::Changes(Changes {
        session_id: session_id.to_owned(),
        scope,
    })
}

async fn change_set(h: &Harness, session_id: &str, scope: ChangeScope) -> ChangeSet {
    let value = h
        .request(changes(session_id, scope))
        .await
        .expect("changes");
    serde_json::from_value(value).expect("a change set")
}

async fn error_code(h: &Harness, request: Request) -> ErrorCode {
    h.request(request).await.expect_err("an error").code
}

fn one_file(file: &str, line: &str) -> Value {
    json!([{"file": file, "patch": format!("@@ -0,0 +1 @@\n+{line}\n"),
            "additions": 1, "deletions": 0, "status": "added"}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_working_tree_is_read_from_the_sessions_folder() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Edits", None);
    h.fake
        .set_vcs_diff(&h.fake.directory, one_file("src/new.rs", "fn main() {}"));
    let set = change_set(&h, &s, ChangeScope::WorkingTree).await;
    assert_eq!(set.session_id, s);
    assert!(!set.from_original);
    assert_eq!(set.unavailable, None);
    assert_eq!(set.files.len(), 1);
    let file = &set.files[0];
    assert_eq!((file.path.as_str(), file.additions), ("src/new.rs", 1));
    assert!(
        file.patch
            .as_deref()
            .is_some_and(|p| p.contains("+fn main() {}"))
    );
    let asked = h.fake.requests_to("GET /vcs/diff", &s);
    assert!(asked.is_empty(), "the vcs route names no session");
    let asked: Vec<_> = h
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.route == "GET /vcs/diff")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].query.get("mode").map(String::as_str), Some("git"));
    assert_eq!(asked[0].query.get("directory"), Some(&h.fake.directory));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_outside_git_says_so() {
    let h = Harness::start().await;
    let plain = h.dir.path().join("notes");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let created = h
        .request(Request::CreateSession(
            crosscheck_core::requests::CreateSession {
                directory: plain.display().to_string(),
                title: Some("Notes".into()),
                server_id: None,
            },
        ))
        .await
        .expect("created");
    let id = created["id"].as_str().expect("id").to_owned();
    assert_eq!(created["projectID"], "global");
    let set = change_set(&h, &id, ChangeScope::WorkingTree).await;
    assert_eq!(
        set.unavailable,
        Some(crosscheck_core::requests::changes::ChangesUnavailable::NotGit)
    );
    assert!(set.files.is_empty());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_that_became_a_repository_after_the_server_saw_it_is_not_called_outside_git() {
    let h = Harness::start().await;
    let plain = h.dir.path().join("later-git");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let created = h
        .request(Request::CreateSession(
            crosscheck_core::requests::CreateSession {
                directory: plain.display().to_string(),
                title: Some("Later".into()),
                server_id: None,
            },
        ))
        .await
        .expect("created");
    let id = created["id"].as_str().expect("id").to_owned();
    assert_eq!(created["projectID"], "global");
    // The folder becomes a repository after OpenCode filed it under its global project.
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&plain)
        .status()
        .expect("git init");
    assert!(init.success());
    let set = change_set(&h, &id, ChangeScope::WorkingTree).await;
    assert_eq!(
        set.unavailable,
        Some(crosscheck_core::requests::changes::ChangesUnavailable::BecameGit)
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_and_last_turn_read_the_session_diff_of_the_last_user_message() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Turns", None);
    // user, assistant, user, assistant: the last turn starts at the second user message.
    let ids = h.fake.seed_messages(&s, 4, 12);
    h.fake
        .set_session_diff(&s, None, one_file("a.txt", "whole session"));
    h.fake
        .set_session_diff(&s, Some(&ids[2]), one_file("b.txt", "last turn"));
    let whole = change_set(&h, &s, ChangeScope::Session).await;
    assert_eq!(whole.files[0].path, "a.txt");
    assert_eq!(whole.message_id, None);
    let last = change_set(&h, &s, ChangeScope::LastTurn).await;
    assert_eq!(last.message_id.as_deref(), Some(ids[2].as_str()));
    assert_eq!(last.files[0].path, "b.txt");
    assert!(
        last.files[0]
            .patch
            .as_deref()
            .is_some_and(|p| p.contains("+last turn"))
    );

    let empty = h.fake.seed_session("No turn yet", None);
    let none = change_set(&h, &empty, ChangeScope::LastTurn).await;
    assert_eq!(
        none.unavailable,
        Some(crosscheck_core::requests::changes::ChangesUnavailable::NoTurn)
    );
    h.stop().await;
}

/// OpenCode 1.18.33 answers the whole-session diff with `[]` and keeps each turn's diff on
/// its user message: the session scope then joins the turns' diffs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_session_diff_is_joined_from_the_turns() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Two turns", None);
    let ids = h.fake.seed_messages(&s, 4, 12);
    h.fake
        .set_session_diff(&s, Some(&ids[0]), one_file("a.txt", "first turn"));
    h.fake.set_session_diff(
        &s,
        Some(&ids[2]),
        json!([
            {"file": "a.txt", "patch": "@@ -1 +1,2 @@\n first turn\n+second turn\n", "additions": 1, "deletions": 0, "status": "modified"},
            {"file": "b.txt", "patch": "@@ -0,0 +1 @@\n+b\n", "additions": 1, "deletions": 0, "status": "added"}
        ]),
    );
    let set = change_set(&h, &s, ChangeScope::Session).await;
    let summary: Vec<(&str, u32)> = set
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.additions))
        .collect();
    assert_eq!(summary, [("a.txt", 2), ("b.txt", 1)]);
    let patch = set.files[0].patch.clone().unwrap_or_default();
    assert!(
        patch.find("+first turn") < patch.find("+second turn"),
        "the turns' patches in order: {patch}"
    );
    assert_eq!(
        set.files[0].status,
        crosscheck_opencode::FileStatus::Added,
        "added in the first turn"
    );
    h.stop().await;
}

/// After "Revert to here" the reverted turns are undone: the last turn is the newest one
/// before the revert point, and the session's changes are joined from the turns that remain
/// (the server's whole-session diff still counts the reverted turn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reverted_turn_leaves_the_session_and_last_turn_scopes() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Reverted", None);
    let ids = h.fake.seed_messages(&s, 4, 12);
    h.fake
        .set_session_diff(&s, None, one_file("reverted.txt", "whole session"));
    h.fake
        .set_session_diff(&s, Some(&ids[0]), one_file("kept.txt", "first turn"));
    h.fake
        .set_session_diff(&s, Some(&ids[2]), one_file("reverted.txt", "second turn"));
    h.request(Request::RevertSession(
        crosscheck_core::requests::RevertSession {
            session_id: s.clone(),
            message_id: ids[2].clone(),
        },
    ))
    .await
    .expect("reverted");
    let last = change_set(&h, &s, ChangeScope::LastTurn).await;
    assert_eq!(last.message_id.as_deref(), Some(ids[0].as_str()));
    let paths: Vec<&str> = last.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["kept.txt"]);
    let whole = change_set(&h, &s, ChangeScope::Session).await;
    let paths: Vec<&str> = whole.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["kept.txt"]);

    // Reverted to the first prompt: no turn is left.
    h.request(Request::RevertSession(
        crosscheck_core::requests::RevertSession {
            session_id: s.clone(),
            message_id: ids[0].clone(),
        },
    ))
    .await
    .expect("reverted");
    let none = change_set(&h, &s, ChangeScope::LastTurn).await;
    assert_eq!(
        none.unavailable,
        Some(crosscheck_core::requests::changes::ChangesUnavailable::NoTurn)
    );
    assert!(
        change_set(&h, &s, ChangeScope::Session)
            .await
            .files
            .is_empty()
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_snapshots_the_session_scopes_say_so_and_ask_for_no_diff() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("No snapshots", None);
    h.fake.seed_messages(&s, 2, 12);
    h.fake.set_snapshots(Some(false));
    for scope in [ChangeScope::Session, ChangeScope::LastTurn] {
        let set = change_set(&h, &s, scope).await;
        assert_eq!(
            set.unavailable,
            Some(crosscheck_core::requests::changes::ChangesUnavailable::NoSnapshots),
            "{scope:?}"
        );
    }
    assert!(h.fake.requests_to("GET /session/:id/diff", &s).is_empty());
    let asked = h.fake.requests();
    let config = asked
        .iter()
        .find(|r| r.route == "GET /config")
        .expect("config asked");
    assert_eq!(config.query.get("directory"), Some(&h.fake.directory));
    // Unset is OpenCode's default: on.
    h.fake.set_snapshots(None);
    let set = change_set(&h, &s, ChangeScope::Session).await;
    assert_eq!(set.unavailable, None);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_session_shows_its_originals_changes() {
    let h = Harness::start().await;
    let mut seen = h.core.subscribe();
    let original = h.fake.seed_session("Implements", None);
    let review = h.fake.seed_session(
        "Reviews",
        Some(json!({"openchamber": {"kind": "review", "originalSessionID": original}})),
    );
    let waited = review.clone();
    wait_change(
        &mut seen,
        SHORT,
        "the review session",
        move |c| matches!(c, Change::SessionUpserted { session } if session.session.id == waited),
    )
    .await;
    h.fake
        .set_session_diff(&original, None, one_file("impl.rs", "the original's"));
    let set = change_set(&h, &review, ChangeScope::Session).await;
    assert_eq!(set.session_id, original);
    assert!(set.from_original);
    assert_eq!(set.files[0].path, "impl.rs");
    assert!(
        h.fake
            .requests_to("GET /session/:id/diff", &review)
            .is_empty()
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_malformed_and_huge_diffs_and_gone_sessions_are_clear_errors() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Faults", None);

    h.fake
        .answer_raw("GET /vcs/diff", 500, r#"{"name":"UnknownError"}"#);
    assert_eq!(
        error_code(&h, changes(&s, ChangeScope::WorkingTree)).await,
        ErrorCode::OpencodeStatus
    );
    h.fake
        .answer_raw("GET /vcs/diff", 200, r#"{"file":"a.txt","patch":"+x"}"#);
    let err = h
        .request(changes(&s, ChangeScope::WorkingTree))
        .await
        .expect_err("not a list");
    assert_eq!(err.code, ErrorCode::OpencodeMalformed);
    assert!(err.message.contains("GET /vcs/diff"), "{}", err.message);
    h.fake
        .answer_raw("GET /session/:id/diff", 200, "[{\"file\":\"a.txt\",");
    assert_eq!(
        error_code(&h, changes(&s, ChangeScope::Session)).await,
        ErrorCode::OpencodeMalformed
    );
    let huge = format!(
        "[{{\"file\":\"big\",\"patch\":\"{}\"}}]",
        "+".repeat(crosscheck_opencode::client::DIFF_BODY_LIMIT)
    );
    h.fake.answer_raw("GET /session/:id/diff", 200, &huge);
    let started = std::time::Instant::now();
    assert_eq!(
        error_code(&h, changes(&s, ChangeScope::Session)).await,
        ErrorCode::OpencodeTooLarge
    );
    assert!(started.elapsed() < SHORT);

    assert_eq!(
        error_code(&h, changes("ses_gone", ChangeScope::Session)).await,
        ErrorCode::NotFound
    );
    assert_eq!(
        error_code(
            &h,
            Request::Todos(Todos {
                session_id: "ses_gone".into()
            })
        )
        .await,
        ErrorCode::NotFound
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_diff_and_todo_events_are_pushed() {
    let h = Harness::start().await;
    let s = h.fake.seed_session("Events", None);
    let mut seen = h.core.subscribe();
    let dir = h.fake.directory.clone();
    h.fake.emit_file_edited(&dir, &format!("{dir}/a.txt"));
    let wanted = dir.clone();
    wait_change(&mut seen, SHORT, "FilesChanged for the folder", move |c| {
        matches!(c, Change::FilesChanged { directory: Some(d), session_id: None } if *d == wanted)
    })
    .await;
    h.fake.emit_session_diff(&s, &dir);
    let wanted = s.clone();
    wait_change(
        &mut seen,
        SHORT,
        "FilesChanged for the session",
        move |c| matches!(c, Change::FilesChanged { session_id: Some(id), .. } if *id == wanted),
    )
    .await;

    let todos = json!([
        {"content": "Write the parser", "status": "completed", "priority": "high"},
        {"content": "Test it", "status": "in_progress", "priority": "medium"}
    ]);
    h.fake.set_todos(&s, todos.clone());
    let wanted = s.clone();
    let change = wait_change(
        &mut seen,
        SHORT,
        "Todos",
        move |c| matches!(c, Change::Todos { session_id, .. } if *session_id == wanted),
    )
    .await;
    let Change::Todos { todos: pushed, .. } = change else {
        unreachable!()
    };
    assert_eq!(pushed.len(), 2);
    assert_eq!(pushed[1].content, "Test it");
    let listed = h
        .request(Request::Todos(Todos {
            session_id: s.clone(),
        }))
        .await
        .expect("todos");
    assert_eq!(listed, todos);
    h.stop().await;
}
