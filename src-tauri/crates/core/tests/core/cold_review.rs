//! Cold reviews in the app, end to end through the typed Api: the fake OpenCode supplies the
//! session and its assistant replies, a scripted OpenAI-compatible reviewer on 127.0.0.1 reads
//! the plan, and the ledger is the same SQLite file a `crosscheck gate` run writes to.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::{Harness, Reply, SHORT, next_change, wait_change};
use crosscheck_core::api_types::{CommandEntry, Notice, NoticeLevel, Sent};
use crosscheck_core::flows::cold_review::{ReviewDetail, ReviewProgress, ReviewRunStatus};
use crosscheck_core::settings::TabMode;
use crosscheck_core::{Change, Request, ReviewSetup};
use crosscheck_review::{
    Engine, EngineOptions, Env, LedgerEntry, Logger, ReviewKind, ReviewRequest, ReviewSource,
    ReviewStatus,
};
use crosscheck_testkit::replies::{plan_clean, plan_one_flag};
use crosscheck_testkit::{ModelServer, Reply as Answer, unreachable_base_url};
use serde_json::json;

const PLAN: &str =
    "# Plan: parse CRLF config files\n\n## Increments\n\n1. Handle CRLF.\n   Status: Not started\n";

/// The review config every test uses: GPT-5 as the floor, so the unknown `fake-model` author
/// gets a reviewer served by the OpenAI-compatible client.
fn review_config() -> serde_json::Value {
    json!({"floorModel": "gpt-5", "reviewTimeoutMs": 5000, "reviewTimeoutMsPer1000Chars": 0})
}

fn env(base_url: Option<&str>, key: Option<&str>) -> Env {
    let mut map = BTreeMap::new();
    if let Some(url) = base_url {
        map.insert("OPENAI_BASE_URL".to_owned(), url.to_owned());
    }
    if let Some(key) = key {
        map.insert("OPENAI_API_KEY".to_owned(), key.to_owned());
    }
    Env::Map(map)
}

/// A harness whose review engine talks to `base_url` with `key` (config passed explicitly,
/// nothing read from the process environment).
async fn harness(base_url: Option<&str>, key: Option<&str>) -> Harness {
    harness_with(review_config(), base_url, key).await
}

/// [`harness`] with its own review config.
async fn harness_with(
    config: serde_json::Value,
    base_url: Option<&str>,
    key: Option<&str>,
) -> Harness {
    let env = env(base_url, key);
    Harness::start_with_review(move |dir| {
        let config_dir = dir.join("config");
        std::fs::create_dir_all(&config_dir).expect("config dir");
        std::fs::write(config_dir.join("review.json"), config.to_string()).expect("review.json");
        ReviewSetup {
            config_dir,
            env,
            logger: Logger::memory().0,
        }
    })
    .await
}

/// Another engine on the harness's database and config: what a `crosscheck gate` run opens.
fn gate_engine(h: &Harness, base_url: &str) -> Engine {
    Engine::open(EngineOptions {
        database_path: h.dir.path().join("db").join("crosscheck.db"),
        config_dir: h.dir.path().join("config"),
        logger: Logger::memory().0,
        env: env(Some(base_url), Some("sk-test")),
    })
    .expect("a second engine opens the shared ledger")
}

/// A session whose one turn answered with `reply`; returns (session id, assistant message id).
async fn session_with_reply(h: &Harness, reply: &str) -> (String, String) {
    let sid = h.fake.seed_session("Plan the CRLF work", None);
    h.fake.script(&sid, Reply::text(reply));
    let sent: Sent = serde_json::from_value(
        h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
            session_id: sid.clone(),
            text: "Write the plan".into(),
            choice: None,
            attachments: Vec::new(),
            revert_to: None,
        }))
        .await
        .expect("prompt sent"),
    )
    .expect("sent");
    h.fake.wait_turns(&sid, 1, SHORT).await;
    let assistant = h
        .fake
        .messages(&sid)
        .into_iter()
        .find(|m| m.info["role"] == "assistant" && m.info["parentID"] == sent.message_id.as_str())
        .and_then(|m| m.info["id"].as_str().map(str::to_owned))
        .expect("the assistant reply");
    (sid, assistant)
}

