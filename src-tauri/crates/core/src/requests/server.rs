//! Server requests: start over (Retry), or attach to an OpenCode server at a URL instead.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::{Core, OpencodeTarget};
use crate::error::{Error, Result};

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
    // Refuses what the client cannot use, before the current server is dropped.
    crosscheck_opencode::Client::new(config.clone())?;
    core.reconnect(Some(OpencodeTarget::Attach(config))).await;
    Ok(())
}
