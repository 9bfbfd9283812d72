//! Runs a local `opencode serve` on a private loopback port with a random password, waits
//! until it answers, and restarts it (same port, same password) when it dies.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rand::Rng;
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use ts_rs::TS;

use crate::client::{Client, ServerConfig, Timeouts};
use crate::error::{Error, truncate};

/// How to find and run `opencode serve`.
#[derive(Debug, Clone, Default)]
pub struct SupervisorOptions {
    /// The binary to run; when set, nothing else is tried (a bare name is looked up on `PATH`).
    pub binary: Option<PathBuf>,
    /// Folders whose `node_modules` may hold a pinned install (tried in order, after `PATH`).
    pub search_dirs: Vec<PathBuf>,
    /// Working directory of the server (its default project).
    pub working_dir: PathBuf,
    /// Extra environment for the server (e.g. `XDG_*` folders, `OPENCODE_DISABLE_*` switches).
    pub extra_env: Vec<(String, String)>,
}

/// Time limits and restart policy of a [`Supervisor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupervisorTuning {
    /// How long a start may take before it counts as failed.
    pub ready_timeout: Duration,
    /// How often `/global/health` is polled while starting.
    pub poll_interval: Duration,
    /// Delay before the first restart; doubles for each further quick restart.
    pub restart_backoff: Duration,
    /// Largest delay between restarts.
    pub max_restart_backoff: Duration,
    /// Restarts allowed in a row before giving up ([`ServerState::Failed`]).
    pub max_quick_restarts: u32,
    /// A server that stayed up this long before dying starts a fresh restart count.
    pub stable_after: Duration,
    /// How long [`Supervisor::stop`] waits after SIGTERM before it kills.
    pub stop_grace: Duration,
}

impl Default for SupervisorTuning {
    fn default() -> Self {
        Self {
            ready_timeout: Duration::from_secs(60),
            poll_interval: Duration::from_millis(100),
            restart_backoff: Duration::from_millis(500),
            max_restart_backoff: Duration::from_secs(10),
            max_quick_restarts: 5,
            stable_after: Duration::from_secs(60),
            stop_grace: Duration::from_secs(5),
        }
    }
}

/// The managed server's state, for the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ServerState {
    /// Starting for the first time.
    Starting,
    /// Answering on `url`.
    Ready {
        /// Base URL.
        url: String,
        /// Server version from `/global/health`.
        version: String,
    },
    /// It died and is being started again.
    Restarting {
        /// Restart attempt in the current series (1-based).
        attempt: u32,
        /// Why it died (or why the last attempt failed).
        reason: String,
    },
    /// It kept dying; no more restarts.
    Failed {
        /// The last failure.
        reason: String,
    },
    /// Stopped on request.
    Stopped,
}

/// Lines of server output kept for error messages.
const TAIL_LINES: usize = 50;
/// Lines of that tail quoted in an error.
const QUOTED_LINES: usize = 10;

type Tail = Arc<Mutex<VecDeque<String>>>;

/// A supervised local `opencode serve`. Dropping it kills the server; [`Supervisor::stop`]
/// asks it to exit first.
#[derive(Debug)]
pub struct Supervisor {
    config: ServerConfig,
    binary: PathBuf,
    state_tx: Arc<watch::Sender<ServerState>>,
    state_rx: watch::Receiver<ServerState>,
    stop_tx: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    pid: Arc<AtomicU32>,
    tail: Tail,
}

/// Everything needed to (re)start the server.
struct Launch {
    binary: PathBuf,
    working_dir: PathBuf,
    extra_env: Vec<(String, String)>,
    port: u16,
    config: ServerConfig,
    tuning: SupervisorTuning,
    tail: Tail,
    pid: Arc<AtomicU32>,
}

/// A started, ready server process.
struct Running {
    child: Child,
    output: Vec<JoinHandle<()>>,
    version: String,
}

