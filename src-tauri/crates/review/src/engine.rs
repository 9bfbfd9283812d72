//! The engine: cadence over the ledger, the reviewer call, the decision.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::config::{Config, Env, ResolvedProvider};
use crate::error::Result;
use crate::ledger::{ClaimInfo, ClaimRules, Claimed, Ledger, Owner, Record, now_ms};
use crate::log::{DoneFields, Logger};
use crate::opencode_route::{Connected, OpencodeTarget, REMOTE_SCRATCH_FOLDER, Scratch};
use crate::prompt::{REPAIR_INSTRUCTION, UserMessage, system_prompt, user_message};
use crate::provider::{CallFailure, CallSpec, Role, build_client, call};
use crate::rank::{ChoiceMode, ReviewerChoice, choose_reviewer};
use crate::route::{Channel, Plan};
use crate::types::{
    Action, Cadence, LedgerEntry, ReviewDecision, ReviewKind, ReviewRequest, ReviewStatus,
};
use crate::verdict::{ParsedReply, Verdict, parse_reply};

/// Reviews that could not run before a key proceeds unreviewed: attempt 1 blocks, attempt 2
/// (if the reviewer is still unreachable) proceeds.
pub const MAX_UNREVIEWED_ATTEMPTS: u32 = 2;

/// First line of every pause the gate shows.
pub fn pause_heading(kind: ReviewKind) -> String {
    format!(
        "Automated cold review (Crosscheck) paused this {}:",
        kind.noun()
    )
}

/// What the author is told to do after a pause.
pub fn pause_trailer(kind: ReviewKind) -> &'static str {
    match kind {
        ReviewKind::Plan => {
            "Address material findings by editing the draft, then try again. An unchanged draft proceeds to the human."
        }
        ReviewKind::Commit => {
            "Address material findings by changing the staged files, then commit again. Unchanged staged changes proceed."
        }
    }
}

/// How to open an [`Engine`].
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The shared SQLite database (see [`crate::paths::database_path`]).
    pub database_path: PathBuf,
    /// The directory holding the user-level `review.json`.
    pub config_dir: PathBuf,
    /// Where log lines go.
    pub logger: Logger,
    /// Where API keys and base URLs are read from.
    pub env: Env,
}

impl EngineOptions {
    /// The default paths, stderr logging and the process environment; an error when no home
    /// folder is known (see [`crate::paths`]).
    pub fn from_environment() -> Result<Self> {
        Ok(Self {
            database_path: crate::paths::database_path()?,
            config_dir: crate::paths::config_dir()?,
            logger: Logger::stderr(),
            env: Env::Process,
        })
    }
}

/// A claimed key waiting for its review (see [`Engine::claim`] and [`Engine::run`]).
#[derive(Debug, Clone)]
pub struct Ticket {
    request: ReviewRequest,
    key: String,
    config: Box<Config>,
}

impl Ticket {
    /// The request being reviewed.
    pub fn request(&self) -> &ReviewRequest {
        &self.request
    }

    /// Its ledger key.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// A key another live process is reviewing now (see [`Engine::wait_blocking`] and
/// [`Engine::wait`]).
#[derive(Debug, Clone)]
pub struct Wait {
    request: ReviewRequest,
    key: String,
    owner: Owner,
    deadline: Instant,
}

/// The outcome of [`Engine::claim`].
#[derive(Debug, Clone)]
pub enum Claim {
    /// Decided without a review (ledger hit, or no text): no network, no runtime needed.
    Decided(ReviewDecision),
    /// This caller owns the review; pass the ticket to [`Engine::run`].
    Review(Ticket),
    /// Another live process reviews this key now: wait for its result (bounded), which then
    /// pauses this attempt too; if that process dies, the review is taken over.
    Waiting(Wait),
}

/// How often a waiting claim looks at the ledger again.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// The cold review engine. Cheap to open; the HTTP client is built on the first review.
#[derive(Debug)]
pub struct Engine {
    ledger: Ledger,
    config_dir: PathBuf,
    logger: Logger,
    env: Env,
    client: OnceLock<reqwest::Client>,
}

struct Reviewed {
    status: ReviewStatus,
    outcome: &'static str,
    review: Option<String>,
    verdict: Option<String>,
    findings: Option<u32>,
    failure: Option<CallFailure>,
    note: Option<String>,
}

impl Engine {
    /// Opens the ledger (creating the database and `review_` tables if needed).
    pub fn open(options: EngineOptions) -> Result<Self> {
        Ok(Self {
            ledger: Ledger::open(&options.database_path)?,
            config_dir: options.config_dir,
            logger: options.logger,
            env: options.env,
            client: OnceLock::new(),
        })
    }

