//! The typed Api both transports serve: one [`Request`] in, its [`Response`] or
//! `{code, message}` out, plus the stream of [`Stamped`] changes. The requests themselves, with
//! their response types and handlers, are in [`crate::requests`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::api_types::{ApiError, Stamped};
use crate::core::Core;
use crate::error::ErrorCode;
use crate::requests::{Request, Response, dispatch};
use crate::store::client_follower;

/// The client a request comes from when the transport does not say (tests, older UIs).
pub const LOCAL_CLIENT: &str = "local";

/// How many sessions, transcripts, followers and client connections the backend keeps (for
/// health checks and the soak test).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStats {
    /// Sessions in the list.
    pub sessions: usize,
    /// Transcripts kept current.
    pub transcripts: usize,
    /// Follower entries over those transcripts (one per client connection or flow).
    pub followers: usize,
    /// Client connections open now.
    pub connections: usize,
    /// The same per server, by server id.
    pub servers: std::collections::BTreeMap<String, ServerStats>,
}

/// What the backend keeps for one server (see [`SyncStats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStats {
    /// Sessions in the list.
    pub sessions: usize,
    /// Transcripts kept current.
    pub transcripts: usize,
    /// Follower entries over those transcripts.
    pub followers: usize,
    /// Bytes of message and part text kept for its transcripts (an estimate of its memory).
    pub transcript_bytes: usize,
}

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
    /// Open connections per client id (see [`Api::connect`]).
    clients: Arc<Mutex<HashMap<String, usize>>>,
}

/// Keeps a client's connection counted; when a client's last one goes, every transcript it
/// followed is released.
pub struct ClientConnection {
    api: Api,
    client: String,
}

impl Drop for ClientConnection {
    fn drop(&mut self) {
        let last = {
            let mut clients = self
                .api
                .clients
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match clients.get_mut(&self.client) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                _ => {
                    clients.remove(&self.client);
                    true
                }
            }
        };
        if last {
            self.api.release_client(&self.client);
        }
    }
}

impl Api {
    /// The Api of `core`.
    pub fn new(core: Core) -> Self {
        Self {
            core,
            clients: Arc::default(),
        }
    }

    /// Counts a connection of `client` (a browser's event stream, a desktop window) for as
    /// long as the returned value lives.
    pub fn connect(&self, client: &str) -> ClientConnection {
        *self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(client.to_owned())
            .or_default() += 1;
        ClientConnection {
            api: self.clone(),
            client: client.to_owned(),
        }
    }

    /// Releases every transcript `client` follows (its page went away or reloaded).
    pub fn release_client(&self, client: &str) {
        let follower = client_follower(client);
        let dropped = self.core.with_store(|s| (s.unfollow_all(&follower), None));
        tracing::debug!("client {client} went away; {dropped} transcript(s) released");
    }

    /// Counts for a health view: sessions, kept transcripts, their followers, connections.
    pub fn stats(&self) -> SyncStats {
        let (sessions, (transcripts, followers), by_server) = self
            .core
            .read_store(|s, _| (s.sessions().len(), s.follow_counts(), s.server_stats()));
        let mut servers: std::collections::BTreeMap<String, ServerStats> = self
            .core
            .servers()
            .into_iter()
            .map(|v| (v.id.into_string(), ServerStats::default()))
            .collect();
        servers.extend(by_server);
        let connections = self
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .sum();
        SyncStats {
            sessions,
            transcripts,
            followers,
            connections,
            servers,
        }
    }

    /// The core behind it.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Receives every change from now on (subscribe before taking a snapshot).
    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.core.subscribe()
    }

    /// Receives every change from now on, with the sequence number of the last change before
    /// them: a snapshot whose `seq` is at least that number misses none of them.
    pub fn subscribe_from(&self) -> (broadcast::Receiver<Stamped>, u64) {
        self.core.subscribe_from()
    }

    /// Runs one request; errors come back as `{code, message}`.
    pub async fn handle(&self, request: Request) -> Result<Response, ApiError> {
        self.handle_as(LOCAL_CLIENT, request).await
    }

    /// Runs one request of `client`: the transcripts it opens are followed for it.
    pub async fn handle_as(&self, client: &str, request: Request) -> Result<Response, ApiError> {
        dispatch(&self.core, client, request).await.map_err(|e| {
            tracing::debug!("request failed: {e}");
            e.to_api()
        })
    }

    /// Parses a JSON request and runs it; a malformed request is an `invalid_request` error.
    pub async fn handle_json(&self, request: Value) -> Result<Response, ApiError> {
        self.handle_json_as(LOCAL_CLIENT, request).await
    }

    /// [`Api::handle_json`] for `client`.
    pub async fn handle_json_as(&self, client: &str, request: Value) -> Result<Response, ApiError> {
        let request: Request = serde_json::from_value(request).map_err(|e| ApiError {
            code: ErrorCode::InvalidRequest,
            message: format!("invalid request: {e}"),
        })?;
        self.handle_as(client, request).await
    }
}
