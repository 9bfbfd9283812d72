//! Where a saved server's password is kept: the desktop's Secret Service keyring when one
//! answers on the session bus, else a file in the data folder only the user can read (mode
//! 0600). Never in SQLite, and never in both places: a password found in the file when a
//! keyring answers moves into the keyring and the file goes.
//!
//! [`SecretStore`] is the seam: [`FileStore`] and [`KeyringStore`] implement it, [`choose`]
//! picks one at start-up (a short probe, so a missing or stuck keyring never holds the start).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::api_types::PasswordStore;
use crate::error::{Error, Result};
use crate::model::ids::ServerId;

/// How long the start-up probe waits for a keyring to answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// The attribute that marks Crosscheck's items in the keyring.
const APP_ATTRIBUTE: (&str, &str) = ("application", "crosscheck");

/// A place that keeps the passwords of saved servers, by server id.
pub trait SecretStore: Send + Sync {
    /// Which place this is (shown in Settings).
    fn kind(&self) -> PasswordStore;
    /// The file folder, for the file store (Settings names it).
    fn location(&self) -> Option<PathBuf>;
    /// Keeps (or replaces) a server's password.
    fn put<'a>(&'a self, id: &'a ServerId, password: &'a str) -> BoxFuture<'a, Result<()>>;
    /// A server's password, when one is kept.
    fn get<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<Option<String>>>;
    /// Forgets a server's password (nothing when none is kept).
    fn forget<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<()>>;
}

/// Passwords in files under `<data>/server-passwords/`, each readable only by the user.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// The file store of a data folder.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("server-passwords"),
        }
    }

    /// The file that holds a server's password.
    pub fn path(&self, id: &ServerId) -> PathBuf {
        self.dir.join(id.as_str())
    }

    /// Every server id with a password file.
    pub fn ids(&self) -> Vec<ServerId> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(ServerId::from))
            .collect()
    }

    fn write(&self, id: &ServerId, password: &str) -> Result<()> {
        let path = self.path(id);
        let fail = |e: std::io::Error| {
            Error::StoredData(format!(
                "cannot save the password in {}: {e}",
                path.display()
            ))
        };
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&path).map_err(fail)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .map_err(fail)?;
        }
        std::io::Write::write_all(&mut file, password.as_bytes()).map_err(fail)
    }

    fn read(&self, id: &ServerId) -> Option<String> {
        std::fs::read_to_string(self.path(id))
            .ok()
            .filter(|p| !p.is_empty())
    }

    fn remove(&self, id: &ServerId) -> Result<()> {
        let path = self.path(id);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::StoredData(format!(
                "cannot remove {}: {e}",
                path.display()
            ))),
            _ => Ok(()),
        }
    }
}

impl SecretStore for FileStore {
    fn kind(&self) -> PasswordStore {
        PasswordStore::File
    }

    fn location(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    fn put<'a>(&'a self, id: &'a ServerId, password: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.write(id, password) })
    }

    fn get<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move { Ok(self.read(id)) })
    }

    fn forget<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.remove(id) })
    }
}

/// Passwords in the default collection of the desktop's Secret Service keyring (GNOME
/// Keyring, KWallet, KeePassXC), one item per server, found by its attributes.
#[derive(Debug, Clone, Default)]
pub struct KeyringStore;

fn keyring_error(e: secret_service::Error) -> Error {
    Error::StoredData(format!("the system keyring failed: {e}"))
}

fn attributes(id: &ServerId) -> HashMap<&str, &str> {
    HashMap::from([APP_ATTRIBUTE, ("server", id.as_str())])
}

async fn connect() -> Result<secret_service::SecretService<'static>> {
    secret_service::SecretService::connect(secret_service::EncryptionType::Dh)
        .await
        .map_err(keyring_error)
}

impl KeyringStore {
    /// Whether a keyring answers on the session bus with an unlocked default collection.
    pub async fn answers() -> bool {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|a| a.is_empty()) {
            return false;
        }
        let probe = async {
            let ss = connect().await?;
            let collection = ss.get_default_collection().await.map_err(keyring_error)?;
            let locked = collection.is_locked().await.map_err(keyring_error)?;
            Ok::<bool, Error>(!locked)
        };
        match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
            Ok(Ok(unlocked)) => unlocked,
            Ok(Err(e)) => {
                tracing::info!("no usable system keyring: {e}");
                false
            }
            Err(_) => {
                tracing::info!("the system keyring did not answer in time");
                false
            }
        }
    }
}

impl SecretStore for KeyringStore {
    fn kind(&self) -> PasswordStore {
        PasswordStore::Keyring
    }

    fn location(&self) -> Option<PathBuf> {
        None
    }