impl Supervisor {
    /// Finds the binary, starts `opencode serve` on a free loopback port with a random
    /// password, and returns once it answers `/global/health` (or fails).
    pub async fn start(options: SupervisorOptions) -> Result<Supervisor, Error> {
        Self::start_with(options, SupervisorTuning::default()).await
    }

    /// [`Supervisor::start`] with explicit time limits and restart policy.
    pub async fn start_with(
        options: SupervisorOptions,
        tuning: SupervisorTuning,
    ) -> Result<Supervisor, Error> {
        let binary = find_binary(&options)?;
        let port = free_port()?;
        let config = ServerConfig {
            base_url: format!("http://127.0.0.1:{port}"),
            password: Some(random_password()),
        };
        let pid = Arc::new(AtomicU32::new(0));
        let tail: Tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let launch = Launch {
            binary: binary.clone(),
            working_dir: options.working_dir,
            extra_env: options.extra_env,
            port,
            config: config.clone(),
            tuning,
            tail: tail.clone(),
            pid: pid.clone(),
        };
        let (state_tx, state_rx) = watch::channel(ServerState::Starting);
        let running = launch.start().await?;
        state_tx.send_replace(ServerState::Ready {
            url: config.base_url.clone(),
            version: running.version.clone(),
        });
        let state_tx = Arc::new(state_tx);
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::spawn(supervise(running, launch, state_tx.clone(), stop_rx));
        Ok(Supervisor {
            config,
            binary,
            state_tx,
            state_rx,
            stop_tx: Some(stop_tx),
            task: Some(task),
            pid,
            tail,
        })
    }

    /// Where the server listens and its password.
    pub fn config(&self) -> ServerConfig {
        self.config.clone()
    }

    /// The server's state, as it changes.
    pub fn state(&self) -> watch::Receiver<ServerState> {
        self.state_rx.clone()
    }

    /// The binary that was started.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::SeqCst)).filter(|&p| p != 0)
    }

    /// The last lines the server wrote (stderr and stdout), oldest first.
    pub fn output_tail(&self) -> Vec<String> {
        lock(&self.tail).iter().cloned().collect()
    }

    /// Asks the server to exit (SIGTERM to its process group), kills it after the grace
    /// period, waits for it, and sets [`ServerState::Stopped`].
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop_tx.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.state_tx.send_replace(ServerState::Stopped);
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            // The child is still ours (not yet reaped), so its process group id is safe to use.
            #[cfg(unix)]
            if let Some(pid) = self.pid() {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            // Dropping the task drops the child, which kills it (`kill_on_drop`).
            task.abort();
            self.state_tx.send_replace(ServerState::Stopped);
        }
    }
}

fn lock(tail: &Tail) -> std::sync::MutexGuard<'_, VecDeque<String>> {
    tail.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Watches the running server and restarts it when it dies, until stopped or out of attempts.
async fn supervise(
    mut running: Running,
    launch: Launch,
    state: Arc<watch::Sender<ServerState>>,
    mut stop_rx: oneshot::Receiver<()>,
) {
    let tuning = launch.tuning;
    let mut attempt = 0u32;
    let mut up_since = Instant::now();
    loop {
        let status = tokio::select! {
            status = running.child.wait() => status,
            _ = &mut stop_rx => {
                launch.shutdown(&mut running).await;
                state.send_replace(ServerState::Stopped);
                return;
            }
        };
        launch.pid.store(0, Ordering::SeqCst);
        finish_output(&mut running.output).await;
        let mut reason = launch.exit_reason(status);
        tracing::warn!(%reason, "opencode serve exited");
        if up_since.elapsed() >= tuning.stable_after {
            attempt = 0;
        }
        loop {
            attempt += 1;
            if attempt > tuning.max_quick_restarts {
                let reason = format!(
                    "gave up after {} restarts: {reason}",
                    tuning.max_quick_restarts
                );
                state.send_replace(ServerState::Failed { reason });
                return;
            }
            state.send_replace(ServerState::Restarting {
                attempt,
                reason: reason.clone(),
            });
            let delay = tuning
                .restart_backoff
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(tuning.max_restart_backoff);
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = &mut stop_rx => {
                    state.send_replace(ServerState::Stopped);
                    return;
                }
            }
            let started = tokio::select! {
                started = launch.start() => started,
                _ = &mut stop_rx => {
                    state.send_replace(ServerState::Stopped);
                    return;
                }
            };
            match started {
                Ok(next) => {
                    running = next;
                    up_since = Instant::now();
                    state.send_replace(ServerState::Ready {
                        url: launch.config.base_url.clone(),
                        version: running.version.clone(),
                    });
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, attempt, "opencode serve did not restart");
                    reason = e.to_string();
                }
            }
        }
    }
}

