//! Searching inside transcripts (Ctrl+K): OpenCode has no message search, so the core searches
//! the transcripts it holds at once and reads the others from the server in the background,
//! one capped page each, keeping only the matching lines (never a transcript).

use std::sync::atomic::{AtomicU64, Ordering};

use crosscheck_opencode::MessageWithParts;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Most matching lines kept per session.
pub const HITS_PER_SESSION: usize = 3;
/// Most matching lines a search answers in all.
pub const MAX_HITS: usize = 200;
/// Most sessions a search reads from the server.
pub const MAX_READS: usize = 200;
/// Newest messages read of each session not held.
pub const READ_LIMIT: u32 = 400;
/// Sessions read from the server at the same time.
pub const READ_PARALLEL: usize = 4;
/// Longest line shown, in characters (a longer one is cut around the match).
pub const LINE_CHARS: usize = 160;
/// Shortest query searched inside transcripts (shorter ones match titles only).
pub const MIN_QUERY_CHARS: usize = 2;

/// One matching line of a transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SearchHit {
    /// The session it is in.
    pub session_id: String,
    /// The message it is in.
    pub message_id: String,
    /// `user` or `assistant`.
    pub role: String,
    /// The line (cut around the match when long; untrusted text, shown as plain text).
    pub line: String,
}

/// A session whose transcript the search could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct UnreadSession {
    /// The session.
    pub session_id: String,
    /// Why (the server's or the transport's words).
    pub reason: String,
}

/// What a search has found so far (the answer to `SearchTranscripts`, then one `Search` change
/// per session read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SearchProgress {
    /// Which search (a newer one replaces it).
    #[ts(type = "number")]
    pub search_id: u64,
    /// The query, trimmed.
    pub query: String,
    /// Matching lines found so far, held transcripts first.
    pub hits: Vec<SearchHit>,
    /// Sessions read so far (held ones count as read).
    pub read: u32,
    /// Sessions it will read in all.
    pub total: u32,
    /// Sessions it could not read.
    pub unread: Vec<UnreadSession>,
    /// Sessions left out by the read cap.
    pub skipped: u32,
    /// Whether it has finished (or was replaced by a newer search).
    pub done: bool,
}

/// The running search's number: a new search makes the older one stop reading.
#[derive(Debug, Default)]
pub struct Searches {
    current: AtomicU64,
}

