//! Merging a worktree back, against real git repositories in temp folders: the preview names
//! the commits and files, a merge lands on the base, a conflict is aborted and leaves the base
//! clean, the repository's hooks never run, and a config that names a program is refused.
#![allow(clippy::unwrap_used)] // a panic in a test is its failure

use std::path::Path;
use std::process::Command;

use crosscheck_core::worktree::merge::{self, MergeMode};
use crosscheck_core::worktree::{uncommitted, workplace};

/// Run git in `dir` with a fixed identity; panics on failure (test set-up only).
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {:?}", out);
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with `a.txt` on `main`, and two worktrees `one` and `two` on their branches.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["config", "user.name", "Test"]);
    git(&main, &["config", "user.email", "test@example.invalid"]);
    std::fs::write(main.join("a.txt"), "base\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-q", "-m", "first"]);
    for name in ["one", "two"] {
        let path = dir.path().join(name);
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("wt/{name}"),
                path.to_str().unwrap(),
            ],
        );
    }
    dir
}

fn s(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_worktree_knows_its_repository_and_branch() {
    let dir = repo();
    let place = workplace(&s(&dir.path().join("one"))).await;
    assert!(place.worktree);
    assert_eq!(place.branch.as_deref(), Some("wt/one"));
    assert_eq!(
        Path::new(place.repository.as_deref().unwrap())
            .canonicalize()
            .unwrap(),
        dir.path().join("main").canonicalize().unwrap()
    );
    let main = workplace(&s(&dir.path().join("main"))).await;
    assert!(!main.worktree);
    std::fs::remove_dir_all(dir.path().join("two")).unwrap();
    let gone = workplace(&s(&dir.path().join("two"))).await;
    assert!(gone.gone, "a worktree removed behind our back is gone");
}

#[tokio::test]
async fn merge_lands_and_a_conflict_is_aborted_leaving_the_base_clean() {
    let dir = repo();
    let main = dir.path().join("main");
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    std::fs::write(one.join("a.txt"), "one\n").unwrap();
    std::fs::write(two.join("a.txt"), "two\n").unwrap();
    // A hook that would leave a mark if git ran it.
    let hook = main.join(".git/hooks/pre-merge-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --git-common-dir)/../HOOK_RAN\"\n",
    )
    .unwrap();
    std::fs::write(main.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 1\n").unwrap();
    // Hooks `--no-verify` does not stop: only pointing hooks elsewhere does.
    for h in ["post-merge", "post-commit", "post-checkout"] {
        std::fs::write(
            main.join(".git/hooks").join(h),
            "#!/bin/sh\ntouch \"$(git rev-parse --git-common-dir)/../HOOK_RAN\"\n",
        )
        .unwrap();
    }
    for h in [
        "pre-merge-commit",
        "pre-commit",
        "post-merge",
        "post-commit",
        "post-checkout",
    ] {
        Command::new("chmod")
            .args(["+x", main.join(".git/hooks").join(h).to_str().unwrap()])
            .status()
            .unwrap();
    }

    std::fs::write(one.join("new.txt"), "new\n").unwrap();
    let before = merge::preview(&s(&one), &s(&main), "wt/one").await.unwrap();
    assert!(before.commits.is_empty());
    assert_eq!(
        before.uncommitted,
        vec!["a.txt".to_owned(), "new.txt".to_owned()]
    );
    let mut files: Vec<_> = before
        .files
        .iter()
        .map(|f| (f.path.clone(), f.status.clone()))
        .collect();
    files.sort();
    assert_eq!(
        files,
        vec![("a.txt".into(), "M".into()), ("new.txt".into(), "A".into())],
        "uncommitted work counts"
    );
    std::fs::remove_file(one.join("new.txt")).unwrap();
    let pending = merge::commit_pending(&s(&one), "work one").await.unwrap();
    assert!(
        pending.is_some(),
        "the uncommitted work is committed on the branch"
    );
    let preview = merge::preview(&s(&one), &s(&main), "wt/one").await.unwrap();
    assert_eq!(preview.base_branch, "main");
    assert_eq!(preview.commits.len(), 1);
    assert_eq!(preview.commits[0].subject, "work one");
    assert_eq!(preview.files.len(), 1);
    assert_eq!(preview.files[0].path, "a.txt");

    let first = merge::merge(&s(&main), "wt/one", MergeMode::Merge, "Merge one")
        .await
        .unwrap();
    assert!(first.merged, "{first:?}");
    assert_eq!(
        std::fs::read_to_string(main.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(
        !main.join("HOOK_RAN").exists(),
        "no hook of the repository ran"
    );

    merge::commit_pending(&s(&two), "work two").await.unwrap();
    let head_before = git(&main, &["rev-parse", "HEAD"]);
    let second = merge::merge(&s(&main), "wt/two", MergeMode::Squash, "Squash two")
        .await
        .unwrap();
    assert!(!second.merged);
    let conflict = second.conflict.unwrap();
    assert_eq!(conflict.files, vec!["a.txt".to_owned()]);
    assert!(
        conflict.message.contains("CONFLICT"),
        "{}",
        conflict.message
    );
    assert!(
        uncommitted(&main).await.unwrap().is_empty(),
        "the base is clean"
    );
    assert_eq!(git(&main, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(
        std::fs::read_to_string(main.join("a.txt")).unwrap(),
        "one\n"
    );

    let third = merge::merge(&s(&main), "wt/two", MergeMode::Merge, "Merge two")
        .await
        .unwrap();
    assert!(third.conflict.is_some());
    assert!(
        uncommitted(&main).await.unwrap().is_empty(),
        "the base is clean"
    );
    assert!(
        !main.join(".git/MERGE_HEAD").exists(),
        "no merge is left half-done"
    );
}

#[tokio::test]
async fn a_config_that_names_a_program_is_refused() {
    let dir = repo();
    let main = dir.path().join("main");
    let one = dir.path().join("one");
    std::fs::write(one.join("a.txt"), "one\n").unwrap();
    merge::commit_pending(&s(&one), "work one").await.unwrap();
    git(&main, &["config", "merge.evil.driver", "touch PWNED"]);
    let refused = merge::merge(&s(&main), "wt/one", MergeMode::Merge, "m")
        .await
        .unwrap_err();
    assert_eq!(refused.code(), crosscheck_core::ErrorCode::MergeRefused);
    assert!(
        refused.to_string().contains("merge.evil.driver"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(main.join("a.txt")).unwrap(),
        "base\n"
    );
}

#[tokio::test]
async fn a_dirty_base_is_refused() {
    let dir = repo();
    let main = dir.path().join("main");
    let one = dir.path().join("one");
    std::fs::write(one.join("a.txt"), "one\n").unwrap();
    merge::commit_pending(&s(&one), "work one").await.unwrap();
    std::fs::write(main.join("b.txt"), "mine\n").unwrap();
    let refused = merge::merge(&s(&main), "wt/one", MergeMode::Merge, "m")
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("b.txt"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(main.join("b.txt")).unwrap(),
        "mine\n"
    );
}
