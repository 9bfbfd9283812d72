//! Shared set-up for the core's end-to-end tests: a fake OpenCode server and a core attached to
//! it, driven through the typed Api exactly as the UI drives it.
#![allow(dead_code)] // not every suite uses every helper
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crosscheck_core::api_types::{Connection, Notice, Snapshot};
use crosscheck_core::flows::FlowState;
use crosscheck_core::{
    Api, ApiError, Change, Core, CoreOptions, OpencodeTarget, Request, ReviewSetup,
};
use crosscheck_opencode::ServerConfig;
use crosscheck_review::{Env, Logger};
use serde_json::Value;

pub use crosscheck_testkit::changes::{next_change, wait_change, wait_ready};
pub use crosscheck_testkit::fake_opencode::{FakeOpencode, Reply};

/// A generous limit for things that take milliseconds when they work.
pub const SHORT: Duration = Duration::from_secs(30);

/// A core attached to a fresh fake server, with its own database.
pub struct Harness {
    pub fake: FakeOpencode,
    pub core: Core,
    pub api: Api,
    pub dir: tempfile::TempDir,
}

/// How a handoff flow ended, with what the UI saw meanwhile.
pub struct FlowRun {
    /// The final state.
    pub flow: FlowState,
    /// Notices pushed while it ran.
    pub notices: Vec<Notice>,
    /// Every change pushed while it ran.
    pub changes: Vec<Change>,
}

impl Harness {
    /// Starts the fake and the core, and waits (on the change stream) until the core is Ready.
    /// The cold review engine reads no real config or keys: an empty `<dir>/config` and an
    /// empty environment.
    pub async fn start() -> Harness {
        Self::start_with_review(|dir| ReviewSetup {
            config_dir: dir.join("config"),
            env: Env::Map(Default::default()),
            logger: Logger::memory().0,
        })
        .await
    }

    /// Like [`Harness::start`], with the review engine set up by `review` (given the temp dir).
    pub async fn start_with_review(
        review: impl FnOnce(&std::path::Path) -> ReviewSetup,
    ) -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).expect("project dir");
        let fake = FakeOpencode::start(project.to_str().expect("utf-8 path")).await;
        let core = Core::start_with_review(
            CoreOptions {
                target: OpencodeTarget::Attach(ServerConfig {
                    base_url: fake.base_url.clone(),
                    password: None,
                }),
                database: dir.path().join("db").join("crosscheck.db"),
            },
            review(dir.path()),
        )
        .expect("core starts");
        let mut changes = core.subscribe();
        wait_ready(&core, &mut changes, SHORT).await;
        let api = Api::new(core.clone());
        Harness {
            fake,
            core,
            api,
            dir,
        }
    }

    /// Ends the fake's event streams and waits for the core to reconnect and resync.
    pub async fn reconnect(&self) {
        let mut changes = self.core.subscribe();
        self.fake.drop_event_streams();
        wait_change(&mut changes, SHORT, "Connection::Reconnecting", |c| {
            matches!(
                c,
                Change::Connection {
                    connection: Connection::Reconnecting { .. }
                }
            )
        })
        .await;
        wait_change(&mut changes, SHORT, "Connection::Ready", |c| {
            matches!(
                c,
                Change::Connection {
                    connection: Connection::Ready { .. }
                }
            )
        })
        .await;
    }

    /// Runs one request as the UI would; the response as the transport would serialize it.
    pub async fn request(&self, request: Request) -> Result<Value, ApiError> {
        let response = self.api.handle(request).await?;
        Ok(serde_json::to_value(response).expect("a response serializes"))
    }

    /// The UI's first-frame snapshot.
    pub async fn snapshot(&self) -> Snapshot {
        let value = self.request(Request::Snapshot).await.expect("snapshot");
        serde_json::from_value(value).expect("snapshot shape")
    }

    /// Starts the handoff of `session_id` with the default choices; answers its first state.
    pub async fn start_handoff(&self, session_id: &str) -> FlowState {
        let started = self
            .request(Request::StartHandoffReview(
                crosscheck_core::requests::StartHandoffReview {
                    session_id: session_id.to_owned(),
                    choice: None,
                    reviewer: None,
                    review_loop: None,
                },
            ))
            .await
            .expect("the handoff starts");
        serde_json::from_value(started).expect("flow state")
    }

    /// Starts the handoff of `session_id` and waits (on the change stream, within `limit` of
    /// tokio time) for the flow to end.
    pub async fn handoff(&self, session_id: &str, limit: Duration) -> FlowRun {
        let mut changes = self.core.subscribe();
        let first = self.start_handoff(session_id).await;
        let mut notices = Vec::new();
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let stamped = next_change(&mut changes, deadline, "the handoff flow to end").await;
            if let Change::Notice { notice } = &stamped.change {
                notices.push(notice.clone());
            }
            let end = match &stamped.change {
                Change::Flow { flow } if flow.id == first.id && flow.step.is_final() => {
                    Some(flow.clone())
                }
                _ => None,
            };
            seen.push(stamped.change);
            if let Some(flow) = end {
                return FlowRun {
                    flow,
                    notices,
                    changes: seen,
                };
            }
        }
    }

    /// Shuts the core down and starts a new one on the same database and fake server, as a
    /// restart of the app does; waits until it is Ready.
    pub async fn restart_core(&mut self) {
        self.core.shutdown().await;
        let core = Core::start_with_review(
            CoreOptions {
                target: OpencodeTarget::Attach(ServerConfig {
                    base_url: self.fake.base_url.clone(),
                    password: None,
                }),
                database: self.dir.path().join("db").join("crosscheck.db"),
            },
            ReviewSetup {
                config_dir: self.dir.path().join("config"),
                env: Env::Map(Default::default()),
                logger: Logger::memory().0,
            },
        )
        .expect("core restarts");
        let mut changes = core.subscribe();
        wait_ready(&core, &mut changes, SHORT).await;
        self.api = Api::new(core.clone());
        self.core = core;
    }

    /// Shuts the core down.
    pub async fn stop(self) {
        self.core.shutdown().await;
    }
}

