//! Git as a subprocess with a fixed argument list, for worktrees and merges in a repository
//! that is not trusted (design.md, "Trust model"): hooks point at an empty path, the
//! filesystem monitor, external diff, editors and pagers are off, nothing signs, nothing asks
//! for a password; and before anything writes, the repository's own config is checked for
//! keys that would make git run a program (filters, merge drivers, includes).

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// How long one git command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings every git call gets on its command line (they win over any config file).
const SAFE_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.quotepath=off",
    "core.editor=true",
    "core.pager=cat",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "merge.verifySignatures=false",
    "diff.external=",
    "merge.renormalize=false",
    "rerere.enabled=false",
];

/// What one git call printed.
#[derive(Debug)]
pub struct Output {
    /// Whether git exited with 0.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error's first lines, trimmed (git's own words).
    pub stderr: String,
}

/// Runs git in `dir`; a failure to start or a time-out is an error, a non-zero exit is not.
pub async fn run(dir: &Path, args: &[&str]) -> Result<Output> {
    let mut command = tokio::process::Command::new("git");
    command.arg("--no-pager");
    for setting in SAFE_CONFIG {
        command.arg("-c").arg(setting);
    }
    command
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("GIT_PAGER", "cat")
        .env("GIT_MERGE_AUTOEDIT", "no")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(GIT_TIMEOUT, command.output())
        .await
        .map_err(|_| {
            Error::Worktree(format!(
                "git {} took longer than {} s",
                args.first().unwrap_or(&""),
                GIT_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| Error::Worktree(format!("could not run git: {e}")))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(6)
        .collect();
    Ok(Output {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: stderr.join("\n"),
    })
}

/// Runs git in `dir` and answers its output; a non-zero exit is an error with git's words.
pub async fn ok(dir: &Path, args: &[&str]) -> Result<String> {
    let out = run(dir, args).await?;
    if !out.ok {
        let reason = if out.stderr.is_empty() {
            "git failed".to_owned()
        } else {
            out.stderr
        };
        return Err(Error::Worktree(format!(
            "git {}: {reason}",
            args.first().unwrap_or(&"")
        )));
    }
    Ok(out.stdout)
}

/// Keys of the repository's own config that make git run a program or read another file.
fn runs_a_program(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    let (first, last) = match (parts.first(), parts.last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => return false,
    };
    match first {
        "filter" => matches!(last, "clean" | "smudge" | "process"),
        "merge" => last == "driver",
        "diff" => matches!(last, "textconv" | "command"),
        "include" | "includeif" => last == "path",
        "core" => matches!(
            last,
            "fsmonitor" | "hookspath" | "sshcommand" | "gitproxy" | "askpass" | "editor" | "pager"
        ),
        "gpg" => last == "program",
        "credential" => last == "helper",
        _ => false,
    }
}

/// Refuses a repository whose own config (not the user's) names a program git would run
/// during a merge or commit.
pub async fn check_config(dir: &Path) -> Result<()> {
    let listing = ok(dir, &["config", "--list", "--show-scope", "-z"]).await?;
    // With `-z` each entry is `scope NUL key LF value NUL`.
    let fields: Vec<&str> = listing.split('\0').collect();
    let unsafe_keys: Vec<String> = fields
        .chunks(2)
        .filter_map(|pair| {
            let (scope, rest) = (pair.first()?, pair.get(1)?);
            let key = rest.split('\n').next().unwrap_or(rest);
            (matches!(*scope, "local" | "worktree") && runs_a_program(key)).then(|| key.to_owned())
        })
        .collect();
    if unsafe_keys.is_empty() {
        return Ok(());
    }
    Err(Error::MergeRefused(format!(
        "the repository's own config names programs git would run ({}); Crosscheck does not merge there",
        unsafe_keys.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::runs_a_program;

    #[test]
    fn keys_that_run_programs_are_named() {
        for key in [
            "filter.x.smudge",
            "merge.ours.driver",
            "diff.pdf.textconv",
            "include.path",
            "includeIf.gitdir:/x.path",
            "core.hooksPath",
            "core.fsmonitor",
            "gpg.ssh.program",
        ] {
            assert!(runs_a_program(key), "{key}");
        }
        for key in [
            "user.name",
            "core.autocrlf",
            "branch.main.remote",
            "merge.ff",
        ] {
            assert!(!runs_a_program(key), "{key}");
        }
    }
}
