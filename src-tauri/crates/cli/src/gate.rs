//! `crosscheck gate plan|commit|install` and `crosscheck review FILE`: the cold review as
//! agents' hooks call it.
//!
//! Start-up cost matters here (a ledger hit must exit in about 15 ms), so the path to a
//! decision touches only the config files and SQLite; a tokio runtime and the HTTP client are
//! built only when a review actually has to run.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod install;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crosscheck_review::{
    Action, Cadence, Claim, Engine, EngineOptions, Logger, ReviewDecision, ReviewKind,
    ReviewRequest, ReviewSource, ReviewStatus,
};
use serde_json::Value;

/// The `crosscheck gate` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum GateCommand {
    /// Gate a plan: a Claude Code `PreToolUse` payload on stdin, or `--file` / `--text` /
    /// `--text-stdin`. Exits 0 to proceed, 2 to block (reason on stderr; 10 with
    /// `--format pi`), 1 on an internal error.
    Plan(PlanArgs),
    /// Gate a commit as a git `pre-commit` hook: reviews `git diff --cached`.
    /// Exits 0 to proceed, 1 to block (reason on stderr).
    Commit(CommitArgs),
    /// Write (or print) the hook configuration for Claude Code, git or pi.
    Install(install::InstallArgs),
}

/// Exit code of a pause under `--format pi`: one that no argument error (clap exits 2), panic
/// (101) or signal (128 + n) produces, so the extension never reads a broken call as a pause.
pub const PI_PAUSED_EXIT: u8 = 10;

/// How `gate plan` tells the host to block.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Exit 2 with the reason on stderr.
    #[default]
    ExitCode,
    /// Print Claude Code's `hookSpecificOutput` deny JSON on stdout and exit 0; a note (the
    /// plan proceeds unreviewed, the gate could not run) is a `systemMessage` on stdout.
    ClaudeJson,
    /// For the pi extension: exit 10 with the reason on stderr.
    Pi,
}

/// Arguments of `crosscheck gate plan`.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The plan draft file; wins over the parameter when readable and not blank.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// The plan text passed as the tool's parameter (stdin is not read when given).
    #[arg(long, conflicts_with = "text_stdin")]
    pub text: Option<String>,
    /// Read the plan text from stdin as it is, never as a hook payload (any length, any first
    /// character).
    #[arg(long)]
    pub text_stdin: bool,
    /// Working directory the plan belongs to (default: the payload's `cwd`, else the current
    /// directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The model that wrote the plan; drives the reviewer choice.
    #[arg(long, env = "CROSSCHECK_AUTHOR_MODEL")]
    pub author: Option<String>,
    /// How to block.
    #[arg(long, value_enum, default_value_t = Format::ExitCode)]
    pub format: Format,
}

/// Arguments of `crosscheck gate commit`.
#[derive(clap::Args, Debug)]
pub struct CommitArgs {
    /// Directory inside the repository (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The model that wrote the change; drives the reviewer choice.
    #[arg(long, env = "CROSSCHECK_AUTHOR_MODEL")]
    pub author: Option<String>,
}

/// Arguments of `crosscheck review FILE`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReviewArgs {
    /// `report`: print a folder's newest review as markdown instead.
    #[command(subcommand)]
    pub command: Option<crate::report::ReviewCommand>,
    /// The plan file to review.
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// Working directory the plan belongs to (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The model that wrote the plan; drives the reviewer choice.
    #[arg(long, env = "CROSSCHECK_AUTHOR_MODEL")]
    pub author: Option<String>,
    /// Print the decision as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `crosscheck gate` subcommand.
pub fn run_gate(cmd: GateCommand) -> ExitCode {
    match cmd {
        GateCommand::Plan(args) => gate_plan(args),
        GateCommand::Commit(args) => gate_commit(args),
        GateCommand::Install(args) => install::run(args),
    }
}