impl Launch {
    /// Spawns the server and waits until it is ready; on failure nothing is left running.
    async fn start(&self) -> Result<Running, Error> {
        lock(&self.tail).clear();
        let mut command = Command::new(&self.binary);
        command
            .arg("serve")
            .arg("--hostname")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(self.port.to_string())
            .current_dir(&self.working_dir)
            .envs(self.extra_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(
                "OPENCODE_SERVER_PASSWORD",
                self.config.password.as_deref().unwrap_or_default(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, so stop() reaches the tools and servers it starts.
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(target_os = "linux")]
        die_with_parent(&mut command);
        let mut child = command
            .spawn()
            .map_err(|e| Error::Spawn(format!("{}: {e}", self.binary.display())))?;
        self.pid.store(child.id().unwrap_or(0), Ordering::SeqCst);

        let (ready_tx, ready_rx) = oneshot::channel();
        let mut output = Vec::with_capacity(2);
        if let Some(stdout) = child.stdout.take() {
            let needle = format!("listening on {}", self.config.base_url);
            output.push(tokio::spawn(pump(
                stdout,
                self.tail.clone(),
                Some((needle, ready_tx)),
            )));
        }
        if let Some(stderr) = child.stderr.take() {
            output.push(tokio::spawn(pump(stderr, self.tail.clone(), None)));
        }

        let client = Client::with_timeouts(
            self.config.clone(),
            Timeouts {
                connect: Duration::from_secs(1),
                request: Duration::from_secs(2),
                ..Timeouts::default()
            },
        )?;
        let outcome = tokio::select! {
            status = child.wait() => Err(match status {
                Ok(status) => {
                    self.pid.store(0, Ordering::SeqCst);
                    finish_output(&mut output).await;
                    Error::Spawn(self.exit_reason(Ok(status)))
                }
                Err(e) => Error::Spawn(format!("cannot watch opencode: {e}")),
            }),
            ready = wait_ready(&client, ready_rx, self.tuning) => ready,
        };
        match outcome {
            Ok(version) => Ok(Running {
                child,
                output,
                version,
            }),
            Err(error) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                self.pid.store(0, Ordering::SeqCst);
                for task in output {
                    task.abort();
                }
                Err(match error {
                    Error::NotReady(message) => Error::NotReady(self.with_tail(message)),
                    other => other,
                })
            }
        }
    }

    /// SIGTERM to the process group, then SIGKILL after the grace period.
    async fn shutdown(&self, running: &mut Running) {
        let pgid = running.child.id();
        #[cfg(unix)]
        if let Some(pid) = pgid {
            signal_group("-TERM", pid).await;
        }
        // No SIGTERM elsewhere: kill at once.
        #[cfg(not(unix))]
        let _ = running.child.start_kill();
        if tokio::time::timeout(self.tuning.stop_grace, running.child.wait())
            .await
            .is_err()
        {
            #[cfg(unix)]
            if let Some(pid) = pgid {
                signal_group("-KILL", pid).await;
            }
            let _ = running.child.start_kill();
            let _ = running.child.wait().await;
        }
        self.pid.store(0, Ordering::SeqCst);
        finish_output(&mut running.output).await;
    }

    fn exit_reason(&self, status: std::io::Result<ExitStatus>) -> String {
        let what = match status {
            Ok(status) => describe_status(status),
            Err(e) => format!("opencode could not be watched: {e}"),
        };
        self.with_tail(what)
    }

    /// `message`, followed by the server's last output lines when there are any.
    fn with_tail(&self, message: String) -> String {
        let tail = lock(&self.tail);
        if tail.is_empty() {
            return message;
        }
        let skip = tail.len().saturating_sub(QUOTED_LINES);
        let quoted: Vec<&str> = tail.iter().skip(skip).map(String::as_str).collect();
        format!("{message}; last output:\n{}", quoted.join("\n"))
    }
}

/// Makes the kernel kill the server when Crosscheck dies, however it dies (SIGKILL, a crash),
/// so no managed `opencode serve` outlives it. The signal follows the *thread* that spawned
/// the child: spawns run on the async runtime's worker threads, which live as long as the
/// process (nothing here moves a worker into the blocking pool). A parent that died between
/// fork and exec is caught by comparing the parent's pid.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and calls only the
    // async-signal-safe `prctl`, `getppid` and `_exit`.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(unix)]
async fn signal_group(signal: &str, pid: u32) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}

fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("opencode exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("opencode was killed by signal {signal}");
        }
    }
    format!("opencode exited ({status})")
}

/// Polls `/global/health` until it answers healthy. The ready line makes it ask again at once,
/// dropping a poll in flight: before that line the port may accept connections that never
/// get an answer.
async fn wait_ready(
    client: &Client,
    mut ready_line: oneshot::Receiver<()>,
    tuning: SupervisorTuning,
) -> Result<String, Error> {
    let deadline = Instant::now() + tuning.ready_timeout;
    let mut line_seen = false;
    let mut last_error = String::from("no answer yet");
    loop {
        tokio::select! {
            result = client.health() => {
                match result {
                    Ok(health) if health.healthy => return Ok(health.version),
                    Ok(_) => last_error = "the server says it is not healthy".to_owned(),
                    Err(e) => last_error = e.to_string(),
                }
                tokio::select! {
                    _ = tokio::time::sleep(tuning.poll_interval) => {}
                    _ = &mut ready_line, if !line_seen => line_seen = true,
                    _ = tokio::time::sleep_until(deadline) => {}
                }
            }
            _ = &mut ready_line, if !line_seen => line_seen = true,
            _ = tokio::time::sleep_until(deadline) => {
                let waited = tuning.ready_timeout.as_secs_f32();
                return Err(Error::NotReady(format!("no healthy answer within {waited:.1} s ({last_error})")));
            }
        }
    }
}

/// Copies a child's output into the tail (and the log), signalling the ready line once.
async fn pump<R: AsyncRead + Unpin>(
    reader: R,
    tail: Tail,
    mut ready: Option<(String, oneshot::Sender<()>)>,
) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end();
        if ready
            .as_ref()
            .is_some_and(|(needle, _)| line.contains(needle.as_str()))
            && let Some((_, tx)) = ready.take()
        {
            let _ = tx.send(());
        }
        tracing::debug!(target: "opencode_serve", "{line}");
        let mut tail = lock(&tail);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(truncate(line, 1000));
    }
}

