//! The user's settings and the context panel's tabs: our own types, read strictly.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Default time the handoff wait allows an assistant turn: 30 minutes, far above 180 s.
pub const DEFAULT_HANDOFF_TIMEOUT_MS: u64 = 30 * 60 * 1000;
/// The shortest handoff time limit accepted: 10 seconds.
pub const MIN_HANDOFF_TIMEOUT_MS: u64 = 10_000;
/// The longest handoff time limit accepted: 24 hours.
pub const MAX_HANDOFF_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Light, dark, or follow the system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum Theme {
    /// Follow the system.
    #[default]
    System,
    /// Light colours, whatever the system prefers.
    Light,
    /// Dark colours, whatever the system prefers.
    Dark,
}

/// The user's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[ts(export)]
pub struct Settings {
    /// Colour theme.
    pub theme: Theme,
    /// UI language (`en`, `de`); empty follows the system.
    pub locale: String,
    /// How long the handoff wait allows the implementer's turn, in ms.
    #[ts(type = "number")]
    pub handoff_timeout_ms: u64,
    /// Review sessions may not edit files: their permission rules deny `edit` and every shell
    /// command but those in `reviewer_shell_allow`.
    pub reviewer_read_only: bool,
    /// Shell command patterns a read-only reviewer may run (globs, `*` any text).
    pub reviewer_shell_allow: Vec<String>,
    /// Which OS notifications the UI shows (all of them unless turned off).
    pub notifications: NotificationSettings,
    /// The review loop's budget when its dialog sets none (no limit by default).
    pub loop_budget: crate::model::budget::LoopBudget,
}

/// Shell commands a read-only reviewer may run by default: none. The pinned OpenCode asks
/// permission only for plain command nodes of a command line: a declaration (`export`,
/// `declare -x`, `typeset -x`, `readonly`) and a brace expansion (`{touch,x}`) run unchecked,
/// and what they export reaches the next allowed command (`GIT_EXTERNAL_DIFF`,
/// `GIT_CONFIG_PARAMETERS`, `BASH_ENV`, `LD_PRELOAD`). No allow list can hold while the shell
/// is there, so a read-only reviewer has none: it reads with OpenCode's read, grep and glob.
pub const DEFAULT_REVIEWER_SHELL_ALLOW: &[&str] = &[];

/// The list earlier versions allowed by default. Settings saved with exactly this list are
/// read as the new default (no shell), since the user never chose it.
pub const PREVIOUS_DEFAULT_REVIEWER_SHELL_ALLOW: &[&str] = &[
    "git status*",
    "git diff*",
    "git log*",
    "git show*",
    "git blame*",
    "ls",
    "ls *",
    "cat *",
    "head *",
    "tail *",
    "wc *",
    "grep *",
    "rg *",
    "pwd",
];

/// Shell command patterns denied to a read-only reviewer whatever its allow list says. They
/// only matter when the user allowed commands in Settings, and they only see what OpenCode
/// checks (each plain command with its redirections; the last matching rule wins, so these come
/// after the allows): a `$`, backtick, brace, quote, backslash or `=` (substitutions, brace
/// expansions, assignments, `git -c k=v`, `--output=FILE` and spellings of it), `--output` and
/// its abbreviations, any redirection, ripgrep's `--pre` and `--hostname-bin`, `find`'s actions
/// that delete, write or run, and `git difftool`.
pub const REVIEWER_SHELL_DENY: &[&str] = &[
    "*$*",
    "*`*",
    "*{*",
    "*}*",
    "*\"*",
    "*'*",
    "*\\*",
    "*=*",
    "*--ou*",
    "*>*",
    "*<*",
    "rg *--pre*",
    "rg *--hostname-bin*",
    "find *-delete*",
    "find *-exec*",
    "find *-ok*",
    "find *-fprint*",
    "find *-fls*",
    "git difftool*",
];

/// Commands a user's allowed pattern may not start with: they run other programs or change the
/// shell's environment by design.
const RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "env", "eval", "exec", "xargs", "command",
    "builtin", "source", ".", "export", "declare", "typeset", "readonly", "local", "alias", "set",
    "sudo", "nohup", "nice", "timeout", "time", "watch", "find", "awk", "sed", "perl", "python",
    "python3", "node", "ruby", "php", "make", "npm", "npx", "tee", "dd",
];

