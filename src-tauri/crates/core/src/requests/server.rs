//! Server requests: start over (Retry), attach the main server to another URL, and add,
//! rename, reconnect or remove the other servers.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use std::sync::Arc;

use crate::api_types::{NoticeLevel, PasswordStore, ServerView};
use crate::core::{Core, OpencodeTarget};
use crate::error::{Error, Result};
use crate::model::ids::ServerId;
use crate::servers::handle::ServerHandle;
use crate::servers::saved;
use crate::servers::url::normalize;

/// Fields of [`Request::AttachServer`](super::Request::AttachServer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AttachServer {
    /// The server's base URL (`http://127.0.0.1:4096`).
    pub url: String,
    /// Its password (`OPENCODE_SERVER_PASSWORD`), when it has one.
    #[ts(optional)]
    pub password: Option<String>,
}

/// Starts or attaches to the same server again (after "not installed" or a failure).
pub async fn reconnect(core: &Core) -> Result<()> {
    core.reconnect(None).await;
    Ok(())
}

/// Drops the current server (stopping a managed one) and attaches to the one at `url`.
pub async fn attach(core: &Core, req: AttachServer) -> Result<()> {
    let url = req.url.trim().trim_end_matches('/').to_owned();
    let valid = ["http://", "https://"].iter().any(|scheme| {
        url.strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty())
    });
    if !valid {
        return Err(Error::Opencode(crosscheck_opencode::Error::InvalidUrl(
            format!("{url} is not an http:// or https:// address"),
        )));
    }
    let config = crosscheck_opencode::ServerConfig {
        base_url: url,
        password: req.password.filter(|p| !p.is_empty()),
    };
    // Refuses what the client cannot use, or another server's address, before the current
    // server is dropped.
    crosscheck_opencode::Client::new(config.clone())?;
    if let Ok(normalized) = normalize(&config.base_url) {
        refuse_duplicate_except(core, &normalized, Some(ServerId::MAIN))?;
    }
    core.reconnect(Some(OpencodeTarget::Attach(config))).await;
    Ok(())
}

/// Fields of [`Request::AddServer`](super::Request::AddServer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AddServer {
    /// The server's base URL (`http://127.0.0.1:4096`, or a tunnel's local end).
    pub url: String,
    /// Its password (`OPENCODE_SERVER_PASSWORD`), when it has one.
    #[serde(default)]
    #[ts(optional)]
    pub password: Option<String>,
    /// The name shown (its address when absent).
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
}

/// Fields of [`Request::RenameServer`](super::Request::RenameServer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct RenameServer {
    /// Which server.
    pub server_id: ServerId,
    /// Its new name.
    pub name: String,
}

/// Fields of [`Request::ReconnectServer`](super::Request::ReconnectServer) and
/// [`Request::RemoveServer`](super::Request::RemoveServer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ServerRef {
    /// Which server.
    pub server_id: ServerId,
}

/// Refuses an address some followed server has already.
fn refuse_duplicate(core: &Core, normalized: &str) -> Result<()> {
    refuse_duplicate_except(core, normalized, None)
}

/// [`refuse_duplicate`] that ignores one server (the one being re-attached).
fn refuse_duplicate_except(core: &Core, normalized: &str, except: Option<&str>) -> Result<()> {
    for server in core.server_handles() {
        if except.is_some_and(|id| server.id == id) {
            continue;
        }
        let Some(url) = server.url() else { continue };
        if normalize(&url).is_ok_and(|u| u == normalized) {
            return Err(Error::InvalidRequest(format!(
                "{normalized} is already in the list as \"{}\"",
                server.view().name
            )));
        }
    }
    Ok(())
}

/// Adds an attached server beside the others, saves it (its password apart, in the system
/// keyring or a file only the user can read: see [`crate::servers::secret`]) and starts
/// following it. The same address twice is refused.
pub async fn add(core: &Core, req: AddServer) -> Result<ServerView> {
    let url = normalize(&req.url)?;
    refuse_duplicate(core, &url)?;
    let password = req.password.filter(|p| !p.is_empty());
    let config = crosscheck_opencode::ServerConfig {
        base_url: url.clone(),
        password: password.clone(),
    };
    crosscheck_opencode::Client::new(config.clone())?;
    let id = ServerId::from(crosscheck_opencode::ids::ascending("srv"));
    let name = req
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| url.clone());
    let password_store = match &password {
        Some(p) => {
            let secrets = core.secrets().await;
            secrets.put(&id, p).await?;
            Some(secrets.kind())
        }
        None => None,
    };
    if let Err(e) = saved::insert(
        core.db(),
        &saved::SavedServer {
            id: id.clone(),
            name: name.clone(),
            url,
        },
    ) {
        if password_store.is_some() {
            let _ = core.secrets().await.forget(&id).await;
        }
        return Err(e);
    }
    let handle = Arc::new(ServerHandle::new(
        id,
        name,
        OpencodeTarget::Attach(config),
        true,
        password_store,
    ));
    let view = handle.view();
    core.insert_server(handle);
    Ok(view)
}

/// Fields of [`Request::AddManagedServer`](super::Request::AddManagedServer).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AddManagedServer {
    /// The folder `opencode serve` runs in (an existing folder, neither `/` nor the home folder).
    pub folder: String,
    /// The name shown (the folder's name when absent).
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
}

