//! Parsing of the server's event frames into typed events, leniently: unknown event types
//! become [`Event::Other`], and a malformed frame is an error for that frame only.

use std::borrow::Cow;
use std::sync::Arc;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::changes::Todo;
use crate::shared::{Interner, SharedStr};
use crate::types::{
    MessageInfo, Part, PermissionRequest, QuestionRequest, Session, SessionStatus, lenient,
};

/// One event from the server, with the directory it concerns when the stream says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Directory of the instance that emitted it (`/global/event` only). Shared between the
    /// events of one [`FrameParser`] while it stays the same, so it costs no allocation per event.
    pub directory: Option<Arc<str>>,
    /// The event.
    pub event: Event,
}

/// The events Crosscheck acts on; everything else is [`Event::Other`]. Whole values (sessions,
/// messages, parts, requests) are boxed: most events are small deltas, and an event is moved
/// several times between the parser and the store, so it is kept small.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// First frame after connecting.
    ServerConnected,
    /// Keep-alive, every 10 s.
    Heartbeat,
    /// A session was created.
    SessionCreated(Box<Session>),
    /// A session changed (title, metadata, archive, ...); carries the whole session.
    SessionUpdated(Box<Session>),
    /// A session was deleted.
    SessionDeleted(Box<Session>),
    /// A session's run state changed.
    SessionStatus {
        /// Session.
        session_id: String,
        /// New state.
        status: SessionStatus,
    },
    /// A session's turn finished.
    SessionIdle {
        /// Session.
        session_id: String,
    },
    /// A session's turn failed.
    SessionError {
        /// Session, when known.
        session_id: Option<String>,
        /// The error as sent.
        error: Option<serde_json::Value>,
    },
    /// A message header was created or changed.
    MessageUpdated(Box<MessageInfo>),
    /// A message was removed.
    MessageRemoved {
        /// Session.
        session_id: String,
        /// Message.
        message_id: String,
    },
    /// A part was created or replaced (a full snapshot of it).
    PartUpdated(Box<Part>),
    /// Streamed text to append to a part's field.
    PartDelta {
        /// Session (shared with the other deltas of the stream that name it).
        session_id: SharedStr,
        /// Message (shared likewise).
        message_id: SharedStr,
        /// Part (shared likewise).
        part_id: SharedStr,
        /// Field to append to (`text`; shared likewise).
        field: SharedStr,
        /// Text to append.
        delta: String,
    },
    /// A part was removed.
    PartRemoved {
        /// Session.
        session_id: String,
        /// Message.
        message_id: String,
        /// Part.
        part_id: String,
    },
    /// A slash command ran.
    CommandExecuted {
        /// Session.
        session_id: String,
        /// Command name.
        name: String,
        /// The user message it created.
        message_id: Option<String>,
    },
    /// A tool call waits for the user's permission.
    PermissionAsked(Box<PermissionRequest>),
    /// A permission request was answered (here or by another client).
    PermissionReplied {
        /// Session.
        session_id: String,
        /// The `per_...` request.
        request_id: String,
        /// `once`, `always` or `reject`.
        reply: String,
    },
    /// A `question` tool call waits for the user's answer.
    QuestionAsked(Box<QuestionRequest>),
    /// A question was answered or rejected (here or by another client).
    QuestionResolved {
        /// Session.
        session_id: String,
        /// The `que_...` request.
        request_id: String,
    },
    /// What a session changed was recomputed (`session.diff`, after each step).
    SessionDiff {
        /// Session.
        session_id: String,
    },
    /// A tool edited a file (`file.edited`), in the envelope's directory.
    FileEdited {
        /// The file's path.
        file: String,
    },
    /// The server's file watcher saw a file change (`file.watcher.updated`).
    FileWatcherUpdated {
        /// The file's path.
        file: String,
    },
    /// The checked-out branch changed (`vcs.branch.updated`).
    BranchUpdated,
    /// A session's todo list changed (`todo.updated`); carries the whole list.
    TodoUpdated {
        /// Session.
        session_id: String,
        /// The list now.
        todos: Vec<Todo>,
    },
    /// A worktree's start scripts finished (`worktree.ready`) or failed (`worktree.failed`).
    Worktree {
        /// The worktree's name, when sent.
        name: String,
        /// Its branch, when sent.
        branch: String,
        /// The server's words on a failure; `None` when it is ready.
        failure: Option<String>,
    },
    /// Any other event type, by name.
    Other(String),
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
#[error("malformed event frame: {0}")]
pub struct FrameError(pub String);

