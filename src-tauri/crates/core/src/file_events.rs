//! Turns the server's file and diff events into [`Change::FilesChanged`], one per directory and
//! per session for each batch, so a burst of file events (a checkout, a formatter) costs the UI
//! one refetch, not one per file.

use std::collections::BTreeSet;

use crosscheck_opencode::{Envelope, Event};

use crate::api_types::Change;

/// The changes a batch of events calls for, in a stable order: sessions first, then directories.
pub(crate) fn touched(batch: &[Envelope]) -> Vec<Change> {
    let mut sessions = BTreeSet::new();
    let mut directories = BTreeSet::new();
    for envelope in batch {
        match &envelope.event {
            Event::SessionDiff { session_id } => {
                sessions.insert(session_id.as_str());
            }
            Event::FileEdited { .. } | Event::FileWatcherUpdated { .. } | Event::BranchUpdated => {
                directories.insert(envelope.directory.as_deref());
            }
            _ => {}
        }
    }
    let sessions = sessions.into_iter().map(|id| Change::FilesChanged {
        directory: None,
        session_id: Some(id.to_owned()),
    });
    let directories = directories.into_iter().map(|dir| Change::FilesChanged {
        directory: dir.map(str::to_owned),
        session_id: None,
    });
    sessions.chain(directories).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn at(directory: Option<&str>, event: Event) -> Envelope {
        Envelope {
            directory: directory.map(Arc::from),
            event,
        }
    }

    #[test]
    fn a_burst_of_file_events_is_one_change_per_directory_and_session() {
        let edit = |file: &str| Event::FileEdited { file: file.into() };
        let batch = vec![
            at(Some("/a"), edit("/a/1")),
            at(Some("/a"), edit("/a/2")),
            at(
                Some("/b"),
                Event::FileWatcherUpdated {
                    file: "/b/x".into(),
                },
            ),
            at(
                Some("/a"),
                Event::SessionDiff {
                    session_id: "ses_1".into(),
                },
            ),
            at(
                Some("/a"),
                Event::SessionDiff {
                    session_id: "ses_1".into(),
                },
            ),
            at(Some("/a"), Event::Heartbeat),
            at(None, Event::BranchUpdated),
        ];
        let changes: Vec<(Option<String>, Option<String>)> = touched(&batch)
            .into_iter()
            .filter_map(|c| match c {
                Change::FilesChanged {
                    directory,
                    session_id,
                } => Some((directory, session_id)),
                _ => None,
            })
            .collect();
        assert_eq!(
            changes,
            [
                (None, Some("ses_1".to_owned())),
                (None, None),
                (Some("/a".to_owned()), None),
                (Some("/b".to_owned()), None),
            ]
        );
        assert!(touched(&[at(Some("/a"), Event::Heartbeat)]).is_empty());
    }
}