/// Refuses a folder some managed server runs in already.
fn refuse_duplicate_folder(core: &Core, folder: &std::path::Path) -> Result<()> {
    for server in core.server_handles() {
        let theirs = server
            .managed_folder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let same = theirs.is_some_and(|f| f.canonicalize().unwrap_or(f) == folder);
        if same && server.is_managed() {
            return Err(Error::InvalidRequest(format!(
                "{} already has a server in the list: \"{}\"",
                folder.display(),
                server.view().name
            )));
        }
    }
    Ok(())
}

/// Starts `opencode serve` in a folder the user picked, supervises it (it stops with
/// Crosscheck), saves it so it starts again on the next launch. One server per folder.
pub async fn add_managed(core: &Core, req: AddManagedServer) -> Result<ServerView> {
    let raw = std::path::PathBuf::from(req.folder.trim());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if !crate::launch::usable_project_folder(&raw, home.as_deref()) {
        return Err(Error::InvalidRequest(format!(
            "{} is not a folder a server can run in: it must exist and be neither / nor your \
             home folder",
            raw.display()
        )));
    }
    let folder = raw.canonicalize().unwrap_or(raw);
    refuse_duplicate_folder(core, &folder)?;
    let id = ServerId::from(crosscheck_opencode::ids::ascending("srv"));
    let name = req
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .or_else(|| folder.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| folder.display().to_string());
    saved::insert(
        core.db(),
        &saved::SavedServer {
            id: id.clone(),
            name: name.clone(),
            url: saved::managed_key(&folder),
        },
    )?;
    let handle = Arc::new(ServerHandle::new(
        id,
        name,
        crate::launch::managed_in(folder.clone()),
        true,
        None,
    ));
    *handle
        .managed_folder
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(folder);
    let view = handle.view();
    core.insert_server(handle);
    Ok(view)
}

/// Adds a server given on the command line (not saved: it is given again next time). An
/// address already followed is refused.
pub fn add_unsaved(core: &Core, config: crosscheck_opencode::ServerConfig) -> Result<ServerId> {
    let url = normalize(&config.base_url)?;
    refuse_duplicate(core, &url)?;
    crosscheck_opencode::Client::new(config.clone())?;
    let id = ServerId::from(crosscheck_opencode::ids::ascending("cli"));
    let store = config.password.as_ref().map(|_| PasswordStore::NotSaved);
    let name = saved::name_of(core.db(), &url)?.unwrap_or_else(|| url.clone());
    core.insert_server(Arc::new(ServerHandle::new(
        id.clone(),
        name,
        OpencodeTarget::Attach(config),
        false,
        store,
    )));
    Ok(id)
}

/// Renames a server (and its saved entry).
pub async fn rename(core: &Core, req: RenameServer) -> Result<ServerView> {
    let server = core
        .server(&req.server_id)
        .ok_or_else(|| Error::InvalidRequest(format!("no server {}", req.server_id)))?;
    let name = req.name.trim().to_owned();
    if name.is_empty() {
        return Err(Error::InvalidRequest("a server needs a name".into()));
    }
    if server.saved {
        saved::rename(core.db(), &server.id, &name)?;
    } else if let Some(key) = saved::name_key(
        &server.id,
        server.url().and_then(|u| normalize(&u).ok()).as_deref(),
    ) {
        saved::remember_name(core.db(), &key, &name)?;
    }
    server.set_name(name);
    core.emit_server(&server);
    Ok(server.view())
}

/// Starts following one server anew.
pub async fn reconnect_server(core: &Core, req: ServerRef) -> Result<()> {
    if core.server(&req.server_id).is_none() {
        return Err(Error::InvalidRequest(format!(
            "no server {}",
            req.server_id
        )));
    }
    core.reconnect_server(&req.server_id, None).await;
    Ok(())
}

/// Stops following a server and forgets it: its streams end, the flows on its sessions are
/// cancelled, its sessions leave the sidebar and a notice says so. The main server stays.
pub async fn remove(core: &Core, req: ServerRef) -> Result<()> {
    if req.server_id.is_main() {
        return Err(Error::InvalidRequest(
            "the main server cannot be removed; attach it to another address instead".into(),
        ));
    }
    let sessions: Vec<String> = core.read_store(|s, _| {
        s.sessions()
            .into_iter()
            .filter(|x| s.server_of(&x.id) == req.server_id)
            .map(|x| x.id)
            .collect()
    });
    let Some(server) = core.stop_server(&req.server_id).await else {
        return Err(Error::InvalidRequest(format!(
            "no server {}",
            req.server_id
        )));
    };
    core.end_flows_of(&sessions);
    if server.saved {
        saved::remove(core.db(), &server.id)?;
        if let Err(e) = core.secrets().await.forget(&server.id).await {
            tracing::warn!("{e}");
        }
    }
    let name = server.view().name;
    core.notice(
        NoticeLevel::Info,
        "server.removed",
        &[("name", &name)],
        format!("Removed the server {name}: its sessions and flows ended here."),
    );
    Ok(())
}

/// Where saved servers' passwords are kept, as Settings says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PasswordStorage {
    /// The keyring or the file store.
    pub store: PasswordStore,
    /// The folder of the file store.
    #[ts(optional)]
    pub location: Option<String>,
}

/// Where saved servers' passwords are kept.
pub async fn password_storage(core: &Core) -> Result<PasswordStorage> {
    let secrets = core.secrets().await;
    Ok(PasswordStorage {
        store: secrets.kind(),
        location: secrets.location().map(|p| p.display().to_string()),
    })
}
