//! The HTTP client against an in-process fake server that injects faults and records what it
//! was sent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use crosscheck_opencode::{
    Client, CommandRequest, CreateSession, Error, PromptRequest, ServerConfig, SessionPatch,
    TextPartInput, Timeouts,
};
use serde_json::{Value, json};

/// One request as the fake server saw it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    /// Path and raw (still percent-encoded) query.
    uri: String,
    path: String,
    auth: Option<String>,
    body: String,
}

/// What the fake answers.
struct Reply {
    status: u16,
    body: String,
    headers: Vec<(&'static str, String)>,
    delay: Duration,
}

impl Reply {
    fn json(body: Value) -> Self {
        Self::raw(200, body.to_string())
    }
    fn raw(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            body: body.into(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }
    fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
    fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Responder = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;
type Log = Arc<Mutex<Vec<Seen>>>;

struct Fake {
    base: String,
    log: Log,
}

impl Fake {
    fn seen(&self) -> Vec<Seen> {
        self.log.lock().expect("log").clone()
    }
    fn client(&self) -> Client {
        Client::new(ServerConfig {
            base_url: self.base.clone(),
            password: None,
        })
        .expect("client")
    }
}

async fn fake(responder: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Fake {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let log: Log = Arc::default();
    let state: (Responder, Log) = (Arc::new(responder), log.clone());
    let app = Router::new().fallback(handle).with_state(state);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Fake {
        base: format!("http://{addr}"),
        log,
    }
}

async fn handle(
    State((responder, log)): State<(Responder, Log)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen {
        method: method.to_string(),
        uri: uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default(),
        path: uri.path().to_owned(),
        auth: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    log.lock().expect("log").push(seen.clone());
    let reply = responder(&seen);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = (
        StatusCode::from_u16(reply.status).expect("status"),
        reply.body,
    )
        .into_response();
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    for (name, value) in reply.headers {
        response
            .headers_mut()
            .insert(name, HeaderValue::from_str(&value).expect("header"));
    }
    response
}

fn session(id: &str, directory: &str) -> Value {
    json!({"id": id, "slug": "s", "projectID": "p", "directory": directory, "title": "T",
           "version": "1.18.33", "time": {"created": 1, "updated": 2}})
}

#[tokio::test]
async fn a_500_is_a_status_error_with_a_truncated_body() {
    let server = fake(|_| Reply::raw(500, "x".repeat(5_000))).await;
    let err = server.client().get_session("ses_1").await.expect_err("500");
    let Error::Status { status, body } = &err else {
        panic!("expected Status, got {err:?}")
    };
    assert_eq!(*status, 500);
    assert!(
        body.chars().count() <= 501 && body.starts_with("xxx"),
        "body of {} chars",
        body.len()
    );
    assert_eq!(err.code(), "opencode_status");
}

#[tokio::test]
async fn malformed_json_is_a_decode_error_naming_the_route() {
    let server = fake(|seen| match seen.path.as_str() {
        "/session/ses_1" => Reply::raw(200, r#"{"id": "ses_1", "title": "#),
        "/session" => Reply::json(json!({"not": "a list"})),
        "/session/status" => Reply::raw(200, "<html>proxy error</html>"),
        _ => Reply::raw(200, ""),
    })
    .await;
    let client = server.client();
    let err = client
        .get_session("ses_1")
        .await
        .expect_err("truncated JSON");
    let Error::Decode { what, .. } = &err else {
        panic!("expected Decode, got {err:?}")
    };
    assert_eq!(what, "GET /session/ses_1");
    assert_eq!(err.code(), "opencode_malformed");

    let err = client
        .list_sessions(None)
        .await
        .expect_err("object, not array");
    assert!(
        matches!(&err, Error::Decode { what, .. } if what == "GET /session"),
        "{err:?}"
    );

    let err = client.statuses(None).await.expect_err("html");
    assert!(
        matches!(&err, Error::Decode { what, message } if what == "GET /session/status" && message.contains("proxy error")),
        "{err:?}"
    );

    let err = client.health().await.expect_err("empty body");
    assert!(
        matches!(&err, Error::Decode { what, message } if what == "GET /global/health" && message.contains("empty")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_401_is_unauthorized() {
    let server = fake(|_| Reply::raw(401, "Unauthorized")).await;
    let err = server.client().list_sessions(None).await.expect_err("401");
    assert!(matches!(err, Error::Unauthorized), "{err:?}");
    assert_eq!(err.code(), "opencode_unauthorized");
}

#[tokio::test]
async fn a_404_not_found_error_is_not_found_with_the_servers_message() {
    let server = fake(|seen| match seen.method.as_str() {
        "DELETE" => Reply::raw(404, "Not Found"),
        _ => Reply::raw(
            404,
            json!({"name": "NotFoundError", "data": {"message": "Session not found: ses_gone"}})
                .to_string(),
        ),
    })
    .await;
    let client = server.client();
    let err = client.get_session("ses_gone").await.expect_err("404");
    assert!(
        matches!(&err, Error::NotFound { what } if what == "Session not found: ses_gone"),
        "{err:?}"
    );
    assert!(err.is_not_found());
    assert_eq!(err.code(), "not_found");
    let err = client.delete_session("ses_gone").await.expect_err("404");
    assert!(
        matches!(&err, Error::NotFound { what } if what == "DELETE /session/ses_gone"),
        "{err:?}"
    );
}

/// A server that answers, but slower than the request's time limit, is slow, not unreachable:
/// the Changes tab said "Cannot reach the OpenCode server" while the top bar said Connected.
#[tokio::test]
async fn a_reply_slower_than_the_timeout_is_a_transport_error_that_says_slow() {
    let server = fake(|_| Reply::json(json!([])).delayed(Duration::from_secs(10))).await;
    let timeouts = Timeouts {
        connect: Duration::from_secs(2),
        request: Duration::from_millis(200),
        long: None,
        ..Timeouts::default()
    };
    let client = Client::with_timeouts(
        ServerConfig {
            base_url: server.base.clone(),
            password: None,
        },
        timeouts,
    )
    .expect("client");
    let started = Instant::now();
    let err = client.list_sessions(Some("/p")).await.expect_err("timeout");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "gave up after {:?}",
        started.elapsed()
    );
    let Error::Transport { url, message, .. } = &err else {
        panic!("expected Transport, got {err:?}")
    };
    assert_eq!(
        url,
        &format!("{}/session?directory=/p&limit=200", server.base)
    );
    assert!(message.contains("timed out"), "{message}");
    assert!(err.is_transport());
    assert_eq!(err.code(), "opencode_slow");
}

/// A list of 3,000 changed files takes the server longer than an ordinary request may: the
/// diff routes wait for it (the UI shows how long it has waited).
#[tokio::test]
async fn a_diff_outlives_the_ordinary_request_timeout() {
    let server = fake(|_| Reply::json(json!([])).delayed(Duration::from_millis(800))).await;
    let timeouts = Timeouts {
        connect: Duration::from_secs(2),
        request: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let client = Client::with_timeouts(
        ServerConfig {
            base_url: server.base.clone(),
            password: None,
        },
        timeouts,
    )
    .expect("client");
    let files = client.vcs_diff("/p").await.expect("the slow diff arrives");
    assert!(files.is_empty());
}

#[tokio::test]
async fn the_long_timeout_lets_a_slow_command_finish() {
    let server = fake(|_| {
        Reply::json(json!({"info": {"id": "msg_1"}, "parts": []}))
            .delayed(Duration::from_millis(600))
    })
    .await;
    let timeouts = Timeouts {
        connect: Duration::from_secs(2),
        request: Duration::from_millis(200),
        long: None,
        ..Timeouts::default()
    };
    let client = Client::with_timeouts(
        ServerConfig {
            base_url: server.base.clone(),
            password: None,
        },
        timeouts,
    )
    .expect("client");
    let req = CommandRequest {
        command: "review".into(),
        arguments: "now".into(),
        ..CommandRequest::default()
    };
    let answer = client
        .command("ses_1", &req)
        .await
        .expect("command outlives the request timeout");
    assert_eq!(answer["info"]["id"], "msg_1");
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/session/ses_1/command");
    assert_eq!(
        serde_json::from_str::<Value>(&seen[0].body).expect("json"),
        json!({"command": "review", "arguments": "now"})
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let client = Client::new(ServerConfig {
        base_url: format!("http://127.0.0.1:{port}"),
        password: None,
    })
    .expect("client");
    let err = client.health().await.expect_err("refused");
    assert!(
        matches!(&err, Error::Transport { url, .. } if url.ends_with("/global/health")),
        "{err:?}"
    );
}

#[tokio::test]
async fn basic_auth_is_sent_on_every_request_when_a_password_is_set() {
    let server = fake(|seen| match seen.path.as_str() {
        "/global/health" => Reply::json(json!({"healthy": true, "version": "1.18.33"})),
        "/session/ses_1/prompt_async" => Reply::raw(204, ""),
        _ => Reply::json(json!([])),
    })
    .await;
    let client = Client::new(ServerConfig {
        base_url: server.base.clone(),
        password: Some("s3cr:et".into()),
    })
    .expect("client");
    let health = client.health().await.expect("health");
    assert!(health.healthy);
    assert_eq!(health.version, "1.18.33");
    client
        .prompt_async("ses_1", &PromptRequest::default())
        .await
        .expect("prompt");
    client.list_sessions(None).await.expect("list");
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("opencode:s3cr:et")
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    for request in &seen {
        assert_eq!(
            request.auth.as_deref(),
            Some(expected.as_str()),
            "{}",
            request.uri
        );
    }

    server
        .client()
        .list_sessions(None)
        .await
        .expect("list without password");
    assert_eq!(server.seen()[3].auth, None);
}

#[tokio::test]
async fn directories_are_percent_encoded() {
    let server = fake(|seen| match seen.path.as_str() {
        "/session" if seen.method == "POST" => Reply::json(session("ses_new", "/tmp/my dir/été ü")),
        _ => Reply::json(json!([])),
    })
    .await;
    let client = server.client();
    let dir = "/tmp/my dir/été ü+&#";
    client.list_sessions(Some(dir)).await.expect("list");
    client.agents(Some(dir)).await.expect("agents");
    client
        .create_session(dir, &CreateSession::default())
        .await
        .expect("create");
    let encoded = "/tmp/my%20dir/%C3%A9t%C3%A9%20%C3%BC%2B%26%23";
    let uris: Vec<String> = server.seen().into_iter().map(|s| s.uri).collect();
    assert_eq!(
        uris,
        [
            format!("/session?directory={encoded}&limit=200"),
            format!("/agent?directory={encoded}"),
            format!("/session?directory={encoded}")
        ]
    );
    // What a server decodes is exactly the directory.
    let decoded = percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .expect("utf8");
    assert_eq!(decoded, dir);
}

#[tokio::test]
async fn metadata_is_sent_exactly_and_replaces() {
    let server = fake(|_| Reply::json(session("ses_1", "/p"))).await;
    let client = server.client();
    let empty = SessionPatch {
        metadata: Some(serde_json::Map::new()),
        ..SessionPatch::default()
    };
    client.update_session("ses_1", &empty).await.expect("clear");
    let mut meta = serde_json::Map::new();
    meta.insert(
        "openchamber".into(),
        json!({"kind": "review", "originalSessionID": "ses_0"}),
    );
    meta.insert("other".into(), json!([1, {"x": null}]));
    let full = SessionPatch {
        metadata: Some(meta),
        ..SessionPatch::default()
    };
    client
        .update_session("ses_1", &full)
        .await
        .expect("replace");
    let title = SessionPatch {
        title: Some("t2".into()),
        ..SessionPatch::default()
    };
    client
        .update_session("ses_1", &title)
        .await
        .expect("title only");

    let seen = server.seen();
    assert!(
        seen.iter()
            .all(|s| s.method == "PATCH" && s.uri == "/session/ses_1")
    );
    assert_eq!(seen[0].body, r#"{"metadata":{}}"#);
    assert_eq!(
        serde_json::from_str::<Value>(&seen[1].body).expect("json"),
        json!({"metadata": {"openchamber": {"kind": "review", "originalSessionID": "ses_0"}, "other": [1, {"x": null}]}})
    );
    assert_eq!(
        seen[2].body, r#"{"title":"t2"}"#,
        "no metadata key when unset"
    );
}

#[tokio::test]
async fn create_session_omits_metadata_when_none() {
    let server = fake(|_| Reply::json(session("ses_new", "/p"))).await;
    let client = server.client();
    let created = client
        .create_session(
            "/p",
            &CreateSession {
                title: Some("Review: x".into()),
                ..CreateSession::default()
            },
        )
        .await
        .expect("create");
    assert_eq!(created.id, "ses_new");
    assert_eq!(created.metadata, None);
    let mut meta = serde_json::Map::new();
    meta.insert("a".into(), json!(1));
    client
        .create_session(
            "/p",
            &CreateSession {
                metadata: Some(meta),
                ..CreateSession::default()
            },
        )
        .await
        .expect("create");
    let seen = server.seen();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].uri, "/session?directory=/p");
    assert_eq!(seen[0].body, r#"{"title":"Review: x"}"#);
    assert_eq!(seen[1].body, r#"{"metadata":{"a":1}}"#);
}

#[tokio::test]
async fn message_pages_read_the_next_cursor() {
    let server = fake(|seen| {
        let page = json!([{"info": {"id": "msg_2", "sessionID": "ses_1", "role": "user", "time": {"created": 2}},
                           "parts": [{"id": "prt_1", "type": "text", "text": "hi", "synthetic": true}]}]);
        if seen.uri.contains("before=") { Reply::json(page) } else { Reply::json(page).header("x-next-cursor", "cur_older") }
    })
    .await;
    let client = server.client();
    let page = client.messages("ses_1", Some(1), None).await.expect("page");
    assert_eq!(page.next_cursor.as_deref(), Some("cur_older"));
    assert_eq!(page.messages.len(), 1);
    assert!(page.messages[0].parts[0].synthetic);
    let older = client
        .messages("ses_1", Some(1), Some("cur_older"))
        .await
        .expect("older");
    assert_eq!(older.next_cursor, None);
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/session/ses_1/message?limit=1");
    assert_eq!(
        seen[1].uri,
        "/session/ses_1/message?limit=1&before=cur_older"
    );
}

/// A server that answers every page with the same cursor must not make a caller that pages
/// "until there is no cursor" loop forever.
#[tokio::test]
async fn a_cursor_handed_back_unchanged_ends_the_paging() {
    let server = fake(|_| Reply::json(json!([])).header("x-next-cursor", "cur_same")).await;
    let client = server.client();
    let mut before: Option<String> = None;
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages <= 3, "paged {pages} times");
        let page = client
            .messages("ses_1", Some(10), before.as_deref())
            .await
            .expect("page");
        match page.next_cursor {
            Some(c) => before = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 2);
}

#[tokio::test]
async fn prompts_and_aborts_are_posted() {
    let server = fake(|seen| match seen.path.as_str() {
        "/session/ses_1/prompt_async" => Reply::raw(204, ""),
        _ => Reply::json(json!(true)),
    })
    .await;
    let client = server.client();
    let req = PromptRequest {
        message_id: Some("msg_x".into()),
        parts: vec![
            TextPartInput::visible("look"),
            TextPartInput::synthetic("hidden"),
        ],
        ..PromptRequest::default()
    };
    client.prompt_async("ses_1", &req).await.expect("prompt");
    client.abort("ses_1").await.expect("abort");
    client.delete_session("ses_1").await.expect("delete");
    let seen = server.seen();
    assert_eq!(
        serde_json::from_str::<Value>(&seen[0].body).expect("json"),
        json!({"messageID": "msg_x", "parts": [{"type": "text", "text": "look"}, {"type": "text", "text": "hidden", "synthetic": true}]})
    );
    assert_eq!(
        (seen[1].method.as_str(), seen[1].uri.as_str()),
        ("POST", "/session/ses_1/abort")
    );
    assert_eq!(
        (seen[2].method.as_str(), seen[2].uri.as_str()),
        ("DELETE", "/session/ses_1")
    );
}

#[tokio::test]
async fn statuses_and_catalogs_decode() {
    let server = fake(|seen| match seen.path.as_str() {
        "/session/status" => Reply::json(json!({"ses_1": {"type": "busy"}, "ses_2": {"type": "retry", "attempt": 2, "message": "down", "next": 5}})),
        "/config/providers" => Reply::json(json!({
            "providers": [{"id": "fake", "name": "Fake", "source": "config", "env": [], "options": {},
                           "models": {"b": {"id": "b", "name": "Beta", "variants": {"high": {}, "low": {}}},
                                      "a": {"id": "a", "name": "Alpha"}}}],
            "default": {"fake": "b"}})),
        "/command" => Reply::json(json!([{"name": "review", "description": "Review", "template": "t", "hints": []}])),
        "/agent" => Reply::json(json!([{"name": "build", "mode": "primary", "permission": [], "options": {}}])),
        "/project" => Reply::json(json!([{"id": "global", "worktree": "/", "time": {"created": 1}, "sandboxes": []}])),
        _ => Reply::raw(404, ""),
    })
    .await;
    let client = server.client();
    let statuses = client.statuses(Some("/p")).await.expect("statuses");
    assert_eq!(statuses["ses_1"].kind, "busy");
    assert_eq!(statuses["ses_2"].attempt, Some(2));
    let catalog = client.providers(None).await.expect("providers");
    let models: Vec<(&str, &str)> = catalog.providers[0]
        .models
        .iter()
        .map(|m| (m.id.as_str(), m.name.as_str()))
        .collect();
    assert_eq!(models, [("a", "Alpha"), ("b", "Beta")]);
    assert_eq!(catalog.providers[0].models[1].variants, ["high", "low"]);
    assert_eq!(catalog.default["fake"], "b");
    assert_eq!(
        client.commands(None).await.expect("commands")[0].name,
        "review"
    );
    assert_eq!(
        client.agents(None).await.expect("agents")[0].mode,
        "primary"
    );
    assert_eq!(client.projects().await.expect("projects")[0].worktree, "/");
}

fn session_at(id: &str, directory: &str, updated: i64) -> Value {
    let mut s = session(id, directory);
    s["time"]["updated"] = json!(updated);
    s
}

#[tokio::test]
async fn all_sessions_are_the_union_over_projects_and_the_global_one() {
    let server = fake(|seen| match seen.uri.as_str() {
        "/project" => Reply::json(json!([
            {"id": "global", "worktree": "/"},
            {"id": "p1", "worktree": "/home/dev/a b"},
            {"id": "p2", "worktree": "/home/dev/c"}])),
        "/session?limit=200" => Reply::json(json!([
            session("ses_1", "/srv"),
            session("ses_2", "/home/dev/a b")
        ])),
        "/session?directory=/home/dev/a%20b&limit=200" => Reply::json(json!([
            session_at("ses_2", "/home/dev/a b", 9),
            session("ses_3", "/home/dev/a b")
        ])),
        "/session?directory=/home/dev/c&limit=200" => {
            Reply::json(json!([session("ses_4", "/home/dev/c")]))
        }
        // Folders outside git: only the cross-project listing names them.
        "/experimental/session?archived=true&limit=200" => Reply::json(json!([
            session("ses_5", "/home/dev/notes"),
            session("ses_1", "/srv")
        ])),
        _ => Reply::raw(500, "unexpected"),
    })
    .await;
    let listing = server.client().list_all_sessions().await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let ids: Vec<&str> = listing.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["ses_1", "ses_2", "ses_3", "ses_4", "ses_5"]);
    assert_eq!(
        listing.sessions[1].time.updated, 9,
        "the newest copy of a session listed twice wins"
    );
    let mut uris: Vec<String> = server.seen().into_iter().map(|s| s.uri).collect();
    uris.sort();
    assert_eq!(
        uris,
        [
            "/experimental/session?archived=true&limit=200",
            "/project",
            "/session?directory=/home/dev/a%20b&limit=200",
            "/session?directory=/home/dev/c&limit=200",
            "/session?limit=200",
        ]
    );
}

#[tokio::test]
async fn a_failed_listing_is_reported_and_the_others_kept() {
    let server = fake(|seen| match seen.uri.as_str() {
        "/project" => Reply::json(json!([{"id": "p1", "worktree": "/home/dev/a"}])),
        "/session?limit=200" => Reply::json(json!([session("ses_1", "/srv")])),
        "/experimental/session?archived=true&limit=200" => {
            Reply::json(json!([session("ses_2", "/home/dev/notes")]))
        }
        _ => Reply::raw(503, "busy"),
    })
    .await;
    let listing = server.client().list_all_sessions().await;
    let ids: Vec<&str> = listing.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["ses_1", "ses_2"]);
    assert_eq!(listing.failures.len(), 1, "{:?}", listing.failures);
    let failure = &listing.failures[0];
    assert_eq!(failure.project_id.as_deref(), Some("p1"));
    assert!(
        matches!(failure.error, Error::Status { status: 503, .. }),
        "{failure:?}"
    );
}

/// A server with `total` sessions that answers like OpenCode: the newest `limit` (100 without
/// one), newest first.
fn paging_server(total: usize) -> impl Fn(&Seen) -> Reply + Send + Sync + 'static {
    move |seen| {
        let limit = seen
            .uri
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("limit="))
            .and_then(|l| l.parse::<usize>().ok())
            .unwrap_or(100);
        let page: Vec<Value> = (0..total.min(limit))
            .map(|i| session_at(&format!("ses_{:05}", total - i), "/srv", (total - i) as i64))
            .collect();
        Reply::json(Value::Array(page))
    }
}

#[tokio::test]
async fn a_listing_pages_through_more_than_the_server_page() {
    for total in [0, 99, 100, 199, 200, 201, 450, 1_000] {
        let server = fake(paging_server(total)).await;
        let listed = server.client().list_sessions(None).await.expect("list");
        assert_eq!(listed.len(), total, "all {total} sessions");
        let mut ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), total, "each once");
        let asked: Vec<String> = server.seen().into_iter().map(|s| s.uri).collect();
        // 200, 400, 800, ...: asked again only while the answer was full.
        let (mut expected, mut limit) = (1, 200);
        while total >= limit {
            expected += 1;
            limit *= 2;
        }
        assert_eq!(asked.len(), expected, "{total}: {asked:?}");
    }
}

#[tokio::test]
async fn permissions_are_listed_and_replies_posted() {
    let server = fake(|seen| match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", "/permission") => Reply::json(json!([
            {"id": "per_1", "sessionID": "ses_1", "permission": "edit", "patterns": ["src/a.rs"],
             "metadata": {"filepath": "src/a.rs"}, "always": ["*"],
             "tool": {"messageID": "msg_1", "callID": "call_1"}}
        ])),
        ("POST", "/permission/per_gone/reply") => Reply::raw(
            404,
            json!({"name": "PermissionNotFoundError", "data": {"message": "Permission not found: per_gone"}})
                .to_string(),
        ),
        _ => Reply::json(json!(true)),
    })
    .await;
    let client = server.client();
    let pending = client.permissions(Some("/w p")).await.expect("list");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, "per_1");
    assert_eq!(pending[0].patterns, vec!["src/a.rs".to_owned()]);
    client
        .reply_permission("per_1", "once", None, Some("/w p"))
        .await
        .expect("reply once");
    client
        .reply_permission("per_1", "reject", Some("not now"), None)
        .await
        .expect("reply reject");
    let err = client
        .reply_permission("per_gone", "always", None, None)
        .await
        .expect_err("404");
    assert!(
        matches!(&err, Error::NotFound { what } if what == "Permission not found: per_gone"),
        "{err:?}"
    );
    let seen = server.seen();
    assert_eq!(seen[0].uri, "/permission?directory=/w%20p");
    assert_eq!(
        (seen[1].method.as_str(), seen[1].uri.as_str()),
        ("POST", "/permission/per_1/reply?directory=/w%20p")
    );
    assert_eq!(
        serde_json::from_str::<Value>(&seen[1].body).expect("json"),
        json!({"reply": "once"})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&seen[2].body).expect("json"),
        json!({"reply": "reject", "message": "not now"})
    );
}