    /// The directory of the user's `review.json`.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Where keys and base URLs are read from.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The logger this engine writes to.
    pub fn logger(&self) -> &Logger {
        &self.logger
    }

    /// The effective config for a working directory (user file, then project file).
    pub fn config(&self, cwd: Option<&Path>) -> Result<Config> {
        Config::load(&self.config_dir, cwd)
    }

    /// Ledger rows, most recently updated first.
    pub fn list(&self, limit: usize) -> Result<Vec<LedgerEntry>> {
        self.ledger.list(limit)
    }

    /// One ledger row.
    pub fn entry(&self, kind: ReviewKind, key: &str) -> Result<Option<LedgerEntry>> {
        self.ledger.get(kind, key)
    }

    /// The text a key was last reviewed on, as far as the reviewer was sent it (cut at
    /// `maxInputChars`), while the ledger still keeps it (see [`crate::ledger::TEXTS_KEPT`]).
    pub fn text(&self, kind: ReviewKind, key: &str) -> Result<Option<String>> {
        self.ledger.text(kind, key)
    }

    /// Claims the request's key (synchronous; touches only SQLite and the config files).
    ///
    /// Returns [`Claim::Decided`] when no review is due: empty text, or the key is already in
    /// the ledger (reviewed, unreviewed twice, or being reviewed by another process).
    pub fn claim(&self, request: ReviewRequest) -> Result<Claim> {
        let kind = request.kind;
        if request.text.trim().is_empty() {
            self.logger.skipped(kind, "no text");
            return Ok(Claim::Decided(ReviewDecision {
                key: request.key(),
                kind,
                source: request.source,
                action: Action::Proceed,
                status: ReviewStatus::Unreviewed,
                outcome: "no_text".into(),
                reviewer: None,
                review: None,
                verdict: None,
                findings: None,
                reason: None,
                truncated: false,
                ledger_hit: false,
                duration_ms: 0,
            }));
        }
        let cwd = Path::new(&request.cwd);
        let config = self.config((!request.cwd.is_empty()).then_some(cwd))?;
        for warning in &config.warnings {
            self.logger.event(
                "review_config.warning",
                serde_json::json!({ "reason": warning }),
            );
        }
        let key = request.key();
        let stale = config.max_timeout().saturating_mul(2) + Duration::from_secs(60);
        let rules = ClaimRules {
            force: request.cadence == Cadence::Always,
            max_unreviewed_attempts: MAX_UNREVIEWED_ATTEMPTS,
            stale_before_ms: now_ms() - i64::try_from(stale.as_millis()).unwrap_or(i64::MAX),
            max_rows: config.ledger_max_rows,
        };
        match self.ledger.claim(&claim_info(&request, &key), rules)? {
            Claimed::Mine => {
                let shown = match request.text.char_indices().nth(config.max_input_chars) {
                    Some((end, _)) => &request.text[..end],
                    None => request.text.as_str(),
                };
                self.ledger.put_text(kind, &key, shown)?;
                Ok(Claim::Review(Ticket {
                    request,
                    key,
                    config: Box::new(config),
                }))
            }
            Claimed::InFlight(_, owner) => {
                self.logger
                    .skipped(kind, "review in progress; waiting for it");
                // Long enough for the owner's call and its repair round, never unbounded.
                let bound = config.max_timeout().saturating_mul(2) + Duration::from_secs(10);
                Ok(Claim::Waiting(Wait {
                    request,
                    key,
                    owner,
                    deadline: Instant::now() + bound,
                }))
            }
            Claimed::Held(entry) => {
                let entry = *entry;
                let (outcome, reason) = match entry.status {
                    ReviewStatus::Pending => ("in_progress", None),
                    ReviewStatus::Unreviewed => (
                        "unchanged",
                        Some(format!(
                            "Automated cold review (Crosscheck) could not run for this {}; it proceeds marked unreviewed.",
                            kind.noun()
                        )),
                    ),
                    ReviewStatus::Clean | ReviewStatus::Flagged => ("unchanged", None),
                };
                self.logger.skipped(
                    kind,
                    &match entry.status {
                        ReviewStatus::Pending => "review in progress".to_owned(),
                        s => format!("unchanged since review ({})", s.as_str()),
                    },
                );
                Ok(Claim::Decided(ReviewDecision {
                    key,
                    kind,
                    source: request.source,
                    action: Action::Proceed,
                    status: entry.status,
                    outcome: outcome.into(),
                    reviewer: entry.reviewer,
                    review: entry.review,
                    verdict: entry.verdict,
                    findings: entry.findings,
                    reason,
                    truncated: false,
                    ledger_hit: true,
                    duration_ms: 0,
                }))
            }
        }
    }

