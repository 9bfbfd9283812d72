//! The event stream: SSE framing of the recorded stream in odd chunks, and reconnects against
//! an in-process fake server that drops, stalls, and garbles.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use crosscheck_opencode::event::parse_frame;
use crosscheck_opencode::stream::{SseDecoder, SseFrame, StreamHandle};
use crosscheck_opencode::{
    Client, DropCause, Envelope, Event, ServerConfig, StreamItem, StreamOptions, spawn_event_stream,
};
use tokio::sync::mpsc;

const SAMPLE: &str = include_str!("../fixtures/sample-events.sse");

/// The recorded stream parsed line by line: the reference every other path must match.
fn reference() -> Vec<Envelope> {
    SAMPLE
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| parse_frame(l).expect("fixture frame"))
        .collect()
}

/// The recorded frames as SSE text, one `data:` frame each.
fn frames() -> Vec<String> {
    SAMPLE
        .lines()
        .filter(|l| l.starts_with("data: "))
        .map(|l| format!("{l}\n\n"))
        .collect()
}

fn decode_in_chunks(bytes: &[u8], sizes: &mut dyn FnMut() -> usize) -> Vec<Envelope> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = sizes().clamp(1, rest.len());
        decoder.feed(&rest[..n], &mut |frame| match frame {
            SseFrame::Data(json) => out.push(parse_frame(json).expect("frame parses")),
            SseFrame::Invalid(reason) => panic!("invalid frame: {reason}"),
        });
        rest = &rest[n..];
    }
    out
}

#[test]
fn the_decoder_yields_the_recorded_events_whatever_the_chunking() {
    let expected = reference();
    assert_eq!(expected.len(), 128);
    let lf = SAMPLE.as_bytes().to_vec();
    let crlf = SAMPLE.replace('\n', "\r\n").into_bytes();
    let cr = SAMPLE.replace('\n', "\r").into_bytes();
    // Mixed endings, frame by frame.
    let mixed: Vec<u8> = frames()
        .iter()
        .enumerate()
        .map(|(i, f)| match i % 3 {
            0 => f.clone(),
            1 => f.replace('\n', "\r\n"),
            _ => f.replacen('\n', "\r\n", 1).replacen('\n', "\r", 1),
        })
        .collect::<String>()
        .into_bytes();
    // A cheap deterministic pseudo-random size sequence (1..=97).
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for (name, bytes) in [("lf", &lf), ("crlf", &crlf), ("cr", &cr), ("mixed", &mixed)] {
        for size in [1usize, 2, 7, 64, 4096, usize::MAX] {
            assert_eq!(
                decode_in_chunks(bytes, &mut || size),
                expected,
                "{name} in chunks of {size}"
            );
        }
        let mut random = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 97 + 1) as usize
        };
        assert_eq!(
            decode_in_chunks(bytes, &mut random),
            expected,
            "{name} in random chunks"
        );
    }
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let text =
        "data: {\"type\":\"session.idle\",\ndata: \"properties\":{\"sessionID\":\"ses_1\"}}\n\n";
    decoder.feed(text.as_bytes(), &mut |f| {
        if let SseFrame::Data(d) = f {
            out.push(parse_frame(d).expect("parses").event);
        }
    });
    assert_eq!(
        out,
        [Event::SessionIdle {
            session_id: "ses_1".into()
        }]
    );
}

/// What the fake does on one connection.
#[derive(Clone)]
enum Step {
    Send(Vec<u8>),
    /// Waits (so what was sent goes out before a [`Step::Fail`]).
    Pause(u64),
    /// Breaks the connection mid-body.
    Fail,
    /// Sends nothing more, keeping the connection open.
    Hang,
}

#[derive(Clone)]
struct Conn {
    status: u16,
    steps: Vec<Step>,
}

impl Conn {
    fn ok(steps: Vec<Step>) -> Self {
        Self { status: 200, steps }
    }
}

type Script = Arc<Mutex<VecDeque<Conn>>>;

/// A fake `/global/event` that plays one scripted connection per request (then hangs).
async fn fake(conns: Vec<Conn>) -> (Client, Arc<Mutex<usize>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let script: Script = Arc::new(Mutex::new(conns.into()));
    let count = Arc::new(Mutex::new(0usize));
    let app = Router::new()
        .route("/global/event", get(serve))
        .with_state((script, count.clone()));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = Client::new(ServerConfig {
        base_url: format!("http://{addr}"),
        password: None,
    })
    .expect("client");
    (client, count)
}