#[tokio::test]
async fn diffs_and_todos_are_read_from_their_routes() {
    let server = fake(|seen| match seen.path.as_str() {
        "/vcs/diff" => Reply::json(json!([
            {"file": "a.txt", "patch": "@@ -1 +1 @@\n-a\n+b\n", "additions": 1, "deletions": 1, "status": "modified"},
            {"file": "b.txt", "additions": 3, "deletions": 0, "status": "added"}
        ])),
        "/session/ses_1/diff" => Reply::json(json!([{"file": "c.txt", "additions": 1, "deletions": 2}])),
        "/session/ses_1/todo" => Reply::json(json!([
            {"content": "write it", "status": "in_progress", "priority": "high"}
        ])),
        "/config" => Reply::json(json!({"snapshot": false, "model": "fake/fake-model"})),
        _ => Reply::raw(404, "{}"),
    })
    .await;
    let client = server.client();
    let files = client.vcs_diff("/my project").await.expect("vcs diff");
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files[1].file.as_str(), files[1].status),
        ("b.txt", crosscheck_opencode::FileStatus::Added)
    );
    let turn = client
        .session_diff("ses_1", Some("msg_1"))
        .await
        .expect("session diff");
    assert_eq!((turn[0].additions, turn[0].deletions), (1, 2));
    let todos = client.todos("ses_1").await.expect("todos");
    assert_eq!(todos[0].status, crosscheck_opencode::TodoStatus::InProgress);
    assert!(
        !client
            .snapshots_enabled("/my project")
            .await
            .expect("config")
    );
    let uris: Vec<String> = server.seen().into_iter().map(|s| s.uri).collect();
    assert_eq!(
        uris,
        [
            "/vcs/diff?mode=git&directory=/my%20project",
            "/session/ses_1/diff?messageID=msg_1",
            "/session/ses_1/todo",
            "/config?directory=/my%20project",
        ]
    );
}

