//! The core's error type, the [`ErrorCode`]s the UI localizes, and the one table that maps each
//! code to its HTTP status.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Declares [`ErrorCode`] with each code's HTTP status (web mode) in one table: a request the
/// backend could not parse is 400, a missing thing 404, the web token and host checks 401 and
/// 403, too many event streams 429, and every other failure of a well-formed request 422.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $code:ident = $status:literal, )*) => {
        /// A stable error code: the UI shows the localized text of `error.<code>`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        #[serde(rename_all = "snake_case")]
        #[ts(export)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $code, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &[ErrorCode] = &[$(ErrorCode::$code),*];

            /// The HTTP status web mode answers with for this code.
            pub fn http_status(self) -> u16 {
                match self {
                    $( ErrorCode::$code => $status, )*
                }
            }
        }
    };
}

error_codes! {
    /// The OpenCode server cannot be reached.
    OpencodeUnreachable = 422,
    /// The OpenCode server refused the password.
    OpencodeUnauthorized = 422,
    /// The OpenCode server answered with an error status.
    OpencodeStatus = 422,
    /// The OpenCode server's reply could not be read.
    OpencodeMalformed = 422,
    /// The OpenCode server's reply was too large to read (a huge diff).
    OpencodeTooLarge = 422,
    /// `opencode serve` could not be started.
    OpencodeSpawn = 422,
    /// No `opencode` binary was found to start.
    OpencodeNotInstalled = 422,
    /// Not connected to an OpenCode server yet.
    OpencodeNotReady = 422,
    /// A server URL that cannot be used.
    InvalidUrl = 422,
    /// The session, message or row does not exist.
    NotFound = 404,
    /// Local storage (SQLite) failed.
    Storage = 422,
    /// The request itself was wrong.
    InvalidRequest = 400,
    /// A transfer from a session without a linked session.
    NoLinkedSession = 422,
    /// A transfer of a message without text.
    NoAssistantText = 422,
    /// The review session could not be linked.
    ReviewLinkFailed = 422,
    /// The message was sent to the linked session before; sending it again needs a yes.
    AlreadyTransferred = 409,
    /// "Send selected findings" on a reviewer reply with no open findings.
    NoFindings = 422,
    /// "Send selected findings" with ids that are not among the reply's findings.
    UnknownFindings = 422,
    /// "Send selected findings" with none chosen.
    NoFindingsSelected = 400,
    /// Other clients kept replacing a metadata write (HTTP 409: a conflict).
    MetadataConflict = 409,
    /// The handoff turn did not finish in time.
    HandoffTimeout = 422,
    /// The handoff turn failed.
    HandoffFailed = 422,
    /// The handoff turn was aborted.
    HandoffAborted = 422,
    /// The user cancelled the flow.
    FlowCancelled = 422,
    /// The cold review could not run.
    ReviewFailed = 422,
    /// The code's fingerprint could not be taken (not a git repository, git failed).
    FingerprintFailed = 422,
    /// A new session's folder is not an absolute path.
    FolderNotAbsolute = 422,
    /// A new session's folder does not exist.
    FolderMissing = 422,
    /// A new session's folder is a file, not a directory.
    NotAFolder = 422,
    /// The session is running a turn; it cannot be reverted until the turn ends.
    SessionBusy = 409,
    /// An attached file (or all of them together) is larger than a message may carry.
    FileTooLarge = 413,
    /// An `@` mention resolves (through a link) to a file outside the session's folder.
    AttachmentOutside = 422,
    /// An `@` mention names a folder, a pipe, a device or a socket, not a regular file.
    AttachmentNotAFile = 422,
    /// An `@` mention names a file that does not exist (or a link to nothing).
    AttachmentMissing = 422,
    /// An `@` mention cannot be checked: the session's folder is not on this machine.
    AttachmentUnchecked = 422,
    /// The OpenCode server is reachable but did not answer in time (a very large answer).
    OpencodeSlow = 422,
    /// A worktree could not be made, read or removed (git's or the server's words).
    WorktreeFailed = 422,
    /// The folder is not a git repository.
    NotARepository = 422,
    /// A merge back was refused before anything changed.
    MergeRefused = 409,
    /// The worktree has uncommitted changes: removing it needs a second confirmation.
    WorktreeDirty = 409,
    /// The pair's previous review loop is still ending: a new one can start in a moment.
    LoopEnding = 409,
    /// A bug in Crosscheck.
    Internal = 422,
    /// Web mode: the token is missing or wrong.
    Unauthorized = 401,
    /// Web mode: the request named a host that is not loopback.
    ForbiddenHost = 403,
    /// Web mode: as many event streams as allowed are open with this token already.
    TooManyStreams = 429,
    /// The UI could not reach the Crosscheck backend (set by the UI's transport).
    HostUnreachable = 503,
}

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
    /// The message was sent to the linked session before, and the request did not say to send
    /// it again.
    #[error("this message was already sent to the linked session")]
    AlreadyTransferred {
        /// When it was sent last (ms since the epoch).
        sent_at: i64,
    },
    /// A reviewer reply with no open findings to send.
    #[error("this reply has no open findings to send")]
    NoFindings,
    /// Finding ids that are not among the reply's open findings (comma-separated).
    #[error("not among this reply's findings: {0}")]
    UnknownFindings(String),
    /// No finding was chosen to send.
    #[error("no findings were chosen to send")]
    NoFindingsSelected,
    /// Linking the original to its review session failed; the new review session was removed.
    #[error("could not link the review session: {0}")]
    ReviewLinkFailed(String),
    /// Other clients kept replacing a metadata write to this session.
    #[error(
        "session {0}'s metadata kept being replaced by another client; the change was not kept"
    )]
    MetadataConflict(String),
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
    /// The code's fingerprint could not be taken.
    #[error("could not fingerprint the code: {0}")]
    Fingerprint(String),
    /// A new session's folder is not an absolute path.
    #[error("the folder must be an absolute path: {0:?}")]
    FolderNotAbsolute(String),
    /// A new session's folder does not exist.
    #[error("the folder {0} does not exist")]
    FolderMissing(String),
    /// A new session's folder is a file.
    #[error("{0} is a file, not a folder")]
    NotAFolder(String),
    /// The session is running a turn (the server answered 409).
    #[error("session {0} is running a turn; wait for it to end or stop it first")]
    SessionBusy(String),
    /// An attached file, or all of a prompt's files together, is too large.
    #[error("{name}: {} MB is more than the limit of {} MB", mb(*size), mb(*limit))]
    FileTooLarge {
        /// The file's name, or how many files there are together.
        name: String,
        /// Its size in bytes, decoded.
        size: u64,
        /// The limit it is over, in bytes.
        limit: u64,
    },
    /// An `@` mention resolves, through a link, outside the session's folder.
    #[error("{0} leads outside the session's folder (through a link); it was not attached")]
    AttachmentOutside(String),
    /// An `@` mention is a folder or a special file (pipe, device, socket).
    #[error("{0} is not a regular file; it was not attached")]
    AttachmentNotAFile(String),
    /// An `@` mention does not exist.
    #[error("{0} does not exist in the session's folder")]
    AttachmentMissing(String),
    /// An `@` mention of a session whose folder is not on this machine.
    #[error("{0} cannot be checked: the session's folder is not on this machine")]
    AttachmentUnchecked(String),
    /// Git or the server could not make, read or remove a worktree (their words).
    #[error("{0}")]
    Worktree(String),
    /// The folder is not a git repository (offer to make it one).
    #[error("{0} is not a git repository")]
    NotARepository(String),
    /// A merge back was refused before anything changed (the reason).
    #[error("not merged: {0}")]
    MergeRefused(String),
    /// A worktree with uncommitted changes is removed only when the user confirms twice.
    #[error("the worktree {0} has uncommitted changes")]
    WorktreeDirty(String),
    /// The pair's previous review loop in this process is still ending (taking its claim off
    /// the server).
    #[error("the previous review loop of {0} is still ending; try again in a moment")]
    LoopEnding(String),
    /// A bug: something that should not happen.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The stable code the UI localizes.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Opencode(e) => opencode_code(e),
            Error::Storage(_) | Error::StoredData(_) => ErrorCode::Storage,
            Error::InvalidRequest(_) => ErrorCode::InvalidRequest,
            Error::NotConnected => ErrorCode::OpencodeNotReady,
            Error::SessionNotFound(_) | Error::MessageNotFound(_) => ErrorCode::NotFound,
            Error::NoLinkedSession => ErrorCode::NoLinkedSession,
            Error::NoAssistantText => ErrorCode::NoAssistantText,
            Error::AlreadyTransferred { .. } => ErrorCode::AlreadyTransferred,
            Error::NoFindings => ErrorCode::NoFindings,
            Error::UnknownFindings(_) => ErrorCode::UnknownFindings,
            Error::NoFindingsSelected => ErrorCode::NoFindingsSelected,
            Error::ReviewLinkFailed(_) => ErrorCode::ReviewLinkFailed,
            Error::MetadataConflict(_) => ErrorCode::MetadataConflict,
            Error::HandoffTimeout(_) => ErrorCode::HandoffTimeout,
            Error::HandoffFailed(_) => ErrorCode::HandoffFailed,
            Error::HandoffAborted => ErrorCode::HandoffAborted,
            Error::Cancelled => ErrorCode::FlowCancelled,
            Error::Review(_) | Error::ReviewFailed(_) => ErrorCode::ReviewFailed,
            Error::Fingerprint(_) => ErrorCode::FingerprintFailed,
            Error::FolderNotAbsolute(_) => ErrorCode::FolderNotAbsolute,
            Error::FolderMissing(_) => ErrorCode::FolderMissing,
            Error::NotAFolder(_) => ErrorCode::NotAFolder,
            Error::SessionBusy(_) => ErrorCode::SessionBusy,
            Error::FileTooLarge { .. } => ErrorCode::FileTooLarge,
            Error::AttachmentOutside(_) => ErrorCode::AttachmentOutside,
            Error::AttachmentNotAFile(_) => ErrorCode::AttachmentNotAFile,
            Error::AttachmentMissing(_) => ErrorCode::AttachmentMissing,
            Error::AttachmentUnchecked(_) => ErrorCode::AttachmentUnchecked,
            Error::Worktree(_) => ErrorCode::WorktreeFailed,
            Error::NotARepository(_) => ErrorCode::NotARepository,
            Error::MergeRefused(_) => ErrorCode::MergeRefused,
            Error::WorktreeDirty(_) => ErrorCode::WorktreeDirty,
            Error::LoopEnding(_) => ErrorCode::LoopEnding,
            Error::Internal(_) => ErrorCode::Internal,
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
            code: self.code(),
            message: self.to_string(),
        }
    }
}

