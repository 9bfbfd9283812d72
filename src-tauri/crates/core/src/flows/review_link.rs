//! Finding or creating the one review session of an original session, safe against other
//! clients (another Crosscheck process, OpenChamber) doing the same at the same moment.
//!
//! A linked session is reused only when it exists and its marker names this original. Otherwise
//! the stale link is cleared (only while it is still the id that was checked), a new review
//! session is created and linked (a link someone else wrote meanwhile is never removed
//! unchecked). Every link write is read back after
//! it settled: when another client's link replaced ours, theirs is checked and, when it is a
//! valid review session, ours is deleted again and theirs is used.

use std::collections::HashSet;
use std::time::Duration;

use crosscheck_opencode::{CreateSession, Session};

use super::patch::{patch_session_metadata, settled, write_metadata};
use crate::core::Core;
use crate::error::{Error, Result};
use crate::metadata::{
    get_review_session_id, is_review_of, replace_review_session_link, with_review_session_marker,
    without_review_session_link,
};

/// How many times the link is written before giving up on a session others keep relinking.
/// Between tries the link waits a jittered, doubling pause ([`backoff`]): a writer every few
/// milliseconds loses some of our writes, and a finished handoff is worth a few seconds.
const LINK_ATTEMPTS: usize = 10;
/// The first pause between link writes; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// The longest pause between link writes.
const MAX_BACKOFF: Duration = Duration::from_millis(800);

/// The review session a handoff uses, and how it came to be.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// Linked before and still valid: reused.
    Reused(Session),
    /// Created (and linked) by this call.
    Created(Session),
    /// Another client linked its review session while we linked ours (ours is deleted again):
    /// theirs, which that client sends the review to.
    LostRace(Session),
}

impl Prepared {
    /// The review session.
    pub fn session(&self) -> &Session {
        match self {
            Prepared::Reused(s) | Prepared::Created(s) | Prepared::LostRace(s) => s,
        }
    }
}

/// The review session to use for `original_id`: an existing valid one, a new one, or the one
/// another client linked first.
pub async fn create_or_reuse_review_session(core: &Core, original_id: &str) -> Result<Prepared> {
    let original = core.session(original_id).await?;
    let mut stale: HashSet<String> = HashSet::new();
    if let Some(linked) = get_review_session_id(&original) {
        if let Some(review) = valid_review(core, linked, original_id).await? {
            match read_only(core, review).await {
                Ok(review) => return Ok(Prepared::Reused(review)),
                // Deleted right after the check: as stale as a link to a session that is gone.
                Err(e) if crate::turn::is_gone(&e) => {}
                Err(e) => return Err(e),
            }
        }
        // Clear the stale link first (the seed's order: clear, create, link), and only while
        // it is still the one checked.
        patch_session_metadata(core, original_id, |m| {
            without_review_session_link(m, linked)
        })
        .await?;
        stale.insert(linked.to_owned());
    }
    let server = core.server_of(original_id);
    let review = core
        .server_client(&server)?
        .create_session(
            &original.directory,
            &CreateSession {
                title: Some(format!("Review: {}", original.title)),
                parent_id: None,
                metadata: Some(with_review_session_marker(None, original_id)),
                permission: core.settings().reviewer_permission(),
            },
        )
        .await?;
    core.with_store(|s| {
        s.set_server(&review.id, &server);
        // Not when its server was removed meanwhile (the flow ends with it).
        ((), s.upsert_fetched_session(review.clone()))
    });
    match link(core, original_id, &review.id, stale).await {
        Ok(Linked::Ours) => Ok(Prepared::Created(review)),
        Ok(Linked::Theirs(winner)) => {
            tracing::info!(
                original = original_id,
                "another client linked a review session first; using it"
            );
            remove_own(core, original_id, &review.id)
                .await
                .map_err(|e| {
                    Error::ReviewLinkFailed(format!(
                    "another client linked its review session first, and removing ours failed: {e}"
                ))
                })?;
            Ok(Prepared::LostRace(*winner))
        }
        Err(link_error) => {
            let detail = match remove_own(core, original_id, &review.id).await {
                Ok(()) => link_error.to_string(),
                Err(e) => {
                    format!("{link_error}; removing the new review session also failed: {e}")
                }
            };
            Err(Error::ReviewLinkFailed(detail))
        }
    }
}

