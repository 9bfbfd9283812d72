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
}

/// Read-only shell commands a reviewer may run by default.
pub const DEFAULT_REVIEWER_SHELL_ALLOW: &[&str] = &[
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

/// Shell command patterns denied to a read-only reviewer whatever its allow list says, because
/// an allowed command would write or run a program through them. OpenCode matches each
/// sub-command of a command line (split at `;`, `&&`, `|`, substitutions) with its
/// redirections against the rules, and the last rule that matches wins, so these come after
/// the allows: `--output` (`git diff`, `log` and `show` write the diff to a file), any
/// redirection (`>`, `>>`, `2>`; a `>` inside quotes is refused too), ripgrep's `--pre` and
/// `--hostname-bin` (run a program), `find`'s actions that delete, write or run, and
/// `git difftool` (which `git diff*` would match; it starts a configured program).
pub const REVIEWER_SHELL_DENY: &[&str] = &[
    "*--output*",
    "*>*",
    "rg *--pre*",
    "rg *--hostname-bin*",
    "find *-delete*",
    "find *-exec*",
    "find *-ok*",
    "find *-fprint*",
    "find *-fls*",
    "git difftool*",
];

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
    /// An automatic review loop stopped.
    pub loop_stopped: bool,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        Self {
            review_done: true,
            permission: true,
            loop_stopped: true,
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
        if let Some(bad) = self
            .reviewer_shell_allow
            .iter()
            .find(|p| p.trim().is_empty() || p.trim() == "*" || p.len() > 200)
        {
            return Err(format!(
                "a reviewer shell pattern must name a command (not {bad:?})"
            ));
        }
        Ok(())
    }

    /// The permission rules of a review session: none when reviewers may edit, else `edit`
    /// denied and `bash` denied but for the allowed patterns, then the [`REVIEWER_SHELL_DENY`]
    /// patterns denied again (OpenCode applies the last rule that matches).
    pub fn reviewer_permission(&self) -> Option<Vec<crosscheck_opencode::PermissionRule>> {
        use crosscheck_opencode::PermissionRule;
        if !self.reviewer_read_only {
            return None;
        }
        let mut rules = vec![
            PermissionRule::new("edit", "*", "deny"),
            PermissionRule::new("bash", "*", "deny"),
        ];
        rules.extend(
            self.reviewer_shell_allow
                .iter()
                .map(|p| PermissionRule::new("bash", p.trim(), "allow")),
        );
        rules.extend(
            REVIEWER_SHELL_DENY
                .iter()
                .map(|p| PermissionRule::new("bash", p, "deny")),
        );
        Some(rules)
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
