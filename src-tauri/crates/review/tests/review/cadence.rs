//! The pause and its cadence over the ledger: one pause per distinct text, unreachable
//! reviewers bounded at two attempts, reviewer choice, log lines.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::common::{ModelServer, PLAN, Reply, clean_reply, flags_reply, quick, rig};
use crosscheck_review::{
    Action, Cadence, Claim, ReviewKind, ReviewRequest, ReviewSource, ReviewStatus,
};
use serde_json::json;

fn draft(text: &str) -> ReviewRequest {
    let mut r = ReviewRequest::plan("/home/dev/project", text, ReviewSource::Draft);
    r.path = Some("/home/dev/project/plan.md".into());
    r
}

const TRAILER: &str = "Address material findings by editing the draft, then try again. An unchanged draft proceeds to the human.";

#[tokio::test]
async fn first_attempt_pauses_unchanged_passes_edited_pauses_afresh() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());

    let first = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(first.action, Action::Block);
    assert_eq!(first.status, ReviewStatus::Flagged);
    let reason = first.reason.clone().unwrap();
    assert!(
        reason.starts_with("Automated cold review (Crosscheck) paused this plan:\n\n"),
        "{reason}"
    );
    assert!(reason.contains(&flags_reply()), "{reason}");
    assert!(reason.ends_with(&format!("\n\n{TRAILER}")), "{reason}");
    assert_eq!(server.count(), 1);

    let again = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(again.action, Action::Proceed);
    assert!(again.ledger_hit);
    assert_eq!(again.status, ReviewStatus::Flagged);
    assert_eq!(
        server.count(),
        1,
        "an unchanged draft is not reviewed again"
    );

    let edited = rig
        .engine
        .review(draft(&format!("{PLAN}\nNow with files.")))
        .await
        .unwrap();
    assert_eq!(edited.action, Action::Block);
    assert!(!edited.ledger_hit);
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn a_clean_first_review_also_pauses_once() {
    let server = ModelServer::start();
    server.always(Reply::Text(clean_reply()));
    let rig = rig(&server.base, quick());
    let first = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(
        (first.action, first.status),
        (Action::Block, ReviewStatus::Clean)
    );
    let again = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(
        (again.action, again.status),
        (Action::Proceed, ReviewStatus::Clean)
    );
}

#[tokio::test]
async fn the_same_text_in_another_directory_is_another_key() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    rig.engine.review(draft(PLAN)).await.unwrap();
    let mut other = draft(PLAN);
    other.cwd = "/home/dev/other".into();
    assert_eq!(
        rig.engine.review(other).await.unwrap().action,
        Action::Block
    );
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn a_parameter_only_plan_is_reviewed_with_source_parameter() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    let request = ReviewRequest::plan("/home/dev/project", PLAN, ReviewSource::Parameter);
    let decision = rig.engine.review(request).await.unwrap();
    assert_eq!(decision.action, Action::Block);
    assert_eq!(decision.source, ReviewSource::Parameter);
    let entry = rig.engine.list(10).unwrap().remove(0);
    assert_eq!(entry.source, ReviewSource::Parameter);
    assert_eq!(entry.path, None);
    let user = server.seen()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(user.starts_with("PLAN (parameter):\n\n"));
    let done = rig
        .log
        .events()
        .into_iter()
        .find(|e| e["event"] == "plan_review.done")
        .unwrap();
    assert_eq!(done["source"], "parameter");
}

#[tokio::test]
async fn no_text_means_no_pause_and_no_provider_call() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    for text in ["", "  \n\t "] {
        let decision = rig.engine.review(draft(text)).await.unwrap();
        assert_eq!(decision.action, Action::Proceed);
    }
    assert_eq!(server.count(), 0);
    assert_eq!(rig.engine.list(10).unwrap().len(), 0);
    let skipped: Vec<_> = rig
        .log
        .events()
        .into_iter()
        .filter(|e| e["event"] == "plan_review.skipped")
        .collect();
    assert_eq!(skipped.len(), 2);
    assert_eq!(skipped[0]["reason"], "no text");
}

