//! A scripted model server on 127.0.0.1: it answers Anthropic's Messages route
//! (`…/v1/messages`) and OpenAI-compatible chat completions (`…/chat/completions`) from a queue
//! of [`Reply`]s (or a fallback), and records every request. It runs on a thread and a runtime
//! of its own, so synchronous tests (a gate run as a separate process), async tests and tests on
//! paused tokio time all use it alike.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// The reviewer's text in the success shape of the provider the request's path names.
    Text(String),
    /// A JSON body with a status.
    Json(u16, Value),
    /// A raw body with a status and a content type.
    Raw(u16, &'static str, String),
    /// Never answer (until the test ends).
    Hang,
    /// Answer after a delay.
    Delay(Duration, Box<Reply>),
    /// Send the start of a body, then break the connection.
    AbortMidBody(String),
}

impl Reply {
    /// `reply` after `delay`.
    pub fn delayed(delay: Duration, reply: Reply) -> Reply {
        Reply::Delay(delay, Box::new(reply))
    }

    /// An error status with a provider-style JSON error body.
    pub fn error(status: u16) -> Reply {
        Reply::Json(status, json!({"error": {"message": "scripted failure"}}))
    }
}

/// A request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request path (`/v1/messages`, `/v1/chat/completions`, ...).
    pub path: String,
    /// Its headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The body as text (lossy UTF-8).
    pub raw: String,
    /// The body as JSON (`null` when it is not JSON).
    pub body: Value,
}

impl Seen {
    /// The text of the request's user message, in either provider's shape.
    pub fn user_message(&self) -> String {
        self.body["messages"]
            .as_array()
            .and_then(|m| {
                m.iter()
                    .find(|m| m["role"] == "user")
                    .and_then(|m| m["content"].as_str().map(str::to_owned))
            })
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Script {
    queue: VecDeque<Reply>,
    fallback: Option<Reply>,
    seen: Vec<Seen>,
}

/// The running server; cheap to clone. It stops when the test process ends.
#[derive(Clone)]
pub struct ModelServer {
    /// `http://127.0.0.1:PORT`: what `ANTHROPIC_BASE_URL` holds.
    pub base: String,
    script: Arc<Mutex<Script>>,
}

impl ModelServer {
    /// Starts a server on a free loopback port and returns once it listens.
    pub fn start() -> ModelServer {
        let script = Arc::new(Mutex::new(Script::default()));
        let state = script.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the model server's runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind the model server");
                let addr = listener.local_addr().expect("the model server's address");
                ready_tx.send(addr).expect("report the address");
                let app = Router::new().fallback(handle).with_state(state);
                let _ = axum::serve(listener, app).await;
            });
        });
        let addr = ready_rx.recv().expect("the model server starts");
        ModelServer {
            base: format!("http://{addr}"),
            script,
        }
    }

    /// `http://127.0.0.1:PORT/v1`: what `OPENAI_BASE_URL` holds.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base)
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a reply; queued replies are used in order.
    pub fn push(&self, reply: Reply) {
        self.lock().queue.push_back(reply);
    }

    /// The reply used whenever the queue is empty.
    pub fn always(&self, reply: Reply) {
        self.lock().fallback = Some(reply);
    }

    /// Every request so far, oldest first.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// How many requests it received.
    pub fn count(&self) -> usize {
        self.lock().seen.len()
    }

    /// The user message of request `i`.
    pub fn user_message(&self, i: usize) -> String {
        self.seen()[i].user_message()
    }

    /// The user message of every request.
    pub fn user_messages(&self) -> Vec<String> {
        self.seen().iter().map(Seen::user_message).collect()
    }
}

/// A base URL where nothing listens (a loopback port bound and released at once), with `/v1`.
pub fn unreachable_base_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    format!("http://{addr}/v1")
}

fn success_shape(path: &str, text: &str) -> Value {
    if path.ends_with("/v1/messages") {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": text}]})
    } else {
        json!({"id": "chatcmpl-test", "object": "chat.completion",
               "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text}}]})
    }
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn respond(path: String, reply: Reply) -> BoxFuture<'static, Response> {
    Box::pin(async move {
        match reply {
            Reply::Json(code, value) => Response::builder()
                .status(status(code))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(value.to_string()))
                .expect("a response"),
            Reply::Raw(code, content_type, body) => Response::builder()
                .status(status(code))
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .expect("a response"),
            Reply::Text(text) => {
                let shape = success_shape(&path, &text);
                respond(path, Reply::Json(200, shape)).await
            }
            Reply::Hang => {
                futures_util::future::pending::<()>().await;
                Response::new(Body::empty())
            }
            Reply::Delay(delay, inner) => {
                tokio::time::sleep(delay).await;
                respond(path, *inner).await
            }
            Reply::AbortMidBody(part) => {
                let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                    Ok(Bytes::from(part)),
                    Err(std::io::Error::other("the server broke the connection")),
                ];
                Response::builder()
                    .status(200)
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from_stream(futures_util::stream::iter(chunks)))
                    .expect("a response")
            }
        }
    })
}

async fn handle(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    let reply = {
        let mut s = script.lock().unwrap_or_else(PoisonError::into_inner);
        s.seen.push(Seen {
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: serde_json::from_str(&raw).unwrap_or(Value::Null),
            raw,
        });
        s.queue
            .pop_front()
            .or_else(|| s.fallback.clone())
            .unwrap_or(Reply::Json(
                500,
                json!({"error": {"message": "nothing scripted"}}),
            ))
    };
    respond(uri.path().to_owned(), reply).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(url: &str, body: &str) -> (u16, String) {
        use std::io::{Read, Write};
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_once('/').unwrap();
        let mut stream = std::net::TcpStream::connect(host).unwrap();
        write!(
            stream,
            "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        let code = out.split_whitespace().nth(1).unwrap().parse().unwrap();
        (code, out)
    }

    #[test]
    fn answers_in_each_providers_shape_and_records_requests() {
        let server = ModelServer::start();
        server.push(Reply::Text("from the queue".into()));
        server.always(Reply::error(503));
        let message = r#"{"messages":[{"role":"user","content":"review this"}]}"#;
        let (code, body) = post(&format!("{}/v1/messages", server.base), message);
        assert_eq!(code, 200);
        assert!(
            body.contains(r#"{"text":"from the queue","type":"text"}"#),
            "{body}"
        );
        let (code, body) = post(
            &format!("{}/chat/completions", server.openai_base()),
            message,
        );
        assert_eq!(code, 503, "{body}");
        assert_eq!(server.count(), 2);
        assert_eq!(server.user_messages(), vec!["review this", "review this"]);
        assert_eq!(server.seen()[1].path, "/v1/chat/completions");
    }

    #[test]
    fn nothing_scripted_is_a_server_error_and_nothing_listens_at_the_unreachable_url() {
        let server = ModelServer::start();
        let (code, _) = post(&format!("{}/v1/messages", server.base), "{}");
        assert_eq!(code, 500);
        let url = unreachable_base_url();
        let host = url
            .strip_prefix("http://")
            .and_then(|r| r.split('/').next())
            .unwrap();
        assert!(std::net::TcpStream::connect(host).is_err());
    }
}
