//! The app's own OpenCode server, recorded for the gates.
//!
//! The managed `opencode serve` that the app (desktop or `crosscheck serve`) starts has a
//! random password that nobody is shown. While it runs, the app keeps its address and password
//! in [`APP_SERVER_FILE`] in the data folder (mode 0600: the user's alone), and removes the
//! file when it stops the server. A gate with no OpenCode server of its own (no `opencode.url`
//! in the user's `review.json`, no `CROSSCHECK_OPENCODE_URL`) reviews through that server. A
//! file whose server no longer answers with that password is ignored. Only the user's data
//! folder is read: nothing a repository holds can name it.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// File name of the record inside the data folder.
pub const APP_SERVER_FILE: &str = "opencode-server.json";

/// How long the gate waits for the recorded server to answer before it ignores the record.
pub const APP_SERVER_CHECK: Duration = Duration::from_secs(3);

/// What the file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppServer {
    /// The server's base URL (loopback).
    pub url: String,
    /// Its password.
    pub password: Option<String>,
    /// The process of the app that started it.
    pub pid: u32,
}

/// Where the record lives in `data_dir`.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(APP_SERVER_FILE)
}

/// Records the managed server this process runs: a new 0600 file renamed into place, so a
/// reader never sees half of it and nobody else can read it, not even briefly.
pub fn record(data_dir: &Path, server: &crosscheck_opencode::ServerConfig) -> io::Result<()> {
    crate::private::create_dir_all(data_dir)?;
    let record = AppServer {
        url: server.base_url.clone(),
        password: server.password.clone(),
        pid: std::process::id(),
    };
    let text = serde_json::to_string(&record).map_err(io::Error::other)?;
    let tmp = data_dir.join(format!(".{APP_SERVER_FILE}.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    crate::private::restrict(&tmp)?;
    std::fs::rename(&tmp, path(data_dir))
}

/// Removes the record when it is this process's (another app may have written its own since).
pub fn forget(data_dir: &Path) -> io::Result<()> {
    match read(data_dir) {
        Some(record) if record.pid == std::process::id() => {
            match std::fs::remove_file(path(data_dir)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The record, when there is a well-formed one naming a loopback server.
pub fn read(data_dir: &Path) -> Option<AppServer> {
    let text = std::fs::read_to_string(path(data_dir)).ok()?;
    let record: AppServer = serde_json::from_str(&text).ok()?;
    crate::engine::is_on_this_machine(&record.url).then_some(record)
}

/// A client for the recorded server when it answers its health check with the recorded
/// password within [`APP_SERVER_CHECK`]; `None` otherwise (no record, a stale one).
pub async fn client(data_dir: &Path) -> Option<crosscheck_opencode::Client> {
    let record = read(data_dir)?;
    let client = crosscheck_opencode::Client::new(crosscheck_opencode::ServerConfig {
        base_url: record.url.trim_end_matches('/').to_owned(),
        password: record.password,
    })
    .ok()?;
    match tokio::time::timeout(APP_SERVER_CHECK, client.health()).await {
        Ok(Ok(_)) => Some(client),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_private_and_only_its_writer_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let server = crosscheck_opencode::ServerConfig {
            base_url: "http://127.0.0.1:4096".into(),
            password: Some("secret".into()),
        };
        record(&data, &server).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(&data)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let got = read(&data).unwrap();
        assert_eq!(got.url, "http://127.0.0.1:4096");
        assert_eq!(got.password.as_deref(), Some("secret"));
        // Another process's record stays.
        let other = AppServer {
            pid: got.pid.wrapping_add(1),
            ..got
        };
        std::fs::write(path(&data), serde_json::to_string(&other).unwrap()).unwrap();
        forget(&data).unwrap();
        assert!(path(&data).exists());
        record(&data, &server).unwrap();
        forget(&data).unwrap();
        assert!(!path(&data).exists());
        // A server elsewhere is never taken from the file.
        std::fs::write(
            path(&data),
            r#"{"url":"http://10.0.0.5:4096","password":"x","pid":1}"#,
        )
        .unwrap();
        assert!(read(&data).is_none());
    }
}
