//! A scripted model server on 127.0.0.1: it answers Anthropic's Messages route
//! (`…/v1/messages`) and OpenAI-compatible chat completions (`…/chat/completions`) from a queue
//! of [`Reply`]s (or a fallback), and records every request. It speaks HTTP/1.1 itself, one
//! thread per connection, so it can also fail the ways a real provider's network does (a body
//! cut short, a connection closed without an answer, bytes that are not UTF-8), and it serves
//! synchronous tests (a gate run as a separate process), async tests and tests on paused tokio
//! time alike.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// The reviewer's text in the success shape of the provider the request's path names.
    Text(String),
    /// A JSON body with a status.
    Json(u16, Value),
    /// Any status, content type and body bytes.
    Raw(u16, &'static str, Vec<u8>),
    /// Never answer (until the test ends).
    Hang,
    /// Answer after a delay.
    Delay(Duration, Box<Reply>),
    /// A 200 whose `Content-Length` promises more than these bytes, then the connection closes.
    Cut(Vec<u8>),
    /// Close the connection without answering.
    Close,
    /// A redirect: this status (301, 302, 307, 308) with this `Location`, and no body.
    Redirect(u16, String),
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

    /// The reviewer's text after `delay` (none when zero).
    pub fn text_after(text: impl Into<String>, delay: Duration) -> Reply {
        let text = Reply::Text(text.into());
        if delay.is_zero() {
            text
        } else {
            Reply::delayed(delay, text)
        }
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
    /// Starts a server on a free loopback port; it listens when this returns.
    pub fn start() -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
        let addr = listener.local_addr().expect("the model server's address");
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = shared.clone();
                std::thread::spawn(move || serve(stream, &script));
            }
        });
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
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
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

/// Reads one request (request line, headers, a `Content-Length` body); `None` when the client
/// went away first.
fn read_request(stream: &TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_owned();
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let raw = String::from_utf8_lossy(&body).into_owned();
    Some(Seen {
        path,
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
        raw,
    })
}

fn serve(mut stream: TcpStream, script: &Mutex<Script>) {
    let Some(seen) = read_request(&stream) else {
        return;
    };
    let path = seen.path.clone();
    let reply = {
        let mut s = script.lock().unwrap_or_else(PoisonError::into_inner);
        s.seen.push(seen);
        s.queue
            .pop_front()
            .or_else(|| s.fallback.clone())
            .unwrap_or(Reply::Json(
                500,
                json!({"error": {"message": "nothing scripted"}}),
            ))
    };
    answer(&mut stream, &path, reply);
}

fn answer(stream: &mut TcpStream, path: &str, reply: Reply) {
    let (status, content_type, body) = match reply {
        Reply::Close => return,
        Reply::Hang => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Reply::Delay(delay, inner) => {
            std::thread::sleep(delay);
            return answer(stream, path, *inner);
        }
        Reply::Cut(part) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                part.len() * 4 + 100
            );
            let _ = stream.write_all(&part);
            let _ = stream.flush();
            return;
        }
        Reply::Redirect(status, location) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.flush();
            return;
        }
        Reply::Text(text) => (
            200,
            "application/json",
            success_shape(path, &text).to_string().into_bytes(),
        ),
        Reply::Json(status, value) => (status, "application/json", value.to_string().into_bytes()),
        Reply::Raw(status, content_type, body) => (status, content_type, body),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
    let _ = stream.flush();
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
