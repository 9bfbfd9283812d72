//! The fake's HTTP side: every request recorded, then answered by route (sessions, messages,
//! `prompt_async`, permissions, questions, abort), with the scripted delays and one-shot failures.

use super::events::event_stream;
use super::turns::run_turn;
use super::*;

/// The route label and session id of a path.
pub(super) fn route_of(method: &Method, path: &str) -> (String, Option<String>) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["session", "status"] => (format!("{method} /session/status"), None),
        ["session", id] => (format!("{method} /session/:id"), Some((*id).to_owned())),
        ["session", id, "message", _] => (
            format!("{method} /session/:id/message/:messageID"),
            Some((*id).to_owned()),
        ),
        ["session", id, rest] => (
            format!("{method} /session/:id/{rest}"),
            Some((*id).to_owned()),
        ),
        ["permission", id, "reply"] => (
            format!("{method} /permission/:id/reply"),
            Some((*id).to_owned()),
        ),
        ["question", id, answer] => (
            format!("{method} /question/:id/{answer}"),
            Some((*id).to_owned()),
        ),
        _ => (format!("{method} {path}"), None),
    }
}

pub(super) fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

pub(super) fn not_found(id: &str) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        json!({"name": "NotFoundError", "data": {"message": format!("Session not found: {id}")}}),
    )
}

pub(super) fn bad_request(message: &str) -> Response {
    json_response(
        StatusCode::BAD_REQUEST,
        json!({"name": "BadRequest", "data": {"message": message}}),
    )
}