    /// Runs the review for a claimed key, records it and decides. The OpenCode route (see
    /// [`crate::route`]) uses the server the config or `CROSSCHECK_OPENCODE_URL` names, else
    /// the app's own managed server while it runs ([`crate::app_server`]).
    pub async fn run(&self, ticket: Ticket) -> Result<ReviewDecision> {
        self.run_via(ticket, None).await
    }

    /// [`Engine::run`] with the OpenCode server the caller is connected to (the app's), which
    /// then wins over the config's, and the turn room its scratch prompts go through.
    pub async fn run_via(
        &self,
        ticket: Ticket,
        opencode: Option<Connected>,
    ) -> Result<ReviewDecision> {
        let Ticket {
            request,
            key,
            config,
        } = ticket;
        let message = user_message(&request, &key, config.max_input_chars);
        let started = Instant::now();
        let plan = self
            .plan(request.author.as_deref(), &config, opencode)
            .await;
        let choice = plan.choice.clone();
        let fallback = plan.fallback.clone();
        let route = plan.route();
        let reviewed = self
            .call_reviewer(request.kind, &config, plan.channel, &message)
            .await;
        let reviewed = uncover(reviewed, &request);
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // For an unreviewed key the ledger keeps why the review could not run.
        let stored_review = reviewed
            .review
            .clone()
            .or_else(|| reviewed.failure.as_ref().map(CallFailure::detail));
        let entry = self.ledger.record(&Record {
            info: claim_info(&request, &key),
            reviewer: Some(&choice.model),
            status: reviewed.status,
            outcome: reviewed.outcome,
            verdict: reviewed.verdict.as_deref(),
            findings: reviewed.findings,
            review: stored_review.as_deref(),
            duration_ms: ms,
            unreviewed_attempt: reviewed.status == ReviewStatus::Unreviewed,
        })?;
        self.logger.done(
            request.kind,
            DoneFields {
                mode: choice.mode.as_str(),
                reviewer: &choice.model,
                outcome: reviewed.outcome,
                ms,
                source: request.source,
                fallback: fallback.as_deref(),
                route,
            },
        );
        let kind = request.kind;
        let (action, reason) = match (&reviewed.failure, &reviewed.review) {
            (Some(failure), _) if entry.attempts < MAX_UNREVIEWED_ATTEMPTS => (
                Action::Block,
                format!(
                    "Automated cold review (Crosscheck) could not run for this {noun}: {detail}.\n\n\
                     Nothing was reviewed. Try again: the next attempt retries the review, and if the \
                     reviewer is still unreachable the {noun} proceeds marked unreviewed.",
                    noun = kind.noun(),
                    detail = failure.detail()
                ),
            ),
            (Some(failure), _) => (
                Action::Proceed,
                format!(
                    "Automated cold review (Crosscheck) could not run for this {} ({}); it proceeds marked unreviewed.",
                    kind.noun(),
                    failure.detail()
                ),
            ),
            (None, review) => {
                let mut text = pause_heading(kind);
                text.push_str("\n\n");
                text.push_str(review.as_deref().unwrap_or("").trim());
                if let Some(note) = &reviewed.note {
                    text.push_str("\n\n");
                    text.push_str(note);
                }
                text.push_str("\n\n");
                text.push_str(pause_trailer(kind));
                (Action::Block, text)
            }
        };
        let mut reason = reason;
        for warning in &config.warnings {
            reason.push_str("\n\n(Crosscheck: ");
            reason.push_str(warning);
            reason.push_str(".)");
        }
        Ok(ReviewDecision {
            key,
            kind,
            source: request.source,
            action,
            status: reviewed.status,
            outcome: reviewed.outcome.into(),
            reviewer: Some(choice.model),
            review: reviewed.review,
            verdict: reviewed.verdict,
            findings: reviewed.findings,
            reason: Some(reason),
            truncated: message.truncated,
            ledger_hit: false,
            duration_ms: ms,
        })
    }

