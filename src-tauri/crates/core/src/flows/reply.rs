//! Reading the turn that answers one user message out of a followed transcript.
//!
//! OpenCode writes one assistant message per step of a turn (a step ends at each tool call),
//! each answering the user message. When the context overflows mid-turn it compacts: a user
//! message with a `compaction` part, a summary answering that, and (for automatic compaction) a
//! synthetic "continue" user message whose answers carry on the turn. The turn's text is every
//! step's text, in order, across such continuations, without the summary.
//!
//! When nothing answers the request itself, the server answered it together with prompts queued
//! behind it (it answers the newest user message): that answer is the request's too.
//!
//! Messages are put in order by the server's `time.created`, not by id: the id of the message
//! Crosscheck sent comes from this machine's clock and the replies' ids from the server's, so a
//! server whose clock is behind makes its replies sort before the request.

use std::collections::HashSet;

use crosscheck_opencode::MessageWithParts;

use crate::error::{Error, Result};
use crate::store::{Store, assistant_text};

/// The messages of the turn that answers `message_id`, in order: the steps (assistant messages
/// that carry the answer) and whether the turn still waits for more.
struct Turn<'a> {
    steps: Vec<&'a MessageWithParts>,
    /// Every assistant message of the turn, summaries included.
    assistants: Vec<&'a MessageWithParts>,
    /// The last message of the turn is a user message (compaction or continuation) nothing
    /// answered yet.
    awaits_answer: bool,
}

fn is_compaction_request(m: &MessageWithParts) -> bool {
    m.info.role == "user" && m.parts.iter().any(|p| p.kind == "compaction")
}

/// A user message the server wrote itself to carry on a compacted turn: only synthetic text.
fn is_continuation(m: &MessageWithParts) -> bool {
    m.info.role == "user"
        && !m.parts.is_empty()
        && m.parts.iter().all(|p| p.kind == "text" && p.synthetic)
}

/// The server's order: creation time, then id.
fn ordered(messages: &[MessageWithParts]) -> Vec<&MessageWithParts> {
    let mut all: Vec<&MessageWithParts> = messages.iter().collect();
    all.sort_by(|a, b| {
        a.info
            .time
            .created
            .cmp(&b.info.time.created)
            .then_with(|| a.info.id.cmp(&b.info.id))
    });
    all
}

fn turn<'a>(messages: &'a [MessageWithParts], message_id: &str) -> Option<Turn<'a>> {
    let all = ordered(messages);
    let start = all.iter().position(|m| m.info.id == message_id)?;
    let mut asks: HashSet<&str> = HashSet::from([message_id]);
    let mut compactions: HashSet<&str> = HashSet::new();
    let mut last_was_summary = false;
    // Nothing answers the request itself: the server answered it together with prompts queued
    // behind it, so the answer to those is the request's too.
    let merged = !all
        .iter()
        .any(|m| m.info.role == "assistant" && m.info.parent_id.as_deref() == Some(message_id));
    let mut turn = Turn {
        steps: Vec::new(),
        assistants: Vec::new(),
        awaits_answer: false,
    };
    // Answers to the request that sort before it (same millisecond, ids from two clocks) still
    // come right after it.
    let early = all[..start]
        .iter()
        .filter(|m| m.info.role == "assistant" && m.info.parent_id.as_deref() == Some(message_id));
    for m in early.chain(&all[start + 1..]) {
        if m.info.role == "user" {
            if is_compaction_request(m) {
                compactions.insert(m.info.id.as_str());
            } else if merged && turn.assistants.is_empty() {
                // Queued with the request and answered together with it.
            } else if !(last_was_summary && is_continuation(m)) {
                // Someone else's prompt (queued behind the request, or sent later): answered in
                // a turn of its own, whose messages name it as their parent.
                continue;
            }
            asks.insert(m.info.id.as_str());
            turn.awaits_answer = true;
            last_was_summary = false;
            continue;
        }
        let Some(parent) = m.info.parent_id.as_deref() else {
            continue;
        };
        if !asks.contains(parent) {
            continue;
        }
        turn.awaits_answer = false;
        turn.assistants.push(m);
        last_was_summary = compactions.contains(parent);
        if !last_was_summary {
            turn.steps.push(m);
        }
    }
    Some(turn)
}

