//! The OpenCode route: a review through the providers an OpenCode server already has (keys,
//! OAuth sign-ins), for people who have no API key of their own.
//!
//! Each review gets a scratch session of its own: created with a permission ruleset that
//! denies every tool (the server then offers the model no tools at all), in an empty folder
//! (so no project instructions such as `AGENTS.md` reach the reviewer), with a marker in
//! Crosscheck's metadata namespace that every client of Crosscheck filters out of its sidebar.
//! The review text is its first message (the repair round, if any, its second); the reply is
//! read back and the session deleted, whatever happened. In the app each message goes through
//! the core's turn room (a [`ScratchTurns`] on the target: one delivery policy, one answer to
//! "ended, how"); without one (the `crosscheck gate` runs) [`Scratch::ask`] makes one blocking
//! call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crosscheck_opencode::{Client, Error as OpencodeError, ModelRef, ProviderCatalog};
use serde_json::{Value, json};

use crate::provider::CallFailure;
use crate::rank::normalize_model_id;

/// Crosscheck's own metadata namespace on OpenCode sessions.
pub const METADATA_NAMESPACE: &str = "crosscheck";
/// The key under [`METADATA_NAMESPACE`] that marks a cold review's scratch session.
pub const SCRATCH_MARKER: &str = "coldReview";
/// The title of a scratch session (a title given at creation also spares the title request).
pub const SCRATCH_TITLE: &str = "Crosscheck cold review";

/// Whether a session's metadata marks it as a cold review's scratch session.
pub fn is_scratch_session(metadata: Option<&serde_json::Map<String, Value>>) -> bool {
    metadata
        .and_then(|m| m.get(METADATA_NAMESPACE))
        .and_then(|c| c.get(SCRATCH_MARKER))
        .is_some_and(|v| !v.is_null())
}

/// When a scratch session may be deleted by anyone (its review is over or its owner died),
/// ms since the epoch; `None` when the marker has no such time.
pub fn scratch_expires_at(metadata: Option<&serde_json::Map<String, Value>>) -> Option<i64> {
    metadata?
        .get(METADATA_NAMESPACE)?
        .get(SCRATCH_MARKER)?
        .get("expiresAt")?
        .as_i64()
}

/// The permission ruleset of a scratch session: every tool denied.
pub fn deny_every_tool() -> Value {
    json!([{"permission": "*", "pattern": "*", "action": "deny"}])
}

/// The OpenCode model for a reviewer id. `provider/model` names OpenCode's provider exactly
/// when `pinned` (the user's own floor); otherwise the id is matched by its normalised form,
/// preferring the vendor's own provider (`anthropic` for Claude, `openai` for GPT and o-series).
pub fn find_model(catalog: &ProviderCatalog, reviewer: &str, pinned: bool) -> Option<ModelRef> {
    let reviewer = reviewer.trim();
    if pinned && let Some((provider, model)) = reviewer.split_once('/') {
        let found = catalog
            .providers
            .iter()
            .filter(|p| p.id == provider)
            .flat_map(|p| p.models.iter().map(move |m| (p, m)))
            .find(|(_, m)| m.id == model);
        if let Some((p, m)) = found {
            return Some(ModelRef {
                provider_id: p.id.clone(),
                model_id: m.id.clone(),
            });
        }
    }
    let wanted = normalize_model_id(reviewer);
    if wanted.is_empty() {
        return None;
    }
    let vendor = if wanted.starts_with("claude") {
        Some("anthropic")
    } else if wanted.starts_with("gpt-") || wanted.starts_with('o') {
        Some("openai")
    } else {
        None
    };
    let mut matches = catalog.providers.iter().flat_map(|p| {
        p.models
            .iter()
            .filter(|m| normalize_model_id(&m.id) == wanted)
            .map(move |m| (p, m))
    });
    let all: Vec<_> = matches.by_ref().collect();
    let best = all
        .iter()
        .find(|(p, _)| Some(p.id.as_str()) == vendor)
        .or_else(|| all.first())?;
    Some(ModelRef {
        provider_id: best.0.id.clone(),
        model_id: best.1.id.clone(),
    })
}

