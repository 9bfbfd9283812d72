//! `crosscheck gate plan` end to end: the real binary, a recorded Claude Code payload, a
//! scripted model server, an isolated data and config directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::gate_support::{Env, Reply, claude_payload, plan_flags, stderr, stdout};
use serde_json::Value;

const HEADING: &str = "Automated cold review (Crosscheck) paused this plan:";
const TRAILER: &str = "Address material findings by editing the draft, then try again. An unchanged draft proceeds to the human.";

fn payload_with_plan(plan: &str) -> String {
    let mut p = claude_payload();
    p["tool_input"]["plan"] = Value::String(plan.to_owned());
    p.to_string()
}

#[test]
fn claude_payload_is_blocked_then_an_identical_retry_passes_and_an_edit_is_blocked_again() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let payload = claude_payload().to_string();

    let first = env.crosscheck(&["gate", "plan"], Some(&payload));
    assert_eq!(first.status.code(), Some(2), "{}", stderr(&first));
    let err = stderr(&first);
    let reason_start = err.find(HEADING).expect("reason on stderr");
    let reason = &err[reason_start..];
    assert!(reason.contains(&plan_flags()), "{reason}");
    assert!(reason.trim_end().ends_with(TRAILER), "{reason}");
    assert!(err.contains("\"event\":\"plan_review.done\""), "{err}");
    assert_eq!(env.server.count(), 1);
    let user = env.server.user_message(0);
    assert!(user.starts_with("PLAN (parameter):\n\n"), "{user}");
    assert!(user.contains("retry the upload once on a 5xx"));

    let retry = env.crosscheck(&["gate", "plan"], Some(&payload));
    assert_eq!(retry.status.code(), Some(0), "{}", stderr(&retry));
    assert!(!stderr(&retry).contains(HEADING));
    assert!(stderr(&retry).contains("plan_review.skipped"));
    assert_eq!(env.server.count(), 1);

    let plan = claude_payload()["tool_input"]["plan"]
        .as_str()
        .unwrap()
        .to_owned();
    let edited = payload_with_plan(&format!("{plan}\nStatus lines added.\n"));
    let again = env.crosscheck(&["gate", "plan"], Some(&edited));
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert_eq!(env.server.count(), 2);
}

#[test]
fn claude_json_format_denies_on_stdout_and_exits_zero() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let out = env.crosscheck(
        &["gate", "plan", "--format", "claude-json"],
        Some(&claude_payload().to_string()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let hook = &json["hookSpecificOutput"];
    assert_eq!(hook["hookEventName"], "PreToolUse");
    assert_eq!(hook["permissionDecision"], "deny");
    let reason = hook["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.starts_with(HEADING) && reason.ends_with(TRAILER),
        "{reason}"
    );
    // The retry prints nothing on stdout: the call proceeds.
    let retry = env.crosscheck(
        &["gate", "plan", "--format", "claude-json"],
        Some(&claude_payload().to_string()),
    );
    assert_eq!(retry.status.code(), Some(0));
    assert_eq!(stdout(&retry).trim(), "");
}

#[test]
fn other_tools_pass_without_a_review() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let mut p = claude_payload();
    p["tool_name"] = Value::String("Bash".into());
    p["tool_input"] = serde_json::json!({"command": "ls"});
    let out = env.crosscheck(&["gate", "plan"], Some(&p.to_string()));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(env.server.count(), 0);
}