#[tokio::test]
async fn unreachable_blocks_attempt_one_and_proceeds_unreviewed_on_attempt_two() {
    let server = ModelServer::start();
    server.always(Reply::Json(503, json!({"error": {"message": "down"}})));
    let rig = rig(&server.base, quick());

    let first = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(first.action, Action::Block);
    assert_eq!(first.status, ReviewStatus::Unreviewed);
    let reason = first.reason.unwrap();
    assert!(
        reason.contains("could not run") && reason.contains("Try again"),
        "{reason}"
    );

    let second = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(second.action, Action::Proceed);
    assert_eq!(second.status, ReviewStatus::Unreviewed);
    assert!(
        second
            .reason
            .unwrap()
            .contains("proceeds marked unreviewed")
    );
    assert_eq!(server.count(), 2, "attempt 2 retries the review once");

    let third = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(third.action, Action::Proceed);
    assert!(third.ledger_hit);
    assert_eq!(server.count(), 2);

    let entry = rig.engine.list(1).unwrap().remove(0);
    assert_eq!(entry.status, ReviewStatus::Unreviewed);
    assert_eq!(entry.attempts, 2);
}

#[tokio::test]
async fn a_reviewer_back_on_attempt_two_pauses_with_its_review() {
    let server = ModelServer::start();
    server.push(Reply::Json(500, json!({"error": {"message": "down"}})));
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    assert_eq!(
        rig.engine.review(draft(PLAN)).await.unwrap().status,
        ReviewStatus::Unreviewed
    );
    let second = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(
        (second.action, second.status),
        (Action::Block, ReviewStatus::Flagged)
    );
    let third = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(third.action, Action::Proceed);
}

#[tokio::test]
async fn reviewer_choice_follows_the_floor() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(
        &server.base,
        json!({"reviewTimeoutMs": 3000,
               "ranks": [{"pattern": "claude-fable-*", "rank": 99},
                         {"pattern": "claude-opus-*", "rank": 90},
                         {"pattern": "claude-sonnet-4-5", "rank": 70},
                         {"pattern": "claude-haiku-*", "rank": 40}]}),
    );
    let cases = [
        (
            Some("claude-sonnet-4-5-20250929"),
            "claude-sonnet-4-5-20250929",
            "self",
        ),
        (Some("anthropic/claude-fable-1"), "claude-fable-1", "self"),
        (Some("claude-opus-4-1"), "claude-opus-4-1", "self"),
        (Some("claude-haiku-4-5"), "claude-sonnet-4-5", "floor"),
        (Some("some-unknown-model"), "claude-sonnet-4-5", "floor"),
        (None, "claude-sonnet-4-5", "floor"),
    ];
    for (i, (author, wire, mode)) in cases.iter().enumerate() {
        let mut request = draft(&format!("{PLAN}\ncase {i}"));
        request.author = author.map(str::to_owned);
        rig.engine.review(request).await.unwrap();
        let seen = server.seen();
        assert_eq!(seen[i].body["model"], *wire, "{author:?}");
        let done: Vec<_> = rig
            .log
            .events()
            .into_iter()
            .filter(|e| e["event"] == "plan_review.done")
            .collect();
        assert_eq!(done[i]["mode"], *mode, "{author:?}");
    }
}

#[tokio::test]
async fn log_lines_carry_the_documented_fields() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    rig.engine.review(draft(PLAN)).await.unwrap();
    rig.engine.review(draft(PLAN)).await.unwrap();
    let events = rig.log.events();
    assert_eq!(events.len(), 2, "{events:?}");
    let done = &events[0];
    assert_eq!(done["event"], "plan_review.done");
    assert_eq!(done["mode"], "floor");
    assert_eq!(done["reviewer"], "claude-sonnet-4-5");
    assert_eq!(done["outcome"], "flagged");
    assert_eq!(done["source"], "draft");
    assert!(done["ms"].is_u64());
    assert_eq!(events[1]["event"], "plan_review.skipped");
    assert!(events[1]["reason"].as_str().unwrap().contains("unchanged"));
    for line in rig.log.lines() {
        assert!(!line.contains('\n'));
    }
}

