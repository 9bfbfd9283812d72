//! The core's error type and its mapping to the `{code, message}` the UI localizes.

use crate::api_types::ApiError;

/// Everything that can go wrong in the core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The OpenCode server refused or failed a request.
    #[error(transparent)]
    Opencode(#[from] crosscheck_opencode::Error),
    /// The local database could not be read or written.
    #[error("local storage failed: {0}")]
    Storage(#[from] rusqlite::Error),
    /// A stored value could not be read back.
    #[error("stored data is unreadable: {0}")]
    StoredData(String),
    /// The request itself was wrong.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// No server connection yet.
    #[error("not connected to an OpenCode server yet")]
    NotConnected,
    /// The session is not known.
    #[error("session {0} was not found")]
    SessionNotFound(String),
    /// The message is not in the session.
    #[error("message {0} was not found")]
    MessageNotFound(String),
    /// A transfer was asked for on a session without a linked session.
    #[error("this session has no linked review or implementation session")]
    NoLinkedSession,
    /// The message has no text to send.
    #[error("the assistant message has no text")]
    NoAssistantText,
    /// Linking the original to its review session failed; the new review session was removed.
    #[error("could not link the review session: {0}")]
    ReviewLinkFailed(String),
    /// The handoff turn did not finish in time.
    #[error("the handoff did not finish within {0} s")]
    HandoffTimeout(u64),
    /// The handoff turn ended with an error.
    #[error("the handoff turn failed: {0}")]
    HandoffFailed(String),
    /// The handoff turn was aborted.
    #[error("the handoff turn was aborted")]
    HandoffAborted,
    /// The user cancelled the flow.
    #[error("cancelled")]
    Cancelled,
    /// The cold review engine failed (config file, ledger).
    #[error(transparent)]
    Review(#[from] crosscheck_review::Error),
    /// A cold review could not run (reviewer unreachable, no API key, no ledger).
    #[error("the cold review could not run: {0}")]
    ReviewFailed(String),
    /// A bug: something that should not happen.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The stable code the UI localizes.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Opencode(e) => e.code(),
            Error::Storage(_) | Error::StoredData(_) => "storage",
            Error::InvalidRequest(_) => "invalid_request",
            Error::NotConnected => "opencode_not_ready",
            Error::SessionNotFound(_) | Error::MessageNotFound(_) => "not_found",
            Error::NoLinkedSession => "no_linked_session",
            Error::NoAssistantText => "no_assistant_text",
            Error::ReviewLinkFailed(_) => "review_link_failed",
            Error::HandoffTimeout(_) => "handoff_timeout",
            Error::HandoffFailed(_) => "handoff_failed",
            Error::HandoffAborted => "handoff_aborted",
            Error::Cancelled => "flow_cancelled",
            Error::Review(_) | Error::ReviewFailed(_) => "review_failed",
            Error::Internal(_) => "internal",
        }
    }

    /// Whether the server said the thing does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Error::Opencode(crosscheck_opencode::Error::NotFound { .. })
                | Error::SessionNotFound(_)
        )
    }

    /// The `{code, message}` pair sent to the UI.
    pub fn to_api(&self) -> ApiError {
        ApiError {
            code: self.code().to_owned(),
            message: self.to_string(),
        }
    }
}

/// Result with the core's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
