//! New session's folder: the backend refuses a folder that does not exist or is a file (the
//! browser cannot check), remembers the folders sessions were created in, and suggests the
//! server's project folders without the filesystem root.

use crosscheck_core::requests::{CreateSession, CreateWorktree, InitRepository, RemoveWorktree};
use crosscheck_core::{ErrorCode, Request};
use serde_json::Value;

use crate::support::Harness;

fn create(directory: &str) -> Request {
    Request::CreateSession(CreateSession {
        directory: directory.to_owned(),
        title: None,
        server_id: None,
    })
}

/// A relative folder in a worktree request is refused here: the server would read it against
/// its own working folder and make (or remove) a worktree of whatever repository that is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_folder_is_refused_by_the_worktree_requests_before_the_server_is_asked() {
    let h = Harness::start().await;
    let requests = [
        Request::CreateWorktree(CreateWorktree {
            directory: "Greeting in English".to_owned(),
            name: "work".to_owned(),
            server_id: None,
        }),
        Request::InitRepository(InitRepository {
            directory: "relative/dir".to_owned(),
            server_id: None,
        }),
        Request::RemoveWorktree(RemoveWorktree {
            directory: "relative/dir".to_owned(),
            force: true,
            server_id: None,
        }),
    ];
    for request in requests {
        let what = format!("{request:?}");
        let err = h.request(request).await.expect_err(&what);
        assert_eq!(
            err.code,
            ErrorCode::FolderNotAbsolute,
            "{what}: {}",
            err.message
        );
    }
    let asked: Vec<String> = h
        .fake
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p.contains("worktree") || p.contains("git"))
        .collect();
    assert!(asked.is_empty(), "the server was asked: {asked:?}");
    h.stop().await;
}

fn creates(h: &Harness) -> usize {
    h.fake
        .requests()
        .iter()
        .filter(|r| r.route == "POST /session")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_folder_or_a_file_is_refused_before_the_server_is_asked() {
    let h = Harness::start().await;
    let missing = format!("{}/no-such-folder", h.fake.directory);
    let err = h
        .request(create(&missing))
        .await
        .expect_err("missing folder");
    assert_eq!(err.code, ErrorCode::FolderMissing);
    assert!(err.message.contains("no-such-folder"), "{}", err.message);

    let file = format!("{}/notes.txt", h.fake.directory);
    std::fs::write(&file, "x").expect("file");
    let err = h.request(create(&file)).await.expect_err("a file");
    assert_eq!(err.code, ErrorCode::NotAFolder);

    let err = h
        .request(create("relative/dir"))
        .await
        .expect_err("relative");
    assert_eq!(err.code, ErrorCode::FolderNotAbsolute);
    assert_eq!(creates(&h), 0, "nothing reached the server");

    let folders = h
        .request(Request::Folders(Default::default()))
        .await
        .expect("folders");
    assert_eq!(
        folders["recent"],
        Value::Array(vec![]),
        "a refused folder is not recent"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_folders_become_recent_newest_first_and_survive_a_restart() {
    let h = Harness::start().await;
    let other = h.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("other dir");
    let other = other.to_str().expect("utf-8").to_owned();
    let session = h
        .request(create(&format!("{}/", h.fake.directory)))
        .await
        .expect("create in the project");
    assert_eq!(
        session["directory"],
        h.fake.directory.as_str(),
        "trailing slash dropped"
    );
    h.request(create(&other)).await.expect("create in other");
    h.request(create(&h.fake.directory)).await.expect("again");

    let folders = h
        .request(Request::Folders(Default::default()))
        .await
        .expect("folders");
    assert_eq!(
        folders["recent"],
        serde_json::json!([h.fake.directory, other]),
        "newest first, each once"
    );
    // Kept in the database: another core on the same file sees them.
    let db =
        crosscheck_core::db::Db::open(&h.dir.path().join("db").join("crosscheck.db")).expect("db");
    assert_eq!(db.recent_folders(), [h.fake.directory.clone(), other]);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_folders_are_the_servers_projects_and_session_folders_without_the_root() {
    let h = Harness::start().await;
    h.fake.add_project("prj_other", "/srv/other-project");
    let folders = h
        .request(Request::Folders(Default::default()))
        .await
        .expect("folders");
    let known: Vec<String> =
        serde_json::from_value(folders["known"].clone()).expect("known is a list");
    assert_eq!(known[0], h.fake.directory);
    assert!(
        known.contains(&"/srv/other-project".to_owned()),
        "{known:?}"
    );
    assert!(
        !known.contains(&"/".to_owned()),
        "never the root: {known:?}"
    );
    assert_eq!(folders["current"], h.fake.directory.as_str());
    h.stop().await;
}
