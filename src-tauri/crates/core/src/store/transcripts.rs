//! Followed transcripts: a window of the newest messages that events change in place, the
//! followers that keep it, and the text an assistant message shows.

use std::collections::{BTreeSet, HashMap};

use crosscheck_opencode::shared::IdHash;
use crosscheck_opencode::{Event, MessageInfo, MessageWithParts, Part};

use super::Store;

/// One followed transcript: a window of the newest messages, oldest first.
#[derive(Debug, Default)]
pub struct Transcript {
    pub(super) messages: Vec<MessageWithParts>,
    /// Position of each message by id (looked up for every streamed event).
    pub(super) index: HashMap<String, usize, IdHash>,
    /// Cursor for the page before the oldest loaded message.
    pub older_cursor: Option<String>,
    /// Who wants it kept current: one entry per client connection (a browser's event stream,
    /// a desktop window) and per running flow, however often each opened it.
    pub followers: BTreeSet<String>,
    /// Whether a page was loaded; until then events are only recorded.
    pub(super) loaded: bool,
    /// Events recorded while a page is being fetched (see [`crate::replay`]).
    pub(super) recording: Vec<Event>,
    /// Fetches in progress: token and where in `recording` each started.
    pub(super) loads: HashMap<u64, usize>,
    /// Where the last delta went (message and part position): the next one of a run goes to
    /// the same part, found without a lookup once its ids are checked there.
    pub(super) last_delta: Option<(usize, usize)>,
}

impl Transcript {
    /// Bytes of part text kept (the bulk of a transcript's memory; an estimate).
    pub fn text_bytes(&self) -> usize {
        self.messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .map(|p| p.text.as_ref().map_or(0, String::len) + 64)
            .sum()
    }

    /// A transcript from a page (oldest first).
    pub fn from_page(messages: Vec<MessageWithParts>, older_cursor: Option<String>) -> Self {
        let mut t = Self {
            messages,
            older_cursor,
            loaded: true,
            ..Self::default()
        };
        t.messages.sort_by(|a, b| a.info.id.cmp(&b.info.id));
        t.reindex();
        t
    }

