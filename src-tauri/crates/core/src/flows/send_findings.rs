//! "Send selected findings": the findings a reviewer's reply named, only the ones the user
//! chose, sent to the implementer in the seed's feedback words through the same path as the
//! one-click transfer (sent mark, "Send again?", the hidden answer-by-id instruction).

use crate::api_types::{TransferDirection, TransferResult};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::findings::{self, FindingView, FindingsView, RoundSide};
use crate::metadata::{get_original_session_id, is_review_session};
use crate::prompts;

use super::review_loop::rules::feedback_text;
use super::transfer::{Outgoing, deliver};

/// The findings reviewer message `message_id` opened or kept open, by id order.
pub fn message_findings<'a>(view: &'a FindingsView, message_id: &str) -> Vec<&'a FindingView> {
    view.findings
        .iter()
        .filter(|f| {
            f.history.iter().any(|h| {
                h.side == RoundSide::Reviewer && h.message_id == message_id && h.status.is_open()
            })
        })
        .collect()
}

/// The recorded reviewer message of the turn `message_id` belongs to: the message itself when
/// it is a round, else the turn's last step (rounds are recorded under it).
fn round_message(
    core: &Core,
    view: &FindingsView,
    session_id: &str,
    message_id: &str,
) -> Option<String> {
    if view.rounds.iter().any(|r| r.message_id == message_id) {
        return Some(message_id.to_owned());
    }
    let last = core.read_store(|s, _| {
        let parent = s
            .transcript(session_id)?
            .message(message_id)?
            .info
            .parent_id
            .clone()?;
        super::reply::reply_message_id(s, session_id, &parent)
    })?;
    view.rounds
        .iter()
        .any(|r| r.message_id == last)
        .then_some(last)
}

/// Sends the findings `finding_ids` of the reviewer's reply `message_id` in review session
/// `session_id` to the implementer. Refused with [`Error::NoFindingsSelected`] when none are
/// chosen, [`Error::NoFindings`] when the reply has no open findings, [`Error::UnknownFindings`]
/// when an id is not one of them, [`Error::NoLinkedSession`] when the original is gone, and
/// [`Error::AlreadyTransferred`] when the reply was sent before and `resend` is false.
pub async fn send(
    core: &Core,
    session_id: &str,
    message_id: &str,
    finding_ids: &[String],
    resend: bool,
) -> Result<TransferResult> {
    if finding_ids.is_empty() {
        return Err(Error::NoFindingsSelected);
    }
    let source = core.known_session(session_id).await?;
    if !is_review_session(&source) {
        return Err(Error::InvalidRequest(
            "findings are sent from the review session".into(),
        ));
    }
    let original = get_original_session_id(&source)
        .ok_or(Error::NoLinkedSession)?
        .to_owned();
    // A reply that completed before its transcript was followed is recorded now.
    super::review_loop::recorder::record_latest(core, session_id).await?;
    let view = findings::view(core.db(), session_id)?;
    let round = match round_message(core, &view, session_id, message_id) {
        Some(m) => m,
        None => {
            // Tell a message that is not there from one without findings.
            super::transfer::find_message(core, session_id, message_id).await?;
            return Err(Error::NoFindings);
        }
    };
    let offered = message_findings(&view, &round);
    if offered.is_empty() {
        return Err(Error::NoFindings);
    }
    let unknown: Vec<String> = finding_ids
        .iter()
        .filter(|id| !offered.iter().any(|f| &f.id == *id))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(Error::UnknownFindings(unknown.join(", ")));
    }
    let chosen: Vec<FindingView> = offered
        .into_iter()
        .filter(|f| finding_ids.contains(&f.id))
        .cloned()
        .collect();
    let target = match core.known_session(&original).await {
        Ok(t) => t,
        Err(Error::SessionNotFound(_)) => return Err(Error::NoLinkedSession),
        Err(e) => return Err(e),
    };
    let registry = core.prompts();
    let body = registry.render(
        prompts::REVIEW_FEEDBACK_TO_IMPLEMENTER,
        &[("review_feedback", &feedback_text(&chosen))],
    )?;
    let hidden = super::review_loop::hidden::for_implementer(&registry)?;
    deliver(
        core,
        Outgoing {
            source_session_id: session_id,
            source_message_id: message_id,
            target: &target,
            direction: TransferDirection::ToImplementer,
            body,
            hidden,
            resend,
        },
    )
    .await
}
