//! Turn requests: sending a prompt, running a slash command, stopping a turn, answering a
//! permission request.

use crosscheck_opencode::{CommandRequest, TextPartInput, ids};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::history;
use crate::api_types::{ModelChoice, NoticeLevel, PermissionReplyKind, Sent};
use crate::attachments::{self, Attachment};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::flows::cold_review::{self, ReviewProgress};
use crate::flows::{FlowState, handoff};

/// Fields of [`Request::SendPrompt`](super::Request::SendPrompt).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SendPrompt {
    /// The session to send to.
    pub session_id: String,
    /// What the user typed (must not be blank).
    pub text: String,
    /// Model, agent and variant; the session's current ones when absent.
    #[serde(default)]
    #[ts(optional)]
    pub choice: Option<ModelChoice>,
    /// Files sent with the text, as OpenCode `file` parts.
    #[serde(default)]
    #[ts(as = "Option<Vec<Attachment>>", optional)]
    pub attachments: Vec<Attachment>,
    /// Edit and resend: the session is first reverted to this user message, so the new prompt
    /// replaces it and everything after it.
    #[serde(default)]
    #[ts(optional)]
    pub revert_to: Option<String>,
}

/// Fields of [`Request::RunCommand`](super::Request::RunCommand).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RunCommand {
    /// The session the command runs in.
    pub session_id: String,
    /// Command name, with or without the slash.
    pub command: String,
    /// Everything the user typed after the name.
    pub arguments: String,
    /// Model, agent and variant for the turn the command starts.
    #[serde(default)]
    #[ts(optional)]
    pub choice: Option<ModelChoice>,
}

/// Fields of [`Request::Abort`](super::Request::Abort).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Abort {
    /// The session whose running turn stops.
    pub session_id: String,
}

/// Fields of [`Request::ReplyPermission`](super::Request::ReplyPermission).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ReplyPermission {
    /// The session whose turn waits for the answer.
    pub session_id: String,
    /// The `per_...` request being answered.
    pub request_id: String,
    /// Allow once, always, or reject.
    pub reply: PermissionReplyKind,
}

/// What a slash command started: a server turn, a review handoff or an in-app cold review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[ts(export)]
pub enum CommandStarted {
    /// A server command: its turn streams in under this user message id.
    Turn {
        /// The user message id Crosscheck chose.
        message_id: String,
    },
    /// `/handoff-review`: the flow that now runs.
    Handoff {
        /// Its first state.
        flow: FlowState,
    },
    /// `/cold-review [path]`: the review that now runs.
    ColdReview {
        /// Its first progress.
        review: Box<ReviewProgress>,
    },
}

/// Sends a visible user message under an id Crosscheck chooses.
/// Its files are checked before anything is sent; with `revert_to` the session is reverted
/// first (and nothing is sent when that fails).
pub async fn send_prompt(core: &Core, req: SendPrompt) -> Result<Sent> {
    if req.text.trim().is_empty() && req.attachments.is_empty() {
        return Err(Error::InvalidRequest("the message is empty".into()));
    }
    let mut parts = Vec::with_capacity(1 + req.attachments.len());
    if !req.text.trim().is_empty() {
        parts.push(TextPartInput::visible(req.text));
    }
    if !req.attachments.is_empty() {
        let directory = history::session_directory(core, &req.session_id).await?;
        parts.extend(attachments::file_parts(&directory, &req.attachments)?);
    }
    if let Some(message_id) = &req.revert_to {
        let session = history::revert_to(core, &req.session_id, message_id).await?;
        core.remember_session(session);
    }
    let message_id = ids::message_id();
    crate::turn::send(
        core,
        &crate::turn::Prompt {
            session_id: req.session_id,
            message_id: message_id.clone(),
            parts,
            choice: req.choice.unwrap_or_default(),
        },
        crate::turn::Delivery::Fresh,
    )
    .await?;
    Ok(Sent { message_id })
}

/// Runs `/handoff-review`, `/cold-review [path]` here, anything else on the server. A server
/// command's route blocks until its turn ends, so it runs in the background; its failure
/// becomes a notice.
pub async fn run_command(core: &Core, req: RunCommand) -> Result<CommandStarted> {
    let command = req.command.trim_start_matches('/').to_owned();
    let choice = req.choice.unwrap_or_default();
    let session_id = req.session_id;
    if command == "handoff-review" {
        let flow = handoff::start(core, &session_id, Some(choice), None, None)?;
        return Ok(CommandStarted::Handoff { flow });
    }
    if command == "cold-review" {
        let path = req.arguments.trim();
        let path = (!path.is_empty()).then_some(path);
        let review = cold_review::start(core, &session_id, None, path).await?;
        return Ok(CommandStarted::ColdReview {
            review: Box::new(review),
        });
    }
    let client = core.client_for(&session_id)?;
    let message_id = ids::message_id();
    let request = CommandRequest {
        command,
        arguments: req.arguments,
        message_id: Some(message_id.clone()),
        agent: choice.agent,
        model: choice
            .model
            .map(|m| format!("{}/{}", m.provider_id, m.model_id)),
        variant: choice.variant,
    };
    let background = core.clone();
    core.push_task(tokio::spawn(async move {
        if let Err(e) = client.command(&session_id, &request).await {
            let e = Error::from(e);
            background.notice(
                NoticeLevel::Error,
                &format!("error.{}", e.code().as_str()),
                &[],
                format!("The command failed: {e}"),
            );
        }
    }));
    Ok(CommandStarted::Turn { message_id })
}

/// Stops the session's running turn.
pub async fn abort(core: &Core, req: Abort) -> Result<()> {
    core.client_for(&req.session_id)?
        .abort(&req.session_id)
        .await?;
    Ok(())
}

/// Answers a permission request in its session's directory. Once the server took the answer,
/// or says the request is gone (answered elsewhere, or the turn ended), it is no longer pending.
pub async fn reply_permission(core: &Core, req: ReplyPermission) -> Result<()> {
    let client = core.client_for(&req.session_id)?;
    // A session that is gone says so (`SessionNotFound`: its request went with it).
    let directory = core.known_session(&req.session_id).await?.directory;
    let directory = Some(directory).filter(|d| !d.is_empty());
    let answered = client
        .reply_permission(
            &req.request_id,
            req.reply.as_str(),
            None,
            directory.as_deref(),
        )
        .await;
    if answered.is_ok() || answered.as_ref().is_err_and(|e| e.is_not_found()) {
        core.with_store(|s| ((), s.resolve_permission(&req.session_id, &req.request_id)));
    }
    answered.map_err(Into::into)
}
