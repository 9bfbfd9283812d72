//! The server's data types, read leniently: unknown fields are ignored, missing ones default,
//! and a field of the wrong shape falls back to its default instead of failing the whole value.

use serde::{Deserialize, Deserializer, Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};
use ts_rs::TS;

/// Deserializes a field, falling back to its default when the server sent another shape.
pub fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).unwrap_or_default())
}

/// Session metadata: any JSON object; absent (never set) is `None`, which is not `{}`.
pub type Metadata = Map<String, Value>;

/// Reads `metadata`, keeping it only when it is a JSON object.
fn lenient_metadata<'de, D>(deserializer: D) -> Result<Option<Metadata>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match Option::<Value>::deserialize(deserializer)? {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    })
}

/// Creation, update and archive times of a session, in ms since the epoch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionTime {
    /// When the session was created.
    #[serde(default, deserialize_with = "lenient")]
    #[ts(type = "number")]
    pub created: i64,
    /// When the session last changed.
    #[serde(default, deserialize_with = "lenient")]
    #[ts(type = "number")]
    pub updated: i64,
    /// When the session was archived, if it was.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional, type = "number")]
    pub archived: Option<i64>,
}

/// The model a session last used, as the server reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionModel {
    /// Model id within its provider.
    #[serde(default, alias = "modelID")]
    pub id: String,
    /// Provider id.
    #[serde(default, rename = "providerID")]
    pub provider_id: String,
    /// Variant (reasoning effort and the like), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub variant: Option<String>,
}

/// An OpenCode session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Session {
    /// `ses_...` id.
    pub id: String,
    /// Short human slug.
    #[serde(default, deserialize_with = "lenient")]
    pub slug: String,
    /// Project the session belongs to.
    #[serde(default, rename = "projectID", deserialize_with = "lenient")]
    pub project_id: String,
    /// Absolute working directory of the session.
    #[serde(default, deserialize_with = "lenient")]
    pub directory: String,
    /// Parent session for subagent sessions.
    #[serde(
        default,
        rename = "parentID",
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub parent_id: Option<String>,
    /// Title shown in lists.
    #[serde(default, deserialize_with = "lenient")]
    pub title: String,
    /// Free-form metadata; replaced whole by updates.
    #[serde(
        default,
        deserialize_with = "lenient_metadata",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional, type = "Record<string, unknown>")]
    pub metadata: Option<Metadata>,
    /// Set while the session is reverted: the messages from this point on are undone (and
    /// hidden) until a redo, or dropped for good by the next prompt.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub revert: Option<SessionRevert>,
    /// When it was created, last updated and archived.
    #[serde(default, deserialize_with = "lenient")]
    pub time: SessionTime,
    /// Agent last used.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub agent: Option<String>,
    /// Model last used.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub model: Option<SessionModel>,
    /// The session's own permission rules (what its agent may do without asking), as sent.
    #[serde(default, deserialize_with = "lenient", skip_serializing)]
    #[ts(skip)]
    pub permission: Option<Vec<PermissionRule>>,
    /// What the session's turns cost so far, in dollars (as the server adds it up).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// The tokens the session's turns used so far (as the server adds them up).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub tokens: Option<MessageTokens>,
}

/// One permission rule of a session: `permission` (`edit`, `bash`, ...) on paths or commands
/// matching `pattern` is `allow`ed, `deny`ed or `ask`ed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRule {
    /// The permission (`edit`, `bash`, `webfetch`, ...).
    pub permission: String,
    /// A glob over paths or commands (`*` for all).
    pub pattern: String,
    /// `allow`, `deny` or `ask`.
    pub action: String,
}

impl PermissionRule {
    /// A rule from its three parts.
    pub fn new(permission: &str, pattern: &str, action: &str) -> Self {
        Self {
            permission: permission.to_owned(),
            pattern: pattern.to_owned(),
            action: action.to_owned(),
        }
    }
}

/// Where a reverted session was reverted to (`Session.revert`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionRevert {
    /// The first message that is undone: it and everything after it.
    #[serde(rename = "messageID", default, deserialize_with = "lenient")]
    pub message_id: String,
    /// Within that message, the first undone part, when the revert started mid-message.
    #[serde(
        rename = "partID",
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub part_id: Option<String>,
}

/// A session's run state: `idle`, `busy` or `retry` (anything else is kept as sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionStatus {
    /// `idle`, `busy`, `retry`, ...
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    pub kind: String,
    /// Retry attempt number.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub attempt: Option<u32>,
    /// Retry reason.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub message: Option<String>,
}

