//! Benchmark: scroll a long transcript all the way up through the typed Api, against the
//! in-process fake OpenCode server over loopback HTTP. Each `LoadOlder` is timed with the
//! serialization the transport does, and its answer's bytes are counted; the first older page
//! is the baseline the last one is compared with. Figures only; nothing is asserted.
//! Usage: `older_pages_bench [MESSAGES]` (default 5,050: the newest page plus 100 older ones).

use std::time::Instant;

use crosscheck_core::api_types::Connection;
use crosscheck_core::requests::{LoadOlder, OpenSession};
use crosscheck_core::{Api, Change, Core, CoreOptions, OpencodeTarget, Request, ReviewSetup};
use crosscheck_opencode::ServerConfig;
use crosscheck_review::{Env, Logger};
use crosscheck_testkit::fake_opencode::FakeOpencode;

/// Median of some figures.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or_default()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 5_050,
    };
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project)?;
    let fake = FakeOpencode::start(project.to_str().ok_or("utf-8 path")?).await;
    let session = fake.seed_session("Long", None);
    // About 750 bytes a message, as in the 5,000-message (3.75 MB) session.
    fake.seed_messages(&session, total, 600);
    let core = Core::start_with_review(
        CoreOptions {
            target: OpencodeTarget::Attach(ServerConfig {
                base_url: fake.base_url.clone(),
                password: None,
            }),
            database: dir.path().join("crosscheck.db"),
        },
        ReviewSetup {
            config_dir: dir.path().join("config"),
            env: Env::Map(Default::default()),
            logger: Logger::memory().0,
        },
    )?;
    let mut changes = core.subscribe();
    while !matches!(core.connection(), Connection::Ready { .. }) {
        match changes.recv().await {
            Ok(stamped) if matches!(stamped.change, Change::Connection { .. }) => {}
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let api = Api::new(core.clone());
    api.handle(Request::OpenSession(OpenSession {
        session_id: session.clone(),
    }))
    .await
    .map_err(|e| e.message)?;
    let mut pages: Vec<(f64, usize)> = Vec::new();
    let all = Instant::now();
    loop {
        let t0 = Instant::now();
        let page = api
            .handle(Request::LoadOlder(LoadOlder {
                session_id: session.clone(),
            }))
            .await
            .map_err(|e| e.message)?;
        let bytes = serde_json::to_vec(&page)?;
        pages.push((t0.elapsed().as_secs_f64() * 1e3, bytes.len()));
        let more = serde_json::from_slice::<serde_json::Value>(&bytes)?["hasOlder"] == true;
        if !more || pages.len() >= 10_000 {
            break;
        }
    }
    let secs = all.elapsed().as_secs_f64();
    let n = pages.len();
    let moved: usize = pages.iter().map(|p| p.1).sum();
    let (first_ms, first_b) = pages[0];
    let (last_ms, last_b) = pages[n - 1];
    let k = 5.min(n);
    let head = median(pages[..k].iter().map(|p| p.0).collect());
    let tail = median(pages[n - k..].iter().map(|p| p.0).collect());
    println!(
        "older pages ({total} messages, {n} pages): page 1 {first_ms:.2} ms {first_b} B, page {n} {last_ms:.2} ms {last_b} B"
    );
    println!(
        "older pages: time ratio page {n} / page 1 {:.2}x (median of 5 each: {tail:.2} / {head:.2} ms = {:.2}x), bytes ratio {:.2}x (target <= 1.2x); all pages {:.2} s, {:.1} MB moved",
        last_ms / first_ms,
        tail / head,
        last_b as f64 / first_b as f64,
        secs,
        moved as f64 / 1e6
    );
    core.shutdown().await;
    Ok(())
}
