//! `crosscheck gate commit` as a real git `pre-commit` hook, installed by
//! `crosscheck gate install git`, in a real repository.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::path::Path;

use crate::gate_support::{Env, Reply, stderr};
use crosscheck_testkit::replies::commit_one_flag;

fn repo(env: &Env) -> std::path::PathBuf {
    let repo = env.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["config", "user.name", "Test Author"],
        &["config", "user.email", "author@example.test"],
        &["config", "commit.gpgsign", "false"],
    ] {
        let out = env.git(&repo, args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    repo
}

fn stage(env: &Env, repo: &Path, name: &str, content: &str) {
    std::fs::write(repo.join(name), content).unwrap();
    let out = env.git(repo, &["add", name]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_commit_is_blocked_with_the_review_then_allowed_unchanged() {
    let env = Env::new();
    env.server.always(Reply::Text(commit_one_flag()));
    let repo = repo(&env);
    let install = env.crosscheck(
        &["gate", "install", "git", "--dir", repo.to_str().unwrap()],
        None,
    );
    assert!(install.status.success(), "{}", stderr(&install));
    let hook = repo.join(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).unwrap();
    assert!(script.contains("gate commit"), "{script}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111,
            0o111
        );
    }

    stage(&env, &repo, "hello.txt", "hello\n");
    let blocked = env.git(&repo, &["commit", "-q", "-m", "Add greeting"]);
    assert!(
        !blocked.status.success(),
        "the first commit of a diff is paused"
    );
    let err = stderr(&blocked);
    assert!(
        err.contains("Automated cold review (Crosscheck) paused this commit:"),
        "{err}"
    );
    assert!(err.contains("J2 FAIL"), "{err}");
    assert_eq!(env.server.count(), 1);
    let user = env.server.user_message(0);
    assert!(user.starts_with("COMMIT (staged, 1 file):\n\n"), "{user}");
    assert!(
        user.contains("- hello.txt\n") && user.contains("+hello"),
        "{user}"
    );
    assert!(
        !env.git(&repo, &["rev-parse", "HEAD"]).status.success(),
        "nothing committed"
    );

    let allowed = env.git(&repo, &["commit", "-q", "-m", "Add greeting"]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(env.server.count(), 1);

    // A new staged diff is reviewed afresh.
    stage(&env, &repo, "hello.txt", "hello, world\n");
    let blocked = env.git(&repo, &["commit", "-q", "-m", "Widen greeting"]);
    assert!(!blocked.status.success());
    assert_eq!(env.server.count(), 2);
}

#[test]
fn an_empty_diff_is_skipped_with_a_reason() {
    let env = Env::new();
    let repo = repo(&env);
    let out = env.crosscheck(&["gate", "commit", "--cwd", repo.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("\"event\":\"commit_review.skipped\",\"reason\":\"empty diff\""));
    assert_eq!(env.server.count(), 0);
}

#[test]
fn an_unreachable_reviewer_blocks_the_first_commit_and_lets_the_second_through() {
    let env = Env::new();
    env.server.always(Reply::error(401));
    let repo = repo(&env);
    stage(&env, &repo, "a.txt", "a\n");
    let cwd = repo.to_str().unwrap();
    let first = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(first.status.code(), Some(1));
    assert!(stderr(&first).contains("could not run for this commit"));
    let second = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(stderr(&second).contains("unreviewed"));
}

#[test]
fn install_git_refuses_to_replace_a_different_hook_without_force() {
    let env = Env::new();
    let repo = repo(&env);
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexec make lint\n").unwrap();
    let dir = repo.to_str().unwrap();
    let out = env.crosscheck(&["gate", "install", "git", "--dir", dir], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        "#!/bin/sh\nexec make lint\n"
    );
    let out = env.crosscheck(&["gate", "install", "git", "--dir", dir, "--force"], None);
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&hook)
            .unwrap()
            .contains("gate commit")
    );
    // Installing again is a no-op.
    let out = env.crosscheck(&["gate", "install", "git", "--dir", dir], None);
    assert!(out.status.success());
    assert!(crate::gate_support::stdout(&out).contains("already installed"));
}

/// A CLEAN that does not name the staged files it reviewed is no clean review: the ledger
/// records it flagged with outcome `uncovered`, the pause names the files it left out, and the
/// exit codes stay those of the gate (1 paused, then 0 for the same staged diff). A CLEAN whose
/// REVIEWED lines name every staged file is clean; a REVIEWED line in a quote claims nothing.
#[test]
fn a_clean_commit_review_that_covered_nothing_is_recorded_uncovered_never_clean() {
    use crosscheck_testkit::replies::commit_clean;
    let env = Env::new();
    let clean_with = |lines: &str| {
        let clean = commit_clean();
        let (checks, verdict) = clean.rsplit_once('\n').unwrap();
        format!("{checks}\n{lines}\n{verdict}")
    };
    let repo = repo(&env);
    let cwd = repo.to_str().unwrap();
    stage(&env, &repo, "a.txt", "a\n");
    stage(&env, &repo, "b.txt", "b\n");
    let ledger = |env: &Env| {
        let db = rusqlite::Connection::open(env.data_dir().join("crosscheck.db")).unwrap();
        db.query_row(
            "SELECT status, outcome FROM review_ledger ORDER BY rowid DESC LIMIT 1",
            [],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )
        .unwrap()
    };

    env.server.always(Reply::Text(commit_clean()));
    let first = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let err = stderr(&first);
    assert!(err.contains("names no file it reviewed"), "{err}");
    assert!(err.contains("counts as flagged, not clean"), "{err}");
    assert_eq!(ledger(&env), ("flagged".to_owned(), "uncovered".to_owned()));
    assert!(
        env.server.seen()[0].raw.contains("REVIEWED <path>"),
        "the checklist asks for REVIEWED lines"
    );
    let again = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));

    // One file named, the other only in a quote: the quoted one is left out.
    stage(&env, &repo, "a.txt", "aa\n");
    env.server
        .always(Reply::Text(clean_with("REVIEWED a.txt\n> REVIEWED b.txt")));
    let partial = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(partial.status.code(), Some(1));
    let err = stderr(&partial);
    assert!(
        err.contains("does not say it reviewed 1 of the 2 staged file(s): b.txt"),
        "{err}"
    );
    assert_eq!(ledger(&env), ("flagged".to_owned(), "uncovered".to_owned()));

    // Both named: clean (the first attempt still pauses, as every first attempt does).
    stage(&env, &repo, "a.txt", "aaa\n");
    env.server
        .always(Reply::Text(clean_with("REVIEWED a.txt\nREVIEWED b.txt")));
    let covered = env.crosscheck(&["gate", "commit", "--cwd", cwd], None);
    assert_eq!(covered.status.code(), Some(1));
    assert_eq!(ledger(&env), ("clean".to_owned(), "clean".to_owned()));
}
