//! `crosscheck gate install claude|git|pi`: writes (or prints) the hook configuration.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

/// The pi extension, with `__CROSSCHECK_COMMAND__` standing for the command (a JSON string).
const PI_EXTENSION: &str = include_str!("pi_extension.ts");

/// Marker line of the git hook this command writes.
const GIT_HOOK_MARKER: &str = "# Installed by `crosscheck gate install git`";

/// Seconds Claude Code waits for the hook (a review plus one repair round fit well inside).
const CLAUDE_HOOK_TIMEOUT_SECS: u64 = 600;

/// Which host to install the gate into.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Claude Code: a `PreToolUse` hook on `ExitPlanMode` in `.claude/settings.json`.
    Claude,
    /// git: a `pre-commit` hook running `crosscheck gate commit`.
    Git,
    /// pi: an extension in `.pi/extensions/crosscheck-gate.ts`.
    Pi,
}

/// Arguments of `crosscheck gate install`.
#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// Where to install.
    #[arg(value_enum)]
    pub target: Target,
    /// Print the file that would be written instead of writing it.
    #[arg(long)]
    pub print: bool,
    /// Project directory (default: the current directory). Use your home directory for a
    /// user-level Claude Code or pi install.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Overwrite an existing git hook or pi extension that differs.
    #[arg(long)]
    pub force: bool,
    /// Command that runs crosscheck (default: `crosscheck` when it is this binary on PATH,
    /// else this binary's absolute path).
    #[arg(long)]
    pub command: Option<String>,
}

/// Runs the install.
pub fn run(args: InstallArgs) -> ExitCode {
    match install(&args) {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("crosscheck gate install: {e}");
            ExitCode::from(1)
        }
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// (program for spawn, command line for a shell). Without `--command`, every hook names this
/// binary by its absolute path (an installed `crosscheck` is then the one in `PREFIX/bin`):
/// agents and git run hooks with their own `PATH`, which may lack the folder it was installed
/// to, or hold a relative entry or a folder the repository controls that puts another
/// `crosscheck` first.
fn command(args: &InstallArgs) -> Result<(String, String), String> {
    if let Some(cmd) = &args.command {
        return Ok((cmd.clone(), cmd.clone()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    let program = exe
        .canonicalize()
        .unwrap_or(exe)
        .to_string_lossy()
        .into_owned();
    let quoted = shell_quote(&program);
    Ok((program, quoted))
}

fn write_file(path: &Path, content: &str, executable: bool) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, content).map_err(|e| format!("{}: {e}", path.display()))?;
    if executable {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn install(args: &InstallArgs) -> Result<String, String> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("current directory: {e}"))?,
    };
    let (program, command_line) = command(args)?;
    match args.target {
        Target::Claude => install_claude(args, &dir, &command_line),
        Target::Git => install_git(args, &dir, &command_line),
        Target::Pi => install_pi(args, &dir, &program),
    }
}

/// Merges the hook into `settings`, keeping every other key. Returns false if already there.
pub fn merge_claude_settings(settings: &mut Value, command_line: &str) -> Result<bool, String> {
    let command = format!("{command_line} gate plan --format claude-json");
    let root = settings
        .as_object_mut()
        .ok_or("settings.json is not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("`hooks` is not an object")?;
    let pre = hooks
        .entry("PreToolUse")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or("`hooks.PreToolUse` is not an array")?;
    let present = pre.iter().any(|entry| {
        entry.get("matcher").and_then(Value::as_str) == Some("ExitPlanMode")
            && entry
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| {
                    hs.iter()
                        .any(|h| h.get("command").and_then(Value::as_str) == Some(&command))
                })
    });
    if present {
        return Ok(false);
    }
    pre.push(json!({
        "matcher": "ExitPlanMode",
        "hooks": [{"type": "command", "command": command, "timeout": CLAUDE_HOOK_TIMEOUT_SECS}],
    }));
    Ok(true)
}

fn install_claude(args: &InstallArgs, dir: &Path, command_line: &str) -> Result<String, String> {
    let path = dir.join(".claude").join("settings.json");
    let mut settings = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("{}: not valid JSON ({e}); left unchanged", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let changed = merge_claude_settings(&mut settings, command_line)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let text = serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())? + "\n";
    if args.print {
        return Ok(text.trim_end().to_owned());
    }
    if !changed {
        return Ok(format!("already installed in {}", path.display()));
    }
    write_file(&path, &text, false)?;
    Ok(format!(
        "installed the ExitPlanMode hook in {}",
        path.display()
    ))
}

fn git_hook_script(command_line: &str) -> String {
    format!(
        "#!/bin/sh\n{GIT_HOOK_MARKER}: cold review of the staged changes.\n\
         # The first commit of a staged diff pauses with the review; the same diff again proceeds.\n\
         exec {command_line} gate commit\n"
    )
}

fn install_git(args: &InstallArgs, dir: &Path, command_line: &str) -> Result<String, String> {
    let script = git_hook_script(command_line);
    if args.print {
        return Ok(script.trim_end().to_owned());
    }
    let output = std::process::Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{} is not inside a git repository: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let hooks = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let path = if hooks.is_absolute() {
        hooks
    } else {
        dir.join(hooks)
    }
    .join("pre-commit");
    match std::fs::read_to_string(&path) {
        Ok(existing) if existing == script => {
            return Ok(format!("already installed in {}", path.display()));
        }
        Ok(_) if !args.force => {
            return Err(format!(
                "{} already exists and differs; add `crosscheck gate commit` to it yourself, or \
                 pass --force to replace it",
                path.display()
            ));
        }
        _ => {}
    }
    write_file(&path, &script, true)?;
    Ok(format!(
        "installed the pre-commit hook in {}",
        path.display()
    ))
}

fn install_pi(args: &InstallArgs, dir: &Path, program: &str) -> Result<String, String> {
    let quoted = serde_json::to_string(program).map_err(|e| e.to_string())?;
    let text = PI_EXTENSION.replace("__CROSSCHECK_COMMAND__", &quoted);
    if args.print {
        return Ok(text.trim_end().to_owned());
    }
    let path = dir
        .join(".pi")
        .join("extensions")
        .join("crosscheck-gate.ts");
    match std::fs::read_to_string(&path) {
        Ok(existing) if existing == text => {
            return Ok(format!("already installed in {}", path.display()));
        }
        Ok(_) if !args.force => {
            return Err(format!(
                "{} already exists and differs; pass --force to replace it",
                path.display()
            ));
        }
        _ => {}
    }
    write_file(&path, &text, false)?;
    Ok(format!("installed the pi extension in {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_merge_keeps_other_keys_and_is_idempotent() {
        let mut settings = json!({
            "model": "opus",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
                      "Stop": []}
        });
        assert!(merge_claude_settings(&mut settings, "crosscheck").unwrap());
        assert!(!merge_claude_settings(&mut settings, "crosscheck").unwrap());
        assert_eq!(settings["model"], "opus");
        assert_eq!(settings["hooks"]["Stop"], json!([]));
        let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[1]["matcher"], "ExitPlanMode");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "crosscheck gate plan --format claude-json"
        );
        assert!(merge_claude_settings(&mut json!([]), "c").is_err());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/usr/bin/crosscheck"), "/usr/bin/crosscheck");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn pi_extension_has_no_placeholder_left() {
        let text = PI_EXTENSION.replace("__CROSSCHECK_COMMAND__", "\"crosscheck\"");
        assert!(!text.contains("__CROSSCHECK"));
        assert!(text.contains("exit_plan_mode") && text.contains("block: true"));
    }
}
