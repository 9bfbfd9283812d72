//! A scripted model server (in-process axum on 127.0.0.1:0) and engine helpers.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use crosscheck_review::{Engine, EngineOptions, Env, Logger, MemorySink};
use serde_json::{Value, json};

/// One scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// JSON body with a status.
    Json(u16, Value),
    /// Raw body with a status and content type.
    Raw(u16, &'static str, String),
    /// Never answer.
    Hang,
    /// Answer after a delay.
    Delay(Duration, Box<Reply>),
    /// Send part of a body, then abort the connection.
    AbortMidBody(String),
    /// The reviewer's text in the provider's success shape (chosen from the request path).
    Text(String),
}

/// A request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub raw: String,
    pub body: Value,
}

#[derive(Default)]
struct Inner {
    script: VecDeque<Reply>,
    fallback: Option<Reply>,
    seen: Vec<Seen>,
}

/// The server handle.
#[derive(Clone)]
pub struct Server {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
}

impl Server {
    /// Starts a server on 127.0.0.1:0 in the current runtime.
    pub async fn start() -> Self {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            base: format!("http://{addr}"),
            inner,
        }
    }

    /// Queues replies, used in order.
    pub fn push(&self, reply: Reply) {
        self.inner.lock().unwrap().script.push_back(reply);
    }

    /// The reply used when the queue is empty.
    pub fn always(&self, reply: Reply) {
        self.inner.lock().unwrap().fallback = Some(reply);
    }

    /// Requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().unwrap().seen.clone()
    }

    /// Number of requests seen.
    pub fn count(&self) -> usize {
        self.inner.lock().unwrap().seen.len()
    }
}

fn success_shape(path: &str, text: &str) -> Value {
    if path.ends_with("/v1/messages") {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": text}]})
    } else {
        json!({"id": "c1", "object": "chat.completion",
               "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text}}]})
    }
}

fn respond(path: &str, reply: Reply) -> futures_util::future::BoxFuture<'static, Response> {
    let path = path.to_owned();
    Box::pin(async move {
        match reply {
            Reply::Json(status, value) => Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(value.to_string()))
                .unwrap(),
            Reply::Raw(status, content_type, body) => Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .unwrap(),
            Reply::Text(text) => {
                respond(&path, Reply::Json(200, success_shape(&path, &text))).await
            }
            Reply::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Response::new(Body::empty())
            }
            Reply::Delay(d, inner) => {
                tokio::time::sleep(d).await;
                respond(&path, *inner).await
            }
            Reply::AbortMidBody(part) => {
                let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                    Ok(Bytes::from(part)),
                    Err(std::io::Error::other("server aborted")),
                ];
                Response::builder()
                    .status(200)
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from_stream(futures_util::stream::iter(chunks)))
                    .unwrap()
            }
        }
    })
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    let reply = {
        let mut inner = inner.lock().unwrap();
        inner.seen.push(Seen {
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: serde_json::from_str(&raw).unwrap_or(Value::Null),
            raw,
        });
        inner
            .script
            .pop_front()
            .or_else(|| inner.fallback.clone())
            .unwrap_or(Reply::Json(500, json!({"error": {"message": "no script"}})))
    };
    respond(uri.path(), reply).await
}

/// A temp data + config dir and an engine pointed at a server.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub engine: Engine,
    pub log: Arc<MemorySink>,
}

impl Rig {
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("data").join("crosscheck.db")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Another engine on the same database and config (a second process, as far as SQLite
    /// is concerned).
    pub fn second_engine(&self, base: &str) -> Engine {
        Engine::open(EngineOptions {
            database_path: self.db(),
            config_dir: self.config_dir(),
            logger: Logger::memory().0,
            env: env_for(base),
        })
        .unwrap()
    }
}

/// Env pointing both providers at `base` with fake keys.
pub fn env_for(base: &str) -> Env {
    Env::Map(BTreeMap::from([
        (
            "ANTHROPIC_API_KEY".to_owned(),
            "test-anthropic-key".to_owned(),
        ),
        ("ANTHROPIC_BASE_URL".to_owned(), base.to_owned()),
        ("OPENAI_API_KEY".to_owned(), "test-openai-key".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), format!("{base}/v1")),
    ]))
}

/// An engine with a user config (JSON) and the env of [`env_for`].
pub fn rig(base: &str, config: Value) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("review.json"), config.to_string()).unwrap();
    let (logger, log) = Logger::memory();
    let engine = Engine::open(EngineOptions {
        database_path: dir.path().join("data").join("crosscheck.db"),
        config_dir,
        logger,
        env: env_for(base),
    })
    .unwrap();
    Rig { dir, engine, log }
}

/// A default test config: short timeouts.
pub fn quick() -> Value {
    json!({"reviewTimeoutMs": 3000, "reviewTimeoutMsPer1000Chars": 0})
}

/// A well-formed flagged plan review.
pub fn flags_reply() -> String {
    "P1 FAIL — \"Increments\": no files named; name them.\n\
     P2 PASS — one Status line per increment.\n\
     P3 PASS — closes #44.\n\
     P4 FAIL — \"Tests\": no concurrency test for the race; add one.\n\
     P5 PASS — looked for aliases, shims, migrations: none.\n\
     P6 PASS — each risk names a direction.\n\
     P7 PASS — claims point at tests.\n\
     P8 PASS — delivery steps listed.\n\
     VERDICT: FLAGS (2)"
        .to_owned()
}

/// A well-formed clean plan review.
pub fn clean_reply() -> String {
    (1..=8)
        .map(|n| format!("P{n} PASS — looked for it; present.\n"))
        .collect::<String>()
        + "VERDICT: CLEAN"
}

/// A plan text.
pub const PLAN: &str =
    "# Plan: add the widget (#12)\n\n## Increments\n1. Add widget.rs\n   Status: Not started\n";
