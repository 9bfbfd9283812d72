//! The fake's revert, redo, fork, single-message and file-search routes, as `opencode serve`
//! 1.18.33 answers them: a revert marks the session (`revert.messageID`) and hides nothing
//! until the next prompt drops the reverted messages (`message.removed` each); a revert or redo
//! of a busy session is a 409 `SessionBusyError`; a revert to an unknown message changes
//! nothing; a fork copies the messages before the given one (all for an unknown one).

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use crosscheck_opencode::ids;
use serde_json::{Value, json};

use super::{FakeOpencode, Shared, StoredMessage, json_response, not_found, now_ms};

impl FakeOpencode {
    /// The files `GET /find/file` searches (paths relative to the session's folder).
    pub fn set_files(&self, files: &[&str]) {
        self.shared.lock().files = files.iter().map(|f| (*f).to_owned()).collect();
    }

    /// Makes the next `GET /find/file` answer 500, as the real server does for a folder that
    /// is gone.
    pub fn fail_next_find(&self) {
        self.shared.lock().fail_find = true;
    }
}

/// The 409 the real server answers for a revert or redo while a turn runs.
fn busy(id: &str) -> Response {
    json_response(
        StatusCode::CONFLICT,
        json!({"_tag": "SessionBusyError", "sessionID": id, "message": format!("Session is busy: {id}")}),
    )
}

/// Stores a session change, bumps `time.updated` and emits `session.updated`.
fn updated(shared: &Shared, id: &str, change: impl FnOnce(&mut Value)) -> Option<Value> {
    let mut st = shared.lock();
    let session = st.sessions.get_mut(id)?;
    change(session);
    let before = session["time"]["updated"].as_i64().unwrap_or_default();
    session["time"]["updated"] = json!(now_ms().max(before + 1));
    let info = session.clone();
    let dir = info["directory"].as_str().unwrap_or_default().to_owned();
    shared.emit(
        &dir,
        "session.updated",
        json!({"sessionID": id, "info": info}),
    );
    Some(info)
}

/// `POST /session/:id/revert`.
pub(super) fn revert(shared: &Arc<Shared>, id: &str, body: &Value) -> Response {
    let (known, running, message) = {
        let st = shared.lock();
        let message = body["messageID"].as_str().unwrap_or_default().to_owned();
        let running = st.running.contains_key(id) || st.statuses.contains_key(id);
        let known = st.messages_of(id).iter().any(|m| m.info["id"] == message);
        (st.sessions.get(id).cloned(), running, (known, message))
    };
    let Some(session) = known else {
        return not_found(id);
    };
    if running {
        return busy(id);
    }
    let (exists, message_id) = message;
    if !exists {
        return json_response(StatusCode::OK, session);
    }
    match updated(shared, id, |s| {
        s["revert"] = json!({"messageID": message_id})
    }) {
        Some(info) => json_response(StatusCode::OK, info),
        None => not_found(id),
    }
}

/// `POST /session/:id/unrevert`.
pub(super) fn unrevert(shared: &Arc<Shared>, id: &str) -> Response {
    let running = {
        let st = shared.lock();
        if !st.sessions.contains_key(id) {
            return not_found(id);
        }
        st.running.contains_key(id) || st.statuses.contains_key(id)
    };
    if running {
        return busy(id);
    }
    let info = updated(shared, id, |s| {
        if let Some(s) = s.as_object_mut() {
            s.remove("revert");
        }
    });
    match info {
        Some(info) => json_response(StatusCode::OK, info),
        None => not_found(id),
    }
}

