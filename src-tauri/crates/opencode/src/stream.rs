//! The server's global event stream (`GET /global/event`), followed for as long as the
//! [`StreamHandle`] lives: SSE framing, parsing, heartbeat watch, and reconnect with backoff.
//!
//! The consumer gets [`StreamItem::Connected`] each time the stream (re)opens. Events missed
//! while disconnected are gone, so after a `Connected` that follows a `Disconnected` the
//! consumer must resync from the routes (sessions, statuses, open transcripts).

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use ts_rs::TS;

use crate::client::Client;
use crate::error::{describe_reqwest, truncate};
use crate::event::{Envelope, FrameParser};

/// What the event stream reports to its consumer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    /// The stream is open (response headers arrived); sent before its first event.
    Connected,
    /// The events of one read from the connection, in order (never empty): one channel send
    /// and one wake-up per read instead of one per event.
    Events(Vec<Envelope>),
    /// The stream broke (error, end, or no bytes within the heartbeat timeout); it is reopened
    /// after `retry_in_ms`.
    Disconnected {
        /// Why, in English with the details.
        error: String,
        /// Why, as a kind the UI can put in words.
        cause: DropCause,
        /// Delay before the next attempt, in ms.
        retry_in_ms: u64,
    },
    /// One frame could not be read; the stream goes on.
    Malformed {
        /// Why, with the start of the frame.
        error: String,
    },
}

/// Why the event stream is down, in kinds a user can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum DropCause {
    /// Nothing answers at the address (refused, no route, name not found).
    Unreachable,
    /// The server accepted the connection but did not answer in time (often: still starting).
    NoAnswer,
    /// The server refused the password.
    Unauthorized,
    /// The server answered with an error status.
    ServerError,
    /// The server closed the stream (it is stopping or restarting).
    Closed,
    /// No bytes for longer than the heartbeat timeout.
    HeartbeatLost,
    /// The connection broke while reading.
    Broken,
    /// Crosscheck is restarting the server it started.
    Restarting,
    /// The server is reachable but its state could not be reloaded.
    SyncFailed,
}

/// Tuning of [`spawn_event_stream`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions {
    /// A stream that delivers no bytes for this long counts as dropped (the server sends a
    /// heartbeat every 10 s).
    pub heartbeat_timeout: Duration,
    /// How long to wait for the response headers. Short, because a server that is still
    /// starting accepts connections a second or two before it answers any, and requests sent
    /// in that window are never answered: better to give up and retry.
    pub answer_timeout: Duration,
    /// First reconnect delay; it doubles after each failed attempt and resets once connected.
    pub initial_backoff: Duration,
    /// Largest reconnect delay.
    pub max_backoff: Duration,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            heartbeat_timeout: Duration::from_secs(25),
            answer_timeout: Duration::from_secs(4),
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
        }
    }
}

/// The running stream task; dropping the handle stops it.
#[derive(Debug)]
pub struct StreamHandle {
    task: JoinHandle<()>,
}

