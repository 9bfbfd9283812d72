//! Keeps the store in step with the server: starts or attaches to it, follows its event
//! stream, and after every (re)connect reloads sessions, statuses, pending permission requests
//! and followed transcripts
//! from the server, so nothing stays "busy" that went idle while we were away.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use crosscheck_opencode::{
    Client, DropCause, Event, ServerConfig, ServerState, StreamItem, Supervisor,
    spawn_event_stream, stream::StreamOptions,
};
use tokio::sync::mpsc;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::api_types::{Connection, NoticeLevel};
use crate::core::{Core, OpencodeTarget};
use crate::error::Result;
use crate::servers::handle::ServerHandle;
use crate::services::transcripts::PageLoad;
use crate::store::{LoadToken, SessionsSnapshot};

pub(crate) use crate::services::transcripts::PAGE_SIZE;

/// Starts or attaches to one server and follows it until aborted.
pub(crate) async fn run(core: Core, server: Arc<ServerHandle>, target: OpencodeTarget) {
    let (config, managed) = match target {
        OpencodeTarget::Attach(config) => {
            *server
                .managed_folder
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            (config, false)
        }
        OpencodeTarget::Managed {
            mut options,
            started_from,
        } => {
            options.working_dir =
                managed_folder_for(&core, &server, started_from, &options.working_dir);
            match Supervisor::start(options).await {
                Ok(sup) => {
                    let config = sup.config();
                    watch_supervisor(&core, &server, &sup);
                    core.keep_supervisor(&server, sup).await;
                    (config, true)
                }
                Err(crosscheck_opencode::Error::NotInstalled { looked }) => {
                    core.set_server_connection(&server, Connection::NotInstalled { looked });
                    return;
                }
                Err(e) => {
                    core.set_server_connection(
                        &server,
                        Connection::Failed {
                            error: e.to_string(),
                        },
                    );
                    return;
                }
            }
        }
    };
    core.set_server_connection(
        &server,
        Connection::Connecting {
            url: Some(config.base_url.clone()),
        },
    );
    let client = match Client::new(config.clone()) {
        Ok(c) => c,
        Err(e) => {
            core.set_server_connection(
                &server,
                Connection::Failed {
                    error: e.to_string(),
                },
            );
            return;
        }
    };
    server.set_client(Some(client.clone()));
    follow_stream(core, server, client, config, managed).await;
}

/// The folder the managed server runs in (see [`crate::launch::managed_folder`]); the
/// last-resort folder in the data folder is created here.
fn managed_folder_for(
    core: &Core,
    server: &ServerHandle,
    started_from: crate::launch::StartedFrom,
    current: &std::path::Path,
) -> std::path::PathBuf {
    let last = core.db().last_project();
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .or_else(std::env::home_dir);
    let fallback = core.data_dir().join("workspace");
    let folder = crate::launch::managed_folder(
        started_from,
        current,
        last.as_deref(),
        home.as_deref(),
        &fallback,
    );
    if folder == fallback
        && let Err(e) = std::fs::create_dir_all(&folder)
    {
        tracing::warn!("cannot create {}: {e}", folder.display());
    }
    tracing::info!("the managed OpenCode server runs in {}", folder.display());
    *server
        .managed_folder
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(folder.clone());
    folder
}

fn watch_supervisor(core: &Core, server: &Arc<ServerHandle>, sup: &Supervisor) {
    let mut state = sup.state();
    let core2 = core.clone();
    let server2 = server.clone();
    server.push_task(tokio::spawn(async move {
        while state.changed().await.is_ok() {
            let s = state.borrow().clone();
            match s {
                ServerState::Restarting { reason, .. } => {
                    let url = server2
                        .client()
                        .map(|c| c.base_url().to_owned())
                        .unwrap_or_default();
                    core2.set_server_connection(
                        &server2,
                        Connection::reconnecting(url, reason, DropCause::Restarting, 0),
                    );
                }
                ServerState::Failed { reason } => {
                    core2.set_server_connection(&server2, Connection::Failed { error: reason })
                }
                _ => {}
            }
        }
    }));
}

/// The first wait before a failed resync is tried again; it doubles up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest wait between resync attempts.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// How a resync went.
enum Outcome {
    /// Everything reloaded.
    Complete { version: String },
    /// Reloaded, except what the notices named; retried later.
    Partial { version: String },
    /// Nothing could be reloaded.
    Failed { error: String },
}

