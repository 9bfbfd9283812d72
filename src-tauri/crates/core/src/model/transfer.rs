//! A transfer between linked sessions, as the UI sees it ([`crate::transfer_log`] keeps them,
//! [`crate::flows::transfer`] sends them).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ids::{MessageId, SessionId};

/// Which way a transfer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum TransferDirection {
    /// Review feedback to the implementing session.
    ToImplementer,
    /// Implementation response to the review session.
    ToReviewer,
}

/// One transfer of an assistant message's text to the linked session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TransferRecord {
    /// The session the sent message is in.
    pub source_session_id: SessionId,
    /// The assistant message whose text was sent.
    pub source_message_id: MessageId,
    /// The session it was sent to.
    pub target_session_id: SessionId,
    /// Which way it went.
    pub direction: TransferDirection,
    /// The user message Crosscheck created in the target session.
    pub sent_message_id: MessageId,
    /// When it was sent (ms since the epoch).
    #[ts(type = "number")]
    pub sent_at: i64,
    /// Claimed, and the server has not accepted it yet: shown as sending, not as sent.
    pub pending: bool,
}
