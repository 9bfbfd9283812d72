//! The typed Api both transports serve: one request in, one JSON value or `{code, message}` out,
//! plus the stream of [`Stamped`] changes.

use crosscheck_opencode::{
    CommandRequest, CreateSession, PromptRequest, SessionPatch, TextPartInput, TimePatch, ids,
};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::api_types::{
    ApiError, Change, CommandEntry, ModelChoice, PermissionReplyKind, Request, Sent, Snapshot,
    Stamped, TranscriptPage,
};
use crate::core::Core;
use crate::db::SavedTabs;
use crate::error::{Error, Result};
use crate::flows::{cold_review, delete, handoff, transfer};
use crate::settings::Tab;
use crate::store::Transcript;
use crate::sync::PAGE_SIZE;

/// Crosscheck's own slash commands: name and locale key of the description.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("handoff-review", "command.handoffReview"),
    ("cold-review", "command.coldReview"),
];

/// Most changes pushed to the UI in one batch.
pub const MAX_BATCH: usize = 512;

/// Why [`next_batch`] returned no batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchEnd {
    /// The reader fell behind and changes were dropped: the UI must reload its snapshot.
    Lagged,
    /// The core is gone.
    Closed,
}

/// Waits for the next change and takes whatever else is already queued, up to [`MAX_BATCH`]:
/// both transports push changes to the UI this way.
pub async fn next_batch(rx: &mut broadcast::Receiver<Stamped>) -> Result<Vec<Stamped>, BatchEnd> {
    let first = rx.recv().await.map_err(|e| match e {
        broadcast::error::RecvError::Lagged(_) => BatchEnd::Lagged,
        broadcast::error::RecvError::Closed => BatchEnd::Closed,
    })?;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(c) => batch.push(c),
            Err(broadcast::error::TryRecvError::Empty) => break,
            Err(broadcast::error::TryRecvError::Lagged(_)) => return Err(BatchEnd::Lagged),
            Err(broadcast::error::TryRecvError::Closed) => return Err(BatchEnd::Closed),
        }
    }
    Ok(batch)
}

/// The Api over a running [`Core`].
#[derive(Clone)]
pub struct Api {
    core: Core,
}

fn json<T: Serialize>(value: T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| Error::Internal(e.to_string()))
}

impl Api {
    /// The Api of `core`.
    pub fn new(core: Core) -> Self {
        Self { core }
    }