#[tokio::test]
async fn a_diff_that_is_not_a_list_or_fails_says_so() {
    let server = fake(|seen| match seen.path.as_str() {
        "/vcs/diff" => Reply::json(json!({"file": "a.txt"})),
        "/session/ses_1/diff" => Reply::raw(500, r#"{"name":"UnknownError"}"#),
        "/session/ses_1/todo" => Reply::raw(200, "[{\"content\":"),
        _ => Reply::raw(
            404,
            json!({"name": "NotFoundError", "data": {"message": "Session not found: ses_gone"}})
                .to_string(),
        ),
    })
    .await;
    let client = server.client();
    let err = client.vcs_diff("/p").await.expect_err("an object");
    assert!(
        matches!(&err, Error::Decode { what, .. } if what == "GET /vcs/diff"),
        "{err:?}"
    );
    let err = client.session_diff("ses_1", None).await.expect_err("500");
    assert!(matches!(err, Error::Status { status: 500, .. }), "{err:?}");
    let err = client.todos("ses_1").await.expect_err("cut off");
    assert_eq!(err.code(), "opencode_malformed");
    let err = client.todos("ses_gone").await.expect_err("404");
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn a_huge_diff_is_refused_by_its_length() {
    let limit = crosscheck_opencode::client::DIFF_BODY_LIMIT;
    let body = format!("[\"{}\"]", "x".repeat(limit));
    let server = fake(move |_| Reply::raw(200, body.clone())).await;
    let err = server.client().vcs_diff("/p").await.expect_err("too large");
    assert!(
        matches!(&err, Error::TooLarge { what, .. } if what == "GET /vcs/diff"),
        "{err:?}"
    );
    assert_eq!(err.code(), "opencode_too_large");
}

/// A server that streams a diff without end (chunked, no length): the client stops reading
/// at its limit and says so, instead of reading (and waiting) forever.
#[tokio::test]
async fn an_endless_diff_is_cut_off_at_the_limit() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let entry = r#"{"file":"a.txt","patch":"+x","additions":1,"deletions":0},"#.repeat(16_000);
        let chunk = format!("{:x}\r\n[{entry}\r\n", entry.len() + 1);
        let _ = socket.write_all(chunk.as_bytes()).await;
        let chunk = format!("{:x}\r\n{entry}\r\n", entry.len());
        while socket.write_all(chunk.as_bytes()).await.is_ok() {}
    });
    let client = Client::new(ServerConfig {
        base_url: format!("http://{addr}"),
        password: None,
    })
    .expect("client");
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(20), client.vcs_diff("/p"))
        .await
        .expect("no hang")
        .expect_err("too large");
    assert!(matches!(err, Error::TooLarge { .. }), "{err:?}");
    println!("an endless diff was refused after {:?}", started.elapsed());
}
