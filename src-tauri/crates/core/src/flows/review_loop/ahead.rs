//! The implementer's code, fingerprinted ahead of its reply: taken when its prompt is accepted
//! and again whenever one of its tool calls ends (edits land through tools) or the server says
//! files changed, so that once a reply claiming a fix completes, the code as it left it is
//! usually known already and the step goes straight to the reviewer's prompt.
//!
//! A fingerprint is used only when nothing that can move the code was seen after it started
//! (and the change stream did not lag); otherwise the code is fingerprinted again then.

use crosscheck_opencode::Part;
use tokio::task::JoinHandle;

use crate::api_types::Change;
use crate::fingerprint::Fingerprint;

/// A fingerprint of the implementer's code taken ahead of its reply.
pub(super) struct Ahead {
    directory: String,
    task: JoinHandle<Option<Fingerprint>>,
}

impl Ahead {
    /// Starts fingerprinting `directory` now.
    pub(super) fn start(directory: &str) -> Self {
        Self {
            directory: directory.to_owned(),
            task: spawn(directory),
        }
    }

    /// Starts again: something may have moved the code since the last start.
    pub(super) fn restart(&mut self) {
        self.task.abort();
        self.task = spawn(&self.directory);
    }

    /// The code as the turn left it (`None` when it has no fingerprint: no repository).
    pub(super) async fn now(mut self) -> Option<Fingerprint> {
        match (&mut self.task).await {
            Ok(fp) => fp,
            // Aborted or panicked: take it again.
            Err(_) => super::code::full(&self.directory).await,
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn spawn(directory: &str) -> JoinHandle<Option<Fingerprint>> {
    let directory = directory.to_owned();
    tokio::spawn(async move { super::code::full(&directory).await })
}

/// Whether `change` may have moved the code the implementer of `session` works on: one of the
/// session's tool calls ended, a step's patch was recorded, or the server said files changed.
pub(super) fn moves_code(change: &Change, session: &str) -> bool {
    match change {
        Change::PartUpserted { part } => part.session_id == session && ended_tool(part),
        Change::FilesChanged { .. } => true,
        _ => false,
    }
}

/// A tool call that ended (done or failed: either may have written), or a step's patch.
fn ended_tool(part: &Part) -> bool {
    match part.kind.as_str() {
        "patch" => true,
        "tool" => part
            .state
            .as_ref()
            .and_then(|s| s.get("status"))
            .and_then(|s| s.as_str())
            .is_none_or(|s| s != "pending" && s != "running"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(kind: &str, session: &str, status: Option<&str>) -> Change {
        let mut v = serde_json::json!({
            "id": "prt_1", "sessionID": session, "messageID": "msg_1", "type": kind,
        });
        if let Some(status) = status {
            v["state"] = serde_json::json!({ "status": status });
        }
        Change::PartUpserted {
            part: serde_json::from_value(v).expect("a part"),
        }
    }

    #[test]
    fn only_ended_tool_calls_patches_and_file_events_move_the_code() {
        assert!(moves_code(
            &part("tool", "ses_a", Some("completed")),
            "ses_a"
        ));
        assert!(moves_code(&part("tool", "ses_a", Some("error")), "ses_a"));
        assert!(moves_code(&part("patch", "ses_a", None), "ses_a"));
        assert!(!moves_code(
            &part("tool", "ses_a", Some("running")),
            "ses_a"
        ));
        assert!(!moves_code(
            &part("tool", "ses_a", Some("pending")),
            "ses_a"
        ));
        assert!(!moves_code(&part("text", "ses_a", None), "ses_a"));
        assert!(!moves_code(
            &part("tool", "ses_b", Some("completed")),
            "ses_a"
        ));
        assert!(moves_code(
            &Change::FilesChanged {
                directory: None,
                session_id: None,
            },
            "ses_a"
        ));
    }
}
