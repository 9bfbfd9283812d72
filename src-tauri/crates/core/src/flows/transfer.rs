//! One-click transfers between linked sessions: a reviewer's feedback to the implementer, or
//! the implementer's answer to the reviewer, in the agreed words and nothing else.

use crosscheck_opencode::{MessageWithParts, ids};

use super::now_ms;
use super::review_loop::timing::StepTimer;
use crate::api_types::{Change, TransferDirection, TransferResult};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::{get_original_session_id, get_review_session_id, is_review_session};
use crate::prompts;
use crate::settings::Tab;
use crate::store::assistant_text;
use crate::transfer_log::TransferRecord;
use crate::turn::{self, Delivery, Prompt, current_choice};

/// Sends the text of the turn that assistant message `message_id` of `session_id` belongs to
/// (every step answering the same prompt) to the linked session, whether or not it was sent
/// before (the send is recorded all the same).
pub async fn transfer(core: &Core, session_id: &str, message_id: &str) -> Result<TransferResult> {
    send(core, session_id, message_id, true).await
}

/// Sends the text of the turn that assistant message `message_id` of `session_id` belongs to
/// to the linked session and records the send. A message sent before is refused with
/// [`Error::AlreadyTransferred`] unless `resend` says the user confirmed sending it again.
///
/// The hot path is one request: both sessions and the message come from the store (kept
/// current by the event stream) when it has them, and a target deleted meanwhile is told by
/// the prompt's own "not found". The record is claimed in SQLite first, so two windows or
/// processes sending the same message at once send it once.
pub async fn send(
    core: &Core,
    session_id: &str,
    message_id: &str,
    resend: bool,
) -> Result<TransferResult> {
    let mut timer = StepTimer::start();
    let source = core.known_session(session_id).await?;
    let (target_id, direction, template, placeholder) = if is_review_session(&source) {
        let target = get_original_session_id(&source).ok_or(Error::NoLinkedSession)?;
        (
            target.to_owned(),
            TransferDirection::ToImplementer,
            prompts::REVIEW_FEEDBACK_TO_IMPLEMENTER,
            "review_feedback",
        )
    } else if let Some(target) = get_review_session_id(&source) {
        (
            target.to_owned(),
            TransferDirection::ToReviewer,
            prompts::IMPLEMENTATION_RESPONSE_TO_REVIEWER,
            "implementation_response",
        )
    } else {
        return Err(Error::NoLinkedSession);
    };
    let message = find_message(core, session_id, message_id).await?;
    if message.info.role != "assistant" {
        return Err(Error::InvalidRequest(
            "only assistant messages can be sent".into(),
        ));
    }
    let text = turn_text(core, session_id, &message).await;
    if text.is_empty() {
        return Err(Error::NoAssistantText);
    }
    timer.mark("read");
    let target = match core.known_session(&target_id).await {
        Ok(t) => t,
        Err(Error::SessionNotFound(_)) => return Err(Error::NoLinkedSession),
        Err(e) => return Err(e),
    };
    let registry = core.prompts();
    let body = registry.render(template, &[(placeholder, &text)])?;
    let hidden = match direction {
        TransferDirection::ToImplementer => super::review_loop::hidden::for_implementer(&registry)?,
        TransferDirection::ToReviewer => {
            super::review_loop::hidden::for_reviewer(&registry, &[], &[])?
        }
    };
    timer.mark("rendered");
    deliver_timed(
        core,
        Outgoing {
            source_session_id: session_id,
            source_message_id: message_id,
            target: &target,
            direction,
            body,
            hidden,
            resend,
        },
        timer,
    )
    .await
}

/// One prompt a transfer sends: the visible words, the hidden part, and what it is sent for.
pub(crate) struct Outgoing<'a> {
    /// The session whose message is sent.
    pub source_session_id: &'a str,
    /// The message the sent mark goes on.
    pub source_message_id: &'a str,
    /// The linked session it goes to.
    pub target: &'a crosscheck_opencode::Session,
    /// Which way it goes.
    pub direction: TransferDirection,
    /// The seed's words, filled in.
    pub body: String,
    /// The hidden instructions after them.
    pub hidden: String,
    /// The user confirmed sending this message again.
    pub resend: bool,
}

/// Claims the send in SQLite (refused with [`Error::AlreadyTransferred`] when sent before and
/// not resent), sends the prompt through the turn room, marks the claim sent once the server
/// accepted it, and announces it. Every transfer goes through here, so the sent mark and "Send
/// again?" behave the same for a whole turn and for chosen findings.
pub(crate) async fn deliver(core: &Core, out: Outgoing<'_>) -> Result<TransferResult> {
    deliver_timed(core, out, StepTimer::start()).await
}

