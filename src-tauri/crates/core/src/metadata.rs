//! The `openchamber` metadata contract that links an implementing session to its review
//! session, exactly as OpenChamber writes it, so links interoperate both ways:
//! original `{openchamber: {reviewSessionID}}`, review `{openchamber: {kind: "review", originalSessionID}}`.
//! Every helper returns a new object that keeps every unrelated key.

use crosscheck_opencode::{Metadata, Session};
use serde_json::{Map, Value};

/// The shared namespace key.
pub const NAMESPACE: &str = "openchamber";
const KIND: &str = "kind";
const REVIEW: &str = "review";
const ORIGINAL: &str = "originalSessionID";
const REVIEW_ID: &str = "reviewSessionID";

/// The `openchamber` branch of a session's metadata, when it is an object.
pub fn get_openchamber_metadata(session: &Session) -> Option<&Map<String, Value>> {
    session.metadata.as_ref()?.get(NAMESPACE)?.as_object()
}

fn non_empty_str<'a>(branch: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    branch.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// Whether the session is a review session: `kind: "review"` and an original id, as OpenChamber checks.
pub fn is_review_session(session: &Session) -> bool {
    get_openchamber_metadata(session).is_some_and(|b| {
        b.get(KIND).and_then(Value::as_str) == Some(REVIEW) && non_empty_str(b, ORIGINAL).is_some()
    })
}

/// The implementing session a review session belongs to.
pub fn get_original_session_id(session: &Session) -> Option<&str> {
    if !is_review_session(session) {
        return None;
    }
    get_openchamber_metadata(session).and_then(|b| non_empty_str(b, ORIGINAL))
}

/// The review session linked from an implementing session.
pub fn get_review_session_id(session: &Session) -> Option<&str> {
    get_openchamber_metadata(session).and_then(|b| non_empty_str(b, REVIEW_ID))
}

/// Clones the metadata and hands the `openchamber` branch (created when missing or not an object) to `f`.
fn with_branch(metadata: Option<&Metadata>, f: impl FnOnce(&mut Map<String, Value>)) -> Metadata {
    let mut next = metadata.cloned().unwrap_or_default();
    let slot = next
        .entry(NAMESPACE)
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(branch) = slot {
        f(branch);
    }
    next
}

/// Metadata for an original session that links `review_session_id`.
pub fn with_review_session_link(metadata: Option<&Metadata>, review_session_id: &str) -> Metadata {
    with_branch(metadata, |b| {
        b.insert(REVIEW_ID.into(), Value::String(review_session_id.into()));
    })
}

/// Metadata for a review session of `original_session_id`.
pub fn with_review_session_marker(
    metadata: Option<&Metadata>,
    original_session_id: &str,
) -> Metadata {
    with_branch(metadata, |b| {
        b.insert(KIND.into(), Value::String(REVIEW.into()));
        b.insert(ORIGINAL.into(), Value::String(original_session_id.into()));
    })
}

/// Metadata without the review link, only when it points at `review_session_id`; an emptied
/// `openchamber` branch is removed. Returns `None` when there was nothing to remove.
pub fn without_review_session_link(
    metadata: Option<&Metadata>,
    review_session_id: &str,
) -> Option<Metadata> {
    let current = metadata?.get(NAMESPACE)?.as_object()?;
    if current.get(REVIEW_ID).and_then(Value::as_str) != Some(review_session_id) {
        return None;
    }
    let mut next = metadata?.clone();
    let mut branch = current.clone();
    branch.remove(REVIEW_ID);
    if branch.is_empty() {
        next.remove(NAMESPACE);
    } else {
        next.insert(NAMESPACE.into(), Value::Object(branch));
    }
    Some(next)
}

/// Whether `session` is a review session of `original_session_id` (its marker names that
/// original): only such a session may be reused for it.
pub fn is_review_of(session: &Session, original_session_id: &str) -> bool {
    get_original_session_id(session) == Some(original_session_id)
}

/// The review link of raw metadata, if any.
fn review_link(metadata: Option<&Metadata>) -> Option<&str> {
    metadata?
        .get(NAMESPACE)?
        .as_object()
        .and_then(|b| non_empty_str(b, REVIEW_ID))
}

/// Metadata that links `review_session_id` in place of the link checked as `expected` (`None`:
/// no link). `None` when the link is already `review_session_id`, or is no longer `expected`
/// (someone else changed it since it was checked; it is left alone).
pub fn replace_review_session_link(
    metadata: Option<&Metadata>,
    expected: Option<&str>,
    review_session_id: &str,
) -> Option<Metadata> {
    let current = review_link(metadata);
    if current == Some(review_session_id) || current != expected {
        return None;
    }
    Some(with_review_session_link(metadata, review_session_id))
}

