//! Cold reviews from the app: a plan — a file, or the text of an assistant message — is read by
//! a reviewer with no session context (the review crate's [`Engine`], cadence `Always`: an
//! explicit review always runs). It runs in the background; progress goes out as
//! [`Change::Review`], the end also as a notice. The result is a row in the ledger the
//! `crosscheck gate` runs write to, so [`list`] shows theirs as well; the row names the session
//! (and reply) it came from, and keeps each earlier review of the same text as its history.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crosscheck_opencode::{MessageWithParts, ids};
use crosscheck_review::{
    Cadence, Claim, Engine, LedgerEntry, ReviewDecision, ReviewKind, ReviewRequest, ReviewSource,
    ReviewStatus,
};

use super::now_ms;
use super::transfer::find_message;
use crate::api_types::{Change, NoticeLevel};
use crate::core::Core;
use crate::error::{Error, Result};
pub use crate::model::review_progress::{ReviewDetail, ReviewProgress, ReviewRunStatus};
use crate::settings::Tab;
use crate::store::assistant_text;

/// Largest plan file read, in bytes (the reviewer is sent far less: `maxInputChars`).
pub const MAX_PLAN_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Rows [`list`] returns when the request names no limit.
pub const DEFAULT_LIST_LIMIT: u32 = 200;
/// Most rows [`list`] returns.
pub const MAX_LIST_LIMIT: u32 = 1000;
/// Pages of history searched for the latest assistant reply.
const MAX_PAGES: usize = 20;
const PAGE: u32 = 50;

/// What is reviewed.
struct Subject {
    source: ReviewSource,
    text: String,
    path: Option<String>,
    message_id: Option<String>,
    author: Option<String>,
}

/// Starts a cold review of a plan from `session_id`: the file at `path` (relative paths are
/// resolved against the session's directory; only files under it are read), else assistant
/// message `message_id`, else the session's latest completed assistant reply. Returns the first progress; the review runs on.
pub async fn start(
    core: &Core,
    session_id: &str,
    message_id: Option<&str>,
    path: Option<&str>,
) -> Result<ReviewProgress> {
    let engine = core.review_engine()?;
    let session = core.session(session_id).await?;
    let subject = match path.map(unquote).filter(|p| !p.is_empty()) {
        Some(path) => {
            let (full, text) = read_plan_file(&session.directory, path).await?;
            // The file's author is most likely the model that answered last.
            let author = latest_reply(core, session_id)
                .await
                .ok()
                .flatten()
                .and_then(|m| author_of(&m));
            Subject {
                source: ReviewSource::Draft,
                text,
                path: Some(full.display().to_string()),
                message_id: None,
                author,
            }
        }
        None => {
            let message = match message_id {
                Some(id) => {
                    let m = find_message(core, session_id, id).await?;
                    if m.info.role != "assistant" {
                        return Err(Error::InvalidRequest(
                            "only assistant messages can be reviewed".into(),
                        ));
                    }
                    m
                }
                None => latest_reply(core, session_id)
                    .await?
                    .ok_or(Error::NoAssistantText)?,
            };
            // A reply is the whole turn: every step answering the same prompt.
            let text = super::transfer::turn_text(core, session_id, &message).await;
            if text.is_empty() {
                return Err(Error::NoAssistantText);
            }
            Subject {
                source: ReviewSource::Message,
                text,
                path: None,
                message_id: Some(message.info.id.clone()),
                author: author_of(&message),
            }
        }
    };

    let mut request = ReviewRequest::plan(session.directory.clone(), subject.text, subject.source);
    request.path = subject.path.clone();
    request.author = subject.author;
    request.cadence = Cadence::Always;
    // The ledger keeps where the review came from, so its row opens the session (and reply).
    request.session_id = Some(session_id.to_owned());
    request.message_id = subject.message_id.clone();
    let key = request.key();
    let progress = ReviewProgress {
        id: ids::ascending("rvw"),
        session_id: session_id.to_owned(),
        status: ReviewRunStatus::Running,
        kind: ReviewKind::Plan,
        key: key.clone(),
        source: subject.source,
        message_id: subject.message_id,
        path: subject.path,
        started_at: now_ms(),
        entry: None,
        error: None,
    };
    // One review per text at a time: asking again while it runs joins the running one.
    {
        let mut running = core.running_reviews();
        if let Some(existing) = running.get(&key) {
            return Ok(existing.clone());
        }
        running.insert(key.clone(), progress.clone());
    }
    let claimed = {
        let engine = engine.clone();
        tokio::task::spawn_blocking(move || engine.claim(request))
            .await
            .map_err(|e| Error::Internal(format!("review claim task: {e}")))
            .and_then(|r| r.map_err(Error::from))
    };
    let ticket = match claimed {
        Ok(Claim::Review(ticket)) => ticket,
        Ok(Claim::Decided(_) | Claim::Waiting(_)) => {
            // Cadence `Always` claims every key with text (it never waits); only empty text
            // is decided here.
            core.running_reviews().remove(&key);
            return Err(Error::InvalidRequest("there is no text to review".into()));
        }
        Err(e) => {
            core.running_reviews().remove(&key);
            return Err(e);
        }
    };
    core.emit(Change::Review {
        review: progress.clone(),
    });
    if let Err(e) = crate::services::tabs::show_tab(core, Tab::reviews()) {
        tracing::warn!("could not open the Reviews tab: {e}");
    }
    let task_core = core.clone();
    let first = progress.clone();
    // The reviewed session's server, whose scratch prompts go through the turn room.
    let server = core.server_of(session_id);
    let opencode = core
        .client_for(session_id)
        .ok()
        .map(|client| super::scratch_turns::connected(core, server, client));
    core.push_task(tokio::spawn(async move {
        let outcome = engine.run_via(ticket, opencode).await.map_err(Error::from);
        finish(&task_core, &engine, first, outcome);
    }));
    Ok(progress)
}

