//! Start-to-exit time of `crosscheck gate plan` on a ledger hit, against `/bin/true` spawned
//! the same way from the same process.
//!
//! ```sh
//! cargo build --release -p crosscheck-cli --bins --examples
//! target/release/examples/gate_overhead            # uses target/release/crosscheck
//! target/release/examples/gate_overhead PATH N     # another binary, N runs
//! ```
//!
//! It primes an isolated ledger (temp data and config dirs; the reviewer points at a closed
//! port, so the key ends up recorded as unreviewed after two attempts), then times N runs of
//! the gate with a Claude Code payload on stdin. Prints figures; asserts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a failed set-up ends it with its message

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PAYLOAD: &str = r##"{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"/tmp/bench-project","hook_event_name":"PreToolUse","tool_name":"ExitPlanMode","tool_input":{"plan":"# Plan\n\n1. Do the thing.\n   Status: Not started\n"}}"##;

fn run_once(program: &str, args: &[&str], envs: &[(&str, String)]) -> (Duration, Option<i32>) {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        // `true` may exit before reading: a broken pipe is fine.
        let _ = stdin.write_all(PAYLOAD.as_bytes());
    }
    let status = child
        .wait()
        .unwrap_or_else(|e| panic!("wait {program}: {e}"));
    (started.elapsed(), status.code())
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(samples[samples.len() / 2]);
    let p95 = ms(samples[(samples.len() * 95).div_ceil(100).saturating_sub(1)]);
    let mean = samples.iter().map(|d| ms(*d)).sum::<f64>() / samples.len() as f64;
    (median, p95, mean)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let binary = args.next().map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("current exe");
        exe.parent()
            .and_then(|examples| examples.parent())
            .map(|profile| profile.join("crosscheck"))
            .expect("target dir")
    });
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    let binary = binary.to_string_lossy().into_owned();

    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("review.json"),
        r#"{"providers": {"anthropic": {"kind": "anthropic", "baseUrl": "http://127.0.0.1:9", "apiKey": "bench"}}, "reviewTimeoutMs": 2000}"#,
    )
    .expect("config");
    let envs = [
        (
            "CROSSCHECK_DATA_DIR",
            dir.path().join("data").to_string_lossy().into_owned(),
        ),
        (
            "CROSSCHECK_CONFIG_DIR",
            config.to_string_lossy().into_owned(),
        ),
    ];
    let gate = ["gate", "plan"];

    // Prime: attempt 1 blocks (reviewer unreachable), attempt 2 proceeds unreviewed; from
    // then on the key is a ledger hit.
    let primes: Vec<_> = (0..2).map(|_| run_once(&binary, &gate, &envs).1).collect();
    let (_, hit) = run_once(&binary, &gate, &envs);
    assert_eq!(
        hit,
        Some(0),
        "expected a ledger hit after priming (primes: {primes:?})"
    );

    for _ in 0..5 {
        run_once(&binary, &gate, &envs);
        run_once("/bin/true", &[], &envs);
    }
    let mut gate_samples = Vec::with_capacity(n);
    let mut true_samples = Vec::with_capacity(n);
    for _ in 0..n {
        let (d, code) = run_once(&binary, &gate, &envs);
        assert_eq!(code, Some(0));
        gate_samples.push(d);
        true_samples.push(run_once("/bin/true", &[], &envs).0);
    }
    let (g_med, g_p95, g_mean) = stats(gate_samples);
    let (t_med, t_p95, t_mean) = stats(true_samples);
    println!("crosscheck gate plan on a ledger hit, {n} runs ({binary})");
    println!("  gate      median {g_med:7.2} ms   p95 {g_p95:7.2} ms   mean {g_mean:7.2} ms");
    println!("  /bin/true median {t_med:7.2} ms   p95 {t_p95:7.2} ms   mean {t_mean:7.2} ms");
    println!(
        "  ratio     median {:7.2}x     p95 {:7.2}x   overhead over /bin/true {:.2} ms (median)",
        g_med / t_med,
        g_p95 / t_p95,
        g_med - t_med
    );
    println!("  target    start to exit <= 15 ms");
}
