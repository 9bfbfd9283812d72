//! The folder picker of New session: the folders it suggests.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::ServerId;
use crate::core::Core;
use crate::error::Result;
use crate::folders::known_folders;

/// The folders New session offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FolderChoices {
    /// The folder the server runs in, when it said (not the filesystem root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub current: Option<String>,
    /// Folders the user created sessions in here, newest first.
    pub recent: Vec<String>,
    /// The server's own folder and project folders, then the folders of its sessions (newest
    /// first).
    pub known: Vec<String>,
}

/// Fields of [`Request::Folders`](super::Request::Folders).
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Folders {
    /// The server whose projects and folder are offered; the main one when absent.
    #[serde(default)]
    #[ts(optional)]
    pub server_id: Option<ServerId>,
}

/// Recent folders (kept here) and the named server's known ones. A server that cannot be asked
/// leaves only what is known already: the folders of the sessions in the store.
pub async fn list(core: &Core, req: Folders) -> Result<FolderChoices> {
    let recent = core.db().recent_folders();
    let (projects, current) = match super::catalog::client_of(core, None, req.server_id.as_ref()) {
        Ok(client) => {
            let (projects, path) = tokio::join!(client.projects(), client.server_path());
            let projects = projects
                .inspect_err(|e| tracing::warn!("could not list the server's projects: {e}"))
                .unwrap_or_default()
                .into_iter()
                .flat_map(|p| std::iter::once(p.worktree).chain(p.sandboxes))
                .collect::<Vec<_>>();
            let current = path
                .ok()
                .map(|p| p.directory)
                .filter(|d| !d.is_empty() && d != "/");
            (projects, current)
        }
        Err(_) => (Vec::new(), None),
    };
    let sessions = core.read_store(|store, _| {
        store
            .session_views()
            .into_iter()
            .map(|view| view.session.directory)
            .collect::<Vec<_>>()
    });
    let server_folders = current.iter().cloned().chain(projects);
    Ok(FolderChoices {
        known: known_folders(server_folders, sessions),
        current,
        recent,
    })
}
