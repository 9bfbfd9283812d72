//! One server the core follows: how it is reached, its client, its health, its supervisor when
//! Crosscheck started it, and the task that keeps its part of the store in step.
//!
//! The protocol stays behind the handle's [`Client`] (OpenCode's `/session`, `/event`, ...):
//! flows ask the core for the client of a session's server and never choose a server
//! themselves. Another kind of server (OpenCode 2's `/api/*`, an agent spoken to over ACP) is
//! another kind of handle answering the same questions.

use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use crosscheck_opencode::{Client, Supervisor};
use tokio::task::JoinHandle;

use crate::api_types::{Connection, PasswordStore, ServerKind, ServerView};
use crate::core::OpencodeTarget;
use crate::model::ids::ServerId;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One followed server (see the module docs).
pub(crate) struct ServerHandle {
    /// Its key in the core's map.
    pub id: ServerId,
    name: Mutex<String>,
    /// Whether it is in the saved list.
    pub saved: bool,
    /// Where its password is kept, when it has one.
    password_store: Mutex<Option<PasswordStore>>,
    /// How it is reached (changed by "attach to a URL" on the main server).
    pub target: Mutex<OpencodeTarget>,
    client: RwLock<Option<Client>>,
    connection: Mutex<Connection>,
    /// The managed server's supervisor, while it runs.
    pub supervisor: tokio::sync::Mutex<Option<Supervisor>>,
    /// The task that starts or attaches to it and follows its events.
    pub sync: Mutex<Option<JoinHandle<()>>>,
    /// Tasks that watch it (the supervisor's state), ended with it.
    pub tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The folder a managed server runs in, once picked.
    pub managed_folder: Mutex<Option<PathBuf>>,
}

impl ServerHandle {
    /// A handle not yet connected.
    pub fn new(
        id: ServerId,
        name: String,
        target: OpencodeTarget,
        saved: bool,
        password_store: Option<PasswordStore>,
    ) -> Self {
        let url = match &target {
            OpencodeTarget::Attach(config) => Some(config.base_url.clone()),
            OpencodeTarget::Managed { .. } => None,
        };
        Self {
            id,
            name: Mutex::new(name),
            saved,
            password_store: Mutex::new(password_store),
            target: Mutex::new(target),
            client: RwLock::new(None),
            connection: Mutex::new(Connection::Connecting { url }),
            supervisor: tokio::sync::Mutex::new(None),
            sync: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            managed_folder: Mutex::new(None),
        }
    }

    /// Its client while connected.
    pub fn client(&self) -> Option<Client> {
        self.client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Sets or clears the client.
    pub fn set_client(&self, client: Option<Client>) {
        *self
            .client
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = client;
    }

    /// Its health.
    pub fn connection(&self) -> Connection {
        lock(&self.connection).clone()
    }

    /// Sets its health; false when it did not change.
    pub fn set_connection(&self, connection: Connection) -> bool {
        let mut c = lock(&self.connection);
        if *c == connection {
            return false;
        }
        *c = connection;
        true
    }

    /// The name shown.
    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    /// Renames it.
    pub fn set_name(&self, name: String) {
        *lock(&self.name) = name;
    }

    /// Where its password is kept, when it has one.
    pub fn password_store(&self) -> Option<PasswordStore> {
        *lock(&self.password_store)
    }

    /// Gives it the password found in the secret store (before it first connects).
    pub fn set_password(&self, password: String, store: PasswordStore) {
        if let OpencodeTarget::Attach(config) = &mut *lock(&self.target) {
            config.password = Some(password);
        }
        *lock(&self.password_store) = Some(store);
    }

    /// Its address as the user gave it, or the managed server's once it runs.
    pub fn url(&self) -> Option<String> {
        match &*lock(&self.target) {
            OpencodeTarget::Attach(config) => Some(config.base_url.clone()),
            OpencodeTarget::Managed { .. } => self.client().map(|c| c.base_url().to_owned()),
        }
    }

    /// Whether Crosscheck starts it.
    pub fn is_managed(&self) -> bool {
        matches!(&*lock(&self.target), OpencodeTarget::Managed { .. })
    }

    /// The server as the UI shows it.
    pub fn view(&self) -> ServerView {
        let url = self.url();
        let folder = lock(&self.managed_folder)
            .as_ref()
            .map(|f| f.display().to_string());
        let mut name = self.name();
        if name.is_empty() {
            name = folder.clone().or_else(|| url.clone()).unwrap_or_default();
        }
        ServerView {
            id: self.id.clone(),
            name,
            kind: if self.is_managed() {
                ServerKind::Managed
            } else {
                ServerKind::Attached
            },
            url,
            folder,
            saved: self.saved,
            password_store: self.password_store(),
            connection: self.connection(),
        }
    }

    /// Stops its watchers and its sync task (not the supervisor: see
    /// [`crate::core::Core::stop_server`]).
    pub fn stop_tasks(&self) {
        if let Some(task) = lock(&self.sync).take() {
            task.abort();
        }
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }

    /// Keeps a watcher task, ended with the server.
    pub fn push_task(&self, task: JoinHandle<()>) {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}
