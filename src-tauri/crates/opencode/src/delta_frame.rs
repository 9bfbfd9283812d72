//! A direct reader for the one frame shape that makes up most of the stream: a streamed delta
//! (`message.part.delta`), as the server writes it (compact JSON, every value a string).
//!
//! It reads the frame in one pass, eight bytes at a time, borrowing every string but the delta, and
//! gives up (`None`) at the first thing it does not expect: another event type, whitespace,
//! a value that is not a string, an escape in an id, a repeated key, a missing field, a
//! control character. The caller then reads the frame with serde as before, so any frame it
//! declines is read (or refused) exactly as without it.

use crate::event::{Envelope, Event, Shared};

/// The event type this reader handles.
const DELTA: &str = "message.part.delta";

/// Reads `json` when it is a delta frame in the server's shape; `None` for anything else.
/// With `global`, a `/global/event` frame (`{directory, payload}`) is read as well.
pub(crate) fn parse(json: &str, global: bool, shared: &mut Shared) -> Option<Envelope> {
    let mut r = Reader {
        text: json,
        bytes: json.as_bytes(),
        at: 0,
    };
    let mut directory: Option<&str> = None;
    let mut event: Option<Event> = None;
    let mut bare = EventKeys::default();
    r.open()?;
    loop {
        let key = r.key()?;
        match key {
            "payload" if global => {
                if event.is_some() {
                    return None;
                }
                r.open()?;
                let mut keys = EventKeys::default();
                loop {
                    let key = r.key()?;
                    keys.read(key, &mut r, shared)?;
                    if r.close_or_comma()? {
                        break;
                    }
                }
                event = Some(keys.finish()?);
            }
            "directory" if global => {
                if directory.is_some() {
                    return None;
                }
                directory = Some(r.plain_str()?);
            }
            _ => bare.read(key, &mut r, shared)?,
        }
        if r.close_or_comma()? {
            break;
        }
    }
    if r.at != r.bytes.len() {
        return None;
    }
    match event {
        // A frame that mixes an envelope with a bare event's keys is left to serde.
        Some(event) if bare.is_empty() => {
            let directory = directory.map(|d| shared.directory(d));
            Some(Envelope { directory, event })
        }
        Some(_) => None,
        None if directory.is_none() => Some(Envelope {
            directory: None,
            event: bare.finish()?,
        }),
        None => None,
    }
}

/// The keys of an event object read so far.
#[derive(Default)]
struct EventKeys {
    seen_type: bool,
    event: Option<Event>,
}

impl EventKeys {
    fn is_empty(&self) -> bool {
        !self.seen_type && self.event.is_none()
    }

    /// Reads the value of `key` in an event object; other keys' string values are skipped.
    fn read(&mut self, key: &str, r: &mut Reader<'_>, shared: &mut Shared) -> Option<()> {
        match key {
            "type" => {
                if self.seen_type || r.plain_str()? != DELTA {
                    return None;
                }
                self.seen_type = true;
            }
            // Read as a delta's even before `type` says so (a sorting serializer puts it
            // first): any other event's properties fail at their first key.
            "properties" => {
                if self.event.is_some() {
                    return None;
                }
                self.event = Some(properties(r, shared)?);
            }
            _ => r.skip_str()?,
        }
        Some(())
    }

    fn finish(self) -> Option<Event> {
        self.event.filter(|_| self.seen_type)
    }
}