/// `provider/model`, as OpenCode names a model.
pub fn model_label(model: &ModelRef) -> String {
    format!("{}/{}", model.provider_id, model.model_id)
}

/// The folder a scratch session names on a server that is not on this machine (or when the
/// private folder could not be made): the filesystem's root, which every server has and where
/// only root can put project instructions (OpenCode looks for `AGENTS.md` from the session's
/// folder up to the root). The reviewer gets no tools, so the folder lets it read nothing. The
/// server's own folder, the other choice, is usually a project whose instructions would reach
/// the reviewer; a folder the server lacks leaves the turn stalled (OpenCode 1.18.33).
pub const REMOTE_SCRATCH_FOLDER: &str = "/";

/// One question to a scratch session: what a [`ScratchTurns`] sends and awaits.
#[derive(Debug, Clone, Copy)]
pub struct ScratchAsk<'a> {
    /// The scratch session.
    pub session_id: &'a str,
    /// Text after OpenCode's own system prompt.
    pub system: &'a str,
    /// The message.
    pub text: &'a str,
    /// The reviewer.
    pub model: &'a ModelRef,
    /// The time limit for the reply (the turn is stopped when it passes).
    pub timeout: Duration,
}

/// The answer of a [`ScratchTurns`]: a boxed future, so the trait can be shared as a trait object.
pub type ScratchReply<'a> = Pin<Box<dyn Future<Output = Result<String, CallFailure>> + Send + 'a>>;

/// Runs a scratch session's turns elsewhere: the app's turn room (its one delivery policy and
/// its one answer to "ended, how"). Without one, [`Scratch::ask`] makes the blocking call
/// itself (the `crosscheck gate` runs).
pub trait ScratchTurns: Send + Sync + std::fmt::Debug {
    /// Sends `ask.text` to `ask.session_id` with no tools and awaits the reply's text; a
    /// failure says in one sentence what went wrong.
    fn ask<'a>(&'a self, ask: ScratchAsk<'a>) -> ScratchReply<'a>;
}

/// The OpenCode server the app is connected to, for a review run from the app.
#[derive(Debug, Clone)]
pub struct Connected {
    /// The server.
    pub client: Client,
    /// Where its scratch sessions' turns run; `None`: [`Scratch::ask`]'s own blocking call.
    pub turns: Option<Arc<dyn ScratchTurns>>,
}

impl From<Client> for Connected {
    fn from(client: Client) -> Self {
        Self {
            client,
            turns: None,
        }
    }
}

/// The OpenCode server and where its scratch sessions live.
#[derive(Debug, Clone)]
pub struct OpencodeTarget {
    /// The connected server.
    pub client: Client,
    /// The scratch sessions' folder: an empty private one when the server runs on this
    /// machine, else [`REMOTE_SCRATCH_FOLDER`]; never the server's own folder.
    pub directory: String,
    /// Where the scratch sessions' turns run (see [`Connected::turns`]).
    pub turns: Option<Arc<dyn ScratchTurns>>,
}

/// A scratch session while its review runs. [`Scratch::close`] deletes it.
#[derive(Debug)]
pub struct Scratch {
    client: Client,
    turns: Option<Arc<dyn ScratchTurns>>,
    id: String,
    busy: bool,
}

/// The words of a failed reviewer turn, as one sentence naming the model.
pub fn model_failed(model: &ModelRef, words: &str) -> CallFailure {
    CallFailure::Said {
        code: "http_error",
        message: format!(
            "OpenCode's model {} failed: {}",
            model_label(model),
            words.lines().next().unwrap_or(words).trim()
        ),
    }
}

/// A reviewer turn that ended with no text.
pub fn no_text(model: &ModelRef) -> CallFailure {
    CallFailure::BadReply(format!(
        "OpenCode's model {} answered with no text",
        model_label(model)
    ))
}