impl SessionStatus {
    /// The idle status.
    pub fn idle() -> Self {
        Self {
            kind: "idle".into(),
            ..Self::default()
        }
    }

    /// Whether the session is doing nothing.
    pub fn is_idle(&self) -> bool {
        self.kind == "idle" || self.kind.is_empty()
    }
}

/// A provider and model pair, as messages and prompts name them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelRef {
    /// Provider id.
    #[serde(rename = "providerID", default)]
    pub provider_id: String,
    /// Model id.
    #[serde(rename = "modelID", default)]
    pub model_id: String,
}

/// Times of a message, in ms since the epoch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MessageTime {
    /// When it was created.
    #[serde(default, deserialize_with = "lenient")]
    #[ts(type = "number")]
    pub created: i64,
    /// When an assistant message completed.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional, type = "number")]
    pub completed: Option<i64>,
}

/// The header of a user or assistant message (its `info`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MessageInfo {
    /// `msg_...` id, time-ordered.
    pub id: String,
    /// Session it belongs to.
    #[serde(rename = "sessionID", default, deserialize_with = "lenient")]
    pub session_id: String,
    /// `user` or `assistant`.
    #[serde(default, deserialize_with = "lenient")]
    pub role: String,
    /// For assistant messages: the user message it answers.
    #[serde(
        rename = "parentID",
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub parent_id: Option<String>,
    /// When it was created and completed.
    #[serde(default, deserialize_with = "lenient")]
    pub time: MessageTime,
    /// The agent that runs (or ran) the turn.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub agent: Option<String>,
    /// For user messages: the model asked for.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    /// For assistant messages: provider that answered.
    #[serde(
        rename = "providerID",
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub provider_id: Option<String>,
    /// For assistant messages: model that answered.
    #[serde(
        rename = "modelID",
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub model_id: Option<String>,
    /// Variant used.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub variant: Option<String>,
    /// Why the turn ended (`stop`, `length`, ...).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub finish: Option<String>,
    /// The error that ended the turn, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub error: Option<Value>,
    /// Cost in dollars.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// For assistant messages: the tokens the step used.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub tokens: Option<MessageTokens>,
}

/// Tokens an assistant step used, as OpenCode counts them (for the per-turn figures).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MessageTokens {
    /// Prompt tokens.
    #[serde(default, deserialize_with = "lenient")]
    pub input: f64,
    /// Completion tokens.
    #[serde(default, deserialize_with = "lenient")]
    pub output: f64,
    /// Reasoning tokens.
    #[serde(default, deserialize_with = "lenient")]
    pub reasoning: f64,
    /// Prompt-cache reads and writes.
    #[serde(default, deserialize_with = "lenient")]
    pub cache: TokenCache,
}

/// Prompt-cache tokens of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TokenCache {
    /// Tokens read from the cache.
    #[serde(default, deserialize_with = "lenient")]
    pub read: f64,
    /// Tokens written to the cache.
    #[serde(default, deserialize_with = "lenient")]
    pub write: f64,
}

impl MessageInfo {
    /// Whether this is an assistant message whose turn has ended.
    pub fn is_completed_assistant(&self) -> bool {
        self.role == "assistant"
            && (self.time.completed.is_some() || self.finish.is_some() || self.error.is_some())
    }
}

/// One part of a message. `kind` is the server's `type` (`text`, `reasoning`, `tool`, ...);
/// unknown kinds are kept and rendered generically.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Part {
    /// `prt_...` id.
    pub id: String,
    /// The session the part belongs to.
    #[serde(rename = "sessionID", default, deserialize_with = "lenient")]
    pub session_id: String,
    /// The message the part belongs to.
    #[serde(rename = "messageID", default, deserialize_with = "lenient")]
    pub message_id: String,
    /// Part type.
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    pub kind: String,
    /// Text of text and reasoning parts; deltas append here.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub text: Option<String>,
    /// Hidden instructions: stored and sent to the model, not shown.
    #[serde(default, deserialize_with = "lenient")]
    pub synthetic: bool,
    /// Stored but not sent to the model.
    #[serde(default, deserialize_with = "lenient")]
    pub ignored: bool,
    /// Tool name of tool parts.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub tool: Option<String>,
    /// Tool call id.
    #[serde(
        rename = "callID",
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// Tool state (`status`, `input`, `output`, `title`, ...), as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub state: Option<Value>,
    /// File parts: MIME type.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub mime: Option<String>,
    /// File parts: file name.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub filename: Option<String>,
    /// Subtask and agent parts: description or name.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub description: Option<String>,
}

