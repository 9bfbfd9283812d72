//! Crosscheck's desktop shell: one window with the UI, one IPC command (`api`) that calls the
//! core's Api, and a forwarder that pushes batches of changes as `crosscheck://changes` events.
//! All logic lives in the crates; this file only wires them to Tauri.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use crosscheck_core::api::{BatchEnd, next_batch};
use crosscheck_core::{
    Api, ApiError, Core, CoreOptions, Response, Stamped, launch::opencode_target,
};
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

fn main() {
    crosscheck_core::launch::init_logging();

    let result = tauri::Builder::default()
        // OS notifications (a review finished, a permission waits, a loop stopped): the UI
        // decides when; clicks come back to it as the plugin's `actionPerformed` events.
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(tauri::generate_handler![api])
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
                target: opencode_target(url),
                database: crosscheck_review::paths::database_path()?,
            };
            let core = tauri::async_runtime::block_on(async { Core::start(options) })?;
            let api = Api::new(core);
            let rx = api.subscribe();
            app.manage(api);
            tauri::async_runtime::spawn(forward_changes(app.handle().clone(), rx));
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