impl StreamHandle {
    /// Stops the stream now.
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Whether the task has ended (aborted, or the receiver was dropped).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Follows `GET /global/event` on a tokio task, sending what happens to `tx`, until the handle
/// is dropped or aborted, or `tx`'s receiver is dropped.
pub fn spawn_event_stream(
    client: Client,
    tx: mpsc::Sender<StreamItem>,
    options: StreamOptions,
) -> StreamHandle {
    StreamHandle {
        task: tokio::spawn(run(client, tx, options)),
    }
}

/// How one connection ended.
enum End {
    /// The receiver is gone: stop for good.
    ReceiverGone,
    /// The connection failed or broke.
    Dropped {
        error: String,
        cause: DropCause,
        connected: bool,
    },
}

async fn run(client: Client, tx: mpsc::Sender<StreamItem>, options: StreamOptions) {
    let mut decoder = SseDecoder::new();
    let mut pending = Vec::new();
    let mut backoff = options.initial_backoff;
    loop {
        let end = tokio::select! {
            end = connection(&client, &tx, &options, &mut decoder, &mut pending) => end,
            _ = tx.closed() => End::ReceiverGone,
        };
        decoder.reset();
        pending.clear();
        let (error, cause, connected) = match end {
            End::ReceiverGone => return,
            End::Dropped {
                error,
                cause,
                connected,
            } => (error, cause, connected),
        };
        if connected {
            backoff = options.initial_backoff;
        }
        let delay = jitter(backoff);
        backoff = backoff.saturating_mul(2).min(options.max_backoff);
        tracing::debug!(%error, delay_ms = delay.as_millis() as u64, "opencode event stream dropped");
        let retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        if tx
            .send(StreamItem::Disconnected {
                error,
                cause,
                retry_in_ms,
            })
            .await
            .is_err()
        {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = tx.closed() => return,
        }
    }
}

/// A delay between half and all of `backoff`, so many clients do not retry in step.
fn jitter(backoff: Duration) -> Duration {
    backoff.mul_f64(rand::rng().random_range(0.5..=1.0))
}

/// One connection: open, announce, read frames until it breaks.
async fn connection(
    client: &Client,
    tx: &mpsc::Sender<StreamItem>,
    options: &StreamOptions,
    decoder: &mut SseDecoder,
    pending: &mut Vec<StreamItem>,
) -> End {
    let mut parser = FrameParser::new();
    let wait_ms = options.answer_timeout.as_millis();
    let mut response =
        match tokio::time::timeout(options.answer_timeout, client.event_stream_request().send())
            .await
        {
            Err(_) => {
                return End::Dropped {
                    error: format!("no answer within {wait_ms} ms"),
                    cause: DropCause::NoAnswer,
                    connected: false,
                };
            }
            Ok(Err(e)) => {
                let cause = if e.is_timeout() {
                    DropCause::NoAnswer
                } else {
                    DropCause::Unreachable
                };
                return End::Dropped {
                    error: describe_reqwest(e),
                    cause,
                    connected: false,
                };
            }
            Ok(Ok(response)) => response,
        };
    let status = response.status();
    if !status.is_success() {
        let body = tokio::time::timeout(Duration::from_secs(1), response.text()).await;
        let body = body.ok().and_then(Result::ok).unwrap_or_default();
        let body = truncate(body.trim(), 200);
        let cause = if status.as_u16() == 401 {
            DropCause::Unauthorized
        } else {
            DropCause::ServerError
        };
        return End::Dropped {
            error: format!("HTTP {}: {body}", status.as_u16()),
            cause,
            connected: false,
        };
    }
    if tx.send(StreamItem::Connected).await.is_err() {
        return End::ReceiverGone;
    }
    // Room for as many events as the last read brought, so a batch is allocated once
    // instead of growing by doubling (a 64 KiB read holds ~200 events).
    let mut batch_hint = MIN_BATCH;
    loop {
        let chunk = match tokio::time::timeout(options.heartbeat_timeout, response.chunk()).await {
            Err(_) => {
                return End::Dropped {
                    error: format!(
                        "no data for {} ms (heartbeat lost)",
                        options.heartbeat_timeout.as_millis()
                    ),
                    cause: DropCause::HeartbeatLost,
                    connected: true,
                };
            }
            Ok(Err(e)) => {
                return End::Dropped {
                    error: describe_reqwest(e),
                    cause: DropCause::Broken,
                    connected: true,
                };
            }
            Ok(Ok(None)) => {
                return End::Dropped {
                    error: "the server ended the event stream".into(),
                    cause: DropCause::Closed,
                    connected: true,
                };
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        decoder.feed(&chunk, &mut |frame| {
            push_frame(pending, &mut parser, frame, batch_hint)
        });
        if let Some(StreamItem::Events(batch)) = pending.first() {
            batch_hint = batch.len().clamp(MIN_BATCH, MAX_BATCH_HINT);
        }
        for item in pending.drain(..) {
            if tx.send(item).await.is_err() {
                return End::ReceiverGone;
            }
        }
    }
}

/// The smallest batch allocated for a read's events.
const MIN_BATCH: usize = 16;
/// The most events a batch is allocated for ahead (after one huge read, the next reads do
/// not each reserve as much).
const MAX_BATCH_HINT: usize = 1024;

/// Adds one decoded frame to the items of this read: an event joins the batch the read is
/// building (a new one starts with room for `hint` events), a malformed frame ends it (so
/// the order is kept).
fn push_frame(
    pending: &mut Vec<StreamItem>,
    parser: &mut FrameParser,
    frame: SseFrame<'_>,
    hint: usize,
) {
    let malformed = match frame {
        SseFrame::Data(json) => match parser.parse(json) {
            Ok(envelope) => {
                match pending.last_mut() {
                    Some(StreamItem::Events(batch)) => batch.push(envelope),
                    _ => {
                        let mut batch = Vec::with_capacity(hint);
                        batch.push(envelope);
                        pending.push(StreamItem::Events(batch));
                    }
                }
                return;
            }
            Err(e) => format!("{e} (frame: {})", truncate(json, 200)),
        },
        SseFrame::Invalid(reason) => format!("malformed event frame: {reason}"),
    };
    pending.push(StreamItem::Malformed { error: malformed });
}

/// One complete event out of an SSE byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseFrame<'a> {
    /// Its `data:` lines, joined by `\n`.
    Data(&'a str),
    /// It could not be read (the reason).
    Invalid(&'static str),
}

/// Longest line kept; a longer one is dropped and its event reported as invalid.
const MAX_LINE: usize = 64 << 20;
/// Buffers that grew beyond this for a huge frame are released afterwards.
const KEEP_CAPACITY: usize = 1 << 20;

/// Incremental SSE decoder: feed it chunks split anywhere; it calls back once per complete
/// event with the event's data. Lines end in `\n`, `\r\n` or `\r`; `data:` lines are joined
/// with `\n`; comments and the `event:`, `id:` and `retry:` fields are ignored. Its buffers are
/// reused, so steady-state decoding allocates nothing: complete lines are read straight from
/// the chunk, and only a line cut by a chunk boundary is copied.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    /// Data of the event being assembled.
    data: String,
    /// `data:` lines in the event so far.
    data_lines: usize,
    /// Why the event being assembled cannot be read, if it cannot.
    invalid: Option<&'static str>,
    /// The last chunk ended in `\r`: a `\n` opening the next one belongs to it.
    skip_lf: bool,
    /// Inside an over-long line: drop bytes up to its end.
    discarding: bool,
}

impl SseDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets any incomplete line and event (after a reconnect).
    pub fn reset(&mut self) {
        self.partial.clear();
        self.data.clear();
        self.data_lines = 0;
        self.invalid = None;
        self.skip_lf = false;
        self.discarding = false;
        if self.partial.capacity() > KEEP_CAPACITY {
            self.partial = Vec::new();
        }
        if self.data.capacity() > KEEP_CAPACITY {
            self.data = String::new();
        }
    }

    /// Decodes one chunk, calling `emit` for every event it completes.
    pub fn feed<F: FnMut(SseFrame<'_>)>(&mut self, mut chunk: &[u8], emit: &mut F) {
        if chunk.is_empty() {
            return;
        }
        if self.skip_lf {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        while let Some(end) = find_eol(chunk) {
            let terminator = chunk[end];
            if self.discarding {
                self.discarding = false;
                self.partial.clear();
            } else if self.partial.is_empty() {
                if terminator == b'\n'
                    && chunk.get(end + 1) == Some(&b'\n')
                    && self.data_lines == 0
                    && self.invalid.is_none()
                    && let Some(value) = data_value(&chunk[..end])
                {
                    // A one-line event whose blank line is in this chunk too (how the server
                    // sends every event): its data is handed out from the chunk, not copied.
                    match std::str::from_utf8(value) {
                        Ok("") => {}
                        Ok(text) => emit(SseFrame::Data(text)),
                        Err(_) => emit(SseFrame::Invalid("data is not UTF-8")),
                    }
                    chunk = &chunk[end + 2..];
                    continue;
                }
                self.line(&chunk[..end], emit);
            } else {
                self.partial.extend_from_slice(&chunk[..end]);
                let line = std::mem::take(&mut self.partial);
                self.line(&line, emit);
                self.partial = line;
                self.partial.clear();
                if self.partial.capacity() > KEEP_CAPACITY {
                    self.partial = Vec::new();
                }
            }
            chunk = &chunk[end + 1..];
            if terminator == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        if self.discarding {
            return;
        }
        if self.partial.len() + chunk.len() > MAX_LINE {
            self.partial.clear();
            self.discarding = true;
            self.invalid = Some("a line is longer than 64 MiB");
        } else {
            self.partial.extend_from_slice(chunk);
        }
    }

    fn line<F: FnMut(SseFrame<'_>)>(&mut self, line: &[u8], emit: &mut F) {
        if line.is_empty() {
            self.dispatch(emit);
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        if field != b"data" {
            return;
        }
        if self.data_lines > 0 {
            self.data.push('\n');
        }
        self.data_lines += 1;
        match std::str::from_utf8(value) {
            Ok(text) => self.data.push_str(text),
            Err(_) => self.invalid = Some("data is not UTF-8"),
        }
    }

    fn dispatch<F: FnMut(SseFrame<'_>)>(&mut self, emit: &mut F) {
        if let Some(reason) = self.invalid.take() {
            emit(SseFrame::Invalid(reason));
        } else if !self.data.is_empty() {
            emit(SseFrame::Data(&self.data));
        }
        self.data.clear();
        self.data_lines = 0;
        if self.data.capacity() > KEEP_CAPACITY {
            self.data = String::new();
        }
    }
}

/// The value of a `data:` line (after the one optional space), or `None` for any other line.
fn data_value(line: &[u8]) -> Option<&[u8]> {
    let value = line.strip_prefix(b"data")?;
    if value.is_empty() {
        return Some(value);
    }
    let value = value.strip_prefix(b":")?;
    Some(value.strip_prefix(b" ").unwrap_or(value))
}

/// Index of the first `\n` or `\r` (vectorized: the line scan is most of the decoder's work).
fn find_eol(bytes: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut |f| {
                out.push(match f {
                    SseFrame::Data(d) => d.to_owned(),
                    SseFrame::Invalid(r) => format!("invalid: {r}"),
                })
            });
        }
        out
    }

    #[test]
    fn find_eol_agrees_with_a_plain_scan() {
        let mut bytes = vec![b'a'; 40];
        assert_eq!(find_eol(&bytes), None);
        for at in 0..40 {
            for eol in [b'\n', b'\r'] {
                bytes.fill(b'a');
                // Bytes that trip naive SWAR checks sit next to the match.
                bytes[(at + 1) % 40] = 0x8a;
                bytes[at] = eol;
                assert_eq!(
                    find_eol(&bytes),
                    bytes.iter().position(|&b| b == b'\n' || b == b'\r'),
                    "{at}"
                );
            }
        }
    }

    #[test]
    fn fields_comments_and_line_endings() {
        let mut d = SseDecoder::new();
        let out = frames(
            &mut d,
            &[
                b": comment\nevent: x\nid: 1\ndata: a\ndata:b\r\ndata\r\rdata: c\n\n",
                b"\n\ndata: \xff\n\ndata: ok\n\n",
            ],
        );
        assert_eq!(out, ["a\nb\n", "c", "invalid: data is not UTF-8", "ok"]);
    }

    #[test]
    fn cr_at_a_chunk_end_pairs_with_the_next_lf() {
        let mut d = SseDecoder::new();
        let out = frames(&mut d, &[b"data: a\r", b"\n\r", b"\ndata: b\r", b"\r"]);
        assert_eq!(out, ["a", "b"]);
    }

    #[test]
    fn crlf_split_anywhere_keeps_multi_line_data_together() {
        let text = b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n";
        for cut in 0..=text.len() {
            let mut d = SseDecoder::new();
            let out = frames(&mut d, &[&text[..cut], &text[cut..]]);
            assert_eq!(out, ["a\nb", "c"], "cut at {cut}");
        }
    }

    #[test]
    fn a_frame_split_anywhere_even_inside_a_character_reads_whole() {
        let text = "data: {\"delta\":\"é ✓ 😀\"}\n\ndata: two\n\n: note\n\ndata: \n\n".as_bytes();
        let whole = frames(&mut SseDecoder::new(), &[text]);
        assert_eq!(whole, ["{\"delta\":\"é ✓ 😀\"}", "two"]);
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let mut d = SseDecoder::new();
                let out = frames(&mut d, &[&text[..a], &text[a..b], &text[b..]]);
                assert_eq!(out, whole, "cut at {a} and {b}");
            }
        }
    }

    #[test]
    fn invalid_utf8_in_a_one_chunk_frame_is_reported_and_the_next_frame_reads() {
        let mut d = SseDecoder::new();
        let out = frames(&mut d, &[b"data: {\"a\":\"\xe2\x9c\"}\n\ndata: ok\n\n"]);
        assert_eq!(out, ["invalid: data is not UTF-8", "ok"]);
        let out = frames(&mut d, &[b"data: a\ndata: b\n\ndata:c\n\ndatax: y\n\n"]);
        assert_eq!(
            out,
            ["a\nb", "c"],
            "multi-line data and other fields as before"
        );
    }

    #[test]
    fn reset_drops_half_frames() {
        let mut d = SseDecoder::new();
        assert!(frames(&mut d, &[b"data: {\"half"]).is_empty());
        d.reset();
        assert_eq!(frames(&mut d, &[b"data: whole\n\n"]), ["whole"]);
    }
}
