//! The tables of every module that keeps state in Crosscheck's SQLite file, created when it
//! opens. Kept apart from `db` so the connection's owner depends on none of the modules that
//! use it (each of them depends on `db`).

use std::path::Path;

use rusqlite::Connection;

use crate::db::Db;
use crate::error::Result;

impl Db {
    /// Opens (creating if needed) the database file and every table in it.
    pub fn open(path: &Path) -> Result<Self> {
        Db::open_with(path, create_all)
    }
}

/// Creates (or brings up to date) every module's tables.
fn create_all(conn: &Connection) -> Result<()> {
    crate::findings::create_tables(conn)?;
    conn.execute_batch(crate::flows::review_loop::evidence::SCHEMA)?;
    crate::model::loop_record::create_table(conn)?;
    crate::transfer_log::create_table(conn)?;
    crate::comments::create_table(conn)?;
    crate::servers::saved::create_table(conn)?;
    conn.execute_batch(crate::review_pin::SCHEMA)?;
    conn.execute_batch(crate::attention::db::SCHEMA)?;
    Ok(())
}
