//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong in the review engine outside a model call.
///
/// Model-call failures are not errors: they become an [`crate::ReviewStatus::Unreviewed`]
/// decision, so a caller can never confuse "the reviewer was unreachable" with "the engine
/// is broken".
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file exists but cannot be read or parsed (names the file and, for unknown
    /// keys, the key).
    #[error("config file {path}: {message}")]
    Config {
        /// The file that failed.
        path: PathBuf,
        /// What was wrong with it.
        message: String,
    },
    /// The ledger database could not be opened or queried.
    #[error("review ledger {path}: {source}")]
    Ledger {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A directory or file the engine needs could not be created or read.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No home folder is known (`HOME` unset and no account entry) and no
    /// `CROSSCHECK_DATA_DIR` / `CROSSCHECK_CONFIG_DIR` says where to keep the ledger.
    #[error(
        "no home folder: set HOME, or CROSSCHECK_DATA_DIR and CROSSCHECK_CONFIG_DIR (the ledger is never kept in the shared temp folder)"
    )]
    NoHome,
    /// The ledger holds a value this version does not understand.
    #[error("review ledger holds an unknown {what} `{value}`")]
    Corrupt {
        /// Which column.
        what: &'static str,
        /// The value found.
        value: String,
    },
}

/// Shorthand for results with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