/// Lets the output readers reach the end of the output (bounded), so the tail is complete.
async fn finish_output(output: &mut Vec<JoinHandle<()>>) {
    for task in output.drain(..) {
        let abort = task.abort_handle();
        if tokio::time::timeout(Duration::from_millis(500), task)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
}

/// A free loopback port (bound, read and released; the server binds it right after).
fn free_port() -> Result<u16, Error> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| Error::Spawn(format!("no free port: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::Spawn(format!("no free port: {e}")))?
        .port();
    Ok(port)
}

/// 32 URL-safe random characters.
fn random_password() -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Finds the `opencode` binary, in this order:
/// 1. `options.binary` when set (a bare name is looked up on `PATH`); nothing else is tried;
/// 2. `opencode` on `PATH`;
/// 3. for each of `options.search_dirs` in turn: the platform package of a pinned npm install
///    (`node_modules/opencode-linux-x64/bin/opencode` here, then its `-baseline`/`-musl`
///    builds), then `node_modules/.bin/opencode`.
pub fn find_binary(options: &SupervisorOptions) -> Result<PathBuf, Error> {
    find_binary_in(
        options.binary.as_deref(),
        std::env::var_os("PATH").as_deref(),
        &options.search_dirs,
    )
}

fn find_binary_in(
    explicit: Option<&Path>,
    path_var: Option<&OsStr>,
    search_dirs: &[PathBuf],
) -> Result<PathBuf, Error> {
    if let Some(binary) = explicit {
        let bare = binary.components().count() == 1 && !binary.has_root();
        if bare {
            if let Some(found) = on_path(binary.as_os_str(), path_var) {
                return Ok(found);
            }
        } else if is_executable(binary) {
            return Ok(binary.to_path_buf());
        }
        return Err(Error::Spawn(format!(
            "{} is not an executable file",
            binary.display()
        )));
    }
    if let Some(found) = on_path(OsStr::new(EXE), path_var) {
        return Ok(found);
    }
    let packages = platform_packages();
    for dir in search_dirs {
        let modules = dir.join("node_modules");
        let candidates = packages
            .iter()
            .map(|package| modules.join(package).join("bin").join(EXE))
            .chain(std::iter::once(modules.join(".bin").join(EXE)));
        for candidate in candidates {
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    let path_dirs: Vec<String> = path_var
        .map(|p| {
            std::env::split_paths(p)
                .filter(|d| d.is_absolute())
                .map(|d| d.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    let mut looked = vec![if path_dirs.is_empty() {
        format!("{EXE} on PATH (PATH is empty)")
    } else {
        format!("{EXE} on PATH ({})", path_dirs.join(":"))
    }];
    looked.extend(
        search_dirs
            .iter()
            .map(|d| format!("{}/", d.join("node_modules").display())),
    );
    Err(Error::NotInstalled { looked })
}

#[cfg(windows)]
const EXE: &str = "opencode.exe";
#[cfg(not(windows))]
const EXE: &str = "opencode";

/// npm packages that carry the binary for this platform, preferred first.
fn platform_packages() -> Vec<String> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "windows",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    ["", "-baseline", "-musl", "-baseline-musl"]
        .iter()
        .map(|suffix| format!("opencode-{os}-{arch}{suffix}"))
        .collect()
}

/// Looks `name` up in the absolute entries of `PATH`; a relative entry (`.`,
/// `node_modules/.bin`) would resolve against the current folder, which may be any repository.
fn on_path(name: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake_exe(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "#!/bin/sh\nexit 0\n").expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn path_of(dirs: &[&Path]) -> std::ffi::OsString {
        std::env::join_paths(dirs).expect("join")
    }

    #[test]
    fn lookup_order_is_explicit_then_path_then_search_dirs() {
        let tmp = tempfile::tempdir().expect("tmp");
        let bin = tmp.path().join("bin");
        let project_a = tmp.path().join("a");
        let project_b = tmp.path().join("b");
        let package = platform_packages().remove(0);
        let pinned_b = project_b
            .join("node_modules")
            .join(&package)
            .join("bin/opencode");
        let dotbin_b = project_b.join("node_modules/.bin/opencode");
        let dotbin_a = project_a.join("node_modules/.bin/opencode");
        fake_exe(&dotbin_b);
        fake_exe(&dotbin_a);
        let dirs = vec![project_a.clone(), project_b.clone()];
        let empty_path = path_of(&[&bin]);

        // Only search dirs: the first dir wins, even with a .bin shim only.
        assert_eq!(
            find_binary_in(None, Some(&empty_path), &dirs).expect("found"),
            dotbin_a
        );
        // Within one dir, the platform package beats the .bin shim.
        fake_exe(&pinned_b);
        assert_eq!(
            find_binary_in(None, Some(&empty_path), &dirs[1..]).expect("found"),
            pinned_b
        );
        // PATH beats the search dirs.
        fake_exe(&bin.join("opencode"));
        assert_eq!(
            find_binary_in(None, Some(&empty_path), &dirs).expect("found"),
            bin.join("opencode")
        );
        // An explicit path beats everything.
        let explicit = tmp.path().join("custom/opencode-dev");
        fake_exe(&explicit);
        assert_eq!(
            find_binary_in(Some(&explicit), Some(&empty_path), &dirs).expect("found"),
            explicit
        );
    }

    #[test]
    fn relative_path_entries_are_not_searched() {
        let cwd = std::env::current_dir().expect("cwd");
        // A relative entry that names a real folder under the current one.
        let rel = Path::new("target-relative-path-test");
        let _ = std::fs::remove_dir_all(cwd.join(rel));
        fake_exe(&cwd.join(rel).join("opencode"));
        let path = std::env::join_paths([rel.to_path_buf()]).expect("PATH");
        let found = find_binary_in(None, Some(&path), &[]);
        let _ = std::fs::remove_dir_all(cwd.join(rel));
        assert!(
            found.is_err(),
            "found {found:?} through a relative PATH entry"
        );
    }

    #[test]
    fn an_explicit_binary_that_is_missing_is_an_error_without_fallback() {
        let tmp = tempfile::tempdir().expect("tmp");
        let bin = tmp.path().join("bin");
        fake_exe(&bin.join("opencode"));
        let path = path_of(&[&bin]);
        let missing = tmp.path().join("nope/opencode");
        let err = find_binary_in(Some(&missing), Some(&path), &[]).expect_err("missing");
        assert_eq!(err.code(), "opencode_spawn");
        // A bare name is looked up on PATH.
        assert_eq!(
            find_binary_in(Some(Path::new("opencode")), Some(&path), &[]).expect("found"),
            bin.join("opencode")
        );
    }

    #[test]
    fn non_executable_files_and_folders_are_skipped() {
        let tmp = tempfile::tempdir().expect("tmp");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(bin.join("opencode")).expect("a folder named opencode");
        let other = tmp.path().join("other");
        std::fs::create_dir_all(&other).expect("mkdir");
        std::fs::write(other.join("opencode"), "not executable").expect("write");
        let path = path_of(&[&bin, &other]);
        let err = find_binary_in(None, Some(&path), &[tmp.path().to_path_buf()])
            .expect_err("none usable");
        assert_eq!(err.code(), "opencode_not_installed");
        let Error::NotInstalled { looked } = &err else {
            panic!("{err:?}")
        };
        assert!(looked[0].starts_with("opencode on PATH ("), "{looked:?}");
        assert!(looked[0].contains(&bin.display().to_string()), "{looked:?}");
        assert_eq!(
            looked[1],
            format!("{}/", tmp.path().join("node_modules").display())
        );
        let third = tmp.path().join("third");
        fake_exe(&third.join("opencode"));
        let path = path_of(&[&bin, &other, &third]);
        assert_eq!(
            find_binary_in(None, Some(&path), &[]).expect("found"),
            third.join("opencode")
        );
    }

    #[test]
    fn passwords_are_32_url_safe_characters_and_differ() {
        let a = random_password();
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(a, random_password());
    }

    #[test]
    fn state_serializes_with_a_state_tag() {
        let json = serde_json::to_value(ServerState::Ready {
            url: "u".into(),
            version: "v".into(),
        })
        .expect("json");
        assert_eq!(
            json,
            serde_json::json!({"state": "ready", "url": "u", "version": "v"})
        );
        let json = serde_json::to_value(ServerState::Restarting {
            attempt: 2,
            reason: "r".into(),
        })
        .expect("json");
        assert_eq!(
            json,
            serde_json::json!({"state": "restarting", "attempt": 2, "reason": "r"})
        );
    }
}
