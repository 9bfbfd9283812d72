//! The supervisor against a tiny fake `opencode` (a Python script) that serves
//! `/global/health`, prints the ready line, and crashes on request.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crosscheck_opencode::{
    Client, Error, ServerConfig, ServerState, Supervisor, SupervisorOptions, SupervisorTuning,
};

const FAKE: &str = r#"#!/usr/bin/env python3
import base64, http.server, os, signal, sys

state = os.environ["FAKE_STATE"]
mode = os.environ.get("FAKE_MODE", "ok")
with open(os.path.join(state, "starts"), "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
with open(os.path.join(state, "starts")) as f:
    starts = len(f.readlines())

if mode == "crash" or (mode == "crash_after_first" and starts > 1):
    print("fatal: boom on start %d" % starts, file=sys.stderr, flush=True)
    sys.exit(7)

def on_term(signum, frame):
    with open(os.path.join(state, "term"), "a") as f:
        f.write("term\n")
    os._exit(0)
signal.signal(signal.SIGTERM, on_term)

args = sys.argv[1:]
assert args[0] == "serve", args
port = int(args[args.index("--port") + 1])
host = args[args.index("--hostname") + 1]
expected = "Basic " + base64.b64encode(("opencode:" + os.environ["OPENCODE_SERVER_PASSWORD"]).encode()).decode()

class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def reply(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
    def do_GET(self):
        if self.headers.get("authorization") != expected:
            return self.reply(401, '"Unauthorized"')
        if self.path == "/global/health":
            if mode == "unhealthy":
                return self.reply(503, '"starting"')
            return self.reply(200, '{"healthy":true,"version":"0.0.0-fake"}')
        if self.path == "/exit":
            self.reply(200, "true")
            print("crashing on request", file=sys.stderr, flush=True)
            os._exit(3)
        self.reply(404, '{"name":"NotFoundError","data":{"message":"no"}}')

server = http.server.HTTPServer((host, port), Handler)
if mode != "silent":
    print("opencode server listening on http://%s:%d" % (host, port), flush=True)
server.serve_forever()
"#;

struct Fixture {
    dir: tempfile::TempDir,
    binary: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let binary = dir.path().join("bin/opencode");
        std::fs::create_dir_all(binary.parent().expect("parent")).expect("mkdir");
        std::fs::write(&binary, FAKE).expect("write fake");
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Self { dir, binary }
    }

    fn options(&self, mode: &str) -> SupervisorOptions {
        SupervisorOptions {
            binary: Some(self.binary.clone()),
            search_dirs: Vec::new(),
            working_dir: self.dir.path().to_path_buf(),
            extra_env: vec![
                ("FAKE_STATE".into(), self.dir.path().display().to_string()),
                ("FAKE_MODE".into(), mode.into()),
            ],
        }
    }

    fn starts(&self) -> Vec<String> {
        read_lines(&self.dir.path().join("starts"))
    }

    fn terms(&self) -> usize {
        read_lines(&self.dir.path().join("term")).len()
    }
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn quick() -> SupervisorTuning {
    SupervisorTuning {
        ready_timeout: Duration::from_secs(20),
        poll_interval: Duration::from_millis(50),
        restart_backoff: Duration::from_millis(200),
        max_restart_backoff: Duration::from_millis(400),
        max_quick_restarts: 5,
        stable_after: Duration::from_secs(60),
        stop_grace: Duration::from_secs(5),
    }
}

async fn wait_for(
    rx: &mut tokio::sync::watch::Receiver<ServerState>,
    what: &str,
    f: impl FnMut(&ServerState) -> bool,
) -> ServerState {
    let state = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(f))
        .await
        .unwrap_or_else(|_| panic!("no {what} state within 30 s"))
        .expect("state channel open");
    state.clone()
}

#[tokio::test]
async fn starts_restarts_on_the_same_port_and_stops_gracefully() {
    let fx = Fixture::new();
    let supervisor = Supervisor::start_with(fx.options("ok"), quick())
        .await
        .expect("starts");
    let config = supervisor.config();
    let password = config.password.clone().expect("a password");
    assert_eq!(password.len(), 32);
    let mut state = supervisor.state();
    assert_eq!(
        *state.borrow(),
        ServerState::Ready {
            url: config.base_url.clone(),
            version: "0.0.0-fake".into()
        }
    );
    let port = config.base_url.rsplit(':').next().expect("port").to_owned();
    assert_eq!(
        fx.starts(),
        [format!("serve --hostname 127.0.0.1 --port {port}")]
    );

    // The password is required and works.
    let client = Client::new(config.clone()).expect("client");
    assert_eq!(client.health().await.expect("health").version, "0.0.0-fake");
    let anonymous = Client::new(ServerConfig {
        base_url: config.base_url.clone(),
        password: None,
    })
    .expect("client");
    assert!(matches!(anonymous.health().await, Err(Error::Unauthorized)));

    // A crash: restarting, then ready again on the same port with the same password.
    let exit = reqwest_get(&config, "/exit").await;
    assert_eq!(exit, 200);
    let restarting = wait_for(&mut state, "restarting", |s| {
        matches!(s, ServerState::Restarting { .. })
    })
    .await;
    let ServerState::Restarting { attempt, reason } = restarting else {
        unreachable!()
    };
    assert_eq!(attempt, 1);
    assert!(
        reason.contains("status 3") && reason.contains("crashing on request"),
        "{reason}"
    );
    wait_for(&mut state, "ready", |s| {
        matches!(s, ServerState::Ready { .. })
    })
    .await;
    assert_eq!(fx.starts().len(), 2);
    assert_eq!(fx.starts()[1], fx.starts()[0], "same port");
    assert_eq!(
        supervisor.config().password.as_deref(),
        Some(password.as_str())
    );
    assert_eq!(
        client.health().await.expect("health after restart").version,
        "0.0.0-fake"
    );

    let mut after = supervisor.state();
    supervisor.stop().await;
    assert_eq!(*after.borrow_and_update(), ServerState::Stopped);
    assert_eq!(fx.terms(), 1, "stop() sent SIGTERM first");
    assert!(client.health().await.is_err(), "nothing listens any more");
}

/// A plain GET with the supervisor's password (the client has no route for `/exit`).
async fn reqwest_get(config: &ServerConfig, path: &str) -> u16 {
    let response = reqwest::Client::new()
        .get(format!("{}{path}", config.base_url))
        .basic_auth("opencode", config.password.as_deref())
        .send()
        .await
        .expect("request");
    response.status().as_u16()
}

#[tokio::test]
async fn health_polling_alone_detects_readiness() {
    let fx = Fixture::new();
    let supervisor = Supervisor::start_with(fx.options("silent"), quick())
        .await
        .expect("starts without a ready line");
    assert!(
        matches!(&*supervisor.state().borrow(), ServerState::Ready { version, .. } if version == "0.0.0-fake")
    );
    supervisor.stop().await;
}

#[tokio::test]
async fn a_crash_at_start_is_a_spawn_error_with_the_output_tail() {
    let fx = Fixture::new();
    let err = Supervisor::start_with(fx.options("crash"), quick())
        .await
        .expect_err("crashes");
    let Error::Spawn(message) = &err else {
        panic!("expected Spawn, got {err:?}")
    };
    assert!(
        message.contains("status 7") && message.contains("fatal: boom on start 1"),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_never_gets_healthy_is_not_ready() {
    let fx = Fixture::new();
    // Long enough for the fake (a Python process) to start and answer 503 on a loaded
    // machine, where 0.8 s sometimes ended the wait before its first answer.
    let tuning = SupervisorTuning {
        ready_timeout: Duration::from_secs(4),
        ..quick()
    };
    let err = Supervisor::start_with(fx.options("unhealthy"), tuning)
        .await
        .expect_err("never healthy");
    let Error::NotReady(message) = &err else {
        panic!("expected NotReady, got {err:?}")
    };
    assert!(message.contains("503"), "{message}");
}

#[tokio::test]
async fn it_gives_up_after_five_quick_restarts() {
    let fx = Fixture::new();
    let tuning = SupervisorTuning {
        restart_backoff: Duration::from_millis(10),
        max_restart_backoff: Duration::from_millis(20),
        ..quick()
    };
    let supervisor = Supervisor::start_with(fx.options("crash_after_first"), tuning)
        .await
        .expect("first start works");
    let mut state = supervisor.state();
    assert_eq!(reqwest_get(&supervisor.config(), "/exit").await, 200);
    let failed = wait_for(&mut state, "failed", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    let ServerState::Failed { reason } = failed else {
        unreachable!()
    };
    assert!(
        reason.contains("gave up after 5 restarts") && reason.contains("fatal: boom on start 6"),
        "{reason}"
    );
    assert_eq!(fx.starts().len(), 6, "the first start and five restarts");
    assert_eq!(supervisor.pid(), None);
    supervisor.stop().await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn dropping_the_supervisor_kills_the_server() {
    let fx = Fixture::new();
    let supervisor = Supervisor::start_with(fx.options("ok"), quick())
        .await
        .expect("starts");
    let pid = supervisor.pid().expect("running");
    let mut state = supervisor.state();
    drop(supervisor);
    assert_eq!(*state.borrow_and_update(), ServerState::Stopped);
    let gone = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            // Gone, or a zombie waiting to be reaped: either way no longer running.
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => break,
                Ok(stat)
                    if stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|rest| rest.trim_start().starts_with('Z')) =>
                {
                    break;
                }
                Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    })
    .await;
    assert!(
        gone.is_ok(),
        "process {pid} still running 10 s after the drop"
    );
    assert_eq!(fx.terms(), 0, "a drop kills without asking");
}
