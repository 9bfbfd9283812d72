//! The count of items that need the person on the desktop's launcher icon.
//!
//! On Linux, Tauri's `set_badge_count` goes through libunity and does nothing unless the Unity
//! shell itself runs, and it names the entry after the product (`Crosscheck.desktop`), which no
//! package installs. The docks that show counts (KDE Plasma's task manager, Dash to Dock, Plank,
//! Unity) all listen for the launcher-entry D-Bus signal instead, so the shell sends that signal
//! itself, naming the desktop entry that `make install` and the `.deb` install. Elsewhere the
//! count goes to Tauri's badge.

/// The desktop entry's id: the file name under `share/applications` that `make install` and
/// the `.deb` (named after the main binary) install. A dock matches the signal to it.
pub const DESKTOP_ENTRY: &str = "crosscheck-desktop.desktop";

/// Shows `count` on the launcher icon (none at 0). Failing to reach the session bus is not an
/// error the person can act on: it is logged at debug level and answered to the window, which
/// ignores it (the title still counts).
#[tauri::command]
pub async fn set_badge_count(window: tauri::Window, count: u32) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        let _ = window;
        tauri::async_runtime::spawn_blocking(move || linux::update(count))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| {
                tracing::debug!("launcher badge: {e}");
                e.to_string()
            })
    }
    #[cfg(not(target_os = "linux"))]
    {
        window
            .set_badge_count((count > 0).then_some(i64::from(count)))
            .map_err(|e| e.to_string())
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use zbus::zvariant::Value;

    /// The interface and signal the docks listen for.
    const INTERFACE: &str = "com.canonical.Unity.LauncherEntry";
    const SIGNAL: &str = "Update";
    /// The object the signal comes from (any path; docks match by the entry's URI).
    const PATH: &str = "/dev/crosscheck/LauncherEntry";

    /// The session bus connection, opened on first use and dropped after a failure so the next
    /// update opens a fresh one (the bus may have restarted).
    static BUS: Mutex<Option<zbus::blocking::Connection>> = Mutex::new(None);

    /// The signal's body: the entry's URI and the properties that changed.
    pub(super) fn body(count: u32) -> (String, HashMap<&'static str, Value<'static>>) {
        let properties = HashMap::from([
            ("count", Value::from(i64::from(count))),
            ("count-visible", Value::from(count > 0)),
        ]);
        (
            format!("application://{}", super::DESKTOP_ENTRY),
            properties,
        )
    }

    /// Sends the launcher-entry update for `count` on the session bus.
    pub(super) fn update(count: u32) -> zbus::Result<()> {
        let mut bus = BUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let connection = match bus.as_ref() {
            Some(connection) => connection.clone(),
            None => {
                let connection = zbus::blocking::Connection::session()?;
                *bus = Some(connection.clone());
                connection
            }
        };
        let sent = connection.emit_signal(None::<&str>, PATH, INTERFACE, SIGNAL, &body(count));
        if sent.is_err() {
            *bus = None;
        }
        sent
    }
}
