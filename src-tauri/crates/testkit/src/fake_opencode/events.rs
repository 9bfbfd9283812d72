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
    let stream = frames(
        shared.events.subscribe(),
        shared.drop_streams.subscribe(),
        shared.subscriptions_held.subscribe(),
    );
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

/// What an open event stream holds between frames.
struct Open {
    events: broadcast::Receiver<String>,
    drop_signal: watch::Receiver<u64>,
    /// `Some` until the stream has subscribed (see [`FakeOpencode::hold_subscriptions`]).
    held: Option<watch::Receiver<bool>>,
    heartbeat: tokio::time::Interval,
    first: Option<String>,
}

pub(super) fn frames(
    events: broadcast::Receiver<String>,
    mut drop_signal: watch::Receiver<u64>,
    held: watch::Receiver<bool>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    drop_signal.borrow_and_update();
    let start = tokio::time::Instant::now() + HEARTBEAT;
    let open = Open {
        events,
        drop_signal,
        held: Some(held),
        heartbeat: tokio::time::interval_at(start, HEARTBEAT),
        first: Some(global_frame("server.connected")),
    };
    futures_util::stream::unfold(open, |mut open| async move {
        if let Some(frame) = open.first.take() {
            return Some((sse(&frame), open));
        }
        // Not held: subscribed from the start; as with OpenCode, the client sees that only with
        // the next event (or the heartbeat).
        if let Some(mut held) = open.held.take()
            && *held.borrow_and_update()
        {
            // Subscribes only once released: what was emitted meanwhile never reaches it.
            tokio::select! {
                _ = open.drop_signal.changed() => return None,
                released = held.wait_for(|h| !*h) => if released.is_err() { return None },
            }
            open.events = open.events.resubscribe();
        }
        let Open {
            events,
            drop_signal,
            heartbeat,
            ..
        } = &mut open;
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
                Next::Frame(frame) => return Some((sse(&frame), open)),
            }
        }
    })
}
