//! The context panel's tabs: saved in SQLite and pushed back as one `Tabs` change, so the UI
//! never echoes its own state. Requests and flows both open tabs here.
//!
//! The pair view: the main view shows the selected session (`SavedTabs::main`) and one tab, the
//! follow tab (`SavedTabs::follow`), shows its partner and moves with the selection; every other
//! tab was pinned (by the person or a flow) and stays. The panel never shows the main view's
//! session, and no session has two tabs.

use crate::api_types::Change;
use crate::core::Core;
use crate::db::SavedTabs;
use crate::error::Result;
use crate::settings::Tab;

/// Opens (or focuses) a tab and shows the panel: requests and flows both open tabs this way.
/// The tab is pinned: opening the follow tab's session pins it, opening the main view's
/// session moves it out of the main view.
pub(crate) fn show_tab(core: &Core, tab: Tab) -> Result<()> {
    change_tabs(core, true, |saved| pin_tab(saved, tab))
}

/// Opens a flow's tab for the partner of `of`: when `of` is the main view's session (or nothing
/// is selected yet) the tab becomes the follow tab instead of one more pinned tab, so moving on
/// to another pair does not leave it behind.
pub(crate) fn show_partner_tab(core: &Core, of: &str, tab: Tab) -> Result<()> {
    change_tabs(core, true, |saved| {
        if saved.main.as_deref().is_none_or(|main| main == of) {
            saved.main = Some(of.to_owned());
            follow_partner(saved, of, Some(tab));
        } else {
            pin_tab(saved, tab);
        }
    })
}

/// Follows a selection: `main` is shown in the main view, the follow tab shows `partner` (or
/// goes when it has none). A panel the person closed stays closed (its content still follows).
pub(crate) fn show_pair(core: &Core, main: &str, partner: Option<Tab>) -> Result<()> {
    change_tabs(core, false, |saved| follow_partner(saved, main, partner))
}

/// Reads the saved tabs, changes them, saves them and pushes the result.
pub(crate) fn change_tabs(core: &Core, reveal: bool, f: impl FnOnce(&mut SavedTabs)) -> Result<()> {
    let mut saved = core.db().tabs();
    f(&mut saved);
    settle(&mut saved);
    core.db().set_tabs(&saved)?;
    core.emit(Change::Tabs {
        tabs: saved.tabs,
        active: saved.active,
        reveal,
        follow: saved.follow,
    });
    Ok(())
}

/// The rule of the pinned tabs: an existing tab with the same key is updated and focused.
pub(crate) fn pin_tab(saved: &mut SavedTabs, tab: Tab) {
    if saved.follow.as_deref() == Some(tab.dedupe_key.as_str()) {
        saved.follow = None;
    }
    if tab.session_id.is_some() && tab.session_id == saved.main {
        // The person moved the main view's session to the panel: the main view lets it go.
        saved.main = None;
    }
    match saved
        .tabs
        .iter_mut()
        .find(|t| t.dedupe_key == tab.dedupe_key)
    {
        Some(existing) => *existing = tab.clone(),
        None => saved.tabs.push(tab.clone()),
    }
    saved.active = Some(tab.dedupe_key);
}

/// The rule of the pair view: `main` goes to the main view; the follow tab is replaced by
/// `partner` in its place (or dropped when there is none); a partner that is already pinned is
/// focused instead of opened twice.
pub(crate) fn follow_partner(saved: &mut SavedTabs, main: &str, partner: Option<Tab>) {
    saved.main = Some(main.to_owned());
    let old = saved.follow.take();
    let place = old
        .as_deref()
        .and_then(|key| saved.tabs.iter().position(|t| t.dedupe_key == key));
    if let Some(i) = place {
        saved.tabs.remove(i);
    }
    let was_following = old.is_some() && saved.active == old;
    match partner {
        Some(tab) => {
            if saved.tabs.iter().any(|t| t.dedupe_key == tab.dedupe_key) {
                saved.active = Some(tab.dedupe_key);
            } else {
                let key = tab.dedupe_key.clone();
                let at = place.unwrap_or(saved.tabs.len()).min(saved.tabs.len());
                saved.tabs.insert(at, tab);
                saved.follow = Some(key.clone());
                saved.active = Some(key);
            }
        }
        None if was_following => saved.active = None,
        None => {}
    }
}

