//! Wire contract of the reviewer call against a scripted local model server, for the
//! Anthropic Messages and OpenAI-compatible chat-completions shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::{Duration, Instant};

use crate::common::{ModelServer, PLAN, Reply, clean_reply, flags_reply, quick, rig};
use crosscheck_review::prompt::REPAIR_INSTRUCTION;
use crosscheck_review::{
    Action, COMMIT_REVIEW_SYSTEM_PROMPT, PLAN_REVIEW_SYSTEM_PROMPT, ReviewRequest, ReviewSource,
    ReviewStatus,
};
use serde_json::{Value, json};

fn plan(text: &str) -> ReviewRequest {
    let mut r = ReviewRequest::plan("/home/dev/project", text, ReviewSource::Draft);
    r.path = Some("/home/dev/project/.plans/widget.md".into());
    r
}

fn has_key_anywhere(v: &Value, key: &str) -> bool {
    match v {
        Value::Object(m) => m.contains_key(key) || m.values().any(|v| has_key_anywhere(v, key)),
        Value::Array(a) => a.iter().any(|v| has_key_anywhere(v, key)),
        _ => false,
    }
}

#[tokio::test]
async fn anthropic_request_carries_the_plan_the_p_list_and_max_tokens_never_temperature() {
    let server = ModelServer::start();
    server.push(Reply::Text(flags_reply()));
    let rig = rig(
        &server.base,
        json!({"maxTokens": 1234, "reviewTimeoutMs": 3000}),
    );
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Flagged);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.headers["x-api-key"], "test-anthropic-key");
    assert_eq!(req.headers["anthropic-version"], "2023-06-01");
    assert_eq!(req.body["model"], "claude-sonnet-4-5");
    assert_eq!(req.body["max_tokens"], 1234);
    assert!(!has_key_anywhere(&req.body, "temperature"), "{}", req.raw);
    assert_eq!(req.body["system"], PLAN_REVIEW_SYSTEM_PROMPT);
    for p in 1..=8 {
        assert!(
            req.body["system"]
                .as_str()
                .unwrap()
                .contains(&format!("\nP{p} "))
        );
    }
    let user = req.body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(req.body["messages"][0]["role"], "user");
    assert!(
        user.starts_with("PLAN (draft, /home/dev/project/.plans/widget.md):\n\n"),
        "{user}"
    );
    assert!(user.contains(PLAN));
    assert!(!user.contains("truncated"));
}

#[tokio::test]
async fn openai_request_carries_the_plan_the_p_list_and_max_tokens_never_temperature() {
    let server = ModelServer::start();
    server.push(Reply::Text(clean_reply()));
    let rig = rig(&server.base, json!({"maxTokens": 777}));
    let mut request = plan(PLAN);
    request.author = Some("gpt-5".into()); // ranks above the floor: reviews itself
    request.source = ReviewSource::Parameter;
    request.path = None;
    let decision = rig.engine.review(request).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Clean);
    assert_eq!(decision.reviewer.as_deref(), Some("gpt-5"));
    let req = &server.seen()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.headers["authorization"], "Bearer test-openai-key");
    assert_eq!(req.body["model"], "gpt-5");
    assert_eq!(req.body["max_tokens"], 777);
    assert!(!has_key_anywhere(&req.body, "temperature"), "{}", req.raw);
    assert_eq!(req.body["messages"][0]["role"], "system");
    assert_eq!(
        req.body["messages"][0]["content"],
        PLAN_REVIEW_SYSTEM_PROMPT
    );
    let user = req.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.starts_with("PLAN (parameter):\n\n"), "{user}");
    assert!(user.contains(PLAN));
}

#[tokio::test]
async fn max_completion_tokens_field_is_configurable() {
    let server = ModelServer::start();
    server.push(Reply::Text(clean_reply()));
    let rig = rig(
        &server.base,
        json!({"providers": {"openai": {"kind": "openai", "baseUrl": format!("{}/v1", server.base),
               "apiKey": "cfg-key", "maxTokensField": "max_completion_tokens"}},
               "maxTokens": 99}),
    );
    let mut request = plan(PLAN);
    request.author = Some("gpt-5".into());
    rig.engine.review(request).await.unwrap();
    let req = &server.seen()[0];
    assert_eq!(req.body["max_completion_tokens"], 99);
    assert!(req.body.get("max_tokens").is_none());
    assert_eq!(req.headers["authorization"], "Bearer cfg-key");
}

