//! A claim on a session, made visible on its OpenCode server, so that of several Crosscheck
//! processes (each with its own data folder, so SQLite cannot tell them apart) only one runs a
//! flow that prompts that session. The server is the only medium they share, and it has no
//! compare-and-set, so a claim is taken by the rule the review link already uses:
//!
//! 1. read the session; a live claim of another holder means this process lost;
//! 2. write ours (a random token and an expiry) into the session's metadata, keeping every
//!    other key;
//! 3. let the write settle ([`SETTLE`]) and read it back: metadata is replaced whole, so the
//!    server ends with one token, the last writer's, and every claimant reads the same answer.
//!    Whoever finds another token there stops; whoever finds none (an outside writer dropped
//!    it) writes again, and after [`ATTEMPTS`] such losses goes ahead as before there were
//!    claims: no other claimant showed itself, and a writer that drops every key must not
//!    block the user's handoff (the renewal keeps writing the claim).
//!
//! A claim expires ([`TTL`]) unless its holder renews it ([`RENEW_EVERY`]), so a process that
//! crashed blocks nobody for long; a flow that ends, whatever the outcome (done, failed,
//! cancelled), releases it. Stored as `{crosscheck: {claims: {<purpose>: {token, expiresAt}}}}`.

use std::time::Duration;

use crosscheck_opencode::{Metadata, ids};
use serde_json::{Map, Value};

use super::now_ms;
use super::patch::{patch_session_metadata, settled, write_metadata};
use crate::core::Core;
use crate::error::Result;

/// The purpose of a review handoff's claim on the implementing session.
pub const HANDOFF: &str = "handoff";
/// The purpose of a review loop's claim on its implementing session (the loop's key).
pub const REVIEW_LOOP: &str = "reviewLoop";
/// How long a claim holds without being renewed.
pub const TTL: Duration = Duration::from_secs(60);
/// How often a holder renews its claim (well within [`TTL`]).
pub const RENEW_EVERY: Duration = Duration::from_secs(20);
/// How many times a claim is written while an outside writer keeps dropping it (between tries a
/// doubling pause from 50 ms).
const ATTEMPTS: usize = 5;

const NAMESPACE: &str = "crosscheck";
const CLAIMS: &str = "claims";
const TOKEN: &str = "token";
const EXPIRES_AT: &str = "expiresAt";

/// One claim as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimEntry {
    /// The holder's random token.
    pub token: String,
    /// When it lapses unless renewed, ms since the epoch.
    pub expires_at: i64,
}

/// The claims branch of raw metadata, when it is an object.
fn claims(metadata: Option<&Metadata>) -> Option<&Map<String, Value>> {
    metadata?
        .get(NAMESPACE)?
        .as_object()?
        .get(CLAIMS)?
        .as_object()
}

/// The claim for `purpose` in `metadata` that is still live at `now`; `None` when there is
/// none, it has expired, or it is not shaped as one (nobody can hold it).
pub fn live_claim(metadata: Option<&Metadata>, purpose: &str, now: i64) -> Option<ClaimEntry> {
    let entry = claims(metadata)?.get(purpose)?.as_object()?;
    let token = entry.get(TOKEN)?.as_str().filter(|t| !t.is_empty())?;
    let expires_at = entry.get(EXPIRES_AT)?.as_i64()?;
    (expires_at > now).then(|| ClaimEntry {
        token: token.to_owned(),
        expires_at,
    })
}

/// Metadata holding `mine` for `purpose`, every other key kept; `None` when another holder's
/// live claim stands (it is never overwritten) or `mine` is there already.
pub fn with_claim(
    metadata: Option<&Metadata>,
    purpose: &str,
    mine: &ClaimEntry,
    now: i64,
) -> Option<Metadata> {
    match live_claim(metadata, purpose, now) {
        Some(current) if current == *mine => return None,
        Some(current) if current.token != mine.token => return None,
        _ => {}
    }
    let mut next = metadata.cloned().unwrap_or_default();
    let mut branch = take_object(&mut next, NAMESPACE);
    let mut claims = take_object(&mut branch, CLAIMS);
    let mut entry = Map::new();
    entry.insert(TOKEN.into(), Value::String(mine.token.clone()));
    entry.insert(EXPIRES_AT.into(), Value::from(mine.expires_at));
    claims.insert(purpose.into(), Value::Object(entry));
    branch.insert(CLAIMS.into(), Value::Object(claims));
    next.insert(NAMESPACE.into(), Value::Object(branch));
    Some(next)
}

/// Metadata without the claim for `purpose`, only while it is `token`'s (live or not); emptied
/// branches are removed. `None` when there is nothing of ours to remove.
pub fn without_claim(metadata: Option<&Metadata>, purpose: &str, token: &str) -> Option<Metadata> {
    let entry = claims(metadata)?.get(purpose)?;
    if entry.get(TOKEN).and_then(Value::as_str) != Some(token) {
        return None;
    }
    let mut next = metadata?.clone();
    let mut branch = take_object(&mut next, NAMESPACE);
    let mut claims = take_object(&mut branch, CLAIMS);
    claims.remove(purpose);
    if !claims.is_empty() {
        branch.insert(CLAIMS.into(), Value::Object(claims));
    }
    if !branch.is_empty() {
        next.insert(NAMESPACE.into(), Value::Object(branch));
    }
    Some(next)
}

