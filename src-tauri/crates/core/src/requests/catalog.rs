//! Catalog requests: what the pickers and the command list offer.

use crosscheck_opencode::{AgentInfo, Client, ProviderCatalog};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{CommandEntry, ServerId};
use crate::core::Core;
use crate::error::Result;

/// Crosscheck's own slash commands: name and locale key of the description.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("handoff-review", "command.handoffReview"),
    ("cold-review", "command.coldReview"),
];

/// Fields of [`Request::Providers`](super::Request::Providers).
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Providers {
    /// The folder whose configuration applies; the server's own when absent.
    #[serde(default)]
    #[ts(optional)]
    pub directory: Option<String>,
    /// The server asked: the one this session lives on (what a session's pickers ask).
    #[serde(default)]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// The server asked when no session is named (a new session's pickers); the main one when
    /// neither is given.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// Fields of [`Request::Agents`](super::Request::Agents).
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Agents {
    /// The folder whose configuration applies; the server's own when absent.
    #[serde(default)]
    #[ts(optional)]
    pub directory: Option<String>,
    /// The server asked: the one this session lives on (what a session's pickers ask).
    #[serde(default)]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// The server asked when no session is named (a new session's pickers); the main one when
    /// neither is given.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// Fields of [`Request::Commands`](super::Request::Commands).
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Commands {
    /// The folder whose commands are listed; the server's own when absent.
    #[serde(default)]
    #[ts(optional)]
    pub directory: Option<String>,
    /// The server asked: the one this session lives on (what a session's pickers ask).
    #[serde(default)]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// The server asked when no session is named (a new session's pickers); the main one when
    /// neither is given.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// The client of the server a request names: the session's, else the given server's, else the
/// main one.
pub(crate) fn client_of(
    core: &Core,
    session_id: Option<&str>,
    server_id: Option<&ServerId>,
) -> Result<Client> {
    match (session_id, server_id) {
        (Some(session), _) => core.client_for(session),
        (None, Some(server)) => core.server_client(server),
        (None, None) => core.client(),
    }
}

/// Providers and their models of the server the request names.
pub async fn providers(core: &Core, req: Providers) -> Result<ProviderCatalog> {
    let client = client_of(core, req.session_id.as_deref(), req.server_id.as_ref())?;
    Ok(client.providers(req.directory.as_deref()).await?)
}

/// The agents of the server the request names.
pub async fn agents(core: &Core, req: Agents) -> Result<Vec<AgentInfo>> {
    let client = client_of(core, req.session_id.as_deref(), req.server_id.as_ref())?;
    Ok(client.agents(req.directory.as_deref()).await?)
}

/// Crosscheck's own commands first, then those of the server the request names (those with a builtin's name left out).
/// The builtins are always listed: a server that cannot list its commands costs only its own.
pub async fn commands(core: &Core, req: Commands) -> Result<Vec<CommandEntry>> {
    let mut entries: Vec<CommandEntry> = BUILTIN_COMMANDS
        .iter()
        .map(|(name, key)| CommandEntry {
            name: (*name).to_owned(),
            description: None,
            description_key: Some((*key).to_owned()),
            builtin: true,
        })
        .collect();
    let server = match client_of(core, req.session_id.as_deref(), req.server_id.as_ref()) {
        Ok(client) => client
            .commands(req.directory.as_deref())
            .await
            .map_err(Into::into),
        Err(e) => Err(e),
    };
    match server {
        Ok(server) => entries.extend(
            server
                .into_iter()
                .filter(|c| !BUILTIN_COMMANDS.iter().any(|(n, _)| *n == c.name))
                .map(|c| CommandEntry {
                    name: c.name,
                    description: c.description,
                    description_key: None,
                    builtin: false,
                }),
        ),
        Err(e) => {
            let e: crate::error::Error = e;
            tracing::warn!("the server's commands could not be listed: {e}");
        }
    }
    Ok(entries)
}