/// Describes an OpenCode error in one sentence for a person.
pub fn opencode_failure(error: OpencodeError, url: &str) -> CallFailure {
    match error {
        OpencodeError::Transport { message, .. } => CallFailure::Said {
            code: "transport",
            message: format!("OpenCode at {url} could not be reached ({message})"),
        },
        OpencodeError::Unauthorized => CallFailure::Said {
            code: "auth",
            message: format!(
                "OpenCode at {url} refused the password: set OPENCODE_SERVER_PASSWORD to the server's password"
            ),
        },
        OpencodeError::Status { status, body } => CallFailure::Said {
            code: "http_error",
            message: format!(
                "OpenCode could not run the review: {}",
                server_message(&body).unwrap_or_else(|| format!("HTTP {status}"))
            ),
        },
        OpencodeError::NotFound { what } => CallFailure::Said {
            code: "http_error",
            message: format!("OpenCode lost the review's session ({what})"),
        },
        other => CallFailure::Said {
            code: "bad_reply",
            message: format!("OpenCode's answer was unusable ({other})"),
        },
    }
}

/// `data.message` (else `name`) of an OpenCode error body.
fn server_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    value
        .pointer("/data/message")
        .and_then(Value::as_str)
        .or_else(|| value.get("name").and_then(Value::as_str))
        .map(|m| m.lines().next().unwrap_or(m).trim().to_owned())
        .filter(|m| !m.is_empty())
}

/// The connected providers, or a failure naming the server.
pub async fn catalog(client: &Client) -> Result<ProviderCatalog, CallFailure> {
    client
        .providers(None)
        .await
        .map_err(|e| opencode_failure(e, client.base_url()))
}

