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