/// Runs `crosscheck review FILE`: always reviews, records with source `draft`, prints the
/// outcome. Exits 0 when clean, 1 when flagged, 2 when the review could not run.
pub fn run_review(args: ReviewArgs) -> ExitCode {
    if let Some(crate::report::ReviewCommand::Report(report)) = args.command {
        return crate::report::run(report);
    }
    let Some(file) = args.file else {
        return fail("review", "name the plan file to review");
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => return fail("review", &format!("{}: {e}", file.display())),
    };
    let cwd = match resolve_cwd(args.cwd, None) {
        Ok(cwd) => cwd,
        Err(e) => return fail("review", &e),
    };
    let mut request = ReviewRequest::plan(path_string(&cwd), text, ReviewSource::Draft);
    request.path = Some(path_string(&file));
    request.author = args.author.filter(|a| !a.trim().is_empty());
    request.cadence = Cadence::Always;
    if request.text.trim().is_empty() {
        return fail("review", &format!("{}: the file is empty", file.display()));
    }
    let engine = match EngineOptions::from_environment().and_then(Engine::open) {
        Ok(engine) => engine,
        Err(e) => return fail("review", &e.to_string()),
    };
    let decision = match decide(&engine, request) {
        Ok(decision) => decision,
        Err(e) => return fail("review", &e),
    };
    if args.json {
        match serde_json::to_string_pretty(&decision) {
            Ok(json) => println!("{json}"),
            Err(e) => return fail("review", &e.to_string()),
        }
    } else {
        let mut out = std::io::stdout().lock();
        let reviewer = decision.reviewer.as_deref().unwrap_or("-");
        let _ = writeln!(
            out,
            "{}: {} ({}, reviewer {reviewer}, {} ms)",
            file.display(),
            decision.status.as_str(),
            decision.outcome,
            decision.duration_ms
        );
        if let Some(reason) = &decision.reason {
            let _ = writeln!(out, "\n{reason}");
        }
    }
    match decision.status {
        ReviewStatus::Clean => ExitCode::SUCCESS,
        ReviewStatus::Flagged => ExitCode::from(1),
        ReviewStatus::Unreviewed | ReviewStatus::Pending => ExitCode::from(2),
    }
}

fn fail(what: &str, message: &str) -> ExitCode {
    eprintln!("crosscheck {what}: {message}");
    ExitCode::from(1)
}

fn path_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn resolve_cwd(flag: Option<PathBuf>, payload: Option<&str>) -> Result<PathBuf, String> {
    if let Some(cwd) = flag {
        return Ok(cwd);
    }
    if let Some(cwd) = payload.filter(|c| !c.is_empty()) {
        return Ok(PathBuf::from(cwd));
    }
    std::env::current_dir().map_err(|e| format!("current directory: {e}"))
}

/// Claims the key and, only if a review is due, builds a current-thread runtime to run it.
/// A key another live process reviews is waited for (bounded) without a runtime.
fn decide(engine: &Engine, request: ReviewRequest) -> Result<ReviewDecision, String> {
    let mut claim = engine.claim(request).map_err(|e| e.to_string())?;
    loop {
        claim = match claim {
            Claim::Decided(decision) => return Ok(decision),
            Claim::Waiting(wait) => engine.wait_blocking(wait).map_err(|e| e.to_string())?,
            Claim::Review(ticket) => {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("async runtime: {e}"))?;
                return runtime
                    .block_on(engine.run(ticket))
                    .map_err(|e| e.to_string());
            }
        }
    }
}

/// What `gate plan` learned from its inputs.
struct PlanInput {
    text: String,
    source: ReviewSource,
    path: Option<String>,
    cwd: PathBuf,
}

/// Reads stdin unless it is a terminal.
fn read_stdin() -> Result<String, String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut bytes = Vec::new();
    stdin
        .read_to_end(&mut bytes)
        .map_err(|e| format!("stdin: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// How long `gate plan --file` waits for a hook payload on stdin to end. A hook runner writes
/// its payload at once; one that leaves stdin open (with or without a payload) must not hang
/// the gate, whose plan is in the file anyway.
const PAYLOAD_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Reads stdin (unless it is a terminal) until it ends or `bound` passes: `None` when it had
/// not ended by then (what arrived is dropped: a cut payload is no payload). The reading
/// thread is left behind; the process ends without waiting for it.
fn read_stdin_within(bound: std::time::Duration) -> Option<String> {
    if std::io::stdin().is_terminal() {
        return Some(String::new());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_stdin());
    });
    match rx.recv_timeout(bound) {
        Ok(Ok(text)) => Some(text),
        Ok(Err(_)) | Err(_) => None,
    }
}

