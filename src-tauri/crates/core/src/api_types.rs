//! The one typed contract between the backend and the UI: requests the UI sends, the
//! changes the backend pushes, and the shapes they carry. Both transports (Tauri IPC and
//! HTTP + SSE) carry exactly these types; TypeScript twins are generated with ts-rs.

use std::collections::BTreeMap;

use crosscheck_opencode::{
    DropCause, MessageInfo, MessageWithParts, ModelRef, Part, PermissionRequest, Session,
    SessionStatus, SharedStr, Todo,
};
use crosscheck_review::LedgerEntry;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use crate::error::ApiError;
use crate::model::attention::AttentionReason;
use crate::model::findings::FindingsView;
use crate::model::flow::FlowState;
pub use crate::model::ids::{MessageId, ServerId, SessionId};
use crate::model::loop_record::LoopState;
use crate::model::pin::ReviewPin;
use crate::model::review_progress::ReviewProgress;
pub use crate::model::transfer::TransferDirection;
use crate::model::transfer::TransferRecord;
use crate::settings::{Settings, Tab};

/// A session as the UI shows it: the server's session with its review link already resolved,
/// so the UI never reads `metadata.openchamber` itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct SessionView {
    /// The session as the server sent it.
    #[serde(flatten)]
    #[ts(flatten)]
    pub session: Session,
    /// The server the session lives on; absent for the main server (so one server's sessions
    /// read as they did before there were several).
    #[serde(default, skip_serializing_if = "ServerId::is_main")]
    #[ts(as = "Option<ServerId>", optional)]
    pub server_id: ServerId,
    /// Its review link, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub link: Option<ReviewLink>,
    /// Why the session needs the person now, newest first (empty or absent when it does not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<AttentionReason>>", optional)]
    pub attention: Vec<AttentionReason>,
}

/// Which side of a review link a session is on, and the session on the other side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewLink {
    /// `review`: this session reviews `otherSessionId`; `original`: `otherSessionId` reviews it.
    pub kind: LinkKind,
    /// The session on the other side.
    pub other_session_id: SessionId,
    /// Whether the other session is among the server's sessions (a stale link when not).
    pub other_exists: bool,
}

/// The two sides of a review link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum LinkKind {
    /// A review session: its feedback goes to the original.
    Review,
    /// An implementing session with a review session: its answers go to the reviewer.
    Original,
}

/// Model, agent and variant for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ModelChoice {
    /// Provider and model.
    #[ts(optional)]
    pub model: Option<ModelRef>,
    /// Agent name.
    #[ts(optional)]
    pub agent: Option<String>,
    /// The model variant (such as a reasoning effort), when the model has variants.
    #[ts(optional)]
    pub variant: Option<String>,
}

/// Result of sending a message: the id Crosscheck chose for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Sent {
    /// The user message id.
    pub message_id: String,
}

/// Result of a transfer between linked sessions.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TransferResult {
    /// Session the text was sent to.
    pub target_session_id: String,
    /// `toImplementer` or `toReviewer`.
    pub direction: TransferDirection,
    /// The user message id in the target session.
    pub message_id: String,
}

/// A slash command offered in autocomplete.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CommandEntry {
    /// Name without the slash.
    pub name: String,
    /// Description from the server (Crosscheck's own commands carry a locale key instead).
    #[ts(optional)]
    pub description: Option<String>,
    /// Locale key of the description, for Crosscheck's own commands.
    #[ts(optional)]
    pub description_key: Option<String>,
    /// Whether Crosscheck runs it (true) or the server (false).
    pub builtin: bool,
}

/// A prompt template with its default, for Settings.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PromptTemplate {
    /// Registry name, e.g. `session.reviewHandoff.visible`.
    pub name: String,
    /// Placeholders it takes, without braces.
    pub placeholders: Vec<String>,
    /// The built-in text.
    pub default_template: String,
    /// The text in use (the override when there is one).
    pub template: String,
    /// Whether the user overrode it.
    pub overridden: bool,
}

impl Connection {
    /// The server is gone for `reason`; the next attempt starts in `retry_in_ms`.
    pub fn reconnecting(url: String, error: String, reason: DropCause, retry_in_ms: u64) -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Connection::Reconnecting {
            url,
            error,
            reason,
            retry_in_ms,
            next_attempt_at: now.saturating_add(retry_in_ms),
        }
    }
}