/// Why a user's allowed shell pattern is refused, if it is: a pattern is a command and fixed
/// words of letters, digits and `._/:@%+,-`, optionally ending in `*` (any further words).
/// Shell syntax, a `*` inside, or a command that runs other programs would let the reviewer
/// write or run what it likes through the pattern.
pub fn reviewer_shell_pattern_problem(pattern: &str) -> Option<String> {
    let p = pattern.trim();
    if p.is_empty() || p.len() > 200 {
        return Some("it is empty or longer than 200 characters".into());
    }
    let body = p.strip_suffix('*').unwrap_or(p);
    if let Some(c) = body
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || " ._/:@%+,-".contains(*c)))
    {
        return Some(format!(
            "{c:?} is shell syntax or a wildcard inside the pattern; only a trailing * is allowed"
        ));
    }
    let command = body.split_whitespace().next().unwrap_or_default();
    if command.is_empty() {
        return Some("it names no command".into());
    }
    if RUNNERS.contains(&command) || command.contains('/') {
        return Some(format!("{command} runs other programs"));
    }
    if body.split_whitespace().count() == 1 && p.ends_with('*') && !body.ends_with(' ') {
        // `git*` or `ls*`: any program whose name starts so.
        return Some(format!(
            "{p} matches every program whose name starts with {command}; write \"{command} *\""
        ));
    }
    None
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            theme: Theme::System,
            locale: String::new(),
            handoff_timeout_ms: DEFAULT_HANDOFF_TIMEOUT_MS,
            reviewer_read_only: true,
            reviewer_shell_allow: DEFAULT_REVIEWER_SHELL_ALLOW
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            notifications: NotificationSettings::default(),
            loop_budget: crate::model::budget::LoopBudget::default(),
        }
    }
}

/// Each kind of OS notification, on or off. Settings saved before these existed read as all on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[ts(export)]
pub struct NotificationSettings {
    /// A review session's turn finished while the window was not focused.
    pub review_done: bool,
    /// A session waits for a permission.
    pub permission: bool,
    /// An automatic review loop stopped (or ended).
    pub loop_stopped: bool,
    /// OpenCode's `question` tool waits for an answer.
    pub question: bool,
    /// A session's turn failed.
    pub turn_failed: bool,
    /// A turn finished in a session that is no review session while the window was not focused.
    pub turn_finished: bool,
    /// The code moved on since a review.
    pub review_stale: bool,
    /// A review handoff failed.
    pub handoff_failed: bool,
    /// A short sound plays with each notification.
    pub sound: bool,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        Self {
            review_done: true,
            permission: true,
            loop_stopped: true,
            question: true,
            turn_failed: true,
            turn_finished: true,
            review_stale: true,
            handoff_failed: true,
            sound: false,
        }
    }
}

impl Settings {
    /// Why these settings cannot be saved, if they cannot.
    pub fn validate(&self) -> Result<(), String> {
        let ms = self.handoff_timeout_ms;
        if ms < MIN_HANDOFF_TIMEOUT_MS {
            return Err("the handoff time limit must be at least 10 seconds".into());
        }
        if ms > MAX_HANDOFF_TIMEOUT_MS {
            return Err("the handoff time limit must be at most 24 hours".into());
        }
        if let Some(why) = self.loop_budget.problem() {
            return Err(why.into());
        }
        for pattern in &self.reviewer_shell_allow {
            if let Some(why) = reviewer_shell_pattern_problem(pattern) {
                return Err(format!(
                    "a reviewer shell pattern must name a command and fixed words ({pattern:?}: {why})"
                ));
            }
        }
        Ok(())
    }

    /// The permission rules of a review session: none when reviewers may edit, else `edit`,
    /// `bash`, `task` and `webfetch` denied (OpenCode then offers no tool that writes, runs a
    /// shell, starts a subagent or sends what it read to an address). Only when the user allowed shell commands in Settings do those allows follow,
    /// then the [`REVIEWER_SHELL_DENY`] patterns (OpenCode applies the last rule that matches).
    pub fn reviewer_permission(&self) -> Option<Vec<crosscheck_opencode::PermissionRule>> {
        use crosscheck_opencode::PermissionRule;
        if !self.reviewer_read_only {
            return None;
        }
        let mut rules = vec![
            PermissionRule::new("edit", "*", "deny"),
            PermissionRule::new("task", "*", "deny"),
            PermissionRule::new("bash", "*", "deny"),
            // A fetch can carry what the reviewer read to any address a file asks it to.
            PermissionRule::new("webfetch", "*", "deny"),
        ];
        let allowed: Vec<&str> = self
            .reviewer_shell_allow
            .iter()
            .map(|p| p.trim())
            .filter(|p| reviewer_shell_pattern_problem(p).is_none())
            .collect();
        if allowed.is_empty() {
            return Some(rules);
        }
        rules.extend(
            allowed
                .iter()
                .map(|p| PermissionRule::new("bash", p, "allow")),
        );
        rules.extend(
            REVIEWER_SHELL_DENY
                .iter()
                .map(|p| PermissionRule::new("bash", p, "deny")),
        );
        Some(rules)
    }

    /// Settings as saved by an earlier version, brought up to date: the old default shell list,
    /// which the user never chose, becomes the new default (no shell).
    pub fn migrated(mut self) -> Self {
        if self.reviewer_shell_allow == PREVIOUS_DEFAULT_REVIEWER_SHELL_ALLOW {
            self.reviewer_shell_allow.clear();
        }
        self
    }

    /// The handoff time limit in ms, within the accepted bounds even when the stored value
    /// (from an older version, or edited by hand) is not.
    pub fn handoff_timeout(&self) -> u64 {
        self.handoff_timeout_ms
            .clamp(MIN_HANDOFF_TIMEOUT_MS, MAX_HANDOFF_TIMEOUT_MS)
    }
}

