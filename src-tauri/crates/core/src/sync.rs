//! Keeps the store in step with the server: starts or attaches to it, follows its event
//! stream, and after every (re)connect reloads sessions, statuses, pending permission requests
//! and followed transcripts
//! from the server, so nothing stays "busy" that went idle while we were away.

use std::collections::{BTreeSet, HashSet};

use crosscheck_opencode::{
    Client, ServerConfig, ServerState, StreamItem, Supervisor, spawn_event_stream,
    stream::StreamOptions,
};
use tokio::sync::mpsc;

use crate::api_types::{Change, Connection};
use crate::core::{Core, OpencodeTarget};
use crate::error::Result;
use crate::store::Transcript;

/// Messages per transcript page.
pub(crate) const PAGE_SIZE: u32 = 50;

pub(crate) async fn run(core: Core, target: OpencodeTarget) {
    let (config, managed) = match target {
        OpencodeTarget::Attach(config) => (config, false),
        OpencodeTarget::Managed(options) => match Supervisor::start(options).await {
            Ok(sup) => {
                let config = sup.config();
                watch_supervisor(&core, &sup);
                core.keep_supervisor(sup).await;
                (config, true)
            }
            Err(e) => {
                core.set_connection(Connection::Failed {
                    error: e.to_string(),
                });
                return;
            }
        },
    };
    core.set_connection(Connection::Connecting {
        url: Some(config.base_url.clone()),
    });
    let client = match Client::new(config.clone()) {
        Ok(c) => c,
        Err(e) => {
            core.set_connection(Connection::Failed {
                error: e.to_string(),
            });
            return;
        }
    };
    core.set_client(Some(client.clone()));
    follow_stream(core, client, config, managed).await;
}

fn watch_supervisor(core: &Core, sup: &Supervisor) {
    let mut state = sup.state();
    let core2 = core.clone();
    core.push_task(tokio::spawn(async move {
        while state.changed().await.is_ok() {
            let s = state.borrow().clone();
            match s {
                ServerState::Restarting { reason, .. } => {
                    let url = core2
                        .client()
                        .map(|c| c.base_url().to_owned())
                        .unwrap_or_default();
                    core2.set_connection(Connection::Reconnecting {
                        url,
                        error: reason,
                        retry_in_ms: 0,
                    });
                }
                ServerState::Failed { reason } => {
                    core2.set_connection(Connection::Failed { error: reason })
                }
                _ => {}
            }
        }
    }));
}

async fn follow_stream(core: Core, client: Client, config: ServerConfig, managed: bool) {
    let (tx, mut rx) = mpsc::channel(1024);
    let _stream = spawn_event_stream(client.clone(), tx, StreamOptions::default());
    while let Some(item) = rx.recv().await {
        match item {
            StreamItem::Connected => match resync(&core, &client).await {
                Ok(version) => core.set_connection(Connection::Ready {
                    url: config.base_url.clone(),
                    version,
                    managed,
                }),
                Err(e) => {
                    tracing::warn!("resync failed: {e}");
                    core.set_connection(Connection::Reconnecting {
                        url: config.base_url.clone(),
                        error: e.to_string(),
                        retry_in_ms: 1000,
                    });
                }
            },
            StreamItem::Event(envelope) => {
                core.with_store(|store| ((), store.apply(envelope.event)))
            }
            StreamItem::Disconnected { error, retry_in_ms } => {
                core.set_connection(Connection::Reconnecting {
                    url: config.base_url.clone(),
                    error,
                    retry_in_ms,
                })
            }
            StreamItem::Malformed { error } => tracing::warn!("skipped a malformed event: {error}"),
        }
    }
}

/// Reloads everything from the server; returns its version.
pub(crate) async fn resync(core: &Core, client: &Client) -> Result<String> {
    let health = client.health().await?;
    let sessions = client.list_all_sessions().await?;
    let directories: BTreeSet<String> = sessions.iter().map(|s| s.directory.clone()).collect();
    let mut statuses = client.statuses(None).await?;
    for dir in &directories {
        statuses.extend(client.statuses(Some(dir)).await?);
    }
    let mut permissions = client.permissions(None).await?;
    for dir in &directories {
        permissions.extend(client.permissions(Some(dir)).await?);
    }
    let mut seen = HashSet::new();
    permissions.retain(|p| seen.insert(p.id.clone()));
    core.with_store(|store| {
        let change = store.reset_sessions(sessions, statuses, permissions);
        ((), Some(change))
    });
    let followed = core.read_store(|s, _| s.followed());
    for id in followed {
        reload_transcript(core, client, &id).await?;
    }
    Ok(health.version)
}

/// Loads the newest page of a transcript into the store and pushes it.
pub(crate) async fn reload_transcript(
    core: &Core,
    client: &Client,
    session_id: &str,
) -> Result<()> {
    let page = match client.messages(session_id, Some(PAGE_SIZE), None).await {
        Ok(p) => p,
        Err(crosscheck_opencode::Error::NotFound { .. }) => {
            core.with_store(|s| ((), Some(s.remove_session(session_id))));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    core.with_store_seq(|store, seq| {
        store.put_transcript(
            session_id,
            Transcript::from_page(page.messages, page.next_cursor),
        );
        let change = store
            .page(session_id, seq)
            .map(|page| Change::TranscriptReset { page });
        ((), change)
    });
    Ok(())
}