async fn serve(State((script, count)): State<(Script, Arc<Mutex<usize>>)>) -> Response {
    *count.lock().expect("count") += 1;
    let conn = script
        .lock()
        .expect("script")
        .pop_front()
        .unwrap_or(Conn::ok(vec![Step::Hang]));
    if conn.status != 200 {
        return (StatusCode::from_u16(conn.status).expect("status"), "nope").into_response();
    }
    let steps: VecDeque<Step> = conn.steps.into();
    let body = futures_util::stream::unfold(steps, |mut steps| async move {
        match steps.pop_front()? {
            Step::Send(bytes) => {
                // Let each write go out on its own.
                tokio::task::yield_now().await;
                Some((Ok::<Bytes, std::io::Error>(Bytes::from(bytes)), steps))
            }
            Step::Pause(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Some((Ok(Bytes::new()), steps))
            }
            Step::Fail => Some((Err(std::io::Error::other("dropped")), steps)),
            Step::Hang => {
                std::future::pending::<()>().await;
                None
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .expect("response")
}

fn chunked(bytes: &[u8], size: usize) -> Vec<Step> {
    bytes.chunks(size).map(|c| Step::Send(c.to_vec())).collect()
}

fn options(heartbeat_ms: u64) -> StreamOptions {
    StreamOptions {
        heartbeat_timeout: Duration::from_millis(heartbeat_ms),
        answer_timeout: Duration::from_millis(heartbeat_ms),
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(80),
    }
}

async fn next(rx: &mut mpsc::Receiver<StreamItem>) -> StreamItem {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an item within 10 s")
        .expect("stream alive")
}

/// At least `n` events, from as many batches as they came in.
async fn events(rx: &mut mpsc::Receiver<StreamItem>, n: usize) -> Vec<Envelope> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match next(rx).await {
            StreamItem::Events(batch) => {
                assert!(!batch.is_empty(), "a batch is never empty");
                out.extend(batch);
            }
            other => panic!("expected event {} of {n}, got {other:?}", out.len()),
        }
    }
    out
}

fn start(client: Client, options: StreamOptions) -> (StreamHandle, mpsc::Receiver<StreamItem>) {
    let (tx, rx) = mpsc::channel(64);
    (spawn_event_stream(client, tx, options), rx)
}

#[tokio::test]
async fn the_recorded_stream_arrives_intact_in_odd_chunks() {
    let crlf = SAMPLE.replace('\n', "\r\n").into_bytes();
    let mut odd = Vec::new();
    let mut rest = SAMPLE.as_bytes();
    for size in [1usize, 7, 3, 1, 13, 7].iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = (*size).min(rest.len());
        odd.push(Step::Send(rest[..n].to_vec()));
        rest = &rest[n..];
    }
    let (client, _) = fake(vec![Conn::ok(chunked(&crlf, 7)), Conn::ok(odd)]).await;
    let (_handle, mut rx) = start(client, options(5_000));
    let expected = reference();
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(
        events(&mut rx, expected.len()).await,
        expected,
        "7-byte CRLF chunks"
    );
    assert!(
        matches!(next(&mut rx).await, StreamItem::Disconnected { .. }),
        "end of body is a disconnect"
    );
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(
        events(&mut rx, expected.len()).await,
        expected,
        "1/7/3/13-byte LF chunks"
    );
}

#[tokio::test]
async fn a_connection_dropped_mid_frame_reconnects_and_continues() {
    let frames = frames();
    let expected = reference();
    let k = 40;
    let mut first: Vec<Step> = frames[..k]
        .iter()
        .map(|f| Step::Send(f.clone().into_bytes()))
        .collect();
    first.push(Step::Send(
        frames[k].as_bytes()[..frames[k].len() / 2].to_vec(),
    ));
    first.push(Step::Pause(100));
    first.push(Step::Fail);
    let rest: String = frames[k..].concat();
    let (client, count) = fake(vec![
        Conn::ok(first),
        Conn::ok(chunked(rest.as_bytes(), 1000)),
    ])
    .await;
    let (_handle, mut rx) = start(client, options(5_000));

    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(events(&mut rx, k).await, expected[..k]);
    let StreamItem::Disconnected { retry_in_ms, .. } = next(&mut rx).await else {
        panic!("expected Disconnected")
    };
    assert!(
        (10..=20).contains(&retry_in_ms),
        "first retry after a connect is the initial backoff, jittered: {retry_in_ms}"
    );
    assert_eq!(
        next(&mut rx).await,
        StreamItem::Connected,
        "the half frame was dropped, not emitted"
    );
    assert_eq!(events(&mut rx, expected.len() - k).await, expected[k..]);
    assert_eq!(*count.lock().expect("count"), 2);
}

#[tokio::test]
async fn silence_beyond_the_heartbeat_timeout_reconnects() {
    let frames = frames();
    let expected = reference();
    let (client, _) = fake(vec![
        Conn::ok(vec![Step::Send(frames[0].clone().into_bytes()), Step::Hang]),
        Conn::ok(vec![Step::Send(frames[1].clone().into_bytes()), Step::Hang]),
    ])
    .await;
    let (_handle, mut rx) = start(client, options(300));
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(events(&mut rx, 1).await, expected[..1]);
    let StreamItem::Disconnected { error, cause, .. } = next(&mut rx).await else {
        panic!("expected Disconnected")
    };
    assert!(error.contains("heartbeat"), "{error}");
    assert_eq!(cause, DropCause::HeartbeatLost);
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(events(&mut rx, 1).await, expected[1..2]);
}

#[tokio::test]
async fn the_events_of_one_read_arrive_as_one_batch() {
    let expected = reference();
    let (client, _) = fake(vec![Conn::ok(vec![
        Step::Send(SAMPLE.as_bytes().to_vec()),
        Step::Hang,
    ])])
    .await;
    let (_handle, mut rx) = start(client, options(5_000));
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    let mut got = Vec::new();
    let mut sends = 0;
    while got.len() < expected.len() {
        match next(&mut rx).await {
            StreamItem::Events(batch) => {
                sends += 1;
                got.extend(batch);
            }
            other => panic!("expected events, got {other:?}"),
        }
    }
    assert_eq!(got, expected);
    // One send per read of the connection, not one per event.
    assert!(
        sends * 8 <= expected.len(),
        "{sends} sends for {} events",
        expected.len()
    );
}

#[tokio::test]
async fn a_malformed_frame_is_reported_and_the_stream_goes_on() {
    let frames = frames();
    let expected = reference();
    let garbage = [
        "data: {\"type\":\n\n",
        "data: {\"type\":\"session.idle\",\"properties\":{}}\n\n",
        "data: \u{1}not json at all\n\n",
    ];
    let mut steps = vec![Step::Send(frames[0].clone().into_bytes())];
    for g in garbage {
        steps.push(Step::Send(g.as_bytes().to_vec()));
    }
    steps.push(Step::Send(b"data: \xff\xfe\n\n".to_vec()));
    steps.push(Step::Send(frames[1].clone().into_bytes()));
    steps.push(Step::Hang);
    let (client, _) = fake(vec![Conn::ok(steps)]).await;
    let (_handle, mut rx) = start(client, options(5_000));
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert_eq!(events(&mut rx, 1).await, expected[..1]);
    for _ in 0..4 {
        let item = next(&mut rx).await;
        assert!(matches!(item, StreamItem::Malformed { .. }), "{item:?}");
    }
    assert_eq!(events(&mut rx, 1).await, expected[1..2]);
}

#[tokio::test]
async fn refusals_back_off_exponentially_and_reset_after_a_connect() {
    let frames = frames();
    let refused = Conn {
        status: 401,
        steps: Vec::new(),
    };
    let (client, _) = fake(vec![
        refused.clone(),
        refused.clone(),
        refused.clone(),
        refused,
        Conn::ok(vec![
            Step::Send(frames[0].clone().into_bytes()),
            Step::Pause(100),
            Step::Fail,
        ]),
    ])
    .await;
    let (_handle, mut rx) = start(client, options(5_000));
    let mut delays = Vec::new();
    for _ in 0..4 {
        match next(&mut rx).await {
            StreamItem::Disconnected {
                error,
                cause,
                retry_in_ms,
            } => {
                assert!(error.contains("401"), "{error}");
                assert_eq!(cause, DropCause::Unauthorized);
                delays.push(retry_in_ms);
            }
            other => panic!("expected Disconnected, got {other:?}"),
        }
    }
    // 20 ms doubling to the 80 ms cap, each jittered into [half, full].
    let bounds = [(10, 20), (20, 40), (40, 80), (40, 80)];
    for (delay, (low, high)) in delays.iter().zip(bounds) {
        assert!((low..=high).contains(delay), "{delays:?}");
    }
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    assert!(matches!(next(&mut rx).await, StreamItem::Events(_)));
    let StreamItem::Disconnected { retry_in_ms, .. } = next(&mut rx).await else {
        panic!("expected Disconnected")
    };
    assert!(
        (10..=20).contains(&retry_in_ms),
        "backoff reset after a connect: {retry_in_ms}"
    );
}

#[tokio::test]
async fn dropping_the_handle_stops_the_stream() {
    let (client, _) = fake(vec![Conn::ok(vec![Step::Hang])]).await;
    let (handle, mut rx) = start(client, options(5_000));
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    drop(handle);
    let end = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("ends within 5 s");
    assert_eq!(end, None, "the task (the only sender) is gone");
}

#[tokio::test]
async fn dropping_the_receiver_ends_the_task() {
    let (client, _) = fake(vec![Conn::ok(vec![Step::Hang])]).await;
    let (handle, mut rx) = start(client, options(5_000));
    assert_eq!(next(&mut rx).await, StreamItem::Connected);
    drop(rx);
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while !handle.is_finished() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "task still running 5 s after its receiver was dropped"
    );
}