/// Whether the turn answering `message_id` has ended, and how: `None` while it runs. It has
/// ended when the session is idle and every message of the turn is complete.
pub(crate) fn reply_outcome(
    store: &Store,
    session_id: &str,
    message_id: &str,
) -> Option<Result<String>> {
    let transcript = store.transcript(session_id)?;
    let turn = turn(transcript.messages(), message_id)?;
    if let Some(failed) = turn.assistants.iter().find(|m| m.info.error.is_some()) {
        return Some(Err(turn_error(failed)));
    }
    let last = turn.assistants.last()?;
    let running = turn.awaits_answer
        || !last.info.is_completed_assistant()
        || turn
            .assistants
            .iter()
            .any(|m| !m.info.is_completed_assistant());
    if running || !store.status(session_id).is_idle() {
        return None;
    }
    let text = steps_text(&turn);
    if text.is_empty() {
        return Some(Err(Error::NoAssistantText));
    }
    Some(Ok(text))
}

/// The text of the turn answering `prompt_id` as far as it got: every step's visible text in
/// the server's order, following compaction continuations, joined by blank lines. `None` when
/// `prompt_id` is not in `messages`.
pub(crate) fn turn_text(messages: &[MessageWithParts], prompt_id: &str) -> Option<String> {
    turn(messages, prompt_id).map(|t| steps_text(&t))
}

/// How far the turn answering `prompt_id` got: how many model calls (assistant messages,
/// summaries included) it made, and whether any step wrote visible text. `None` when
/// `prompt_id` is not in `messages`.
pub(crate) fn turn_progress(
    messages: &[MessageWithParts],
    prompt_id: &str,
) -> Option<(usize, bool)> {
    turn(messages, prompt_id).map(|t| (t.assistants.len(), !steps_text(&t).is_empty()))
}

/// What the turn answering `prompt_id` used, as the server counts it on every assistant
/// message (steps and summaries): tokens (prompt, completion, reasoning and prompt cache) and
/// cost in millionths of a dollar. `None` when `prompt_id` is not in `messages`.
pub(crate) fn turn_usage(messages: &[MessageWithParts], prompt_id: &str) -> Option<(u64, u64)> {
    let turn = turn(messages, prompt_id)?;
    let mut tokens = 0.0_f64;
    let mut cost = 0.0_f64;
    for m in &turn.assistants {
        if let Some(t) = &m.info.tokens {
            tokens += [t.input, t.output, t.reasoning, t.cache.read, t.cache.write]
                .iter()
                .filter(|n| n.is_finite() && **n > 0.0)
                .sum::<f64>();
        }
        if let Some(c) = m.info.cost.filter(|c| c.is_finite() && *c > 0.0) {
            cost += c;
        }
    }
    // Saturating float-to-integer casts: a nonsense figure cannot wrap.
    Some((tokens.round() as u64, (cost * 1_000_000.0).round() as u64))
}

/// The steps' visible texts, empty ones left out, joined by blank lines.
fn steps_text(turn: &Turn<'_>) -> String {
    let texts: Vec<String> = turn
        .steps
        .iter()
        .map(|m| assistant_text(m))
        .filter(|t| !t.is_empty())
        .collect();
    texts.join("\n\n")
}

/// The id of the last assistant message that carries the answer to `message_id` (the one a
/// findings round is recorded under).
pub(crate) fn reply_message_id(
    store: &Store,
    session_id: &str,
    message_id: &str,
) -> Option<String> {
    let transcript = store.transcript(session_id)?;
    let turn = turn(transcript.messages(), message_id)?;
    turn.steps.last().map(|m| m.info.id.clone())
}

/// The newest user message of a transcript that a person or a flow wrote (not a compaction
/// request or a continuation the server wrote itself), by the server's order.
pub(crate) fn last_prompt_id(store: &Store, session_id: &str) -> Option<String> {
    let transcript = store.transcript(session_id)?;
    ordered(transcript.messages())
        .into_iter()
        .rev()
        .find(|m| m.info.role == "user" && !is_compaction_request(m) && !is_continuation(m))
        .map(|m| m.info.id.clone())
}