    /// [`Engine::claim`] then, if the key is ours, [`Engine::run`]; a key in flight elsewhere
    /// is waited for ([`Engine::wait`]).
    pub async fn review(&self, request: ReviewRequest) -> Result<ReviewDecision> {
        let mut claim = self.claim(request)?;
        loop {
            claim = match claim {
                Claim::Decided(decision) => return Ok(decision),
                Claim::Review(ticket) => return self.run(ticket).await,
                Claim::Waiting(wait) => self.wait(wait).await?,
            }
        }
    }

    /// Waits (blocking the thread, for the gate's runtime-less path) until the owner of a
    /// key in flight finishes, dies or the wait's bound passes, and claims again.
    pub fn wait_blocking(&self, wait: Wait) -> Result<Claim> {
        loop {
            if let Some(next) = self.poll_wait(&wait)? {
                return Ok(next);
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// [`Engine::wait_blocking`] for async callers.
    pub async fn wait(&self, wait: Wait) -> Result<Claim> {
        loop {
            if let Some(next) = self.poll_wait(&wait)? {
                return Ok(next);
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
    }

    /// One look at a waited-for key: `None` while its owner is still reviewing.
    fn poll_wait(&self, wait: &Wait) -> Result<Option<Claim>> {
        let kind = wait.request.kind;
        let entry = self.ledger.get(kind, &wait.key)?;
        match entry {
            Some(entry) if entry.status == ReviewStatus::Pending => {
                let owner_gone = wait.owner.alive() == Some(false);
                if owner_gone {
                    // The claim checks the owner's start time as well and takes over.
                    return self.claim(wait.request.clone()).map(Some);
                }
                if Instant::now() >= wait.deadline {
                    return Ok(Some(Claim::Decided(ReviewDecision {
                        key: wait.key.clone(),
                        kind,
                        source: wait.request.source,
                        action: Action::Block,
                        status: ReviewStatus::Pending,
                        outcome: "in_progress".into(),
                        reviewer: entry.reviewer,
                        review: None,
                        verdict: None,
                        findings: None,
                        reason: Some(format!(
                            "Automated cold review (Crosscheck) is still reviewing this {noun} in \
                             another process (pid {pid}). Try again when it has finished: the \
                             next attempt shows its result.",
                            noun = kind.noun(),
                            pid = wait.owner.pid
                        )),
                        truncated: false,
                        ledger_hit: true,
                        duration_ms: 0,
                    })));
                }
                Ok(None)
            }
            Some(entry) if matches!(entry.status, ReviewStatus::Clean | ReviewStatus::Flagged) => {
                // The review this attempt waited for: it pauses with that result.
                let mut reason = pause_heading(kind);
                reason.push_str("\n\n");
                reason.push_str(entry.review.as_deref().unwrap_or("").trim());
                reason.push_str("\n\n");
                reason.push_str(pause_trailer(kind));
                Ok(Some(Claim::Decided(ReviewDecision {
                    key: wait.key.clone(),
                    kind,
                    source: wait.request.source,
                    action: Action::Block,
                    status: entry.status,
                    outcome: entry.outcome,
                    reviewer: entry.reviewer,
                    review: entry.review,
                    verdict: entry.verdict,
                    findings: entry.findings,
                    reason: Some(reason),
                    truncated: false,
                    ledger_hit: true,
                    duration_ms: entry.duration_ms.unwrap_or(0),
                })))
            }
            // Unreviewed or pruned: the cadence decides afresh.
            _ => self.claim(wait.request.clone()).map(Some),
        }
    }

    fn client(&self) -> std::result::Result<&reqwest::Client, CallFailure> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = build_client()?;
        Ok(self.client.get_or_init(|| client))
    }

    /// The reviewer and its provider: the rule's choice when it has a usable provider, else
    /// the floor (a project's raised one, then the user's own), saying why in the log.
    fn pick_reviewer(
        &self,
        author: Option<&str>,
        config: &Config,
    ) -> (
        ReviewerChoice,
        std::result::Result<ResolvedProvider, String>,
        Option<String>,
    ) {
        let first = choose_reviewer(author, config);
        let mut candidates = vec![first.clone()];
        for floor in [&config.floor_model, &config.user_floor_model] {
            if !floor.trim().is_empty() && candidates.iter().all(|c| &c.model != floor) {
                candidates.push(ReviewerChoice {
                    model: floor.clone(),
                    mode: ChoiceMode::Floor,
                });
            }
        }
        let mut skipped = Vec::new();
        let last = candidates.len() - 1;
        for (i, choice) in candidates.into_iter().enumerate() {
            let provider = config.resolve_provider(&choice.model, &self.env);
            let why = match &provider {
                Ok(p) if p.usable() => None,
                Ok(p) => Some(p.unusable_reason()),
                Err(m) => Some(m.clone()),
            };
            match why {
                Some(why) if i < last => skipped.push(format!("{}: {why}", choice.model)),
                _ => {
                    let fallback = (!skipped.is_empty()).then(|| {
                        format!(
                            "no usable provider for {}; the floor reviews",
                            skipped.join("; ")
                        )
                    });
                    return (choice, provider, fallback);
                }
            }
        }
        // `candidates` is never empty; this keeps the function total.
        (
            first.clone(),
            config.resolve_provider(&first.model, &self.env),
            None,
        )
    }

    /// The reviewer and how to reach it, under the config's `route` (see [`crate::route`]).
    pub async fn plan(
        &self,
        author: Option<&str>,
        config: &Config,
        opencode: Option<Connected>,
    ) -> Plan {
        let (choice, provider, fallback) = self.pick_reviewer(author, config);
        let usable = matches!(&provider, Ok(p) if p.usable());
        if !crate::route::wants_opencode(config.route, usable) {
            return crate::route::direct(choice, provider, fallback);
        }
        let client = match opencode {
            Some(client) => Some(client),
            None => match config.opencode_server(&self.env) {
                Some(server) => match crosscheck_opencode::Client::new(server) {
                    Ok(client) => Some(Connected::from(client)),
                    Err(e) => {
                        return Plan {
                            choice,
                            channel: Channel::Unavailable(CallFailure::Said {
                                code: "config",
                                message: format!(
                                    "the OpenCode server for the cold review is unusable: {e}"
                                ),
                            }),
                            fallback: None,
                        };
                    }
                },
                // The app's own managed server, while it runs (see `crate::app_server`).
                None => match self.ledger.path().parent() {
                    Some(data_dir) => crate::app_server::client(data_dir)
                        .await
                        .map(Connected::from),
                    None => None,
                },
            },
        };
        match client {
            Some(client) => {
                let target = self.opencode_target(client);
                crate::route::opencode(author, config, target).await
            }
            None if config.route == crate::config::ReviewerRoute::Opencode => Plan {
                choice,
                channel: Channel::Unavailable(CallFailure::Said {
                    code: "config",
                    message: crate::route::NO_OPENCODE_SERVER.to_owned(),
                }),
                fallback: None,
            },
            None => crate::route::direct(choice, provider, fallback),
        }
    }

    /// The server and the folder of its scratch sessions, so that no project's instructions
    /// reach the reviewer: when it runs on this machine, an empty private folder next to the
    /// ledger; else (or when that folder cannot be made) [`REMOTE_SCRATCH_FOLDER`].
    fn opencode_target(&self, connected: Connected) -> OpencodeTarget {
        let Connected { client, turns } = connected;
        let directory = is_on_this_machine(client.base_url())
            .then(|| self.ledger.path().parent().map(|p| p.join("cold-review-scratch")))
            .flatten()
            .and_then(|dir| match crate::private::create_dir_all(&dir) {
                Ok(()) => Some(dir.to_string_lossy().into_owned()),
                Err(e) => {
                    self.logger.event(
                        "opencode_review.warning",
                        serde_json::json!({"reason": format!("{}: {e}; {REMOTE_SCRATCH_FOLDER} is used", dir.display())}),
                    );
                    None
                }
            })
            .unwrap_or_else(|| REMOTE_SCRATCH_FOLDER.to_owned());
        OpencodeTarget {
            client,
            directory,
            turns,
        }
    }

    async fn call_reviewer(
        &self,
        kind: ReviewKind,
        config: &Config,
        channel: Channel,
        message: &UserMessage,
    ) -> Reviewed {
        let unreviewed = |failure: CallFailure| Reviewed {
            status: ReviewStatus::Unreviewed,
            outcome: failure.code(),
            review: None,
            verdict: None,
            findings: None,
            failure: Some(failure),
            note: None,
        };
        let system = system_prompt(kind);
        let conversation = match channel {
            Channel::Unavailable(failure) => Err(failure),
            Channel::Direct(provider) => match self.client() {
                Ok(client) => {
                    self.converse_direct(client, &provider, kind, system, config, message)
                        .await
                }
                Err(f) => Err(f),
            },
            Channel::Opencode { target, model } => {
                self.converse_opencode(&target, &model, kind, system, config, message)
                    .await
            }
        };
        let (reply, parsed) = match conversation {
            Ok(done) => done,
            Err(failure) => return unreviewed(failure),
        };
        let truncation_note = message.truncated.then(|| {
            format!(
                "(Crosscheck: the reviewer saw only the first {} of {} characters, so this review cannot be clean.)",
                message.shown_chars, message.total_chars
            )
        });
        match parsed {
            ParsedReply::Valid {
                verdict: Verdict::Clean,
                fails,
            } if message.truncated => Reviewed {
                status: ReviewStatus::Flagged,
                outcome: "truncated",
                review: Some(reply),
                verdict: Some(Verdict::Clean.label()),
                findings: Some(fails),
                failure: None,
                note: truncation_note,
            },
            ParsedReply::Valid { verdict, fails } => Reviewed {
                status: if verdict == Verdict::Clean {
                    ReviewStatus::Clean
                } else {
                    ReviewStatus::Flagged
                },
                outcome: if verdict == Verdict::Clean {
                    "clean"
                } else {
                    "flagged"
                },
                review: Some(reply),
                verdict: Some(verdict.label()),
                findings: Some(fails),
                failure: None,
                note: truncation_note,
            },
            ParsedReply::Broken {
                reason,
                verdict,
                fails,
            } => Reviewed {
                status: ReviewStatus::Flagged,
                outcome: "malformed",
                review: Some(reply),
                verdict: verdict.map(Verdict::label),
                findings: Some(fails),
                failure: None,
                note: Some(format!(
                    "(Crosscheck: {reason}, even after one repair request; this review counts as flagged.){}",
                    truncation_note
                        .map(|n| format!("\n{n}"))
                        .unwrap_or_default()
                )),
            },
        }
    }
}

impl Engine {
    /// The reviewer's status, verdict and failure for a review that is not recorded (the
    /// settings' test).
    pub(crate) async fn reviewed_for_test(
        &self,
        kind: ReviewKind,
        config: &Config,
        channel: Channel,
        message: &UserMessage,
    ) -> (ReviewStatus, Option<String>, Option<String>) {
        let reviewed = self.call_reviewer(kind, config, channel, message).await;
        (
            reviewed.status,
            reviewed.verdict,
            reviewed.failure.as_ref().map(CallFailure::detail),
        )
    }

    /// The first call and, for a broken verdict, one repair round, over a direct provider.
    async fn converse_direct(
        &self,
        client: &reqwest::Client,
        provider: &ResolvedProvider,
        kind: ReviewKind,
        system: &str,
        config: &Config,
        message: &UserMessage,
    ) -> std::result::Result<(String, ParsedReply), CallFailure> {
        let first = [(Role::User, message.text.as_str())];
        let spec = CallSpec {
            provider,
            system,
            messages: &first,
            max_tokens: config.max_tokens,
            timeout: config.timeout_for(message.text.chars().count()),
        };
        let reply = call(client, &spec).await?;
        Ok(match parse_reply(&reply, kind) {
            valid @ ParsedReply::Valid { .. } => (reply, valid),
            ParsedReply::Broken { .. } => {
                let repair = [
                    (Role::User, message.text.as_str()),
                    (Role::Assistant, reply.as_str()),
                    (Role::User, REPAIR_INSTRUCTION),
                ];
                let spec = CallSpec {
                    messages: &repair,
                    timeout: config
                        .timeout_for(message.text.chars().count() + reply.chars().count()),
                    ..spec
                };
                match call(client, &spec).await {
                    Ok(second) => {
                        let parsed = parse_reply(&second, kind);
                        (second, parsed)
                    }
                    Err(_) => {
                        let parsed = parse_reply(&reply, kind);
                        (reply, parsed)
                    }
                }
            }
        })
    }

    /// The same over OpenCode: one scratch session for the review (its repair round is the
    /// session's second message), deleted afterwards whatever happened.
    async fn converse_opencode(
        &self,
        target: &OpencodeTarget,
        model: &crosscheck_opencode::ModelRef,
        kind: ReviewKind,
        system: &str,
        config: &Config,
        message: &UserMessage,
    ) -> std::result::Result<(String, ParsedReply), CallFailure> {
        let chars = message.text.chars().count();
        let expires = now_ms()
            + i64::try_from((config.max_timeout() * 2 + Duration::from_secs(60)).as_millis())
                .unwrap_or(i64::MAX / 2);
        let mut scratch = Scratch::open(target, expires).await?;
        let outcome = async {
            let reply = scratch
                .ask(system, &message.text, model, config.timeout_for(chars))
                .await?;
            Ok(match parse_reply(&reply, kind) {
                valid @ ParsedReply::Valid { .. } => (reply, valid),
                ParsedReply::Broken { .. } => {
                    let timeout = config.timeout_for(chars + reply.chars().count());
                    match scratch
                        .ask(system, REPAIR_INSTRUCTION, model, timeout)
                        .await
                    {
                        Ok(second) => {
                            let parsed = parse_reply(&second, kind);
                            (second, parsed)
                        }
                        Err(_) => {
                            let parsed = parse_reply(&reply, kind);
                            (reply, parsed)
                        }
                    }
                }
            })
        }
        .await;
        let id = scratch.id().to_owned();
        if let Err(reason) = scratch.close().await {
            self.logger.event(
                "opencode_review.cleanup",
                serde_json::json!({"session": id, "reason": reason}),
            );
        }
        outcome
    }
}

/// A commit's CLEAN that does not name every staged file in its `REVIEWED` lines is no clean
/// review: it is recorded as flagged with outcome `uncovered` and the pause names the files it
/// left out (or says it named none). Plans have no file list and are left as they are.
fn uncover(reviewed: Reviewed, request: &ReviewRequest) -> Reviewed {
    if request.kind != ReviewKind::Commit
        || reviewed.status != ReviewStatus::Clean
        || request.files.is_empty()
    {
        return reviewed;
    }
    let Some(reply) = reviewed.review.as_deref() else {
        return reviewed;
    };
    let listed = crate::verdict::reviewed_files(reply);
    let missing = crate::findings::uncovered(&request.files, &listed);
    if missing.is_empty() {
        return reviewed;
    }
    let words = if listed.is_empty() {
        format!(
            "the reviewer's CLEAN names no file it reviewed (no REVIEWED line), so it covers none of the {} staged file(s)",
            request.files.len()
        )
    } else {
        format!(
            "the reviewer's CLEAN does not say it reviewed {} of the {} staged file(s): {}",
            missing.len(),
            request.files.len(),
            missing.join(", ")
        )
    };
    let note = format!("(Crosscheck: {words}; this review counts as flagged, not clean.)");
    Reviewed {
        status: ReviewStatus::Flagged,
        outcome: "uncovered",
        note: Some(match reviewed.note {
            Some(n) => format!("{note}\n{n}"),
            None => note,
        }),
        ..reviewed
    }
}

fn claim_info<'a>(request: &'a ReviewRequest, key: &'a str) -> ClaimInfo<'a> {
    ClaimInfo {
        kind: request.kind,
        key,
        source: request.source,
        cwd: &request.cwd,
        path: request.path.as_deref(),
        author: request.author.as_deref(),
        session: request.session_id.as_deref(),
        message: request.message_id.as_deref(),
    }
}

/// Whether `base_url` names a server on this machine: `localhost` or a loopback address
/// (an IPv4 address written the IPv6 way counts as itself).
pub(crate) fn is_on_this_machine(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.to_canonical().is_loopback())
        })
}

#[cfg(test)]
mod tests {
    use super::{Engine, EngineOptions, REMOTE_SCRATCH_FOLDER, is_on_this_machine};
    use crate::config::Env;
    use crate::log::Logger;
    use crosscheck_opencode::{Client, ServerConfig};

