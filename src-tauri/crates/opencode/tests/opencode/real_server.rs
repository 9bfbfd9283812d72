//! Against a real `opencode serve` (the binary pinned in `tests/package.json`, or `OPENCODE_BIN`):
//! the supervisor, every client route Crosscheck uses, the event stream, and message ids.
//! Needs the pinned binary from `tests/node_modules` (`make test` installs it first) or `OPENCODE_BIN`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crosscheck_opencode::{
    Client, CreateSession, Envelope, Error, Event, ModelRef, PromptRequest, ServerState,
    SessionPatch, StreamItem, StreamOptions, Supervisor, SupervisorOptions, TextPartInput, ids,
    spawn_event_stream,
};
use serde_json::json;
use tokio::sync::mpsc;

const OFFLINE_ENV: &[(&str, &str)] = &[
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_SHARE", "1"),
    ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    ("OPENCODE_PURE", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
    ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
    ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1"),
    ("OPENCODE_DISABLE_EMBEDDED_WEB_UI", "1"),
];

fn seed_config(dir: &Path) {
    std::fs::create_dir_all(dir.join("node_modules")).expect("mkdir");
    std::fs::write(
        dir.join("package.json"),
        r#"{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}"#,
    )
    .expect("write");
    std::fs::write(
        dir.join("package-lock.json"),
        r#"{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}"#,
    )
    .expect("write");
}

pub(crate) fn options(root: &Path) -> SupervisorOptions {
    let tests_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests");
    let mut env: Vec<(String, String)> = OFFLINE_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (key, sub) in [
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ] {
        let dir = root.join(sub);
        std::fs::create_dir_all(&dir).expect("mkdir");
        env.push((key.into(), dir.display().to_string()));
    }
    seed_config(&root.join("config/opencode"));
    // A model server that is not there: turns go `retry` until aborted.
    let config = json!({"autoupdate": false, "share": "disabled", "snapshot": false, "lsp": false, "formatter": false,
        "plugin": [], "enabled_providers": ["fake"], "model": "fake/fake-model", "small_model": "fake/fake-model",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": "http://127.0.0.1:9/v1", "apiKey": "sk-fake"},
            "models": {"fake-model": {"name": "Fake Model", "limit": {"context": 128000, "output": 4096}}}}}});
    let config_path = root.join("opencode.json");
    std::fs::write(&config_path, config.to_string()).expect("write config");
    env.push(("OPENCODE_CONFIG".into(), config_path.display().to_string()));
    let project = root.join("my project é");
    std::fs::create_dir_all(project.join("src")).expect("mkdir");
    // For the `@` file search.
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").expect("write");
    SupervisorOptions {
        binary: std::env::var_os("OPENCODE_BIN").map(PathBuf::from),
        search_dirs: vec![tests_dir],
        working_dir: project,
        extra_env: env,
    }
}

/// The stream's events one at a time: the rest of a batch waits for the next call.
struct Events {
    rx: mpsc::Receiver<StreamItem>,
    queued: VecDeque<Envelope>,
}

