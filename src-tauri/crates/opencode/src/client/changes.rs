//! Routes that say what changed: diffs of the working tree and of a session's turns, the
//! session's todo list, and whether the server keeps snapshots (which the session diffs need).

use reqwest::Method;
use serde::de::DeserializeOwned;

use super::{Client, decode, dir_query, segment};
use crate::changes::{Entries, FileDiff, RecordingConfig, Todo};
use crate::error::Error;

/// The most a diff reply may weigh before it is refused (a huge diff is an error, not a hang).
pub const DIFF_BODY_LIMIT: usize = 32 * 1024 * 1024;
/// The most a todo list reply may weigh.
const TODO_BODY_LIMIT: usize = 4 * 1024 * 1024;

impl Client {
    /// `GET /vcs/diff?mode=git&directory=`: the working tree against HEAD, per file. A folder
    /// outside git answers an empty list.
    pub async fn vcs_diff(&self, directory: &str) -> Result<Vec<FileDiff>, Error> {
        let query = [("mode", "git"), ("directory", directory)];
        let large = self.inner.timeouts.large;
        let Entries(files) = self
            .get_limited("/vcs/diff".into(), &query, DIFF_BODY_LIMIT, large)
            .await?;
        Ok(files)
    }

    /// `GET /session/:id/diff[?messageID=]`: what the whole session changed, or only the turn
    /// that answered the user message `message_id`. Needs snapshots on; the server answers an
    /// empty list without them (and for an unknown session).
    pub async fn session_diff(
        &self,
        id: &str,
        message_id: Option<&str>,
    ) -> Result<Vec<FileDiff>, Error> {
        let query: Vec<(&str, &str)> = message_id.map(|m| ("messageID", m)).into_iter().collect();
        let path = format!("/session/{}/diff", segment(id));
        let large = self.inner.timeouts.large;
        let Entries(files) = self
            .get_limited(path, &query, DIFF_BODY_LIMIT, large)
            .await?;
        Ok(files)
    }

    /// `GET /session/:id/todo`: the session's todo list; an unknown session is
    /// [`Error::NotFound`].
    pub async fn todos(&self, id: &str) -> Result<Vec<Todo>, Error> {
        let path = format!("/session/{}/todo", segment(id));
        let request = self.inner.timeouts.request;
        let Entries(todos) = self
            .get_limited(path, &[], TODO_BODY_LIMIT, request)
            .await?;
        Ok(todos)
    }

    /// `GET /config?directory=`: whether the server keeps snapshots for the folder (unset is
    /// OpenCode's default, on).
    pub async fn snapshots_enabled(&self, directory: &str) -> Result<bool, Error> {
        let config: RecordingConfig = self
            .get_limited(
                "/config".into(),
                &dir_query(Some(directory)),
                TODO_BODY_LIMIT,
                self.inner.timeouts.request,
            )
            .await?;
        Ok(config.snapshot.unwrap_or(true))
    }

    /// A GET whose body may weigh at most `limit` bytes: a longer one is [`Error::TooLarge`]
    /// as soon as it passes the limit (it is not read to its end). `timeout` bounds the whole
    /// exchange.
    async fn get_limited<T: DeserializeOwned>(
        &self,
        path: String,
        query: &[(&str, &str)],
        limit: usize,
        timeout: std::time::Duration,
    ) -> Result<T, Error> {
        let call = self.call(Method::GET, path, query);
        let mut response = self.send(&call, self.builder(&call, Some(timeout))).await?;
        let too_large = || Error::TooLarge {
            what: call.label(),
            limit,
        };
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport(&call, e))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        decode(&call, &body)
    }
}
