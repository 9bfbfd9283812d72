//! Token counts of assistant messages, read leniently: the shape the real server stores, and
//! values a different server version might send.

use crosscheck_opencode::{MessageInfo, MessageTokens, Session, TokenCache};

#[test]
fn tokens_of_an_assistant_step_are_read() {
    // As OpenCode 1.18.33 stored a step of a scripted turn.
    let info: MessageInfo = serde_json::from_value(serde_json::json!({
        "id": "msg_2", "sessionID": "ses_1", "role": "assistant", "parentID": "msg_1",
        "time": {"created": 10, "completed": 20}, "cost": 0.0125, "finish": "tool-calls",
        "tokens": {"total": 2503, "input": 2449, "output": 54, "reasoning": 0, "cache": {"read": 7, "write": 0}}
    }))
    .expect("assistant message");
    assert_eq!(
        info.tokens,
        Some(MessageTokens {
            input: 2449.0,
            output: 54.0,
            reasoning: 0.0,
            cache: TokenCache {
                read: 7.0,
                write: 0.0
            },
        })
    );
    let back = serde_json::to_value(&info).expect("serialize");
    assert_eq!(back["tokens"]["output"], 54.0);
}

#[test]
fn odd_or_missing_tokens_lose_nothing_else() {
    let info: MessageInfo = serde_json::from_value(serde_json::json!({
        "id": "msg_2", "sessionID": "ses_1", "role": "assistant", "parentID": "msg_1",
        "time": {"created": 10}, "tokens": {"input": "many", "output": 3, "cache": null}
    }))
    .expect("odd tokens");
    let tokens = info.tokens.expect("tokens kept");
    assert_eq!((tokens.input, tokens.output), (0.0, 3.0));
    assert_eq!(info.parent_id.as_deref(), Some("msg_1"));

    let user: MessageInfo = serde_json::from_value(
        serde_json::json!({"id": "msg_1", "role": "user", "time": {"created": 1}}),
    )
    .expect("user message");
    assert_eq!(user.tokens, None);
    assert!(
        serde_json::to_value(&user)
            .expect("serialize")
            .get("tokens")
            .is_none()
    );

    let broken: MessageInfo = serde_json::from_value(
        serde_json::json!({"id": "msg_3", "role": "assistant", "time": {"created": 1}, "tokens": "lots"}),
    )
    .expect("tokens of the wrong type");
    assert_eq!(broken.tokens, None);
    assert_eq!(broken.role, "assistant");
}

#[test]
fn a_session_carries_its_totals_when_the_server_sends_them() {
    // As OpenCode 1.18.33 listed a child session.
    let session: Session = serde_json::from_value(serde_json::json!({
        "id": "ses_1", "slug": "mighty-nebula", "projectID": "global", "directory": "/project",
        "title": "Check", "version": "1.18.33", "time": {"created": 1, "updated": 2},
        "cost": 0.5, "tokens": {"input": 2450, "output": 3, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    }))
    .expect("session");
    assert_eq!(session.cost, Some(0.5));
    assert_eq!(session.tokens.map(|t| t.input), Some(2450.0));
    let bare: Session = serde_json::from_value(serde_json::json!({"id": "ses_2", "cost": "free"}))
        .expect("bare session");
    assert_eq!((bare.cost, bare.tokens), (None, None));
}