    /// The core behind it.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Receives every change from now on (subscribe before taking a snapshot).
    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.core.subscribe()
    }

    /// Runs one request; errors come back as `{code, message}`.
    pub async fn handle(&self, request: Request) -> Result<Value, ApiError> {
        self.dispatch(request).await.map_err(|e| {
            tracing::debug!("request failed: {e}");
            e.to_api()
        })
    }

    /// Parses a JSON request and runs it; a malformed request is an `invalid_request` error.
    pub async fn handle_json(&self, request: Value) -> Result<Value, ApiError> {
        let request: Request = serde_json::from_value(request).map_err(|e| ApiError {
            code: "invalid_request".into(),
            message: format!("invalid request: {e}"),
        })?;
        self.handle(request).await
    }

    async fn dispatch(&self, request: Request) -> Result<Value> {
        let core = &self.core;
        match request {
            Request::Snapshot => json(self.snapshot()),
            Request::OpenSession { session_id } => json(open_session(core, &session_id).await?),
            Request::LoadOlder { session_id } => json(load_older(core, &session_id).await?),
            Request::CloseSession { session_id } => {
                core.with_store(|s| {
                    s.unfollow(&session_id);
                    ((), None)
                });
                Ok(Value::Null)
            }
            Request::CreateSession { directory, title } => {
                if !std::path::Path::new(&directory).is_absolute() {
                    return Err(Error::InvalidRequest(format!(
                        "directory must be an absolute path: {directory}"
                    )));
                }
                let s = core
                    .client()?
                    .create_session(
                        &directory,
                        &CreateSession {
                            title,
                            ..Default::default()
                        },
                    )
                    .await?;
                core.with_store(|st| ((), Some(st.upsert_session(s.clone()))));
                json(s)
            }
            Request::RenameSession { session_id, title } => {
                let title = title.trim().to_owned();
                if title.is_empty() {
                    return Err(Error::InvalidRequest("a title cannot be empty".into()));
                }
                let patch = SessionPatch {
                    title: Some(title),
                    ..Default::default()
                };
                self.patch_session(&session_id, patch).await
            }
            Request::ArchiveSession {
                session_id,
                archived,
            } => {
                let at = archived.then(crate::flows::now_ms);
                let patch = SessionPatch {
                    time: Some(TimePatch { archived: at }),
                    ..Default::default()
                };
                self.patch_session(&session_id, patch).await
            }
            Request::DeleteSession { session_id } => {
                delete::delete_session(core, &session_id).await?;
                Ok(Value::Null)
            }
            Request::SendPrompt {
                session_id,
                text,
                choice,
            } => {
                if text.trim().is_empty() {
                    return Err(Error::InvalidRequest("the message is empty".into()));
                }
                let choice = choice.unwrap_or_default();
                let message_id = ids::message_id();
                core.client()?
                    .prompt_async(
                        &session_id,
                        &PromptRequest {
                            message_id: Some(message_id.clone()),
                            parts: vec![TextPartInput::visible(text)],
                            model: choice.model,
                            agent: choice.agent,
                            variant: choice.variant,
                        },
                    )
                    .await?;
                json(Sent { message_id })
            }
            Request::RunCommand {
                session_id,
                command,
                arguments,
                choice,
            } => {
                self.run_command(&session_id, command, arguments, choice.unwrap_or_default())
                    .await
            }
            Request::Abort { session_id } => {
                core.client()?.abort(&session_id).await?;
                Ok(Value::Null)
            }
            Request::ReplyPermission {
                session_id,
                request_id,
                reply,
            } => {
                reply_permission(core, &session_id, &request_id, reply).await?;
                Ok(Value::Null)
            }
            Request::Providers { directory } => {
                json(core.client()?.providers(directory.as_deref()).await?)
            }
            Request::Agents { directory } => {
                json(core.client()?.agents(directory.as_deref()).await?)
            }
            Request::Commands { directory } => {
                let mut entries: Vec<CommandEntry> = BUILTIN_COMMANDS
                    .iter()
                    .map(|(name, key)| CommandEntry {
                        name: (*name).to_owned(),
                        description: None,
                        description_key: Some((*key).to_owned()),
                        builtin: true,
                    })
                    .collect();
                let server = core.client()?.commands(directory.as_deref()).await?;
                entries.extend(
                    server
                        .into_iter()
                        .filter(|c| !BUILTIN_COMMANDS.iter().any(|(n, _)| *n == c.name))
                        .map(|c| CommandEntry {
                            name: c.name,
                            description: c.description,
                            description_key: None,
                            builtin: false,
                        }),
                );
                json(entries)
            }
            Request::SetSettings { settings } => {
                if settings.handoff_timeout_ms < 10_000 {
                    return Err(Error::InvalidRequest(
                        "the handoff time limit must be at least 10 seconds".into(),
                    ));
                }
                core.inner.db.set_settings(&settings)?;
                if let Ok(mut s) = core.inner.settings.write() {
                    *s = settings.clone();
                }
                core.emit(Change::Settings {
                    settings: settings.clone(),
                });
                json(settings)
            }
            Request::SetTabs { tabs, active } => {
                core.inner.db.set_tabs(&SavedTabs { tabs, active })?;
                Ok(Value::Null)
            }
            Request::Prompts => json(self.prompts()?.list()),
            Request::SetPrompt { name, template } => self.set_prompt(&name, Some(template)),
            Request::ResetPrompt { name } => self.set_prompt(&name, None),
            Request::StartHandoffReview {
                session_id,
                choice,
                reviewer,
            } => json(handoff::start(core, &session_id, choice, reviewer)?),
            Request::CancelFlow { flow_id } => {
                core.inner.flows.cancel(&flow_id);
                Ok(Value::Null)
            }
            Request::Transfer {
                session_id,
                message_id,
            } => json(transfer::transfer(core, &session_id, &message_id).await?),
            Request::ColdReview {
                session_id,
                message_id,
                path,
            } => json(
                cold_review::start(core, &session_id, message_id.as_deref(), path.as_deref())
                    .await?,
            ),
            Request::ListReviews { limit } => json(cold_review::list(core, limit).await?),
            Request::GetReview { kind, key } => json(cold_review::detail(core, kind, key).await?),
        }
    }

    /// Everything for the UI's first frame.
    pub fn snapshot(&self) -> Snapshot {
        let saved = self.core.inner.db.tabs();
        let (seq, sessions, statuses, permissions) = self
            .core
            .read_store(|s, seq| (seq, s.sessions(), s.statuses(), s.permissions()));
        Snapshot {
            seq,
            connection: self.core.connection(),
            sessions,
            statuses,
            permissions,
            settings: self.core.settings(),
            tabs: saved.tabs,
            active_tab: saved.active,
            flows: self.core.inner.flows.list(),
        }
    }

    fn prompts(&self) -> Result<crate::prompts::Registry> {
        Ok(self
            .core
            .inner
            .prompts
            .read()
            .map_err(|_| Error::Internal("prompts lock".into()))?
            .clone())
    }

    fn set_prompt(&self, name: &str, template: Option<String>) -> Result<Value> {
        if crate::prompts::default_template(name).is_none() {
            return Err(Error::InvalidRequest(format!("unknown prompt {name}")));
        }
        self.core
            .inner
            .db
            .set_prompt_override(name, template.as_deref())?;
        let mut registry = self
            .core
            .inner
            .prompts
            .write()
            .map_err(|_| Error::Internal("prompts lock".into()))?;
        registry.set_override(name, template);
        json(registry.get(name))
    }

    async fn patch_session(&self, session_id: &str, patch: SessionPatch) -> Result<Value> {
        let s = self
            .core
            .client()?
            .update_session(session_id, &patch)
            .await?;
        self.core
            .with_store(|st| ((), Some(st.upsert_session(s.clone()))));
        json(s)
    }

    async fn run_command(
        &self,
        session_id: &str,
        command: String,
        arguments: String,
        choice: ModelChoice,
    ) -> Result<Value> {
        let command = command.trim_start_matches('/').to_owned();
        if command == "handoff-review" {
            return json(handoff::start(&self.core, session_id, Some(choice), None)?);
        }
        if command == "cold-review" {
            // `/cold-review [path]`: a plan file, else the latest assistant reply.
            let path = arguments.trim();
            let path = (!path.is_empty()).then_some(path);
            return json(cold_review::start(&self.core, session_id, None, path).await?);
        }
        let client = self.core.client()?;
        let message_id = ids::message_id();
        let request = CommandRequest {
            command,
            arguments,
            message_id: Some(message_id.clone()),
            agent: choice.agent,
            model: choice
                .model
                .map(|m| format!("{}/{}", m.provider_id, m.model_id)),
            variant: choice.variant,
        };
        // The route blocks until the turn ends; the reply streams in through events meanwhile.
        let core = self.core.clone();
        let sid = session_id.to_owned();
        self.core.push_task(tokio::spawn(async move {
            if let Err(e) = client.command(&sid, &request).await {
                let e = Error::from(e);
                core.notice(
                    crate::api_types::NoticeLevel::Error,
                    &format!("error.{}", e.code()),
                    &[],
                    format!("The command failed: {e}"),
                );
            }
        }));
        json(Sent { message_id })
    }
}