/// Reads a delta's `properties` object.
fn properties(r: &mut Reader<'_>, shared: &mut Shared) -> Option<Event> {
    let (mut session, mut message, mut part, mut field, mut delta) = (None, None, None, None, None);
    r.open()?;
    loop {
        let key = r.key()?;
        let slot = match key {
            "sessionID" => &mut session,
            "messageID" => &mut message,
            "partID" => &mut part,
            "field" => &mut field,
            "delta" => {
                if delta.is_some() {
                    return None;
                }
                delta = Some(r.any_str()?);
                if r.close_or_comma()? {
                    break;
                }
                continue;
            }
            _ => {
                r.skip_str()?;
                if r.close_or_comma()? {
                    break;
                }
                continue;
            }
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(r.plain_str()?);
        if r.close_or_comma()? {
            break;
        }
    }
    Some(Event::PartDelta {
        session_id: shared.sessions.get(session?),
        message_id: shared.messages.get(message?),
        part_id: shared.parts.get(part?),
        field: shared.fields.get(field.unwrap_or("text")),
        delta: delta?,
    })
}

/// The first `"`, `\\` or control character at or after `from`, eight bytes at a time.
fn find_special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        let x = u64::from_le_bytes(eight);
        let quote = x ^ (ONES * u64::from(b'"'));
        let slash = x ^ (ONES * u64::from(b'\\'));
        // A byte's high bit is set where it is zero (quote, slash) or below 0x20; the lowest
        // one set is exact (borrows only run towards higher bytes).
        let hits = ((quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (x.wrapping_sub(ONES * 0x20) & !x))
            & HIGH;
        if hits != 0 {
            return Some(i + hits.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    let rest = bytes.get(i..)?;
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| i + p)
}

/// A cursor over compact JSON text.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// `{` opening an object (which must have at least one key).
    fn open(&mut self) -> Option<()> {
        self.eat(b'{')
    }

    /// A key and its colon.
    fn key(&mut self) -> Option<&'a str> {
        let key = self.plain_str()?;
        self.eat(b':')?;
        Some(key)
    }

    /// After a value: `true` at the object's `}`, `false` at a `,` before the next key.
    fn close_or_comma(&mut self) -> Option<bool> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        match byte {
            b'}' => Some(true),
            b',' => Some(false),
            _ => None,
        }
    }

    /// The end of the string starting at `self.at` (its opening quote), and whether it has
    /// escapes; `None` if it is not a string or holds a control character.
    fn scan_str(&self) -> Option<(usize, bool)> {
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut from = self.at + 1;
        let mut escaped = false;
        loop {
            let i = find_special(self.bytes, from)?;
            match self.bytes[i] {
                b'"' => return Some((i, escaped)),
                b'\\' => {
                    escaped = true;
                    from = i + 2;
                }
                // JSON forbids raw control characters in strings; serde reports them.
                _ => return None,
            }
        }
    }

    /// A string without escapes, borrowed.
    fn plain_str(&mut self) -> Option<&'a str> {
        let (end, escaped) = self.scan_str()?;
        if escaped {
            return None;
        }
        let text = self.text.get(self.at + 1..end)?;
        self.at = end + 1;
        Some(text)
    }

    /// Any string, skipped (its escapes checked as serde would).
    fn skip_str(&mut self) -> Option<()> {
        let (end, escaped) = self.scan_str()?;
        if escaped {
            serde_json::from_str::<serde::de::IgnoredAny>(self.text.get(self.at..=end)?).ok()?;
        }
        self.at = end + 1;
        Some(())
    }

    /// Any string, escapes decoded.
    fn any_str(&mut self) -> Option<String> {
        let (end, escaped) = self.scan_str()?;
        let text = if escaped {
            serde_json::from_str(self.text.get(self.at..=end)?).ok()?
        } else {
            self.text.get(self.at + 1..end)?.to_owned()
        };
        self.at = end + 1;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::event::{Envelope, Event, FrameParser, Shared, parse_with_serde};
    use crate::stream::{SseDecoder, SseFrame};

    const SAMPLE: &str = include_str!("../tests/fixtures/sample-events.sse");

    fn global(event: &str) -> String {
        format!(r#"{{"directory":"/home/dev/café","project":"global","payload":{event}}}"#)
    }

    fn delta(text: &str) -> String {
        format!(
            r#"{{"id":"evt_1","type":"message.part.delta","properties":{{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","field":"text","delta":{}}}}}"#,
            serde_json::to_string(text).expect("a string")
        )
    }

    /// Whatever the direct reader accepts, serde reads the same way.
    fn agrees(json: &str, global: bool) -> bool {
        let fast = parse(json, global, &mut Shared::default());
        let slow = parse_with_serde(json, global, &mut Shared::default());
        if let Some(fast) = &fast {
            assert_eq!(Some(fast), slow.as_ref().ok(), "{json}");
        }
        fast.is_some()
    }

    #[test]
    fn find_special_agrees_with_a_plain_scan() {
        let text: Vec<u8> = (0..=255u8)
            .chain(b"plain text then \"q\" and \\ \x01".iter().copied())
            .collect();
        for from in 0..text.len() {
            for len in from..=text.len().min(from + 40) {
                let bytes = &text[..len];
                let plain = bytes[from..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .map(|p| from + p);
                assert_eq!(super::find_special(bytes, from), plain, "{from}..{len}");
            }
        }
    }

    #[test]
    fn the_recorded_deltas_take_the_direct_path_and_read_as_serde_reads_them() {
        let mut deltas = 0;
        for line in SAMPLE.lines().filter_map(|l| l.strip_prefix("data: ")) {
            let is_delta = line.contains(r#""type":"message.part.delta""#);
            assert_eq!(agrees(line, false), is_delta, "{line}");
            assert_eq!(agrees(line, true), is_delta, "{line}");
            assert_eq!(agrees(&global(line), true), is_delta, "{line}");
            deltas += usize::from(is_delta);
        }
        assert!(deltas > 3, "the fixture has deltas");
    }

    #[test]
    fn escapes_and_multi_byte_text_in_a_delta_are_decoded() {
        for text in [
            "plain",
            "a \"quote\"\n\ttab \\ slash",
            "caf\u{e9} \u{2713} \u{1F600}",
            "\u{1}",
            "",
        ] {
            let frame = global(&delta(text));
            assert!(agrees(&frame, true), "{frame}");
            let Some(Envelope {
                event: Event::PartDelta { delta, .. },
                directory,
            }) = parse(&frame, true, &mut Shared::default())
            else {
                panic!("a delta");
            };
            assert_eq!(delta, text);
            assert_eq!(directory.as_deref(), Some("/home/dev/caf\u{e9}"));
        }
        let escaped = r#"{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","delta":"\u00e9\ud83d\ude00"}}"#;
        assert!(agrees(escaped, false));
        // Keys in another order, as a sorting serializer writes them.
        let sorted = r#"{"directory":"/p","payload":{"id":"evt_1","properties":{"delta":"x","field":"text","messageID":"msg_1","partID":"prt_1","sessionID":"ses_1"},"type":"message.part.delta"},"project":"global"}"#;
        assert!(agrees(sorted, true));
    }

    #[test]
    fn shapes_it_does_not_expect_are_left_to_serde() {
        let d = delta("x");
        let declined = [
            // Whitespace, a repeated key, another type, a non-string value.
            d.replace(r#""type":"#, r#""type": "#),
            d.replace(r#""type":"message.part.delta","#, ""),
            r#"{"properties":{"sessionID":"s","messageID":"m","partID":"p","delta":"x"},"type":"message.part.updated"}"#.to_owned(),
            d.replace(r#""partID":"prt_1""#, r#""partID":"prt_1","partID":"prt_2""#),
            d.replace("message.part.delta", "message.part.updated"),
            d.replace(r#""field":"text""#, r#""field":null"#),
            d.replace(r#""ses_1""#, r#""ses\u005f1""#),
            // A control character in a string, a missing field, a truncated frame.
            d.replace("msg_1", "msg\u{1}1"),
            d.replace(r#""messageID":"msg_1","#, ""),
            d[..d.len() - 1].to_owned(),
            format!("{d} "),
            global(&d).replace(r#""project":"global""#, r#""project":null"#),
        ];
        for frame in declined {
            assert!(!agrees(&frame, true), "{frame}");
        }
    }

    #[test]
    fn no_damaged_frame_is_read_differently_than_serde_reads_it() {
        let replacements = ["\"", "\\", "{", "}", ",", ":", " ", "\u{1}", "a", "é", ""];
        for base in [global(&delta("caf\u{e9} \"q\"")), delta("ok")] {
            for (at, _) in base.char_indices() {
                let next = base[at..].chars().next().map_or(0, char::len_utf8);
                for with in replacements {
                    let damaged = format!("{}{with}{}", &base[..at], &base[at + next..]);
                    agrees(&damaged, true);
                    agrees(&damaged, false);
                }
                agrees(&base[..at], true);
            }
        }
    }

    /// Splits a stream into reads at every position, as the connection may deliver it.
    fn events_of(stream: &[u8], cut: usize) -> Vec<Result<Envelope, String>> {
        let mut decoder = SseDecoder::new();
        let mut parser = FrameParser::new();
        let mut out = Vec::new();
        for piece in [&stream[..cut], &stream[cut..]] {
            decoder.feed(piece, &mut |frame| match frame {
                SseFrame::Data(json) => out.push(parser.parse(json).map_err(|e| e.to_string())),
                SseFrame::Invalid(why) => out.push(Err(why.to_owned())),
            });
        }
        out
    }

    #[test]
    fn deltas_split_across_reads_even_inside_a_character_and_a_malformed_one_read_as_whole() {
        let stream = format!(
            "data: {}\n\ndata: {}\n\ndata: {}\n\n",
            global(&delta("caf\u{e9} \u{1F600}")),
            global(&delta("broken")).replace(r#""partID":"prt_1","#, r#""partID":7,"#),
            global(&delta("after \u{2713}")),
        );
        let whole = events_of(stream.as_bytes(), 0);
        assert_eq!(whole.len(), 3);
        let texts: Vec<_> = whole
            .iter()
            .map(|e| match e {
                Ok(Envelope {
                    event: Event::PartDelta { delta, .. },
                    ..
                }) => Some(delta.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            [
                Some("caf\u{e9} \u{1F600}".into()),
                None,
                Some("after \u{2713}".into())
            ]
        );
        assert!(
            whole[1]
                .as_ref()
                .is_err_and(|e| e.contains("expected a string")),
            "{whole:?}"
        );
        for cut in 1..stream.len() {
            assert_eq!(events_of(stream.as_bytes(), cut), whole, "cut at {cut}");
        }
    }
}