/// How one review went: its first progress, its last, and the notices and changes meanwhile.
struct Run {
    first: ReviewProgress,
    last: ReviewProgress,
    notices: Vec<Notice>,
    changes: Vec<Change>,
}

/// Sends `request` (a `ColdReview` or a `/cold-review` command) and waits for its review to end.
async fn review(h: &Harness, request: Request) -> Run {
    let (first, changes) = start_review(h, request).await;
    review_end(first, changes).await
}

/// Sends `request` and answers the review's first progress, with the changes from before it.
async fn start_review(
    h: &Harness,
    request: Request,
) -> (
    ReviewProgress,
    tokio::sync::broadcast::Receiver<crosscheck_core::api_types::Stamped>,
) {
    let changes = h.core.subscribe();
    let value = h.request(request).await.expect("the review starts");
    // `/cold-review` answers what it started; `ColdReview` answers the progress itself.
    let value = match value.get("kind") {
        Some(kind) if kind == "coldReview" => value["review"].clone(),
        _ => value,
    };
    let first: ReviewProgress = serde_json::from_value(value).expect("review progress");
    assert_eq!(first.status, ReviewRunStatus::Running);
    (first, changes)
}

/// Waits for the review `first` started to end.
async fn review_end(
    first: ReviewProgress,
    mut changes: tokio::sync::broadcast::Receiver<crosscheck_core::api_types::Stamped>,
) -> Run {
    let deadline = tokio::time::Instant::now() + SHORT;
    let mut notices = Vec::new();
    let mut seen = Vec::new();
    loop {
        let stamped = next_change(&mut changes, deadline, "the review to end").await;
        if let Change::Notice { notice } = &stamped.change {
            notices.push(notice.clone());
        }
        let last = match &stamped.change {
            Change::Review { review } if review.id == first.id => {
                (review.status != ReviewRunStatus::Running).then(|| review.clone())
            }
            _ => None,
        };
        seen.push(stamped.change);
        if let Some(last) = last {
            // The notice is pushed just before the final progress.
            return Run {
                first,
                last,
                notices,
                changes: seen,
            };
        }
    }
}