/// Follows a transcript (loading its newest page when needed) and returns the loaded window.
pub(crate) async fn follow_transcript(core: &Core, session_id: &str) -> Result<()> {
    if core.with_store(|s| (s.follow(session_id), None)) {
        return Ok(());
    }
    let page = core
        .client()?
        .messages(session_id, Some(PAGE_SIZE), None)
        .await
        .map_err(|e| match e {
            crosscheck_opencode::Error::NotFound { .. } => {
                Error::SessionNotFound(session_id.to_owned())
            }
            e => e.into(),
        })?;
    core.with_store(|s| {
        if !s.follow(session_id) {
            let mut t = Transcript::from_page(page.messages, page.next_cursor);
            t.followers = 1;
            s.put_transcript(session_id, t);
        }
        ((), None)
    });
    Ok(())
}

/// Answers a permission request in its session's directory. Once the server took the answer,
/// or says the request is gone (answered elsewhere, or the turn ended), it is no longer pending.
async fn reply_permission(
    core: &Core,
    session_id: &str,
    request_id: &str,
    reply: PermissionReplyKind,
) -> Result<()> {
    let client = core.client()?;
    let directory = core.read_store(|s, _| {
        s.session(session_id)
            .map(|session| session.directory.clone())
            .filter(|d| !d.is_empty())
    });
    let answered = client
        .reply_permission(request_id, reply.as_str(), None, directory.as_deref())
        .await;
    if answered.is_ok() || answered.as_ref().is_err_and(|e| e.is_not_found()) {
        core.with_store(|s| ((), s.resolve_permission(session_id, request_id)));
    }
    answered.map_err(Into::into)
}

async fn open_session(core: &Core, session_id: &str) -> Result<TranscriptPage> {
    follow_transcript(core, session_id).await?;
    core.read_store(|s, seq| s.page(session_id, seq))
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))
}

async fn load_older(core: &Core, session_id: &str) -> Result<TranscriptPage> {
    let cursor = core
        .read_store(|s, _| s.transcript(session_id).map(|t| t.older_cursor.clone()))
        .ok_or_else(|| {
            Error::InvalidRequest("open the session before loading older messages".into())
        })?;
    if let Some(cursor) = cursor {
        let page = core
            .client()?
            .messages(session_id, Some(PAGE_SIZE), Some(&cursor))
            .await?;
        core.with_store(|s| {
            if let Some(t) = s.transcript_mut(session_id) {
                t.prepend(page.messages, page.next_cursor);
            }
            ((), None)
        });
    }
    core.read_store(|s, seq| s.page(session_id, seq))
        .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))
}

/// Opens (or focuses) a context panel tab and remembers it.
pub(crate) fn open_tab(core: &Core, tab: Tab) -> Result<()> {
    let mut saved = core.inner.db.tabs();
    match saved
        .tabs
        .iter_mut()
        .find(|t| t.dedupe_key == tab.dedupe_key)
    {
        Some(existing) => *existing = tab.clone(),
        None => saved.tabs.push(tab.clone()),
    }
    saved.active = Some(tab.dedupe_key.clone());
    core.inner.db.set_tabs(&saved)?;
    core.emit(Change::OpenTab { tab });
    Ok(())
}
