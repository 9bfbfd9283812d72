//! The typed Api both transports serve: one [`Request`] in, its [`Response`] or
//! `{code, message}` out, plus the stream of [`Stamped`] changes. The requests themselves, with
//! their response types and handlers, are in [`crate::requests`].

use serde_json::Value;
use tokio::sync::broadcast;

use crate::api_types::{ApiError, Stamped};
use crate::core::Core;
use crate::error::ErrorCode;
use crate::requests::{Request, Response, dispatch};

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
    pub async fn handle(&self, request: Request) -> Result<Response, ApiError> {
        dispatch(&self.core, request).await.map_err(|e| {
            tracing::debug!("request failed: {e}");
            e.to_api()
        })
    }

    /// Parses a JSON request and runs it; a malformed request is an `invalid_request` error.
    pub async fn handle_json(&self, request: Value) -> Result<Response, ApiError> {
        let request: Request = serde_json::from_value(request).map_err(|e| ApiError {
            code: ErrorCode::InvalidRequest,
            message: format!("invalid request: {e}"),
        })?;
        self.handle(request).await
    }
}
