//! Engine helpers over the test kit's scripted model server, and the canned replies.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crosscheck_review::{Engine, EngineOptions, Env, Logger, MemorySink};
use serde_json::{Value, json};

pub use crosscheck_testkit::{ModelServer, Reply};

/// A temp data + config dir and an engine pointed at a server.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub engine: Engine,
    pub log: Arc<MemorySink>,
}

impl Rig {
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("data").join("crosscheck.db")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Another engine on the same database and config (a second process, as far as SQLite
    /// is concerned).
    pub fn second_engine(&self, base: &str) -> Engine {
        Engine::open(EngineOptions {
            database_path: self.db(),
            config_dir: self.config_dir(),
            logger: Logger::memory().0,
            env: env_for(base),
        })
        .unwrap()
    }
}

/// Env pointing both providers at `base` with fake keys.
pub fn env_for(base: &str) -> Env {
    Env::Map(BTreeMap::from([
        (
            "ANTHROPIC_API_KEY".to_owned(),
            "test-anthropic-key".to_owned(),
        ),
        ("ANTHROPIC_BASE_URL".to_owned(), base.to_owned()),
        ("OPENAI_API_KEY".to_owned(), "test-openai-key".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), format!("{base}/v1")),
    ]))
}

/// An engine with a user config (JSON) and the env of [`env_for`].
pub fn rig(base: &str, config: Value) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("review.json"), config.to_string()).unwrap();
    let (logger, log) = Logger::memory();
    let engine = Engine::open(EngineOptions {
        database_path: dir.path().join("data").join("crosscheck.db"),
        config_dir,
        logger,
        env: env_for(base),
    })
    .unwrap();
    Rig { dir, engine, log }
}

/// A default test config: short timeouts.
pub fn quick() -> Value {
    json!({"reviewTimeoutMs": 3000, "reviewTimeoutMsPer1000Chars": 0})
}

/// A well-formed flagged plan review.
pub fn flags_reply() -> String {
    "P1 FAIL — \"Increments\": no files named; name them.\n\
     P2 PASS — one Status line per increment.\n\
     P3 PASS — closes #44.\n\
     P4 FAIL — \"Tests\": no concurrency test for the race; add one.\n\
     P5 PASS — looked for aliases, shims, migrations: none.\n\
     P6 PASS — each risk names a direction.\n\
     P7 PASS — claims point at tests.\n\
     P8 PASS — delivery steps listed.\n\
     VERDICT: FLAGS (2)"
        .to_owned()
}

/// A well-formed clean plan review.
pub fn clean_reply() -> String {
    (1..=8)
        .map(|n| format!("P{n} PASS — looked for it; present.\n"))
        .collect::<String>()
        + "VERDICT: CLEAN"
}

/// A plan text.
pub const PLAN: &str =
    "# Plan: add the widget (#12)\n\n## Increments\n1. Add widget.rs\n   Status: Not started\n";