/// The linked review session `gone` turned out deleted when the review was sent to it: clears
/// that link (only while it still names `gone`) and finds or creates the review session again.
pub async fn replace_gone_review_session(
    core: &Core,
    original_id: &str,
    gone: &str,
) -> Result<Prepared> {
    tracing::info!(
        original = original_id,
        review = gone,
        "the review session was deleted; making a new one"
    );
    core.with_store(|s| ((), Some(s.remove_session(gone))));
    patch_session_metadata(core, original_id, |m| without_review_session_link(m, gone)).await?;
    create_or_reuse_review_session(core, original_id).await
}

/// The pause before link attempt `attempt` (from 1): doubling from [`FIRST_BACKOFF`] up to
/// [`MAX_BACKOFF`], each scaled by a random factor between 0.5 and 1.5 so two writers that
/// collided once do not collide again in step.
fn backoff(attempt: usize) -> Duration {
    let base = FIRST_BACKOFF
        .saturating_mul(1u32 << attempt.min(16).saturating_sub(1))
        .min(MAX_BACKOFF);
    let jitter = 0.5 + f64::from(rand_percent()) / 100.0;
    base.mul_f64(jitter)
}

/// A number in 0..100 from the id generator's randomness.
fn rand_percent() -> u8 {
    let id = crosscheck_opencode::ids::part_id();
    let sum: u32 = id.bytes().rev().take(6).map(u32::from).sum();
    (sum % 100) as u8
}

/// Who holds the link in the end.
enum Linked {
    Ours,
    Theirs(Box<Session>),
}

/// The session `id` when it is a review session of `original_id`; `None` when it is gone or is
/// not one (a stale link).
/// Gives a reused review session the reviewer's permission rules, when they are not the last
/// of its rules already.
async fn read_only(core: &Core, review: Session) -> Result<Session> {
    let Some(rules) = core.settings().reviewer_permission() else {
        return Ok(review);
    };
    // The server appends a PATCH's rules to the session's (the last matching rule wins), so
    // rules that already end with ours are in effect.
    if review
        .permission
        .as_ref()
        .is_some_and(|have| have.ends_with(&rules))
    {
        return Ok(review);
    }
    let patched = core
        .client_for(&review.id)?
        .update_session(
            &review.id,
            &crosscheck_opencode::SessionPatch {
                permission: Some(rules),
                ..Default::default()
            },
        )
        .await?;
    Ok(core.remember_session(patched).session)
}

async fn valid_review(core: &Core, id: &str, original_id: &str) -> Result<Option<Session>> {
    match core.session(id).await {
        Ok(review) if is_review_of(&review, original_id) => Ok(Some(review)),
        Ok(_) | Err(Error::SessionNotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Links `mine` from the original unless another client's valid review session holds the link.
/// `stale` holds links already checked and found invalid.
async fn link(
    core: &Core,
    original_id: &str,
    mine: &str,
    mut stale: HashSet<String>,
) -> Result<Linked> {
    let _guard = core.metadata_locks().lock(original_id).await;
    let mut original = core.session(original_id).await?;
    for attempt in 0..LINK_ATTEMPTS {
        if attempt > 0 {
            tracing::info!(
                original = original_id,
                attempt,
                "another client replaced the review link; writing it again"
            );
            tokio::time::sleep(backoff(attempt)).await;
            original = core.session(original_id).await?;
        }
        let current = get_review_session_id(&original).map(str::to_owned);
        match current.as_deref() {
            Some(id) if id == mine => return Ok(Linked::Ours),
            Some(other) if !stale.contains(other) => {
                if let Some(theirs) = valid_review(core, other, original_id).await? {
                    return Ok(Linked::Theirs(Box::new(theirs)));
                }
                stale.insert(other.to_owned());
            }
            _ => {}
        }
        if let Some(next) =
            replace_review_session_link(original.metadata.as_ref(), current.as_deref(), mine)
        {
            write_metadata(core, original_id, next).await?;
        }
        original = settled(core, original_id).await?;
        if get_review_session_id(&original) == Some(mine) {
            return Ok(Linked::Ours);
        }
    }
    Err(Error::MetadataConflict(original_id.to_owned()))
}

/// Deletes a review session this flow created and did not end up using, then clears a link to
/// it that a late write (ours, or another client's from a read made while ours stood) left on
/// the original: the original never names a session we deleted.
async fn remove_own(core: &Core, original_id: &str, review_id: &str) -> Result<()> {
    match core.client_for(review_id)?.delete_session(review_id).await {
        Ok(()) | Err(crosscheck_opencode::Error::NotFound { .. }) => {
            core.with_store(|s| ((), Some(s.remove_session(review_id))));
        }
        Err(e) => return Err(e.into()),
    }
    patch_session_metadata(core, original_id, |m| {
        without_review_session_link(m, review_id)
    })
    .await?;
    Ok(())
}