#[derive(Deserialize)]
struct InfoProps<T> {
    info: T,
}

#[derive(Deserialize)]
struct StatusProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default, deserialize_with = "lenient")]
    status: SessionStatus,
}

#[derive(Deserialize)]
struct SessionIdProps {
    #[serde(rename = "sessionID")]
    session_id: String,
}

#[derive(Deserialize)]
struct ErrorProps {
    #[serde(rename = "sessionID", default)]
    session_id: Option<String>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct MessageRemovedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
}

#[derive(Deserialize)]
struct PartProps {
    part: Box<Part>,
}

/// A delta's properties, its ids borrowed from the frame (they are interned after).
#[derive(Deserialize)]
struct DeltaProps<'a> {
    #[serde(rename = "sessionID", borrow)]
    session_id: Cow<'a, str>,
    #[serde(rename = "messageID", borrow)]
    message_id: Cow<'a, str>,
    #[serde(rename = "partID", borrow)]
    part_id: Cow<'a, str>,
    #[serde(default, borrow)]
    field: Option<Cow<'a, str>>,
    delta: String,
}

#[derive(Deserialize)]
struct PartRemovedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
    #[serde(rename = "partID")]
    part_id: String,
}

#[derive(Deserialize)]
struct PermissionRepliedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
    #[serde(default, deserialize_with = "lenient")]
    reply: String,
}

#[derive(Deserialize)]
struct QuestionResolvedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
}

#[derive(Deserialize)]
struct CommandProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default)]
    name: String,
    #[serde(rename = "messageID", default)]
    message_id: Option<String>,
}

#[derive(Deserialize)]
struct WorktreeProps {
    #[serde(default, deserialize_with = "lenient")]
    name: String,
    #[serde(default, deserialize_with = "lenient")]
    branch: String,
    #[serde(default, deserialize_with = "lenient")]
    message: String,
    #[serde(default, deserialize_with = "lenient")]
    error: serde_json::Value,
}

#[derive(Deserialize)]
struct FileProps {
    #[serde(default, deserialize_with = "lenient")]
    file: String,
}

#[derive(Deserialize)]
struct TodoProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default, deserialize_with = "lenient")]
    todos: Vec<serde_json::Value>,
}

/// What a [`FrameParser`] shares between the frames of one stream: the envelope's directory
/// and the ids of streamed deltas, which repeat from one frame to the next.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The last directory seen, reused while frames repeat it (see [`Shared::directory`]).
    directory: Option<Arc<str>>,
    pub(crate) sessions: Interner,
    pub(crate) messages: Interner,
    pub(crate) parts: Interner,
    pub(crate) fields: Interner,
}

impl Shared {
    /// The envelope's directory as a shared string: the last one again while frames repeat it.
    pub(crate) fn directory(&mut self, directory: &str) -> Arc<str> {
        match &self.directory {
            Some(last) if **last == *directory => last.clone(),
            _ => {
                let fresh: Arc<str> = Arc::from(directory);
                self.directory = Some(fresh.clone());
                fresh
            }
        }
    }
}