/// What a context panel tab shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum TabMode {
    /// A live chat of a session.
    Chat,
    /// The list of cold reviews.
    Reviews,
    /// What a session changed (the Changes tab), keyed `changes:<id>`.
    Changes,
}

/// A context panel tab; `dedupe_key` is `session:<id>` for chat tabs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Tab {
    /// Kind of tab.
    pub mode: TabMode,
    /// Unique key; opening a tab with an existing key focuses it.
    pub dedupe_key: String,
    /// Label shown on the tab.
    pub label: String,
    /// Directory the tab belongs to.
    #[ts(optional)]
    #[serde(default)]
    pub directory: Option<String>,
    /// Session shown, for chat tabs.
    #[ts(optional)]
    #[serde(default)]
    pub session_id: Option<String>,
}

impl Tab {
    /// A chat tab for a session, keyed `session:<id>`.
    pub fn session(session_id: &str, directory: &str, label: &str) -> Self {
        Self {
            mode: TabMode::Chat,
            dedupe_key: format!("session:{session_id}"),
            label: label.to_owned(),
            directory: Some(directory.to_owned()),
            session_id: Some(session_id.to_owned()),
        }
    }

    /// The one Reviews tab, keyed `reviews`.
    pub fn reviews() -> Self {
        Self {
            mode: TabMode::Reviews,
            dedupe_key: REVIEWS_TAB_KEY.to_owned(),
            label: "Reviews".to_owned(),
            directory: None,
            session_id: None,
        }
    }
}

/// Key of the (single) Reviews tab.
pub const REVIEWS_TAB_KEY: &str = "reviews";

#[cfg(test)]
mod tests {
    use super::*;

    fn with_allow(list: &[&str]) -> Settings {
        Settings {
            reviewer_shell_allow: list.iter().map(|s| (*s).to_owned()).collect(),
            ..Settings::default()
        }
    }

    #[test]
    fn a_read_only_reviewer_has_no_shell_no_edit_and_no_subagent_by_default() {
        let rules = Settings::default()
            .reviewer_permission()
            .expect("read-only");
        let shape: Vec<(&str, &str, &str)> = rules
            .iter()
            .map(|r| (r.permission.as_str(), r.pattern.as_str(), r.action.as_str()))
            .collect();
        assert_eq!(
            shape,
            [
                ("edit", "*", "deny"),
                ("task", "*", "deny"),
                ("bash", "*", "deny"),
                ("webfetch", "*", "deny")
            ]
        );
        let editing = Settings {
            reviewer_read_only: false,
            ..Settings::default()
        };
        assert!(editing.reviewer_permission().is_none());
    }

    #[test]
    fn unsafe_shapes_are_refused_and_plain_commands_kept() {
        for bad in [
            "*",
            "git*",
            "ls*",
            "git diff --output=*",
            "export *",
            "declare -x *",
            "env *",
            "bash *",
            "eval *",
            "git log; touch x",
            "cat $HOME",
            "ls {a,b}",
            "git -c a=b *",
            "cat *.rs",
            "cat x > y",
            "./run *",
            "cat `x`",
            "  ",
        ] {
            assert!(
                reviewer_shell_pattern_problem(bad).is_some(),
                "{bad:?} is refused"
            );
            assert!(with_allow(&[bad]).validate().is_err(), "{bad:?} not saved");
        }
        for good in [
            "git diff *",
            "git log",
            "ls",
            "ls *",
            "cargo tree *",
            "git status*",
        ] {
            assert_eq!(reviewer_shell_pattern_problem(good), None, "{good:?}");
        }
        assert!(with_allow(&["git diff *", "ls"]).validate().is_ok());
    }

    #[test]
    fn user_commands_come_before_the_denials_that_stop_syntax_through_them() {
        let rules = with_allow(&["git diff *"])
            .reviewer_permission()
            .expect("read-only");
        let bash: Vec<(&str, &str)> = rules
            .iter()
            .filter(|r| r.permission == "bash")
            .map(|r| (r.pattern.as_str(), r.action.as_str()))
            .collect();
        assert_eq!(bash[0], ("*", "deny"));
        assert_eq!(bash[1], ("git diff *", "allow"));
        for deny in ["*$*", "*{*", "*=*", "*>*", "*`*", "*--ou*"] {
            let at = bash.iter().position(|r| *r == (deny, "deny"));
            assert!(at.is_some_and(|i| i > 1), "{deny} denied after the allow");
        }
    }

    #[test]
    fn the_old_default_list_is_read_as_no_shell_and_a_chosen_list_stays() {
        let old = with_allow(PREVIOUS_DEFAULT_REVIEWER_SHELL_ALLOW).migrated();
        assert!(old.reviewer_shell_allow.is_empty());
        let chosen = with_allow(&["git diff *"]).migrated();
        assert_eq!(chosen.reviewer_shell_allow, ["git diff *"]);
    }
}