/// A server that is still starting accepts the connection but never answers: the stream must
/// give up after `answer_timeout` and retry, instead of hanging for the heartbeat window.
#[tokio::test]
async fn unanswered_connection_is_retried_after_the_answer_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        // First connection: read the request, say nothing, keep the socket open.
        let (silent, _) = listener.accept().await.expect("accept");
        // Second connection: a proper event stream.
        let (mut sock, _) = listener.accept().await.expect("accept");
        let mut buf = [0u8; 4096];
        let _ = sock.read(&mut buf).await;
        let body = "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n";
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
        sock.write_all(head.as_bytes()).await.expect("write");
        sock.write_all(body.as_bytes()).await.expect("write");
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(silent);
    });
    let client = Client::new(ServerConfig {
        base_url: format!("http://{addr}"),
        password: None,
    })
    .expect("client");
    let (tx, mut rx) = mpsc::channel(16);
    let opts = StreamOptions {
        heartbeat_timeout: Duration::from_secs(30),
        answer_timeout: Duration::from_millis(300),
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(80),
    };
    let started = std::time::Instant::now();
    let _handle = spawn_event_stream(client, tx, opts);
    match next(&mut rx).await {
        StreamItem::Disconnected { error, cause, .. } => {
            assert!(error.contains("no answer"), "{error}");
            assert_eq!(cause, DropCause::NoAnswer);
        }
        other => panic!("expected a dropped attempt, got {other:?}"),
    }
    assert!(matches!(next(&mut rx).await, StreamItem::Connected));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "retried long before the heartbeat window"
    );
}

/// A port where nothing listens is "unreachable" (what the UI words as "the server is gone"),
/// and the stream keeps trying with a delay it announces.
#[tokio::test]
async fn nothing_listening_is_unreachable_and_retried() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let client = Client::new(ServerConfig {
        base_url: format!("http://{addr}"),
        password: None,
    })
    .expect("client");
    let (tx, mut rx) = mpsc::channel(16);
    let opts = StreamOptions {
        heartbeat_timeout: Duration::from_secs(30),
        answer_timeout: Duration::from_millis(2_000),
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(80),
    };
    let _handle = spawn_event_stream(client, tx, opts);
    for _ in 0..2 {
        match next(&mut rx).await {
            StreamItem::Disconnected {
                cause, retry_in_ms, ..
            } => {
                assert_eq!(cause, DropCause::Unreachable);
                assert!((10..=80).contains(&retry_in_ms), "{retry_in_ms}");
            }
            other => panic!("expected a dropped attempt, got {other:?}"),
        }
    }
}
