//! Web mode: serves the UI (built into the binary, or from `--ui-dir`) and the Api over HTTP +
//! SSE on loopback, behind a token. The app's page itself needs the token too (`?token=`, then
//! a cookie for this port): without it the browser gets a page that explains the token.
//! `POST /api` takes a request and answers its JSON result or `{code, message}`;
//! `GET /api/events` streams batches of changes as SSE `data:` frames (JSON arrays), after a
//! first `start` event that names the sequence number the stream starts after.
//!
//! A page names itself with a client id (`?client=` on the event stream, the
//! `X-Crosscheck-Client` header on calls): the transcripts it opens are followed for that
//! client, and released when its last event stream ends (a closed tab, a reload).
//! `GET /api/stats` reports what the backend keeps (sessions, transcripts, followers).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::Uri;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use crosscheck_core::api::{LOCAL_CLIENT, next_batch};
use crosscheck_core::{Api, ApiError, ErrorCode};
use serde::Deserialize;
use tower_http::set_header::SetResponseHeaderLayer;

mod assets;
mod token_page;

use assets::{Assets, REVALIDATE};
pub use assets::{UI_MISSING, UiSource};
use token_page::Refusal;

/// Errors of web mode.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address asked for.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The UI folder given has no `index.html`.
    #[error("{0} has no index.html: pass the folder the UI build writes (ui/dist)")]
    NoUi(std::path::PathBuf),
    /// The server stopped with an error.
    #[error("web server failed: {0}")]
    Serve(std::io::Error),
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to bind (loopback).
    pub addr: SocketAddr,
    /// Where the UI's files come from.
    pub ui: UiSource,
    /// Token every Api call must carry.
    pub token: String,
    /// How long a connection may keep the server waiting.
    pub limits: Limits,
}

/// How long a connection may keep the server waiting. The event stream is not cut by any of
/// these: it sends a keep-alive comment every [`Limits::keep_alive`] and reads nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the connection's start, or the end of its last answer, to the end of the next
    /// request's headers: a half-sent request and an idle kept-alive connection are closed
    /// after this.
    pub header_read: std::time::Duration,
    /// From the end of a call's headers to the end of its body; a slower body gets 408 and
    /// the connection is closed.
    pub body_read: std::time::Duration,
    /// Interval of the event stream's keep-alive comments.
    pub keep_alive: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_read: std::time::Duration::from_secs(10),
            body_read: std::time::Duration::from_secs(30),
            keep_alive: std::time::Duration::from_secs(15),
        }
    }
}

/// A running web server.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The server task; ends when the server stops.
    pub task: tokio::task::JoinHandle<Result<(), Error>>,
}

/// Event streams open at once with the token; one more is refused (429) until one closes.
/// A page holds one; the bound keeps a leaked or hostile token holder from piling up
/// subscribers, each of which buffers every change.
pub const MAX_EVENT_STREAMS: usize = 16;

#[derive(Clone)]
struct AppState {
    api: Api,
    token: Arc<str>,
    streams: Arc<tokio::sync::Semaphore>,
    assets: Arc<Assets>,
    port: u16,
    limits: Limits,
}

/// A new random token: 32 url-safe characters.
pub fn random_token() -> String {
    use rand::Rng;
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut rng = rand::rng();
    (0..32)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// The content security policy of the served UI.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Binds and starts serving; returns once the socket is bound.
pub async fn serve(api: Api, options: ServeOptions) -> Result<Running, Error> {
    let assets = Assets::new(options.ui.clone());
    if let UiSource::Dir(dir) = &options.ui
        && !assets.has_index()
    {
        return Err(Error::NoUi(dir.clone()));
    }
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| Error::Bind {
            addr: options.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(Error::Serve)?;
    let state = AppState {
        api,
        token: options.token.into(),
        streams: Arc::new(tokio::sync::Semaphore::new(MAX_EVENT_STREAMS)),
        assets: Arc::new(assets),
        port: addr.port(),
        limits: options.limits,
    };
    let router = router(state);
    let task = tokio::spawn(accept(listener, router, options.limits));
    Ok(Running { addr, task })
}

/// Serves every connection the listener accepts, each under the header-read limit (which
/// also closes a kept-alive connection that stays idle). An accept error (too many open
/// files, a connection reset before it was taken) is waited out, never fatal.
async fn accept(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
) -> Result<(), Error> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::debug!("accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        // The change stream writes small events one after another: each goes out at once
        // rather than waiting for the browser to acknowledge the one before (Nagle's delay).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("nodelay: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!("connection: {e}");
            }
        });
    }
}