/// Records the end: the row, the progress change and a notice.
fn finish(
    core: &Core,
    engine: &Arc<Engine>,
    mut progress: ReviewProgress,
    outcome: Result<ReviewDecision>,
) {
    let entry = engine
        .entry(progress.kind, &progress.key)
        .map_err(|e| tracing::warn!("cold review row unreadable: {e}"))
        .ok()
        .flatten();
    progress.entry = entry;
    match outcome {
        Ok(decision) if decision.status == ReviewStatus::Unreviewed => {
            // The ledger keeps why the review could not run (the key to set, the URL, ...).
            let detail = progress
                .entry
                .as_ref()
                .and_then(|e| e.review.clone())
                .unwrap_or_else(|| decision.outcome.clone());
            fail(core, &mut progress, &Error::ReviewFailed(detail));
        }
        Ok(decision) => {
            progress.status = ReviewRunStatus::Done;
            let reviewer = decision.reviewer.clone().unwrap_or_default();
            if decision.status == ReviewStatus::Clean {
                core.notice(
                    NoticeLevel::Success,
                    "notice.coldReviewClean",
                    &[("reviewer", &reviewer)],
                    format!("Cold review by {reviewer}: clean."),
                );
            } else {
                let count = decision.findings.unwrap_or(0).to_string();
                core.notice(
                    NoticeLevel::Info,
                    "notice.coldReviewFlagged",
                    &[("reviewer", &reviewer), ("count", &count)],
                    format!("Cold review by {reviewer}: flagged ({count} FAIL). See Reviews."),
                );
            }
        }
        Err(e) => fail(core, &mut progress, &e),
    }
    core.running_reviews().remove(&progress.key);
    core.emit(Change::Review { review: progress });
}

fn fail(core: &Core, progress: &mut ReviewProgress, error: &Error) {
    tracing::warn!(review = %progress.id, "cold review failed: {error}");
    progress.status = ReviewRunStatus::Failed;
    progress.error = Some(error.to_api());
    // The notice's text already says the review could not run: give it the reason only.
    let reason = match error {
        Error::ReviewFailed(reason) => reason.clone(),
        other => other.to_string(),
    };
    core.notice(
        NoticeLevel::Error,
        "notice.coldReviewFailed",
        &[("code", &error.code().as_str()), ("message", &reason)],
        format!("The cold review could not run: {reason}"),
    );
}

/// Ledger rows, most recently updated first: the app's reviews and every gate's.
pub async fn list(core: &Core, limit: Option<u32>) -> Result<Vec<LedgerEntry>> {
    let engine = core.review_engine()?;
    let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT).clamp(1, MAX_LIST_LIMIT) as usize;
    tokio::task::spawn_blocking(move || engine.list(limit))
        .await
        .map_err(|e| Error::Internal(format!("review list task: {e}")))?
        .map_err(Error::from)
}

/// One row with its text; `None` when the key is not in the ledger (any more).
pub async fn detail(core: &Core, kind: ReviewKind, key: String) -> Result<Option<ReviewDetail>> {
    let engine = core.review_engine()?;
    tokio::task::spawn_blocking(move || -> Result<Option<ReviewDetail>> {
        let Some(entry) = engine.entry(kind, &key)? else {
            return Ok(None);
        };
        let text = engine.text(kind, &key)?;
        Ok(Some(ReviewDetail { entry, text }))
    })
    .await
    .map_err(|e| Error::Internal(format!("review detail task: {e}")))?
}

