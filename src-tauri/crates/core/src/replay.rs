//! Merging the events recorded while a page was fetched onto that page.
//!
//! A fetch (a transcript page, the session list) is started after recording begins, so every
//! event the server emitted after it read its answer is in the recording; some emitted before
//! may be too. Events that carry a whole value (a session, a status, a message, a part) are
//! simply applied again in order: the last one is the newest the server sent. Only streamed
//! deltas are relative: a delta the page already holds must not be appended twice. For each
//! part, the deltas recorded before any whole copy of that part are matched by length against
//! the end of the page's text: the longest run of them the page's text ends with is already in
//! it and is skipped. A whole copy of the part (its final snapshot) always replaces the text,
//! so the final text is the server's.

use std::collections::HashMap;

use crosscheck_opencode::{Event, MessageWithParts};

/// How many leading deltas of each part (by part id) the page already holds.
pub(crate) fn deltas_in_page(
    messages: &[MessageWithParts],
    recorded: &[Event],
) -> HashMap<String, usize> {
    // The deltas recorded for each part before a whole copy of it.
    let mut leading: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut replaced: Vec<&str> = Vec::new();
    for event in recorded {
        match event {
            Event::PartDelta {
                part_id,
                field,
                delta,
                ..
            } if *field == "text" && !replaced.contains(&part_id.as_str()) => {
                leading.entry(part_id.as_str()).or_default().push(delta);
            }
            Event::PartUpdated(part) => replaced.push(&part.id),
            _ => {}
        }
    }
    let mut skip = HashMap::new();
    for (part_id, deltas) in leading {
        let Some(text) = messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .find(|p| p.id == part_id)
            .and_then(|p| p.text.as_deref())
        else {
            continue;
        };
        let mut joined = String::new();
        let mut held = 0;
        for (k, delta) in deltas.iter().enumerate() {
            joined.push_str(delta);
            if joined.len() > text.len() {
                break;
            }
            if text.ends_with(&joined) {
                held = k + 1;
            }
        }
        if held > 0 {
            skip.insert(part_id.to_owned(), held);
        }
    }
    skip
}

/// Whether a recorded event concerns one session's transcript.
pub(crate) fn transcript_session(event: &Event) -> Option<&str> {
    match event {
        Event::MessageUpdated(info) => Some(&info.session_id),
        Event::MessageRemoved { session_id, .. } | Event::PartRemoved { session_id, .. } => {
            Some(session_id)
        }
        Event::PartDelta { session_id, .. } => Some(session_id),
        Event::PartUpdated(part) => Some(&part.session_id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crosscheck_opencode::{MessageInfo, Part};

    fn page(text: &str) -> Vec<MessageWithParts> {
        vec![MessageWithParts {
            info: MessageInfo {
                id: "msg_1".into(),
                ..Default::default()
            },
            parts: vec![Part {
                id: "prt_1".into(),
                message_id: "msg_1".into(),
                kind: "text".into(),
                text: Some(text.into()),
                ..Default::default()
            }],
        }]
    }

    fn delta(d: &str) -> Event {
        Event::PartDelta {
            session_id: "ses_1".into(),
            message_id: "msg_1".into(),
            part_id: "prt_1".into(),
            field: "text".into(),
            delta: d.into(),
        }
    }

    #[test]
    fn deltas_the_page_holds_are_counted() {
        let recorded = [delta("three "), delta("four ")];
        assert_eq!(
            deltas_in_page(&page("one two "), &recorded).get("prt_1"),
            None
        );
        assert_eq!(
            deltas_in_page(&page("one two three "), &recorded).get("prt_1"),
            Some(&1)
        );
        assert_eq!(
            deltas_in_page(&page("one two three four "), &recorded).get("prt_1"),
            Some(&2)
        );
    }

    #[test]
    fn deltas_after_a_whole_copy_are_not_matched() {
        let whole = Event::PartUpdated(Box::new(Part {
            id: "prt_1".into(),
            message_id: "msg_1".into(),
            kind: "text".into(),
            text: Some(String::new()),
            ..Default::default()
        }));
        let recorded = [whole, delta("one ")];
        assert!(deltas_in_page(&page("one "), &recorded).is_empty());
    }
}
