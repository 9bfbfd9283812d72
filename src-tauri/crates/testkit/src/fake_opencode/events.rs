//! The fake's `/global/event` stream: `server.connected`, every emitted frame, a heartbeat,
//! and the end a test asks for.

use super::*;

/// `GET /global/event`: `server.connected`, then every event and a heartbeat every 10 s,
/// until [`FakeOpencode::drop_event_streams`].
pub(super) fn event_stream(shared: &Arc<Shared>) -> Response {
    {
        let mut st = shared.lock();
        if st.streams_blocked {
            return json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"name": "Unavailable"}),
            );
        }
        st.streams_opened += 1;
    }
    let stream = frames(shared.events.subscribe(), shared.drop_streams.subscribe());
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .expect("event stream response")
}

pub(super) fn sse(data: &str) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {data}\n\n")))
}

pub(super) fn global_frame(kind: &str) -> String {
    json!({"directory": "global", "payload": {"id": ids::ascending("evt"), "type": kind, "properties": {}}}).to_string()
}

pub(super) fn frames(
    events: broadcast::Receiver<String>,
    mut drop_signal: watch::Receiver<u64>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    drop_signal.borrow_and_update();
    let start = tokio::time::Instant::now() + HEARTBEAT;
    let heartbeat = tokio::time::interval_at(start, HEARTBEAT);
    let first = Some(global_frame("server.connected"));
    futures_util::stream::unfold(
        (events, drop_signal, heartbeat, first),
        |(mut events, mut drop_signal, mut heartbeat, mut first)| async move {
            if let Some(frame) = first.take() {
                return Some((sse(&frame), (events, drop_signal, heartbeat, first)));
            }
            loop {
                enum Next {
                    End,
                    Skip,
                    Frame(String),
                }
                let next = tokio::select! {
                    biased;
                    _ = drop_signal.changed() => Next::End,
                    received = events.recv() => match received {
                        Ok(frame) => Next::Frame(frame),
                        Err(broadcast::error::RecvError::Lagged(_)) => Next::Skip,
                        Err(broadcast::error::RecvError::Closed) => Next::End,
                    },
                    _ = heartbeat.tick() => Next::Frame(global_frame("server.heartbeat")),
                };
                match next {
                    Next::End => return None,
                    Next::Skip => continue,
                    Next::Frame(frame) => {
                        return Some((sse(&frame), (events, drop_signal, heartbeat, first)));
                    }
                }
            }
        },
    )
}