/// What every change ends with: the active tab exists and does not show the main view's
/// session (then the follow tab, else the first other tab, else none is active).
fn settle(saved: &mut SavedTabs) {
    let shows_main = |t: &Tab| t.session_id.is_some() && t.session_id == saved.main;
    let usable = |key: &str| {
        saved
            .tabs
            .iter()
            .any(|t| t.dedupe_key == key && !shows_main(t))
    };
    if saved
        .follow
        .as_deref()
        .is_some_and(|key| !saved.tabs.iter().any(|t| t.dedupe_key == key))
    {
        saved.follow = None;
    }
    if saved.active.as_deref().is_some_and(usable) {
        return;
    }
    saved.active = saved.follow.clone().filter(|key| usable(key)).or_else(|| {
        saved
            .tabs
            .iter()
            .find(|t| !shows_main(t))
            .map(|t| t.dedupe_key.clone())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str) -> Tab {
        Tab::session(id, "/p", id)
    }

    fn key(id: &str) -> String {
        format!("session:{id}")
    }

    fn select(saved: &mut SavedTabs, main: &str, partner: Option<&str>) {
        follow_partner(saved, main, partner.map(tab));
        settle(saved);
    }

    fn keys(saved: &SavedTabs) -> Vec<&str> {
        saved.tabs.iter().map(|t| t.dedupe_key.as_str()).collect()
    }

    #[test]
    fn moving_between_pairs_keeps_one_follow_tab_beside_the_pinned_ones() {
        let mut saved = SavedTabs::default();
        pin_tab(&mut saved, Tab::reviews());
        for (main, partner) in [
            ("a", "ra"),
            ("b", "rb"),
            ("rc", "c"),
            ("d", "rd"),
            ("e", "re"),
        ] {
            select(&mut saved, main, Some(partner));
            assert_eq!(saved.main.as_deref(), Some(main));
            assert_eq!(saved.active, Some(key(partner)));
            assert_eq!(saved.follow, Some(key(partner)));
        }
        assert_eq!(
            keys(&saved),
            vec!["reviews", "session:re"],
            "no pile of tabs"
        );
    }

    #[test]
    fn a_session_without_a_partner_drops_the_follow_tab_and_shows_a_pinned_one() {
        let mut saved = SavedTabs::default();
        pin_tab(&mut saved, Tab::reviews());
        select(&mut saved, "a", Some("ra"));
        select(&mut saved, "solo", None);
        assert_eq!(keys(&saved), vec!["reviews"]);
        assert_eq!(saved.follow, None);
        assert_eq!(saved.active.as_deref(), Some("reviews"));
    }

    #[test]
    fn a_pinned_partner_is_focused_not_opened_twice() {
        let mut saved = SavedTabs::default();
        pin_tab(&mut saved, tab("ra"));
        select(&mut saved, "a", Some("ra"));
        assert_eq!(keys(&saved), vec!["session:ra"]);
        assert_eq!(saved.follow, None, "the pinned tab is not the follow tab");
        assert_eq!(saved.active, Some(key("ra")));
        // Moving on leaves the pinned tab where it is.
        select(&mut saved, "b", Some("rb"));
        assert_eq!(keys(&saved), vec!["session:ra", "session:rb"]);
    }

    #[test]
    fn the_main_views_session_is_never_the_panels_active_tab() {
        let mut saved = SavedTabs::default();
        pin_tab(&mut saved, tab("a"));
        pin_tab(&mut saved, tab("x"));
        saved.active = Some(key("a"));
        select(&mut saved, "a", None);
        assert_eq!(
            saved.active,
            Some(key("x")),
            "the pinned tab of the main session yields"
        );
        // Only the main session's tab left: nothing is active.
        let mut only = SavedTabs::default();
        pin_tab(&mut only, tab("a"));
        select(&mut only, "a", None);
        assert_eq!(only.active, None);
    }

    #[test]
    fn pinning_the_follow_tab_keeps_it_and_pinning_the_main_session_frees_the_main_view() {
        let mut saved = SavedTabs::default();
        select(&mut saved, "a", Some("ra"));
        pin_tab(&mut saved, tab("ra"));
        settle(&mut saved);
        assert_eq!(saved.follow, None);
        select(&mut saved, "b", Some("rb"));
        assert_eq!(keys(&saved), vec!["session:ra", "session:rb"]);
        pin_tab(&mut saved, tab("b"));
        settle(&mut saved);
        assert_eq!(saved.main, None);
        assert_eq!(saved.active, Some(key("b")));
    }

    #[test]
    fn the_follow_tab_keeps_its_place_among_pinned_tabs() {
        let mut saved = SavedTabs::default();
        pin_tab(&mut saved, tab("p1"));
        select(&mut saved, "a", Some("ra"));
        pin_tab(&mut saved, tab("p2"));
        select(&mut saved, "b", Some("rb"));
        assert_eq!(keys(&saved), vec!["session:p1", "session:rb", "session:p2"]);
    }
}