/// The model that wrote a message: `modelID` (the review crate normalises vendor prefixes).
fn author_of(message: &MessageWithParts) -> Option<String> {
    message
        .info
        .model_id
        .clone()
        .or_else(|| message.info.model.as_ref().map(|m| m.model_id.clone()))
        .filter(|m| !m.trim().is_empty())
}

/// The newest finished, error-free assistant message with text, among `messages`.
fn newest_reply<'a>(
    messages: impl IntoIterator<Item = &'a MessageWithParts>,
) -> Option<&'a MessageWithParts> {
    messages
        .into_iter()
        .filter(|m| {
            m.info.role == "assistant"
                && m.info.is_completed_assistant()
                && m.info.error.is_none()
                && !assistant_text(m).is_empty()
        })
        .max_by(|a, b| a.info.id.cmp(&b.info.id))
}

/// The session's latest finished assistant reply with text: from the followed transcript, else
/// from the server, newest page first.
async fn latest_reply(core: &Core, session_id: &str) -> Result<Option<MessageWithParts>> {
    let followed = core.read_store(|s, _| {
        s.transcript(session_id)
            .and_then(|t| newest_reply(t.messages()).cloned())
    });
    if followed.is_some() {
        return Ok(followed);
    }
    let client = core.client_for(session_id)?;
    let mut before: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let page = client
            .messages(session_id, Some(PAGE), before.as_deref())
            .await
            .map_err(|e| match e {
                crosscheck_opencode::Error::NotFound { .. } => {
                    Error::SessionNotFound(session_id.to_owned())
                }
                e => e.into(),
            })?;
        if let Some(m) = newest_reply(&page.messages) {
            return Ok(Some(m.clone()));
        }
        match page.next_cursor {
            Some(cursor) => before = Some(cursor),
            None => break,
        }
    }
    Ok(None)
}

/// `"my plan.md"` or `'my plan.md'` → `my plan.md`.
fn unquote(path: &str) -> &str {
    let p = path.trim();
    for q in ['"', '\''] {
        if let Some(inner) = p.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.trim();
        }
    }
    p
}

/// Reads a plan file; a relative path is taken from `directory`, `~/` from the home directory.
async fn read_plan_file(directory: &str, path: &str) -> Result<(PathBuf, String)> {
    let given = Path::new(path);
    let full = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ if given.is_absolute() => given.to_path_buf(),
        _ => Path::new(directory).join(given),
    };
    let unreadable = |detail: String| {
        Error::InvalidRequest(format!(
            "cannot review the plan file {}: {detail}",
            full.display()
        ))
    };
    // Only files under the session's folder: a plan path comes from the composer (or a
    // pasted command), and the reviewer is a remote model. Links are resolved first.
    let real = tokio::fs::canonicalize(&full)
        .await
        .map_err(|e| unreadable(e.to_string()))?;
    let root = tokio::fs::canonicalize(directory)
        .await
        .map_err(|e| unreadable(format!("the session's folder {directory}: {e}")))?;
    if !real.starts_with(&root) {
        return Err(unreadable(format!(
            "it is outside the session's folder {}",
            root.display()
        )));
    }
    let meta = tokio::fs::metadata(&real)
        .await
        .map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable("it is not a file".into()));
    }
    if meta.len() > MAX_PLAN_FILE_BYTES {
        return Err(unreadable(format!(
            "it is larger than {} MiB",
            MAX_PLAN_FILE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = tokio::fs::read(&real)
        .await
        .map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
    if text.trim().is_empty() {
        return Err(unreadable("it is empty".into()));
    }
    Ok((full, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_around_a_path_are_dropped() {
        assert_eq!(unquote(" \"my plan.md\" "), "my plan.md");
        assert_eq!(unquote("'a.md'"), "a.md");
        assert_eq!(unquote("plan.md"), "plan.md");
        assert_eq!(unquote("\"half"), "\"half");
    }

    #[tokio::test]
    async fn plan_files_resolve_against_the_session_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("plan.md"), "# Plan\n").expect("write");
        let base = dir.path().to_str().expect("utf-8");
        let (full, text) = read_plan_file(base, "plan.md").await.expect("read");
        assert_eq!(full, dir.path().join("plan.md"));
        assert_eq!(text, "# Plan\n");
        let missing = read_plan_file(base, "nope.md").await.unwrap_err();
        assert_eq!(missing.code(), crate::error::ErrorCode::InvalidRequest);
        assert!(missing.to_string().contains("nope.md"), "{missing}");
        std::fs::write(dir.path().join("empty.md"), "  \n").expect("write");
        let empty = read_plan_file(base, "empty.md").await.unwrap_err();
        assert!(empty.to_string().contains("empty"), "{empty}");
        let folder = read_plan_file(base, ".").await.unwrap_err();
        assert!(folder.to_string().contains("not a file"), "{folder}");
    }
}