fn router(state: AppState) -> Router {
    let api = Router::new()
        // `call` reads its body itself: within the body-read limit and up to
        // `MAX_REQUEST_BYTES` (prompts carry attached files as base64).
        .route("/api", post(call))
        .route("/api/events", get(events))
        .route("/api/stats", get(stats))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .route(
            "/api/health",
            get(|| async { Json(serde_json::json!({"ok": true})) }),
        );
    api.fallback(get(ui_file))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            require_loopback_host,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .with_state(state)
}

/// An error reply: the status [`ErrorCode::http_status`] gives, and `{code, message}`.
fn error_response(error: ApiError) -> Response {
    let status =
        StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(error)).into_response()
}

fn error(code: ErrorCode, message: impl Into<String>) -> Response {
    error_response(ApiError {
        code,
        message: message.into(),
    })
}

/// Whether a Host header names this server: a loopback name with this server's port (a
/// bare name only when the port is 80, which a browser leaves out).
fn is_own_host(host: &str, port: u16) -> bool {
    let (name, given) = match host.rsplit_once(':') {
        Some((name, p)) if !name.is_empty() && !p.contains(']') => (name, p.parse::<u16>().ok()),
        _ => (host, Some(80)),
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]") && given == Some(port)
}

/// Refuses requests whose Host is not a loopback name with this server's port (DNS
/// rebinding, and a page of another local server that rebinds to this one).
async fn require_loopback_host(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if is_own_host(host, state.port) {
        next.run(request).await
    } else {
        error(
            ErrorCode::ForbiddenHost,
            format!(
                "requests must use a loopback host name with this server's port ({})",
                state.port
            ),
        )
    }
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a request carries: `Authorization: Bearer`, else `?token=`.
fn given_token(headers: &HeaderMap, query: Option<String>) -> String {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::to_owned)
        .or(query)
        .unwrap_or_default()
}

async fn require_token(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let given = given_token(&headers, query.token);
    if constant_time_eq(given.as_bytes(), state.token.as_bytes()) {
        next.run(request).await
    } else {
        error(ErrorCode::Unauthorized, "missing or wrong token")
    }
}

/// The header a page names itself with on calls.
const CLIENT_HEADER: &str = "x-crosscheck-client";

/// A client id as a page sends it: 1 to 64 url-safe characters, else none.
fn client_id(value: Option<&str>) -> Option<&str> {
    value.filter(|v| {
        !v.is_empty()
            && v.len() <= 64
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

async fn call(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let client = client_id(headers.get(CLIENT_HEADER).and_then(|h| h.to_str().ok()))
        .unwrap_or(LOCAL_CLIENT)
        .to_owned();
    let limit = crosscheck_core::attachments::MAX_REQUEST_BYTES;
    let body = match tokio::time::timeout(state.limits.body_read, axum::body::to_bytes(body, limit))
        .await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            let too_large = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            let mut res = error(
                ErrorCode::InvalidRequest,
                format!("the request body could not be read (at most {limit} bytes): {e}"),
            );
            if too_large {
                *res.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            }
            return res;
        }
        Err(_) => {
            let mut res = error(
                ErrorCode::InvalidRequest,
                format!(
                    "the request body did not arrive within {} s",
                    state.limits.body_read.as_secs()
                ),
            );
            *res.status_mut() = StatusCode::REQUEST_TIMEOUT;
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return res;
        }
    };
    let request = match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                ErrorCode::InvalidRequest,
                format!("request is not JSON: {e}"),
            );
        }
    };
    match state.api.handle_json_as(&client, request).await {
        Ok(response) => Json(response).into_response(),
        Err(e) => error_response(e),
    }
}

/// The name of the event stream's first event, `{"seq": N}`: the stream carries every change
/// numbered after N.
pub const START_EVENT: &str = "start";

#[derive(Deserialize)]
struct EventsQuery {
    client: Option<String>,
}

