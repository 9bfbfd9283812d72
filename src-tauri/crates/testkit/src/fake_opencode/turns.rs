//! One turn of the fake model, played on the event stream in the real server's order.

use super::*;

/// Splits text into about `n` pieces on character boundaries (the streamed deltas).
pub(super) fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// One turn in the real order: user message and parts, busy, assistant message, step-start,
/// empty text part, deltas, full text part, step-finish, completed assistant, idle, session.idle.
pub(super) async fn run_turn(shared: Arc<Shared>, sid: String, user_id: String, body: Value) {
    // Prompts to a busy session queue behind the running turn, as on the real server.
    let turn_lock = shared
        .lock()
        .turn_locks
        .entry(sid.clone())
        .or_default()
        .clone();
    let _turn = turn_lock.lock().await;

    let (control_tx, control) = oneshot::channel::<Action>();
    let running = {
        let mut st = shared.lock();
        let Some(dir) = st
            .sessions
            .get(&sid)
            .and_then(|s| s["directory"].as_str())
            .map(str::to_owned)
        else {
            return;
        };
        let reply = next_reply(&mut st, &sid);
        let (agent, model) = post_user_message(&shared, &mut st, &dir, &sid, &user_id, &body);
        st.statuses.insert(sid.clone(), json!({"type": "busy"}));
        shared.emit(
            &dir,
            "session.status",
            json!({"sessionID": sid, "status": {"type": "busy"}}),
        );
        match &reply.end {
            End::UpFront(error) | End::UpFrontNameOnly(error) => {
                let name_only = matches!(reply.end, End::UpFrontNameOnly(_));
                fail_up_front(&shared, &mut st, &dir, &sid, error, name_only);
                None
            }
            End::Steps { before, after } => {
                play_steps(
                    &shared,
                    &mut st,
                    &dir,
                    &sid,
                    &user_id,
                    &agent,
                    before,
                    after.as_deref(),
                );
                None
            }
            _ => {
                if let End::SilentThenHang(calls) = reply.end {
                    for _ in 0..calls {
                        silent_step(&shared, &mut st, &dir, &sid, &user_id, &agent);
                    }
                }
                let with_text = matches!(
                    reply.end,
                    End::Complete | End::Hang | End::SilentThenHang(_)
                );
                let (assistant, text_part) = start_assistant(
                    &shared, &mut st, &dir, &sid, &user_id, &agent, &model, with_text,
                );
                st.running.insert(sid.clone(), control_tx);
                Some(Running {
                    reply,
                    dir,
                    assistant,
                    text_part,
                })
            }
        }
    };
    shared.bump();
    let Some(running) = running else {
        return;
    };
    let action = wait_for_end(&running.reply, control).await;
    finish_turn(&shared, &sid, running, action);
}

/// A turn whose assistant message is under way: what its end needs.
struct Running {
    reply: Reply,
    dir: String,
    assistant: Value,
    text_part: Value,
}

/// The session's next scripted reply, else the next one for any session, else a default one.
fn next_reply(st: &mut FakeState, sid: &str) -> Reply {
    match st.replies.get_mut(sid).and_then(VecDeque::pop_front) {
        Some(r) => r,
        None => match st.any_replies.pop_front() {
            Some(r) => r,
            None => {
                st.default_replies += 1;
                Reply::text(format!(
                    "Default reply {} from the fake model.",
                    st.default_replies
                ))
            }
        },
    }
}

/// Stores and announces the prompt's user message and its parts; answers the turn's agent and
/// model.
fn post_user_message(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    user_id: &str,
    body: &Value,
) -> (String, Value) {
    let now = st.server_now();
    let model = if body["model"].is_object() {
        body["model"].clone()
    } else {
        json!({"providerID": "fake", "modelID": "fake-model"})
    };
    let agent = body["agent"].as_str().unwrap_or("build").to_owned();
    let mut user = json!({"id": user_id, "sessionID": sid, "role": "user", "time": {"created": now}, "agent": agent, "model": model});
    if let Some(v) = body["variant"].as_str() {
        user["variant"] = json!(v);
    }
    st.put_info(sid, user.clone());
    shared.emit(
        dir,
        "message.updated",
        json!({"sessionID": sid, "info": user}),
    );
    for input in body["parts"].as_array().cloned().unwrap_or_default() {
        let mut part = json!({
            "id": ids::part_id(), "sessionID": sid, "messageID": user_id,
            "type": input["type"].as_str().unwrap_or("text"), "text": input["text"],
        });
        if input["synthetic"] == true {
            part["synthetic"] = json!(true);
        }
        if input["ignored"] == true {
            part["ignored"] = json!(true);
        }
        st.put_part(sid, part.clone());
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": part, "time": now}),
        );
    }
    (agent, model)
}

