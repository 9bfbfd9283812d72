//! The servers the user added in the app, kept in SQLite and restored on the next start. A
//! password is kept apart from the list, in a file in the data folder that only the user can
//! read (mode 0600); [`PasswordStore`] says where.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use crate::api_types::PasswordStore;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::ids::ServerId;

/// One saved attached server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedServer {
    /// Its key.
    pub id: ServerId,
    /// The name the user gave it.
    pub name: String,
    /// Its address, normalized.
    pub url: String,
}

/// Creates the table of saved servers.
pub(crate) fn create_table(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS app_servers (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            url TEXT NOT NULL UNIQUE,
            added_at INTEGER NOT NULL
        );",
    )
}

/// Every saved server, oldest first.
pub fn list(db: &Db) -> Result<Vec<SavedServer>> {
    db.with(|c| {
        let mut stmt = c.prepare("SELECT id, name, url FROM app_servers ORDER BY added_at, id")?;
        let rows = stmt.query_map([], |r| {
            Ok(SavedServer {
                id: ServerId::from(r.get::<_, String>(0)?),
                name: r.get(1)?,
                url: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Saves a server (its URL must not be saved already).
pub fn insert(db: &Db, server: &SavedServer) -> Result<()> {
    db.with(|c| {
        c.execute(
            "INSERT INTO app_servers (id, name, url, added_at) VALUES (?1, ?2, ?3, ?4)",
            params![server.id, server.name, server.url, crate::model::now_ms()],
        )?;
        Ok(())
    })
}

/// Renames a saved server (nothing when it is not saved).
pub fn rename(db: &Db, id: &ServerId, name: &str) -> Result<()> {
    db.with(|c| {
        c.execute(
            "UPDATE app_servers SET name = ?2 WHERE id = ?1",
            params![id, name],
        )?;
        Ok(())
    })
}

/// Forgets a saved server.
pub fn remove(db: &Db, id: &ServerId) -> Result<()> {
    db.with(|c| {
        c.execute("DELETE FROM app_servers WHERE id = ?1", params![id])?;
        Ok(())
    })
}

fn password_path(data_dir: &Path, id: &ServerId) -> PathBuf {
    data_dir.join("server-passwords").join(id.as_str())
}

/// Keeps a server's password in a file only the user can read; answers where it went.
pub fn store_password(data_dir: &Path, id: &ServerId, password: &str) -> Result<PasswordStore> {
    let path = password_path(data_dir, id);
    let fail = |e: std::io::Error| {
        Error::StoredData(format!(
            "cannot save the password in {}: {e}",
            path.display()
        ))
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
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
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    }
    std::io::Write::write_all(&mut file, password.as_bytes()).map_err(fail)?;
    Ok(PasswordStore::File)
}

/// A saved server's password, when one was kept.
pub fn load_password(data_dir: &Path, id: &ServerId) -> Option<String> {
    std::fs::read_to_string(password_path(data_dir, id))
        .ok()
        .filter(|p| !p.is_empty())
}

/// Forgets a saved server's password.
pub fn forget_password(data_dir: &Path, id: &ServerId) {
    let path = password_path(data_dir, id);
    if let Err(e) = std::fs::remove_file(&path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_survives_reopening_and_one_url_is_saved_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.db");
        let db = Db::open(&path).unwrap();
        let one = SavedServer {
            id: ServerId::from("srv_1"),
            name: "box".into(),
            url: "http://127.0.0.1:4096".into(),
        };
        insert(&db, &one).unwrap();
        let again = SavedServer {
            id: ServerId::from("srv_2"),
            ..one.clone()
        };
        assert!(insert(&db, &again).is_err());
        rename(&db, &one.id, "dev box").unwrap();
        drop(db);
        let db = Db::open(&path).unwrap();
        let listed = list(&db).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "dev box");
        remove(&db, &one.id).unwrap();
        assert!(list(&db).unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_password_file_is_readable_only_by_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let id = ServerId::from("srv_1");
        assert_eq!(
            store_password(dir.path(), &id, "s3cret").unwrap(),
            PasswordStore::File
        );
        let mode = std::fs::metadata(password_path(dir.path(), &id))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_password(dir.path(), &id).as_deref(), Some("s3cret"));
        forget_password(dir.path(), &id);
        assert_eq!(load_password(dir.path(), &id), None);
    }
}