async fn events(State(state): State<AppState>, Query(query): Query<EventsQuery>) -> Response {
    let Ok(permit) = state.streams.clone().try_acquire_owned() else {
        return error(
            ErrorCode::TooManyStreams,
            format!("at most {MAX_EVENT_STREAMS} event streams may be open at once"),
        );
    };
    let (rx, from) = state.api.subscribe_from();
    // The permit and the client's connection live as long as the stream: a closed stream
    // (axum drops it when the page goes away) frees its place and releases its client.
    let connection = client_id(query.client.as_deref()).map(|c| state.api.connect(c));
    // First a `start` event: the sequence number the stream starts after. A page whose
    // snapshot is at that number or later needs no other one.
    let start = futures_util::stream::once(std::future::ready(Ok::<_, Infallible>(
        Event::default()
            .event(START_EVENT)
            .data(serde_json::json!({ "seq": from }).to_string()),
    )));
    let stream = futures_util::stream::unfold(
        (rx, permit, connection),
        |(mut rx, permit, connection)| async move {
            // A reader that fell behind ends the stream: the UI reconnects and reloads its snapshot.
            let batch = next_batch(&mut rx).await.ok()?;
            let data = serde_json::to_string(&batch).unwrap_or_else(|_| "[]".into());
            Some((
                Ok::<_, Infallible>(Event::default().data(data)),
                (rx, permit, connection),
            ))
        },
    );
    Sse::new(futures_util::StreamExt::chain(start, stream))
        .keep_alive(KeepAlive::new().interval(state.limits.keep_alive))
        .into_response()
}

async fn stats(State(state): State<AppState>) -> Response {
    Json(state.api.stats()).into_response()
}

/// The cookie that lets this browser reload the app without the token in the address. Named by
/// port: cookies do not tell ports apart, and two servers may run side by side.
fn cookie_name(port: u16) -> String {
    format!("crosscheck_token_{port}")
}

fn cookie_token(headers: &HeaderMap, port: u16) -> Option<String> {
    let name = cookie_name(port);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// A file of the UI, or the app's page for every other path (the token page without the
/// token). Hashed build files need no token: they are the same for everyone.
async fn ui_file(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path().trim_start_matches('/');
    if !path.is_empty()
        && path != "index.html"
        && let Some(asset) = state.assets.get(path)
    {
        return asset_response(&asset, &headers);
    }
    if path.starts_with("assets/") {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    let from_query = query.token.is_some();
    let given = query.token.or_else(|| cookie_token(&headers, state.port));
    let accepted = given
        .as_deref()
        .is_some_and(|g| constant_time_eq(g.as_bytes(), state.token.as_bytes()));
    if !accepted {
        let refusal = if given.is_some() {
            Refusal::Wrong
        } else {
            Refusal::Missing
        };
        let lang = headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        let page = token_page::render(refusal, state.port, lang);
        let mut res = (StatusCode::UNAUTHORIZED, page).into_response();
        let h = res.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return res;
    }
    let Some(index) = state.assets.get("index.html") else {
        return (StatusCode::NOT_FOUND, "the UI has no index.html").into_response();
    };
    // The page learns the token from a meta tag: a new tab opened on the bare address (the
    // cookie) can call the Api too. Only a holder of the token gets this page.
    let html = String::from_utf8_lossy(&index.body);
    let meta = format!(
        "<meta name=\"crosscheck-token\" content=\"{}\">",
        state.token
    );
    let html = match html.find("</head>") {
        Some(at) => format!("{}{meta}{}", &html[..at], &html[at..]),
        None => format!("{meta}{html}"),
    };
    let mut res = html.into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(REVALIDATE));
    if from_query {
        let cookie = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000",
            cookie_name(state.port),
            state.token
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            h.insert(header::SET_COOKIE, v);
        }
    }
    res
}

/// A file with its type, cache policy and ETag; gzip when the client takes it; 304 when the
/// client has it already.
fn asset_response(asset: &assets::Asset, headers: &HeaderMap) -> Response {
    let etag = HeaderValue::from_str(&asset.etag).ok();
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == asset.etag));
    let gzip = asset.gzip.as_ref().filter(|_| {
        headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|v| {
                v.split(',').any(|e| {
                    let mut parts = e.trim().split(';');
                    parts.next() == Some("gzip")
                        && !parts.any(|p| p.trim().replace(' ', "") == "q=0")
                })
            })
    });
    let mut res = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else if let Some(packed) = gzip {
        let mut res = axum::body::Body::from(packed.clone()).into_response();
        res.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        res
    } else {
        axum::body::Body::from(asset.body.clone()).into_response()
    };
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&asset.mime) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(asset.cache_control),
    );
    if asset.gzip.is_some() {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(etag) = etag {
        h.insert(header::ETAG, etag);
    }
    res
}
