//! OpenCode's experimental worktree routes: a git worktree per session (create, list, remove),
//! moving a session into one with its uncommitted changes, making a folder a repository, and
//! the raw diff and patch routes that carry a merge through a server on another machine.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::{Client, dir_query};
use crate::error::Error;
use crate::types::lenient;

/// A worktree the server made: its name, branch (`opencode/<name>`) and folder.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorktreeInfo {
    /// The name the server settled on (it appends words when the name is taken).
    #[serde(default, deserialize_with = "lenient")]
    pub name: String,
    /// The branch checked out in the worktree.
    #[serde(default, deserialize_with = "lenient")]
    pub branch: String,
    /// The worktree's folder, on the server's machine.
    #[serde(default, deserialize_with = "lenient")]
    pub directory: String,
}

/// Body of `POST /experimental/worktree`.
#[derive(Serialize)]
struct CreateBody<'a> {
    name: &'a str,
}

/// Body of `DELETE /experimental/worktree`.
#[derive(Serialize)]
struct RemoveBody<'a> {
    directory: &'a str,
}

/// Body of `POST /experimental/control-plane/move-session`.
#[derive(Serialize)]
struct MoveBody<'a> {
    #[serde(rename = "sessionID")]
    session_id: &'a str,
    destination: Destination<'a>,
    #[serde(rename = "moveChanges")]
    move_changes: bool,
}

/// Where a session moves to.
#[derive(Serialize)]
struct Destination<'a> {
    directory: &'a str,
}

/// Body of `POST /vcs/apply`.
#[derive(Serialize)]
struct ApplyBody<'a> {
    patch: &'a str,
}

impl Client {
    /// `POST /experimental/worktree?directory=<repo>`: a new worktree of the repository that
    /// holds `repo` on a new branch from its HEAD. The project's start scripts then run in the
    /// background (events `worktree.ready` / `worktree.failed`). A folder outside git is an
    /// HTTP 400 whose body names the reason.
    pub async fn create_worktree(&self, repo: &str, name: &str) -> Result<WorktreeInfo, Error> {
        let body = CreateBody { name };
        let (call, response) = self
            .send_json(
                Method::POST,
                "/experimental/worktree".into(),
                &dir_query(Some(repo)),
                Some(&body),
                Some(self.inner.timeouts.large),
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `GET /experimental/worktree?directory=<repo>`: the worktree folders of the project.
    pub async fn list_worktrees(&self, repo: &str) -> Result<Vec<String>, Error> {
        self.get_json("/experimental/worktree".into(), &dir_query(Some(repo)))
            .await
    }

    /// `DELETE /experimental/worktree?directory=<repo>`: removes the worktree's folder and its
    /// branch (uncommitted changes in it are lost).
    pub async fn remove_worktree(&self, repo: &str, worktree: &str) -> Result<(), Error> {
        let body = RemoveBody {
            directory: worktree,
        };
        self.send_json(
            Method::DELETE,
            "/experimental/worktree".into(),
            &dir_query(Some(repo)),
            Some(&body),
            Some(self.inner.timeouts.large),
        )
        .await?;
        Ok(())
    }

    /// `POST /experimental/control-plane/move-session`: moves a session to another folder,
    /// with its uncommitted changes when `move_changes` is set.
    pub async fn move_session(
        &self,
        session_id: &str,
        directory: &str,
        move_changes: bool,
    ) -> Result<(), Error> {
        let body = MoveBody {
            session_id,
            destination: Destination { directory },
            move_changes,
        };
        self.send_json(
            Method::POST,
            "/experimental/control-plane/move-session".into(),
            &[],
            Some(&body),
            Some(self.inner.timeouts.large),
        )
        .await?;
        Ok(())
    }

    /// `POST /project/git/init?directory=`: makes the folder a git repository.
    pub async fn git_init(&self, directory: &str) -> Result<(), Error> {
        self.send_json::<()>(
            Method::POST,
            "/project/git/init".into(),
            &dir_query(Some(directory)),
            None,
            Some(self.inner.timeouts.request),
        )
        .await?;
        Ok(())
    }

    /// `GET /vcs/diff/raw?directory=`: the folder's uncommitted changes as one patch.
    pub async fn vcs_diff_raw(&self, directory: &str) -> Result<String, Error> {
        let call = self.call(
            Method::GET,
            "/vcs/diff/raw".into(),
            &dir_query(Some(directory)),
        );
        let response = self
            .send(&call, self.builder(&call, Some(self.inner.timeouts.large)))
            .await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport(&call, e))?;
        // The route answers the patch either as text or as a JSON string.
        if let Ok(text) = serde_json::from_slice::<String>(&bytes) {
            return Ok(text);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `POST /vcs/apply?directory=`: applies a patch to the folder's working tree.
    pub async fn vcs_apply(&self, directory: &str, patch: &str) -> Result<(), Error> {
        self.send_json(
            Method::POST,
            "/vcs/apply".into(),
            &dir_query(Some(directory)),
            Some(&ApplyBody { patch }),
            Some(self.inner.timeouts.large),
        )
        .await?;
        Ok(())
    }
}