/// An error before the turn starts (an unknown model or agent): `session.error`, idle, and the
/// error again with the server's stack trace, as the real server sends it (for an unknown
/// agent, `name_only`, the repeat's message is only the error's name).
fn fail_up_front(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    error: &Value,
    name_only: bool,
) {
    shared.emit(
        dir,
        "session.error",
        json!({"sessionID": sid, "error": error}),
    );
    st.statuses.remove(sid);
    go_idle(shared, st, dir, sid);
    let mut traced = error.clone();
    let message = error["data"]["message"].as_str().unwrap_or_default();
    traced["data"]["message"] = if name_only {
        let name = error["name"].as_str().unwrap_or_default();
        json!(format!(
            "{name}\n    at Agent.get (/$bunfs/root/chunk.js:1:1)"
        ))
    } else {
        json!(format!(
            "ProviderModelNotFoundError: {message}\n    at SessionPrompt.getModel (/$bunfs/root/chunk.js:1:1)"
        ))
    };
    shared.emit(
        dir,
        "session.error",
        json!({"sessionID": sid, "error": traced}),
    );
    *st.turns_done.entry(sid.to_owned()).or_default() += 1;
}

/// Stores and announces the assistant message, its step-start and (`with_text`) its empty text
/// part; answers the message and the text part.
#[allow(clippy::too_many_arguments)]
fn start_assistant(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    user_id: &str,
    agent: &str,
    model: &Value,
    with_text: bool,
) -> (Value, Value) {
    let assistant_id = st.server_message_id();
    let assistant_created = st.server_now();
    let assistant = json!({
        "id": assistant_id, "parentID": user_id, "role": "assistant", "mode": agent, "agent": agent,
        "path": {"cwd": dir, "root": dir}, "cost": 0,
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "modelID": model["modelID"], "providerID": model["providerID"],
        "time": {"created": assistant_created}, "sessionID": sid,
    });
    st.put_info(sid, assistant.clone());
    shared.emit(
        dir,
        "message.updated",
        json!({"sessionID": sid, "info": assistant}),
    );
    let aid = assistant["id"].as_str().unwrap_or_default().to_owned();
    let step =
        json!({"id": ids::part_id(), "messageID": aid, "sessionID": sid, "type": "step-start"});
    st.put_part(sid, step.clone());
    shared.emit(
        dir,
        "message.part.updated",
        json!({"sessionID": sid, "part": step, "time": now_ms()}),
    );
    let text_part = json!({"id": ids::part_id(), "messageID": aid, "sessionID": sid, "type": "text", "text": "", "time": {"start": now_ms()}});
    if with_text {
        st.put_part(sid, text_part.clone());
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": text_part, "time": now_ms()}),
        );
    }
    (assistant, text_part)
}

/// Waits for the reply's delay, or for a test's abort or silent end (a hang waits for those).
async fn wait_for_end(reply: &Reply, control: oneshot::Receiver<Action>) -> Option<Action> {
    match reply.end {
        End::Hang | End::SilentThenHang(_) => control.await.ok(),
        _ => {
            let mut control = control;
            tokio::select! {
                _ = tokio::time::sleep(reply.delay) => None,
                action = &mut control => action.ok(),
            }
        }
    }
}