/// A message with its parts, as `GET /session/:id/message` returns it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MessageWithParts {
    /// The message header.
    pub info: MessageInfo,
    /// Its parts, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// A page of messages, oldest first, and the cursor for the older page when there is one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MessagePage {
    /// Messages, oldest first.
    pub messages: Vec<MessageWithParts>,
    /// Cursor for the page before this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub next_cursor: Option<String>,
}

/// `GET /global/health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Whether the server says it is healthy.
    #[serde(default, deserialize_with = "lenient")]
    pub healthy: bool,
    /// Server version.
    #[serde(default, deserialize_with = "lenient")]
    pub version: String,
}

/// A project the server knows (a worktree).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// Project id (`global` for non-git folders).
    #[serde(default, deserialize_with = "lenient")]
    pub id: String,
    /// Root folder.
    #[serde(default, deserialize_with = "lenient")]
    pub worktree: String,
    /// Further worktrees of the project.
    #[serde(default, deserialize_with = "lenient")]
    pub sandboxes: Vec<String>,
}

/// Where the server runs (`GET /path`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerPath {
    /// The folder the server was started in.
    #[serde(default, deserialize_with = "lenient")]
    pub directory: String,
    /// Its project's root folder.
    #[serde(default, deserialize_with = "lenient")]
    pub worktree: String,
}

/// A model a provider offers, for the model picker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelInfo {
    /// Model id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Variants the model supports (reasoning effort and the like).
    #[serde(default)]
    pub variants: Vec<String>,
}

/// A provider and its models, for the model picker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProviderInfo {
    /// Provider id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Models, sorted by name.
    pub models: Vec<ModelInfo>,
}

/// Providers and the server's default model per provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProviderCatalog {
    /// Connected providers.
    pub providers: Vec<ProviderInfo>,
    /// Default model per provider id.
    #[ts(type = "Record<string, string>")]
    pub default: std::collections::BTreeMap<String, String>,
}

/// An agent the server offers (`build`, `plan`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AgentInfo {
    /// Agent name.
    #[serde(default, deserialize_with = "lenient")]
    pub name: String,
    /// What it is for.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub description: Option<String>,
    /// `primary`, `subagent` or `all`.
    #[serde(default, deserialize_with = "lenient")]
    pub mode: String,
    /// OpenCode's own internal agents (`compaction`, `summary`, `title`): never offered.
    #[serde(default, deserialize_with = "lenient")]
    pub hidden: bool,
}

/// A slash command the server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CommandInfo {
    /// Name without the slash.
    #[serde(default, deserialize_with = "lenient")]
    pub name: String,
    /// What it does.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub description: Option<String>,
}

/// The tool call a permission request belongs to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PermissionTool {
    /// Message of the tool call.
    #[serde(rename = "messageID", default, deserialize_with = "lenient")]
    pub message_id: String,
    /// Tool call id.
    #[serde(rename = "callID", default, deserialize_with = "lenient")]
    pub call_id: String,
}

/// A tool call waiting for the user's permission (`permission.asked`, `GET /permission`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PermissionRequest {
    /// `per_...` id.
    pub id: String,
    /// Session whose turn waits.
    #[serde(rename = "sessionID", default, deserialize_with = "lenient")]
    pub session_id: String,
    /// What is asked for (`edit`, `bash`, `webfetch`, ...).
    #[serde(default, deserialize_with = "lenient")]
    pub permission: String,
    /// What it would apply to (paths, commands, URLs).
    #[serde(default, deserialize_with = "lenient")]
    pub patterns: Vec<String>,
    /// Details as sent (diffs, commands, ...).
    #[serde(default, deserialize_with = "lenient")]
    #[ts(type = "Record<string, unknown>")]
    pub metadata: Metadata,
    /// The patterns "always" would allow from now on.
    #[serde(default, deserialize_with = "lenient")]
    pub always: Vec<String>,
    /// The tool call it belongs to, when it is one.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub tool: Option<PermissionTool>,
}

/// One choice a question offers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuestionOption {
    /// The words of the choice (what the answer carries).
    #[serde(default, deserialize_with = "lenient")]
    pub label: String,
    /// What it means.
    #[serde(default, deserialize_with = "lenient")]
    pub description: String,
}