    fn target_folder(engine: &Engine, base_url: &str) -> String {
        let client = Client::new(ServerConfig {
            base_url: base_url.to_owned(),
            password: None,
        })
        .unwrap();
        engine.opencode_target(client.into()).directory
    }

    #[test]
    fn a_scratch_session_never_names_the_servers_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(EngineOptions {
            database_path: dir.path().join("data").join("crosscheck.db"),
            config_dir: dir.path().join("config"),
            logger: Logger::memory().0,
            env: Env::Map(Default::default()),
        })
        .unwrap();
        // A server elsewhere gets the filesystem's root, not its own folder.
        for remote in ["http://10.0.0.5:4096", "https://opencode.example.org"] {
            assert_eq!(target_folder(&engine, remote), REMOTE_SCRATCH_FOLDER);
        }
        // One on this machine gets the empty private folder next to the ledger.
        let local = target_folder(&engine, "http://127.0.0.1:4096");
        let private = dir.path().join("data").join("cold-review-scratch");
        assert_eq!(local, private.to_string_lossy());
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 0);
    }

    #[test]
    fn only_loopback_servers_count_as_on_this_machine() {
        for local in [
            "http://127.0.0.1:4096",
            "http://localhost:4096",
            "http://LOCALHOST:1",
            "http://[::1]:4096",
            "http://[::ffff:127.0.0.1]:4096",
            "http://127.0.0.2:4096",
        ] {
            assert!(is_on_this_machine(local), "{local} is on this machine");
        }
        for remote in [
            "http://10.0.0.5:4096",
            "https://opencode.example.org",
            "http://192.168.1.20:4096",
            "http://[2001:db8::1]:4096",
            "not a url",
        ] {
            assert!(
                !is_on_this_machine(remote),
                "{remote} is not on this machine"
            );
        }
    }
}