/// Ends a turn under way: failed (an error or an abort) or with its text, then idle.
fn finish_turn(shared: &Shared, sid: &str, running: Running, action: Option<Action>) {
    let Running {
        reply,
        dir,
        assistant,
        text_part,
    } = running;
    let mut st = shared.lock();
    st.running.remove(sid);
    if !st.sessions.contains_key(sid) {
        // Deleted meanwhile.
        drop(st);
        shared.bump();
        return;
    }
    let mut done = assistant;
    done["time"]["completed"] = json!(now_ms());
    let error = match (&action, &reply.end) {
        (Some(Action::Abort), _) | (None, End::Aborted) => Some(
            json!({"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}}),
        ),
        (None, End::Error(e)) => Some(e.clone()),
        _ => None,
    };
    let silent = matches!(action, Some(Action::Silent));
    if let Some(error) = error {
        done["error"] = error.clone();
        st.put_info(sid, done.clone());
        shared.emit(
            &dir,
            "message.updated",
            json!({"sessionID": sid, "info": done}),
        );
        shared.emit(
            &dir,
            "session.error",
            json!({"sessionID": sid, "error": error}),
        );
    } else {
        stream_text(
            shared,
            &mut st,
            &dir,
            sid,
            done,
            &text_part,
            &reply.text,
            silent,
        );
    }
    st.statuses.remove(sid);
    if !silent {
        go_idle(shared, &mut st, &dir, sid);
    }
    *st.turns_done.entry(sid.to_owned()).or_default() += 1;
    drop(st);
    shared.bump();
}

/// The reply's text as deltas, then the full text part, step-finish and the completed message
/// (`silent`: stored only, no events, as if the turn ended while the client was away).
#[allow(clippy::too_many_arguments)]
fn stream_text(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    mut done: Value,
    text_part: &Value,
    text: &str,
    silent: bool,
) {
    let aid = done["id"].as_str().unwrap_or_default().to_owned();
    let mut full = text_part.clone();
    full["text"] = json!(text);
    full["time"]["end"] = json!(now_ms());
    if !silent {
        let mut so_far = String::new();
        for delta in pieces(text, 4) {
            so_far.push_str(&delta);
            let mut partial = text_part.clone();
            partial["text"] = json!(so_far);
            st.put_part(sid, partial);
            shared.emit(
                dir,
                "message.part.delta",
                json!({"sessionID": sid, "messageID": aid, "partID": text_part["id"], "field": "text", "delta": delta}),
            );
        }
    }
    st.put_part(sid, full.clone());
    let finish = json!({"id": ids::part_id(), "messageID": aid, "sessionID": sid, "type": "step-finish", "reason": "stop"});
    st.put_part(sid, finish.clone());
    done["finish"] = json!("stop");
    st.put_info(sid, done.clone());
    if !silent {
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": full, "time": now_ms()}),
        );
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": finish, "time": now_ms()}),
        );
        shared.emit(
            dir,
            "message.updated",
            json!({"sessionID": sid, "info": done}),
        );
    }
}

/// One model call that writes no text: an assistant step with an empty text part and a tool
/// call, completed with `finish: "tool-calls"`.
fn silent_step(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    user_id: &str,
    agent: &str,
) {
    let id = st.server_message_id();
    let mut info = json!({
        "id": id, "parentID": user_id, "role": "assistant", "mode": agent, "agent": agent,
        "path": {"cwd": dir, "root": dir}, "cost": 0,
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "modelID": "fake-model", "providerID": "fake",
        "time": {"created": st.server_now()}, "sessionID": sid,
    });
    st.put_info(sid, info.clone());
    shared.emit(
        dir,
        "message.updated",
        json!({"sessionID": sid, "info": info}),
    );
    let parts = [
        json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "step-start"}),
        json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "text", "text": ""}),
        json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "tool", "tool": "invalid", "callID": format!("call_{id}"), "state": {"status": "error", "input": {}, "error": "garbage"}}),
        json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "step-finish", "reason": "tool-calls"}),
    ];
    for part in parts {
        st.put_part(sid, part.clone());
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": part, "time": now_ms()}),
        );
    }
    info["time"]["completed"] = json!(st.server_now());
    info["finish"] = json!("tool-calls");
    st.put_info(sid, info.clone());
    shared.emit(
        dir,
        "message.updated",
        json!({"sessionID": sid, "info": info}),
    );
}

/// Idle, `session.idle`, and the instant kept for [`FakeOpencode::idle_emitted`].
fn go_idle(shared: &Shared, st: &mut FakeState, dir: &str, sid: &str) {
    shared.emit(
        dir,
        "session.status",
        json!({"sessionID": sid, "status": {"type": "idle"}}),
    );
    shared.emit(dir, "session.idle", json!({"sessionID": sid}));
    st.idle_emitted
        .entry(sid.to_owned())
        .or_default()
        .push(Instant::now());
}

