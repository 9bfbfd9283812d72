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
//! the gate with a Claude Code payload on stdin: alone, and while another process holds a
//! write transaction on the ledger (this example re-run as `--hold DB`, which keeps the
//! transaction open until its stdin closes). Prints figures; asserts nothing.
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

/// `--hold DB`: open a write transaction on the ledger, say so, keep it until stdin closes.
fn hold(db: &str) {
    let conn = rusqlite::Connection::open(db).expect("open the ledger");
    conn.execute_batch(
        "BEGIN IMMEDIATE; INSERT INTO review_texts (kind, key, text, created_at) \
         VALUES ('plan', 'bench-holder', 'held', 0);",
    )
    .expect("write transaction");
    println!("held");
    let _ = std::io::stdout().flush();
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    conn.execute_batch("ROLLBACK").expect("rollback");
}

fn print_stats(label: &str, samples: Vec<Duration>) -> f64 {
    let (med, p95, mean) = stats(samples);
    println!("  {label:<10}median {med:7.2} ms   p95 {p95:7.2} ms   mean {mean:7.2} ms");
    med
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--hold") {
        args.next();
        hold(&args.next().expect("--hold DB"));
        return;
    }
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

    // Contended: another process holds a write transaction for the whole run.
    let db = dir.path().join("data").join("crosscheck.db");
    let mut holder = Command::new(std::env::current_exe().expect("current exe"))
        .args(["--hold", &db.to_string_lossy()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the holder");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().expect("holder stdout")),
        &mut line,
    )
    .expect("holder ready");
    assert_eq!(
        line.trim(),
        "held",
        "the holder did not take the write lock"
    );
    let runs = n.min(20);
    let mut contended = Vec::with_capacity(runs);
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    let budget = Instant::now();
    for _ in 0..runs {
        let (d, code) = run_once(&binary, &gate, &envs);
        *codes
            .entry(code.map_or("signal".into(), |c| c.to_string()))
            .or_default() += 1;
        contended.push(d);
        // A gate that waits for the lock (up to its busy timeout) would take minutes here.
        if budget.elapsed() > Duration::from_secs(40) {
            break;
        }
    }
    drop(holder.stdin.take());
    let _ = holder.wait();
    println!(
        "while another process holds a write transaction, {} runs (exit codes {codes:?})",
        contended.len()
    );
    let c_med = print_stats("gate", contended);
    println!(
        "  target    start to exit <= 15 ms, alone ({g_med:.2} ms) and contended ({c_med:.2} ms)"
    );
}