/// Connection to the OpenCode server, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[ts(export)]
pub enum Connection {
    /// Starting the managed server or connecting.
    Connecting {
        /// Server URL, when known.
        #[ts(optional)]
        url: Option<String>,
    },
    /// Connected and in sync.
    Ready {
        /// Server URL.
        url: String,
        /// Server version.
        version: String,
        /// Whether Crosscheck started the server itself.
        managed: bool,
    },
    /// Lost the server; retrying. Build it with [`Connection::reconnecting`].
    Reconnecting {
        /// Server URL.
        url: String,
        /// Last error, in English with the details.
        error: String,
        /// Why, as a kind the UI puts in words.
        reason: DropCause,
        /// Next attempt in this many ms (from when this state was set).
        #[ts(type = "number")]
        retry_in_ms: u64,
        /// When the next attempt starts, ms since the Unix epoch (for a countdown).
        #[ts(type = "number")]
        next_attempt_at: u64,
    },
    /// Could not start or reach the server.
    Failed {
        /// What went wrong, in English.
        error: String,
    },
    /// No `opencode` program was found to start (and no server URL was given).
    NotInstalled {
        /// Each place looked in, as the user reads it.
        looked: Vec<String>,
    },
}

/// An answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum PermissionReplyKind {
    /// Allow this call only.
    Once,
    /// Allow this and matching calls from now on.
    Always,
    /// Refuse the call.
    Reject,
}

impl PermissionReplyKind {
    /// The word the server expects.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Always => "always",
            Self::Reject => "reject",
        }
    }
}

/// One OpenCode server Crosscheck follows, as the sidebar and Settings show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ServerView {
    /// Its key.
    pub id: ServerId,
    /// The name the user gave it (else its address or folder).
    pub name: String,
    /// Managed (started by Crosscheck in a folder) or attached (a URL).
    pub kind: ServerKind,
    /// Its address, once known.
    #[ts(optional)]
    pub url: Option<String>,
    /// The folder a managed server runs in.
    #[ts(optional)]
    pub folder: Option<String>,
    /// Whether it is in the saved list (added in the app, restored on the next start).
    pub saved: bool,
    /// Where its password is kept, when it has one.
    #[ts(optional)]
    pub password_store: Option<PasswordStore>,
    /// Its health.
    pub connection: Connection,
}

/// How Crosscheck reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ServerKind {
    /// Crosscheck starts `opencode serve` in a folder and stops it on exit.
    Managed,
    /// A running server at a URL, on this machine or another.
    Attached,
}

/// Where a saved server's password is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum PasswordStore {
    /// The desktop's Secret Service keyring.
    Keyring,
    /// A file in the data folder only the user can read (mode 0600).
    File,
    /// Given on the command line or in the environment: not saved.
    NotSaved,
}

/// What the UI needs for its first frame.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Snapshot {
    /// Sequence number of the last change included.
    #[ts(type = "number")]
    pub seq: u64,
    /// The main server's connection (the first of `servers`).
    pub connection: Connection,
    /// Every server followed, the main one first.
    #[serde(default)]
    #[ts(as = "Option<Vec<ServerView>>", optional)]
    pub servers: Vec<ServerView>,
    /// All known sessions, newest first.
    pub sessions: Vec<SessionView>,
    /// Non-idle statuses by session id.
    pub statuses: BTreeMap<String, SessionStatus>,
    /// Pending permission requests, grouped by session.
    pub permissions: Vec<PermissionRequest>,
    /// The user's settings in effect.
    pub settings: Settings,
    /// Context panel tabs, in order.
    pub tabs: Vec<Tab>,
    /// Key of the active context tab.
    #[ts(optional)]
    pub active_tab: Option<String>,
    /// Key of the tab that follows the selected session (its partner), if one does.
    #[ts(optional)]
    pub follow_tab: Option<String>,
    /// Flows running or recently ended.
    pub flows: Vec<FlowState>,
    /// The last error of sessions whose last turn failed.
    pub session_errors: BTreeMap<String, SessionFailure>,
}

/// Why a session's turn failed, as the server said it (`session.error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct SessionFailure {
    /// The server's error name, e.g. `UnknownError`, `ProviderAuthError`.
    pub name: String,
    /// The server's message without any stack trace, e.g. `Model not found: fake/nope.`.
    pub message: String,
}

