//! What the server says changed: per-file diffs (`/vcs/diff`, `/session/:id/diff`) and a
//! session's todo list (`/session/:id/todo`), read leniently like every server type.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use ts_rs::TS;

use crate::types::lenient;

/// How a file changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum FileStatus {
    /// The file is new.
    Added,
    /// The file is gone.
    Deleted,
    /// The file's content changed (also what an unknown or missing status reads as).
    #[default]
    #[serde(other)]
    Modified,
}

/// One file of a diff as the server sends it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct FileDiff {
    /// Path relative to the directory (or the repository root).
    #[serde(default, deserialize_with = "lenient")]
    pub file: String,
    /// Unified diff of the file (`git diff` output); absent when the server sent none.
    #[serde(default, deserialize_with = "lenient")]
    pub patch: Option<String>,
    /// Lines added.
    #[serde(default, deserialize_with = "count")]
    pub additions: u32,
    /// Lines removed.
    #[serde(default, deserialize_with = "count")]
    pub deletions: u32,
    /// How the file changed.
    #[serde(default, deserialize_with = "lenient")]
    pub status: FileStatus,
}

/// A line count sent as any JSON number (the schema says `number`): negative, fractional or
/// absurd values are clamped, another shape is 0.
fn count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .map_or(0, |n| n.min(f64::from(u32::MAX)) as u32))
}

/// Where a todo stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TodoStatus {
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Dropped.
    Cancelled,
    /// Not started (also what an unknown status reads as).
    #[default]
    #[serde(other)]
    Pending,
}

/// One item of a session's todo list (the agent's `todowrite` tool keeps it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Todo {
    /// What is to be done.
    #[serde(default, deserialize_with = "lenient")]
    pub content: String,
    /// Where it stands.
    #[serde(default, deserialize_with = "lenient")]
    pub status: TodoStatus,
    /// `high`, `medium` or `low`, as the agent wrote it.
    #[serde(default, deserialize_with = "lenient")]
    pub priority: String,
}

/// The entries of a JSON array that have the wanted shape (others are skipped); anything but
/// an array is an error, so a reply that is not a list says so instead of reading as empty.
#[derive(Debug, Default)]
pub struct Entries<T>(pub Vec<T>);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: Vec<Box<RawValue>> = Vec::deserialize(deserializer)?;
        Ok(Entries(
            raw.iter()
                .filter_map(|item| serde_json::from_str(item.get()).ok())
                .collect(),
        ))
    }
}

/// The parts of `GET /config` that say what the server records.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RecordingConfig {
    /// Whether snapshots are kept (OpenCode's default is on); `None` when not set.
    #[serde(default, deserialize_with = "lenient")]
    pub snapshot: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_are_read_leniently_and_wrong_entries_skipped() {
        let body = r#"[
            {"file":"a.txt","patch":"@@ -1 +1 @@\n-a\n+b\n","additions":1,"deletions":1,"status":"modified","extra":1},
            {"file":"n.txt","additions":2.0,"deletions":-3,"status":"renamed"},
            {"file":5,"patch":7,"additions":"x"},
            "not an object",
            {"file":"big","additions":1e20,"status":"added"}
        ]"#;
        let Entries(files): Entries<FileDiff> = serde_json::from_str(body).expect("parses");
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].file, "a.txt");
        assert_eq!(files[0].additions, 1);
        assert!(files[0].patch.as_deref().is_some_and(|p| p.contains("+b")));
        assert_eq!((files[1].additions, files[1].deletions), (2, 0));
        assert_eq!(files[1].status, FileStatus::Modified);
        assert_eq!(files[1].patch, None);
        assert_eq!(
            (files[2].file.as_str(), files[2].patch.as_deref()),
            ("", None)
        );
        assert_eq!(
            (files[3].additions, files[3].status),
            (u32::MAX, FileStatus::Added)
        );
    }

    #[test]
    fn a_reply_that_is_not_a_list_is_an_error() {
        assert!(serde_json::from_str::<Entries<FileDiff>>(r#"{"file":"a"}"#).is_err());
        assert!(serde_json::from_str::<Entries<Todo>>("null").is_err());
    }

    #[test]
    fn todos_keep_their_status_and_unknown_ones_read_as_pending() {
        let body = r#"[{"content":"a","status":"in_progress","priority":"high","id":"1"},
            {"content":"b","status":"blocked"},{"content":"c","status":"cancelled"}]"#;
        let Entries(todos): Entries<Todo> = serde_json::from_str(body).expect("parses");
        let statuses: Vec<TodoStatus> = todos.iter().map(|t| t.status).collect();
        assert_eq!(
            statuses,
            [
                TodoStatus::InProgress,
                TodoStatus::Pending,
                TodoStatus::Cancelled
            ]
        );
        assert_eq!(
            serde_json::to_value(TodoStatus::InProgress).ok(),
            Some("in_progress".into())
        );
    }
}
