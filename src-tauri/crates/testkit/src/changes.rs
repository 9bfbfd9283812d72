//! Waiting on the core's change stream in tests: the next change, the first that matches, or
//! the core being connected. Each panics with what it waited for when the time runs out.

use std::time::Duration;

use crosscheck_core::api_types::Connection;
use crosscheck_core::{Change, Core, Stamped};
use tokio::sync::broadcast;

/// The next change before `deadline` (tokio time); panics naming `what` otherwise.
pub async fn next_change(
    changes: &mut broadcast::Receiver<Stamped>,
    deadline: tokio::time::Instant,
    what: &str,
) -> Stamped {
    match tokio::time::timeout_at(deadline, changes.recv()).await {
        Ok(Ok(stamped)) => stamped,
        Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
            panic!("lagged {n} changes waiting for {what}")
        }
        Ok(Err(broadcast::error::RecvError::Closed)) => {
            panic!("change stream closed waiting for {what}")
        }
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Waits for a change matching `pred` within `limit`; returns it.
pub async fn wait_change(
    changes: &mut broadcast::Receiver<Stamped>,
    limit: Duration,
    what: &str,
    pred: impl Fn(&Change) -> bool,
) -> Change {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let stamped = next_change(changes, deadline, what).await;
        if pred(&stamped.change) {
            return stamped.change;
        }
    }
}

/// Waits until the core reports `Connection::Ready` (checking the current state first, so a
/// Ready that came before subscribing is not missed).
pub async fn wait_ready(core: &Core, changes: &mut broadcast::Receiver<Stamped>, limit: Duration) {
    if matches!(core.connection(), Connection::Ready { .. }) {
        return;
    }
    wait_change(changes, limit, "Connection::Ready", |c| {
        matches!(
            c,
            Change::Connection {
                connection: Connection::Ready { .. }
            }
        )
    })
    .await;
}
