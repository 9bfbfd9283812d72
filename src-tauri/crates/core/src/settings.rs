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
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            theme: Theme::System,
            locale: String::new(),
            handoff_timeout_ms: DEFAULT_HANDOFF_TIMEOUT_MS,
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
        Ok(())
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