    pub(super) fn reindex(&mut self) {
        self.index = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.info.id.clone(), i))
            .collect();
    }

    /// Messages, oldest first.
    pub fn messages(&self) -> &[MessageWithParts] {
        &self.messages
    }

    /// A message by id.
    pub fn message(&self, id: &str) -> Option<&MessageWithParts> {
        self.index.get(id).map(|&i| &self.messages[i])
    }

    /// Adds an older page in front, skipping messages already loaded. Costs the page plus a
    /// shift of the loaded window: no id of the window is copied when the page is older than
    /// everything loaded (the usual case).
    pub fn prepend(&mut self, older: Vec<MessageWithParts>, cursor: Option<String>) {
        self.older_cursor = cursor;
        let mut fresh: Vec<_> = older
            .into_iter()
            .filter(|m| !self.index.contains_key(&m.info.id))
            .collect();
        if fresh.is_empty() {
            return;
        }
        fresh.sort_by(|a, b| a.info.id.cmp(&b.info.id));
        fresh.dedup_by(|a, b| a.info.id == b.info.id);
        let in_front = match (fresh.last(), self.messages.first()) {
            (Some(newest), Some(oldest)) => newest.info.id < oldest.info.id,
            _ => true,
        };
        if !in_front {
            fresh.append(&mut self.messages);
            self.messages = fresh;
            self.messages.sort_by(|a, b| a.info.id.cmp(&b.info.id));
            self.reindex();
            return;
        }
        let shift = fresh.len();
        for i in self.index.values_mut() {
            *i += shift;
        }
        for (i, m) in fresh.iter().enumerate() {
            self.index.insert(m.info.id.clone(), i);
        }
        self.messages.splice(0..0, fresh);
    }

    pub(super) fn upsert_info(&mut self, info: MessageInfo) {
        if let Some(&i) = self.index.get(&info.id) {
            self.messages[i].info = info;
            return;
        }
        let at = self.messages.partition_point(|m| m.info.id < info.id);
        self.messages.insert(
            at,
            MessageWithParts {
                info,
                parts: Vec::new(),
            },
        );
        if at + 1 == self.messages.len() {
            let id = self.messages[at].info.id.clone();
            self.index.insert(id, at);
        } else {
            self.reindex();
        }
    }

    pub(super) fn remove_message(&mut self, id: &str) -> bool {
        let Some(i) = self.index.get(id).copied() else {
            return false;
        };
        self.messages.remove(i);
        self.reindex();
        true
    }

    /// Creates or replaces a part; false when its message is not loaded.
    pub(super) fn upsert_part(&mut self, part: Part) -> bool {
        let Some(&i) = self.index.get(&part.message_id) else {
            return false;
        };
        let parts = &mut self.messages[i].parts;
        match parts.iter_mut().find(|p| p.id == part.id) {
            Some(existing) => *existing = part,
            None => {
                let at = parts.partition_point(|p| p.id < part.id);
                parts.insert(at, part);
            }
        }
        true
    }

    /// Appends streamed text in place; false when the part is not loaded.
    pub(super) fn append_delta(
        &mut self,
        message_id: &str,
        part_id: &str,
        field: &str,
        delta: &str,
    ) -> bool {
        if field != "text" {
            return false;
        }
        let Some((i, j)) = self.delta_target(message_id, part_id) else {
            return false;
        };
        let part = &mut self.messages[i].parts[j];
        part.text.get_or_insert_with(String::new).push_str(delta);
        true
    }

    /// The positions of a delta's message and part: the last delta's when both ids are still
    /// there (a reply's deltas all go to one part), else looked up. Checking the ids keeps it
    /// right whatever moved in between.
    pub(super) fn delta_target(
        &mut self,
        message_id: &str,
        part_id: &str,
    ) -> Option<(usize, usize)> {
        if let Some((i, j)) = self.last_delta
            && let Some(message) = self.messages.get(i)
            && message.info.id == message_id
            && message.parts.get(j).is_some_and(|p| p.id == part_id)
        {
            return Some((i, j));
        }
        let &i = self.index.get(message_id)?;
        let j = self.messages[i]
            .parts
            .iter()
            .position(|p| p.id == part_id)?;
        self.last_delta = Some((i, j));
        Some((i, j))
    }

    pub(super) fn remove_part(&mut self, message_id: &str, part_id: &str) -> bool {
        let Some(&i) = self.index.get(message_id) else {
            return false;
        };
        let parts = &mut self.messages[i].parts;
        let before = parts.len();
        parts.retain(|p| p.id != part_id);
        parts.len() != before
    }
}

/// The text an assistant message shows: its text parts, not reasoning, not synthetic or ignored ones.
pub fn assistant_text(message: &MessageWithParts) -> String {
    let texts: Vec<&str> = message
        .parts
        .iter()
        .filter(|p| p.kind == "text" && !p.synthetic && !p.ignored)
        .filter_map(|p| p.text.as_deref())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    texts.join("\n\n")
}

/// How a follower is named: one per client connection or flow.
pub fn client_follower(client: &str) -> String {
    format!("client:{client}")
}

/// Followers.
impl Store {
    /// Adds `follower` to a transcript (once, however often it asks); returns whether its page
    /// is loaded already. A transcript not kept yet is created, waiting for its first page.
    pub fn follow(&mut self, id: &str, follower: &str) -> bool {
        let t = self.transcripts.entry(id.to_owned()).or_default();
        t.followers.insert(follower.to_owned());
        t.loaded
    }

    /// Removes `follower` from a transcript; a transcript nobody follows is dropped.
    pub fn unfollow(&mut self, id: &str, follower: &str) {
        if let Some(t) = self.transcripts.get_mut(id) {
            t.followers.remove(follower);
            if t.followers.is_empty() {
                self.transcripts.remove(id);
            }
        }
    }

    /// Removes `follower` from every transcript (its connection went away); returns how many
    /// transcripts were dropped.
    pub fn unfollow_all(&mut self, follower: &str) -> usize {
        let before = self.transcripts.len();
        self.transcripts.retain(|_, t| {
            t.followers.remove(follower);
            !t.followers.is_empty()
        });
        before - self.transcripts.len()
    }

    /// Transcripts kept, and follower entries over all of them.
    pub fn follow_counts(&self) -> (usize, usize) {
        let followers = self.transcripts.values().map(|t| t.followers.len()).sum();
        (self.transcripts.len(), followers)
    }
}