impl Scratch {
    /// Creates the scratch session: every tool denied, no history, marked for the sidebars,
    /// deletable by anyone after `expires_at` (ms since the epoch).
    pub async fn open(target: &OpencodeTarget, expires_at: i64) -> Result<Self, CallFailure> {
        let body = json!({
            "title": SCRATCH_TITLE,
            "permission": deny_every_tool(),
            "metadata": {METADATA_NAMESPACE: {SCRATCH_MARKER: {"expiresAt": expires_at}}},
        });
        let session = target
            .client
            .create_session_value(Some(&target.directory), &body)
            .await
            .map_err(|e| opencode_failure(e, target.client.base_url()))?;
        Ok(Self {
            client: target.client.clone(),
            turns: target.turns.clone(),
            id: session.id,
            busy: false,
        })
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends one message (`system` goes after OpenCode's own system prompt) and returns the
    /// reply's text: through the target's [`ScratchTurns`] when it has one, else by the
    /// blocking call. A turn still running at `timeout` is left for [`Scratch::close`] to abort.
    pub async fn ask(
        &mut self,
        system: &str,
        text: &str,
        model: &ModelRef,
        timeout: Duration,
    ) -> Result<String, CallFailure> {
        if let Some(turns) = self.turns.clone() {
            self.busy = true;
            let ask = ScratchAsk {
                session_id: &self.id,
                system,
                text,
                model,
                timeout,
            };
            let reply = turns.ask(ask).await?;
            self.busy = false;
            return Ok(reply);
        }
        let body = json!({
            "parts": [{"type": "text", "text": text}],
            "system": system,
            "model": {"providerID": model.provider_id, "modelID": model.model_id},
            // Belt and braces: the ruleset already removes every tool.
            "tools": {"*": false},
        });
        self.busy = true;
        // The HTTP limit is a little longer, so the timeout below is what fires.
        let call = self
            .client
            .prompt_blocking(&self.id, &body, timeout + Duration::from_secs(5));
        let reply = match tokio::time::timeout(timeout, call).await {
            Err(_) => return Err(CallFailure::Timeout(timeout)),
            Ok(Err(e)) => return Err(opencode_failure(e, self.client.base_url())),
            Ok(Ok(reply)) => reply,
        };
        self.busy = false;
        if let Some(error) = &reply.info.error {
            let message = error
                .pointer("/data/message")
                .and_then(Value::as_str)
                .or_else(|| error.get("name").and_then(Value::as_str))
                .unwrap_or("an error without a message");
            return Err(model_failed(model, message));
        }
        let text: Vec<&str> = reply
            .parts
            .iter()
            .filter(|p| p.kind == "text" && !p.synthetic && !p.ignored)
            .filter_map(|p| p.text.as_deref())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        if text.is_empty() {
            return Err(no_text(model));
        }
        Ok(text.join("\n\n"))
    }

    /// Stops a turn still running and deletes the session; says why when it could not (the
    /// server is gone: the marker's expiry lets a later client delete it).
    pub async fn close(self) -> Result<(), String> {
        if self.busy {
            let _ = self.client.abort(&self.id).await;
        }
        match self.client.delete_session(&self.id).await {
            Ok(()) | Err(OpencodeError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crosscheck_opencode::{ModelInfo, ProviderInfo};

    fn catalog_of(entries: &[(&str, &[&str])]) -> ProviderCatalog {
        ProviderCatalog {
            providers: entries
                .iter()
                .map(|(p, models)| ProviderInfo {
                    id: (*p).into(),
                    name: (*p).into(),
                    models: models
                        .iter()
                        .map(|m| ModelInfo {
                            id: (*m).into(),
                            name: (*m).into(),
                            variants: vec![],
                        })
                        .collect(),
                })
                .collect(),
            default: Default::default(),
        }
    }

    #[test]
    fn reviewer_ids_find_opencode_models() {
        let c = catalog_of(&[
            (
                "openrouter",
                &["anthropic/claude-sonnet-4.5", "openai/gpt-5"],
            ),
            (
                "anthropic",
                &["claude-sonnet-4-5-20250929", "claude-opus-4-1"],
            ),
            ("fake", &["fake-model"]),
        ]);
        let got = |id: &str, pinned| find_model(&c, id, pinned).map(|m| model_label(&m));
        assert_eq!(
            got("claude-sonnet-4-5", false).as_deref(),
            Some("anthropic/claude-sonnet-4-5-20250929"),
            "the vendor's own provider first"
        );
        assert_eq!(
            got("gpt-5", false).as_deref(),
            Some("openrouter/openai/gpt-5")
        );
        assert_eq!(got("fake-model", false).as_deref(), Some("fake/fake-model"));
        assert_eq!(
            got("openrouter/anthropic/claude-sonnet-4.5", true).as_deref(),
            Some("openrouter/anthropic/claude-sonnet-4.5"),
            "the user's own pin names the provider"
        );
        assert_eq!(
            got("openrouter/claude-sonnet-4-5", false).as_deref(),
            Some("anthropic/claude-sonnet-4-5-20250929"),
            "an unpinned id is matched by its normalised form"
        );
        assert_eq!(got("gemini-2.5-pro", false), None);
        assert_eq!(got("  ", false), None);
    }

    #[test]
    fn the_marker_is_read_from_crosschecks_namespace() {
        let meta = |v: Value| v.as_object().cloned();
        assert!(is_scratch_session(
            meta(json!({"crosscheck": {"coldReview": {"expiresAt": 5}}})).as_ref()
        ));
        assert_eq!(
            scratch_expires_at(
                meta(json!({"crosscheck": {"coldReview": {"expiresAt": 5}}})).as_ref()
            ),
            Some(5)
        );
        assert!(!is_scratch_session(
            meta(json!({"openchamber": {"coldReview": true}})).as_ref()
        ));
        assert!(!is_scratch_session(
            meta(json!({"crosscheck": {"coldReview": null}})).as_ref()
        ));
        assert!(!is_scratch_session(None));
    }

    #[test]
    fn server_errors_are_one_sentence() {
        assert_eq!(
            server_message(
                r#"{"name":"UnknownError","data":{"message":"Model not found: fake/nope.\nstack"}}"#
            )
            .as_deref(),
            Some("Model not found: fake/nope.")
        );
        assert_eq!(server_message("<html>").as_deref(), None);
    }
}