fn turn_error(failed: &MessageWithParts) -> Error {
    let error = failed.info.error.as_ref();
    let name = error
        .and_then(|e| e.get("name"))
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    if name == "MessageAbortedError" {
        return Error::HandoffAborted;
    }
    let message = error
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("message"))
        .and_then(|v| v.as_str())
        .unwrap_or(if name.is_empty() {
            "unknown error"
        } else {
            name
        });
    Error::HandoffFailed(message.to_owned())
}

/// After its transcript was reloaded: whether the turn answering `message_id` was cut off (the
/// server restarted mid-turn, so its reply will never complete while the session reads idle).
pub(crate) fn interrupted(store: &Store, session_id: &str, message_id: &str) -> bool {
    if !store.status(session_id).is_idle() {
        return false;
    }
    let Some(t) = store.transcript(session_id) else {
        return false;
    };
    turn(t.messages(), message_id).is_some_and(|turn| {
        turn.assistants
            .last()
            .is_some_and(|m| !m.info.is_completed_assistant())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crosscheck_opencode::{MessageInfo, MessageTime, Part};

    fn msg(
        id: &str,
        role: &str,
        parent: Option<&str>,
        created: i64,
        done: bool,
    ) -> MessageWithParts {
        MessageWithParts {
            info: MessageInfo {
                id: id.into(),
                role: role.into(),
                parent_id: parent.map(Into::into),
                time: MessageTime {
                    created,
                    completed: done.then_some(created + 1),
                },
                ..MessageInfo::default()
            },
            parts: Vec::new(),
        }
    }

    fn text(mut m: MessageWithParts, text: &str, synthetic: bool) -> MessageWithParts {
        m.parts.push(Part {
            id: format!("prt_{}_{}", m.info.id, m.parts.len()),
            kind: "text".into(),
            text: Some(text.into()),
            synthetic,
            ..Part::default()
        });
        m
    }

    fn store_with(messages: Vec<MessageWithParts>) -> Store {
        let mut store = Store::default();
        store.put_transcript("ses_a", crate::store::Transcript::from_page(messages, None));
        store
    }

    #[test]
    fn a_turns_usage_adds_up_every_step_and_leaves_other_turns_out() {
        let priced = |mut m: MessageWithParts, input: f64, output: f64, cost: f64| {
            m.info.tokens = Some(crosscheck_opencode::MessageTokens {
                input,
                output,
                reasoning: 2.0,
                cache: crosscheck_opencode::TokenCache {
                    read: 1.0,
                    write: 0.0,
                },
            });
            m.info.cost = Some(cost);
            m
        };
        let messages = vec![
            msg("msg_1", "user", None, 10, false),
            priced(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                100.0,
                10.0,
                0.001,
            ),
            priced(
                msg("msg_3", "assistant", Some("msg_1"), 12, true),
                200.0,
                20.0,
                0.002,
            ),
            msg("msg_4", "user", None, 13, false),
            priced(
                msg("msg_5", "assistant", Some("msg_4"), 14, true),
                999.0,
                9.0,
                1.0,
            ),
        ];
        // 100+10+2+1 + 200+20+2+1 tokens; $0.003.
        assert_eq!(turn_usage(&messages, "msg_1"), Some((336, 3000)));
        assert_eq!(turn_usage(&messages, "msg_9"), None);
    }

    #[test]
    fn every_step_of_the_turn_is_joined() {
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                "First half.",
                false,
            ),
            text(
                msg("msg_3", "assistant", Some("msg_1"), 12, true),
                "Second half.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_1").expect("ended");
        assert_eq!(out.expect("text"), "First half.\n\nSecond half.");
    }

    #[test]
    fn replies_whose_ids_sort_before_the_request_are_found() {
        // The request's id is from a clock ahead of the server's.
        let store = store_with(vec![
            text(msg("msg_9", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_9"), 11, true),
                "The answer.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_9").expect("ended");
        assert_eq!(out.expect("text"), "The answer.");
    }

    #[test]
    fn a_reply_in_the_same_millisecond_with_an_older_id_is_found() {
        let store = store_with(vec![
            text(msg("msg_9", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_9"), 10, true),
                "Same ms.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_9").expect("ended");
        assert_eq!(out.expect("text"), "Same ms.");
    }

    #[test]
    fn a_compacted_turn_continues_and_skips_the_summary() {
        let mut compaction = msg("msg_3", "user", None, 13, false);
        compaction.parts.push(Part {
            id: "prt_c".into(),
            kind: "compaction".into(),
            ..Part::default()
        });
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                "Before.",
                false,
            ),
            compaction.clone(),
            text(
                msg("msg_4", "assistant", Some("msg_3"), 14, true),
                "SUMMARY",
                false,
            ),
            text(msg("msg_5", "user", None, 15, false), "Continue", true),
        ]);
        assert!(
            reply_outcome(&store, "ses_a", "msg_1").is_none(),
            "waits for the continuation"
        );
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                "Before.",
                false,
            ),
            compaction,
            text(
                msg("msg_4", "assistant", Some("msg_3"), 14, true),
                "SUMMARY",
                false,
            ),
            text(msg("msg_5", "user", None, 15, false), "Continue", true),
            text(
                msg("msg_6", "assistant", Some("msg_5"), 16, true),
                "After.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_1").expect("ended");
        assert_eq!(out.expect("text"), "Before.\n\nAfter.");
    }

    #[test]
    fn messages_queued_before_any_answer_share_it() {
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(msg("msg_2", "user", None, 11, false), "hand off too", false),
            text(
                msg("msg_3", "assistant", Some("msg_2"), 12, true),
                "One answer.",
                false,
            ),
        ]);
        for asked in ["msg_1", "msg_2"] {
            let out = reply_outcome(&store, "ses_a", asked).expect("ended");
            assert_eq!(out.expect("text"), "One answer.");
        }
        // Answered one by one: each keeps its own answer.
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(msg("msg_2", "user", None, 11, false), "hand off too", false),
            text(
                msg("msg_3", "assistant", Some("msg_1"), 12, true),
                "First.",
                false,
            ),
            text(
                msg("msg_4", "assistant", Some("msg_2"), 13, true),
                "Second.",
                false,
            ),
        ]);
        let first = reply_outcome(&store, "ses_a", "msg_1").expect("ended");
        assert_eq!(first.expect("text"), "First.");
        let second = reply_outcome(&store, "ses_a", "msg_2").expect("ended");
        assert_eq!(second.expect("text"), "Second.");
    }

    #[test]
    fn turn_text_joins_the_steps_in_the_servers_order_while_the_turn_runs() {
        // Ids out of creation order (ours come from our clock): creation time decides.
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_9", "assistant", Some("msg_1"), 11, true),
                "Step one.",
                false,
            ),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 12, false),
                "Step two, still running.",
                false,
            ),
        ]);
        let messages = store.transcript("ses_a").expect("loaded").messages();
        assert_eq!(
            turn_text(messages, "msg_1").as_deref(),
            Some("Step one.\n\nStep two, still running.")
        );
        assert_eq!(turn_text(messages, "msg_nope"), None);
    }

    #[test]
    fn a_prompt_queued_midway_does_not_cut_the_turn() {
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                "Step one.",
                false,
            ),
            text(msg("msg_3", "user", None, 12, false), "queued", false),
            text(
                msg("msg_4", "assistant", Some("msg_1"), 13, true),
                "Step two.",
                false,
            ),
            text(
                msg("msg_5", "assistant", Some("msg_3"), 14, true),
                "Other.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_1").expect("ended");
        assert_eq!(out.expect("text"), "Step one.\n\nStep two.");
    }

    #[test]
    fn a_later_prompts_answer_is_not_part_of_the_turn() {
        let store = store_with(vec![
            text(msg("msg_1", "user", None, 10, false), "hand off", false),
            text(
                msg("msg_2", "assistant", Some("msg_1"), 11, true),
                "Handoff.",
                false,
            ),
            text(
                msg("msg_3", "user", None, 12, false),
                "something else",
                false,
            ),
            text(
                msg("msg_4", "assistant", Some("msg_3"), 13, true),
                "Other.",
                false,
            ),
        ]);
        let out = reply_outcome(&store, "ses_a", "msg_1").expect("ended");
        assert_eq!(out.expect("text"), "Handoff.");
    }
}
