//! `crosscheck review FILE`: always reviews, records with source `draft`, prints the outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::gate_support::{Env, Reply, plan_flags, stderr, stdout};
use serde_json::Value;

#[test]
fn review_file_always_reviews_and_prints_the_outcome() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let file = env.dir.path().join("plan.md");
    std::fs::write(&file, "# Plan\n\nDo the thing.\n").unwrap();
    let cwd = env.dir.path().to_str().unwrap();
    let out = env.crosscheck(&["review", file.to_str().unwrap(), "--cwd", cwd], None);
    assert_eq!(out.status.code(), Some(1), "flagged: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("flagged"), "{text}");
    assert!(text.contains("VERDICT: FLAGS (1)"), "{text}");
    assert!(
        env.server
            .user_message(0)
            .starts_with(&format!("PLAN (draft, {}):", file.display()))
    );

    let out = env.crosscheck(
        &["review", file.to_str().unwrap(), "--cwd", cwd, "--json"],
        None,
    );
    assert_eq!(
        env.server.count(),
        2,
        "review FILE does not follow the cadence"
    );
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["source"], "draft");
    assert_eq!(json["status"], "flagged");

    // The gate sees the key as reviewed: the same draft proceeds.
    let gate = env.crosscheck(
        &[
            "gate",
            "plan",
            "--file",
            file.to_str().unwrap(),
            "--cwd",
            cwd,
        ],
        None,
    );
    assert_eq!(gate.status.code(), Some(0), "{}", stderr(&gate));
    assert_eq!(env.server.count(), 2);
}

#[test]
fn review_of_a_missing_file_is_an_error() {
    let env = Env::new();
    let out = env.crosscheck(&["review", "/nonexistent/plan.md"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/nonexistent/plan.md"));
    assert_eq!(env.server.count(), 0);
}

/// `crosscheck review report`: the newest review recorded for the folder as markdown, the
/// same text as the app's report; a folder without one exits 1 and says so.
#[test]
fn review_report_prints_the_folders_newest_review() {
    use crosscheck_review::findings::{FindingsReply, parse_findings};
    let env = Env::new();
    let folder = env.dir.path().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    let cwd = folder.to_str().unwrap();
    let none = env.crosscheck(&["review", "report", "--cwd", cwd], None);
    assert_eq!(none.status.code(), Some(1), "{}", stderr(&none));
    assert!(stderr(&none).contains("no review"), "{}", stderr(&none));

    std::fs::create_dir_all(env.data_dir()).unwrap();
    let db = crosscheck_core::db::Db::open(&env.data_dir().join("crosscheck.db")).unwrap();
    let reply = parse_findings(
        "FINDINGS\n- [F1] major src/a.rs:1 — <script>x</script> breaks\nREVIEWED src/a.rs\nVERDICT: FLAGS (1)",
    );
    let FindingsReply::Parsed { reviewed, .. } = &reply else {
        panic!("parses");
    };
    let real = std::fs::canonicalize(&folder).unwrap();
    crosscheck_core::findings::record_review(&db, "ses_r", Some("ses_o"), "msg_1", &reply, None, 1)
        .unwrap();
    crosscheck_core::findings::record_coverage(
        &db,
        "ses_r",
        1,
        real.to_str().unwrap(),
        reviewed,
        Some(&["src/a.rs".to_owned(), "src/b.rs".to_owned()]),
    )
    .unwrap();
    let want = crosscheck_core::report::for_review(&db, "ses_r")
        .unwrap()
        .unwrap();
    drop(db);
    let out = env.crosscheck(&["review", "report", "--cwd", cwd], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text, want);
    assert!(text.contains("covered 1 of 2 changed files"), "{text}");
    assert!(text.contains("not reviewed: src/b.rs"), "{text}");
    assert!(!text.contains("<script>"), "{text}");
}
