//! Web mode over real HTTP: the token, the loopback Host check, error shapes, static files
//! with the CSP, and the event stream's content type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::net::SocketAddr;

use crosscheck_core::{Api, Core, CoreOptions, OpencodeTarget};
use crosscheck_opencode::ServerConfig;
use crosscheck_web::{CSP, Limits, ServeOptions, UiSource, serve};
use serde_json::{Value, json};

struct Served {
    base: String,
    token: String,
    _dir: tempfile::TempDir,
}

async fn start() -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(ui.join("assets")).expect("mkdir");
    std::fs::write(
        ui.join("index.html"),
        "<!doctype html><html><head><title>Crosscheck</title></head><body></body></html>",
    )
    .expect("index");
    std::fs::write(
        ui.join("assets/app-1234.js"),
        "console.log(1);\n".repeat(200),
    )
    .expect("asset");
    start_with(dir, UiSource::Dir(ui)).await
}

async fn start_with(dir: tempfile::TempDir, ui: UiSource) -> Served {
    start_limited(dir, ui, Limits::default()).await
}

async fn start_limited(dir: tempfile::TempDir, ui: UiSource, limits: Limits) -> Served {
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
            ui,
            token: token.clone(),
            limits,
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

/// The Host check compares the whole `host:port`: the right loopback name with another port
/// (a page of another local server, rebinding to this one) is refused; the right one passes.
#[tokio::test]
async fn a_loopback_host_with_another_port_is_refused() {
    let s = start().await;
    let port: u16 = s.base.rsplit(':').next().unwrap().parse().unwrap();
    let other = if port == 1 { 2 } else { port - 1 };
    for (host, expected) in [
        (format!("127.0.0.1:{other}"), 403),
        (format!("localhost:{other}"), 403),
        (format!("[::1]:{other}"), 403),
        ("localhost".to_owned(), 403),
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("[::1]:{port}"), 200),
    ] {
        let res = reqwest::Client::new()
            .post(format!("{}/api", s.base))
            .header("host", &host)
            .bearer_auth(&s.token)
            .body(r#"{"cmd":"prompts"}"#)
            .send()
            .await
            .expect("send");
        assert_eq!(res.status().as_u16(), expected, "Host: {host}");
    }
}

/// Reads from `stream` until the server closes it; the time that took (`None`: still open
/// after `bound`), and what it sent.
async fn closed_within(
    stream: &mut tokio::net::TcpStream,
    bound: std::time::Duration,
) -> (Option<std::time::Duration>, String) {
    use tokio::io::AsyncReadExt;
    let started = std::time::Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = bound.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                return (
                    Some(started.elapsed()),
                    String::from_utf8_lossy(&got).into_owned(),
                );
            }
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (None, String::from_utf8_lossy(&got).into_owned()),
        }
    }
}

