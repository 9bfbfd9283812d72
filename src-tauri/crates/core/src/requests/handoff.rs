//! Review handoff requests: starting the handoff, cancelling a flow, transferring a message's
//! text between linked sessions.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{ModelChoice, TransferResult};
use crate::core::Core;
use crate::error::Result;
use crate::flows::{self, FlowState, transfer};
use crate::review_pin::ReviewPin;
use crate::transfer_log::TransferRecord;

/// Fields of [`Request::StartHandoffReview`](super::Request::StartHandoffReview).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct StartHandoffReview {
    /// The implementing session that writes the handoff.
    pub session_id: String,
    /// Model, agent and variant for the implementer's handoff turn.
    #[serde(default)]
    #[ts(optional)]
    pub choice: Option<ModelChoice>,
    /// Model, agent and variant for the reviewer; the implementer's when absent.
    #[serde(default)]
    #[ts(optional)]
    pub reviewer: Option<ModelChoice>,
    /// Run the automatic review loop once the reviewer has the handoff.
    #[serde(default)]
    #[ts(optional)]
    pub review_loop: Option<crate::requests::review_loop::LoopSettings>,
}

/// Fields of [`Request::CancelFlow`](super::Request::CancelFlow).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CancelFlow {
    /// The flow to stop.
    pub flow_id: String,
}

/// Fields of [`Request::Transfer`](super::Request::Transfer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Transfer {
    /// The session the assistant message is in.
    pub session_id: String,
    /// The assistant message whose text goes to the linked session.
    pub message_id: String,
    /// The user confirmed sending a message that was sent before; without it such a send is
    /// refused with `already_transferred`.
    #[serde(default)]
    #[ts(optional)]
    pub resend: Option<bool>,
}

/// Fields of [`Request::SendFindings`](super::Request::SendFindings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SendFindings {
    /// The review session the reply is in.
    pub review_session_id: String,
    /// The reviewer's reply (a step of its turn) whose findings are offered.
    pub message_id: String,
    /// The findings to send (`F1`, `F3`, ...); the others stay in the Findings list.
    pub finding_ids: Vec<String>,
    /// The user confirmed sending a reply that was sent before; without it such a send is
    /// refused with `already_transferred`.
    #[serde(default)]
    #[ts(optional)]
    pub resend: Option<bool>,
}

/// Fields of [`Request::ListTransfers`](super::Request::ListTransfers).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ListTransfers {
    /// The session whose messages were sent.
    pub session_id: String,
}

/// Starts the handoff in the background (or answers the running one).
pub async fn start(core: &Core, req: StartHandoffReview) -> Result<FlowState> {
    let review_loop = req
        .review_loop
        .as_ref()
        .map(|l| l.options_with(core.settings().loop_budget))
        .transpose()?;
    flows::handoff::start(core, &req.session_id, req.choice, req.reviewer, review_loop)
}

/// Asks a flow to stop and waits for it: true when it ended as cancelled, false when it was
/// unknown, had ended, or finished its last step before it saw the request.
pub async fn cancel(core: &Core, req: CancelFlow) -> Result<bool> {
    Ok(flows::cancel(core, &req.flow_id).await)
}

/// Sends the message's text to the linked session in the agreed words (once, unless resent).
pub async fn transfer(core: &Core, req: Transfer) -> Result<TransferResult> {
    transfer::send(
        core,
        &req.session_id,
        &req.message_id,
        req.resend.unwrap_or(false),
    )
    .await
}

/// Sends only the chosen findings of a reviewer's reply to the implementer, in the seed's
/// feedback words (once, unless resent).
pub async fn send_findings(core: &Core, req: SendFindings) -> Result<TransferResult> {
    flows::send_findings::send(
        core,
        &req.review_session_id,
        &req.message_id,
        &req.finding_ids,
        req.resend.unwrap_or(false),
    )
    .await
}

/// Fields of [`Request::CheckReviewPin`](super::Request::CheckReviewPin).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct CheckReviewPin {
    /// The review session.
    pub session_id: String,
}

/// What the review session's newest reply saw, checked against the code now (`null` when no
/// reply was pinned). The answer is pushed too, so every window shows it.
pub async fn check_review_pin(core: &Core, req: CheckReviewPin) -> Result<Option<ReviewPin>> {
    let pin = crate::review_pin::check(core, &req.session_id).await?;
    if let Some(pin) = &pin {
        core.emit(crate::api_types::Change::ReviewPin { pin: pin.clone() });
    }
    Ok(pin)
}

/// The transfers sent from a session's messages, oldest first.
pub async fn list_transfers(core: &Core, req: ListTransfers) -> Result<Vec<TransferRecord>> {
    core.db().transfers_from(&req.session_id)
}