/// `Ok(None)`: the payload is for another tool, nothing to do.
fn plan_input(args: &PlanArgs) -> Result<Option<PlanInput>, String> {
    let mut parameter = args.text.clone();
    let mut payload_cwd = None;
    if args.text_stdin {
        parameter = Some(read_stdin()?);
    } else if args.text.is_none() {
        // With a draft file, stdin only adds a hook payload's tool name and folder: it is
        // read within a short bound, never waited for.
        let stdin = match &args.file {
            Some(_) => read_stdin_within(PAYLOAD_WAIT).unwrap_or_default(),
            None => read_stdin()?,
        };
        let trimmed = stdin.trim_start();
        if trimmed.starts_with('{') {
            let payload: Value =
                serde_json::from_str(&stdin).map_err(|e| format!("hook payload: {e}"))?;
            if let Some(tool) = payload.get("tool_name").and_then(Value::as_str)
                && tool != "ExitPlanMode"
            {
                return Ok(None);
            }
            payload_cwd = payload
                .get("cwd")
                .and_then(Value::as_str)
                .map(str::to_owned);
            parameter = payload
                .get("tool_input")
                .and_then(|i| i.get("plan"))
                .and_then(Value::as_str)
                .map(str::to_owned);
        } else if !trimmed.is_empty() {
            parameter = Some(stdin);
        }
    }
    let cwd = resolve_cwd(args.cwd.clone(), payload_cwd.as_deref())?;
    if let Some(file) = &args.file {
        let full = if file.is_absolute() {
            file.clone()
        } else {
            cwd.join(file)
        };
        if let Ok(text) = std::fs::read_to_string(&full)
            && !text.trim().is_empty()
        {
            return Ok(Some(PlanInput {
                text,
                source: ReviewSource::Draft,
                path: Some(path_string(&full)),
                cwd,
            }));
        }
    }
    Ok(Some(PlanInput {
        text: parameter.unwrap_or_default(),
        source: ReviewSource::Parameter,
        path: None,
        cwd,
    }))
}

fn gate_plan(args: PlanArgs) -> ExitCode {
    let input = match plan_input(&args) {
        Ok(Some(input)) => input,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            if args.format == Format::ClaudeJson {
                system_message(&format!("Crosscheck gate could not run: {e}"));
            }
            return fail("gate plan", &e);
        }
    };
    if input.text.trim().is_empty() {
        Logger::stderr().skipped(ReviewKind::Plan, "no text");
        return ExitCode::SUCCESS;
    }
    let mut request = ReviewRequest::plan(path_string(&input.cwd), input.text, input.source);
    request.path = input.path;
    request.author = args.author.filter(|a| !a.trim().is_empty());
    let decision = match EngineOptions::from_environment()
        .and_then(Engine::open)
        .map_err(|e| e.to_string())
        .and_then(|engine| decide(&engine, request))
    {
        Ok(decision) => decision,
        Err(e) => {
            if args.format == Format::ClaudeJson {
                system_message(&format!("Crosscheck gate could not run: {e}"));
            }
            return fail("gate plan", &e);
        }
    };
    match (decision.action, args.format) {
        (Action::Proceed, format) => {
            if let Some(note) = &decision.reason {
                eprintln!("{note}");
                // Claude Code shows a hook's stderr only in verbose mode: a plan that
                // proceeds unreviewed says so where the user sees it.
                if format == Format::ClaudeJson {
                    system_message(note);
                }
            }
            ExitCode::SUCCESS
        }
        (Action::Block, Format::ExitCode) => {
            eprintln!("{}", decision.reason.unwrap_or_default());
            ExitCode::from(2)
        }
        (Action::Block, Format::Pi) => {
            eprintln!("{}", decision.reason.unwrap_or_default());
            ExitCode::from(PI_PAUSED_EXIT)
        }
        (Action::Block, Format::ClaudeJson) => {
            let out = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": decision.reason.unwrap_or_default(),
                }
            });
            println!("{out}");
            ExitCode::SUCCESS
        }
    }
}

/// Prints Claude Code's `systemMessage` (shown to the user) on stdout.
fn system_message(text: &str) {
    println!("{}", serde_json::json!({ "systemMessage": text }));
}

fn git(cwd: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if !output.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(output.stdout)
}

fn gate_commit(args: CommitArgs) -> ExitCode {
    let run = || -> Result<Option<ReviewDecision>, String> {
        let cwd = resolve_cwd(args.cwd.clone(), None)?;
        let top = git(&cwd, &["rev-parse", "--show-toplevel"])?;
        let top = String::from_utf8_lossy(&top).trim().to_owned();
        let diff = git(
            &cwd,
            &[
                "diff",
                "--cached",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
            ],
        )?;
        if diff.iter().all(u8::is_ascii_whitespace) {
            Logger::stderr().skipped(ReviewKind::Commit, "empty diff");
            return Ok(None);
        }
        let names = git(&cwd, &["diff", "--cached", "--name-only", "-z"])?;
        let files = names
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        let mut request =
            ReviewRequest::commit(top, String::from_utf8_lossy(&diff).into_owned(), files);
        request.author = args.author.clone().filter(|a| !a.trim().is_empty());
        let engine = EngineOptions::from_environment()
            .and_then(Engine::open)
            .map_err(|e| e.to_string())?;
        decide(&engine, request).map(Some)
    };
    match run() {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(decision)) => {
            if let Some(reason) = &decision.reason {
                eprintln!("{reason}");
            }
            match decision.action {
                Action::Proceed => ExitCode::SUCCESS,
                Action::Block => ExitCode::from(1),
            }
        }
        Err(e) => fail("gate commit", &e),
    }
}