/// A resync's outcome, and whether it listed before the event stream showed it was subscribed.
struct Resynced {
    outcome: Outcome,
    /// The listing was asked before the stream was subscribed: what happened in between may
    /// be missing from both, so the resync runs again once the stream is.
    early: bool,
}

/// Whether the open event stream is subscribed to the server's events. OpenCode answers
/// `/global/event` and sends `server.connected` before it subscribes the stream (on a busy
/// 1.18.33, sessions created up to ~40 ms after it were lost): an event emitted in between
/// never arrives, and a listing answered before it does not show its change either. Any frame
/// after `server.connected` proves the subscription.
#[derive(Clone, Default)]
struct Subscribed(Arc<AtomicBool>);

impl Subscribed {
    fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    fn set(&self, subscribed: bool) {
        self.0.store(subscribed, Ordering::SeqCst);
    }
}

/// Whether a batch of events proves the stream subscribed (see [`Subscribed`]).
fn proves_subscribed(batch: &[crosscheck_opencode::Envelope]) -> bool {
    batch
        .iter()
        .any(|e| !matches!(e.event, Event::ServerConnected))
}

/// Follows the event stream; after every (re)connect a resync runs beside it (events keep being
/// applied, and recorded for the fetches in progress), and a resync that did not reload
/// everything is tried again with backoff for as long as the stream stays open. A resync that
/// listed before the stream was subscribed runs again once it is (see [`Subscribed`]).
async fn follow_stream(
    core: Core,
    server: Arc<ServerHandle>,
    client: Client,
    config: ServerConfig,
    managed: bool,
) {
    let (tx, mut rx) = mpsc::channel(1024);
    let _stream = spawn_event_stream(client.clone(), tx, StreamOptions::default());
    let (done_tx, mut done_rx) = mpsc::channel::<(u64, Resynced)>(4);
    // Owned here: when this task is aborted (its server removed or stopped), the resync under
    // way ends with it, instead of listing the gone server's sessions back into the store.
    let mut running: Option<ResyncTask> = None;
    let subscribed = Subscribed::default();
    // A resync listed early and finished before the stream was subscribed.
    let mut again_once_subscribed = false;
    let mut generation = 0u64;
    let mut retry_at: Option<tokio::time::Instant> = None;
    let mut backoff = RETRY_FIRST;
    let start = |generation: u64, running: &mut Option<ResyncTask>| {
        // The one under way (if any) is aborted as it is dropped.
        *running = None;
        let (core, client, done) = (core.clone(), client.clone(), done_tx.clone());
        let (id, subscribed) = (server.id.clone(), subscribed.clone());
        *running = Some(ResyncTask(tokio::spawn(async move {
            let resynced = resync(&core, &id, &client, &subscribed).await;
            let _ = done.send((generation, resynced)).await;
        })));
    };
    loop {
        let retry = async {
            match retry_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            item = rx.recv() => {
                let Some(item) = item else { break };
                match item {
                    StreamItem::Connected => {
                        core.note_stream_gap();
                        subscribed.set(false);
                        again_once_subscribed = false;
                        generation += 1;
                        retry_at = None;
                        backoff = RETRY_FIRST;
                        start(generation, &mut running);
                    }
                    StreamItem::Events(batch) => {
                        if !subscribed.get() && proves_subscribed(&batch) {
                            tracing::debug!(again = again_once_subscribed, "the event stream is subscribed");
                            // Events before this one may have been lost.
                            core.note_stream_gap();
                            subscribed.set(true);
                            // A resync under way listed early too: it runs again when it ends.
                            if running.is_none() && std::mem::take(&mut again_once_subscribed) {
                                generation += 1;
                                retry_at = None;
                                start(generation, &mut running);
                            }
                        }
                        let touched = crate::file_events::touched(&batch);
                        for envelope in batch {
                            core.with_store(|store| ((), store.apply_from(&server.id, envelope.event)));
                        }
                        for change in touched {
                            core.emit(change);
                        }
                    }
                    StreamItem::Disconnected { error, cause, retry_in_ms } => {
                        // The next connect resyncs; nothing is retried meanwhile.
                        core.note_stream_gap();
                        subscribed.set(false);
                        again_once_subscribed = false;
                        generation += 1;
                        retry_at = None;
                        running = None;
                        core.set_server_connection(&server, Connection::reconnecting(
                            config.base_url.clone(),
                            error,
                            cause,
                            retry_in_ms,
                        ))
                    }
                    StreamItem::Malformed { error } => {
                        core.note_stream_gap();
                        tracing::warn!("skipped a malformed event: {error}")
                    }
                }
            }
            Some((done_generation, Resynced { outcome, early })) = done_rx.recv() => {
                if done_generation != generation {
                    continue;
                }
                running = None;
                let listed = !matches!(outcome, Outcome::Failed { .. });
                tracing::debug!(early, listed, "a resync ended");
                match outcome {
                    Outcome::Complete { version } => {
                        backoff = RETRY_FIRST;
                        core.set_server_connection(&server, Connection::Ready {
                            url: config.base_url.clone(),
                            version,
                            managed,
                        });
                    }
                    Outcome::Partial { version } => {
                        core.set_server_connection(&server, Connection::Ready {
                            url: config.base_url.clone(),
                            version,
                            managed,
                        });
                        retry_at = Some(tokio::time::Instant::now() + backoff);
                        backoff = (backoff * 2).min(RETRY_MAX);
                    }
                    Outcome::Failed { error } => {
                        tracing::warn!("resync failed: {error}");
                        core.set_server_connection(&server, Connection::reconnecting(
                            config.base_url.clone(),
                            error,
                            DropCause::SyncFailed,
                            u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
                        ));
                        retry_at = Some(tokio::time::Instant::now() + backoff);
                        backoff = (backoff * 2).min(RETRY_MAX);
                    }
                }
                if early && listed {
                    if subscribed.get() {
                        generation += 1;
                        retry_at = None;
                        start(generation, &mut running);
                    } else {
                        again_once_subscribed = true;
                    }
                }
            }
            () = retry => {
                retry_at = None;
                generation += 1;
                start(generation, &mut running);
            }
        }
    }
}