/// Whether a change says `session_id` runs: its busy status, or a listing with it running. A
/// listing answered after the turn began (the one after a reconnect, or the one that follows the
/// stream's first event) already carries it, and the status event after it changes nothing.
pub fn session_runs(session_id: &str) -> impl Fn(&Change) -> bool + use<> {
    let id = session_id.to_owned();
    move |c| match c {
        Change::Status { session_id, status } => *session_id == id && !status.is_idle(),
        Change::SessionsReset { statuses, .. } => statuses.contains_key(&id),
        _ => false,
    }
}

/// The texts of a recorded prompt body's parts, with their synthetic flags.
pub fn part_texts(body: &Value) -> Vec<(String, bool)> {
    body["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .map(|p| {
                    (
                        p["text"].as_str().unwrap_or_default().to_owned(),
                        p["synthetic"] == true,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The only visible text of a recorded prompt (asserting there is exactly one visible part,
/// first; what follows it is hidden: the review loop's synthetic instructions).
pub fn sole_text(body: &Value) -> String {
    let parts = part_texts(body);
    assert!(!parts.is_empty(), "a part expected: {body}");
    assert!(!parts[0].1, "the first part must be visible: {body}");
    assert!(
        parts[1..].iter().all(|(_, synthetic)| *synthetic),
        "only the first part is visible: {body}"
    );
    parts[0].0.clone()
}

/// Words agents must never see.
pub const FORBIDDEN: &[&str] = &[
    "ses_",
    "msg_",
    "openchamber",
    "metadata",
    "linked",
    "routing",
];

/// Asserts `text` contains none of [`FORBIDDEN`] (case-insensitively).
pub fn assert_leaks_nothing(text: &str) {
    let lower = text.to_lowercase();
    for word in FORBIDDEN {
        assert!(
            !lower.contains(word),
            "{word:?} must not reach an agent, found in:\n{text}"
        );
    }
}

/// Starts a second fake server (its project folder `second` under the harness's folder), adds
/// it in the app with `password` and `name`, and answers it and its server view once it is
/// Ready.
pub async fn add_second_server(
    h: &Harness,
    password: Option<&str>,
    name: &str,
) -> (FakeOpencode, crosscheck_core::api_types::ServerView) {
    use crosscheck_core::api_types::{Connection, ServerView};
    let project = h.dir.path().join("second");
    std::fs::create_dir_all(&project).unwrap();
    let fake = FakeOpencode::start(project.to_str().unwrap()).await;
    let mut changes = h.core.subscribe();
    let added: ServerView = serde_json::from_value(
        h.request(Request::AddServer(crosscheck_core::requests::AddServer {
            url: fake.base_url.clone(),
            password: password.map(str::to_owned),
            name: Some(name.to_owned()),
        }))
        .await
        .expect("added"),
    )
    .unwrap();
    let id = added.id.clone();
    wait_change(&mut changes, SHORT, "the second server to be ready", move |c| {
        matches!(c, Change::Server { server } if server.id == id && matches!(server.connection, Connection::Ready { .. }))
    })
    .await;
    (fake, added)
}