async fn list(h: &Harness) -> Vec<LedgerEntry> {
    serde_json::from_value(
        h.request(Request::ListReviews(
            crosscheck_core::requests::ListReviews { limit: None },
        ))
        .await
        .expect("list"),
    )
    .expect("ledger entries")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_cold_review_reviews_the_latest_assistant_reply_and_records_it() {
    let reviewer = ModelServer::start();
    reviewer.always(Answer::Text(plan_one_flag()));
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;
    let (sid, assistant) = session_with_reply(&h, PLAN).await;

    let run = review(
        &h,
        Request::RunCommand(crosscheck_core::requests::RunCommand {
            session_id: sid.clone(),
            command: "cold-review".into(),
            arguments: String::new(),
            choice: None,
        }),
    )
    .await;
    assert_eq!(run.first.source, ReviewSource::Message);
    assert_eq!(run.first.message_id.as_deref(), Some(assistant.as_str()));
    assert_eq!(run.first.session_id, sid);
    assert_eq!(
        run.last.status,
        ReviewRunStatus::Done,
        "{:?}",
        run.last.error
    );
    let entry = run
        .last
        .entry
        .clone()
        .expect("a done review carries its row");
    assert_eq!(entry.source, ReviewSource::Message);
    assert_eq!(entry.kind, ReviewKind::Plan);
    assert_eq!(entry.status, ReviewStatus::Flagged);
    assert_eq!(entry.verdict.as_deref(), Some("FLAGS (1)"));
    assert_eq!(entry.findings, Some(1));
    assert_eq!(entry.author.as_deref(), Some("fake-model"));
    assert_eq!(entry.reviewer.as_deref(), Some("gpt-5"));
    assert_eq!(entry.review.as_deref(), Some(plan_one_flag().as_str()));
    assert_eq!(entry.cwd, h.fake.directory);
    // The row names the session and reply it came from (the panel opens them from it).
    assert_eq!(entry.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(entry.message_id.as_deref(), Some(assistant.as_str()));
    assert!(entry.earlier.is_empty());

    // The reviewer got the message's text as a plan from a message, and nothing else of the
    // session; the command never reached OpenCode.
    let sent = reviewer.user_messages();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].starts_with("PLAN (message):"), "{}", sent[0]);
    assert!(sent[0].contains(PLAN.trim()), "{}", sent[0]);
    assert!(!sent[0].contains("Write the plan"), "{}", sent[0]);
    assert_eq!(h.fake.count("POST /session/:id/command"), 0);

    // The Reviews tab opened, and a notice tells the outcome.
    assert!(run.changes.iter().any(|c| matches!(
        c,
        Change::Tabs { tabs, active, reveal: true, .. }
            if active.as_deref() == Some("reviews")
                && tabs.iter().any(|t| t.mode == TabMode::Reviews && t.dedupe_key == "reviews")
    )));
    let notice = run
        .notices
        .iter()
        .find(|n| n.code == "notice.coldReviewFlagged")
        .unwrap_or_else(|| panic!("a flagged notice; got {:?}", run.notices));
    assert_eq!(notice.level, NoticeLevel::Info);
    assert_eq!(notice.params.get("count").map(String::as_str), Some("1"));

    // The row is listed, and its text is kept for the panel.
    let rows = list(&h).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0], entry);
    let detail: ReviewDetail = serde_json::from_value(
        h.request(Request::GetReview(crosscheck_core::requests::GetReview {
            kind: ReviewKind::Plan,
            key: entry.key.clone(),
        }))
        .await
        .expect("detail"),
    )
    .expect("review detail");
    assert_eq!(detail.text.as_deref(), Some(PLAN.trim()));

    // An explicit review always runs, even on a text the ledger already holds.
    reviewer.always(Answer::Text(plan_clean()));
    let again = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: Some(assistant.clone()),
            path: None,
        }),
    )
    .await;
    assert_eq!(again.first.key, entry.key);
    let entry = again.last.entry.expect("row");
    assert_eq!(entry.status, ReviewStatus::Clean);
    assert_eq!(reviewer.seen().len(), 2);
    // The first review is kept as the row's history, not replaced.
    assert_eq!(entry.earlier.len(), 1, "{:?}", entry.earlier);
    assert_eq!(entry.earlier[0].status, ReviewStatus::Flagged);
    assert_eq!(entry.earlier[0].findings, Some(1));
    assert_eq!(entry.earlier[0].reviewer.as_deref(), Some("gpt-5"));
    assert_eq!(list(&h).await[0].earlier, entry.earlier);
    assert!(
        again
            .notices
            .iter()
            .any(|n| n.code == "notice.coldReviewClean" && n.level == NoticeLevel::Success)
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_file_is_reviewed_with_source_draft() {
    let reviewer = ModelServer::start();
    reviewer.always(Answer::Text(plan_one_flag()));
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;
    let (sid, _) = session_with_reply(&h, "I wrote the plan to docs/plan.md.").await;
    let docs = std::path::Path::new(&h.fake.directory).join("docs");
    std::fs::create_dir_all(&docs).expect("docs");
    std::fs::write(docs.join("plan.md"), PLAN).expect("plan file");

    let run = review(
        &h,
        Request::RunCommand(crosscheck_core::requests::RunCommand {
            session_id: sid.clone(),
            command: "/cold-review".into(),
            arguments: " docs/plan.md ".into(),
            choice: None,
        }),
    )
    .await;
    let full = docs.join("plan.md").display().to_string();
    assert_eq!(run.first.source, ReviewSource::Draft);
    assert_eq!(run.first.path.as_deref(), Some(full.as_str()));
    assert_eq!(run.first.message_id, None);
    let entry = run.last.entry.expect("row");
    assert_eq!(entry.source, ReviewSource::Draft);
    assert_eq!(entry.path.as_deref(), Some(full.as_str()));
    assert_eq!(entry.status, ReviewStatus::Flagged);
    // The file's author is the model that answered last in the session.
    assert_eq!(entry.author.as_deref(), Some("fake-model"));
    let sent = reviewer.user_messages();
    assert!(
        sent[0].starts_with(&format!("PLAN (draft, {full}):")),
        "{}",
        sent[0]
    );
    assert!(sent[0].contains(PLAN.trim_end()), "{}", sent[0]);

    // An absolute path works the same; a missing file is refused at once, naming it.
    let absolute = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: None,
            path: Some(full.clone()),
        }),
    )
    .await;
    assert_eq!(absolute.last.status, ReviewRunStatus::Done);
    let err = h
        .request(Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: None,
            path: Some("docs/missing.md".into()),
        }))
        .await
        .expect_err("a missing file is an error");
    assert_eq!(err.code, crosscheck_core::ErrorCode::InvalidRequest);
    assert!(err.message.contains("docs/missing.md"), "{}", err.message);
    assert_eq!(reviewer.seen().len(), 2);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_reviewer_ends_as_a_clear_failure_and_an_unreviewed_row() {
    let down = unreachable_base_url();
    let h = harness(Some(&down), Some("sk-test")).await;
    let (sid, _) = session_with_reply(&h, PLAN).await;

    let run = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: None,
            path: None,
        }),
    )
    .await;
    assert_eq!(run.last.status, ReviewRunStatus::Failed);
    let error = run.last.error.clone().expect("a failed review says why");
    assert_eq!(error.code, crosscheck_core::ErrorCode::ReviewFailed);
    assert!(
        error.message.contains("could not be reached"),
        "{}",
        error.message
    );
    let entry = run.last.entry.clone().expect("the unreviewed row");
    assert_eq!(entry.status, ReviewStatus::Unreviewed);
    assert_eq!(entry.outcome, "transport");
    let notice = run
        .notices
        .iter()
        .find(|n| n.level == NoticeLevel::Error)
        .unwrap_or_else(|| panic!("an error notice; got {:?}", run.notices));
    assert_eq!(notice.code, "notice.coldReviewFailed");
    assert_eq!(
        notice.params.get("code").map(String::as_str),
        Some("review_failed")
    );
    assert!(
        notice.message.contains("could not be reached"),
        "{notice:?}"
    );
    assert_eq!(list(&h).await[0].status, ReviewStatus::Unreviewed);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_api_key_names_the_variable_and_the_opencode_route() {
    // No base URL and no key: the vendor's own URL, where a missing key is an auth failure.
    // The route is `direct`, so OpenCode's providers are not tried.
    let h = harness(None, None).await;
    let mut config = review_config();
    config["route"] = json!("direct");
    std::fs::write(
        h.dir.path().join("config").join("review.json"),
        config.to_string(),
    )
    .expect("review.json");
    let (sid, _) = session_with_reply(&h, PLAN).await;
    let run = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid,
            message_id: None,
            path: None,
        }),
    )
    .await;
    assert_eq!(run.last.status, ReviewRunStatus::Failed);
    let error = run.last.error.expect("error");
    assert_eq!(error.code, crosscheck_core::ErrorCode::ReviewFailed);
    assert!(
        error.message.ends_with(
            ": no API key for openai: set OPENAI_API_KEY or choose OpenCode's providers in Settings"
        ),
        "{}",
        error.message
    );
    assert_eq!(run.last.entry.expect("row").outcome, "auth");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_key_the_app_asks_the_connected_opencode_for_the_reviewer() {
    // The default route: no key, so OpenCode's providers; the fake server has no GPT-5.
    let h = harness(None, None).await;
    let (sid, _) = session_with_reply(&h, PLAN).await;
    let run = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid,
            message_id: None,
            path: None,
        }),
    )
    .await;
    assert_eq!(run.last.status, ReviewRunStatus::Failed);
    let error = run.last.error.expect("error");
    assert!(
        error.message.ends_with(
            ": OpenCode has no model for gpt-5 (its providers: fake): connect the provider in OpenCode or choose a floor model it has in Settings"
        ),
        "{}",
        error.message
    );
    assert_eq!(run.last.entry.expect("row").outcome, "config");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_reviews_shows_rows_another_engine_wrote_newest_first() {
    let reviewer = ModelServer::start();
    reviewer.always(Answer::Text(plan_one_flag()));
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;
    let (sid, _) = session_with_reply(&h, PLAN).await;
    let app = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid,
            message_id: None,
            path: None,
        }),
    )
    .await;
    let app_key = app.last.entry.expect("row").key;

    // A gate run: another engine (another process, as far as SQLite is concerned), gate cadence.
    tokio::time::sleep(Duration::from_millis(5)).await;
    reviewer.always(Answer::Text(plan_clean()));
    let gate = gate_engine(&h, &reviewer.openai_base());
    let gate_text = "# Gate plan\n\nStatus: Not started\n";
    let decision = gate
        .review(ReviewRequest::plan(
            "/elsewhere/project",
            gate_text,
            ReviewSource::Parameter,
        ))
        .await
        .expect("the gate reviews");
    assert_eq!(decision.status, ReviewStatus::Clean);

    let rows = list(&h).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].key, decision.key, "newest first");
    assert_eq!(rows[0].source, ReviewSource::Parameter);
    assert_eq!(rows[0].cwd, "/elsewhere/project");
    assert_eq!(rows[1].key, app_key);
    let limited: Vec<LedgerEntry> = serde_json::from_value(
        h.request(Request::ListReviews(
            crosscheck_core::requests::ListReviews { limit: Some(1) },
        ))
        .await
        .expect("list"),
    )
    .expect("entries");
    assert_eq!(limited.len(), 1);

    // The gate's text is kept too; an unknown key has no detail.
    let detail: ReviewDetail = serde_json::from_value(
        h.request(Request::GetReview(crosscheck_core::requests::GetReview {
            kind: ReviewKind::Plan,
            key: decision.key.clone(),
        }))
        .await
        .expect("detail"),
    )
    .expect("detail");
    assert_eq!(detail.text.as_deref(), Some(gate_text));
    let none = h
        .request(Request::GetReview(crosscheck_core::requests::GetReview {
            kind: ReviewKind::Commit,
            key: decision.key,
        }))
        .await
        .expect("detail");
    assert!(none.is_null());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_again_while_a_review_runs_joins_it() {
    let reviewer = ModelServer::start();
    reviewer.always(Answer::delayed(
        Duration::from_millis(600),
        Answer::Text(plan_one_flag()),
    ));
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;
    let (sid, assistant) = session_with_reply(&h, PLAN).await;
    let ask = || {
        h.request(Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: Some(assistant.clone()),
            path: None,
        }))
    };
    let mut changes = h.core.subscribe();
    let (a, b) = tokio::join!(ask(), ask());
    let a: ReviewProgress = serde_json::from_value(a.expect("a")).expect("progress");
    let b: ReviewProgress = serde_json::from_value(b.expect("b")).expect("progress");
    assert_eq!(a.id, b.id, "one review for one text at a time");
    // Once it ended, the next request starts a new review.
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        let stamped = next_change(&mut changes, deadline, "the joined review to end").await;
        if matches!(&stamped.change, Change::Review { review } if review.id == a.id && review.status == ReviewRunStatus::Done)
        {
            break;
        }
    }
    assert_eq!(reviewer.seen().len(), 1);
    let next = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid,
            message_id: Some(assistant),
            path: None,
        }),
    )
    .await;
    assert_ne!(next.first.id, a.id);
    assert_eq!(reviewer.seen().len(), 2);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_reviewed_is_refused_at_once() {
    let reviewer = ModelServer::start();
    reviewer.always(Answer::Text(plan_one_flag()));
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;

    // No assistant reply yet.
    let empty = h.fake.seed_session("Empty", None);
    let err = h
        .request(Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: empty,
            message_id: None,
            path: None,
        }))
        .await
        .expect_err("nothing to review");
    assert_eq!(err.code, crosscheck_core::ErrorCode::NoAssistantText);

    // A user message is not a plan.
    let (sid, _) = session_with_reply(&h, PLAN).await;
    let user = h
        .fake
        .messages(&sid)
        .into_iter()
        .find(|m| m.info["role"] == "user")
        .and_then(|m| m.info["id"].as_str().map(str::to_owned))
        .expect("user message");
    let err = h
        .request(Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: Some(user),
            path: None,
        }))
        .await
        .expect_err("user messages are refused");
    assert_eq!(err.code, crosscheck_core::ErrorCode::InvalidRequest);

    // An unknown session.
    let err = h
        .request(Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: "ses_nope".into(),
            message_id: None,
            path: None,
        }))
        .await
        .expect_err("unknown session");
    assert_eq!(err.code, crosscheck_core::ErrorCode::NotFound);

    // A plan file outside the session's folder, directly, by `..` or through a link.
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("secret.md");
    std::fs::write(&secret, PLAN).expect("outside file");
    let inside = std::path::Path::new(&h.fake.directory);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, inside.join("link.md")).expect("link");
    let up = format!(
        "{}/secret.md",
        std::iter::repeat_n("..", inside.components().count())
            .collect::<Vec<_>>()
            .join("/")
            + &outside.path().display().to_string()
    );
    for path in [secret.display().to_string(), up, "link.md".to_owned()] {
        let err = h
            .request(Request::ColdReview(crosscheck_core::requests::ColdReview {
                session_id: sid.clone(),
                message_id: None,
                path: Some(path.clone()),
            }))
            .await
            .expect_err("outside the session's folder");
        assert_eq!(
            err.code,
            crosscheck_core::ErrorCode::InvalidRequest,
            "{path}"
        );
        assert!(
            err.message.contains("outside the session's folder"),
            "{path}: {}",
            err.message
        );
    }
    assert!(reviewer.seen().is_empty());

    // The command is offered with a locale key.
    let commands: Vec<CommandEntry> = serde_json::from_value(
        h.request(Request::Commands(crosscheck_core::requests::Commands {
            directory: None,
            ..Default::default()
        }))
        .await
        .expect("commands"),
    )
    .expect("entries");
    let entry = commands
        .iter()
        .find(|c| c.name == "cold-review")
        .expect("cold-review");
    assert!(entry.builtin);
    assert_eq!(entry.description_key.as_deref(), Some("command.coldReview"));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_run_in_another_process_is_pushed_without_polling() {
    let reviewer = ModelServer::start();
    let h = harness(Some(&reviewer.openai_base()), Some("sk-test")).await;
    let mut changes = h.core.subscribe();

    // A gate opens its own connection to the ledger and reviews a plan; nobody asks the app.
    reviewer.always(Answer::Text(plan_one_flag()));
    let gate = gate_engine(&h, &reviewer.openai_base());
    let decision = gate
        .review(ReviewRequest::plan(
            "/elsewhere/project",
            "# Gate plan\n\nStatus: Not started\n",
            ReviewSource::Parameter,
        ))
        .await
        .expect("the gate reviews");
    assert_eq!(decision.status, ReviewStatus::Flagged);

    // The finished row reaches the UI as a pushed change, with its findings parsed.
    let deadline = tokio::time::Instant::now() + SHORT;
    let row = loop {
        let stamped = next_change(&mut changes, deadline, "the gate's row to be pushed").await;
        if let Change::Ledger { entries } = stamped.change
            && let Some(row) = entries.into_iter().find(|e| e.key == decision.key)
            && row.status == ReviewStatus::Flagged
        {
            break row;
        }
    };
    assert_eq!(row.source, ReviewSource::Parameter);
    assert_eq!(row.failed_checks.len(), 1, "{:?}", row.failed_checks);
    assert!(
        row.failed_checks[0].starts_with("P"),
        "{:?}",
        row.failed_checks
    );
    h.stop().await;
}

