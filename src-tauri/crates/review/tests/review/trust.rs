//! What a repository or a provider cannot turn against the user: a repository's floor the
//! route cannot serve, and a redirect to another origin.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::common::{ModelServer, PLAN, Reply, clean_reply, flags_reply, quick, rig};
use crosscheck_review::{ReviewRequest, ReviewSource, ReviewStatus};
use serde_json::json;

fn plan_in(cwd: &std::path::Path) -> ReviewRequest {
    ReviewRequest::plan(cwd.to_string_lossy(), PLAN, ReviewSource::Draft)
}

fn project_with(rig_dir: &std::path::Path, file: &str) -> std::path::PathBuf {
    let project = rig_dir.join("project");
    std::fs::create_dir_all(project.join(".crosscheck")).unwrap();
    std::fs::write(project.join(".crosscheck").join("review.json"), file).unwrap();
    project
}

/// `{"floorModel": "claude-opus-99-bogus"}` ranks above the user's floor by its name alone;
/// no provider serves it. It is ignored with a warning naming the file, and the user's floor
/// reviews (before, the bogus id was sent, the provider answered 404 and the plan went
/// unreviewed).
#[tokio::test]
async fn a_repository_floor_no_route_serves_is_ignored_and_the_users_floor_reviews() {
    let server = ModelServer::start();
    server.always(Reply::Text(flags_reply()));
    let rig = rig(&server.base, quick());
    let project = project_with(rig.dir.path(), r#"{"floorModel": "claude-opus-99-bogus"}"#);
    let decision = rig.engine.review(plan_in(&project)).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].body["model"], "claude-sonnet-4-5",
        "the user's floor"
    );
    assert_eq!(decision.status, ReviewStatus::Flagged);
    let reason = decision.reason.unwrap();
    let file = project.join(".crosscheck").join("review.json");
    assert!(
        reason.contains(&file.to_string_lossy().into_owned())
            && reason.contains("claude-opus-99-bogus"),
        "the warning names the file and the model: {reason}"
    );
}

/// A model the user's own review.json names (an exact rank pattern) may be the repository's
/// floor, and so may a vendor model Crosscheck knows.
#[tokio::test]
async fn a_repository_may_raise_the_floor_to_a_model_the_user_names_or_a_known_one() {
    for (user, floor) in [
        (
            json!({"reviewTimeoutMs": 3000, "ranks": [{"pattern": "claude-fable-1", "rank": 99}, {"pattern": "claude-sonnet-*", "rank": 70}]}),
            "claude-fable-1",
        ),
        (quick(), "claude-opus-4-1"),
    ] {
        let server = ModelServer::start();
        server.always(Reply::Text(clean_reply()));
        let rig = rig(&server.base, user);
        let project = project_with(rig.dir.path(), &json!({ "floorModel": floor }).to_string());
        let decision = rig.engine.review(plan_in(&project)).await.unwrap();
        assert_eq!(server.seen()[0].body["model"], floor);
        assert_eq!(
            decision.status,
            ReviewStatus::Clean,
            "{:?}",
            decision.reason
        );
    }
}

/// A provider that answers with a redirect to another origin never gets that origin the
/// plan or the key: the second server receives nothing, and the reason says why.
#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed() {
    for status in [301, 302, 307, 308] {
        for path in ["/v1/messages", "/v1/chat/completions"] {
            let other = ModelServer::start();
            other.always(Reply::Text(clean_reply()));
            let server = ModelServer::start();
            server.always(Reply::Redirect(status, format!("{}{path}", other.base)));
            let rig = rig(&server.base, quick());
            let mut request = ReviewRequest::plan("", PLAN, ReviewSource::Draft);
            if path.contains("chat") {
                request.author = Some("gpt-5".into());
            }
            let decision = rig.engine.review(request).await.unwrap();
            assert_eq!(server.count(), 1, "{status} {path}");
            assert_eq!(
                other.count(),
                0,
                "{status} {path}: the other origin got the plan and the key"
            );
            assert_eq!(decision.status, ReviewStatus::Unreviewed);
            let reason = decision.reason.unwrap();
            assert!(
                reason.contains("redirect") && reason.contains("another origin"),
                "{status} {path}: {reason}"
            );
        }
    }
}

/// A redirect within the provider's own origin is still followed.
#[tokio::test]
async fn a_redirect_within_the_same_origin_is_followed() {
    let server = ModelServer::start();
    server.push(Reply::Redirect(307, format!("{}/v1/messages", server.base)));
    server.always(Reply::Text(clean_reply()));
    let rig = rig(&server.base, quick());
    let decision = rig
        .engine
        .review(ReviewRequest::plan("", PLAN, ReviewSource::Draft))
        .await
        .unwrap();
    assert_eq!(server.count(), 2);
    assert_eq!(
        decision.status,
        ReviewStatus::Clean,
        "{:?}",
        decision.reason
    );
}
