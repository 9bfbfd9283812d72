//! The change routes against a real `opencode serve` (as `real_server`): the working tree of a
//! git repository against HEAD, a folder outside git, a session's diff and todo list, a session
//! that does not exist, and the snapshot setting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::path::Path;

use crosscheck_opencode::{Client, CreateSession, FileStatus, Supervisor};

use crate::real_server::options;

fn git(repo: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_routes_of_the_real_server() {
    let root = tempfile::tempdir().expect("tmp");
    let mut options = options(root.path());
    let repo = root.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").expect("write");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    std::fs::write(repo.join("a.txt"), "one\nTWO\nthree\n").expect("write");
    std::fs::write(repo.join("new.txt"), "fresh\n").expect("write");
    options.working_dir = repo.clone();
    let supervisor = Supervisor::start(options)
        .await
        .expect("opencode serve starts");
    let client = Client::new(supervisor.config()).expect("client");
    let repo_dir = std::fs::canonicalize(&repo)
        .expect("canonical")
        .display()
        .to_string();

    let files = client.vcs_diff(&repo_dir).await.expect("vcs diff");
    let mut summary: Vec<(&str, FileStatus, u32, u32)> = files
        .iter()
        .map(|f| (f.file.as_str(), f.status, f.additions, f.deletions))
        .collect();
    summary.sort_by_key(|f| f.0);
    assert_eq!(
        summary,
        [
            ("a.txt", FileStatus::Modified, 2, 1),
            ("new.txt", FileStatus::Added, 1, 0)
        ]
    );
    let patch = files
        .iter()
        .find(|f| f.file == "a.txt")
        .and_then(|f| f.patch.clone())
        .unwrap_or_default();
    assert!(patch.contains("-two\n+TWO\n+three"), "{patch}");

    let plain = root.path().join("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let plain_dir = std::fs::canonicalize(&plain)
        .expect("canonical")
        .display()
        .to_string();
    assert!(
        client
            .vcs_diff(&plain_dir)
            .await
            .expect("outside git")
            .is_empty()
    );

    // The test config turns snapshots off.
    assert!(!client.snapshots_enabled(&repo_dir).await.expect("config"));

    let session = client
        .create_session(&repo_dir, &CreateSession::default())
        .await
        .expect("session");
    assert!(
        client
            .session_diff(&session.id, None)
            .await
            .expect("session diff")
            .is_empty()
    );
    assert!(client.todos(&session.id).await.expect("todos").is_empty());
    let err = client.todos("ses_nope").await.expect_err("unknown session");
    assert!(err.is_not_found(), "{err:?}");
    // The server answers an unknown session's diff with an empty list, not a 404: callers
    // check the session themselves.
    assert!(
        client
            .session_diff("ses_nope", None)
            .await
            .expect("empty")
            .is_empty()
    );
    supervisor.stop().await;
}
