//! The context panel's tabs: saved in SQLite and pushed back as one `Tabs` change, so the UI
//! never echoes its own state. Requests and flows both open tabs here.

use crate::api_types::Change;
use crate::core::Core;
use crate::db::SavedTabs;
use crate::error::Result;
use crate::settings::Tab;

/// Opens (or focuses) a tab and shows the panel: requests and flows both open tabs this way.
pub(crate) fn show_tab(core: &Core, tab: Tab) -> Result<()> {
    change_tabs(core, true, |saved| {
        match saved
            .tabs
            .iter_mut()
            .find(|t| t.dedupe_key == tab.dedupe_key)
        {
            Some(existing) => *existing = tab.clone(),
            None => saved.tabs.push(tab.clone()),
        }
        saved.active = Some(tab.dedupe_key.clone());
    })
}

/// Reads the saved tabs, changes them, saves them and pushes the result.
pub(crate) fn change_tabs(core: &Core, reveal: bool, f: impl FnOnce(&mut SavedTabs)) -> Result<()> {
    let mut saved = core.db().tabs();
    f(&mut saved);
    if saved.active.is_none() {
        saved.active = saved.tabs.first().map(|t| t.dedupe_key.clone());
    }
    core.db().set_tabs(&saved)?;
    core.emit(Change::Tabs {
        tabs: saved.tabs,
        active: saved.active,
        reveal,
    });
    Ok(())
}