/// Takes the object under `key` out of `map` (an empty one when missing or not an object).
fn take_object(map: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match map.remove(key) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// What [`acquire`] found.
#[derive(Debug)]
pub enum Claimed {
    /// This process holds the claim: run the flow, then [`Claim::release`] it.
    Ours(Claim),
    /// Another holder's live claim stands: that process runs the flow.
    Theirs(ClaimEntry),
}

/// A claim this process holds; renewed in the background until released.
#[derive(Debug)]
pub struct Claim {
    session_id: String,
    purpose: &'static str,
    token: String,
    renewer: Option<tokio::task::AbortHandle>,
}

/// A fresh claim entry for `token`, lapsing [`TTL`] from now.
fn entry(token: &str) -> ClaimEntry {
    ClaimEntry {
        token: token.to_owned(),
        expires_at: now_ms() + TTL.as_millis() as i64,
    }
}

/// Takes the claim for `purpose` on `session_id` by the rule in the module's doc, or says whose
/// claim stands. Writes to the session's metadata in this process are held back meanwhile.
pub async fn acquire(core: &Core, session_id: &str, purpose: &'static str) -> Result<Claimed> {
    acquire_as(core, session_id, purpose, ids::part_id()).await
}

/// [`acquire`] with a token the caller keeps: a flow that outlives its process (a review loop,
/// resumed from its record after a restart) claims under its own id, so the claim its previous
/// run left live is known as its own rather than another holder's.
pub async fn acquire_as(
    core: &Core,
    session_id: &str,
    purpose: &'static str,
    token: String,
) -> Result<Claimed> {
    let outcome = {
        let _guard = core.metadata_locks().lock(session_id).await;
        try_acquire(core, session_id, purpose, &token).await
    };
    match outcome {
        Ok(Some(theirs)) => Ok(Claimed::Theirs(theirs)),
        Ok(None) => {
            let mut claim = Claim {
                session_id: session_id.to_owned(),
                purpose,
                token,
                renewer: None,
            };
            claim.renewer = Some(spawn_renewer(core, &claim));
            Ok(Claimed::Ours(claim))
        }
        Err(e) => {
            // A write of ours may still have landed: take it back rather than leave it to expire.
            let _ = patch_session_metadata(core, session_id, |m| without_claim(m, purpose, &token))
                .await;
            Err(e)
        }
    }
}

/// The claim loop: `Ok(None)` when ours stands (or could not be made to stick against an outside
/// writer, with no other claimant seen), `Ok(Some(theirs))` when another's does.
async fn try_acquire(
    core: &Core,
    session_id: &str,
    purpose: &str,
    token: &str,
) -> Result<Option<ClaimEntry>> {
    let mut current = core.session(session_id).await?;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tracing::info!(
                session = session_id,
                attempt,
                "a claim write was lost to another writer; writing it again"
            );
            tokio::time::sleep(Duration::from_millis(50 << (attempt - 1))).await;
            current = core.session(session_id).await?;
        }
        if let Some(theirs) =
            live_claim(current.metadata.as_ref(), purpose, now_ms()).filter(|c| c.token != token)
        {
            return Ok(Some(theirs));
        }
        if let Some(next) = with_claim(current.metadata.as_ref(), purpose, &entry(token), now_ms())
        {
            write_metadata(core, session_id, next).await?;
        }
        current = settled(core, session_id).await?;
        match live_claim(current.metadata.as_ref(), purpose, now_ms()) {
            Some(c) if c.token == token => return Ok(None),
            Some(theirs) => return Ok(Some(theirs)),
            None => {}
        }
    }
    tracing::warn!(
        session = session_id,
        "another writer kept dropping the claim and no other claimant showed itself; going ahead"
    );
    Ok(None)
}

/// Renews the claim every [`RENEW_EVERY`] while its holder runs (writing it again when an
/// outside writer dropped it); stops when another holder's claim stands.
fn spawn_renewer(core: &Core, claim: &Claim) -> tokio::task::AbortHandle {
    let core = core.clone();
    let session_id = claim.session_id.clone();
    let purpose = claim.purpose;
    let token = claim.token.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            let renewed = patch_session_metadata(&core, &session_id, |m| {
                with_claim(m, purpose, &entry(&token), now_ms())
            })
            .await;
            match renewed {
                Ok(session) => {
                    let holder = live_claim(session.metadata.as_ref(), purpose, now_ms());
                    if holder.is_some_and(|c| c.token != token) {
                        tracing::warn!(
                            session = %session_id,
                            "another process holds the claim now; no longer renewing ours"
                        );
                        return;
                    }
                }
                Err(e) => tracing::warn!(session = %session_id, "could not renew a claim: {e}"),
            }
        }
    })
    .abort_handle()
}

