//! Records every completed reviewer reply of a followed review session as a findings round,
//! loop or no loop (manual reviews get a Findings list too), and pushes the link's findings.

use tokio::sync::broadcast;

use crate::api_types::Change;
use crate::core::Core;
use crate::findings;
use crate::flows::reply::{last_prompt_id, reply_message_id, reply_outcome};
use crate::metadata::{get_original_session_id, is_review_session};

/// Follows the change stream until it closes.
pub(crate) async fn run(core: Core) {
    let mut changes = core.subscribe();
    loop {
        let session_id = match changes.recv().await {
            Ok(stamped) => match stamped.change {
                Change::Status { session_id, status } if status.is_idle() => session_id,
                Change::TranscriptReset { page } => page.session_id,
                _ => continue,
            },
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if let Err(e) = record_latest(&core, &session_id).await {
            tracing::warn!(session = %session_id, "could not record the review's findings: {e}");
        }
    }
}

/// Records the newest completed reply of `session_id` when it is a review session; answers
/// the reviewer message it was recorded under.
pub(crate) async fn record_latest(core: &Core, session_id: &str) -> crate::Result<Option<String>> {
    let found = core.read_store(|s, _| {
        let session = s.session(session_id)?;
        if !is_review_session(session) {
            return None;
        }
        let original = get_original_session_id(session).map(str::to_owned);
        let prompt = last_prompt_id(s, session_id)?;
        let text = reply_outcome(s, session_id, &prompt)?.ok()?;
        let reply_id = reply_message_id(s, session_id, &prompt)?;
        Some((original, reply_id, text, session.directory.clone()))
    });
    let Some((original, reply_id, text, directory)) = found else {
        return Ok(None);
    };
    // A loop records (and pins) its own rounds; a second fingerprint here would only compete
    // with its next step for the machine.
    if original
        .as_deref()
        .is_some_and(|o| core.loops().runs_for(o))
    {
        return Ok(None);
    }
    record_reply(
        core,
        session_id,
        original.as_deref(),
        &reply_id,
        &text,
        &directory,
    )
    .await?;
    Ok(Some(reply_id))
}

/// Parses and records one reviewer reply (once per message) and pushes the link's findings
/// when it was new.
pub(crate) async fn record_reply(
    core: &Core,
    review_id: &str,
    original_id: Option<&str>,
    reply_id: &str,
    text: &str,
    directory: &str,
) -> crate::Result<findings::Recorded> {
    let known = core.db().with(|c| {
        Ok(c.query_row(
            "SELECT round FROM loop_rounds WHERE review_session = ?1 AND message_id = ?2",
            rusqlite::params![review_id, reply_id],
            |r| r.get::<_, u32>(0),
        )
        .ok())
    })?;
    if let Some(round) = known {
        return Ok(findings::Recorded { round, new: false });
    }
    let seen = super::code::full(directory).await;
    let fingerprint = seen.as_ref().map(|f| f.digest.clone());
    let recorded = record_reply_at(
        core,
        review_id,
        original_id,
        reply_id,
        text,
        fingerprint.as_deref(),
    )?;
    // Pinned to the code it saw, so the review tab can tell when it goes stale.
    if recorded.new
        && let Some(seen) = &seen
    {
        crate::review_pin::pin(core, review_id, reply_id, directory, seen);
    }
    // What it says it reviewed, against what the work changed.
    if recorded.new
        && let crosscheck_review::findings::FindingsReply::Parsed { reviewed, .. } =
            crosscheck_review::findings::parse_findings(text)
    {
        let changed = seen.as_ref().map(findings::changed_paths);
        findings::record_coverage(
            core.db(),
            review_id,
            recorded.round,
            directory,
            &reviewed,
            changed.as_deref(),
        )?;
        push(core, review_id)?;
    }
    Ok(recorded)
}

/// [`record_reply`] with the fingerprint already taken (the loop takes it while the review
/// runs, and pins the round itself).
pub(crate) fn record_reply_at(
    core: &Core,
    review_id: &str,
    original_id: Option<&str>,
    reply_id: &str,
    text: &str,
    fingerprint: Option<&str>,
) -> crate::Result<findings::Recorded> {
    let parsed = crosscheck_review::findings::parse_findings(text);
    let recorded = record_parsed(core, review_id, original_id, reply_id, &parsed, fingerprint)?;
    if recorded.new {
        push(core, review_id)?;
    }
    Ok(recorded)
}

/// Records a parsed reviewer reply (once per message) without pushing the findings: the loop
/// pushes the view it reads for its decision.
pub(crate) fn record_parsed(
    core: &Core,
    review_id: &str,
    original_id: Option<&str>,
    reply_id: &str,
    parsed: &crosscheck_review::findings::FindingsReply,
    fingerprint: Option<&str>,
) -> crate::Result<findings::Recorded> {
    findings::record_review(
        core.db(),
        review_id,
        original_id,
        reply_id,
        parsed,
        fingerprint,
        crate::flows::now_ms(),
    )
}

/// Pushes the link's findings as they are stored now.
pub(crate) fn push(core: &Core, review_id: &str) -> crate::Result<()> {
    let view = findings::view(core.db(), review_id)?;
    core.emit(Change::Findings { findings: view });
    Ok(())
}
