//! Benchmark: a transcript search over the transcripts the core holds (what `SearchTranscripts`
//! answers at once): 50 transcripts of 1,000 messages of about 600 characters, a few lines each,
//! one matching line in every transcript. Prints the median of 20 searches, beside the same
//! searches with the scan the search used before (a byte-by-byte comparison at every place, in
//! this file as `previous_contains`) as the baseline of the same run; asserts nothing.
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

/// The search's case-insensitive `contains` before it scanned with `memchr`: the baseline.
fn previous_contains(hay: &str, lower_needle: &str) -> bool {
    if hay.is_ascii() && lower_needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), lower_needle.as_bytes());
        if n.is_empty() {
            return true;
        }
        if n.len() > h.len() {
            return false;
        }
        let first = n[0];
        return (0..=h.len() - n.len()).any(|i| {
            h[i].to_ascii_lowercase() == first
                && h[i..i + n.len()]
                    .iter()
                    .zip(n)
                    .all(|(a, b)| a.to_ascii_lowercase() == *b)
        });
    }
    hay.to_lowercase().contains(lower_needle)
}

/// The matching lines the previous scan finds in a transcript's text parts (no hit building).
fn previous_lines(messages: &[MessageWithParts], lower: &str) -> usize {
    let mut found = 0;
    for message in messages.iter().rev() {
        for part in &message.parts {
            let Some(text) = part.text.as_deref() else {
                continue;
            };
            if part.kind != "text" || !previous_contains(text, lower) {
                continue;
            }
            found += text.lines().filter(|l| previous_contains(l, lower)).count();
        }
    }
    found.min(HITS_PER_SESSION)
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
    let mut baseline = Vec::new();
    let mut baseline_found = 0;
    for _ in 0..20 {
        let start = Instant::now();
        baseline_found = transcripts
            .iter()
            .map(|(_, list)| previous_lines(list, "zebra crossing"))
            .sum::<usize>();
        baseline.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    baseline.sort_by(f64::total_cmp);
    let chars: usize = transcripts
        .iter()
        .flat_map(|(_, l)| l.iter())
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.text.as_ref().map(String::len))
        .sum();
    let median = times[times.len() / 2];
    println!(
        "search: {sessions} transcripts x {messages} messages ({:.1} MB of text): median {median:.1} ms, max {:.1} ms, {found} lines found (target <= 100 ms: {}); the previous scan (baseline, same run): median {:.1} ms, {baseline_found} lines found, {:.1}x the time",
        chars as f64 / 1e6,
        times[times.len() - 1],
        if median <= 100.0 { "met" } else { "NOT MET" },
        baseline[baseline.len() / 2],
        baseline[baseline.len() / 2] / median.max(f64::MIN_POSITIVE),
    );
    Ok(())
}
