//! Catalog requests: what the pickers and the command list offer.

use crosscheck_opencode::{AgentInfo, ProviderCatalog};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::CommandEntry;
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
}

/// Providers and their models.
pub async fn providers(core: &Core, req: Providers) -> Result<ProviderCatalog> {
    Ok(core.client()?.providers(req.directory.as_deref()).await?)
}

/// The server's agents.
pub async fn agents(core: &Core, req: Agents) -> Result<Vec<AgentInfo>> {
    Ok(core.client()?.agents(req.directory.as_deref()).await?)
}

/// Crosscheck's own commands first, then the server's (those with a builtin's name left out).
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
    let server = match core.client() {
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