impl SessionFailure {
    /// Reads the server's `{name, data: {message}}` leniently; a stack trace after the message
    /// (`\n    at ...`) is cut off.
    pub fn from_server(error: Option<&serde_json::Value>) -> Self {
        let name = error
            .and_then(|e| e.get("name"))
            .and_then(serde_json::Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or("UnknownError")
            .to_owned();
        let message = error
            .and_then(|e| e.get("data"))
            .and_then(|d| d.get("message"))
            .and_then(serde_json::Value::as_str)
            .map(strip_stack)
            .filter(|m| !m.is_empty())
            .unwrap_or(name.as_str())
            .to_owned();
        Self { name, message }
    }
}

/// The message before the first stack frame line.
fn strip_stack(message: &str) -> &str {
    let cut = message
        .lines()
        .position(|l| l.trim_start().starts_with("at "))
        .map_or(message.len(), |i| {
            message
                .split_inclusive('\n')
                .take(i)
                .map(str::len)
                .sum::<usize>()
        });
    message[..cut].trim()
}

/// A page of a session's transcript.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TranscriptPage {
    /// Sequence number of the last change included.
    #[ts(type = "number")]
    pub seq: u64,
    /// The session it concerns.
    pub session_id: String,
    /// Every loaded message, oldest first (the whole loaded window, not only the new page).
    pub messages: Vec<MessageWithParts>,
    /// Whether older messages exist on the server.
    pub has_older: bool,
}

/// The answer to `LoadOlder`: only the page it fetched, which the UI puts in front of what it
/// has, so the hundredth page costs what the first does.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct OlderPage {
    /// Sequence number of the last change applied before the page went into the window.
    #[ts(type = "number")]
    pub seq: u64,
    /// Session.
    pub session_id: String,
    /// The fetched messages, oldest first (some may already be loaded: the loaded copy wins).
    pub messages: Vec<MessageWithParts>,
    /// Whether still older messages exist on the server.
    pub has_older: bool,
}

/// A change pushed to the UI, stamped with a sequence number.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Stamped {
    /// Increasing sequence number.
    #[ts(type = "number")]
    pub seq: u64,
    /// The change.
    pub change: Change,
}

