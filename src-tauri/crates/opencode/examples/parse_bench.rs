//! Throughput of event parsing: `parse_frame` alone, and SSE splitting + parsing from an
//! in-memory byte stream, over ~200k generated `/global/event` frames mixed like real turns
//! (deltas, part snapshots, tool calls, message updates, statuses, heartbeats), plus the
//! recorded fixture. Prints figures only.
//!
//! Run: `cargo run --release -p crosscheck-opencode --example parse_bench`
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a failed set-up ends it with its message

use std::hint::black_box;
use std::time::Instant;

use crosscheck_opencode::event::{FrameParser, parse_frame};
use crosscheck_opencode::stream::{SseDecoder, SseFrame};
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("../tests/fixtures/sample-events.sse");
/// Frames to generate; `PARSE_BENCH_EVENTS` overrides (e.g. small, under valgrind).
fn target_events() -> usize {
    std::env::var("PARSE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// Timed runs per figure (the best counts); `PARSE_BENCH_ROUNDS` overrides.
fn rounds() -> usize {
    std::env::var("PARSE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}
const WORDS: &[&str] = &[
    " the",
    " session",
    " review",
    " handoff",
    " function",
    " returns",
    " a",
    " value",
    " of",
    " type",
    " `Result<T, Error>`",
    ",",
    ".",
    "\n",
    " and",
    " then",
    " we",
    " check",
    " whether",
    " it",
    " is",
    " idle",
    " — ",
    " ✓",
    " \"quoted\"",
    " path/to/file.rs",
    " 42",
    " however",
    " metadata",
];

/// A tiny deterministic generator.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

struct Gen {
    rng: Lcg,
    counter: u64,
    frames: Vec<String>,
}

impl Gen {
    fn id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!(
            "{prefix}_{:012x}{:014}",
            0x22d0_bb6a_c001u64 + self.counter,
            self.counter
        )
    }

    fn push(&mut self, kind: &str, properties: Value) {
        let event = json!({"id": self.id("evt"), "type": kind, "properties": properties});
        let frame =
            json!({"directory": "/home/user/project", "project": "global", "payload": event});
        self.frames.push(frame.to_string());
    }

    fn turn(&mut self, session: &str) {
        let now = 1_796_052_072_108i64 + self.counter as i64;
        let user = self.id("msg");
        self.push("message.updated", json!({"sessionID": session, "info": {"id": user, "role": "user", "sessionID": session,
            "time": {"created": now}, "agent": "build", "model": {"providerID": "fake", "modelID": "fake-model"}}}));
        let user_part = self.id("prt");
        self.push("message.part.updated", json!({"sessionID": session, "part": {"type": "text",
            "text": "Please review the handoff flow and check the metadata contract.", "messageID": user,
            "sessionID": session, "id": user_part}, "time": now}));
        self.push(
            "session.status",
            json!({"sessionID": session, "status": {"type": "busy"}}),
        );
        let assistant = self.id("msg");
        let info = |completed: Option<i64>| {
            let mut time = json!({"created": now});
            if let Some(c) = completed {
                time["completed"] = json!(c);
            }
            json!({"sessionID": session, "info": {"id": assistant, "sessionID": session, "role": "assistant",
                "time": time, "parentID": user, "modelID": "fake-model", "providerID": "fake", "mode": "build",
                "agent": "build", "path": {"cwd": "/home/user/project", "root": "/home/user/project"}, "cost": 0,
                "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}})
        };
        self.push("message.updated", info(None));
        let step = self.id("prt");
        self.push(
            "message.part.updated",
            json!({"sessionID": session, "part": {"id": step, "messageID": assistant,
            "sessionID": session, "type": "step-start"}, "time": now}),
        );
        // Sometimes a tool call first.
        if self.rng.next().is_multiple_of(3) {
            let tool = self.id("prt");
            let output: String = (0..60)
                .map(|i| format!("line {i}: fn example() -> u32 {{ {i} }}\n"))
                .collect();
            for (status, out) in [
                ("pending", None),
                ("running", None),
                ("completed", Some(output)),
            ] {
                let mut state = json!({"status": status, "input": {"filePath": "/home/user/project/src/lib.rs"}});
                if let Some(out) = out {
                    state["output"] = json!(out);
                    state["title"] = json!("src/lib.rs");
                }
                self.push(
                    "message.part.updated",
                    json!({"sessionID": session, "part": {"id": tool,
                    "messageID": assistant, "sessionID": session, "type": "tool", "tool": "read",
                    "callID": "call_1", "state": state}, "time": now}),
                );
            }
        }
        let text_part = self.id("prt");
        self.push("message.part.updated", json!({"sessionID": session, "part": {"id": text_part,
            "messageID": assistant, "sessionID": session, "type": "text", "text": "", "time": {"start": now}}, "time": now}));
        let mut text = String::new();
        let deltas = 120 + self.rng.next() % 80;
        for _ in 0..deltas {
            let word = WORDS[self.rng.next() % WORDS.len()];
            text.push_str(word);
            self.push(
                "message.part.delta",
                json!({"sessionID": session, "messageID": assistant, "partID": text_part,
                "field": "text", "delta": word}),
            );
            if self.rng.next().is_multiple_of(60) {
                self.push("server.heartbeat", json!({}));
            }
        }
        self.push(
            "message.part.updated",
            json!({"sessionID": session, "part": {"id": text_part,
            "messageID": assistant, "sessionID": session, "type": "text", "text": text,
            "time": {"start": now, "end": now + 900}}, "time": now + 900}),
        );
        let finish = self.id("prt");
        self.push("message.part.updated", json!({"sessionID": session, "part": {"id": finish, "reason": "stop",
            "messageID": assistant, "sessionID": session, "type": "step-finish", "tokens": {"total": 15, "input": 10,
            "output": 5, "reasoning": 0, "cache": {"write": 0, "read": 0}}, "cost": 0}, "time": now + 901}));
        self.push("message.updated", info(Some(now + 902)));
        self.push(
            "session.status",
            json!({"sessionID": session, "status": {"type": "idle"}}),
        );
        self.push("session.idle", json!({"sessionID": session}));
        self.push(
            "session.updated",
            json!({"sessionID": session, "info": {"id": session, "slug": "kind-rocket",
            "projectID": "global", "directory": "/home/user/project", "title": "Review the handoff",
            "version": "1.18.33", "metadata": {"openchamber": {"reviewSessionID": "ses_review"}},
            "time": {"created": now, "updated": now + 903}}}),
        );
        self.push("session.diff", json!({"sessionID": session, "diff": []}));
    }
}

fn generate() -> Vec<String> {
    let mut g = Gen {
        rng: Lcg(7),
        counter: 0,
        frames: Vec::with_capacity(target_events() + 400),
    };
    let sessions = [
        "ses_dd2f44b87ffewDAwEqU3YCuAT7",
        "ses_dd2f44b87ffeAAAAAAAAAAAAAA",
        "ses_dd2f44b87ffeBBBBBBBBBBBBBB",
    ];
    let mut turn = 0;
    while g.frames.len() < target_events() {
        g.turn(sessions[turn % sessions.len()]);
        turn += 1;
    }
    g.frames
}

/// Time this thread has spent on a CPU, in seconds (Linux; `None` elsewhere). On a busy
/// machine it is a fairer measure than wall time, which also counts waiting for a CPU.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

struct Timing {
    wall: f64,
    cpu: Option<f64>,
    count: usize,
}

fn report(label: &str, bytes: usize, t: &Timing) {
    let rate = |s: f64| (t.count as f64 / s, bytes as f64 / s / 1e6);
    let (wall_events, wall_mb) = rate(t.wall);
    print!("{label:<44} wall {wall_events:>9.0} events/s {wall_mb:>7.1} MB/s");
    if let Some(cpu) = t.cpu {
        let (cpu_events, cpu_mb) = rate(cpu);
        print!(" | on-CPU {cpu_events:>9.0} events/s {cpu_mb:>7.1} MB/s");
    }
    println!("  ({} events)", t.count);
}

/// Best of `rounds` runs of `f`.
fn best_of(rounds: usize, mut f: impl FnMut() -> usize) -> Timing {
    let mut best = Timing {
        wall: f64::INFINITY,
        cpu: None,
        count: 0,
    };
    for _ in 0..rounds {
        let cpu_start = thread_cpu_seconds();
        let started = Instant::now();
        best.count = black_box(f());
        best.wall = best.wall.min(started.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_start, thread_cpu_seconds()) {
            best.cpu = Some(best.cpu.map_or(b - a, |c: f64| c.min(b - a)));
        }
    }
    best
}

fn parse_all(frames: &[String]) -> usize {
    frames
        .iter()
        .filter(|f| black_box(parse_frame(f)).is_ok())
        .count()
}

/// Splitting and parsing as the event stream does (one `FrameParser` per connection).
fn split_and_parse(stream: &[u8], chunk: usize) -> usize {
    let mut decoder = SseDecoder::new();
    let mut parser = FrameParser::new();
    let mut ok = 0;
    for piece in stream.chunks(chunk) {
        decoder.feed(piece, &mut |frame| {
            if let SseFrame::Data(json) = frame
                && black_box(parser.parse(json)).is_ok()
            {
                ok += 1;
            }
        });
    }
    ok
}

fn split_only(stream: &[u8], chunk: usize) -> usize {
    let mut decoder = SseDecoder::new();
    let mut n = 0;
    for piece in stream.chunks(chunk) {
        decoder.feed(piece, &mut |frame| {
            black_box(&frame);
            n += 1;
        });
    }
    n
}

fn main() {
    let frames = generate();
    let bytes: usize = frames.iter().map(String::len).sum();
    let stream: Vec<u8> = frames
        .iter()
        .flat_map(|f| ["data: ", f.as_str(), "\n\n"])
        .collect::<String>()
        .into_bytes();
    let deltas = frames
        .iter()
        .filter(|f| f.contains("\"message.part.delta\""))
        .count();
    println!(
        "generated {} frames ({:.1} MB, {:.0}% deltas, {:.0} bytes/frame average)",
        frames.len(),
        bytes as f64 / 1e6,
        100.0 * deltas as f64 / frames.len() as f64,
        bytes as f64 / frames.len() as f64
    );

    // Lower bound: serde_json reading each frame without building anything.
    let t = best_of(rounds(), || {
        frames
            .iter()
            .filter(|f| black_box(serde_json::from_str::<serde::de::IgnoredAny>(f)).is_ok())
            .count()
    });
    report("(reference) serde_json skim, no values", bytes, &t);
    let t = best_of(rounds(), || parse_all(&frames));
    report("parse_frame (generated /global/event)", bytes, &t);
    let (only_deltas, others): (Vec<String>, Vec<String>) = frames
        .iter()
        .cloned()
        .partition(|f| f.contains("\"message.part.delta\""));
    let t = best_of(rounds(), || parse_all(&only_deltas));
    report(
        "  of which deltas",
        only_deltas.iter().map(String::len).sum(),
        &t,
    );
    let t = best_of(rounds(), || parse_all(&others));
    report(
        "  of which the rest",
        others.iter().map(String::len).sum(),
        &t,
    );

    for chunk in [16 * 1024, 1024] {
        let t = best_of(rounds(), || split_and_parse(&stream, chunk));
        report(
            &format!("SSE split + FrameParser ({chunk}-byte chunks)"),
            stream.len(),
            &t,
        );
    }
    let t = best_of(rounds(), || split_only(&stream, 16 * 1024));
    report("SSE split only (16 KiB chunks)", stream.len(), &t);

    // The recorded stream (bare /event frames), repeated to ~200k events.
    let fixture_frames: Vec<&str> = FIXTURE
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    let repeat = target_events() / fixture_frames.len().max(1);
    let fixture_stream: Vec<u8> = FIXTURE.repeat(repeat).into_bytes();
    let t = best_of(rounds(), || {
        let mut ok = 0;
        for _ in 0..repeat {
            ok += fixture_frames
                .iter()
                .filter(|f| black_box(parse_frame(f)).is_ok())
                .count();
        }
        ok
    });
    report(
        "parse_frame (recorded fixture, repeated)",
        fixture_stream.len(),
        &t,
    );
    let t = best_of(rounds(), || split_and_parse(&fixture_stream, 16 * 1024));
    report(
        "SSE split + FrameParser (fixture, 16 KiB)",
        fixture_stream.len(),
        &t,
    );
}