/// [`deliver`], marking its stages on `timer` (logged once the prompt is accepted).
async fn deliver_timed(
    core: &Core,
    out: Outgoing<'_>,
    mut timer: StepTimer,
) -> Result<TransferResult> {
    let target = out.target;
    let direction = out.direction;
    let choice = current_choice(core, target);
    let sent_id = ids::message_id();
    let record = TransferRecord {
        source_session_id: out.source_session_id.into(),
        source_message_id: out.source_message_id.into(),
        target_session_id: target.id.clone().into(),
        direction,
        sent_message_id: sent_id.clone().into(),
        sent_at: now_ms(),
        pending: true,
    };
    core.client_for(&target.id)?;
    // A claim a dead process left pending for this message is settled first.
    check_claims(core, Some((out.source_session_id, out.source_message_id))).await;
    core.db().claim_transfer(&record, out.resend)?;
    timer.mark("claimed");
    let sent = turn::send(
        core,
        &Prompt {
            session_id: target.id.clone(),
            message_id: sent_id.clone(),
            parts: turn::with_hidden(out.body, out.hidden),
            choice,
        },
        Delivery::Fresh,
    )
    .await;
    match sent {
        Ok(()) => {}
        Err(e) if turn::is_gone(&e) => {
            drop_claim(core, &sent_id);
            core.with_store(|s| ((), Some(s.remove_session(&target.id))));
            return Err(Error::NoLinkedSession);
        }
        Err(e) => {
            drop_claim(core, &sent_id);
            return Err(e);
        }
    }
    timer.mark("accepted");
    timer.log_transfer();
    let record = TransferRecord {
        pending: false,
        ..record
    };
    if let Err(e) = core.db().accept_transfer(&record) {
        tracing::warn!("could not mark the transfer sent: {e}");
    }
    core.emit(Change::Transferred {
        transfer: record.clone(),
    });
    if direction == TransferDirection::ToReviewer {
        crate::services::tabs::show_partner_tab(
            core,
            out.source_session_id,
            Tab::session(&target.id, &target.directory, &target.title),
        )?;
    }
    Ok(TransferResult {
        target_session_id: target.id.clone(),
        direction,
        message_id: sent_id,
    })
}

/// Takes back the record of a send that did not go out.
fn drop_claim(core: &Core, sent_id: &str) {
    if let Err(e) = core.db().drop_transfer(sent_id) {
        tracing::warn!("could not take back the transfer record: {e}");
    }
}

/// Settles the claims a process that is gone left pending (all of them, or one message's):
/// each is looked for among its target's messages (the turn room's delivery check) and marked
/// sent when it is there, dropped when it is not or the target is gone; when the server cannot
/// tell now, it stays pending for the next check.
pub(crate) async fn check_claims(core: &Core, source: Option<(&str, &str)>) {
    let claims = match core.db().stale_claims(source) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("the pending transfers cannot be read: {e}");
            return;
        }
    };
    for claim in claims {
        match turn::delivered(core, &claim.target_session_id, &claim.sent_message_id).await {
            Ok(true) => {
                let sent = TransferRecord {
                    pending: false,
                    ..claim
                };
                if core.db().accept_transfer(&sent).is_ok() {
                    core.emit(Change::Transferred { transfer: sent });
                }
            }
            Ok(false) | Err(Error::SessionNotFound(_)) => {
                tracing::info!(
                    sent = %claim.sent_message_id,
                    "a transfer left pending by a process that stopped never arrived; unmarked"
                );
                drop_claim(core, &claim.sent_message_id);
                core.emit(Change::TransferDropped {
                    source_message_id: claim.source_message_id.into(),
                    sent_message_id: claim.sent_message_id.into(),
                });
            }
            Err(e) => {
                tracing::warn!(sent = %claim.sent_message_id, "a pending transfer cannot be checked now: {e}");
            }
        }
    }
}

/// Checks every claim left pending by a process that is gone, once the core is connected.
pub(crate) async fn check_pending(core: Core) {
    if turn::until_ready(&core).await.is_ok() {
        check_claims(&core, None).await;
    }
}

/// The message from the followed transcript, or fetched from the server.
pub(crate) async fn find_message(
    core: &Core,
    session_id: &str,
    message_id: &str,
) -> Result<MessageWithParts> {
    if let Some(m) = core.read_store(|s, _| {
        s.transcript(session_id)
            .and_then(|t| t.message(message_id).cloned())
    }) {
        return Ok(m);
    }
    let mut before: Option<String> = None;
    // A server that hands out a cursor it gave before would have this page through forever.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    loop {
        let page = core
            .client_for(session_id)?
            .messages(session_id, Some(200), before.as_deref())
            .await?;
        if let Some(m) = page.messages.into_iter().find(|m| m.info.id == message_id) {
            return Ok(m);
        }
        match page.next_cursor {
            Some(c) if seen.insert(c.clone()) => before = Some(c),
            Some(c) => {
                tracing::warn!(session = session_id, cursor = %c, "the server repeated a page cursor");
                return Err(Error::MessageNotFound(message_id.to_owned()));
            }
            None => return Err(Error::MessageNotFound(message_id.to_owned())),
        }
    }
}

/// The text of the turn `message` belongs to: the visible text of every assistant step that
/// answers the same user message, oldest first, joined by blank lines. The steps come from the
/// loaded transcript, else from the newest page of the server; a message without a parent, or
/// one found on neither, is a turn of its own.
pub(crate) async fn turn_text(core: &Core, session_id: &str, message: &MessageWithParts) -> String {
    let Some(parent) = message.info.parent_id.clone() else {
        return assistant_text(message);
    };
    let loaded = core.read_store(|s, _| {
        s.transcript(session_id)
            .filter(|t| t.message(&message.info.id).is_some())
            .map(|t| steps_text(t.messages(), &parent))
    });
    if let Some(text) = loaded {
        return text;
    }
    match core.client_for(session_id) {
        Ok(client) => match client.messages(session_id, Some(200), None).await {
            Ok(page) if page.messages.iter().any(|m| m.info.id == message.info.id) => {
                steps_text(&page.messages, &parent)
            }
            _ => assistant_text(message),
        },
        Err(_) => assistant_text(message),
    }
}

/// The text of the turn answering `parent`, by the same rules as a handoff's reply
/// ([`super::reply::turn_text`]: the server's order, compaction continuations followed).
fn steps_text(messages: &[MessageWithParts], parent: &str) -> String {
    super::reply::turn_text(messages, parent).unwrap_or_default()
}