    fn put<'a>(&'a self, id: &'a ServerId, password: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let ss = connect().await?;
            let collection = ss.get_default_collection().await.map_err(keyring_error)?;
            collection.ensure_unlocked().await.map_err(keyring_error)?;
            collection
                .create_item(
                    &format!("Crosscheck: OpenCode server {id}"),
                    attributes(id),
                    password.as_bytes(),
                    true,
                    "text/plain",
                )
                .await
                .map_err(keyring_error)?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move {
            let ss = connect().await?;
            let found = ss
                .search_items(attributes(id))
                .await
                .map_err(keyring_error)?;
            let Some(item) = found.unlocked.first().or(found.locked.first()) else {
                return Ok(None);
            };
            item.ensure_unlocked().await.map_err(keyring_error)?;
            let secret = item.get_secret().await.map_err(keyring_error)?;
            Ok(String::from_utf8(secret).ok().filter(|p| !p.is_empty()))
        })
    }

    fn forget<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let ss = connect().await?;
            let found = ss
                .search_items(attributes(id))
                .await
                .map_err(keyring_error)?;
            for item in found.unlocked.iter().chain(found.locked.iter()) {
                item.delete().await.map_err(keyring_error)?;
            }
            Ok(())
        })
    }
}

/// Picks where passwords go: the keyring when one answers (unless `CROSSCHECK_SECRET_STORE`
/// is `file`), else the file store. With the keyring, passwords still in files move into it
/// (each said in the log) and their files go.
pub async fn choose(data_dir: &Path) -> Arc<dyn SecretStore> {
    let files = FileStore::new(data_dir);
    let forced_file = std::env::var("CROSSCHECK_SECRET_STORE").is_ok_and(|v| v == "file");
    if forced_file || !KeyringStore::answers().await {
        tracing::info!(
            "server passwords are kept in files only the user can read, in {}",
            files.dir.display()
        );
        return Arc::new(files);
    }
    let keyring = KeyringStore;
    move_into(&files, &keyring).await;
    Arc::new(keyring)
}

/// Moves every password from the file store into `to`; a file goes only once `to` keeps
/// its password, so a failure leaves it where it was.
pub async fn move_into(files: &FileStore, to: &dyn SecretStore) {
    for id in files.ids() {
        let Some(password) = files.read(&id) else {
            let _ = files.remove(&id);
            continue;
        };
        match to.put(&id, &password).await {
            Ok(()) => match files.remove(&id) {
                Ok(()) => tracing::warn!(
                    "moved the password of server {id} from its file into the system keyring"
                ),
                Err(e) => tracing::warn!("{e}"),
            },
            Err(e) => tracing::warn!("cannot move the password of server {id}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[tokio::test]
    async fn a_password_file_is_readable_only_by_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let id = ServerId::from("srv_1");
        store.put(&id, "s3cret").await.unwrap();
        let mode = std::fs::metadata(store.path(&id))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(store.get(&id).await.unwrap().as_deref(), Some("s3cret"));
        assert_eq!(store.ids(), vec![id.clone()]);
        store.forget(&id).await.unwrap();
        assert_eq!(store.get(&id).await.unwrap(), None);
        store.forget(&id).await.unwrap();
    }

    /// A store in memory that can be told to fail, standing in for a keyring.
    #[derive(Default)]
    struct Memory {
        kept: std::sync::Mutex<HashMap<String, String>>,
        fail: bool,
    }

    impl SecretStore for Memory {
        fn kind(&self) -> PasswordStore {
            PasswordStore::Keyring
        }
        fn location(&self) -> Option<PathBuf> {
            None
        }
        fn put<'a>(&'a self, id: &'a ServerId, password: &'a str) -> BoxFuture<'a, Result<()>> {
            Box::pin(async move {
                if self.fail {
                    return Err(Error::StoredData("locked".into()));
                }
                self.kept
                    .lock()
                    .unwrap()
                    .insert(id.to_string(), password.to_owned());
                Ok(())
            })
        }
        fn get<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<Option<String>>> {
            Box::pin(async move { Ok(self.kept.lock().unwrap().get(id.as_str()).cloned()) })
        }
        fn forget<'a>(&'a self, id: &'a ServerId) -> BoxFuture<'a, Result<()>> {
            Box::pin(async move {
                self.kept.lock().unwrap().remove(id.as_str());
                Ok(())
            })
        }
    }

    #[tokio::test]
    async fn a_password_moves_out_of_its_file_and_stays_when_the_move_fails() {
        let dir = tempfile::tempdir().unwrap();
        let files = FileStore::new(dir.path());
        let id = ServerId::from("srv_1");
        files.put(&id, "pw").await.unwrap();

        let failing = Memory {
            fail: true,
            ..Memory::default()
        };
        move_into(&files, &failing).await;
        assert_eq!(files.get(&id).await.unwrap().as_deref(), Some("pw"));

        let keyring = Memory::default();
        move_into(&files, &keyring).await;
        assert_eq!(keyring.get(&id).await.unwrap().as_deref(), Some("pw"));
        assert_eq!(files.get(&id).await.unwrap(), None);
        assert!(!files.path(&id).exists());
    }
}