/// Bytes as megabytes with one decimal, for messages.
fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

/// The code of an OpenCode client error.
fn opencode_code(error: &crosscheck_opencode::Error) -> ErrorCode {
    use crosscheck_opencode::Error as E;
    match error {
        E::Transport {
            timed_out: true, ..
        } => ErrorCode::OpencodeSlow,
        E::Transport { .. } => ErrorCode::OpencodeUnreachable,
        E::Unauthorized => ErrorCode::OpencodeUnauthorized,
        E::NotFound { .. } => ErrorCode::NotFound,
        E::Status { .. } => ErrorCode::OpencodeStatus,
        E::Decode { .. } => ErrorCode::OpencodeMalformed,
        E::TooLarge { .. } => ErrorCode::OpencodeTooLarge,
        E::InvalidUrl(_) => ErrorCode::InvalidUrl,
        E::Spawn(_) => ErrorCode::OpencodeSpawn,
        E::NotInstalled { .. } => ErrorCode::OpencodeNotInstalled,
        E::NotReady(_) => ErrorCode::OpencodeNotReady,
    }
}

impl ErrorCode {
    /// The code as the UI sees it (`not_found`, `opencode_unreachable`, ...).
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// Result with the core's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opencode_code_has_the_same_name_as_the_client_says() {
        use crosscheck_opencode::Error as E;
        let cases = [
            E::Transport {
                url: "u".into(),
                message: "m".into(),
                timed_out: false,
            },
            E::Transport {
                url: "u".into(),
                message: "m".into(),
                timed_out: true,
            },
            E::Unauthorized,
            E::NotFound { what: "w".into() },
            E::Status {
                status: 500,
                body: "b".into(),
            },
            E::Decode {
                what: "w".into(),
                message: "m".into(),
            },
            E::TooLarge {
                what: "w".into(),
                limit: 1,
            },
            E::InvalidUrl("u".into()),
            E::Spawn("s".into()),
            E::NotReady("n".into()),
        ];
        for e in cases {
            assert_eq!(opencode_code(&e).as_str(), e.code(), "{e}");
        }
    }

    #[test]
    fn codes_serialize_in_snake_case_and_map_to_statuses() {
        assert_eq!(ErrorCode::NotFound.as_str(), "not_found");
        assert_eq!(ErrorCode::HostUnreachable.as_str(), "host_unreachable");
        assert_eq!(ErrorCode::InvalidRequest.http_status(), 400);
        assert_eq!(ErrorCode::NotFound.http_status(), 404);
        assert_eq!(ErrorCode::Unauthorized.http_status(), 401);
        assert!(ErrorCode::ALL.iter().all(|c| !c.as_str().is_empty()));
    }
}

/// An error as the UI receives it: a stable code to localize and an English message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ApiError {
    /// Stable code the UI localizes.
    pub code: ErrorCode,
    /// English message with details.
    pub message: String,
}