#[test]
fn a_draft_file_wins_over_the_parameter() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let draft = env.dir.path().join("draft.md");
    std::fs::write(&draft, "# The draft on disk\n").unwrap();
    let out = env.crosscheck(
        &["gate", "plan", "--file", draft.to_str().unwrap()],
        Some(&claude_payload().to_string()),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let user = env.server.user_message(0);
    assert!(
        user.starts_with(&format!("PLAN (draft, {}):\n\n", draft.display())),
        "{user}"
    );
    assert!(user.contains("# The draft on disk") && !user.contains("upload"));
    // An unreadable draft falls back to the parameter.
    let out = env.crosscheck(
        &[
            "gate",
            "plan",
            "--file",
            "/nonexistent/draft.md",
            "--text",
            "param plan",
            "--cwd",
            "/w",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        env.server
            .user_message(1)
            .starts_with("PLAN (parameter):\n\n")
    );
}

#[test]
fn the_author_flag_and_env_choose_the_reviewer() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let out = env.crosscheck(
        &[
            "gate",
            "plan",
            "--text",
            "plan A",
            "--cwd",
            "/w",
            "--author",
            "claude-opus-4-1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(env.server.seen()[0].body["model"], "claude-opus-4-1");

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
    cmd.args(["gate", "plan", "--text", "plan B", "--cwd", "/w"]);
    env.apply(&mut cmd);
    cmd.env("CROSSCHECK_AUTHOR_MODEL", "claude-haiku-4-5");
    let out = crate::gate_support::run(cmd, None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        env.server.seen()[1].body["model"],
        "claude-sonnet-4-5",
        "haiku gets the floor"
    );
}

#[test]
fn no_text_means_no_pause_and_no_call() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    for input in [payload_with_plan("   \n"), String::new()] {
        let out = env.crosscheck(&["gate", "plan"], Some(&input));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("\"event\":\"plan_review.skipped\",\"reason\":\"no text\""),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(env.server.count(), 0);
}

#[test]
fn a_terminal_on_stdin_is_not_waited_on() {
    // `script` gives the gate a pseudo-terminal as stdin and keeps it open; the gate must
    // not read it. (`cat` in its place would wait until the pipe below closes.)
    let env = Env::new();
    let mut cmd = Command::new("script");
    cmd.args([
        "-qec",
        &format!("{} gate plan", env!("CARGO_BIN_EXE_crosscheck")),
        "/dev/null",
    ]);
    env.apply(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the gate waited on a terminal stdin");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    assert_eq!(env.server.count(), 0);
}

#[test]
fn an_unreachable_reviewer_blocks_once_then_proceeds_unreviewed() {
    let env = Env::new();
    env.server.always(Reply::error(503));
    let payload = claude_payload().to_string();
    let first = env.crosscheck(&["gate", "plan"], Some(&payload));
    assert_eq!(first.status.code(), Some(2), "{}", stderr(&first));
    assert!(stderr(&first).contains("could not run for this plan"));
    assert!(stderr(&first).contains("Try again"));
    let second = env.crosscheck(&["gate", "plan"], Some(&payload));
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(stderr(&second).contains("proceeds marked unreviewed"));
    let third = env.crosscheck(&["gate", "plan"], Some(&payload));
    assert_eq!(third.status.code(), Some(0));
    assert_eq!(env.server.count(), 2);
}

#[test]
fn an_invalid_config_names_the_file_and_key_and_does_not_block_the_host() {
    let env = Env::new();
    std::fs::write(
        env.config_dir().join("review.json"),
        r#"{"reviewTimeoutMS": 1}"#,
    )
    .unwrap();
    let out = env.crosscheck(&["gate", "plan", "--text", "p", "--cwd", "/w"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("review.json") && err.contains("reviewTimeoutMS"),
        "{err}"
    );
}

/// Two gate processes for the same key at the same time over one ledger: exactly one
/// review reaches the model server; the other waits for it and pauses with its result.
#[test]
fn two_processes_on_one_ledger_review_a_key_once() {
    let env = Env::new();
    env.server
        .always(Reply::text_after(plan_flags(), Duration::from_millis(700)));
    let payload = claude_payload().to_string();
    // Create the database first so both start from the same state.
    let warm = env.crosscheck(&["gate", "plan", "--text", "warm", "--cwd", "/w"], None);
    assert_eq!(warm.status.code(), Some(2));
    let spawn = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
        cmd.args(["gate", "plan"]);
        env.apply(&mut cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        child
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(env.server.count(), 2, "warm-up plus exactly one review");
    let codes = [a.status.code(), b.status.code()];
    assert_eq!(codes, [Some(2), Some(2)], "{}\n{}", stderr(&a), stderr(&b));
    assert!(stderr(&a).contains(&plan_flags()) && stderr(&b).contains(&plan_flags()));
}

#[test]
fn an_open_app_sees_every_row_the_gates_write() {
    // The app holds the shared database open (its own tables first, then the ledger) while
    // gate processes write rows. It once saw only the first: opening the ledger touched the
    // file through a plain file handle, and closing that handle dropped the SQLite locks the
    // app's first connection held, so a gate took the file for itself and checkpointed the
    // log away under the app's feet.
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    std::fs::create_dir_all(env.data_dir()).unwrap();
    let path = env.data_dir().join(crosscheck_review::paths::DATABASE_FILE);
    let app = rusqlite::Connection::open(&path).unwrap();
    let _mode: String = app
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    app.execute_batch("CREATE TABLE IF NOT EXISTS app_settings (k TEXT PRIMARY KEY, v TEXT);")
        .unwrap();
    let ledger = crosscheck_review::ledger::Ledger::open(&path).unwrap();
    for n in 1..=3 {
        let text = format!("# Plan {n}\n\n1. Step {n}.\n");
        let out = env.crosscheck(&["gate", "plan", "--text", &text, "--cwd", "/w"], None);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let listed = ledger.list(10).unwrap().len();
        assert_eq!(listed, n, "rows the open app sees after gate {n}");
    }
}

/// A hook runner that leaves stdin open (and sends nothing) does not hang `gate plan --file`:
/// the draft is reviewed and the gate exits within a few seconds.
#[test]
fn a_draft_file_with_stdin_left_open_does_not_wait_for_it() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let draft = env.dir.path().join("draft.md");
    std::fs::write(&draft, "# The draft on disk\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
    cmd.args(["gate", "plan", "--file", draft.to_str().unwrap(), "--cwd"])
        .arg(env.dir.path());
    env.apply(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open (never written, never closed) until the test ends.
    let _open = child.stdin.take().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(15) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "gate plan --file with stdin open: {status:?} after {:?}",
        started.elapsed()
    );
    let status = status.expect("the gate waited for stdin to close");
    assert_eq!(status.code(), Some(2));
    assert!(env.server.user_message(0).contains("# The draft on disk"));
}