#[tokio::test]
async fn commits_follow_the_same_cadence_with_their_own_log_events() {
    let server = ModelServer::start();
    server.always(Reply::Text(
        "J1 FAIL — src/a.rs:1: unexplained.\nVERDICT: FLAGS (1)".into(),
    ));
    let rig = rig(&server.base, quick());
    let commit = || ReviewRequest::commit("/r", "diff --git a/a b/a\n+x\n", vec!["a".into()]);
    let first = rig.engine.review(commit()).await.unwrap();
    assert_eq!(first.action, Action::Block);
    let reason = first.reason.unwrap();
    assert!(
        reason.starts_with("Automated cold review (Crosscheck) paused this commit:"),
        "{reason}"
    );
    assert!(reason.contains("changing the staged files"));
    assert_eq!(
        rig.engine.review(commit()).await.unwrap().action,
        Action::Proceed
    );
    let events = rig.log.events();
    assert_eq!(events[0]["event"], "commit_review.done");
    assert_eq!(events[0]["source"], "staged");
    assert_eq!(events[1]["event"], "commit_review.skipped");
    // A plan with the same text as a diff is another kind: its own key space.
    let same_text = ReviewRequest::plan("/r", "diff --git a/a b/a\n+x\n", ReviewSource::Parameter);
    let plan = rig.engine.review(same_text).await.unwrap();
    assert_eq!(plan.kind, ReviewKind::Plan);
    assert!(!plan.ledger_hit);
    assert!(server.count() > 1);
}

#[tokio::test]
async fn cadence_always_reviews_again() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    rig.engine.review(draft(PLAN)).await.unwrap();
    let mut again = draft(PLAN);
    again.cadence = Cadence::Always;
    assert_eq!(
        rig.engine.review(again).await.unwrap().action,
        Action::Block
    );
    assert_eq!(server.count(), 2);
    // ...and the gate cadence still sees the key as reviewed.
    assert_eq!(
        rig.engine.review(draft(PLAN)).await.unwrap().action,
        Action::Proceed
    );
}

#[tokio::test]
async fn the_reviewed_text_is_kept_for_the_app_as_far_as_it_was_sent() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    let decision = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(
        rig.engine
            .text(ReviewKind::Plan, &decision.key)
            .unwrap()
            .as_deref(),
        Some(PLAN)
    );
    // A ledger hit writes nothing; a missing key has no text.
    rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(
        rig.engine.text(ReviewKind::Commit, &decision.key).unwrap(),
        None
    );

    let cut = crate::common::rig(
        &server.base,
        json!({"reviewTimeoutMs": 3000, "maxInputChars": 10}),
    );
    let decision = cut.engine.review(draft(PLAN)).await.unwrap();
    assert!(decision.truncated);
    let kept = cut
        .engine
        .text(ReviewKind::Plan, &decision.key)
        .unwrap()
        .unwrap();
    assert_eq!(kept, PLAN.chars().take(10).collect::<String>());
}

#[tokio::test]
async fn a_ledger_hit_is_decided_by_claim_alone() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    rig.engine.review(draft(PLAN)).await.unwrap();
    // claim() is synchronous: no runtime, no HTTP client needed to decide a hit.
    let decided = std::thread::scope(|s| {
        s.spawn(|| rig.engine.claim(draft(PLAN)).unwrap())
            .join()
            .unwrap()
    });
    assert!(matches!(decided, Claim::Decided(d) if d.action == Action::Proceed && d.ledger_hit));
}

#[tokio::test]
async fn two_engines_on_one_database_review_a_key_once_and_both_pause_with_it() {
    let server = ModelServer::start();
    server.always(Reply::Delay(
        Duration::from_millis(300),
        Box::new(Reply::Text(flags_reply())),
    ));
    let rig = rig(&server.base, quick());
    let other = rig.second_engine(&server.base);
    let (a, b) = tokio::join!(rig.engine.review(draft(PLAN)), other.review(draft(PLAN)));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(server.count(), 1);
    assert_eq!([a.action, b.action], [Action::Block, Action::Block]);
    let waited = if a.ledger_hit { a } else { b };
    assert_eq!(waited.status, ReviewStatus::Flagged);
    assert!(waited.reason.unwrap().contains(&flags_reply()));
    // The next attempt proceeds.
    let again = rig.engine.review(draft(PLAN)).await.unwrap();
    assert_eq!(again.action, Action::Proceed);
}