impl Claim {
    /// Stops renewing and removes the claim from the server (only while it is still ours).
    /// A failure is logged: the claim then lapses at its expiry.
    pub async fn release(mut self, core: &Core) {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        let (purpose, token) = (self.purpose, self.token.clone());
        if let Err(e) = patch_session_metadata(core, &self.session_id, |m| {
            without_claim(m, purpose, &token)
        })
        .await
        {
            tracing::warn!(
                session = %self.session_id,
                "could not release a claim (it lapses by itself): {e}"
            );
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Metadata {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn claim(token: &str, expires_at: i64) -> ClaimEntry {
        ClaimEntry {
            token: token.into(),
            expires_at,
        }
    }

    /// Two claimants read the same metadata and both write: the server keeps the last write
    /// whole, and both read that same answer back, so exactly one of them holds the claim.
    #[test]
    fn of_two_claimants_the_one_whose_write_stands_holds_it_and_the_other_stops() {
        let before = meta(json!({"ticket": 7, "openchamber": {"reviewSessionID": "ses_r"}}));
        let a = claim("tok_a", 10_000);
        let b = claim("tok_b", 10_000);
        let written_a = with_claim(Some(&before), HANDOFF, &a, 1_000).expect("a writes");
        let written_b = with_claim(Some(&before), HANDOFF, &b, 1_000).expect("b writes");
        // B's write landed last: the server holds it whole.
        let server = written_b.clone();
        let seen = live_claim(Some(&server), HANDOFF, 1_150).expect("a claim stands");
        assert_eq!(seen, b, "both read back B's token");
        assert_ne!(seen.token, a.token, "A stops");
        // Unrelated keys survive either write.
        assert_eq!(server["ticket"], json!(7));
        assert_eq!(
            server["openchamber"],
            json!({"reviewSessionID": "ses_r"}),
            "the review link is kept"
        );
        assert_eq!(written_a["ticket"], json!(7));
        // A third claimant that reads it now never overwrites a live claim.
        assert_eq!(
            with_claim(Some(&server), HANDOFF, &claim("tok_c", 20_000), 1_200),
            None
        );
        // The holder renews its own claim.
        let renewed =
            with_claim(Some(&server), HANDOFF, &claim("tok_b", 30_000), 1_300).expect("renews");
        assert_eq!(
            live_claim(Some(&renewed), HANDOFF, 25_000),
            Some(claim("tok_b", 30_000))
        );
        // Another purpose is another claim.
        assert!(with_claim(Some(&server), "other", &a, 1_200).is_some());
    }

    /// A claim its holder stopped renewing (the process crashed) lapses: nobody holds it after
    /// its expiry, and a later claimant takes it.
    #[test]
    fn a_stale_claim_lapses_and_a_later_claimant_takes_it() {
        let stale = with_claim(None, HANDOFF, &claim("tok_dead", 5_000), 1_000).expect("written");
        assert!(live_claim(Some(&stale), HANDOFF, 4_999).is_some());
        assert_eq!(live_claim(Some(&stale), HANDOFF, 5_000), None, "expired");
        let later = claim("tok_new", 70_000);
        let taken = with_claim(Some(&stale), HANDOFF, &later, 10_000).expect("taken over");
        assert_eq!(live_claim(Some(&taken), HANDOFF, 10_000), Some(later));
        // Odd shapes hold nothing.
        for odd in [
            json!({"crosscheck": {"claims": {"handoff": "tok"}}}),
            json!({"crosscheck": {"claims": {"handoff": {"token": "", "expiresAt": 99_999}}}}),
            json!({"crosscheck": {"claims": {"handoff": {"token": "t", "expiresAt": "soon"}}}}),
            json!({"crosscheck": 3}),
        ] {
            assert_eq!(
                live_claim(Some(&meta(odd.clone())), HANDOFF, 0),
                None,
                "{odd}"
            );
        }
    }

    /// Releasing (what a cancelled, failed or finished flow does) removes only its own claim
    /// and leaves the metadata as it was before the claim.
    #[test]
    fn releasing_removes_only_ones_own_claim_and_leaves_the_rest_as_it_was() {
        let before = meta(json!({"ticket": 7, "crosscheck": {"pinned": true}}));
        let held = with_claim(Some(&before), HANDOFF, &claim("tok_a", 9_000), 0).expect("held");
        assert_eq!(
            without_claim(Some(&held), HANDOFF, "tok_b"),
            None,
            "not B's"
        );
        let released = without_claim(Some(&held), HANDOFF, "tok_a").expect("released");
        assert_eq!(released, before);
        assert_eq!(live_claim(Some(&released), HANDOFF, 0), None);
        // Once released, another claimant takes it at once (no waiting for the expiry).
        assert!(with_claim(Some(&released), HANDOFF, &claim("tok_b", 9_000), 1).is_some());
        // Nothing else in the branch: the branch goes too.
        let alone = with_claim(None, HANDOFF, &claim("tok_a", 9_000), 0).expect("held");
        assert_eq!(
            without_claim(Some(&alone), HANDOFF, "tok_a"),
            Some(Map::new())
        );
        assert_eq!(without_claim(None, HANDOFF, "tok_a"), None);
    }
}