/// One question of a `question` tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuestionInfo {
    /// The whole question.
    #[serde(default, deserialize_with = "lenient")]
    pub question: String,
    /// A short label.
    #[serde(default, deserialize_with = "lenient")]
    pub header: String,
    /// The choices offered.
    #[serde(default, deserialize_with = "lenient")]
    pub options: Vec<QuestionOption>,
    /// Whether several choices may be picked.
    #[serde(default, deserialize_with = "lenient")]
    pub multiple: bool,
}

/// A `question` tool call waiting for the user's answer (`question.asked`, `GET /question`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuestionRequest {
    /// `que_...` id.
    pub id: String,
    /// Session whose turn waits.
    #[serde(rename = "sessionID", default, deserialize_with = "lenient")]
    pub session_id: String,
    /// The questions, answered together in this order.
    #[serde(default, deserialize_with = "lenient")]
    pub questions: Vec<QuestionInfo>,
}

/// Body of `POST /question/:id/reply`: per question, the labels picked.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionReply<'a> {
    /// The answers in the order of the questions.
    pub answers: &'a [Vec<String>],
}

/// Body of `POST /permission/:id/reply`.
#[derive(Debug, Clone, Serialize)]
pub struct PermissionReply<'a> {
    /// `once`, `always` or `reject`.
    pub reply: &'a str,
    /// Why, for a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// Body of `POST /session`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateSession {
    /// Title; the server writes one when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Parent session (never set for review sessions).
    #[serde(rename = "parentID", skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Initial metadata; only sent when defined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The session's permission rules; only sent when defined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<Vec<PermissionRule>>,
}

/// Archive state change in a session patch.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimePatch {
    /// Archive time, or `null` to unarchive.
    pub archived: Option<i64>,
}

/// Body of `PATCH /session/:id`. `metadata` REPLACES the whole object, as the server does.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionPatch {
    /// New title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New metadata, replacing the old whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Archive or unarchive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<TimePatch>,
    /// New permission rules, replacing the old.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<Vec<PermissionRule>>,
}

/// A text part of a prompt.
#[derive(Debug, Clone, Serialize)]
pub struct TextPartInput {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The text.
    pub text: String,
    /// Hidden from UIs, still sent to the model.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub synthetic: bool,
}

impl TextPartInput {
    /// A visible text part.
    pub fn visible(text: impl Into<String>) -> PartInput {
        PartInput::Text(Self {
            kind: "text",
            text: text.into(),
            synthetic: false,
        })
    }

    /// A synthetic (hidden) text part.
    pub fn synthetic(text: impl Into<String>) -> PartInput {
        PartInput::Text(Self {
            kind: "text",
            text: text.into(),
            synthetic: true,
        })
    }
}

/// A file part of a prompt: the server reads a `file://` URL itself, and inlines a `data:`
/// URL's content (text as a synthetic read of the file, images for models that take them).
#[derive(Debug, Clone, Serialize)]
pub struct FilePartInput {
    /// Always `file`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// MIME type (`text/plain`, `image/png`, ...).
    pub mime: String,
    /// The name shown for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// `data:<mime>;base64,...` or `file:///absolute/path`.
    pub url: String,
}

impl FilePartInput {
    /// A file part for `url`.
    pub fn part(
        mime: impl Into<String>,
        filename: Option<String>,
        url: impl Into<String>,
    ) -> PartInput {
        PartInput::File(Self {
            kind: "file",
            mime: mime.into(),
            filename,
            url: url.into(),
        })
    }
}

/// One part of a prompt: text or a file.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PartInput {
    /// A text part.
    Text(TextPartInput),
    /// A file part.
    File(FilePartInput),
}

/// Body of `POST /session/:id/prompt_async`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PromptRequest {
    /// Client-chosen id of the user message (must sort after existing ids).
    #[serde(rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Text and file parts.
    pub parts: Vec<PartInput>,
    /// Model to answer with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// The agent to run the turn with; the session's when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model variant to use; the model's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Text the server adds after its own system prompt, for this turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Tools switched on or off for this turn, by name (`"*"`: every tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<std::collections::BTreeMap<String, bool>>,
}

/// Body of `POST /session/:id/command`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CommandRequest {
    /// Command name without the slash.
    pub command: String,
    /// Everything after the name.
    pub arguments: String,
    /// Client-chosen id of the user message.
    #[serde(rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The agent to run the command with; the session's when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `provider/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model variant to use; the model's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}
