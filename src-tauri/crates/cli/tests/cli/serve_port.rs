//! `crosscheck serve` keeps its address: the port of the last start is used again, and when
//! it is taken a free one is used with a line that says so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Started {
    child: Child,
    port: u16,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `crosscheck serve` (attached to a URL where nothing listens) and reads its
/// listening line.
fn start(data: &std::path::Path) -> Started {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["serve", "--opencode", "http://127.0.0.1:9"])
        .env("CROSSCHECK_DATA_DIR", data)
        .env("CROSSCHECK_CONFIG_DIR", data.join("config"))
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let (etx, erx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = etx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a listening line");
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    Started {
        child,
        port,
        stderr: erx,
    }
}

fn stderr_so_far(started: &Started) -> String {
    std::thread::sleep(Duration::from_millis(300));
    started.stderr.try_iter().collect()
}

#[test]
fn the_web_address_stays_the_same_and_a_taken_port_falls_back_with_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = start(&data);
    let port = first.port;
    drop(first);
    let second = start(&data);
    println!("first start on {port}, second on {}", second.port);
    assert_eq!(
        second.port, port,
        "the second start uses the first one's port"
    );
    drop(second);

    // Someone else holds it now: a free port, and a line that says the address changed.
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let third = start(&data);
    let err = stderr_so_far(&third);
    println!("third start on {}: {err}", third.port);
    assert_ne!(third.port, port);
    let fallback = third.port;
    assert!(
        err.contains(&port.to_string()) && err.contains(&third.port.to_string()),
        "the line names both ports: {err}"
    );
    drop(third);
    drop(holder);
    // The port last used is the one kept.
    let fourth = start(&data);
    assert_eq!(fourth.port, fallback);
}