/// Reads a `properties` object for an event of type `kind`, straight from the deserializer.
fn decode_props<'de, D: Deserializer<'de>>(
    kind: &str,
    d: D,
    shared: &mut Shared,
) -> Result<Event, D::Error> {
    fn typed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        kind: &str,
        d: D,
    ) -> Result<T, D::Error> {
        T::deserialize(d).map_err(|e| D::Error::custom(format!("{kind}: {e}")))
    }
    Ok(match kind {
        "server.connected" => {
            IgnoredAny::deserialize(d)?;
            Event::ServerConnected
        }
        "server.heartbeat" => {
            IgnoredAny::deserialize(d)?;
            Event::Heartbeat
        }
        "session.created" => {
            Event::SessionCreated(typed::<InfoProps<Box<Session>>, D>(kind, d)?.info)
        }
        "session.updated" => {
            Event::SessionUpdated(typed::<InfoProps<Box<Session>>, D>(kind, d)?.info)
        }
        "session.deleted" => {
            Event::SessionDeleted(typed::<InfoProps<Box<Session>>, D>(kind, d)?.info)
        }
        "session.status" => {
            let s: StatusProps = typed(kind, d)?;
            Event::SessionStatus {
                session_id: s.session_id,
                status: s.status,
            }
        }
        "session.idle" => Event::SessionIdle {
            session_id: typed::<SessionIdProps, D>(kind, d)?.session_id,
        },
        "session.error" => {
            let e: ErrorProps = typed(kind, d)?;
            Event::SessionError {
                session_id: e.session_id,
                error: e.error,
            }
        }
        "message.updated" => {
            Event::MessageUpdated(typed::<InfoProps<Box<MessageInfo>>, D>(kind, d)?.info)
        }
        "message.removed" => {
            let m: MessageRemovedProps = typed(kind, d)?;
            Event::MessageRemoved {
                session_id: m.session_id,
                message_id: m.message_id,
            }
        }
        "message.part.updated" => Event::PartUpdated(typed::<PartProps, D>(kind, d)?.part),
        "message.part.delta" => {
            let x: DeltaProps<'de> = typed(kind, d)?;
            Event::PartDelta {
                session_id: shared.sessions.get(&x.session_id),
                message_id: shared.messages.get(&x.message_id),
                part_id: shared.parts.get(&x.part_id),
                field: shared.fields.get(x.field.as_deref().unwrap_or("text")),
                delta: x.delta,
            }
        }
        "message.part.removed" => {
            let r: PartRemovedProps = typed(kind, d)?;
            Event::PartRemoved {
                session_id: r.session_id,
                message_id: r.message_id,
                part_id: r.part_id,
            }
        }
        "command.executed" => {
            let c: CommandProps = typed(kind, d)?;
            Event::CommandExecuted {
                session_id: c.session_id,
                name: c.name,
                message_id: c.message_id,
            }
        }
        "permission.asked" => Event::PermissionAsked(typed(kind, d)?),
        "permission.replied" => {
            let r: PermissionRepliedProps = typed(kind, d)?;
            Event::PermissionReplied {
                session_id: r.session_id,
                request_id: r.request_id,
                reply: r.reply,
            }
        }
        "question.asked" => Event::QuestionAsked(typed(kind, d)?),
        "question.replied" | "question.rejected" => {
            let r: QuestionResolvedProps = typed(kind, d)?;
            Event::QuestionResolved {
                session_id: r.session_id,
                request_id: r.request_id,
            }
        }
        "session.diff" => Event::SessionDiff {
            session_id: typed::<SessionIdProps, D>(kind, d)?.session_id,
        },
        "file.edited" => Event::FileEdited {
            file: typed::<FileProps, D>(kind, d)?.file,
        },
        "file.watcher.updated" => Event::FileWatcherUpdated {
            file: typed::<FileProps, D>(kind, d)?.file,
        },
        "vcs.branch.updated" => {
            IgnoredAny::deserialize(d)?;
            Event::BranchUpdated
        }
        "worktree.ready" | "worktree.failed" => {
            let w: WorktreeProps = typed(kind, d)?;
            let failure = (kind == "worktree.failed").then(|| {
                let words = if w.message.is_empty() {
                    w.error
                        .pointer("/data/message")
                        .or_else(|| w.error.pointer("/message"))
                        .and_then(|m| m.as_str())
                        .unwrap_or_default()
                        .to_owned()
                } else {
                    w.message
                };
                if words.is_empty() {
                    "the project's start script failed".to_owned()
                } else {
                    words
                }
            });
            Event::Worktree {
                name: w.name,
                branch: w.branch,
                failure,
            }
        }
        "todo.updated" => {
            let t: TodoProps = typed(kind, d)?;
            Event::TodoUpdated {
                session_id: t.session_id,
                todos: t
                    .todos
                    .into_iter()
                    .filter_map(|todo| serde_json::from_value(todo).ok())
                    .collect(),
            }
        }
        other => {
            IgnoredAny::deserialize(d)?;
            Event::Other(other.to_owned())
        }
    })
}