#[tokio::test]
async fn commit_request_carries_the_diff_the_file_list_and_the_j_list() {
    let server = ModelServer::start();
    server.push(Reply::Text(
        (1..=8)
            .map(|n| format!("J{n} PASS — ok\n"))
            .collect::<String>()
            + "REVIEWED src/a.rs\nREVIEWED CHANGELOG.md\nVERDICT: CLEAN",
    ));
    let rig = rig(&server.base, quick());
    let diff = "diff --git a/src/a.rs b/src/a.rs\n+fn a() {}\n";
    let request = ReviewRequest::commit("/r", diff, vec!["src/a.rs".into(), "CHANGELOG.md".into()]);
    let decision = rig.engine.review(request).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Clean);
    let req = &server.seen()[0];
    assert_eq!(req.body["system"], COMMIT_REVIEW_SYSTEM_PROMPT);
    let user = req.body["messages"][0]["content"].as_str().unwrap();
    assert!(user.starts_with("COMMIT (staged, 2 files):\n\n"), "{user}");
    assert!(user.contains("- src/a.rs\n- CHANGELOG.md\n"));
    assert!(user.contains(diff));
}

#[tokio::test]
async fn the_timeout_is_honoured() {
    let server = ModelServer::start();
    server.always(Reply::Hang);
    let rig = rig(
        &server.base,
        json!({"reviewTimeoutMs": 300, "reviewTimeoutMsPer1000Chars": 0}),
    );
    let started = Instant::now();
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(decision.status, ReviewStatus::Unreviewed);
    assert_eq!(decision.outcome, "timeout");
    assert_eq!(decision.action, Action::Block);
}

#[tokio::test]
async fn a_transport_error_becomes_unreviewed() {
    // Bind and drop a listener: the port is closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let rig = rig(&format!("http://127.0.0.1:{port}"), quick());
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Unreviewed);
    assert_eq!(decision.outcome, "transport");
    assert!(decision.reason.unwrap().contains("could not run"));
}

#[tokio::test]
async fn a_missing_key_for_the_vendor_url_is_an_auth_outcome_without_a_call() {
    let server = ModelServer::start();
    let dir = tempfile::tempdir().unwrap();
    let engine = crosscheck_review::Engine::open(crosscheck_review::EngineOptions {
        database_path: dir.path().join("db"),
        config_dir: dir.path().join("cfg"),
        logger: crosscheck_review::Logger::memory().0,
        env: crosscheck_review::Env::Map(Default::default()),
    })
    .unwrap();
    let decision = engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(decision.outcome, "auth");
    assert_eq!(decision.status, ReviewStatus::Unreviewed);
    assert_eq!(server.count(), 0);
}

