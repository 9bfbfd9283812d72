//! Shared helpers for the gate tests: the test kit's scripted model server, an isolated
//! environment for the gate binary (a real separate process) and the canned replies.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

pub use crosscheck_testkit::{ModelServer, Reply};

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
        "../../fixtures/claude_pretooluse_exit_plan_mode.json"
    ))
    .unwrap()
}
