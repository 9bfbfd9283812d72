//! A scripted OpenAI-compatible reviewer (`POST …/chat/completions` on 127.0.0.1) for the cold
//! review tests: it answers from a queue (or a fallback) and records every request body.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The reviewer's text, as a chat completion.
    Text(String),
    /// The same, after a delay.
    Delayed(Duration, String),
    /// An HTTP error status with a body.
    Status(u16, String),
}

#[derive(Default)]
struct Script {
    queue: VecDeque<Answer>,
    fallback: Option<Answer>,
    seen: Vec<(String, Value)>,
}

/// The running reviewer.
#[derive(Clone)]
pub struct Reviewer {
    /// `http://127.0.0.1:PORT/v1`: what `OPENAI_BASE_URL` holds.
    pub base_url: String,
    state: Arc<Mutex<Script>>,
}

impl Reviewer {
    /// Starts it on a free loopback port.
    pub async fn start() -> Reviewer {
        let state = Arc::new(Mutex::new(Script::default()));
        let app = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the reviewer");
        let addr = listener.local_addr().expect("reviewer address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Reviewer {
            base_url: format!("http://{addr}/v1"),
            state,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues an answer.
    pub fn push(&self, answer: Answer) {
        self.lock().queue.push_back(answer);
    }

    /// The answer used when the queue is empty.
    pub fn always(&self, answer: Answer) {
        self.lock().fallback = Some(answer);
    }

    /// `(path, body)` of every request so far.
    pub fn requests(&self) -> Vec<(String, Value)> {
        self.lock().seen.clone()
    }

    /// The user message of every request (the text the reviewer was sent).
    pub fn user_messages(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter_map(|(_, body)| {
                body["messages"].as_array().and_then(|m| {
                    m.iter()
                        .find(|m| m["role"] == "user")
                        .and_then(|m| m["content"].as_str().map(str::to_owned))
                })
            })
            .collect()
    }
}

/// A base URL where nothing listens (a port bound and released at once).
pub async fn unreachable_base_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    format!("http://{addr}/v1")
}

/// A well-formed plan review with exactly one FAIL.
pub fn one_flag_review() -> String {
    [
        "P1 FAIL — \"Increments\": no file or function is named; name them.",
        "P2 PASS — one Status line per increment.",
        "P3 PASS — closes #44.",
        "P4 PASS — tests by category are listed.",
        "P5 PASS — looked for aliases, shims and migrations: none.",
        "P6 PASS — each risk names its direction.",
        "P7 PASS — claims point at tests.",
        "P8 PASS — delivery steps are listed.",
        "VERDICT: FLAGS (1)",
    ]
    .join("\n")
}

/// A well-formed clean plan review.
pub fn clean_review() -> String {
    (1..=8)
        .map(|i| format!("P{i} PASS — checked."))
        .chain(["VERDICT: CLEAN".to_owned()])
        .collect::<Vec<_>>()
        .join("\n")
}

async fn handle(State(state): State<Arc<Mutex<Script>>>, uri: Uri, body: Bytes) -> Response {
    let answer = {
        let mut st = state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        st.seen.push((
            uri.path().to_owned(),
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        ));
        st.queue.pop_front().or_else(|| st.fallback.clone())
    };
    let text = match answer {
        Some(Answer::Text(text)) => text,
        Some(Answer::Delayed(delay, text)) => {
            tokio::time::sleep(delay).await;
            text
        }
        Some(Answer::Status(status, body)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return (status, body).into_response();
        }
        None => return (StatusCode::INTERNAL_SERVER_ERROR, "nothing scripted").into_response(),
    };
    axum::Json(json!({
        "id": "chatcmpl-test", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
    }))
    .into_response()
}