/// The messages of a turn of several steps (and an automatic compaction, with `after`), then
/// idle; see [`End::Steps`].
#[allow(clippy::too_many_arguments)]
pub(super) fn play_steps(
    shared: &Shared,
    st: &mut FakeState,
    dir: &str,
    sid: &str,
    user_id: &str,
    agent: &str,
    before: &[String],
    after: Option<&[String]>,
) {
    let answer = |st: &mut FakeState, parent: &str, text: &str, reason: &str, summary: bool| {
        let id = st.server_message_id();
        let mut info = json!({
            "id": id, "parentID": parent, "role": "assistant", "mode": agent, "agent": agent,
            "path": {"cwd": dir, "root": dir}, "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "modelID": "fake-model", "providerID": "fake",
            "time": {"created": st.server_now()}, "sessionID": sid,
        });
        if summary {
            info["summary"] = json!(true);
            info["mode"] = json!("compaction");
        }
        st.put_info(sid, info.clone());
        shared.emit(
            dir,
            "message.updated",
            json!({"sessionID": sid, "info": info}),
        );
        let mut parts = vec![
            json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "step-start"}),
        ];
        parts.push(json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "text", "text": text}));
        if reason == "tool-calls" {
            parts.push(json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "tool", "tool": "read", "callID": format!("call_{id}"), "state": {"status": "completed", "input": {}, "output": "ok"}}));
        }
        parts.push(json!({"id": ids::part_id(), "messageID": id, "sessionID": sid, "type": "step-finish", "reason": reason}));
        for part in parts {
            st.put_part(sid, part.clone());
            shared.emit(
                dir,
                "message.part.updated",
                json!({"sessionID": sid, "part": part, "time": now_ms()}),
            );
        }
        info["time"]["completed"] = json!(st.server_now());
        info["finish"] = json!(reason);
        st.put_info(sid, info.clone());
        shared.emit(
            dir,
            "message.updated",
            json!({"sessionID": sid, "info": info}),
        );
    };
    let user = |st: &mut FakeState, part: Value| -> String {
        let id = st.server_message_id();
        let info = json!({"id": id, "sessionID": sid, "role": "user", "time": {"created": st.server_now()}, "agent": agent, "model": {"providerID": "fake", "modelID": "fake-model"}});
        st.put_info(sid, info.clone());
        shared.emit(
            dir,
            "message.updated",
            json!({"sessionID": sid, "info": info}),
        );
        let mut part = part;
        part["id"] = json!(ids::part_id());
        part["sessionID"] = json!(sid);
        part["messageID"] = json!(id);
        st.put_part(sid, part.clone());
        shared.emit(
            dir,
            "message.part.updated",
            json!({"sessionID": sid, "part": part, "time": now_ms()}),
        );
        id
    };
    let last_before = before.len().saturating_sub(1);
    for (i, text) in before.iter().enumerate() {
        let reason = if i == last_before && after.is_none() {
            "stop"
        } else {
            "tool-calls"
        };
        answer(st, user_id, text, reason, false);
    }
    if let Some(after) = after {
        let compaction = user(st, json!({"type": "compaction", "auto": true}));
        answer(
            st,
            &compaction,
            "SUMMARY OF THE CONVERSATION SO FAR",
            "stop",
            true,
        );
        let resume = user(
            st,
            json!({"type": "text", "synthetic": true, "text": "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."}),
        );
        let last = after.len().saturating_sub(1);
        for (i, text) in after.iter().enumerate() {
            let reason = if i == last { "stop" } else { "tool-calls" };
            answer(st, &resume, text, reason, false);
        }
    }
    st.statuses.remove(sid);
    shared.emit(
        dir,
        "session.status",
        json!({"sessionID": sid, "status": {"type": "idle"}}),
    );
    shared.emit(dir, "session.idle", json!({"sessionID": sid}));
    st.idle_emitted
        .entry(sid.to_owned())
        .or_default()
        .push(Instant::now());
    *st.turns_done.entry(sid.to_owned()).or_default() += 1;
}
