//! Settings and context panel tab requests. The backend owns the tabs: every change is saved
//! and pushed back as one `Tabs` change, so the UI never echoes its own state.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::Core;
use crate::error::{Error, Result};
use crate::services::tabs::{change_tabs, show_pair, show_tab};
use crate::settings::{Settings, Tab};

/// Fields of [`Request::SetSettings`](super::Request::SetSettings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SetSettings {
    /// The settings to save, whole.
    pub settings: Settings,
}

/// Fields of [`Request::OpenTab`](super::Request::OpenTab).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct OpenTab {
    /// The tab; one with the same key is updated and focused instead.
    pub tab: Tab,
}

/// Fields of [`Request::CloseTab`](super::Request::CloseTab).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CloseTab {
    /// Key of the tab to close.
    pub key: String,
}

/// Fields of [`Request::ActivateTab`](super::Request::ActivateTab).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ActivateTab {
    /// Key of the tab to show.
    pub key: String,
}

/// Fields of [`Request::ShowPair`](super::Request::ShowPair).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ShowPair {
    /// The session the person selected: the main view shows it, the panel its partner.
    pub session_id: String,
}

/// Fields of [`Request::MoveTab`](super::Request::MoveTab).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct MoveTab {
    /// Key of the tab to move.
    pub key: String,
    /// Its new place, counted from 0 (clamped to the list).
    pub to_index: u32,
}

/// Saves settings and pushes them to every window.
pub async fn set_settings(core: &Core, req: SetSettings) -> Result<Settings> {
    let settings = req.settings;
    settings.validate().map_err(Error::InvalidRequest)?;
    core.save_settings(settings.clone())?;
    Ok(settings)
}

/// The default settings, for a "Reset to defaults" action (nothing is saved).
pub async fn default_settings(_core: &Core) -> Result<Settings> {
    Ok(Settings::default())
}

/// Opens or focuses a tab.
pub async fn open_tab(core: &Core, req: OpenTab) -> Result<()> {
    show_tab(core, req.tab)
}

/// Closes a tab; the next one (else the previous) becomes active when it was.
pub async fn close_tab(core: &Core, req: CloseTab) -> Result<()> {
    change_tabs(core, false, |saved| {
        let Some(i) = saved.tabs.iter().position(|t| t.dedupe_key == req.key) else {
            return;
        };
        saved.tabs.remove(i);
        if saved.active.as_deref() == Some(req.key.as_str()) {
            saved.active = saved
                .tabs
                .get(i)
                .or_else(|| i.checked_sub(1).and_then(|j| saved.tabs.get(j)))
                .map(|t| t.dedupe_key.clone());
        }
    })
}

/// Makes a tab the active one.
pub async fn activate_tab(core: &Core, req: ActivateTab) -> Result<()> {
    change_tabs(core, true, |saved| {
        if saved.tabs.iter().any(|t| t.dedupe_key == req.key) {
            saved.active = Some(req.key.clone());
        }
    })
}

/// The pair view: the main view shows the selected session and the panel's follow tab its
/// partner (the other side of its review link, when that session exists).
pub async fn show_pair_of(core: &Core, req: ShowPair) -> Result<()> {
    let partner = core.read_store(|store, _| {
        let session = store.session(&req.session_id)?;
        let link = store.view(session).link?;
        let other = store.session(&link.other_session_id)?;
        Some(Tab::session(&other.id, &other.directory, &other.title))
    });
    show_pair(core, &req.session_id, partner)
}

/// Moves a tab.
pub async fn move_tab(core: &Core, req: MoveTab) -> Result<()> {
    change_tabs(core, false, |saved| {
        let Some(i) = saved.tabs.iter().position(|t| t.dedupe_key == req.key) else {
            return;
        };
        let tab = saved.tabs.remove(i);
        let to = (req.to_index as usize).min(saved.tabs.len());
        saved.tabs.insert(to, tab);
    })
}