/// Idle connections, half-sent headers and half-sent bodies are closed within the limits
/// (before, 200 half-sent requests were held for as long as their senders liked).
#[tokio::test]
async fn idle_and_half_sent_connections_are_closed_within_the_limits() {
    use tokio::io::AsyncWriteExt;
    let limits = Limits {
        header_read: std::time::Duration::from_secs(1),
        body_read: std::time::Duration::from_secs(1),
        keep_alive: std::time::Duration::from_millis(300),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).expect("mkdir");
    std::fs::write(ui.join("index.html"), "<html><head></head></html>").expect("index");
    let s = start_limited(dir, UiSource::Dir(ui), limits).await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let host = addr.clone();
    let bound = std::time::Duration::from_secs(6);
    let connect = || tokio::net::TcpStream::connect(addr.clone());

    let idle = async {
        let mut c = connect().await.expect("connect");
        closed_within(&mut c, bound).await
    };
    let half_headers = async {
        let mut c = connect().await.expect("connect");
        c.write_all(format!("POST /api HTTP/1.1\r\nHost: {host}\r\nAuthor").as_bytes())
            .await
            .expect("write");
        closed_within(&mut c, bound).await
    };
    let half_body = async {
        let mut c = connect().await.expect("connect");
        c.write_all(
            format!(
                "POST /api HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
                 Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"cmd\":",
                s.token
            )
            .as_bytes(),
        )
        .await
        .expect("write");
        closed_within(&mut c, bound).await
    };
    let kept_alive = async {
        // One full request, then nothing: the connection is closed after its answer's limit.
        let mut c = connect().await.expect("connect");
        c.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
            .await
            .expect("write");
        closed_within(&mut c, bound).await
    };
    let (idle, half_headers, half_body, kept_alive) =
        tokio::join!(idle, half_headers, half_body, kept_alive);
    println!(
        "closed after: idle {:?}, half-sent headers {:?}, half-sent body {:?}, kept alive {:?}",
        idle.0, half_headers.0, half_body.0, kept_alive.0
    );
    assert!(idle.0.is_some(), "an idle connection stayed open");
    assert!(half_headers.0.is_some(), "half-sent headers stayed open");
    assert!(half_body.0.is_some(), "a half-sent body stayed open");
    assert!(
        half_body.1.starts_with("HTTP/1.1 408"),
        "a slow body is told so: {}",
        half_body.1
    );
    assert!(
        kept_alive.0.is_some(),
        "an idle kept-alive connection stayed open"
    );
    assert!(kept_alive.1.starts_with("HTTP/1.1 200"), "{}", kept_alive.1);

    // The event stream outlives every limit: it keeps receiving its keep-alives.
    let res = reqwest::get(format!("{}/api/events?token={}", s.base, s.token))
        .await
        .expect("events");
    assert_eq!(res.status().as_u16(), 200);
    let mut res = res;
    let started = std::time::Instant::now();
    let mut last = std::time::Duration::ZERO;
    while started.elapsed() < std::time::Duration::from_secs(3) {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(2), res.chunk())
            .await
            .expect("a keep-alive within 2 s")
            .expect("the stream is still open");
        assert!(
            chunk.is_some(),
            "the stream ended after {:?}",
            started.elapsed()
        );
        last = started.elapsed();
    }
    assert!(last > std::time::Duration::from_secs(2), "{last:?}");
}

