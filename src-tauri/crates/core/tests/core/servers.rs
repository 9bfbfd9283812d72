//! Several OpenCode servers in one core, against two fake servers: each session says its server,
//! requests and flows on a session go to that server only, one server's fault leaves the other
//! streaming, the same address twice is refused, a removed server's sessions go with a notice,
//! and a server added in the app is followed again after a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::time::Duration;

use crate::support::{FakeOpencode, Harness, Reply, SHORT, add_second_server, wait_change};
use crosscheck_core::api_types::Connection;
use crosscheck_core::model::ids::ServerId;
use crosscheck_core::requests::{AddServer, ServerRef};
use crosscheck_core::{Change, Request};

async fn wait_for_session(h: &Harness, id: &str) -> crosscheck_core::api_types::SessionView {
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        if let Some(s) = h
            .snapshot()
            .await
            .sessions
            .into_iter()
            .find(|s| s.session.id == id)
        {
            return s;
        }
        assert!(tokio::time::Instant::now() < deadline, "{id} never listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_is_served_by_its_own_server() {
    let h = Harness::start().await;
    let on_main = h.fake.seed_session("On the main server", None);
    let (second, view) = add_second_server(&h, None, "Second").await;
    let on_second = second.seed_session("On the second server", None);

    let listed = wait_for_session(&h, &on_second).await;
    assert_eq!(listed.server_id, view.id);
    let main = wait_for_session(&h, &on_main).await;
    assert!(main.server_id.is_main());
    assert_eq!(h.snapshot().await.servers.len(), 2);

    // A prompt to the second server's session reaches the second server only.
    second.script(&on_second, Reply::text("from the second"));
    h.request(Request::SendPrompt(crosscheck_core::requests::SendPrompt {
        session_id: on_second.clone(),
        text: "Hello there".into(),
        choice: None,
        attachments: Vec::new(),
        revert_to: None,
    }))
    .await
    .expect("sent");
    second.wait_turns(&on_second, 1, SHORT).await;
    assert_eq!(second.prompts_to(&on_second).len(), 1);
    assert_eq!(h.fake.count("POST /session/:id/prompt_async"), 0);

    // A handoff of the second server's session makes its review session there.
    let run = h.handoff(&on_second, SHORT).await;
    let review = run
        .flow
        .review_session_id
        .clone()
        .expect("a review session");
    assert!(second.session(&review).is_some(), "{:?}", run.flow);
    assert!(h.fake.session(&review).is_none());
    assert_eq!(wait_for_session(&h, &review).await.server_id, view.id);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_server_down_leaves_the_other_streaming_and_its_sessions_listed() {
    let h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let kept = second.seed_session("Kept while down", None);
    wait_for_session(&h, &kept).await;

    let mut changes = h.core.subscribe();
    second.block_event_streams(true);
    second.drop_event_streams();
    let id = view.id.clone();
    wait_change(&mut changes, SHORT, "the second server reconnecting", move |c| {
        matches!(c, Change::Server { server } if server.id == id && matches!(server.connection, Connection::Reconnecting { .. }))
    })
    .await;
    assert!(
        matches!(h.core.connection(), Connection::Ready { .. }),
        "the main server stays ready"
    );
    // The main server still streams.
    let fresh = h.fake.seed_session("Made while the other is down", None);
    wait_for_session(&h, &fresh).await;
    // The down server's sessions stay listed.
    assert!(
        h.snapshot()
            .await
            .sessions
            .iter()
            .any(|s| s.session.id == kept)
    );

    second.block_event_streams(false);
    let id = view.id.clone();
    wait_change(&mut changes, SHORT, "the second server back", move |c| {
        matches!(c, Change::Server { server } if server.id == id && matches!(server.connection, Connection::Ready { .. }))
    })
    .await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_address_twice_is_refused_and_a_removed_server_takes_its_sessions() {
    let h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let gone = second.seed_session("Goes with its server", None);
    wait_for_session(&h, &gone).await;

    let respelled = second.base_url.replace("127.0.0.1", "localhost") + "/";
    let err = h
        .request(Request::AddServer(AddServer {
            url: respelled,
            password: None,
            name: None,
        }))
        .await
        .expect_err("a duplicate is refused");
    assert!(
        err.message.contains("already in the list"),
        "{}",
        err.message
    );
    let main_again = h
        .request(Request::AddServer(AddServer {
            url: h.fake.base_url.clone(),
            password: None,
            name: None,
        }))
        .await;
    assert!(
        main_again.is_err(),
        "the main server's address is taken too"
    );
    let attach_to_second = h
        .request(Request::AttachServer(
            crosscheck_core::requests::AttachServer {
                url: second.base_url.clone(),
                password: None,
            },
        ))
        .await;
    assert!(
        attach_to_second.is_err(),
        "the main server cannot be moved onto another server's address"
    );

    let mut changes = h.core.subscribe();
    h.request(Request::RemoveServer(ServerRef {
        server_id: view.id.clone(),
    }))
    .await
    .expect("removed");
    wait_change(
        &mut changes,
        SHORT,
        "the removal notice",
        |c| matches!(c, Change::Notice { notice } if notice.code == "server.removed"),
    )
    .await;
    let snapshot = h.snapshot().await;
    assert_eq!(snapshot.servers.len(), 1);
    assert!(!snapshot.sessions.iter().any(|s| s.session.id == gone));
    h.stop().await;
}

/// A handoff on a second server is making its review session when the server is removed: the
/// session the server answers with afterwards is not listed (it would have shown under the
/// main server), and the flow ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_session_answered_after_its_server_was_removed_stays_out() {
    let h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let o = second.seed_session("Handed off on the second", None);
    wait_for_session(&h, &o).await;
    second.script(&o, Reply::text("The handoff."));
    second.delay_route("POST /session", Duration::from_millis(800));
    let mut changes = h.core.subscribe();
    let started = h.start_handoff(&o).await;
    // The review session is asked for (its answer delayed) when the server goes. Looked for by
    // polling: the fake wakes its waiters when it answers, and this request is not answered yet.
    let deadline = tokio::time::Instant::now() + SHORT;
    while !second.with_state(|st| st.requests.iter().any(|r| r.route == "POST /session")) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the review session never asked for"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.request(Request::RemoveServer(ServerRef {
        server_id: view.id.clone(),
    }))
    .await
    .expect("removed");
    let id = started.id.clone();
    wait_change(
        &mut changes,
        SHORT,
        "the flow to end",
        move |c| matches!(c, Change::Flow { flow } if flow.id == id && flow.step.is_final()),
    )
    .await;
    // The server answered with the review session once its delay was over.
    second
        .wait_until("the review session answered", SHORT, |st| {
            st.requests
                .iter()
                .any(|r| r.route == "POST /session" && r.status == 200)
        })
        .await;
    // Time for the flow to take the answer in.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let listed: Vec<String> = h
        .snapshot()
        .await
        .sessions
        .into_iter()
        .map(|s| s.session.title)
        .collect();
    assert!(
        !listed.iter().any(|t| t.starts_with("Review:")),
        "the removed server's review session is listed: {listed:?}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_in_the_app_is_followed_again_after_a_restart() {
    let mut h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let s = second.seed_session("Still here after a restart", None);
    wait_for_session(&h, &s).await;
    h.restart_core().await;
    let listed = wait_for_session(&h, &s).await;
    assert_eq!(listed.server_id, view.id);
    let servers = h.snapshot().await.servers;
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[1].name, "Second");
    assert!(servers[1].saved);
    h.stop().await;
}

