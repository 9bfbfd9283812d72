//! Where the engine keeps its database and reads its config.
//!
//! `CROSSCHECK_DATA_DIR` and `CROSSCHECK_CONFIG_DIR` override the defaults; otherwise the XDG
//! base directories are used, falling back to `~/.local/share/crosscheck` and
//! `~/.config/crosscheck`. The desktop app and the `crosscheck` command resolve the same paths,
//! so they share one ledger. With no home folder at all the paths are an error: the ledger
//! never lands in the shared temp folder, where anyone could read or plant it.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// File name of the shared SQLite database inside [`data_dir`].
pub const DATABASE_FILE: &str = "crosscheck.db";
/// File name of the review config inside [`config_dir`] and inside `<cwd>/.crosscheck/`.
pub const CONFIG_FILE: &str = "review.json";

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where the paths come from: the process (variables and the account's home folder), or a
/// fixed answer in tests.
struct Lookup<'a> {
    var: &'a dyn Fn(&str) -> Option<PathBuf>,
    account_home: &'a dyn Fn() -> Option<PathBuf>,
}

const PROCESS: Lookup<'static> = Lookup {
    var: &env_path,
    account_home: &std::env::home_dir,
};

impl Lookup<'_> {
    /// `$HOME`, else the account's home folder; never the temp folder.
    fn home(&self) -> Result<PathBuf> {
        (self.var)("HOME")
            .or_else(|| (self.account_home)())
            .filter(|h| h.is_absolute())
            .ok_or(Error::NoHome)
    }

    /// `$OVERRIDE`, else `$XDG/crosscheck` (when absolute, as the spec says), else
    /// `~/<fallback>/crosscheck`.
    fn dir(&self, override_var: &str, xdg_var: &str, fallback: &[&str]) -> Result<PathBuf> {
        if let Some(dir) = (self.var)(override_var) {
            return Ok(dir);
        }
        let base = match (self.var)(xdg_var).filter(|p| p.is_absolute()) {
            Some(base) => base,
            None => fallback.iter().fold(self.home()?, |p, part| p.join(part)),
        };
        Ok(base.join("crosscheck"))
    }
}

/// The data directory: `$CROSSCHECK_DATA_DIR`, else `$XDG_DATA_HOME/crosscheck`, else
/// `~/.local/share/crosscheck`.
pub fn data_dir() -> Result<PathBuf> {
    PROCESS.dir("CROSSCHECK_DATA_DIR", "XDG_DATA_HOME", &[".local", "share"])
}

/// The config directory: `$CROSSCHECK_CONFIG_DIR`, else `$XDG_CONFIG_HOME/crosscheck`, else
/// `~/.config/crosscheck`.
pub fn config_dir() -> Result<PathBuf> {
    PROCESS.dir("CROSSCHECK_CONFIG_DIR", "XDG_CONFIG_HOME", &[".config"])
}

/// The shared database file: `data_dir()/crosscheck.db`.
pub fn database_path() -> Result<PathBuf> {
    Ok(data_dir()?.join(DATABASE_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_home_folder_the_paths_are_an_error_never_the_temp_folder() {
        let none = |_: &str| None;
        let no_account = || None;
        let lookup = Lookup {
            var: &none,
            account_home: &no_account,
        };
        assert!(matches!(
            lookup.dir("CROSSCHECK_DATA_DIR", "XDG_DATA_HOME", &[".local", "share"]),
            Err(Error::NoHome)
        ));
        // A relative HOME or XDG value is no home either.
        let relative =
            |name: &str| (name == "HOME" || name == "XDG_DATA_HOME").then(|| PathBuf::from("rel"));
        let lookup = Lookup {
            var: &relative,
            account_home: &no_account,
        };
        assert!(
            lookup
                .dir("CROSSCHECK_DATA_DIR", "XDG_DATA_HOME", &[".local", "share"])
                .is_err()
        );
        // The account's home folder stands in for an unset HOME.
        let account = || Some(PathBuf::from("/home/dev"));
        let lookup = Lookup {
            var: &none,
            account_home: &account,
        };
        assert_eq!(
            lookup
                .dir("CROSSCHECK_DATA_DIR", "XDG_DATA_HOME", &[".local", "share"])
                .unwrap(),
            PathBuf::from("/home/dev/.local/share/crosscheck")
        );
    }
}