async fn until<T>(events: &mut Events, what: &str, mut f: impl FnMut(&Event) -> Option<T>) -> T {
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            while let Some(envelope) = events.queued.pop_front() {
                if let Some(found) = f(&envelope.event) {
                    return found;
                }
            }
            match events.rx.recv().await {
                Some(StreamItem::Events(batch)) => events.queued.extend(batch),
                Some(StreamItem::Malformed { error }) => {
                    panic!("malformed frame from the real server: {error}")
                }
                Some(_) => {}
                None => panic!("stream ended"),
            }
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no {what} event within 30 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn the_real_server_end_to_end() {
    let root = tempfile::tempdir().expect("tmp");
    let options = options(root.path());
    let started = std::time::Instant::now();
    let supervisor = Supervisor::start(options.clone())
        .await
        .expect("opencode serve starts");
    println!(
        "binary {} ready in {:?}",
        supervisor.binary().display(),
        started.elapsed()
    );
    let state = supervisor.state().borrow().clone();
    assert!(
        matches!(&state, ServerState::Ready { version, .. } if version == "1.18.33"),
        "{state:?}"
    );
    let client = Client::new(supervisor.config()).expect("client");
    let project = std::fs::canonicalize(&options.working_dir)
        .expect("canonical")
        .display()
        .to_string();

    let (tx, mut rx) = mpsc::channel(1024);
    let _stream = spawn_event_stream(client.clone(), tx, StreamOptions::default());
    assert_eq!(rx.recv().await, Some(StreamItem::Connected));
    let mut rx = Events {
        rx,
        queued: VecDeque::new(),
    };

    // Catalogs.
    let catalog = client.providers(Some(&project)).await.expect("providers");
    let fake = catalog
        .providers
        .iter()
        .find(|p| p.id == "fake")
        .expect("fake provider");
    assert_eq!(fake.models[0].id, "fake-model");
    assert_eq!(
        catalog.default.get("fake").map(String::as_str),
        Some("fake-model")
    );
    assert!(
        client
            .agents(Some(&project))
            .await
            .expect("agents")
            .iter()
            .any(|a| a.name == "build")
    );
    client.commands(Some(&project)).await.expect("commands");
    client.projects().await.expect("projects");

    // Sessions and metadata.
    let mut meta = serde_json::Map::new();
    meta.insert("app".into(), json!("crosscheck-test"));
    let created = client
        .create_session(
            &project,
            &CreateSession {
                title: Some("t1".into()),
                metadata: Some(meta),
                ..Default::default()
            },
        )
        .await
        .expect("create");
    assert_eq!(created.directory, project);
    assert_eq!(
        created.metadata.as_ref().and_then(|m| m.get("app")),
        Some(&json!("crosscheck-test"))
    );
    let id = created.id.clone();
    until(&mut rx, "session.created", |e| {
        matches!(e, Event::SessionCreated(s) if s.id == id).then_some(())
    })
    .await;
    let plain = client
        .create_session(&project, &CreateSession::default())
        .await
        .expect("create plain");
    assert_eq!(plain.metadata, None, "never set is absent, not {{}}");

    let mut replacement = serde_json::Map::new();
    replacement.insert("only".into(), json!("this"));
    let updated = client
        .update_session(
            &id,
            &SessionPatch {
                metadata: Some(replacement.clone()),
                ..Default::default()
            },
        )
        .await
        .expect("patch");
    assert_eq!(
        updated.metadata,
        Some(replacement),
        "metadata replaced, not merged"
    );
    let cleared = client
        .update_session(
            &id,
            &SessionPatch {
                metadata: Some(serde_json::Map::new()),
                ..Default::default()
            },
        )
        .await;
    let cleared = cleared.expect("clear");
    assert!(
        cleared.metadata.as_ref().is_none_or(|m| m.is_empty()),
        "{:?}",
        cleared.metadata
    );

    assert!(
        client
            .list_sessions(Some(&project))
            .await
            .expect("list")
            .iter()
            .any(|s| s.id == id)
    );
    assert!(
        client
            .list_all_sessions()
            .await
            .sessions
            .iter()
            .any(|s| s.id == id)
    );
    let missing = client
        .get_session("ses_doesnotexist000000000000")
        .await
        .expect_err("unknown id");
    assert!(matches!(missing, Error::NotFound { .. }), "{missing:?}");

    // A prompt with our own message id; the model is down, so the turn hangs until aborted.
    let message_id = ids::message_id();
    let prompt = PromptRequest {
        message_id: Some(message_id.clone()),
        parts: vec![
            TextPartInput::visible("hello"),
            TextPartInput::synthetic("hidden instructions"),
        ],
        model: Some(ModelRef {
            provider_id: "fake".into(),
            model_id: "fake-model".into(),
        }),
        ..Default::default()
    };
    client
        .prompt_async(&id, &prompt)
        .await
        .expect("prompt_async");
    until(&mut rx, "busy status", |e| {
        matches!(e, Event::SessionStatus { session_id, status } if *session_id == id && !status.is_idle()).then_some(())
    })
    .await;
    let statuses = client.statuses(None).await.expect("statuses");
    assert!(
        statuses.get(&id).is_some_and(|s| !s.is_idle()),
        "{statuses:?}"
    );
    // Wait for the assistant message so there are two messages to page through.
    let assistant = until(&mut rx, "assistant message", |e| match e {
        Event::MessageUpdated(m) if m.session_id == id && m.role == "assistant" => {
            Some(m.id.clone())
        }
        _ => None,
    })
    .await;
    assert!(
        assistant > message_id,
        "the server's next id {assistant} sorts after ours {message_id}"
    );
    // A revert while the turn runs is refused with 409 (SessionBusyError).
    let busy = client.revert(&id, &message_id).await.expect_err("busy");
    assert!(
        matches!(busy, Error::Status { status: 409, ref body } if body.contains("SessionBusyError")),
        "{busy:?}"
    );
    client.abort(&id).await.expect("abort");
    until(&mut rx, "session.idle", |e| {
        matches!(e, Event::SessionIdle { session_id } if *session_id == id).then_some(())
    })
    .await;

    let all = client.messages(&id, None, None).await.expect("messages");
    assert_eq!(
        all.messages[0].info.id, message_id,
        "our id is the user message's id"
    );
    assert!(
        all.messages[0]
            .parts
            .iter()
            .any(|p| p.synthetic && p.text.as_deref() == Some("hidden instructions"))
    );
    assert!(all.messages.len() >= 2);
    let reply = all
        .messages
        .iter()
        .find(|m| m.info.role == "assistant")
        .expect("an assistant message");
    assert_eq!(reply.info.parent_id.as_deref(), Some(message_id.as_str()));
    assert!(
        reply.info.tokens.is_some(),
        "the assistant step carries its tokens"
    );
    let newest = client
        .messages(&id, Some(1), None)
        .await
        .expect("newest page");
    assert_eq!(newest.messages.len(), 1);
    let cursor = newest.next_cursor.expect("a cursor for the older page");
    let older = client
        .messages(&id, Some(1), Some(&cursor))
        .await
        .expect("older page");
    assert_eq!(
        older.messages[0].info.id,
        all.messages[all.messages.len() - 2].info.id
    );

    // Go back and branch off: revert marks the session, redo clears it, a revert to an
    // unknown message changes nothing, a fork copies the messages before the one named.
    let one = client.message(&id, &message_id).await.expect("one message");
    assert_eq!(one.info.id, message_id);
    let gone = client
        .message(&id, "msg_doesnotexist00000000000")
        .await
        .expect_err("unknown message");
    assert!(matches!(gone, Error::NotFound { .. }), "{gone:?}");
    let reverted = client.revert(&id, &message_id).await.expect("revert");
    assert_eq!(
        reverted.revert.as_ref().map(|r| r.message_id.as_str()),
        Some(message_id.as_str())
    );
    let back = client.unrevert(&id).await.expect("unrevert");
    assert!(back.revert.is_none(), "{back:?}");
    let ignored = client
        .revert(&id, "msg_doesnotexist00000000000")
        .await
        .expect("the server ignores an unknown message");
    assert!(ignored.revert.is_none(), "{ignored:?}");
    let forked = client.fork(&id, Some(&assistant)).await.expect("fork");
    assert_ne!(forked.id, id);
    assert_eq!(forked.directory, project);
    let copied = client
        .messages(&forked.id, None, None)
        .await
        .expect("forked");
    assert_eq!(
        copied.messages.len(),
        1,
        "only the message before the assistant's"
    );
    let whole = client.fork(&id, None).await.expect("fork all");
    let copied = client
        .messages(&whole.id, None, None)
        .await
        .expect("forked");
    assert_eq!(copied.messages.len(), all.messages.len());
    // `src/main.rs` was written before the server started: it lists a folder's files once.
    let found = client.find_files(&project, "main", 10).await.expect("find");
    assert_eq!(found, ["src/main.rs"]);
    assert!(
        client
            .find_files(&project, "nothing-like-it", 10)
            .await
            .expect("find")
            .is_empty()
    );
    for extra in [&forked.id, &whole.id] {
        client.delete_session(extra).await.expect("delete fork");
    }

    // Delete.
    client.delete_session(&id).await.expect("delete");
    until(&mut rx, "session.deleted", |e| {
        matches!(e, Event::SessionDeleted(s) if s.id == id).then_some(())
    })
    .await;
    assert!(matches!(
        client.get_session(&id).await,
        Err(Error::NotFound { .. })
    ));
    client
        .delete_session(&plain.id)
        .await
        .expect("delete plain");

    let pid = supervisor.pid().expect("pid");
    supervisor.stop().await;
    assert!(client.health().await.is_err(), "server {pid} stopped");
}

/// More sessions than the server's default page (100) and than the client's first page (200)
/// in a git repository, plus sessions in folders outside git (OpenCode's `global` project):
/// the full listing returns each of them once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_listing_pages_and_includes_folders_outside_git() {
    let root = tempfile::tempdir().expect("tmp");
    let mut options = options(root.path());
    let repo = root.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "init"]);
    options.working_dir = repo.clone();
    let supervisor = Supervisor::start(options)
        .await
        .expect("opencode serve starts");
    let client = Client::new(supervisor.config()).expect("client");
    let canonical = |p: &Path| {
        std::fs::canonicalize(p)
            .expect("canonical")
            .display()
            .to_string()
    };
    let repo_dir = canonical(&repo);
    let plain: Vec<String> = ["notes", "scratch pad"]
        .iter()
        .map(|name| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).expect("mkdir");
            canonical(&dir)
        })
        .collect();

    const IN_REPO: usize = 230;
    let mut wanted = std::collections::BTreeSet::new();
    let mut created = 0;
    while created < IN_REPO {
        let batch = (IN_REPO - created).min(10);
        let made = futures_util::future::join_all((0..batch).map(|i| {
            let client = client.clone();
            let dir = repo_dir.clone();
            async move {
                client
                    .create_session(
                        &dir,
                        &CreateSession {
                            title: Some(format!("repo {}", created + i)),
                            ..Default::default()
                        },
                    )
                    .await
                    .expect("create in the repository")
            }
        }))
        .await;
        wanted.extend(made.into_iter().map(|s| s.id));
        created += batch;
    }
    for dir in &plain {
        for i in 0..2 {
            let s = client
                .create_session(
                    dir,
                    &CreateSession {
                        title: Some(format!("plain {i}")),
                        ..Default::default()
                    },
                )
                .await
                .expect("create outside git");
            assert_eq!(s.project_id, "global", "{s:?}");
            wanted.insert(s.id);
        }
    }
    assert_eq!(
        client.list_sessions(None).await.expect("own project").len(),
        IN_REPO,
        "the server's own project, paged past 100 and 200"
    );

    let listing = client.list_all_sessions().await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let ids: Vec<String> = listing.sessions.iter().map(|s| s.id.clone()).collect();
    let unique: std::collections::BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(ids.len(), unique.len(), "each session once");
    assert_eq!(unique, wanted, "every session the server has");
    supervisor.stop().await;
}
