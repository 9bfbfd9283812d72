//! Time-ordered ids in the server's own format, for messages Crosscheck sends itself.
//!
//! OpenCode makes an ascending id as `prefix_` + 12 hex digits + 14 random base62 characters.
//! The hex digits are the low 48 bits of `unix_ms * 0x1000 + counter`, where the counter
//! numbers the ids made within one millisecond (starting at 1). Ids therefore sort by creation
//! time as plain strings. (The 48 bits wrap every 2^36 ms, about 2.2 years; the server's ids
//! wrap at the same moment, so ours keep sorting like its own.)
//!
//! Here one process-wide value only ever grows: an id made in the same millisecond as the
//! previous one (or while the clock steps back) takes the previous value plus one, so ids from
//! this process are strictly ascending.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LEN: usize = 14;
const LOW_48_BITS: u64 = (1 << 48) - 1;

/// The last `unix_ms * 0x1000 + counter` handed out by this process.
static LAST: AtomicU64 = AtomicU64::new(0);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX / 0x2000))
        .unwrap_or(0)
}

/// The next time-and-counter value: the first of this millisecond, or one past the last.
fn next_value(now_ms: u64) -> u64 {
    let candidate = now_ms.saturating_mul(0x1000).saturating_add(1);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = candidate.max(last.saturating_add(1));
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn format_id(prefix: &str, value: u64) -> String {
    let mut id = String::with_capacity(prefix.len() + 1 + 12 + RANDOM_LEN);
    id.push_str(prefix);
    id.push('_');
    let hex = value & LOW_48_BITS;
    for shift in (0..12).rev() {
        let nibble = ((hex >> (shift * 4)) & 0xf) as usize;
        id.push(char::from(b"0123456789abcdef"[nibble]));
    }
    let mut rng = rand::rng();
    for _ in 0..RANDOM_LEN {
        id.push(char::from(BASE62[rng.random_range(0..BASE62.len())]));
    }
    id
}

/// A new ascending id with the given prefix (`msg`, `prt`, ...), e.g. `msg_22d0bb6ac001FoWaGRqeHFuIxw`.
pub fn ascending(prefix: &str) -> String {
    format_id(prefix, next_value(now_ms()))
}

/// A new user-message id (`msg_...`) that sorts after every id made before it.
pub fn message_id() -> String {
    ascending("msg")
}

/// A new part id (`prt_...`).
pub fn part_id() -> String {
    ascending("prt")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../tests/fixtures/sample-events.sse");

    /// Every ascending id in the recorded stream (`msg_`, `prt_`, `evt_`), in file order.
    fn fixture_ids() -> Vec<String> {
        let mut ids = Vec::new();
        for prefix in ["msg_", "prt_", "evt_"] {
            let mut rest = SAMPLE;
            while let Some(at) = rest.find(prefix) {
                let candidate = &rest[at..];
                let len = candidate
                    .bytes()
                    .position(|b| !b.is_ascii_alphanumeric() && b != b'_')
                    .unwrap_or(candidate.len());
                ids.push(candidate[..len].to_owned());
                rest = &candidate[len..];
            }
        }
        ids
    }

    fn is_well_formed(id: &str, prefix: &str) -> bool {
        let Some(rest) = id.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')) else {
            return false;
        };
        rest.len() == 26
            && rest[..12]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && rest[12..].bytes().all(|b| b.is_ascii_alphanumeric())
    }

    #[test]
    fn format_matches_the_server() {
        let ids = fixture_ids();
        assert!(ids.len() > 100, "fixture ids found: {}", ids.len());
        for id in &ids {
            let prefix = &id[..3];
            assert!(
                is_well_formed(id, prefix),
                "fixture id {id} has the expected shape"
            );
        }
        let id = message_id();
        assert!(is_well_formed(&id, "msg"), "{id}");
        assert!(is_well_formed(&part_id(), "prt"));
    }

    #[test]
    fn the_server_encoding_is_reproduced() {
        // msg_22d0bb6ac001... was made at 1796052072108 ms (its message's time.created) as the
        // first id of that millisecond.
        let value = 1_796_052_072_108u64 * 0x1000 + 1;
        assert!(format_id("msg", value).starts_with("msg_22d0bb6ac001"));
    }

    #[test]
    fn new_ids_sort_after_every_fixture_id() {
        let newest = fixture_ids()
            .into_iter()
            .filter(|id| id.starts_with("msg_"))
            .max()
            .unwrap_or_default();
        assert!(!newest.is_empty());
        let id = message_id();
        assert!(id > newest, "{id} should sort after {newest}");
    }

    #[test]
    fn ids_made_in_one_millisecond_still_sort() {
        let ids: Vec<String> = (0..10_000).map(|_| message_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn ids_from_many_threads_are_distinct_in_their_time_part() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..2_000).map(|_| message_id()).collect::<Vec<_>>()))
            .collect();
        let mut heads = std::collections::HashSet::new();
        for handle in handles {
            for id in handle.join().expect("thread") {
                assert!(
                    heads.insert(id[..16].to_owned()),
                    "time part of {id} repeated"
                );
            }
        }
    }

    #[test]
    fn a_clock_step_back_does_not_reorder() {
        let first = format_id("msg", next_value(now_ms()));
        let second = format_id("msg", next_value(now_ms().saturating_sub(60_000)));
        assert!(second > first, "{second} > {first}");
    }
}