#[tokio::test]
async fn a_project_file_is_never_an_error_it_is_ignored_with_a_warning() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    let project = rig.dir.path().join("project");
    std::fs::create_dir_all(project.join(".crosscheck")).unwrap();
    std::fs::write(
        project.join(".crosscheck/review.json"),
        r#"{"floorModal": "x", "reviewTimeoutMs": 1}"#,
    )
    .unwrap();
    let request = ReviewRequest::plan(project.to_str().unwrap(), PLAN, ReviewSource::Draft);
    let decision = rig.engine.review(request).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Flagged);
    let reason = decision.reason.unwrap();
    assert!(
        reason.contains("floorModal") && reason.contains("reviewTimeoutMs"),
        "{reason}"
    );
    let warned = rig
        .log
        .events()
        .iter()
        .filter(|e| e["event"] == "review_config.warning")
        .count();
    assert_eq!(warned, 2);
}

#[tokio::test]
async fn an_author_without_a_usable_provider_falls_back_to_the_floor() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::write(dir.path().join("config/review.json"), quick().to_string()).unwrap();
    let (logger, log) = crosscheck_review::Logger::memory();
    // Only an Anthropic key; OpenAI at the vendor's own URL without a key.
    let engine = crosscheck_review::Engine::open(crosscheck_review::EngineOptions {
        database_path: dir.path().join("db"),
        config_dir: dir.path().join("config"),
        logger,
        env: crosscheck_review::Env::Map(std::collections::BTreeMap::from([
            ("ANTHROPIC_API_KEY".to_owned(), "k".to_owned()),
            ("ANTHROPIC_BASE_URL".to_owned(), server.base.clone()),
        ])),
    })
    .unwrap();
    for (i, author) in ["gpt-5", "o3", "gemini-2.5-pro"].into_iter().enumerate() {
        let mut request = draft(&format!("{PLAN}\n{author}"));
        request.author = Some(author.into());
        let decision = engine.review(request).await.unwrap();
        assert_eq!(decision.status, ReviewStatus::Flagged, "{author}");
        assert_eq!(decision.reviewer.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(server.seen()[i].path, "/v1/messages", "{author}");
        let done = log
            .events()
            .into_iter()
            .filter(|e| e["event"] == "plan_review.done")
            .nth(i)
            .unwrap();
        assert_eq!(done["mode"], "floor");
        let why = done["fallback"].as_str().unwrap_or_default();
        assert!(why.contains(author), "{done}");
    }
}

/// The app spawns reviews on a multi-threaded runtime: the engine and its futures are Send.
#[test]
fn the_engine_and_its_review_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let dir = tempfile::tempdir().unwrap();
    let engine = crosscheck_review::Engine::open(crosscheck_review::EngineOptions {
        database_path: dir.path().join("db"),
        config_dir: dir.path().join("cfg"),
        logger: crosscheck_review::Logger::memory().0,
        env: crosscheck_review::Env::Map(Default::default()),
    })
    .unwrap();
    send_sync(&engine);
    send(engine.review(draft(PLAN)));
}

#[tokio::test]
async fn an_open_engine_sees_every_row_another_engine_writes_later() {
    // The app keeps its engine open for days while gates write: each of their rows must
    // show up in its list, not only the first.
    let rig = rig("http://127.0.0.1:9", quick());
    assert!(rig.engine.list(10).unwrap().is_empty());
    use crosscheck_review::{Engine, EngineOptions, Env, Logger};
    let gate = Engine::open(EngineOptions {
        database_path: rig.db(),
        config_dir: rig.config_dir(),
        logger: Logger::memory().0,
        env: Env::Map(Default::default()),
    })
    .unwrap();
    for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
        let decision = gate
            .review(ReviewRequest::plan("/w", text, ReviewSource::Parameter))
            .await
            .unwrap();
        assert_eq!(decision.status, ReviewStatus::Unreviewed);
        assert_eq!(rig.engine.list(10).unwrap().len(), i + 1, "after {text}");
    }
}
