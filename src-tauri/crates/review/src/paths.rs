//! Where the engine keeps its database and reads its config.
//!
//! `CROSSCHECK_DATA_DIR` and `CROSSCHECK_CONFIG_DIR` override the defaults; otherwise the XDG
//! base directories are used, falling back to `~/.local/share/crosscheck` and
//! `~/.config/crosscheck`. The desktop app and the `crosscheck` command resolve the same paths,
//! so they share one ledger.

use std::path::PathBuf;

/// File name of the shared SQLite database inside [`data_dir`].
pub const DATABASE_FILE: &str = "crosscheck.db";
/// File name of the review config inside [`config_dir`] and inside `<cwd>/.crosscheck/`.
pub const CONFIG_FILE: &str = "review.json";

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> PathBuf {
    env_path("HOME").unwrap_or_else(std::env::temp_dir)
}

/// The data directory: `$CROSSCHECK_DATA_DIR`, else `$XDG_DATA_HOME/crosscheck`, else
/// `~/.local/share/crosscheck`.
pub fn data_dir() -> PathBuf {
    env_path("CROSSCHECK_DATA_DIR").unwrap_or_else(|| {
        env_path("XDG_DATA_HOME")
            .unwrap_or_else(|| home().join(".local").join("share"))
            .join("crosscheck")
    })
}

/// The config directory: `$CROSSCHECK_CONFIG_DIR`, else `$XDG_CONFIG_HOME/crosscheck`, else
/// `~/.config/crosscheck`.
pub fn config_dir() -> PathBuf {
    env_path("CROSSCHECK_CONFIG_DIR").unwrap_or_else(|| {
        env_path("XDG_CONFIG_HOME")
            .unwrap_or_else(|| home().join(".config"))
            .join("crosscheck")
    })
}

/// The shared database file: `data_dir()/crosscheck.db`.
pub fn database_path() -> PathBuf {
    data_dir().join(DATABASE_FILE)
}