/// A resync task, aborted when dropped: it never outlives the stream task that started it.
struct ResyncTask(tokio::task::JoinHandle<()>);

impl Drop for ResyncTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A session-level listing under way (sessions, or the pending questions): records the
/// session-level events that arrive meanwhile, and gives the load up unless it finished (an
/// error, or the task was aborted).
pub(crate) struct SessionsLoad {
    core: Core,
    token: Option<LoadToken>,
}

impl SessionsLoad {
    /// Starts recording, before the listing is asked for.
    pub(crate) fn begin(core: &Core) -> Self {
        let token = core.with_store(|s| (s.begin_sessions_load(), None));
        Self {
            core: core.clone(),
            token: Some(token),
        }
    }

    /// The token for the store's `finish_…_load`; `None` once taken.
    pub(crate) fn take(&mut self) -> Option<LoadToken> {
        self.token.take()
    }
}

impl Drop for SessionsLoad {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            self.core.with_store(|s| {
                s.cancel_sessions_load(token);
                ((), None)
            });
        }
    }
}

/// Tells the user what a resync could not reload (and logs it).
fn report(core: &Core, what: &str, error: &str) {
    tracing::warn!("resync: {what} failed: {error}");
    core.notice(
        NoticeLevel::Error,
        "sync.partial",
        &[("what", what), ("error", error)],
        format!("Could not reload {what} ({error}); showing what was there and trying again."),
    );
}

/// Reloads everything from the server: sessions (recording the events that arrive meanwhile),
/// statuses, pending permission requests and followed transcripts. A listing or a transcript
/// that fails is reported and skipped; what it covered is kept as it was. Says whether it
/// listed before the stream was `subscribed`.
async fn resync(
    core: &Core,
    server: &crate::model::ids::ServerId,
    client: &Client,
    subscribed: &Subscribed,
) -> Resynced {
    let health = match client.health().await {
        Ok(h) => h,
        Err(e) => {
            return Resynced {
                outcome: Outcome::Failed {
                    error: e.to_string(),
                },
                early: false,
            };
        }
    };
    let early = !subscribed.get();
    let outcome = reload(core, server, client, health.version).await;
    Resynced { outcome, early }
}

