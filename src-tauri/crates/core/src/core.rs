//! The running core: the server connection, the store, the database and the change stream.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use crosscheck_opencode::{Client, ServerConfig, Session, Supervisor, SupervisorOptions};
use crosscheck_review::{Engine, EngineOptions, Env, Logger};
use tokio::sync::broadcast;

use crate::api_types::{
    Change, Connection, Notice, NoticeLevel, PromptTemplate, SessionView, Snapshot, Stamped,
};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::flows::FlowRegistry;
use crate::flows::cold_review::ReviewProgress;
use crate::prompts::Registry;
use crate::settings::Settings;
use crate::store::Store;

/// Which OpenCode server to use.
#[derive(Debug, Clone)]
pub enum OpencodeTarget {
    /// Attach to a running server.
    Attach(ServerConfig),
    /// Start and supervise `opencode serve`. `options.working_dir` is the folder the app was
    /// started from; the server runs in the folder [`crate::launch::managed_folder`] picks.
    Managed {
        /// How to find and run it.
        options: SupervisorOptions,
        /// Which app starts it (decides the folder).
        started_from: crate::launch::StartedFrom,
    },
}

/// How to start the core.
#[derive(Debug, Clone)]
pub struct CoreOptions {
    /// The server.
    pub target: OpencodeTarget,
    /// The SQLite file for settings, prompts, tabs (and the review ledger).
    pub database: PathBuf,
}

/// Where the cold review engine reads its config and API keys. It always uses the app's
/// database ([`CoreOptions::database`]) for its ledger, shared with the `crosscheck gate` runs.
#[derive(Debug, Clone)]
pub struct ReviewSetup {
    /// The directory holding the user-level `review.json`.
    pub config_dir: PathBuf,
    /// Where API keys and base URLs are read from.
    pub env: Env,
    /// Where the engine's log lines go.
    pub logger: Logger,
}

impl ReviewSetup {
    /// The review crate's config directory (`$CROSSCHECK_CONFIG_DIR`, else the XDG default),
    /// the process environment and stderr logging, as the `crosscheck gate` command uses.
    pub fn from_environment() -> std::result::Result<Self, crosscheck_review::Error> {
        let defaults = EngineOptions::from_environment()?;
        Ok(Self {
            config_dir: defaults.config_dir,
            env: defaults.env,
            logger: defaults.logger,
        })
    }
}

/// The store and the sequence number of the last change, changed together.
pub(crate) struct Stored {
    pub store: Store,
    pub seq: u64,
}

pub(crate) struct Inner {
    pub client: RwLock<Option<Client>>,
    pub connection: Mutex<Connection>,
    pub stored: Mutex<Stored>,
    pub changes: broadcast::Sender<Stamped>,
    pub db: Db,
    pub prompts: RwLock<Registry>,
    pub settings: RwLock<Settings>,
    pub metadata_locks: crate::flows::patch::MetadataLocks,
    pub flows: FlowRegistry,
    pub loops: crate::flows::review_loop::Loops,
    pub supervisor: tokio::sync::Mutex<Option<Supervisor>>,
    pub tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The task that starts or attaches to the server and follows it, and its target.
    pub sync: Mutex<(OpencodeTarget, Option<tokio::task::JoinHandle<()>>)>,
    /// The folder holding the database (a managed server's last-resort folder lives there).
    pub data_dir: PathBuf,
    /// The folder the managed server runs in, once picked.
    pub managed_folder: Mutex<Option<PathBuf>>,
    /// The cold review engine, or why it could not be opened.
    pub review: std::result::Result<Arc<Engine>, String>,
    /// In-app cold reviews running now, by ledger key.
    pub running_reviews: Mutex<HashMap<String, ReviewProgress>>,
    /// How many times the event stream may have lost events (it connected, dropped, or skipped
    /// a malformed event): equal counts before and after a wait mean the store saw every event
    /// in between.
    pub stream_gaps: std::sync::atomic::AtomicU64,
    /// The running transcript search's number.
    pub searches: crate::search::Searches,
}

