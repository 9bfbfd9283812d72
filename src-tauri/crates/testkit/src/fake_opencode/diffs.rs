//! The fake's diff, todo and config routes, as 1.18.33 answers them: `GET /vcs/diff` needs
//! `mode` and answers `[]` for a folder without changes (or outside git), `GET
//! /session/:id/diff` answers `[]` even for an unknown session, `GET /session/:id/todo` is a
//! 404 for one, and `GET /config` says whether snapshots are kept. Tests set the answers, make
//! a route fail or answer something that is not JSON, and emit the matching events.

use std::collections::HashMap;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{FakeOpencode, Shared, bad_request, json_response, not_found};

/// What the diff routes answer.
#[derive(Default)]
pub struct DiffState {
    /// `/vcs/diff` answers by directory.
    vcs: HashMap<String, Value>,
    /// `/session/:id/diff` answers by session and message (`None`: the whole session).
    sessions: HashMap<(String, Option<String>), Value>,
    /// `/session/:id/todo` answers by session.
    todos: HashMap<String, Value>,
    /// `snapshot` in `/config`; absent when `None`.
    snapshot: Option<bool>,
    /// Answers that replace a route's own (status and raw body), until cleared.
    raw: HashMap<String, (u16, String)>,
}

/// Answers the routes of this module; `None` for every other route.
pub(super) fn route(
    shared: &Shared,
    route: &str,
    id: &str,
    directory: Option<&str>,
    query: &HashMap<String, String>,
) -> Option<Response> {
    if !matches!(
        route,
        "GET /vcs/diff" | "GET /session/:id/diff" | "GET /session/:id/todo" | "GET /config"
    ) {
        return None;
    }
    let st = shared.lock();
    if let Some((status, body)) = st.diffs.raw.get(route) {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return Some(
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                body.clone(),
            )
                .into_response(),
        );
    }
    let directory = directory.unwrap_or(&st.directory).to_owned();
    Some(match route {
        "GET /vcs/diff" => {
            if query.get("mode").is_none() {
                return Some(bad_request("Missing key at [\"mode\"]"));
            }
            json_response(
                StatusCode::OK,
                st.diffs.vcs.get(&directory).cloned().unwrap_or(json!([])),
            )
        }
        "GET /session/:id/diff" => {
            let key = (id.to_owned(), query.get("messageID").cloned());
            json_response(
                StatusCode::OK,
                st.diffs.sessions.get(&key).cloned().unwrap_or(json!([])),
            )
        }
        "GET /session/:id/todo" => {
            if !st.sessions.contains_key(id) {
                return Some(not_found(id));
            }
            json_response(
                StatusCode::OK,
                st.diffs.todos.get(id).cloned().unwrap_or(json!([])),
            )
        }
        _ => {
            let mut config = json!({"model": "fake/fake-model", "share": "disabled"});
            if let Some(on) = st.diffs.snapshot {
                config["snapshot"] = json!(on);
            }
            json_response(StatusCode::OK, config)
        }
    })
}

impl FakeOpencode {
    /// What `/vcs/diff` answers for `directory` (a list of `{file, patch, additions, ...}`).
    pub fn set_vcs_diff(&self, directory: &str, files: Value) {
        self.shared
            .lock()
            .diffs
            .vcs
            .insert(directory.to_owned(), files);
    }

    /// What `/session/:id/diff` answers, for the whole session or one message's turn.
    pub fn set_session_diff(&self, session_id: &str, message_id: Option<&str>, files: Value) {
        let key = (session_id.to_owned(), message_id.map(str::to_owned));
        self.shared.lock().diffs.sessions.insert(key, files);
    }

    /// Sets `snapshot` in `/config` (`None`: not set, OpenCode's default).
    pub fn set_snapshots(&self, on: Option<bool>) {
        self.shared.lock().diffs.snapshot = on;
    }

    /// Makes `route` (e.g. `GET /vcs/diff`) answer `status` with `body` as it is, until
    /// [`FakeOpencode::clear_raw_answer`].
    pub fn answer_raw(&self, route: &str, status: u16, body: &str) {
        let answer = (status, body.to_owned());
        self.shared
            .lock()
            .diffs
            .raw
            .insert(route.to_owned(), answer);
    }

    /// Lets `route` answer as itself again.
    pub fn clear_raw_answer(&self, route: &str) {
        self.shared.lock().diffs.raw.remove(route);
    }

    /// Sets a session's todo list and emits `todo.updated`, as the `todowrite` tool does.
    pub fn set_todos(&self, session_id: &str, todos: Value) {
        let directory = {
            let mut st = self.shared.lock();
            st.diffs.todos.insert(session_id.to_owned(), todos.clone());
            st.sessions
                .get(session_id)
                .and_then(|s| s["directory"].as_str())
                .map_or_else(|| st.directory.clone(), str::to_owned)
        };
        self.shared.emit(
            &directory,
            "todo.updated",
            json!({"sessionID": session_id, "todos": todos}),
        );
    }

    /// Emits `file.edited` for a file of `directory`, as a tool's edit does.
    pub fn emit_file_edited(&self, directory: &str, file: &str) {
        self.shared
            .emit(directory, "file.edited", json!({"file": file}));
    }

    /// Emits `session.diff` for a session, as the server does after each step.
    pub fn emit_session_diff(&self, session_id: &str, directory: &str) {
        self.shared.emit(
            directory,
            "session.diff",
            json!({"sessionID": session_id, "diff": []}),
        );
    }
}
