//! The fake's question routes, as 1.18.33 answers them: `GET /question[?directory=]` lists the
//! pending questions (of the sessions in that folder), `POST /question/:id/reply` and
//! `POST /question/:id/reject` settle one and emit `question.replied` or `question.rejected`;
//! an unknown id is a 404.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Shared, json_response};

/// Answers the routes of this module; `None` for every other route.
pub(super) fn route(
    shared: &Shared,
    route: &str,
    id: &str,
    directory: Option<&str>,
    body: &Value,
) -> Option<Response> {
    match route {
        "GET /question" => {
            let st = shared.lock();
            let list: Vec<Value> = st
                .questions
                .values()
                .filter(|q| {
                    directory.is_none_or(|d| {
                        q["sessionID"]
                            .as_str()
                            .and_then(|sid| st.sessions.get(sid))
                            .is_some_and(|s| s["directory"] == d)
                    })
                })
                .cloned()
                .collect();
            Some(json_response(StatusCode::OK, Value::Array(list)))
        }
        "POST /question/:id/reply" | "POST /question/:id/reject" => {
            let mut st = shared.lock();
            let Some(request) = st.questions.remove(id) else {
                return Some(json_response(
                    StatusCode::NOT_FOUND,
                    json!({"name": "NotFoundError", "data": {"message": format!("Question not found: {id}")}}),
                ));
            };
            let sid = request["sessionID"].clone();
            let dir = sid
                .as_str()
                .and_then(|s| st.sessions.get(s))
                .and_then(|s| s["directory"].as_str())
                .map_or_else(|| st.directory.clone(), str::to_owned);
            if route.ends_with("reply") {
                shared.emit(
                    &dir,
                    "question.replied",
                    json!({"sessionID": sid, "requestID": id, "answers": body["answers"]}),
                );
            } else {
                shared.emit(
                    &dir,
                    "question.rejected",
                    json!({"sessionID": sid, "requestID": id}),
                );
            }
            drop(st);
            shared.bump();
            Some(json_response(StatusCode::OK, json!(true)))
        }
        _ => None,
    }
}