/// A handle to the running core; cheap to clone.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Core {
    /// Opens the database and starts connecting in the background; returns at once. The cold
    /// review engine reads its config and keys as [`ReviewSetup::from_environment`] says.
    pub fn start(options: CoreOptions) -> Result<Core> {
        Self::start_with_review(options, ReviewSetup::from_environment()?)
    }

    /// [`Core::start`] with the cold review engine's config dir, environment and log sink
    /// given explicitly (tests, embedders).
    pub fn start_with_review(options: CoreOptions, review: ReviewSetup) -> Result<Core> {
        let db = Db::open(&options.database)?;
        // A ledger that cannot be opened disables cold reviews, not the app.
        let engine = Engine::open(EngineOptions {
            database_path: options.database.clone(),
            config_dir: review.config_dir,
            logger: review.logger,
            env: review.env,
        })
        .map(Arc::new)
        .map_err(|e| {
            tracing::warn!("cold reviews are unavailable: {e}");
            e.to_string()
        });
        let settings = db.settings();
        let prompts = Registry::new(db.prompt_overrides()?);
        let (changes, _) = broadcast::channel(4096);
        let core = Core {
            inner: Arc::new(Inner {
                client: RwLock::new(None),
                connection: Mutex::new(Connection::Connecting { url: None }),
                stored: Mutex::new(Stored {
                    store: Store::default(),
                    seq: 0,
                }),
                changes,
                db,
                prompts: RwLock::new(prompts),
                settings: RwLock::new(settings),
                metadata_locks: crate::flows::patch::MetadataLocks::default(),
                flows: FlowRegistry::default(),
                loops: crate::flows::review_loop::Loops::default(),
                supervisor: tokio::sync::Mutex::new(None),
                tasks: Mutex::new(Vec::new()),
                sync: Mutex::new((options.target.clone(), None)),
                data_dir: options
                    .database
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default(),
                managed_folder: Mutex::new(None),
                review: engine,
                running_reviews: Mutex::new(HashMap::new()),
                searches: crate::search::Searches::default(),
                stream_gaps: std::sync::atomic::AtomicU64::new(0),
            }),
        };
        let attention = tokio::spawn(crate::attention::run(core.clone(), core.subscribe()));
        lock(&core.inner.tasks).push(attention);
        let task = tokio::spawn(crate::sync::run(core.clone(), options.target));
        lock(&core.inner.sync).1 = Some(task);
        let recorder = tokio::spawn(crate::flows::review_loop::recorder::run(core.clone()));
        lock(&core.inner.tasks).push(tokio::spawn(crate::review_pin::run(core.clone())));
        lock(&core.inner.tasks).push(recorder);
        let resume = tokio::spawn(crate::flows::review_loop::resume_all(core.clone()));
        lock(&core.inner.tasks).push(resume);
        let pending = tokio::spawn(crate::flows::transfer::check_pending(core.clone()));
        lock(&core.inner.tasks).push(pending);
        if core.inner.review.is_ok()
            && let Some(watch) = crate::ledger_watch::spawn(core.clone(), options.database.clone())
        {
            lock(&core.inner.tasks).push(watch);
        }
        Ok(core)
    }

    /// Keeps the managed server's supervisor so [`Core::shutdown`] stops it, and records the
    /// server for the gates (see [`crosscheck_review::app_server`]): they review through it
    /// while it runs.
    pub(crate) async fn keep_supervisor(&self, supervisor: Supervisor) {
        if let Err(e) = crosscheck_review::app_server::record(self.data_dir(), &supervisor.config())
        {
            tracing::warn!(
                "cannot record the managed OpenCode server for the gates in {}: {e}",
                crosscheck_review::app_server::path(self.data_dir()).display()
            );
        }
        *self.inner.supervisor.lock().await = Some(supervisor);
    }

    /// Stops the managed server, if one runs, and removes its record for the gates.
    async fn stop_supervisor(&self) {
        if let Some(sup) = self.inner.supervisor.lock().await.take() {
            if let Err(e) = crosscheck_review::app_server::forget(self.data_dir()) {
                tracing::warn!("cannot remove the managed OpenCode server's record: {e}");
            }
            sup.stop().await;
        }
    }

    /// Stops background work and the managed server, if any.
    pub async fn shutdown(&self) {
        if let Some(task) = lock(&self.inner.sync).1.take() {
            task.abort();
        }
        for task in lock(&self.inner.tasks).drain(..) {
            task.abort();
        }
        self.inner.flows.cancel_all();
        self.inner.loops.cancel_all();
        self.stop_supervisor().await;
    }

    /// Starts over with `target` (or the current one when `None`): stops following the
    /// current server (and stops it when it is the managed one), then starts or attaches anew.
    /// What the UI's Retry and "attach to a URL" do.
    pub(crate) async fn reconnect(&self, target: Option<OpencodeTarget>) {
        let old = {
            let mut sync = lock(&self.inner.sync);
            if let Some(target) = target {
                sync.0 = target;
            }
            sync.1.take()
        };
        if let Some(task) = old {
            task.abort();
            let _ = task.await;
        }
        self.stop_supervisor().await;
        self.set_client(None);
        self.set_connection(Connection::Connecting { url: None });
        let mut sync = lock(&self.inner.sync);
        let task = tokio::spawn(crate::sync::run(self.clone(), sync.0.clone()));
        if let Some(stale) = sync.1.replace(task) {
            stale.abort();
        }
    }

    /// Remembers `dir` as the last project (where the desktop's managed server starts next
    /// time). A failure is only logged: it changes nothing the user sees now.
    pub(crate) fn remember_project(&self, dir: &str) {
        if let Err(e) = self.inner.db.set_last_project(dir) {
            tracing::warn!("cannot remember the last project: {e}");
        }
    }

    /// The folder the managed OpenCode server runs in (none when attached to a URL).
    pub fn managed_folder(&self) -> Option<PathBuf> {
        lock(&self.inner.managed_folder).clone()
    }

    pub(crate) fn set_managed_folder(&self, folder: Option<PathBuf>) {
        *lock(&self.inner.managed_folder) = folder;
    }

    /// The folder holding the database.
    pub(crate) fn data_dir(&self) -> &std::path::Path {
        &self.inner.data_dir
    }

    /// Receives every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.inner.changes.subscribe()
    }

    /// The current client, or an error while not connected.
    pub fn client(&self) -> Result<Client> {
        self.inner
            .client
            .read()
            .map_err(|_| Error::Internal("client lock".into()))?
            .clone()
            .ok_or(Error::NotConnected)
    }

    pub(crate) fn set_client(&self, client: Option<Client>) {
        if let Ok(mut c) = self.inner.client.write() {
            *c = client;
        }
    }

    /// The connection state.
    pub fn connection(&self) -> Connection {
        lock(&self.inner.connection).clone()
    }

    /// Notes that the event stream may have lost events (see [`Inner::stream_gaps`]); called
    /// before anything the stream or a resync brings afterwards reaches the store.
    pub(crate) fn note_stream_gap(&self) {
        self.inner
            .stream_gaps
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many possible gaps the event stream has had so far.
    pub(crate) fn stream_gaps(&self) -> u64 {
        self.inner
            .stream_gaps
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn set_connection(&self, connection: Connection) {
        {
            let mut c = lock(&self.inner.connection);
            if *c == connection {
                return;
            }
            *c = connection.clone();
        }
        self.emit(Change::Connection { connection });
    }

    /// Runs `f` on the store and pushes the change it returns, in order, under one lock.
    pub(crate) fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> (T, Option<Change>)) -> T {
        self.with_store_seq(|store, _| f(store))
    }

    /// Like [`Core::with_store`]; `f` also gets the sequence number its change will carry.
    pub(crate) fn with_store_seq<T>(
        &self,
        f: impl FnOnce(&mut Store, u64) -> (T, Option<Change>),
    ) -> T {
        let mut s = lock(&self.inner.stored);
        let next = s.seq + 1;
        let (out, change) = f(&mut s.store, next);
        if let Some(change) = change {
            // A session that appears or goes changes whether its partners' links resolve.
            let partners = match &change {
                Change::SessionUpserted { session } => s.store.linked_to(&session.session.id),
                Change::SessionRemoved { session_id } => s.store.linked_to(session_id),
                _ => Vec::new(),
            };
            s.seq += 1;
            let _ = self.inner.changes.send(Stamped { seq: s.seq, change });
            for session in partners {
                s.seq += 1;
                let change = Change::SessionUpserted { session };
                let _ = self.inner.changes.send(Stamped { seq: s.seq, change });
            }
        }
        out
    }

    /// Reads the store with the current sequence number.
    pub(crate) fn read_store<T>(&self, f: impl FnOnce(&Store, u64) -> T) -> T {
        let s = lock(&self.inner.stored);
        f(&s.store, s.seq)
    }

    /// Pushes a change that does not touch the store.
    pub(crate) fn emit(&self, change: Change) {
        self.with_store(|_| ((), Some(change)));
    }

    /// Tells the user something happened in the background.
    pub(crate) fn notice(
        &self,
        level: NoticeLevel,
        code: &str,
        params: &[(&str, &str)],
        message: String,
    ) {
        let params = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.emit(Change::Notice {
            notice: Notice {
                level,
                code: code.to_owned(),
                params,
                message,
            },
        });
    }

    /// The store's copy of a session (kept current by the event stream), or fetched from the
    /// server when the store does not have it. For hot paths whose next request fails clearly
    /// when the copy is out of date.
    pub(crate) async fn known_session(&self, id: &str) -> Result<Session> {
        if let Some(session) = self.read_store(|s, _| s.session(id).cloned()) {
            return Ok(session);
        }
        self.session(id).await
    }

    /// A session fetched from the server (and remembered in the store).
    pub(crate) async fn session(&self, id: &str) -> Result<Session> {
        match self.client()?.get_session(id).await {
            Ok(s) => Ok(self.remember_session(s).session),
            Err(crosscheck_opencode::Error::NotFound { .. }) => {
                Err(Error::SessionNotFound(id.to_owned()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Everything for the UI's first frame, at one sequence number.
    pub fn snapshot(&self) -> Snapshot {
        let saved = self.inner.db.tabs();
        let (seq, sessions, statuses, permissions, session_errors) = self.read_store(|s, seq| {
            (
                seq,
                s.session_views(),
                s.statuses(),
                s.permissions(),
                s.session_errors(),
            )
        });
        Snapshot {
            seq,
            connection: self.connection(),
            sessions,
            statuses,
            permissions,
            settings: self.settings(),
            tabs: saved.tabs,
            active_tab: saved.active,
            follow_tab: saved.follow,
            flows: self.inner.flows.list(),
            session_errors,
        }
    }

    /// Keeps a session the server just answered with and returns it as the UI shows it.
    /// A newer copy that arrived by event meanwhile (`time.updated`) is kept instead.
    pub(crate) fn remember_session(&self, session: Session) -> SessionView {
        self.with_store(|st| {
            let change = st.upsert_fetched_session(session.clone());
            let newest = st.session(&session.id).cloned().unwrap_or(session);
            (st.view(&newest), change)
        })
    }

    /// The local database (settings, tabs, prompt overrides).
    pub(crate) fn db(&self) -> &Db {
        &self.inner.db
    }

    /// The review loops running in this process.
    pub(crate) fn loops(&self) -> &crate::flows::review_loop::Loops {
        &self.inner.loops
    }

    /// Running and recently ended flows.
    pub(crate) fn flows(&self) -> &FlowRegistry {
        &self.inner.flows
    }

    /// The per-session locks that serialize this process's metadata writes.
    pub(crate) fn metadata_locks(&self) -> &crate::flows::patch::MetadataLocks {
        &self.inner.metadata_locks
    }

    /// The prompt registry as it is now (defaults with the user's overrides).
    pub(crate) fn prompts(&self) -> Registry {
        self.inner
            .prompts
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Saves a prompt override (`None` resets to the default) and answers the template in use.
    pub(crate) fn set_prompt(
        &self,
        name: &str,
        template: Option<String>,
    ) -> Result<PromptTemplate> {
        self.inner
            .db
            .set_prompt_override(name, template.as_deref())?;
        let mut registry = self
            .inner
            .prompts
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        registry.set_override(name, template);
        registry
            .get(name)
            .ok_or_else(|| Error::InvalidRequest(format!("unknown prompt {name}")))
    }

    /// Saves settings, puts them in effect and pushes them to every window.
    pub(crate) fn save_settings(&self, settings: Settings) -> Result<()> {
        self.inner.db.set_settings(&settings)?;
        if let Ok(mut s) = self.inner.settings.write() {
            *s = settings.clone();
        }
        self.emit(Change::Settings { settings });
        Ok(())
    }

    /// The settings in effect.
    pub fn settings(&self) -> Settings {
        self.inner
            .settings
            .read()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// The cold review engine, or a `review_failed` error saying why it is unavailable.
    pub(crate) fn review_engine(&self) -> Result<Arc<Engine>> {
        self.inner.review.clone().map_err(|e| {
            Error::ReviewFailed(format!("the review ledger could not be opened ({e})"))
        })
    }

    pub(crate) fn running_reviews(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, ReviewProgress>> {
        lock(&self.inner.running_reviews)
    }

    /// The transcript searches' numbers (a new one stops the older one).
    pub(crate) fn searches(&self) -> &crate::search::Searches {
        &self.inner.searches
    }

    pub(crate) fn push_task(&self, task: tokio::task::JoinHandle<()>) {
        let mut tasks = lock(&self.inner.tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}