/// The reloads of [`resync`], once the server answered (its `version` is kept for the
/// connection).
async fn reload(
    core: &Core,
    server: &crate::model::ids::ServerId,
    client: &Client,
    version: String,
) -> Outcome {
    let mut complete = true;
    let mut load = SessionsLoad::begin(core);
    let listing = client.list_all_sessions().await;
    let mut failed_projects = HashSet::new();
    for failure in &listing.failures {
        complete = false;
        failed_projects.insert(failure.project_id.clone());
        report(
            core,
            &format!("the session list ({})", failure.listing),
            &failure.error.to_string(),
        );
    }
    if listing.sessions.is_empty() && failed_projects.contains(&None) {
        // Not even the server's own project answered: nothing to show yet.
        return Outcome::Failed {
            error: listing
                .failures
                .first()
                .map(|f| f.error.to_string())
                .unwrap_or_default(),
        };
    }
    let directories: BTreeSet<String> = listing
        .sessions
        .iter()
        .map(|s| s.directory.clone())
        .filter(|d| !d.is_empty())
        .collect();
    let mut failed_directories = HashSet::new();
    let scopes: Vec<Option<&str>> = std::iter::once(None)
        .chain(directories.iter().map(|d| Some(d.as_str())))
        .collect();
    let answers = futures_util::future::join_all(scopes.iter().map(|dir| async move {
        let statuses = client.statuses(*dir).await;
        let permissions = client.permissions(*dir).await;
        (*dir, statuses, permissions)
    }))
    .await;
    let mut statuses = HashMap::new();
    let mut permissions = Vec::new();
    for (dir, st, perms) in answers {
        let name = dir.unwrap_or("the server's own project");
        match st {
            Ok(st) => statuses.extend(st),
            Err(e) => {
                complete = false;
                failed_directories.insert(dir.unwrap_or_default().to_owned());
                report(core, &format!("the statuses of {name}"), &e.to_string());
            }
        }
        match perms {
            Ok(p) => permissions.extend(p),
            Err(e) => {
                complete = false;
                failed_directories.insert(dir.unwrap_or_default().to_owned());
                report(
                    core,
                    &format!("the permission requests of {name}"),
                    &e.to_string(),
                );
            }
        }
    }
    let mut seen = HashSet::new();
    permissions.retain(|p: &crosscheck_opencode::PermissionRequest| seen.insert(p.id.clone()));
    let sessions = sweep_scratch(core, client, listing.sessions);
    let snapshot = SessionsSnapshot {
        server: server.clone(),
        sessions,
        failed_projects,
        statuses,
        permissions,
        failed_directories,
    };
    if let Some(token) = load.take() {
        core.with_store(|store| ((), store.finish_sessions_load(token, snapshot)));
    }
    drop(load);
    let followed = core.read_store(|s, _| s.followed_on(server));
    for id in followed {
        if let Err(e) = reload_transcript(core, client, &id).await {
            complete = false;
            report(core, &format!("the transcript of {id}"), &e.to_string());
        }
    }
    if complete {
        Outcome::Complete { version }
    } else {
        Outcome::Partial { version }
    }
}

/// Reloads the newest page of a followed transcript, merging the events that arrive meanwhile,
/// and pushes it.
pub(crate) async fn reload_transcript(
    core: &Core,
    client: &Client,
    session_id: &str,
) -> Result<()> {
    let Some(token) = core.with_store(|s| (s.begin_load(session_id), None)) else {
        return Ok(());
    };
    let load = PageLoad::new(core, session_id, token, None);
    let page = match client.messages(session_id, Some(PAGE_SIZE), None).await {
        Ok(p) => p,
        Err(crosscheck_opencode::Error::NotFound { .. }) => {
            drop(load);
            core.with_store(|s| ((), Some(s.remove_session(session_id))));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    load.finish(page);
    Ok(())
}

/// Drops cold reviews' scratch sessions from a listing, and deletes those whose marker says
/// their review is long over (its process died, or the server went away mid-review).
fn sweep_scratch(
    core: &Core,
    client: &crosscheck_opencode::Client,
    sessions: Vec<crosscheck_opencode::Session>,
) -> Vec<crosscheck_opencode::Session> {
    use crosscheck_review::opencode_route::scratch_expires_at;
    let now = crosscheck_review::ledger::now_ms();
    let (scratch, kept): (Vec<_>, Vec<_>) =
        sessions.into_iter().partition(crate::store::is_scratch);
    for session in scratch {
        if scratch_expires_at(session.metadata.as_ref()).is_some_and(|t| t < now) {
            let client = client.clone();
            core.push_task(tokio::spawn(async move {
                if let Err(e) = client.delete_session(&session.id).await {
                    tracing::warn!(session = %session.id, "stale cold review session not deleted: {e}");
                }
            }));
        }
    }
    kept
}
