//! `crosscheck gate install claude|pi`: the written configuration, and the pi extension run
//! under node against the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::process::Command;

use crate::gate_support::{Env, Reply, plan_flags, stderr, stdout};
use serde_json::{Value, json};

#[test]
fn install_claude_merges_into_existing_settings() {
    let env = Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let existing = json!({
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]}
    });
    std::fs::write(project.join(".claude/settings.json"), existing.to_string()).unwrap();
    let dir = project.to_str().unwrap();
    let out = env.crosscheck(
        &[
            "gate",
            "install",
            "claude",
            "--dir",
            dir,
            "--command",
            "crosscheck",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["permissions"], existing["permissions"]);
    assert_eq!(
        settings["hooks"]["PostToolUse"],
        existing["hooks"]["PostToolUse"]
    );
    let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0]["matcher"], "ExitPlanMode");
    assert_eq!(pre[0]["hooks"][0]["type"], "command");
    assert_eq!(
        pre[0]["hooks"][0]["command"],
        "crosscheck gate plan --format claude-json"
    );

    let again = env.crosscheck(
        &[
            "gate",
            "install",
            "claude",
            "--dir",
            dir,
            "--command",
            "crosscheck",
        ],
        None,
    );
    assert!(stdout(&again).contains("already installed"));
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
}

#[test]
fn install_print_writes_nothing() {
    let env = Env::new();
    let project = env.dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let dir = project.to_str().unwrap();
    let out = env.crosscheck(
        &["gate", "install", "claude", "--dir", dir, "--print"],
        None,
    );
    assert!(out.status.success());
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed["hooks"]["PreToolUse"][0]["matcher"], "ExitPlanMode");
    let out = env.crosscheck(&["gate", "install", "pi", "--dir", dir, "--print"], None);
    assert!(stdout(&out).contains("exit_plan_mode"));
    let out = env.crosscheck(&["gate", "install", "git", "--dir", dir, "--print"], None);
    assert!(stdout(&out).starts_with("#!/bin/sh"));
    assert!(!project.join(".claude").exists() && !project.join(".pi").exists());
}

#[test]
fn install_claude_leaves_invalid_settings_alone() {
    let env = Env::new();
    let project = env.dir.path().join("p");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), "{ oops").unwrap();
    let out = env.crosscheck(
        &[
            "gate",
            "install",
            "claude",
            "--dir",
            project.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
        "{ oops"
    );
}

/// Loads the installed extension in node with a stand-in `pi` object and calls its
/// `tool_call` handler the way pi does: blocked with the review, then an unchanged plan
/// proceeds. (The extension is written in plain JavaScript syntax, so node loads it as-is.)
#[test]
fn the_pi_extension_blocks_exit_plan_mode_with_the_review() {
    let env = Env::new();
    env.server.always(Reply::Text(plan_flags()));
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let out = env.crosscheck(
        &["gate", "install", "pi", "--dir", project.to_str().unwrap()],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let ext = project.join(".pi/extensions/crosscheck-gate.ts");
    let source = std::fs::read_to_string(&ext).unwrap();
    let module = env.dir.path().join("crosscheck-gate.mjs");
    std::fs::write(&module, &source).unwrap();
    let driver = env.dir.path().join("driver.mjs");
    std::fs::write(
        &driver,
        format!(
            r##"
import gate from {module};
const handlers = {{}};
gate({{ on: (name, fn) => {{ handlers[name] = fn; }} }});
const ctx = {{ cwd: {cwd}, model: {{ id: "claude-opus-4-1" }}, ui: {{ notify: () => {{}} }} }};
const call = (plan) => handlers.tool_call({{ toolName: "exit_plan_mode", input: {{ plan }} }}, ctx);
const results = [];
results.push(await call("# Plan\n\nShip it.\n"));
results.push(await call("# Plan\n\nShip it.\n"));
results.push(await handlers.tool_call({{ toolName: "bash", input: {{ command: "ls" }} }}, ctx));
console.log(JSON.stringify(results.map((r) => r ?? null)));
"##,
            module = serde_json::to_string(&format!("file://{}", module.display())).unwrap(),
            cwd = serde_json::to_string(project.to_str().unwrap()).unwrap(),
        ),
    )
    .unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(&driver);
    env.apply(&mut cmd);
    let out = crate::gate_support::run(cmd, None);
    assert!(out.status.success(), "node: {}", stderr(&out));
    let results: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(results[0]["block"], true, "{results}");
    let reason = results[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Automated cold review (Crosscheck) paused this plan:"),
        "{reason}"
    );
    assert!(
        !reason.contains("\"event\""),
        "log lines are not part of the reason: {reason}"
    );
    assert_eq!(results[1], Value::Null, "an unchanged plan proceeds");
    assert_eq!(results[2], Value::Null);
    assert_eq!(env.server.count(), 1);
    assert_eq!(
        env.server.seen()[0].body["model"],
        "claude-opus-4-1",
        "author from ctx.model"
    );
}

/// The hooks name the binary by its absolute path even when `crosscheck` on PATH is this
/// binary: a PATH entry the repository controls must not stand in for it, and an agent's PATH
/// may lack the folder it was installed to.
#[cfg(unix)]
#[test]
fn the_hooks_name_the_binary_by_its_absolute_path() {
    let env = Env::new();
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_crosscheck"))
        .canonicalize()
        .unwrap();
    std::os::unix::fs::symlink(&exe, bin.join("crosscheck")).unwrap();
    let mut cmd = Command::new(&exe);
    cmd.args(["gate", "install", "git", "--print"]);
    env.apply(&mut cmd);
    cmd.env(
        "PATH",
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    );
    let out = crate::gate_support::run(cmd, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let script = stdout(&out);
    assert!(
        script.contains(&format!("exec {} gate commit", exe.display())),
        "{script}"
    );
    let mut cmd = Command::new(&exe);
    cmd.args(["gate", "install", "claude", "--print"]);
    env.apply(&mut cmd);
    cmd.env(
        "PATH",
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    );
    let out = crate::gate_support::run(cmd, None);
    assert!(
        stdout(&out).contains(&format!(
            "\"{} gate plan --format claude-json\"",
            exe.display()
        )),
        "{}",
        stdout(&out)
    );
}
