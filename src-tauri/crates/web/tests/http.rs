//! Web mode over real HTTP: the token, the loopback Host check, error shapes, static files
//! with the CSP, and the event stream's content type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::net::SocketAddr;

use crosscheck_core::{Api, Core, CoreOptions, OpencodeTarget};
use crosscheck_opencode::ServerConfig;
use crosscheck_web::{CSP, ServeOptions, serve};
use serde_json::{Value, json};

struct Served {
    base: String,
    token: String,
    _dir: tempfile::TempDir,
}

async fn start() -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).expect("mkdir");
    std::fs::write(
        ui.join("index.html"),
        "<!doctype html><title>Crosscheck</title>",
    )
    .expect("index");
    // Nothing listens on port 9: the core keeps trying to connect, the Api still answers.
    let core = Core::start(CoreOptions {
        target: OpencodeTarget::Attach(ServerConfig {
            base_url: "http://127.0.0.1:9".into(),
            password: None,
        }),
        database: dir.path().join("crosscheck.db"),
    })
    .expect("core");
    let token = crosscheck_web::random_token();
    let running = serve(
        Api::new(core),
        ServeOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            ui_dir: ui,
            token: token.clone(),
        },
    )
    .await
    .expect("serve");
    Served {
        base: format!("http://{}", running.addr),
        token,
        _dir: dir,
    }
}

async fn post(s: &Served, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{}/api", s.base))
        .body(body.to_owned());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("send");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn api_needs_the_token() {
    let s = start().await;
    let (status, body) = post(&s, None, r#"{"cmd":"snapshot"}"#).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")));
    let (status, _) = post(
        &s,
        Some("wrong-token-wrong-token-wrong-tok"),
        r#"{"cmd":"snapshot"}"#,
    )
    .await;
    assert_eq!(status, 401);
    let (status, body) = post(&s, Some(&s.token), r#"{"cmd":"snapshot"}"#).await;
    assert_eq!(status, 200);
    assert!(body["connection"]["state"].is_string(), "{body}");
    let url = format!("{}/api?token={}", s.base, s.token);
    let res = reqwest::Client::new()
        .post(url)
        .body(r#"{"cmd":"prompts"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(
        res.status().as_u16(),
        200,
        "the token may come in the query (EventSource cannot set headers)"
    );
}

#[tokio::test]
async fn bad_requests_get_a_code_and_a_message() {
    let s = start().await;
    let (status, body) = post(&s, Some(&s.token), "{not json").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, body) = post(&s, Some(&s.token), r#"{"cmd":"noSuchCommand"}"#).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_request"))
    );
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    let (status, body) = post(
        &s,
        Some(&s.token),
        &json!({"cmd": "openSession", "sessionId": "ses_x"}).to_string(),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (422, Some("opencode_unreachable")),
        "{body}"
    );
}

#[tokio::test]
async fn a_foreign_host_name_is_refused() {
    let s = start().await;
    let res = reqwest::Client::new()
        .post(format!("{}/api", s.base))
        .header("host", "attacker.example")
        .bearer_auth(&s.token)
        .body(r#"{"cmd":"snapshot"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn static_files_carry_the_csp_and_unknown_paths_get_the_app() {
    let s = start().await;
    for path in ["/", "/some/deep/link"] {
        let res = reqwest::get(format!("{}{path}", s.base))
            .await
            .expect("get");
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(res.headers()["content-security-policy"], CSP);
        assert!(
            res.text()
                .await
                .expect("body")
                .contains("<title>Crosscheck</title>")
        );
    }
}

#[tokio::test]
async fn the_event_stream_is_sse_and_needs_the_token() {
    let s = start().await;
    let refused = reqwest::get(format!("{}/api/events", s.base))
        .await
        .expect("get");
    assert_eq!(refused.status().as_u16(), 401);
    let res = reqwest::get(format!("{}/api/events?token={}", s.base, s.token))
        .await
        .expect("get");
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/event-stream")
    );
}

#[tokio::test]
async fn open_event_streams_per_token_are_bounded() {
    let s = start().await;
    let url = format!("{}/api/events?token={}", s.base, s.token);
    let client = reqwest::Client::new();
    let mut open = Vec::new();
    // `crosscheck_web::MAX_EVENT_STREAMS`.
    for _ in 0..16 {
        let res = client.get(&url).send().await.expect("get");
        assert_eq!(res.status().as_u16(), 200);
        open.push(res);
    }
    let refused = client.get(&url).send().await.expect("get");
    assert_eq!(refused.status().as_u16(), 429);
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["code"], "too_many_streams");
    // A stream that closes frees its place.
    drop(open.pop());
    let started = std::time::Instant::now();
    loop {
        let res = reqwest::Client::new().get(&url).send().await.expect("get");
        if res.status().as_u16() == 200 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "a closed stream never freed its place"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn stats(s: &Served) -> Value {
    reqwest::Client::new()
        .get(format!("{}/api/stats", s.base))
        .bearer_auth(&s.token)
        .send()
        .await
        .expect("stats")
        .json()
        .await
        .expect("stats json")
}

/// A page's event stream counts its client connected; when the page goes, the stream ends and
/// the client (with whatever transcripts it followed) is released.
#[tokio::test]
async fn an_event_stream_keeps_its_client_connected_until_it_ends() {
    let s = start().await;
    assert_eq!(stats(&s).await["connections"], 0);
    let stream = reqwest::Client::new()
        .get(format!("{}/api/events?client=tab-1", s.base))
        .bearer_auth(&s.token)
        .send()
        .await
        .expect("events");
    assert_eq!(stream.status(), 200);
    let mut connected = 0;
    for _ in 0..50 {
        connected = stats(&s).await["connections"].as_u64().unwrap_or(0);
        if connected == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(connected, 1);
    drop(stream);
    let mut after = 1;
    for _ in 0..100 {
        after = stats(&s).await["connections"].as_u64().unwrap_or(1);
        if after == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(after, 0, "the closed stream released its client");
    let unauthorized = reqwest::Client::new()
        .get(format!("{}/api/stats", s.base))
        .send()
        .await
        .expect("stats");
    assert_eq!(unauthorized.status(), 401);
}

#[tokio::test]
async fn a_prompt_with_a_few_megabytes_of_files_reaches_the_api() {
    let s = start().await;
    // 6 MB of base64: over axum's 2 MB default body limit, within an attachment's 10 MB.
    let body = json!({
        "cmd": "sendPrompt", "sessionId": "ses_1", "text": "see the file",
        "attachments": [{"kind": "data", "filename": "big.txt", "mime": "text/plain",
            "url": format!("data:text/plain;base64,{}", "QUJD".repeat(1_500_000))}],
    })
    .to_string();
    let (status, answer) = post(&s, Some(&s.token), &body).await;
    // The Api read it: it answers that OpenCode cannot be reached, not that the body is too
    // large.
    assert_eq!(
        (status, answer["code"].as_str()),
        (422, Some("opencode_unreachable")),
        "{answer}"
    );
    let huge = "x".repeat(crosscheck_core::attachments::MAX_REQUEST_BYTES + 1);
    let (status, _) = post(&s, Some(&s.token), &huge).await;
    assert_eq!(status, 413);
}
