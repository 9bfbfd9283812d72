//! The running core: the server connection, the store, the database and the change stream.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use crosscheck_opencode::{Client, ServerConfig, Session, Supervisor, SupervisorOptions};
use crosscheck_review::{Engine, EngineOptions, Env, Logger};
use tokio::sync::broadcast;

use crate::api_types::{
    Change, Connection, Notice, NoticeLevel, PromptTemplate, ServerView, SessionView, Snapshot,
    Stamped,
};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::flows::FlowRegistry;
use crate::flows::cold_review::ReviewProgress;
use crate::model::ids::ServerId;
use crate::prompts::Registry;
use crate::servers::handle::ServerHandle;
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
    /// Every server followed, by id ([`ServerId::MAIN`] is the one the app starts with).
    pub servers: RwLock<BTreeMap<ServerId, Arc<ServerHandle>>>,
    pub stored: Mutex<Stored>,
    pub changes: broadcast::Sender<Stamped>,
    pub db: Db,
    pub prompts: RwLock<Registry>,
    pub settings: RwLock<Settings>,
    pub metadata_locks: crate::flows::patch::MetadataLocks,
    pub flows: FlowRegistry,
    pub loops: crate::flows::review_loop::Loops,
    pub tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Set by [`Core::shutdown`] (under the `tasks` lock): a task pushed after it is aborted at
    /// once, so work started while the core stops (a loop launched by a finishing handoff) does
    /// not outlive it.
    pub closed: std::sync::atomic::AtomicBool,
    /// The folder holding the database (a managed server's last-resort folder lives there).
    pub data_dir: PathBuf,
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
    /// Where saved servers' passwords are kept, chosen once (see [`crate::servers::secret`]).
    pub secrets: tokio::sync::OnceCell<Arc<dyn crate::servers::secret::SecretStore>>,
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
                servers: RwLock::new(BTreeMap::new()),
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
                tasks: Mutex::new(Vec::new()),
                closed: std::sync::atomic::AtomicBool::new(false),
                data_dir: options
                    .database
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default(),
                review: engine,
                running_reviews: Mutex::new(HashMap::new()),
                searches: crate::search::Searches::default(),
                stream_gaps: std::sync::atomic::AtomicU64::new(0),
                secrets: tokio::sync::OnceCell::new(),
            }),
        };
        let attention = tokio::spawn(crate::attention::run(core.clone(), core.subscribe()));
        lock(&core.inner.tasks).push(attention);
        // The main server keeps the name the user gave it (none: the UI names it).
        let main_name = crate::servers::saved::name_of(core.db(), ServerId::MAIN)
            .unwrap_or_else(|e| {
                tracing::warn!("cannot read the main server's name: {e}");
                None
            })
            .unwrap_or_default();
        let main = Arc::new(ServerHandle::new(
            ServerId::main(),
            main_name,
            options.target,
            false,
            None,
        ));
        core.insert_server(main);
        core.restore_saved_servers();
        let chooser = core.clone();
        lock(&core.inner.tasks).push(tokio::spawn(async move {
            chooser.secrets().await;
        }));
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
    pub(crate) async fn keep_supervisor(&self, server: &ServerHandle, supervisor: Supervisor) {
        if server.id.is_main()
            && let Err(e) =
                crosscheck_review::app_server::record(self.data_dir(), &supervisor.config())
        {
            tracing::warn!(
                "cannot record the managed OpenCode server for the gates in {}: {e}",
                crosscheck_review::app_server::path(self.data_dir()).display()
            );
        }
        *server.supervisor.lock().await = Some(supervisor);
    }

    /// Stops a managed server, if one runs, and removes its record for the gates.
    async fn stop_supervisor(&self, server: &ServerHandle) {
        if let Some(sup) = server.supervisor.lock().await.take() {
            if server.id.is_main()
                && let Err(e) = crosscheck_review::app_server::forget(self.data_dir())
            {
                tracing::warn!("cannot remove the managed OpenCode server's record: {e}");
            }
            sup.stop().await;
        }
    }

    /// Adds a server to the map (replacing one with its id) and starts following it.
    pub(crate) fn insert_server(&self, server: Arc<ServerHandle>) {
        let task = tokio::spawn(crate::sync::run(
            self.clone(),
            server.clone(),
            lock(&server.target).clone(),
        ));
        *lock(&server.sync) = Some(task);
        let view = server.view();
        self.inner
            .servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(server.id.clone(), server);
        self.emit(Change::Server { server: view });
    }

    /// Starts following the servers the user saved.
    fn restore_saved_servers(&self) {
        let saved = match crate::servers::saved::list(self.db()) {
            Ok(saved) => saved,
            Err(e) => {
                tracing::warn!("cannot read the saved servers: {e}");
                return;
            }
        };
        let main_url = self
            .server(ServerId::MAIN)
            .and_then(|m| m.url())
            .and_then(|u| crate::servers::url::normalize(&u).ok());
        for server in saved {
            if server.folder().is_none() && main_url.as_deref() == Some(server.url.as_str()) {
                tracing::warn!(
                    "the saved server {} is the main server's address; followed once",
                    server.url
                );
                continue;
            }
            let folder = server.folder();
            let target = match &folder {
                Some(folder) => crate::launch::managed_in(folder.clone()),
                None => OpencodeTarget::Attach(crosscheck_opencode::ServerConfig {
                    base_url: server.url,
                    password: None,
                }),
            };
            let handle = Arc::new(ServerHandle::new(
                server.id,
                server.name,
                target,
                true,
                None,
            ));
            *lock(&handle.managed_folder) = folder;
            self.insert_saved_server(handle);
        }
    }

    /// [`Core::insert_server`] for a saved server: it starts following once its password,
    /// if one is kept, is read from the secret store.
    fn insert_saved_server(&self, server: Arc<ServerHandle>) {
        let core = self.clone();
        let handle = server.clone();
        let task = tokio::spawn(async move {
            let secrets = core.secrets().await;
            match secrets.get(&handle.id).await {
                Ok(Some(password)) => {
                    handle.set_password(password, secrets.kind());
                    core.emit_server(&handle);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("cannot read the password of server {}: {e}", handle.id),
            }
            let target = lock(&handle.target).clone();
            crate::sync::run(core, handle, target).await;
        });
        *lock(&server.sync) = Some(task);
        let view = server.view();
        self.inner
            .servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(server.id.clone(), server);
        self.emit(Change::Server { server: view });
    }

    /// Where saved servers' passwords are kept: chosen on first use (a short probe for the
    /// system keyring; passwords left in files move into it).
    pub(crate) async fn secrets(&self) -> Arc<dyn crate::servers::secret::SecretStore> {
        self.inner
            .secrets
            .get_or_init(|| crate::servers::secret::choose(&self.inner.data_dir))
            .await
            .clone()
    }

    /// A followed server.
    pub(crate) fn server(&self, id: &str) -> Option<Arc<ServerHandle>> {
        self.inner
            .servers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Every followed server, the main one first.
    pub(crate) fn server_handles(&self) -> Vec<Arc<ServerHandle>> {
        let servers = self
            .inner
            .servers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all: Vec<_> = servers.values().cloned().collect();
        all.sort_by_key(|s| !s.id.is_main());
        all
    }

    /// Every followed server as the UI shows it, the main one first.
    pub fn servers(&self) -> Vec<ServerView> {
        self.server_handles().iter().map(|s| s.view()).collect()
    }

    /// Stops following a server and drops it from the map; its sessions go from the store.
    /// The main server cannot be removed.
    pub(crate) async fn stop_server(&self, id: &ServerId) -> Option<Arc<ServerHandle>> {
        let server = self
            .inner
            .servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id)?;
        server.stop_tasks();
        server.set_client(None);
        self.stop_supervisor(&server).await;
        self.with_store(|s| ((), s.remove_server(id)));
        self.emit(Change::ServerRemoved {
            server_id: id.clone(),
        });
        Some(server)
    }

    /// The server a session lives on (the main one when the store does not know the session).
    pub(crate) fn server_of(&self, session_id: &str) -> ServerId {
        self.read_store(|s, _| s.server_of(session_id))
    }

    /// The client of the server a session lives on, or an error while that server is not
    /// connected.
    pub fn client_for(&self, session_id: &str) -> Result<Client> {
        self.server_client(&self.server_of(session_id))
    }

    /// The client of a server, or an error while it is not connected.
    pub fn server_client(&self, id: &str) -> Result<Client> {
        self.server(id)
            .and_then(|s| s.client())
            .ok_or(Error::NotConnected)
    }

    /// Sets a server's health and pushes it (and, for the main server, the old
    /// `connection` change as well).
    pub(crate) fn set_server_connection(&self, server: &ServerHandle, connection: Connection) {
        if !server.set_connection(connection.clone()) {
            return;
        }
        if server.id.is_main() {
            self.emit(Change::Connection { connection });
        }
        self.emit(Change::Server {
            server: server.view(),
        });
    }

    /// Cancels the flows and loops on these sessions (their server was removed).
    pub(crate) fn end_flows_of(&self, sessions: &[String]) {
        for session in sessions {
            if let Some(flow) = self.inner.flows.running_for(session) {
                self.inner.flows.cancel(&flow.id);
            }
        }
        self.inner.loops.stop_for(sessions);
    }

    /// Pushes a server's current view (after a rename).
    pub(crate) fn emit_server(&self, server: &ServerHandle) {
        self.emit(Change::Server {
            server: server.view(),
        });
    }

    /// Stops background work and the managed server, if any.
    pub async fn shutdown(&self) {
        let servers = self.server_handles();
        for server in &servers {
            server.stop_tasks();
        }
        {
            let mut tasks = lock(&self.inner.tasks);
            self.inner
                .closed
                .store(true, std::sync::atomic::Ordering::SeqCst);
            for task in tasks.drain(..) {
                task.abort();
            }
        }
        self.inner.flows.cancel_all();
        self.inner.loops.cancel_all();
        for server in &servers {
            self.stop_supervisor(server).await;
        }
    }

    /// Starts over with `target` (or the current one when `None`): stops following the
    /// current server (and stops it when it is the managed one), then starts or attaches anew.
    /// What the UI's Retry and "attach to a URL" do.
    pub(crate) async fn reconnect(&self, target: Option<OpencodeTarget>) {
        self.reconnect_server(&ServerId::main(), target).await;
    }

    /// [`Core::reconnect`] for any server.
    pub(crate) async fn reconnect_server(&self, id: &ServerId, target: Option<OpencodeTarget>) {
        let Some(server) = self.server(id) else {
            return;
        };
        if let Some(target) = target {
            *lock(&server.target) = target;
        }
        let old = lock(&server.sync).take();
        if let Some(task) = old {
            task.abort();
            let _ = task.await;
        }
        for task in lock(&server.tasks).drain(..) {
            task.abort();
        }
        self.stop_supervisor(&server).await;
        server.set_client(None);
        self.set_server_connection(&server, Connection::Connecting { url: None });
        let task = tokio::spawn(crate::sync::run(
            self.clone(),
            server.clone(),
            lock(&server.target).clone(),
        ));
        if let Some(stale) = lock(&server.sync).replace(task) {
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
        self.server(ServerId::MAIN)
            .and_then(|s| lock(&s.managed_folder).clone())
    }

    /// The folder holding the database.
    pub(crate) fn data_dir(&self) -> &std::path::Path {
        &self.inner.data_dir
    }

    /// Receives every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.inner.changes.subscribe()
    }

    /// Receives every change from now on, with the sequence number of the last change before
    /// them (taken under the store's lock, which every change is numbered and sent under): a
    /// snapshot at that number or a later one misses none of the changes between.
    pub fn subscribe_from(&self) -> (broadcast::Receiver<Stamped>, u64) {
        let s = lock(&self.inner.stored);
        (self.inner.changes.subscribe(), s.seq)
    }

    /// The main server's client, or an error while it is not connected. Flows on a session use
    /// [`Core::client_for`].
    pub fn client(&self) -> Result<Client> {
        self.server_client(ServerId::MAIN)
    }

    /// The main server's connection state.
    pub fn connection(&self) -> Connection {
        self.server(ServerId::MAIN)
            .map(|s| s.connection())
            .unwrap_or(Connection::Connecting { url: None })
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
        match self.client_for(id)?.get_session(id).await {
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
            servers: self.servers(),
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

    /// [`Core::remember_session`] for a session just made on `server` (created or forked).
    pub(crate) fn remember_session_on(&self, server: &ServerId, session: Session) -> SessionView {
        self.with_store(|st| {
            st.set_server(&session.id, server);
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

    /// Keeps a background task, ended on shutdown (at once when pushed after it).
    pub(crate) fn push_task(&self, task: tokio::task::JoinHandle<()>) {
        let mut tasks = lock(&self.inner.tasks);
        if self.inner.closed.load(std::sync::atomic::Ordering::SeqCst) {
            task.abort();
            return;
        }
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}
