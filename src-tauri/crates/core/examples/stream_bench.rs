//! Benchmark: follow a server's `/global/event` stream with the real client and apply every
//! event to the store (one followed transcript), then print events/s.
//! Usage: `stream_bench URL EVENTS SESSION_ID` (the Node side serves the stream and compares).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a failed set-up ends it with its message

use std::time::Instant;

use crosscheck_core::store::{Store, Transcript};
use crosscheck_opencode::{
    Client, ServerConfig, StreamItem, spawn_event_stream, stream::StreamOptions,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: stream_bench URL EVENTS SESSION_ID")?;
    let events: usize = args.next().ok_or("missing EVENTS")?.parse()?;
    let session = args.next().ok_or("missing SESSION_ID")?;
    let client = Client::new(ServerConfig {
        base_url: url,
        password: None,
    })?;
    let mut store = Store::default();
    // A loaded (empty) window, as after opening the session: its events are applied, deltas
    // appended in place. (`Transcript::default()` is one still loading, which only records.)
    store.put_transcript(&session, Transcript::from_page(Vec::new(), None));
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let start = Instant::now();
    let _handle = spawn_event_stream(client, tx, StreamOptions::default());
    let mut seen = 0usize;
    let mut changes = 0usize;
    let mut batches = 0usize;
    'read: while let Some(item) = rx.recv().await {
        if let StreamItem::Events(batch) = item {
            batches += 1;
            for envelope in batch {
                seen += 1;
                if store.apply(envelope.event).is_some() {
                    changes += 1;
                }
                if seen >= events {
                    break 'read;
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let messages = store.transcript(&session).map_or(0, |t| t.messages().len());
    println!(
        "events={seen} changes={changes} messages={messages} batches={batches} seconds={secs:.3} events_per_s={:.0}",
        seen as f64 / secs
    );
    Ok(())
}
