//! Crosscheck's desktop shell: one window with the UI, one IPC command (`api`) that calls the
//! core's Api, and a forwarder that pushes batches of changes as `crosscheck://changes` events.
//! All logic lives in the crates; this file only wires them to Tauri.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod badge;

use crosscheck_core::api::{BatchEnd, next_batch};
use crosscheck_core::launch::{StartedFrom, opencode_target};
use crosscheck_core::{Api, ApiError, Core, CoreOptions, Response, Stamped};
use tauri::{Emitter, Manager};
use tokio::sync::broadcast;

/// Name of the event that carries change batches to the UI.
const CHANGES_EVENT: &str = "crosscheck://changes";
/// Name of the event that asks the UI to reload its snapshot (it missed changes).
const RESYNC_EVENT: &str = "crosscheck://resync";

/// The single IPC command: a typed request in, its response or `{code, message}` out.
/// Each window is its own client: the transcripts it opens are followed for it.
#[tauri::command]
async fn api(
    webview: tauri::Webview,
    state: tauri::State<'_, Api>,
    request: serde_json::Value,
) -> Result<Response, ApiError> {
    state.handle_json_as(webview.label(), request).await
}

/// Forwards changes to the window in batches (whatever is queued when the first arrives).
async fn forward_changes(app: tauri::AppHandle, mut rx: broadcast::Receiver<Stamped>) {
    loop {
        match next_batch(&mut rx).await {
            Ok(batch) => {
                if let Err(e) = app.emit(CHANGES_EVENT, &batch) {
                    tracing::warn!("could not forward changes: {e}");
                }
            }
            Err(BatchEnd::Lagged) => {
                tracing::warn!("the window fell behind the change stream; asking it to reload");
                let _ = app.emit(RESYNC_EVENT, ());
            }
            Err(BatchEnd::Closed) => return,
        }
    }
}

/// SIGTERM and SIGINT close the app the way closing its window does, so the exit handler
/// stops the managed OpenCode server (a SIGKILL is covered by the server's parent-death signal).
async fn exit_on_signal(app: tauri::AppHandle) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            tracing::warn!("cannot listen for SIGTERM/SIGINT");
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        app.exit(0);
    }
    #[cfg(not(unix))]
    let _ = app;
}

fn main() {
    crosscheck_core::launch::init_logging();

    let result = tauri::Builder::default()
        // The native folder dialog of New session (only `open`, allowed in the capability).
        .plugin(tauri_plugin_dialog::init())
        // OS notifications (a review finished, a permission waits, a loop stopped): the UI
        // decides when; clicks come back to it as the plugin's `actionPerformed` events.
        .plugin(tauri_plugin_notification::init())
        // Links in replies open in the system browser (only `open_url`, for http, https and
        // mailto, allowed in the capability).
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(tauri::generate_handler![api, badge::set_badge_count])
        // A page that (re)loads starts with nothing open, and a closed window follows nothing:
        // release what the window's previous page followed.
        .on_page_load(|webview, payload| {
            if payload.event() == tauri::webview::PageLoadEvent::Started
                && let Some(api) = webview.try_state::<Api>()
            {
                api.release_client(webview.label());
            }
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event
                && let Some(api) = window.try_state::<Api>()
            {
                api.release_client(window.label());
            }
        })
        .setup(|app| {
            let url = std::env::var("CROSSCHECK_OPENCODE_URL")
                .ok()
                .filter(|u| !u.is_empty());
            let options = CoreOptions {
                target: opencode_target(url, StartedFrom::Desktop),
                database: crosscheck_review::paths::database_path()?,
            };
            let core = tauri::async_runtime::block_on(async { Core::start(options) })?;
            let api = Api::new(core);
            let rx = api.subscribe();
            app.manage(api);
            tauri::async_runtime::spawn(forward_changes(app.handle().clone(), rx));
            tauri::async_runtime::spawn(exit_on_signal(app.handle().clone()));
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match result {
        Ok(app) => app,
        Err(e) => {
            eprintln!("crosscheck: cannot start the desktop app: {e}");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event
            && let Some(api) = handle.try_state::<Api>()
        {
            let core: Core = api.core().clone();
            tauri::async_runtime::block_on(core.shutdown());
        }
    });
}