/// Before a prompt runs in a reverted session: drops the reverted messages (one
/// `message.removed` each) and the session's `revert`.
pub(super) fn clean_up_revert(shared: &Arc<Shared>, id: &str) {
    let removed: Vec<String> = {
        let mut st = shared.lock();
        let Some(from) = st
            .sessions
            .get(id)
            .and_then(|s| s["revert"]["messageID"].as_str())
            .map(str::to_owned)
        else {
            return;
        };
        let Some(list) = st.messages.get_mut(id) else {
            return;
        };
        let (gone, kept): (Vec<StoredMessage>, Vec<StoredMessage>) = std::mem::take(list)
            .into_iter()
            .partition(|m| m.info["id"].as_str().unwrap_or_default() >= from.as_str());
        *list = kept;
        gone.into_iter()
            .filter_map(|m| m.info["id"].as_str().map(str::to_owned))
            .collect()
    };
    let dir = shared
        .lock()
        .sessions
        .get(id)
        .and_then(|s| s["directory"].as_str().map(str::to_owned))
        .unwrap_or_default();
    for message_id in removed {
        shared.emit(
            &dir,
            "message.removed",
            json!({"sessionID": id, "messageID": message_id}),
        );
    }
    updated(shared, id, |s| {
        if let Some(s) = s.as_object_mut() {
            s.remove("revert");
        }
    });
}

/// `POST /session/:id/fork`.
pub(super) fn fork(shared: &Arc<Shared>, id: &str, body: &Value) -> Response {
    let mut st = shared.lock();
    let Some(original) = st.sessions.get(id).cloned() else {
        return not_found(id);
    };
    let before = body["messageID"].as_str().map(str::to_owned);
    let forks = st
        .sessions
        .values()
        .filter(|s| s["title"].as_str().is_some_and(|t| t.contains("(fork #")))
        .count();
    let new_id = ids::ascending("ses");
    let now = now_ms();
    let title = format!(
        "{} (fork #{})",
        original["title"].as_str().unwrap_or_default(),
        forks + 1
    );
    let directory = original["directory"].clone();
    let session = json!({
        "id": new_id, "slug": "forked", "projectID": original["projectID"], "directory": directory,
        "title": title, "version": super::VERSION, "time": {"created": now, "updated": now},
    });
    let copied: Vec<StoredMessage> = st
        .messages_of(id)
        .iter()
        .take_while(|m| {
            before
                .as_deref()
                .is_none_or(|b| m.info["id"].as_str() != Some(b))
        })
        .map(|m| {
            let message_id = ids::message_id();
            let mut info = m.info.clone();
            info["id"] = json!(message_id);
            info["sessionID"] = json!(new_id);
            let parts = m
                .parts
                .iter()
                .map(|p| {
                    let mut p = p.clone();
                    p["id"] = json!(ids::part_id());
                    p["sessionID"] = json!(new_id);
                    p["messageID"] = json!(message_id);
                    p
                })
                .collect();
            StoredMessage { info, parts }
        })
        .collect();
    st.sessions.insert(new_id.clone(), session.clone());
    st.messages.insert(new_id.clone(), copied);
    let dir = directory.as_str().unwrap_or_default().to_owned();
    shared.emit(
        &dir,
        "session.created",
        json!({"sessionID": new_id, "info": session}),
    );
    json_response(StatusCode::OK, session)
}

/// `GET /session/:id/message/:messageID`.
pub(super) fn message(shared: &Arc<Shared>, id: &str, message_id: &str) -> Response {
    let st = shared.lock();
    if !st.sessions.contains_key(id) {
        return not_found(id);
    }
    match st
        .messages_of(id)
        .iter()
        .find(|m| m.info["id"] == message_id)
    {
        Some(m) => json_response(StatusCode::OK, json!({"info": m.info, "parts": m.parts})),
        None => json_response(
            StatusCode::NOT_FOUND,
            json!({"name": "NotFoundError", "data": {"message": format!("Message not found: {message_id}")}}),
        ),
    }
}

/// `GET /find/file?query=&limit=`: the set files whose path contains the query, any case.
pub(super) fn find_files(shared: &Arc<Shared>, query: &HashMap<String, String>) -> Response {
    let mut st = shared.lock();
    if std::mem::take(&mut st.fail_find) {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"name": "UnknownError", "data": {"message": "Unexpected server error. Check server logs for details."}}),
        );
    }
    let wanted = query
        .get("query")
        .cloned()
        .unwrap_or_default()
        .to_lowercase();
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(100);
    let found: Vec<&String> = st
        .files
        .iter()
        .filter(|f| f.to_lowercase().contains(&wanted))
        .take(limit)
        .collect();
    json_response(StatusCode::OK, json!(found))
}
