//! The code fingerprint against real git repositories in temp folders: every kind of change
//! moves it, nothing else does, and the changed files are named.
#![allow(clippy::unwrap_used)] // a panic in a test is its failure

use std::path::Path;
use std::process::Command;

use crosscheck_core::fingerprint::{changed_files, fingerprint};

/// Run git in `dir` with a fixed identity; panics on failure (test set-up only).
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A repository with one commit of `src/lib.rs`.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\n").unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "first"]);
    dir
}

#[tokio::test]
async fn unchanged_code_keeps_its_fingerprint() {
    let dir = repo();
    let a = fingerprint(dir.path()).await.unwrap();
    let b = fingerprint(&dir.path().join("src")).await.unwrap();
    assert_eq!(
        a, b,
        "same code, same fingerprint, from any folder of the repository"
    );
    assert!(a.head.is_some());
    assert!(a.files.is_empty());
}

#[tokio::test]
async fn every_kind_of_change_moves_it_and_is_named() {
    let dir = repo();
    let clean = fingerprint(dir.path()).await.unwrap();

    // An unstaged edit.
    std::fs::write(dir.path().join("src/lib.rs"), "fn a() { todo!() }\n").unwrap();
    let edited = fingerprint(dir.path()).await.unwrap();
    assert_ne!(clean.digest, edited.digest);
    assert_eq!(
        changed_files(dir.path(), &clean, &edited).await.unwrap(),
        vec!["src/lib.rs"]
    );

    // Staging the same content is the same code.
    git(dir.path(), &["add", "src/lib.rs"]);
    let staged = fingerprint(dir.path()).await.unwrap();
    assert_eq!(edited.digest, staged.digest);

    // An untracked file, in a new folder.
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/new file.txt"), "x").unwrap();
    let untracked = fingerprint(dir.path()).await.unwrap();
    assert_ne!(staged.digest, untracked.digest);
    assert_eq!(
        changed_files(dir.path(), &staged, &untracked)
            .await
            .unwrap(),
        vec!["notes/new file.txt"]
    );

    // A second edit of an untracked file.
    std::fs::write(dir.path().join("notes/new file.txt"), "y").unwrap();
    let reedited = fingerprint(dir.path()).await.unwrap();
    assert_ne!(untracked.digest, reedited.digest);

    // A deletion.
    std::fs::remove_file(dir.path().join("notes/new file.txt")).unwrap();
    std::fs::remove_file(dir.path().join("src/lib.rs")).unwrap();
    let deleted = fingerprint(dir.path()).await.unwrap();
    assert_eq!(
        deleted.files.get("src/lib.rs").map(String::as_str),
        Some("deleted")
    );
    assert_eq!(
        changed_files(dir.path(), &clean, &deleted).await.unwrap(),
        vec!["src/lib.rs"]
    );
}

#[tokio::test]
async fn a_commit_moves_it_and_names_what_the_commit_changed() {
    let dir = repo();
    let before = fingerprint(dir.path()).await.unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn b() {}\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "hi\n").unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "second"]);
    let after = fingerprint(dir.path()).await.unwrap();
    assert_ne!(before.head, after.head);
    assert!(after.files.is_empty(), "nothing uncommitted");
    assert_eq!(
        changed_files(dir.path(), &before, &after).await.unwrap(),
        vec!["README.md", "src/lib.rs"]
    );
}

#[tokio::test]
async fn ignored_files_do_not_count() {
    let dir = repo();
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    git(dir.path(), &["add", ".gitignore"]);
    git(dir.path(), &["commit", "-q", "-m", "ignore"]);
    let before = fingerprint(dir.path()).await.unwrap();
    std::fs::create_dir(dir.path().join("target")).unwrap();
    std::fs::write(dir.path().join("target/out.bin"), "build output").unwrap();
    assert_eq!(before, fingerprint(dir.path()).await.unwrap());
}

#[tokio::test]
async fn a_repository_without_commits_has_no_head_but_a_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let print = fingerprint(dir.path()).await.unwrap();
    assert_eq!(print.head, None);
    assert_eq!(print.files.len(), 1);
}

#[tokio::test]
async fn a_folder_outside_git_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = fingerprint(dir.path()).await.unwrap_err();
    assert_eq!(err.code(), crosscheck_core::ErrorCode::FingerprintFailed);
    assert!(err.to_string().contains("rev-parse"), "{err}");
    let missing = fingerprint(&dir.path().join("nope")).await.unwrap_err();
    assert_eq!(
        missing.code(),
        crosscheck_core::ErrorCode::FingerprintFailed
    );
}