/// The review config of the OpenCode route on the fake server: its one model reviews.
fn opencode_config(timeout_ms: u64) -> serde_json::Value {
    json!({"floorModel": "fake/fake-model", "reviewTimeoutMs": timeout_ms, "reviewTimeoutMsPer1000Chars": 0})
}

/// The sessions the fake got prompts for, other than `sid`: the review's scratch sessions.
fn scratch_prompts(h: &Harness, sid: &str) -> Vec<(String, serde_json::Value)> {
    h.fake
        .requests()
        .into_iter()
        .filter(|r| r.route == "POST /session/:id/prompt_async")
        .filter_map(|r| r.session_id.map(|s| (s, r.body)))
        .filter(|(s, _)| s != sid)
        .collect()
}

/// Whether a change shows a scratch session to a view (a listing, a row, a status).
fn shows_scratch(change: &Change, scratch: &str) -> bool {
    match change {
        Change::SessionsReset {
            sessions, statuses, ..
        } => sessions.iter().any(|s| s.session.id == scratch) || statuses.contains_key(scratch),
        Change::SessionUpserted { session } => session.session.id == scratch,
        Change::Status { session_id, .. } => session_id == scratch,
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_opencode_review_goes_through_the_turn_room_and_a_lost_answer_is_not_resent() {
    // No key: the connected OpenCode reviews, in a scratch session, through the turn room. The
    // scratch prompt's answer is lost on the way although the server took it: the prompt is
    // looked for, found, and not sent again.
    let h = harness_with(opencode_config(60_000), None, None).await;
    let (sid, _) = session_with_reply(&h, PLAN).await;
    h.fake.script_any(Reply::text(plan_clean()));
    h.fake.cut_next("PROMPT", "*");
    let run = review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: None,
            path: None,
        }),
    )
    .await;
    assert_eq!(
        run.last.status,
        ReviewRunStatus::Done,
        "{:?}",
        run.last.error
    );
    let entry = run.last.entry.expect("row");
    assert_eq!(entry.status, ReviewStatus::Clean);
    assert_eq!(entry.reviewer.as_deref(), Some("fake/fake-model"));
    assert_eq!(entry.review.as_deref(), Some(plan_clean().trim()));

    // One scratch session, one prompt: the lost answer did not make it go twice.
    let prompts = scratch_prompts(&h, &sid);
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    let (scratch, body) = &prompts[0];
    assert!(body["messageID"].is_string(), "{body}");
    assert_eq!(body["tools"], json!({"*": false}));
    assert!(
        body["system"].as_str().is_some_and(|s| !s.is_empty()),
        "{body}"
    );
    assert_eq!(
        body["model"],
        json!({"providerID": "fake", "modelID": "fake-model"})
    );
    assert_eq!(
        h.fake.messages(scratch).len(),
        0,
        "deleted with its messages"
    );
    assert!(
        h.fake.session(scratch).is_none(),
        "the scratch session is deleted"
    );
    // It never reached a view, nor the session list.
    assert!(
        !run.changes.iter().any(|c| shows_scratch(c, scratch)),
        "{:?}",
        run.changes
    );
    assert!(
        !h.core
            .snapshot()
            .sessions
            .iter()
            .any(|s| s.session.id == *scratch)
    );
    h.stop().await;
}