/// Something the UI must reflect.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[ts(export)]
pub enum Change {
    /// The main server's connection changed.
    Connection {
        /// New state.
        connection: Connection,
    },
    /// A server was added, or its name or connection changed.
    Server {
        /// The server as it is now.
        server: ServerView,
    },
    /// A server was removed (its sessions go with it).
    ServerRemoved {
        /// Which.
        server_id: ServerId,
    },
    /// The whole session list was reloaded (after connecting or reconnecting).
    SessionsReset {
        /// All sessions, newest first.
        sessions: Vec<SessionView>,
        /// Non-idle statuses.
        statuses: BTreeMap<String, SessionStatus>,
        /// Pending permission requests (replacing all known ones).
        permissions: Vec<PermissionRequest>,
    },
    /// A session was created or changed.
    SessionUpserted {
        /// The session.
        session: SessionView,
    },
    /// A session was deleted.
    SessionRemoved {
        /// The session it concerns.
        session_id: String,
    },
    /// A session's status changed.
    Status {
        /// The session it concerns.
        session_id: String,
        /// Its run state now (idle, busy, retry).
        status: SessionStatus,
    },
    /// A tool call waits for the user's permission.
    PermissionAsked {
        /// The request.
        request: PermissionRequest,
    },
    /// A permission request was answered (here or elsewhere) and is no longer pending.
    PermissionResolved {
        /// The session it concerns.
        session_id: String,
        /// The `per_...` request.
        request_id: String,
    },
    /// An open transcript was reloaded (after reconnecting).
    TranscriptReset {
        /// The reloaded window.
        page: TranscriptPage,
    },
    /// A message header in an open transcript was created or changed.
    MessageUpserted {
        /// The header.
        info: MessageInfo,
    },
    /// A message was removed.
    MessageRemoved {
        /// The session it concerns.
        session_id: String,
        /// The message, within that session.
        message_id: String,
    },
    /// A part in an open transcript was created or replaced.
    PartUpserted {
        /// The part.
        part: Part,
    },
    /// Text streamed into a part.
    PartDelta {
        /// The session it concerns.
        #[ts(type = "string")]
        session_id: SharedStr,
        /// The message, within that session.
        #[ts(type = "string")]
        message_id: SharedStr,
        /// The part, within that message.
        #[ts(type = "string")]
        part_id: SharedStr,
        /// Field (`text`).
        #[ts(type = "string")]
        field: SharedStr,
        /// Appended text.
        delta: String,
    },
    /// A part was removed.
    PartRemoved {
        /// The session it concerns.
        session_id: String,
        /// The message, within that session.
        message_id: String,
        /// The part, within that message.
        part_id: String,
    },
    /// Settings changed.
    Settings {
        /// New settings.
        settings: Settings,
    },
    /// A flow moved on.
    Flow {
        /// Its state.
        flow: FlowState,
    },
    /// The context panel's tabs changed (the backend owns them).
    Tabs {
        /// Open tabs, in order.
        tabs: Vec<Tab>,
        /// Key of the active tab.
        #[ts(optional)]
        active: Option<String>,
        /// Whether the panel should be shown (a tab was opened or activated).
        reveal: bool,
        /// Key of the tab that follows the selected session (its partner); the others are pinned.
        #[ts(optional)]
        follow: Option<String>,
    },
    /// The review ledger changed (a review here, or a gate in another process): its newest rows.
    Ledger {
        /// The newest rows, most recently updated first.
        entries: Vec<LedgerEntry>,
    },
    /// A transcript search moved on (a session read, or it finished).
    Search {
        /// What it found so far.
        progress: crate::search::SearchProgress,
    },
    /// An in-app cold review moved on (started, done, failed).
    Review {
        /// Its progress.
        review: ReviewProgress,
    },
    /// A session's turn failed, up front or midway, with the server's words (shown where the
    /// reply would be and as a toast). Cleared by the session's next `busy` status.
    SessionError {
        /// Session.
        session_id: String,
        /// The error.
        error: SessionFailure,
    },
    /// A review link's findings changed (a reviewer reply or an implementer answer recorded).
    Findings {
        /// Everything tracked for the link now.
        findings: FindingsView,
    },
    /// A session's line comments changed (written, sent, addressed, outdated, closed).
    Comments {
        /// The implementing session they go to.
        session_id: String,
        /// Every comment of the session now.
        comments: Vec<crate::model::comment::LineComment>,
    },
    /// A review loop moved on (a turn started or ended, or it stopped).
    Loop {
        /// Its state.
        state: LoopState,
    },
    /// An assistant message was sent to the linked session (here or from another window).
    Transferred {
        /// What was sent, from where, when.
        transfer: TransferRecord,
    },
    /// A transfer left pending by a process that stopped never reached its target: its mark is
    /// taken back.
    TransferDropped {
        /// The message whose mark it was.
        source_message_id: String,
        /// The prompt id that was never delivered.
        sent_message_id: String,
    },
    /// Files may have changed (a tool edited one, the server's watcher saw one, a session's
    /// diff was recomputed, the branch moved): a Changes tab showing this directory or session
    /// asks again. One per directory and per session for each batch of events.
    FilesChanged {
        /// The directory whose files changed, when the event named one.
        #[ts(optional)]
        directory: Option<String>,
        /// The session whose diff was recomputed, for `session.diff`.
        #[ts(optional)]
        session_id: Option<String>,
    },
    /// A session's todo list changed; carries the whole list.
    Todos {
        /// The session it concerns.
        session_id: String,
        /// Its todos now, in the agent's order.
        todos: Vec<Todo>,
    },
    /// A new worktree's start scripts finished (ready) or failed (`failure` has the server's
    /// words).
    Worktree {
        /// The worktree's name.
        name: String,
        /// Its branch.
        branch: String,
        /// The server's words when its start scripts failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        failure: Option<String>,
    },
    /// What a review saw of the code, checked again: pinned when a reviewer reply completed,
    /// stale once the code moved on.
    ReviewPin {
        /// The pin and its state now.
        pin: ReviewPin,
    },
    /// A notice for the user (background failures, successes of background work).
    Notice {
        /// The notice.
        notice: Notice,
    },
}

/// A toast. The UI localizes `code` with `params`; `message` is the English fallback.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Notice {
    /// `info`, `success` or `error`.
    pub level: NoticeLevel,
    /// Locale key.
    pub code: String,
    /// Values for the locale string's placeholders.
    pub params: BTreeMap<String, String>,
    /// English text.
    pub message: String,
}

/// How a notice looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum NoticeLevel {
    /// Neither success nor failure: for information.
    Info,
    /// Something worked.
    Success,
    /// Something failed.
    Error,
}
