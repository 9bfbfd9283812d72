//! Shared helpers for the gate tests: a scripted model server on 127.0.0.1:0 (plain std
//! threads, so the gate under test is a real separate process) and an isolated environment.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// A scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Reviewer text in the provider's success shape, after a delay.
    Text(String, Duration),
    /// A status with a JSON error body.
    Status(u16),
    /// Any status, content type and body bytes, after a delay.
    Raw(u16, &'static str, Vec<u8>, Duration),
    /// A 200 whose `Content-Length` promises more than the bytes sent before the connection
    /// closes.
    Cut(Vec<u8>),
    /// Close the connection without answering.
    Close,
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    fallback: Option<Reply>,
    seen: Vec<(String, Value)>,
}

/// The scripted model server.
#[derive(Clone)]
pub struct ModelServer {
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl ModelServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, state));
            }
        });
        Self { base, state }
    }

    pub fn push(&self, reply: Reply) {
        self.state.lock().unwrap().script.push_back(reply);
    }

    pub fn always(&self, reply: Reply) {
        self.state.lock().unwrap().fallback = Some(reply);
    }

    /// (path, JSON body) of each request seen.
    pub fn seen(&self) -> Vec<(String, Value)> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn count(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }

    /// The user message of request `i` (either wire shape).
    pub fn user_message(&self, i: usize) -> String {
        let (path, body) = &self.seen()[i];
        let index = if path.ends_with("/v1/messages") { 0 } else { 1 };
        body["messages"][index]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    }
}

fn serve(stream: TcpStream, state: Arc<Mutex<State>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let reply = {
        let mut s = state.lock().unwrap();
        s.seen.push((
            path.clone(),
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        ));
        s.script
            .pop_front()
            .or_else(|| s.fallback.clone())
            .unwrap_or(Reply::Status(500))
    };
    let mut stream = stream;
    let (status, content_type, body): (u16, &str, Vec<u8>) = match reply {
        Reply::Close => return,
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
        Reply::Raw(status, content_type, body, delay) => {
            std::thread::sleep(delay);
            (status, content_type, body)
        }
        Reply::Text(text, delay) => {
            std::thread::sleep(delay);
            let body = if path.ends_with("/v1/messages") {
                json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]})
            } else {
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
            };
            (200, "application/json", body.to_string().into_bytes())
        }
        Reply::Status(code) => (
            code,
            "application/json",
            json!({"error": {"message": "scripted failure"}})
                .to_string()
                .into_bytes(),
        ),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

/// A flagged plan review.
pub fn plan_flags() -> String {
    "P1 FAIL — \"Increment 2\": names no file for the retry counter; name it.\n\
     P2 PASS — each increment has a Status line.\n\
     P3 PASS — closes #44.\n\
     P4 PASS — concurrency test named for the race.\n\
     P5 PASS — looked for aliases, shims, migrations: none.\n\
     P6 PASS — each risk has a direction.\n\
     P7 PASS — claims name their tests.\n\
     P8 PASS — delivery steps listed.\n\
     VERDICT: FLAGS (1)"
        .to_owned()
}

/// A flagged commit review.
pub fn commit_flags() -> String {
    "J1 PASS — the diff adds the greeting it says.\n\
     J2 FAIL — hello.txt:1: no test covers the new greeting; add one.\n\
     J3 PASS — one concern.\n\
     J4 PASS — looked for debug prints and secrets: none.\n\
     J5 PASS — no error paths.\n\
     J6 PASS — no always/never claims.\n\
     J7 PASS — not user-visible.\n\
     J8 PASS — no shims.\n\
     VERDICT: FLAGS (1)"
        .to_owned()
}

/// An isolated environment: data and config dirs in a temp dir, both providers pointed at
/// the server with fake keys.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub server: ModelServer,
}

impl Env {
    pub fn new() -> Self {
        let env = Self {
            dir: tempfile::tempdir().unwrap(),
            server: ModelServer::start(),
        };
        std::fs::create_dir_all(env.config_dir()).unwrap();
        std::fs::write(
            env.config_dir().join("review.json"),
            json!({"reviewTimeoutMs": 5000}).to_string(),
        )
        .unwrap();
        env
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Applies the isolated environment to a command.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("CROSSCHECK_DATA_DIR", self.data_dir())
            .env("CROSSCHECK_CONFIG_DIR", self.config_dir())
            .env("ANTHROPIC_BASE_URL", &self.server.base)
            .env("ANTHROPIC_API_KEY", "test-anthropic-key")
            .env("OPENAI_BASE_URL", format!("{}/v1", self.server.base))
            .env("OPENAI_API_KEY", "test-openai-key")
            .env_remove("CROSSCHECK_AUTHOR_MODEL")
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY")
            .env_remove("ALL_PROXY")
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .env_remove("all_proxy")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
    }

    /// `crosscheck ARGS` with stdin from `input`.
    pub fn crosscheck(&self, args: &[&str], input: Option<&str>) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
        cmd.args(args);
        self.apply(&mut cmd);
        run(cmd, input)
    }

    /// `git ARGS` in `repo` (hooks see the same environment).
    pub fn git(&self, repo: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(repo);
        self.apply(&mut cmd);
        run(cmd, None)
    }
}

pub fn run(mut cmd: Command, input: Option<&str>) -> Output {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = input {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The recorded Claude Code payload.
pub fn claude_payload() -> Value {
    serde_json::from_str(include_str!(
        "../fixtures/claude_pretooluse_exit_plan_mode.json"
    ))
    .unwrap()
}