#[tokio::test]
async fn static_files_carry_the_csp_and_unknown_paths_get_the_app() {
    let s = start().await;
    for path in ["/", "/some/deep/link"] {
        let res = reqwest::get(format!("{}{path}?token={}", s.base, s.token))
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

/// The stream's first event names the sequence number it starts after, between a snapshot
/// taken before it opened and one taken after: a page whose snapshot is at that number or later
/// needs no second one.
#[tokio::test]
async fn the_event_stream_starts_with_the_sequence_number_it_follows_from() {
    let s = start().await;
    let seq_now = async || {
        let (status, body) = post(&s, Some(&s.token), r#"{"cmd":"snapshot"}"#).await;
        assert_eq!(status, 200);
        body["seq"].as_u64().expect("seq")
    };
    let before = seq_now().await;
    let mut res = reqwest::get(format!("{}/api/events?token={}", s.base, s.token))
        .await
        .expect("get");
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), res.chunk())
            .await
            .expect("the first event at once")
            .expect("read")
            .expect("the stream is open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let after = seq_now().await;
    let first = text.split("\n\n").next().unwrap_or_default();
    let mut lines = first.lines();
    assert_eq!(lines.next(), Some("event: start"), "{text:?}");
    let data = lines
        .next()
        .and_then(|l| l.strip_prefix("data: "))
        .expect("data");
    let from = serde_json::from_str::<Value>(data).expect("json")["seq"]
        .as_u64()
        .expect("seq");
    assert!(
        before <= from && from <= after,
        "{before} <= {from} <= {after}"
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

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

#[tokio::test]
async fn the_app_page_without_the_token_is_a_page_that_explains_it() {
    let s = start().await;
    let client = no_redirects();
    for (url, reason) in [
        (format!("{}/", s.base), "missing"),
        (format!("{}/?token=not-the-token", s.base), "wrong"),
    ] {
        let res = client.get(&url).send().await.expect("get");
        assert_eq!(res.status().as_u16(), 401, "{url}");
        assert_eq!(res.headers()["cache-control"], "no-store");
        let body = res.text().await.expect("body");
        assert!(
            body.contains(&format!("data-reason=\"{reason}\"")),
            "{body}"
        );
        assert!(body.contains("crosscheck serve"), "{body}");
        assert!(!body.contains("<title>Crosscheck</title>"), "{body}");
        assert!(!body.contains(&s.token), "the page must not leak the token");
    }
    let german = client
        .get(format!("{}/", s.base))
        .header("accept-language", "de-DE,de;q=0.9")
        .send()
        .await
        .expect("get");
    assert!(german.text().await.expect("body").contains("lang=\"de\""));
}

#[tokio::test]
async fn the_token_in_the_address_leaves_a_cookie_for_reloads_and_the_page_gets_the_token() {
    let s = start().await;
    let client = no_redirects();
    let first = client
        .get(format!("{}/?token={}", s.base, s.token))
        .send()
        .await
        .expect("get");
    assert_eq!(first.status().as_u16(), 200);
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let cookie = first.headers()["set-cookie"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let body = first.text().await.expect("body");
    assert!(
        body.contains(&format!(
            "<meta name=\"crosscheck-token\" content=\"{}\">",
            s.token
        )),
        "{body}"
    );
    let pair = cookie.split(';').next().expect("pair").to_owned();
    let reload = client
        .get(format!("{}/", s.base))
        .header("cookie", &pair)
        .send()
        .await
        .expect("get");
    assert_eq!(reload.status().as_u16(), 200);
    // The cookie names this server's port: another port's cookie is not taken.
    let other = pair.replacen("crosscheck_token_", "crosscheck_token_1", 1);
    let res = client
        .get(format!("{}/", s.base))
        .header("cookie", other)
        .send()
        .await
        .expect("get");
    assert_eq!(res.status().as_u16(), 401);
    // The cookie is not a credential for the Api.
    let api = client
        .post(format!("{}/api", s.base))
        .header("cookie", &pair)
        .body(r#"{"cmd":"snapshot"}"#)
        .send()
        .await
        .expect("post");
    assert_eq!(api.status().as_u16(), 401);
}

#[tokio::test]
async fn build_files_are_immutable_typed_compressed_and_revalidated_by_etag() {
    let s = start().await;
    let client = no_redirects();
    let url = format!("{}/assets/app-1234.js", s.base);
    let res = client
        .get(&url)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .expect("get");
    assert_eq!(res.status().as_u16(), 200);
    let h = res.headers().clone();
    assert_eq!(h["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(h["cache-control"], "public, max-age=31536000, immutable");
    assert_eq!(h["content-encoding"], "gzip");
    assert_eq!(h["content-security-policy"], CSP);
    let packed = res.bytes().await.expect("body");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&packed[..]), &mut text)
        .expect("gunzip");
    assert_eq!(text, "console.log(1);\n".repeat(200));
    let plain = client.get(&url).send().await.expect("get");
    assert!(plain.headers().get("content-encoding").is_none());
    let etag = h["etag"].to_str().expect("etag").to_owned();
    let again = client
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("get");
    assert_eq!(again.status().as_u16(), 304);
    let missing = client
        .get(format!("{}/assets/gone-0000.js", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(missing.status().as_u16(), 404);
    let escape = client
        .get(format!("{}/assets/..%2f..%2fcrosscheck.db", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(escape.status().as_u16(), 404);
}

#[tokio::test]
async fn the_ui_built_into_the_binary_is_served_without_a_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start_with(dir, UiSource::Embedded).await;
    let client = no_redirects();
    let res = client
        .get(format!("{}/?token={}", s.base, s.token))
        .send()
        .await
        .expect("get");
    assert_eq!(res.status().as_u16(), 200);
    let body = res.text().await.expect("body");
    if crosscheck_web::UI_MISSING {
        assert!(body.contains("data-testid=\"ui-missing\""), "{body}");
        return;
    }
    // The built page names its hashed script; that file is served from the binary too.
    let script = body
        .split("src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a script in index.html")
        .trim_start_matches("./")
        .to_owned();
    assert!(script.starts_with("assets/"), "{script}");
    let js = client
        .get(format!("{}/{script}", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(js.status().as_u16(), 200);
    assert_eq!(
        js.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
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