impl Searches {
    /// Starts a new search and answers its number.
    pub fn begin(&self) -> u64 {
        self.current.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether `id` is still the newest search.
    pub fn is_current(&self, id: u64) -> bool {
        self.current.load(Ordering::SeqCst) == id
    }
}

/// A lower-cased query, for [`find_lines`].
#[derive(Debug, Clone)]
pub struct Needle {
    lower: String,
}

impl Needle {
    /// The needle of a query; `None` when it is too short to search transcripts with.
    pub fn new(query: &str) -> Option<Self> {
        let lower = query.trim().to_lowercase();
        (lower.chars().count() >= MIN_QUERY_CHARS).then_some(Self { lower })
    }
}

/// The matching lines of a transcript's visible text parts (user and assistant), newest
/// message first, at most `limit`.
pub fn find_lines(
    session_id: &str,
    messages: &[MessageWithParts],
    needle: &Needle,
    limit: usize,
) -> Vec<SearchHit> {
    let mut hits = Vec::new();
    for message in messages.iter().rev() {
        for part in &message.parts {
            if part.kind != "text" || part.synthetic || part.ignored {
                continue;
            }
            let Some(text) = part.text.as_deref() else {
                continue;
            };
            if !contains_folded(text, &needle.lower) {
                continue;
            }
            for line in text.lines() {
                if contains_folded(line, &needle.lower) {
                    hits.push(SearchHit {
                        session_id: session_id.to_owned(),
                        message_id: message.info.id.clone(),
                        role: message.info.role.clone(),
                        line: cut_around(line.trim(), &needle.lower),
                    });
                    if hits.len() >= limit {
                        return hits;
                    }
                }
            }
        }
    }
    hits
}

/// Case-insensitive `contains`: an ASCII needle is found with a vectorized scan for its first
/// byte in either case and a check of the rest where it occurs (no allocation); anything else,
/// or text whose Unicode lowercase could match where ASCII folding does not, falls back to a
/// lowercased copy.
fn contains_folded(hay: &str, lower_needle: &str) -> bool {
    if lower_needle.is_ascii() {
        if contains_ascii_folded(hay.as_bytes(), lower_needle.as_bytes()) {
            return true;
        }
        if hay.is_ascii() {
            return false;
        }
    }
    hay.to_lowercase().contains(lower_needle)
}

/// Whether `hay` holds `lower_needle` (ASCII, lower-cased) ignoring ASCII case.
fn contains_ascii_folded(hay: &[u8], lower_needle: &[u8]) -> bool {
    let Some((&first, rest)) = lower_needle.split_first() else {
        return true;
    };
    if lower_needle.len() > hay.len() {
        return false;
    }
    let upper = first.to_ascii_uppercase();
    // Where a match may start: the needle must still fit after it.
    let starts = &hay[..=hay.len() - lower_needle.len()];
    let mut from = 0;
    while from < starts.len() {
        let found = if upper == first {
            memchr::memchr(first, &starts[from..])
        } else {
            memchr::memchr2(first, upper, &starts[from..])
        };
        let Some(offset) = found else {
            return false;
        };
        let at = from + offset;
        if hay[at + 1..at + lower_needle.len()].eq_ignore_ascii_case(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// A line of at most [`LINE_CHARS`] characters showing the match.
fn cut_around(line: &str, lower_needle: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= LINE_CHARS {
        return line.to_owned();
    }
    let lower: Vec<char> = line.to_lowercase().chars().collect();
    let at = if lower.len() == chars.len() {
        let n: Vec<char> = lower_needle.chars().collect();
        lower
            .windows(n.len().max(1))
            .position(|w| w == n.as_slice())
            .unwrap_or(0)
    } else {
        0
    };
    let start = at.saturating_sub(LINE_CHARS / 3);
    let end = (start + LINE_CHARS).min(chars.len());
    let start = end.saturating_sub(LINE_CHARS);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, role: &str, text: &str) -> MessageWithParts {
        serde_json::from_value(serde_json::json!({
            "info": {"id": id, "sessionID": "s", "role": role, "time": {"created": 1}},
            "parts": [{"id": format!("p{id}"), "sessionID": "s", "messageID": id, "type": "text", "text": text}]
        }))
        .expect("message")
    }

    #[test]
    fn finds_the_matching_line_newest_first_case_insensitively() {
        let messages = vec![
            message("m1", "user", "first line\nthe Parser drops a line"),
            message("m2", "assistant", "nothing here\nfixed the PARSER bug"),
        ];
        let needle = Needle::new("parser").expect("needle");
        let hits = find_lines("s", &messages, &needle, 10);
        let lines: Vec<&str> = hits.iter().map(|h| h.line.as_str()).collect();
        assert_eq!(
            lines,
            vec!["fixed the PARSER bug", "the Parser drops a line"]
        );
        assert_eq!(hits[0].role, "assistant");
        assert_eq!(hits[1].message_id, "m1");
        assert_eq!(find_lines("s", &messages, &needle, 1).len(), 1, "capped");
    }

    #[test]
    fn skips_hidden_parts_and_too_short_queries() {
        let mut hidden = message("m1", "user", "secret parser note");
        hidden.parts[0].synthetic = true;
        let needle = Needle::new("parser").expect("needle");
        assert!(find_lines("s", &[hidden], &needle, 10).is_empty());
        assert!(Needle::new(" a ").is_none());
    }

    #[test]
    fn finds_the_one_match_in_the_last_of_many_transcripts() {
        let filler = "The parser reads each record and checks the fields.\nNothing else.";
        let transcripts: Vec<(String, Vec<MessageWithParts>)> = (0..50)
            .map(|s| {
                let list = (0..200)
                    .map(|i| {
                        let text = if s == 49 && i == 0 {
                            format!("{filler}\nThe ZEBRA Crossing fails on empty input.")
                        } else {
                            filler.to_owned()
                        };
                        message(&format!("m{s}_{i}"), "user", &text)
                    })
                    .collect();
                (format!("s{s}"), list)
            })
            .collect();
        let needle = Needle::new("zebra crossing").expect("needle");
        let hits: Vec<SearchHit> = transcripts
            .iter()
            .flat_map(|(id, list)| find_lines(id, list, &needle, HITS_PER_SESSION))
            .collect();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].session_id, "s49");
        assert_eq!(hits[0].message_id, "m49_0");
        assert_eq!(hits[0].line, "The ZEBRA Crossing fails on empty input.");
    }

    #[test]
    fn folds_ascii_case_at_every_place_and_unicode_where_it_must() {
        for (hay, needle, want) in [
            ("Zebra", "zebra", true),
            ("a zebra", "zebra", true),
            ("ZEBRA!", "zebra", true),
            ("zebr", "zebra", false),
            ("zzebra", "zebra", true),
            ("zebrA zebrb", "zebrb", true),
            ("x2Y", "2y", true),
            ("nothing", "zebra", false),
            ("", "ab", false),
            // The Kelvin sign lower-cases to an ASCII k: found through the Unicode path.
            ("\u{212A}elvin scale", "kelvin", true),
            ("Grüße aus Köln", "köln", true),
            ("Grüße", "kelvin", false),
        ] {
            assert_eq!(contains_folded(hay, needle), want, "{hay:?} / {needle:?}");
        }
    }

    #[test]
    fn cuts_a_long_line_around_the_match_and_handles_non_ascii() {
        let long = format!("{}needle{}", "x".repeat(400), "y".repeat(400));
        let cut = cut_around(&long, "needle");
        assert!(cut.contains("needle"));
        assert!(cut.chars().count() <= LINE_CHARS + 2);
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        let needle = Needle::new("grüße").expect("needle");
        let hits = find_lines(
            "s",
            &[message("m", "user", "Viele GRÜSSE\nliebe Grüße")],
            &needle,
            5,
        );
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].line, "liebe Grüße");
    }
}