pub(super) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let (route, session_id) = route_of(&method, &path);
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    };
    let index = {
        let mut st = shared.lock();
        st.requests.push(Recorded {
            method: method.to_string(),
            path: path.clone(),
            route: route.clone(),
            session_id: session_id.clone(),
            query: query.clone(),
            body: body.clone(),
            at: Instant::now(),
            status: 0,
        });
        st.requests.len() - 1
    };
    let directory = query.get("directory").cloned().or_else(|| {
        headers
            .get("x-opencode-directory")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    if shared.lock().down {
        return cut_answer();
    }
    let delay = shared.lock().route_delays.get(&route).copied();
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let response = route_request(
        &shared,
        &route,
        session_id.as_deref(),
        directory,
        &query,
        body,
        &path,
    )
    .await;
    shared.lock().requests[index].status = response.status().as_u16();
    let hooks: Vec<Hook> = {
        let mut st = shared.lock();
        let (run, keep) = std::mem::take(&mut st.after_hooks)
            .into_iter()
            .partition(|(r, id, _)| *r == route && session_id.as_deref() == Some(id.as_str()));
        st.after_hooks = keep;
        run.into_iter().map(|(_, _, f)| f).collect()
    };
    for hook in hooks {
        hook();
    }
    shared.bump();
    response
}

pub(super) async fn route_request(
    shared: &Arc<Shared>,
    route: &str,
    id: Option<&str>,
    directory: Option<String>,
    query: &HashMap<String, String>,
    body: Value,
    path: &str,
) -> Response {
    let id = id.unwrap_or_default();
    if let Some(response) = diffs::route(shared, route, id, directory.as_deref(), query) {
        return response;
    }
    if let Some(response) = questions::route(shared, route, id, directory.as_deref(), &body) {
        return response;
    }
    match route {
        "GET /global/health" => {
            json_response(StatusCode::OK, json!({"healthy": true, "version": VERSION}))
        }
        "GET /global/event" => event_stream(shared),
        "GET /project" => list_projects(shared),
        "GET /path" => {
            let dir = shared.lock().directory.clone();
            json_response(
                StatusCode::OK,
                json!({"home": "/home/fake", "state": "", "config": "", "worktree": dir, "directory": dir}),
            )
        }
        "GET /config/providers" => json_response(
            StatusCode::OK,
            json!({
                "providers": [{"id": "fake", "name": "Fake", "source": "config", "env": [], "options": {},
                    "models": {"fake-model": {"id": "fake-model", "name": "Fake Model", "variants": {}}}}],
                "default": {"fake": "fake-model"},
            }),
        ),
        "GET /agent" => json_response(
            StatusCode::OK,
            json!([{"name": "build", "mode": "primary"}, {"name": "plan", "mode": "primary"}]),
        ),
        "GET /command" => json_response(
            StatusCode::OK,
            json!([{"name": "init", "description": "create AGENTS.md"}]),
        ),
        "GET /session" => list_sessions(shared, directory.as_deref(), query, false),
        "GET /experimental/session" => list_sessions(shared, None, query, true),
        "GET /session/status" => {
            let st = shared.lock();
            let map: serde_json::Map<String, Value> = st
                .statuses
                .iter()
                .filter(|(sid, _)| {
                    directory
                        .as_deref()
                        .is_none_or(|d| st.sessions.get(*sid).is_some_and(|s| s["directory"] == d))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            json_response(StatusCode::OK, Value::Object(map))
        }
        "POST /session" => create_session(shared, directory, body),
        "GET /session/:id" => {
            tokio::task::yield_now().await;
            match shared.lock().sessions.get(id) {
                Some(s) => json_response(StatusCode::OK, s.clone()),
                None => not_found(id),
            }
        }
        "PATCH /session/:id" => patch_session(shared, id, body).await,
        "DELETE /session/:id" => delete_session(shared, id).await,
        "POST /session/:id/revert" => history::revert(shared, id, &body),
        "POST /session/:id/unrevert" => history::unrevert(shared, id),
        "POST /session/:id/fork" => history::fork(shared, id, &body),
        "GET /session/:id/message/:messageID" => {
            let message_id = path.rsplit('/').next().unwrap_or_default();
            history::message(shared, id, message_id)
        }
        "GET /find/file" => history::find_files(shared, query),
        "GET /session/:id/message" => {
            if take_message_failure(shared, id) {
                return injected_failure();
            }
            if let Some(hold) = take_message_hold(shared, id) {
                return held_messages(shared, id, query, hold).await;
            }
            list_messages(shared, id, query)
        }
        "POST /session/:id/prompt_async" => {
            if !shared.lock().sessions.contains_key(id) {
                return not_found(id);
            }
            if take_failure(shared, "PROMPT", id) {
                return injected_failure();
            }
            if take_stall(shared, "PROMPT", id) {
                shared.bump();
                return std::future::pending().await;
            }
            if !body["parts"].is_array() {
                return bad_request("parts must be an array");
            }
            let user_id = body["messageID"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(ids::message_id);
            history::clean_up_revert(shared, id);
            let cut = take_cut(shared, "PROMPT", id);
            tokio::spawn(run_turn(shared.clone(), id.to_owned(), user_id, body));
            if cut {
                return cut_answer();
            }
            StatusCode::NO_CONTENT.into_response()
        }
        "GET /permission" => {
            let st = shared.lock();
            let list: Vec<Value> = st
                .permissions
                .values()
                .filter(|p| {
                    directory.as_deref().is_none_or(|d| {
                        p["sessionID"]
                            .as_str()
                            .and_then(|sid| st.sessions.get(sid))
                            .is_some_and(|s| s["directory"] == d)
                    })
                })
                .cloned()
                .collect();
            json_response(StatusCode::OK, Value::Array(list))
        }
        "POST /permission/:id/reply" => {
            let reply = body["reply"].as_str().unwrap_or_default().to_owned();
            if !["once", "always", "reject"].contains(&reply.as_str()) {
                return bad_request("reply must be once, always or reject");
            }
            let mut st = shared.lock();
            let Some(request) = st.permissions.remove(id) else {
                return json_response(
                    StatusCode::NOT_FOUND,
                    json!({"name": "PermissionNotFoundError", "data": {"message": format!("Permission not found: {id}")}}),
                );
            };
            let sid = request["sessionID"].clone();
            let dir = sid
                .as_str()
                .and_then(|s| st.sessions.get(s))
                .and_then(|s| s["directory"].as_str())
                .map_or_else(|| st.directory.clone(), str::to_owned);
            shared.emit(
                &dir,
                "permission.replied",
                json!({"sessionID": sid, "requestID": id, "reply": reply}),
            );
            json_response(StatusCode::OK, json!(true))
        }
        "POST /session/:id/abort" => {
            let sender = shared.lock().running.remove(id);
            if let Some(s) = sender {
                let _ = s.send(Action::Abort);
            }
            json_response(StatusCode::OK, json!(true))
        }
        _ => json_response(
            StatusCode::NOT_FOUND,
            json!({"name": "NotFoundError", "data": {"message": "no such route"}}),
        ),
    }
}

pub(super) fn create_session(
    shared: &Arc<Shared>,
    directory: Option<String>,
    body: Value,
) -> Response {
    if !(body.is_object() || body.is_null()) {
        return bad_request("body must be an object");
    }
    let mut st = shared.lock();
    let directory = directory.unwrap_or_else(|| st.directory.clone());
    let id = ids::ascending("ses");
    let now = now_ms();
    let title = body["title"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("New session - {now}"));
    let mut session = json!({
        "id": id, "slug": "fake-slug", "projectID": project_of(&st, &directory), "directory": directory,
        "title": title, "version": VERSION, "time": {"created": now, "updated": now},
    });
    if let Some(parent) = body.get("parentID").and_then(Value::as_str) {
        session["parentID"] = json!(parent);
    }
    match body.get("metadata") {
        None | Some(Value::Null) => {}
        Some(m @ Value::Object(_)) => session["metadata"] = m.clone(),
        Some(_) => return bad_request("metadata must be an object"),
    }
    st.sessions.insert(id.clone(), session.clone());
    shared.emit(
        &directory,
        "session.created",
        json!({"sessionID": id, "info": session}),
    );
    shared.emit(
        &directory,
        "session.updated",
        json!({"sessionID": id, "info": session}),
    );
    json_response(StatusCode::OK, session)
}

/// Takes a one-shot injected failure for `method` on `id`.
pub(super) fn take_failure(shared: &Shared, method: &str, id: &str) -> bool {
    let mut st = shared.lock();
    match st
        .fail_next
        .iter()
        .position(|(m, s)| m == method && s == id)
    {
        Some(i) => {
            st.fail_next.remove(i);
            true
        }
        None => false,
    }
}

pub(super) fn take_stall(shared: &Shared, method: &str, id: &str) -> bool {
    let mut st = shared.lock();
    match st
        .stall_next
        .iter()
        .position(|(m, s)| m == method && s == id)
    {
        Some(i) => {
            st.stall_next.remove(i);
            true
        }
        None => false,
    }
}

/// Takes a one-shot lost answer for `method` on `id` (or on any session: `"*"`).
fn take_cut(shared: &Shared, method: &str, id: &str) -> bool {
    let mut st = shared.lock();
    match st
        .cut_next
        .iter()
        .position(|(m, s)| m == method && (s == id || s == "*"))
    {
        Some(i) => {
            st.cut_next.remove(i);
            true
        }
        None => false,
    }
}

/// An answer whose body breaks off: the client sees the exchange fail on the way.
fn cut_answer() -> Response {
    let broken = futures_util::stream::iter([
        Ok::<_, std::io::Error>(Bytes::from_static(b"{")),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "answer lost on the way",
        )),
    ]);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(broken))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

pub(super) fn injected_failure() -> Response {
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        json!({"name": "UnknownError", "data": {"message": "injected failure"}}),
    )
}

pub(super) async fn patch_session(shared: &Arc<Shared>, id: &str, body: Value) -> Response {
    // Read, then yield to other requests, then write: concurrent writers interleave here, so a
    // client that does not serialise its read-modify-write loses keys (metadata is replaced whole).
    if !shared.lock().sessions.contains_key(id) {
        return not_found(id);
    }
    if take_failure(shared, "PATCH", id) {
        return injected_failure();
    }
    if !body.is_object() {
        return bad_request("body must be an object");
    }
    if let Some(m) = body.get("metadata")
        && !(m.is_object() || m.is_null())
    {
        return bad_request("metadata must be an object");
    }
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
    let mut st = shared.lock();
    let Some(session) = st.sessions.get_mut(id) else {
        return not_found(id);
    };
    if let Some(title) = body.get("title").and_then(Value::as_str) {
        session["title"] = json!(title);
    }
    if let Some(m @ Value::Object(_)) = body.get("metadata") {
        session["metadata"] = m.clone();
    }
    if let Some(archived) = body.get("time").and_then(|t| t.get("archived")) {
        match archived {
            Value::Number(n) => session["time"]["archived"] = Value::Number(n.clone()),
            Value::Null => {
                if let Some(t) = session["time"].as_object_mut() {
                    t.remove("archived");
                }
            }
            _ => return bad_request("time.archived must be a number or null"),
        }
    }
    let updated = session["time"]["updated"].as_i64().unwrap_or_default();
    session["time"]["updated"] = json!(now_ms().max(updated + 1));
    let info = session.clone();
    let dir = info["directory"].as_str().unwrap_or_default().to_owned();
    shared.emit(
        &dir,
        "session.updated",
        json!({"sessionID": id, "info": info}),
    );
    json_response(StatusCode::OK, info)
}

pub(super) async fn delete_session(shared: &Arc<Shared>, id: &str) -> Response {
    if !shared.lock().sessions.contains_key(id) {
        return not_found(id);
    }
    if take_failure(shared, "DELETE", id) {
        return injected_failure();
    }
    tokio::task::yield_now().await;
    let mut st = shared.lock();
    let Some(session) = st.sessions.remove(id) else {
        return not_found(id);
    };
    st.messages.remove(id);
    st.statuses.remove(id);
    let dir = session["directory"].as_str().unwrap_or_default().to_owned();
    shared.emit(
        &dir,
        "session.deleted",
        json!({"sessionID": id, "info": session}),
    );
    json_response(StatusCode::OK, json!(true))
}

pub(super) fn list_messages(
    shared: &Arc<Shared>,
    id: &str,
    query: &HashMap<String, String>,
) -> Response {
    let st = shared.lock();
    if !st.sessions.contains_key(id) {
        return not_found(id);
    }
    let all = st.messages_of(id);
    let before = query.get("before");
    let older: Vec<&StoredMessage> = all
        .iter()
        .filter(|m| before.is_none_or(|b| m.info["id"].as_str().unwrap_or_default() < b.as_str()))
        .collect();
    let limit = query.get("limit").and_then(|l| l.parse::<usize>().ok());
    let (page, cursor) = match limit {
        Some(limit) if older.len() > limit => {
            let page = &older[older.len() - limit..];
            (
                page.to_vec(),
                page.first()
                    .and_then(|m| m.info["id"].as_str())
                    .map(str::to_owned),
            )
        }
        _ => (older, None),
    };
    let list: Vec<Value> = page
        .iter()
        .map(|m| json!({"info": m.info, "parts": m.parts}))
        .collect();
    let cursor = st.repeated_cursor.get(id).cloned().or(cursor);
    let mut response = json_response(StatusCode::OK, Value::Array(list));
    if let Some(c) = cursor
        && let Ok(v) = c.parse()
    {
        response.headers_mut().insert("x-next-cursor", v);
    }
    response
}