/// A cold review through OpenCode whose reviewer never answers, with a time limit of an hour
/// (only what the test does can end it): the harness, the reviewed session, a change stream
/// subscribed before the review started, and the review's first progress with its changes.
struct HungReview {
    h: Harness,
    sid: String,
    watched: tokio::sync::broadcast::Receiver<crosscheck_core::api_types::Stamped>,
    first: ReviewProgress,
    changes: tokio::sync::broadcast::Receiver<crosscheck_core::api_types::Stamped>,
}

/// Starts a [`HungReview`].
async fn hung_review() -> HungReview {
    let h = harness_with(opencode_config(3_600_000), None, None).await;
    let (sid, _) = session_with_reply(&h, PLAN).await;
    h.fake.script_any(Reply::hang(plan_clean()));
    let watched = h.core.subscribe();
    let (first, changes) = start_review(
        &h,
        Request::ColdReview(crosscheck_core::requests::ColdReview {
            session_id: sid.clone(),
            message_id: None,
            path: None,
        }),
    )
    .await;
    HungReview {
        h,
        sid,
        watched,
        first,
        changes,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scratch_session_deleted_mid_review_ends_it_with_a_clear_failure() {
    // The time limit is an hour: only the deletion can end this review.
    let HungReview {
        h,
        sid,
        mut watched,
        first,
        changes,
    } = hung_review().await;
    let reviewed = sid.clone();
    h.fake
        .wait_until("the scratch session's turn", SHORT, move |s| {
            s.requests.iter().any(|r| {
                r.route == "POST /session/:id/prompt_async"
                    && r.session_id.as_deref() != Some(reviewed.as_str())
            })
        })
        .await;
    let scratch = scratch_prompts(&h, &sid)[0].0.clone();
    h.fake.wait_running(&scratch, SHORT).await;
    // The app has seen the reviewer's answer under way before the session goes.
    wait_change(&mut watched, SHORT, "the reviewer's turn under way", |c| {
        matches!(c, Change::MessageUpserted { info } if info.session_id == scratch && info.role == "assistant")
    })
    .await;
    h.fake.remove_session(&scratch);
    let run = review_end(first, changes).await;
    assert_eq!(run.last.status, ReviewRunStatus::Failed);
    let error = run.last.error.expect("error");
    assert!(
        error
            .message
            .contains("OpenCode lost the review's session (it was deleted during the review)"),
        "{}",
        error.message
    );
    assert_eq!(run.last.entry.expect("row").outcome, "http_error");
    assert_eq!(scratch_prompts(&h, &sid).len(), 1);
    assert!(
        !run.changes.iter().any(|c| shows_scratch(c, &scratch)),
        "{:?}",
        run.changes
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_dying_mid_review_ends_it_at_once_as_unreachable() {
    // The time limit is an hour: only the server going away can end this review.
    let HungReview {
        h,
        sid,
        mut watched,
        first,
        changes,
    } = hung_review().await;
    wait_change(&mut watched, SHORT, "the reviewer's turn under way", |c| {
        matches!(c, Change::MessageUpserted { info } if info.session_id != sid && info.role == "assistant")
    })
    .await;
    h.fake.go_down();
    let run = review_end(first, changes).await;
    assert_eq!(run.last.status, ReviewRunStatus::Failed);
    let error = run.last.error.expect("error");
    assert!(
        error.message.contains(&format!(
            "OpenCode at {} could not be reached",
            h.fake.base_url
        )),
        "{}",
        error.message
    );
    assert_eq!(run.last.entry.expect("row").outcome, "transport");
    h.fake.come_back();
    h.stop().await;
}