/// Requests on a second-server session ask that server, not the main one: the transcript search
/// reads the session from its own server (and finds its line), and the pickers of that session
/// list the second server's providers, agents and commands; New session's folders for that
/// server come from it as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_on_a_second_server_session_ask_that_server() {
    let h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let cold = second.seed_session("Cold on the second server", None);
    second.seed_text(&cold, "user", "where does the widget parser stall?");
    wait_for_session(&h, &cold).await;

    // Search: the session's transcript is not held, so it is read from its server.
    let mut changes = h.core.subscribe();
    let first: crosscheck_core::search::SearchProgress = serde_json::from_value(
        h.request(Request::SearchTranscripts(
            crosscheck_core::requests::search::SearchTranscripts {
                query: "widget parser".into(),
            },
        ))
        .await
        .expect("search"),
    )
    .unwrap();
    let search_id = first.search_id;
    let last = if first.done {
        Change::Search { progress: first }
    } else {
        wait_change(&mut changes, SHORT, "the search to finish", move |c| {
            matches!(c, Change::Search { progress } if progress.done && progress.search_id == search_id)
        })
        .await
    };
    let Change::Search { progress } = last else {
        unreachable!()
    };
    assert!(
        progress.unread.is_empty(),
        "every session could be read: {:?}",
        progress.unread
    );
    let found: Vec<(&str, &str)> = progress
        .hits
        .iter()
        .map(|x| (x.session_id.as_str(), x.line.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![(cold.as_str(), "where does the widget parser stall?")]
    );
    assert!(
        !second
            .requests_to("GET /session/:id/message", &cold)
            .is_empty(),
        "read from the second server"
    );
    assert!(
        h.fake
            .requests_to("GET /session/:id/message", &cold)
            .is_empty(),
        "not asked of the main server"
    );

    // The pickers of that session: its server's catalog.
    let routes = ["GET /config/providers", "GET /agent", "GET /command"];
    let counts = |fake: &FakeOpencode| routes.map(|r| fake.count(r));
    let (main_before, second_before) = (counts(&h.fake), counts(&second));
    h.request(Request::Providers(crosscheck_core::requests::Providers {
        directory: None,
        session_id: Some(cold.clone()),
        server_id: None,
    }))
    .await
    .expect("providers");
    h.request(Request::Agents(crosscheck_core::requests::Agents {
        directory: None,
        session_id: Some(cold.clone()),
        server_id: None,
    }))
    .await
    .expect("agents");
    h.request(Request::Commands(crosscheck_core::requests::Commands {
        directory: None,
        session_id: None,
        server_id: Some(view.id.clone()),
    }))
    .await
    .expect("commands");
    assert_eq!(
        counts(&second),
        second_before.map(|n| n + 1),
        "asked of the second server"
    );
    assert_eq!(counts(&h.fake), main_before, "not of the main one");

    // New session's folders for the second server: its own folder.
    let folders = h
        .request(Request::Folders(crosscheck_core::requests::Folders {
            server_id: Some(view.id.clone()),
        }))
        .await
        .expect("folders");
    assert_eq!(folders["current"], second.directory.as_str());
    h.stop().await;
}