/// Every malformed reply shape yields an outcome (never a panic, never clean).
#[tokio::test]
async fn chaos_replies_yield_an_outcome_for_both_shapes() {
    let cases: Vec<(&str, Reply, &str)> = vec![
        (
            "non-JSON",
            Reply::Raw(200, "text/plain", "certainly! here is my review".into()),
            "bad_reply",
        ),
        (
            "HTML error page 200",
            Reply::Raw(
                200,
                "text/html",
                "<!DOCTYPE html><html><body>Bad gateway</body></html>".into(),
            ),
            "bad_reply",
        ),
        (
            "HTML error page 502",
            Reply::Raw(
                502,
                "text/html",
                "<html><body>502 Bad Gateway</body></html>".into(),
            ),
            "http_error",
        ),
        ("empty object", Reply::Json(200, json!({})), "bad_reply"),
        (
            "empty content",
            Reply::Json(
                200,
                json!({"content": [], "choices": [{"message": {"content": ""}}]}),
            ),
            "bad_reply",
        ),
        (
            "wrong types",
            Reply::Json(
                200,
                json!({"content": "text", "choices": [{"message": {"content": 42}}]}),
            ),
            "bad_reply",
        ),
        (
            "null content",
            Reply::Json(
                200,
                json!({"content": null, "choices": [{"message": {"content": null}}]}),
            ),
            "bad_reply",
        ),
        (
            "array root",
            Reply::Json(200, json!([1, 2, 3])),
            "bad_reply",
        ),
        (
            "error object",
            Reply::Json(
                200,
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            "bad_reply",
        ),
        (
            "401",
            Reply::Json(401, json!({"error": {"message": "invalid x-api-key"}})),
            "auth",
        ),
        (
            "403",
            Reply::Json(403, json!({"error": {"message": "forbidden"}})),
            "auth",
        ),
        (
            "429",
            Reply::Json(429, json!({"error": {"message": "rate limited"}})),
            "rate_limited",
        ),
        (
            "500",
            Reply::Json(500, json!({"error": {"message": "internal"}})),
            "http_error",
        ),
        (
            "529 overloaded",
            Reply::Json(529, json!({"error": {"message": "overloaded"}})),
            "http_error",
        ),
        (
            "truncated JSON",
            Reply::Raw(
                200,
                "application/json",
                "{\"content\": [{\"type\": \"text\", \"text\": \"P1 PA".into(),
            ),
            "bad_reply",
        ),
        (
            "aborted body",
            Reply::Cut("{\"content\": [{\"type\": \"te".into()),
            "transport",
        ),
        (
            "huge body",
            Reply::Raw(
                200,
                "application/json",
                format!(
                    "{{\"content\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}",
                    "x".repeat(3 * 1024 * 1024)
                )
                .into(),
            ),
            "bad_reply",
        ),
        ("hang", Reply::Hang, "timeout"),
    ];
    for author in [None, Some("gpt-5")] {
        let server = ModelServer::start();
        let rig = rig(
            &server.base,
            json!({"reviewTimeoutMs": 400, "reviewTimeoutMsPer1000Chars": 0}),
        );
        for (i, (name, reply, code)) in cases.iter().enumerate() {
            server.push(reply.clone());
            let mut request = plan(&format!("{PLAN}\nchaos case {i}"));
            request.author = author.map(str::to_owned);
            let decision = rig.engine.review(request).await.unwrap();
            assert_eq!(
                decision.status,
                ReviewStatus::Unreviewed,
                "{author:?} {name}"
            );
            assert_eq!(decision.outcome, *code, "{author:?} {name}");
            assert_eq!(decision.action, Action::Block, "{author:?} {name}");
        }
        assert_eq!(server.count(), cases.len());
    }
}

#[tokio::test]
async fn a_reply_without_a_verdict_is_repaired_once() {
    let server = ModelServer::start();
    let broken = "P1 FAIL — \"Increments\": no files.\nOverall this looks fine.";
    server.push(Reply::Text(broken.into()));
    server.push(Reply::Text(
        "P1 FAIL — \"Increments\": no files.\nP2 PASS — ok\nVERDICT: FLAGS (1)".into(),
    ));
    let rig = rig(&server.base, quick());
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Flagged);
    assert_eq!(decision.outcome, "flagged");
    assert_eq!(decision.verdict.as_deref(), Some("FLAGS (1)"));
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let messages = seen[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"], broken);
    assert_eq!(messages[2]["content"], REPAIR_INSTRUCTION);
}

#[tokio::test]
async fn a_count_mismatch_still_broken_after_repair_is_flagged_never_clean() {
    let server = ModelServer::start();
    server.always(Reply::Text(
        "P1 FAIL — \"Scope\": two issues.\nVERDICT: CLEAN".into(),
    ));
    let rig = rig(&server.base, quick());
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(server.count(), 2, "exactly one repair round");
    assert_eq!(decision.status, ReviewStatus::Flagged);
    assert_eq!(decision.outcome, "malformed");
    assert_eq!(decision.action, Action::Block);
    assert!(decision.reason.unwrap().contains("counts as flagged"));
}

#[tokio::test]
async fn a_failed_repair_call_leaves_the_review_flagged() {
    let server = ModelServer::start();
    server.push(Reply::Text("no verdict at all".into()));
    server.push(Reply::Json(500, json!({"error": {"message": "boom"}})));
    let rig = rig(&server.base, quick());
    let decision = rig.engine.review(plan(PLAN)).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Flagged);
    assert_eq!(decision.outcome, "malformed");
    assert_eq!(decision.review.as_deref(), Some("no verdict at all"));
}

#[tokio::test]
async fn truncated_input_is_marked_and_never_clean() {
    let server = ModelServer::start();
    server.always(Reply::Text(clean_reply()));
    let rig = rig(
        &server.base,
        json!({"maxInputChars": 200, "reviewTimeoutMs": 3000}),
    );
    let long = format!("{PLAN}{}", "More detail.\n".repeat(100));
    let decision = rig.engine.review(plan(&long)).await.unwrap();
    let user = server.seen()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        user.contains("[Crosscheck: truncated — the reviewer was sent the first 200 of"),
        "{user}"
    );
    assert!(!user.contains(&long));
    assert!(decision.truncated);
    assert_eq!(decision.status, ReviewStatus::Flagged);
    assert_eq!(decision.outcome, "truncated");
    assert!(decision.reason.unwrap().contains("cannot be clean"));
    let entry = rig.engine.list(1).unwrap().remove(0);
    assert_eq!(entry.status, ReviewStatus::Flagged);
    assert_eq!(entry.outcome, "truncated");
    // A short text under the same config is clean.
    let decision = rig.engine.review(plan("short plan")).await.unwrap();
    assert_eq!(decision.status, ReviewStatus::Clean);
}