/// The keys of an event object and of a `/global/event` frame (read without allocating).
#[derive(Deserialize)]
#[serde(field_identifier)]
enum Key {
    #[serde(rename = "type")]
    Type,
    #[serde(rename = "properties")]
    Properties,
    #[serde(rename = "directory")]
    Directory,
    #[serde(rename = "payload")]
    Payload,
    #[serde(other)]
    Other,
}

/// An event type name, borrowed from the input when it has no escapes.
#[derive(Deserialize)]
struct Kind<'a>(#[serde(borrow)] Cow<'a, str>);

/// Reads an event object, or (with `global`) a `{directory, payload}` frame, in one pass:
/// when `type` comes before `properties` (as the server sends it), the properties are read
/// straight into their typed shape; otherwise they are kept raw and read after.
struct ObjectVisitor<'c> {
    global: bool,
    shared: &'c mut Shared,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_> {
    type Value = Envelope;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.global {
            "an event frame object"
        } else {
            "an event object"
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut kind: Option<Cow<'de, str>> = None;
        let mut event: Option<Event> = None;
        let mut deferred: Option<&'de RawValue> = None;
        let mut directory: Option<Arc<str>> = None;
        let mut payload: Option<Event> = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type => kind = Some(map.next_value::<Kind<'de>>()?.0),
                Key::Properties => match kind.as_deref() {
                    Some(k) => event = Some(map.next_value_seed(PropsSeed(k, &mut *self.shared))?),
                    None => deferred = Some(map.next_value()?),
                },
                Key::Directory if self.global => {
                    if let Some(d) = map.next_value::<MaybeStr<'de>>()?.0 {
                        directory = Some(self.shared.directory(&d));
                    }
                }
                Key::Payload if self.global => {
                    payload = Some(map.next_value_seed(EventSeed(&mut *self.shared))?)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let Some(event) = payload {
            return Ok(Envelope { directory, event });
        }
        let kind = kind.ok_or_else(|| A::Error::missing_field("type"))?;
        let event = match (event, deferred) {
            (Some(event), _) => event,
            (None, Some(raw)) => decode_props(
                &kind,
                &mut serde_json::Deserializer::from_str(raw.get()),
                self.shared,
            )
            .map_err(A::Error::custom)?,
            (None, None) => decode_props(&kind, serde_json::Value::Null, self.shared)
                .map_err(|_| A::Error::custom(format!("{kind}: no properties")))?,
        };
        Ok(Envelope {
            directory: None,
            event,
        })
    }
}

struct PropsSeed<'k, 'c>(&'k str, &'c mut Shared);

impl<'de> DeserializeSeed<'de> for PropsSeed<'_, '_> {
    type Value = Event;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Event, D::Error> {
        decode_props(self.0, d, self.1)
    }
}

struct EventSeed<'c>(&'c mut Shared);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = Event;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Event, D::Error> {
        let visitor = ObjectVisitor {
            global: false,
            shared: self.0,
        };
        Ok(d.deserialize_map(visitor)?.event)
    }
}

/// A string (borrowed from the input when it has no escapes), or `None` for a value of any
/// other shape, which is skipped in the same pass.
struct MaybeStr<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for MaybeStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MaybeStrVisitor)
    }
}

struct MaybeStrVisitor;