/// Folder requests that name the second server go to it: making a folder a repository and a
/// new worktree are asked of the second server only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worktree_requests_naming_the_second_server_go_to_it() {
    let h = Harness::start().await;
    let (second, view) = add_second_server(&h, None, "Second").await;
    let repo = h.dir.path().join("second-repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "-c",
        "user.email=t@example.invalid",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "first",
    ]);
    let dir = repo.to_str().unwrap().to_owned();
    let asked = |fake: &FakeOpencode| {
        fake.requests()
            .iter()
            .filter(|r| {
                r.path.starts_with("/experimental/worktree") || r.path == "/project/git/init"
            })
            .count()
    };
    // The fake has no worktree routes: what matters is which server was asked.
    let _ = h
        .request(Request::InitRepository(
            crosscheck_core::requests::InitRepository {
                directory: dir.clone(),
                server_id: Some(view.id.clone()),
            },
        ))
        .await;
    let _ = h
        .request(Request::CreateWorktree(
            crosscheck_core::requests::CreateWorktree {
                directory: dir.clone(),
                name: "feature".into(),
                server_id: Some(view.id.clone()),
            },
        ))
        .await;
    assert_eq!(asked(&second), 2, "both asked of the second server");
    assert_eq!(asked(&h.fake), 0, "neither of the main one");
    h.stop().await;
}

/// A server that is not saved in the app (the main one, one given with `--opencode`) keeps the
/// name the user gave it across a restart: the main server by its place, the other by its
/// address when it is given again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renamed_servers_that_are_not_saved_keep_their_names_after_a_restart() {
    use crosscheck_core::requests::RenameServer;
    use crosscheck_core::requests::server::add_unsaved;
    use crosscheck_opencode::ServerConfig;

    let mut h = Harness::start().await;
    let project = h.dir.path().join("given");
    std::fs::create_dir_all(&project).unwrap();
    let given = FakeOpencode::start(project.to_str().unwrap()).await;
    let config = ServerConfig {
        base_url: given.base_url.clone(),
        password: None,
    };
    let id = add_unsaved(&h.core, config.clone()).unwrap();
    for (server_id, name) in [(ServerId::main(), "Laptop"), (id, "Build box")] {
        h.request(Request::RenameServer(RenameServer {
            server_id,
            name: format!("  {name} "),
        }))
        .await
        .unwrap();
    }

    h.restart_core().await;
    let again = add_unsaved(&h.core, config).unwrap();
    let servers = h.snapshot().await.servers;
    let name_of = |id: &ServerId| servers.iter().find(|s| &s.id == id).map(|s| s.name.clone());
    assert_eq!(name_of(&ServerId::main()).as_deref(), Some("Laptop"));
    assert_eq!(name_of(&again).as_deref(), Some("Build box"));
    assert!(
        servers.iter().all(|s| !s.saved),
        "neither is saved in the app's list"
    );
    h.stop().await;
    drop(given);
}