/// Metadata that links `review_session_id`; `None` when it already does.
pub fn link_review_session(
    metadata: Option<&Metadata>,
    review_session_id: &str,
) -> Option<Metadata> {
    (review_link(metadata) != Some(review_session_id))
        .then(|| with_review_session_link(metadata, review_session_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Metadata {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn session(metadata: Option<Value>) -> Session {
        Session {
            id: "ses_x".into(),
            metadata: metadata.map(meta),
            ..Session::default()
        }
    }

    #[test]
    fn marks_review_session_keeping_unrelated_metadata() {
        let m = meta(json!({"app": "x", "openchamber": {"other": 1}}));
        let next = with_review_session_marker(Some(&m), "ses_orig");
        assert_eq!(
            Value::Object(next.clone()),
            json!({"app": "x", "openchamber": {"other": 1, "kind": "review", "originalSessionID": "ses_orig"}})
        );
        let s = session(Some(Value::Object(next)));
        assert!(is_review_session(&s));
        assert_eq!(get_original_session_id(&s), Some("ses_orig"));
    }

    #[test]
    fn links_original_keeping_unrelated_metadata() {
        let m = meta(json!({"ticket": 42, "crosscheck": {"pinned": true}}));
        let next = with_review_session_link(Some(&m), "ses_rev");
        assert_eq!(
            Value::Object(next.clone()),
            json!({"ticket": 42, "crosscheck": {"pinned": true}, "openchamber": {"reviewSessionID": "ses_rev"}})
        );
        assert_eq!(
            get_review_session_id(&session(Some(Value::Object(next)))),
            Some("ses_rev")
        );
        let fresh = with_review_session_link(None, "ses_rev");
        assert_eq!(
            Value::Object(fresh),
            json!({"openchamber": {"reviewSessionID": "ses_rev"}})
        );
    }

    #[test]
    fn removes_link_only_when_it_matches() {
        let m = meta(json!({"keep": [1], "openchamber": {"reviewSessionID": "ses_a", "x": 2}}));
        assert_eq!(without_review_session_link(Some(&m), "ses_b"), None);
        let next = without_review_session_link(Some(&m), "ses_a").expect("removed");
        assert_eq!(
            Value::Object(next),
            json!({"keep": [1], "openchamber": {"x": 2}})
        );
        let only = meta(json!({"openchamber": {"reviewSessionID": "ses_a"}, "k": 1}));
        assert_eq!(
            Value::Object(without_review_session_link(Some(&only), "ses_a").expect("removed")),
            json!({"k": 1})
        );
        assert_eq!(without_review_session_link(None, "ses_a"), None);
    }

    #[test]
    fn a_link_is_replaced_only_when_it_is_still_the_checked_one() {
        let m = meta(json!({"k": 1, "openchamber": {"reviewSessionID": "ses_stale"}}));
        assert_eq!(
            Value::Object(
                replace_review_session_link(Some(&m), Some("ses_stale"), "ses_new")
                    .expect("replaced")
            ),
            json!({"k": 1, "openchamber": {"reviewSessionID": "ses_new"}})
        );
        // Someone else linked another session since the check: theirs stays.
        assert_eq!(replace_review_session_link(Some(&m), None, "ses_new"), None);
        assert_eq!(
            replace_review_session_link(Some(&m), Some("ses_other"), "ses_new"),
            None
        );
        assert_eq!(
            replace_review_session_link(Some(&m), Some("ses_stale"), "ses_stale"),
            None
        );
        assert!(replace_review_session_link(None, None, "ses_new").is_some());
        assert_eq!(link_review_session(Some(&m), "ses_stale"), None);
        assert!(link_review_session(Some(&m), "ses_new").is_some());
    }

    #[test]
    fn review_needs_both_fields_and_odd_shapes_are_not_reviews() {
        assert!(!is_review_session(&session(Some(
            json!({"openchamber": {"kind": "review"}})
        ))));
        assert!(!is_review_session(&session(Some(
            json!({"openchamber": {"originalSessionID": "ses_o"}})
        ))));
        assert!(!is_review_session(&session(Some(
            json!({"openchamber": "review"})
        ))));
        assert!(!is_review_session(&session(None)));
        let replaced = with_review_session_link(Some(&meta(json!({"openchamber": 7}))), "ses_r");
        assert_eq!(
            Value::Object(replaced),
            json!({"openchamber": {"reviewSessionID": "ses_r"}})
        );
    }
}
