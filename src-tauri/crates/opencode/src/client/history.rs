//! Going back and branching off: revert a session to a message, redo, fork it, read one message,
//! and the file search a composer suggests `@` mentions from.

use reqwest::Method;
use serde::Serialize;

use super::{Client, dir_query, segment};
use crate::error::Error;
use crate::types::{MessageWithParts, Session};

/// The most paths [`Client::find_files`] asks for (the server allows 200).
pub const FIND_LIMIT: usize = 200;

/// Body of `POST /session/:id/revert`.
#[derive(Serialize)]
struct RevertBody<'a> {
    #[serde(rename = "messageID")]
    message_id: &'a str,
}

/// Body of `POST /session/:id/fork`.
#[derive(Serialize)]
struct ForkBody<'a> {
    #[serde(rename = "messageID", skip_serializing_if = "Option::is_none")]
    message_id: Option<&'a str>,
}

impl Client {
    /// `POST /session/:id/revert`: undoes `message_id` and everything after it (the files too,
    /// when the server keeps snapshots) and answers the session with its `revert` set. The
    /// server answers 409 while the session runs a turn, and ignores a message it does not
    /// know (the answer's `revert` then names another message, or none).
    pub async fn revert(&self, id: &str, message_id: &str) -> Result<Session, Error> {
        let path = format!("/session/{}/revert", segment(id));
        let body = RevertBody { message_id };
        let (call, response) = self
            .send_json(
                Method::POST,
                path,
                &[],
                Some(&body),
                Some(self.inner.timeouts.request),
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `POST /session/:id/unrevert`: brings the reverted messages (and files) back; answers the
    /// session without `revert`. 409 while the session runs a turn.
    pub async fn unrevert(&self, id: &str) -> Result<Session, Error> {
        let path = format!("/session/{}/unrevert", segment(id));
        let (call, response) = self
            .send_json::<()>(
                Method::POST,
                path,
                &[],
                None,
                Some(self.inner.timeouts.request),
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `POST /session/:id/fork`: a new session in the same directory holding copies of the
    /// messages before `message_id` (all of them when `None`). The server copies everything
    /// for a message it does not know, so check the message first.
    pub async fn fork(&self, id: &str, message_id: Option<&str>) -> Result<Session, Error> {
        let path = format!("/session/{}/fork", segment(id));
        let body = ForkBody { message_id };
        let (call, response) = self
            .send_json(
                Method::POST,
                path,
                &[],
                Some(&body),
                Some(self.inner.timeouts.request),
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `GET /session/:id/message/:messageID`: one message with its parts; an unknown message
    /// is [`Error::NotFound`].
    pub async fn message(&self, id: &str, message_id: &str) -> Result<MessageWithParts, Error> {
        let path = format!("/session/{}/message/{}", segment(id), segment(message_id));
        self.get_json(path, &[]).await
    }

    /// `GET /find/file?query=&type=file&limit=`: paths of files in `directory` (relative to
    /// it) whose names match `query` fuzzily, best first; at most `limit` (1 to
    /// [`FIND_LIMIT`]).
    pub async fn find_files(
        &self,
        directory: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<String>, Error> {
        let limit = limit.clamp(1, FIND_LIMIT).to_string();
        let mut params = dir_query(Some(directory));
        params.extend([
            ("query", query),
            ("type", "file"),
            ("limit", limit.as_str()),
        ]);
        self.get_json("/find/file".into(), &params).await
    }
}