impl<'de> Visitor<'de> for MaybeStrVisitor {
    type Value = MaybeStr<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(MaybeStr(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(MaybeStr(Some(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(MaybeStr(Some(Cow::Owned(v))))
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(MaybeStr(None))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeStr(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(MaybeStr(None))
    }
}

fn parse_object(json: &str, global: bool, shared: &mut Shared) -> Result<Envelope, FrameError> {
    // Most frames are deltas in one fixed shape: read those directly, the rest with serde.
    if let Some(envelope) = crate::delta_frame::parse(json, global, shared) {
        return Ok(envelope);
    }
    parse_with_serde(json, global, shared)
}

/// Reads a frame with serde alone (every frame the direct delta reader declines).
pub(crate) fn parse_with_serde(
    json: &str,
    global: bool,
    shared: &mut Shared,
) -> Result<Envelope, FrameError> {
    let mut de = serde_json::Deserializer::from_str(json);
    let envelope = de
        .deserialize_map(ObjectVisitor { global, shared })
        .map_err(|e| FrameError(e.to_string()))?;
    de.end().map_err(|e| FrameError(e.to_string()))?;
    Ok(envelope)
}

/// Parses the frames of one stream, sharing the `directory` between consecutive events that
/// repeat it (on `/global/event` every frame names one), and the ids of streamed deltas (a
/// reply's deltas all name the same session, message and part).
#[derive(Debug, Default)]
pub struct FrameParser {
    shared: Shared,
}

impl FrameParser {
    /// A parser that has seen no directory yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Like [`parse_frame`], reusing the last directory and the recent delta ids when this
    /// frame names the same ones.
    pub fn parse(&mut self, json: &str) -> Result<Envelope, FrameError> {
        parse_object(json, true, &mut self.shared)
    }
}

/// Parses one event object (`{"type", "properties"}`).
pub fn parse_event(json: &str) -> Result<Event, FrameError> {
    parse_object(json, false, &mut Shared::default()).map(|envelope| envelope.event)
}

/// Parses one `data:` payload of `/global/event` (`{directory, payload}`) or of `/event`
/// (the bare event object), in a single pass over the text.
pub fn parse_frame(json: &str) -> Result<Envelope, FrameError> {
    parse_object(json, true, &mut Shared::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../tests/fixtures/sample-events.sse");

    #[test]
    fn every_frame_of_the_recorded_stream_parses() {
        let mut kinds = std::collections::BTreeMap::<String, usize>::new();
        for line in SAMPLE.lines().filter_map(|l| l.strip_prefix("data: ")) {
            let env = parse_frame(line).expect("frame parses");
            let name = match &env.event {
                Event::Other(n) => format!("other:{n}"),
                e => format!("{e:?}")
                    .split(['(', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            };
            *kinds.entry(name).or_default() += 1;
        }
        assert_eq!(kinds.get("PartDelta"), Some(&14));
        assert_eq!(kinds.get("SessionStatus"), Some(&12));
        assert_eq!(kinds.get("SessionCreated"), Some(&1));
        assert_eq!(kinds.get("other:plugin.added"), Some(&45));
        assert_eq!(kinds.get("SessionDiff"), Some(&6));
    }

    #[test]
    fn change_and_todo_events_are_read_leniently() {
        let frame = |kind: &str, props: &str| {
            format!(r#"{{"directory":"/p","payload":{{"type":"{kind}","properties":{props}}}}}"#)
        };
        let parsed = |kind: &str, props: &str| parse_frame(&frame(kind, props)).map(|e| e.event);
        assert_eq!(
            parsed("file.edited", r#"{"file":"/p/a.txt"}"#).ok(),
            Some(Event::FileEdited {
                file: "/p/a.txt".into()
            })
        );
        assert_eq!(
            parsed("file.watcher.updated", r#"{"file":7,"event":"change"}"#).ok(),
            Some(Event::FileWatcherUpdated {
                file: String::new()
            })
        );
        assert_eq!(
            parsed(
                "session.diff",
                r#"{"sessionID":"ses_1","diff":[{"file":"a"}]}"#
            )
            .ok(),
            Some(Event::SessionDiff {
                session_id: "ses_1".into()
            })
        );
        let Ok(Event::TodoUpdated { session_id, todos }) = parsed(
            "todo.updated",
            r#"{"sessionID":"ses_1","todos":[{"content":"a","status":"completed","priority":"low"},3]}"#,
        ) else {
            panic!("todo.updated parses");
        };
        assert_eq!((session_id.as_str(), todos.len()), ("ses_1", 1));
        assert_eq!(todos[0].status, crate::TodoStatus::Completed);
        let Ok(Event::TodoUpdated { todos, .. }) =
            parsed("todo.updated", r#"{"sessionID":"ses_1","todos":"x"}"#)
        else {
            panic!("a todo list of the wrong shape still names its session");
        };
        assert!(todos.is_empty());
    }

    #[test]
    fn global_envelope_carries_directory() {
        let f = r#"{"directory":"/p","payload":{"type":"session.idle","properties":{"sessionID":"ses_1"}}}"#;
        let env = parse_frame(f).expect("parses");
        assert_eq!(env.directory.as_deref(), Some("/p"));
        assert_eq!(
            env.event,
            Event::SessionIdle {
                session_id: "ses_1".into()
            }
        );
    }

    #[test]
    fn a_repeated_directory_is_shared_and_a_changed_or_odd_one_is_not() {
        let frame = |dir: &str| {
            format!(
                r#"{{"directory":{dir},"payload":{{"type":"session.idle","properties":{{"sessionID":"ses_1"}}}}}}"#
            )
        };
        let mut parser = FrameParser::new();
        let a = parser.parse(&frame(r#""/p""#)).expect("parses");
        let b = parser.parse(&frame(r#""/p""#)).expect("parses");
        let (Some(a), Some(b)) = (a.directory, b.directory) else {
            panic!("directories kept")
        };
        assert!(
            Arc::ptr_eq(&a, &b),
            "one allocation for a repeated directory"
        );
        let c = parser.parse(&frame(r#""/q\u0041""#)).expect("parses");
        assert_eq!(c.directory.as_deref(), Some("/qA"), "escapes are read");
        let d = parser
            .parse(&frame(r#"{"not":"a string"}"#))
            .expect("parses");
        assert_eq!(d.directory, None);
        assert_eq!(
            d.event,
            Event::SessionIdle {
                session_id: "ses_1".into()
            }
        );
        for odd in ["7", "-1.5", "null", "true", r#"[1,{"a":[2]},"x"]"#] {
            let e = parser
                .parse(&frame(odd))
                .expect("an odd directory is skipped");
            assert_eq!((e.directory, e.event), (None, d.event.clone()), "{odd}");
        }
        assert!(
            parser.parse(&frame("[1,")).is_err(),
            "broken JSON still fails"
        );
    }

    fn delta_frame(part: &str, delta: &str) -> String {
        format!(
            r#"{{"directory":"/p","payload":{{"id":"evt_1","type":"message.part.delta","properties":{{"sessionID":"ses_1","messageID":"msg_1","partID":{part},"field":"text","delta":{delta}}}}}}}"#
        )
    }

    #[test]
    fn the_ids_of_a_run_of_deltas_are_shared_not_copied() {
        let mut parser = FrameParser::new();
        let ids = |env: Envelope| match env.event {
            Event::PartDelta {
                session_id,
                message_id,
                part_id,
                field,
                delta,
            } => (session_id, message_id, part_id, field, delta),
            other => panic!("not a delta: {other:?}"),
        };
        let a = ids(parser
            .parse(&delta_frame(r#""prt_1""#, r#"" one""#))
            .expect("parses"));
        let b = ids(parser
            .parse(&delta_frame(r#""prt_1""#, r#"" two""#))
            .expect("parses"));
        assert_eq!(
            (a.0.as_str(), a.2.as_str(), a.3.as_str()),
            ("ses_1", "prt_1", "text")
        );
        assert_eq!((a.4.as_str(), b.4.as_str()), (" one", " two"));
        assert!(a.0.ptr_eq(&b.0) && a.1.ptr_eq(&b.1) && a.2.ptr_eq(&b.2) && a.3.ptr_eq(&b.3));
        // An escaped id is read (into its own copy), and another part gets its own id.
        let c = ids(parser
            .parse(&delta_frame(r#""prt_\u0032""#, r#""é\n✓""#))
            .expect("parses"));
        assert_eq!((c.2.as_str(), c.4.as_str()), ("prt_2", "é\n✓"));
        assert!(c.0.ptr_eq(&a.0), "the session is still shared");
        // A delta without `field` appends to the text.
        let d = parse_event(
            r#"{"type":"message.part.delta","properties":{"sessionID":"s","messageID":"m","partID":"p","delta":"x"}}"#,
        )
        .expect("parses");
        assert!(matches!(d, Event::PartDelta { field, .. } if field == "text"));
        // Properties before the type take the deferred path and still read.
        let e = parse_event(
            r#"{"properties":{"sessionID":"s","messageID":"m","partID":"p","delta":"y"},"type":"message.part.delta"}"#,
        )
        .expect("parses");
        assert!(matches!(e, Event::PartDelta { delta, .. } if delta == "y"));
    }

    #[test]
    fn an_event_stays_small_enough_to_move_cheaply() {
        assert!(
            std::mem::size_of::<Envelope>() <= 128,
            "{} bytes",
            std::mem::size_of::<Envelope>()
        );
    }

    #[test]
    fn a_malformed_delta_is_an_error_for_its_frame_only() {
        let mut parser = FrameParser::new();
        for bad in [
            delta_frame("7", r#""x""#),
            delta_frame(r#""prt_1""#, "null"),
            delta_frame(r#""prt_1""#, r#""unterminated"#),
            r#"{"directory":"/p","payload":{"type":"message.part.delta","properties":{"sessionID":"s","messageID":"m","delta":"x"}}}"#.to_owned(),
        ] {
            assert!(parser.parse(&bad).is_err(), "{bad} should fail");
        }
        let ok = parser
            .parse(&delta_frame(r#""prt_1""#, r#""x""#))
            .expect("the next frame parses");
        assert!(matches!(ok.event, Event::PartDelta { part_id, .. } if part_id == "prt_1"));
    }

    #[test]
    fn metadata_survives_and_wrong_shapes_fall_back() {
        let f = r#"{"type":"session.updated","properties":{"info":{"id":"ses_1","title":5,"metadata":{"openchamber":{"kind":"review"},"k":1},"time":"soon"}}}"#;
        let Event::SessionUpdated(s) = parse_event(f).expect("parses") else {
            panic!("wrong event")
        };
        assert_eq!(s.title, "");
        assert_eq!(s.metadata.expect("metadata")["k"], 1);
        assert_eq!(s.time.created, 0);
    }

    #[test]
    fn a_wrong_typed_field_in_a_non_delta_event_keeps_the_rest_of_it() {
        let mut parser = FrameParser::new();
        let f = r#"{"directory":"/p","payload":{"id":"evt_1","type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"msg_1","sessionID":"ses_1","role":["user"],"time":{"created":"yesterday","completed":9},"tokens":{"input":{"n":1},"output":4},"finish":"stop"}}}}"#;
        let Event::MessageUpdated(info) = parser.parse(f).expect("parses").event else {
            panic!("wrong event")
        };
        assert_eq!(
            (info.id.as_str(), info.session_id.as_str()),
            ("msg_1", "ses_1")
        );
        assert_eq!((info.role.as_str(), info.time.created), ("", 0));
        assert_eq!(info.time.completed, Some(9));
        assert_eq!(info.tokens.map(|t| (t.input, t.output)), Some((0.0, 4.0)));
        assert_eq!(info.finish.as_deref(), Some("stop"));
        let f = r#"{"directory":"/p","payload":{"id":"evt_2","type":"message.part.updated","properties":{"sessionID":"ses_1","part":{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":{"oops":true},"synthetic":"no","tool":7},"time":1}}}"#;
        let Event::PartUpdated(part) = parser.parse(f).expect("parses").event else {
            panic!("wrong event")
        };
        assert_eq!((part.id.as_str(), part.kind.as_str()), ("prt_1", "text"));
        assert_eq!((part.text, part.synthetic, part.tool), (None, false, None));
        let f = r#"{"directory":"/p","payload":{"id":"evt_3","type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"retry","attempt":"two","message":"rate limited"}}}}"#;
        let Event::SessionStatus { session_id, status } = parser.parse(f).expect("parses").event
        else {
            panic!("wrong event")
        };
        assert_eq!(session_id, "ses_1");
        assert_eq!((status.kind.as_str(), status.attempt), ("retry", None));
        assert_eq!(status.message.as_deref(), Some("rate limited"));
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        for bad in [
            "",
            "{",
            "[]",
            r#"{"type":"message.part.delta","properties":{}}"#,
            r#"{"type":"session.created"}"#,
        ] {
            assert!(parse_frame(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn permission_asked_reads_the_request() {
        let f = r#"{"directory":"/home/dev/p","payload":{"id":"evt_01","type":"permission.asked","properties":{"id":"per_9a1","sessionID":"ses_1","permission":"bash","patterns":["git push origin main"],"metadata":{"command":"git push origin main","description":"Push"},"always":["git push *"],"tool":{"messageID":"msg_2","callID":"call_3"}}}}"#;
        let env = parse_frame(f).expect("parses");
        assert_eq!(env.directory.as_deref(), Some("/home/dev/p"));
        let Event::PermissionAsked(p) = env.event else {
            panic!("wrong event")
        };
        assert_eq!(p.id, "per_9a1");
        assert_eq!(p.session_id, "ses_1");
        assert_eq!(p.permission, "bash");
        assert_eq!(p.patterns, vec!["git push origin main".to_owned()]);
        assert_eq!(p.always, vec!["git push *".to_owned()]);
        assert_eq!(p.metadata["description"], "Push");
        let tool = p.tool.expect("tool");
        assert_eq!(
            (tool.message_id.as_str(), tool.call_id.as_str()),
            ("msg_2", "call_3")
        );
    }

    #[test]
    fn permission_asked_without_tool_and_with_odd_shapes_still_reads() {
        let f = r#"{"type":"permission.asked","properties":{"id":"per_2","sessionID":"ses_1","permission":"external_directory","patterns":"nope","metadata":[],"always":[]}}"#;
        let Event::PermissionAsked(p) = parse_event(f).expect("parses") else {
            panic!("wrong event")
        };
        assert_eq!(p.permission, "external_directory");
        assert!(p.patterns.is_empty());
        assert!(p.metadata.is_empty());
        assert_eq!(p.tool, None);
        assert!(
            parse_event(r#"{"type":"permission.asked","properties":{"sessionID":"ses_1"}}"#)
                .is_err()
        );
    }

    #[test]
    fn permission_replied_reads_ids_and_reply() {
        let f = r#"{"directory":"/home/dev/p","payload":{"id":"evt_02","type":"permission.replied","properties":{"sessionID":"ses_1","requestID":"per_9a1","reply":"always"}}}"#;
        assert_eq!(
            parse_frame(f).expect("parses").event,
            Event::PermissionReplied {
                session_id: "ses_1".into(),
                request_id: "per_9a1".into(),
                reply: "always".into(),
            }
        );
        assert!(
            parse_event(r#"{"type":"permission.replied","properties":{"sessionID":"ses_1"}}"#)
                .is_err()
        );
    }

    #[test]
    fn unknown_types_are_kept_by_name() {
        assert_eq!(
            parse_event(r#"{"type":"x.y","properties":{"a":1}}"#).expect("parses"),
            Event::Other("x.y".into())
        );
    }
}
