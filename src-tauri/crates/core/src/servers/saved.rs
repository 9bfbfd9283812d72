//! The servers the user added in the app, kept in SQLite and restored on the next start, and
//! the names given to the servers that are not added in the app (the main server, one given
//! with `--opencode`), which come back each start with the name the user chose. A password is
//! never kept here: it goes to a [`super::secret::SecretStore`].

use rusqlite::{Connection, params};

use crate::db::Db;
use crate::error::Result;
use crate::model::ids::ServerId;

/// One saved server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedServer {
    /// Its key.
    pub id: ServerId,
    /// The name the user gave it.
    pub name: String,
    /// Its address, normalized; for a managed server, [`managed_key`] of its folder (one
    /// unique column keeps one server per address and one per folder).
    pub url: String,
}

/// How a managed server's folder is written in the `url` column.
const MANAGED: &str = "managed:";

/// The `url` column of a managed server running in `folder` (a canonical path).
pub fn managed_key(folder: &std::path::Path) -> String {
    format!("{MANAGED}{}", folder.display())
}

impl SavedServer {
    /// The folder of a managed server (none for an attached one).
    pub fn folder(&self) -> Option<std::path::PathBuf> {
        self.url.strip_prefix(MANAGED).map(std::path::PathBuf::from)
    }
}

/// Creates the table of saved servers.
pub(crate) fn create_table(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS app_servers (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            url TEXT NOT NULL UNIQUE,
            added_at INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS app_server_names (
            key TEXT PRIMARY KEY,
            name TEXT NOT NULL
        );",
    )
}

/// The key under which the name of a server that is not saved is kept: `main` for the main
/// server (whatever its address this time), else its normalized address.
pub fn name_key(id: &ServerId, url: Option<&str>) -> Option<String> {
    if id.is_main() {
        return Some(ServerId::MAIN.to_owned());
    }
    url.map(str::to_owned)
}

/// The name the user gave a server that is not saved, if any.
pub fn name_of(db: &Db, key: &str) -> Result<Option<String>> {
    db.with(|c| {
        let mut stmt = c.prepare_cached("SELECT name FROM app_server_names WHERE key = ?1")?;
        let mut rows = stmt.query(params![key])?;
        Ok(match rows.next()? {
            Some(row) => Some(row.get(0)?),
            None => None,
        })
    })
}

/// Keeps the name the user gave a server that is not saved.
pub fn remember_name(db: &Db, key: &str, name: &str) -> Result<()> {
    db.with(|c| {
        c.execute(
            "INSERT INTO app_server_names (key, name) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET name = excluded.name",
            params![key, name],
        )?;
        Ok(())
    })
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

        // A managed server is saved by its folder, once.
        let folder = std::path::Path::new("/home/u/project");
        let managed = SavedServer {
            id: ServerId::from("srv_3"),
            name: "project".into(),
            url: managed_key(folder),
        };
        insert(&db, &managed).unwrap();
        assert!(
            insert(
                &db,
                &SavedServer {
                    id: ServerId::from("srv_4"),
                    ..managed.clone()
                }
            )
            .is_err()
        );
        assert_eq!(list(&db).unwrap()[0].folder().as_deref(), Some(folder));
        assert_eq!(one.folder(), None);
    }
}
