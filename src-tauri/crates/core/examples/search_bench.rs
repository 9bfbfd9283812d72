//! Benchmark: a transcript search over the transcripts the core holds (what `SearchTranscripts`
//! answers at once): 50 transcripts of 1,000 messages of about 600 characters, a few lines each,
//! one matching line in every transcript. Prints the median of 20 searches; asserts nothing.
//! Usage: `search_bench [TRANSCRIPTS] [MESSAGES]` (default 50 and 1,000).

use std::time::Instant;

use crosscheck_core::search::{HITS_PER_SESSION, Needle, find_lines};
use crosscheck_opencode::MessageWithParts;

fn message(session: usize, i: usize, text: String) -> Result<MessageWithParts, serde_json::Error> {
    let id = format!("msg_{session:03}_{i:05}");
    serde_json::from_value(serde_json::json!({
        "info": {"id": id, "sessionID": format!("ses_{session}"), "role": if i.is_multiple_of(2) { "user" } else { "assistant" }, "time": {"created": i}},
        "parts": [{"id": format!("prt_{session}_{i}"), "sessionID": format!("ses_{session}"), "messageID": id, "type": "text", "text": text}]
    }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let sessions: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(50);
    let messages: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(1_000);
    let line = "The parser reads each record and checks the fields before it writes the row out.";
    let mut transcripts: Vec<(String, Vec<MessageWithParts>)> = Vec::with_capacity(sessions);
    for s in 0..sessions {
        let mut list = Vec::with_capacity(messages);
        for i in 0..messages {
            let mut text = format!("{line}\n{line}\n{line}\n{line}\n{line}\n{line}\n{line}");
            if i == messages / 3 {
                text.push_str("\nThe zebra crossing fails on empty input.");
            }
            list.push(message(s, i, text)?);
        }
        transcripts.push((format!("ses_{s}"), list));
    }
    let needle = Needle::new("zebra crossing").ok_or("needle")?;
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..20 {
        let start = Instant::now();
        found = transcripts
            .iter()
            .map(|(id, list)| find_lines(id, list, &needle, HITS_PER_SESSION).len())
            .sum::<usize>();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let chars: usize = transcripts
        .iter()
        .flat_map(|(_, l)| l.iter())
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.text.as_ref().map(String::len))
        .sum();
    println!(
        "search: {sessions} transcripts x {messages} messages ({:.1} MB of text): median {:.1} ms, max {:.1} ms, {found} lines found (budget 100 ms)",
        chars as f64 / 1e6,
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}
