//! Where a saved server's password is kept, through the core as the app runs it: in the
//! desktop's Secret Service keyring when one answers (a real GNOME Keyring on a private
//! session bus), else in a file only the user can read; never in SQLite, never in both; a
//! password left in a file moves into the keyring once one answers.
//!
//! Each test runs its body in a child process of this test binary with the session bus it
//! needs (none, or a fresh one with a keyring), so the keyring of whoever runs the tests is
//! never touched and no test shares a process environment with another.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::path::Path;
use std::process::Command;

use crate::support::{Harness, SHORT, add_second_server};
use crosscheck_core::Request;
use crosscheck_core::api_types::PasswordStore;
use crosscheck_core::requests::PasswordStorage;
use crosscheck_core::servers::secret::{FileStore, KeyringStore, SecretStore};

const CHILD: &str = "CROSSCHECK_TEST_CHILD";
const PASSWORD: &str = "pw-7f3a91c2-unique";

/// True in the child that runs `name`'s body; in the parent, runs that child through `wrap`
/// (the command that gives it its session bus) and asserts it passed.
fn in_child(name: &str, wrap: impl FnOnce(&Path, &[&str]) -> Command) -> bool {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return true;
    }
    let exe = std::env::current_exe().unwrap();
    let path = format!("server_passwords::{name}");
    let args = ["--exact", path.as_str(), "--nocapture", "--test-threads=1"];
    let mut cmd = wrap(&exe, &args);
    cmd.env(CHILD, name);
    let out = cmd.output().expect("the child test starts");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the child test failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    false
}

/// Every file under `dir` that holds `needle` (the database, its journal, password files).
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

async fn storage(h: &Harness) -> PasswordStorage {
    serde_json::from_value(h.request(Request::PasswordStorage).await.unwrap()).unwrap()
}

#[test]
fn without_a_keyring_a_saved_password_is_in_a_file_only_the_user_can_read() {
    if !in_child(
        "without_a_keyring_a_saved_password_is_in_a_file_only_the_user_can_read",
        |exe, args| {
            let mut cmd = Command::new(exe);
            cmd.args(args).env_remove("DBUS_SESSION_BUS_ADDRESS");
            cmd
        },
    ) {
        return;
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut h = Harness::start().await;
        let (_second, view) = add_second_server(&h, Some(PASSWORD), "Locked box").await;
        assert_eq!(view.password_store, Some(PasswordStore::File));
        let where_kept = storage(&h).await;
        assert_eq!(where_kept.store, PasswordStore::File);

        let data = h.dir.path().join("db");
        let file = FileStore::new(&data).path(&view.id);
        assert_eq!(
            where_kept.location.as_deref(),
            file.parent().and_then(|p| p.to_str())
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
        // Only the password file holds it: not the database nor its journal.
        assert_eq!(
            files_holding(&data, PASSWORD),
            vec![file.display().to_string()]
        );

        // Restored with its password after a restart.
        h.restart_core().await;
        let servers = h.snapshot().await.servers;
        let restored = servers.iter().find(|s| s.id == view.id).unwrap();
        assert!(restored.saved);
        let deadline = tokio::time::Instant::now() + SHORT;
        while h
            .snapshot()
            .await
            .servers
            .iter()
            .find(|s| s.id == view.id)
            .and_then(|s| s.password_store)
            != Some(PasswordStore::File)
        {
            assert!(tokio::time::Instant::now() < deadline, "password not read");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        h.stop().await;
    });
}

#[test]
fn with_a_keyring_a_saved_password_is_in_it_and_moves_there_from_its_file() {
    let home = tempfile::tempdir().unwrap();
    if !in_child(
        "with_a_keyring_a_saved_password_is_in_it_and_moves_there_from_its_file",
        |exe, args| {
            let mut cmd = Command::new("dbus-run-session");
            cmd.args([
                "--",
                "sh",
                "-c",
                "echo unlock | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
                 && exec \"$@\"",
                "sh",
            ])
            .arg(exe)
            .args(args)
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("share"))
            .env_remove("CROSSCHECK_SECRET_STORE");
            cmd
        },
    ) {
        return;
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        assert!(KeyringStore::answers().await, "gnome-keyring answers");
        let mut h = Harness::start().await;
        let (_second, view) = add_second_server(&h, Some(PASSWORD), "Locked box").await;
        assert_eq!(view.password_store, Some(PasswordStore::Keyring));
        assert_eq!(storage(&h).await.store, PasswordStore::Keyring);
        assert_eq!(
            KeyringStore.get(&view.id).await.unwrap().as_deref(),
            Some(PASSWORD)
        );
        // Not in a file, not in the database.
        let data = h.dir.path().join("db");
        assert!(!FileStore::new(&data).path(&view.id).exists());
        assert_eq!(files_holding(&data, PASSWORD), Vec::<String>::new());

        // A password left in a file (saved while no keyring answered) moves into the keyring
        // at the next start, and its file goes.
        KeyringStore.forget(&view.id).await.unwrap();
        FileStore::new(&data)
            .put(&view.id, "from-the-file")
            .await
            .unwrap();
        h.restart_core().await;
        let deadline = tokio::time::Instant::now() + SHORT;
        loop {
            let kept = KeyringStore.get(&view.id).await.unwrap();
            if kept.as_deref() == Some("from-the-file") {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not moved: {kept:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(!FileStore::new(&data).path(&view.id).exists());
        assert_eq!(files_holding(&data, "from-the-file"), Vec::<String>::new());

        // Removing the server forgets its password in the keyring.
        h.request(Request::RemoveServer(
            crosscheck_core::requests::ServerRef {
                server_id: view.id.clone(),
            },
        ))
        .await
        .unwrap();
        assert_eq!(KeyringStore.get(&view.id).await.unwrap(), None);
        h.stop().await;
    });
}
