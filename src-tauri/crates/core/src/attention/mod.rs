//! Attention as a backend fact: follows the change stream and raises the marks a session
//! carries in [`crate::api_types::SessionView::attention`] (a turn finished or failed, a loop
//! stopped or ended, a review gone stale, a handoff failed), keeps them and the time each
//! session was last looked at in SQLite (a restart does not raise old items again), and pushes
//! the session again whenever its reasons change (permissions and questions included).

pub(crate) mod db;

use std::collections::HashSet;

use tokio::sync::broadcast;

use crate::api_types::Change;
use crate::core::Core;
use crate::metadata::{get_original_session_id, get_review_session_id};
use crate::model::attention::{AttentionKind, AttentionReason};
use crate::model::flow::{FlowState, FlowStep};
use crate::model::ids::ServerId;
use crate::model::loop_record::{LoopState, StopReason};
use crate::model::now_ms;
use crate::model::pin::ReviewPin;

/// Follows the change stream (subscribed before the core starts connecting) until it closes.
pub(crate) async fn run(core: Core, mut changes: broadcast::Receiver<crate::api_types::Stamped>) {
    load_marks(&core);
    let mut busy: HashSet<String> = HashSet::new();
    loop {
        let change = match changes.recv().await {
            Ok(stamped) => stamped.change,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        follow(&core, &mut busy, change);
    }
}

/// Puts the marks kept in the database into the store.
fn load_marks(core: &Core) {
    match db::marks(core.db()) {
        Ok(marks) => core.with_store(|s| {
            for (session_id, reason) in marks {
                s.raise_mark(&session_id, reason);
            }
            ((), None)
        }),
        Err(e) => tracing::warn!("cannot read the attention marks: {e}"),
    }
}

fn follow(core: &Core, busy: &mut HashSet<String>, change: Change) {
    match change {
        Change::PermissionAsked { request } => push(core, &request.session_id),
        Change::PermissionResolved { session_id, .. } => push(core, &session_id),
        Change::SessionsReset {
            sessions, statuses, ..
        } => {
            // The listing is the server's word on what runs: a session it shows idle that was
            // running here finished while its idle event was away (a dropped stream, or still
            // in flight behind the listing), and one it shows running started.
            let running: HashSet<String> = statuses
                .into_iter()
                .filter(|(_, status)| !status.is_idle())
                .map(|(id, _)| id)
                .collect();
            let listed: HashSet<&str> = sessions.iter().map(|v| v.session.id.as_str()).collect();
            for ended in busy.difference(&running) {
                if listed.contains(ended.as_str()) {
                    turn_ended(core, ended);
                }
            }
            for started in running.difference(busy) {
                turn_started(core, started);
            }
            *busy = running;
            let reload = core.clone();
            core.push_task(tokio::spawn(async move { reload_questions(&reload).await }));
        }
        Change::Status { session_id, status } => {
            if status.is_idle() {
                if busy.remove(&session_id) {
                    turn_ended(core, &session_id);
                }
            } else if busy.insert(session_id.clone()) {
                turn_started(core, &session_id);
            }
        }
        Change::SessionError { session_id, error } => {
            let reason = AttentionReason::new(AttentionKind::TurnFailed, now_ms(), error.message);
            raise(core, &session_id, reason);
        }
        Change::Loop { state } => follow_loop(core, &state),
        Change::ReviewPin { pin } => follow_pin(core, &pin),
        Change::Flow { flow } => follow_flow(core, &flow),
        Change::SessionRemoved { session_id } => {
            if let Err(e) = db::forget(core.db(), &session_id) {
                tracing::warn!("cannot forget the attention marks of {session_id}: {e}");
            }
        }
        _ => {}
    }
}

/// A turn ended: marked finished for the person (unless it failed, or a loop runs the session
/// and tells its own story).
fn turn_ended(core: &Core, session_id: &str) {
    if loop_runs(core, session_id) {
        return;
    }
    let failed = core.read_store(|s, _| s.mark(session_id, AttentionKind::TurnFailed).is_some());
    if !failed {
        let reason = AttentionReason::new(AttentionKind::TurnFinished, now_ms(), String::new());
        raise(core, session_id, reason);
    }
}

/// A turn started: what the last one left to read is settled.
fn turn_started(core: &Core, session_id: &str) {
    settle(core, session_id, |m| {
        matches!(
            m.kind,
            AttentionKind::TurnFinished | AttentionKind::TurnFailed
        )
    });
}

/// A loop stopped for the person, or ended, marks its review session; running again settles it.
fn follow_loop(core: &Core, state: &LoopState) {
    let session = &state.review_session_id;
    let is_loop = |m: &AttentionReason| {
        matches!(
            m.kind,
            AttentionKind::LoopStopped | AttentionKind::LoopEnded
        )
    };
    let Some(stop) = state.stop.as_ref().filter(|_| state.ended) else {
        settle(core, session, is_loop);
        return;
    };
    let kind = match stop.reason {
        StopReason::Clean | StopReason::BelowThreshold => AttentionKind::LoopEnded,
        // The person did it (or the session is gone): nothing to tell.
        StopReason::UserStopped
        | StopReason::UserTookOver
        | StopReason::SessionGone
        | StopReason::RunsElsewhere => {
            settle(core, session, is_loop);
            return;
        }
        _ => AttentionKind::LoopStopped,
    };
    let mut reason = AttentionReason::new(kind, stop.at, stop.detail.clone());
    reason.stop = Some(stop.reason);
    raise(core, session, reason);
}

/// A stale review marks its review session until it is reviewed again.
fn follow_pin(core: &Core, pin: &ReviewPin) {
    let session = &pin.review_session_id;
    if pin.stale {
        let words = pin.changed_files.join(", ");
        let reason = AttentionReason::new(AttentionKind::ReviewStale, pin.checked_at, words);
        raise(core, session, reason);
    } else {
        settle(core, session, |m| m.kind == AttentionKind::ReviewStale);
    }
}

/// A failed handoff marks its implementing session.
fn follow_flow(core: &Core, flow: &FlowState) {
    if flow.step != FlowStep::Failed {
        return;
    }
    let words = flow
        .error
        .as_ref()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    let reason = AttentionReason::new(AttentionKind::HandoffFailed, now_ms(), words);
    raise(core, &flow.session_id, reason);
}

/// Whether an automatic loop runs for the pair the session belongs to (its turns are the
/// loop's, told by the loop when it stops).
fn loop_runs(core: &Core, session_id: &str) -> bool {
    let original = core.read_store(|s, _| {
        let session = s.session(session_id)?;
        Some(
            get_original_session_id(session)
                .filter(|_| get_review_session_id(session).is_none())
                .unwrap_or(session_id)
                .to_owned(),
        )
    });
    original.is_some_and(|o| core.loops().runs_for(&o))
}

/// Raises a mark: kept in the database, put in the store, and the session pushed again. A
/// mark that seeing settles and that began before the session was last looked at is not news.
pub(crate) fn raise(core: &Core, session_id: &str, reason: AttentionReason) {
    if reason.kind.cleared_by_seeing() {
        match db::seen_at(core.db(), session_id) {
            Ok(Some(seen)) if reason.since <= seen => return,
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot read when {session_id} was seen: {e}"),
        }
    }
    if let Err(e) = db::save(core.db(), session_id, &reason) {
        tracing::warn!("cannot keep an attention mark of {session_id}: {e}");
    }
    core.with_store(|s| {
        let changed = s.raise_mark(session_id, reason);
        ((), changed.then(|| s.session_change(session_id)).flatten())
    });
}

/// Settles the session's marks `pick` chooses, in the store and the database.
pub(crate) fn settle(core: &Core, session_id: &str, pick: impl Fn(&AttentionReason) -> bool) {
    let settled: Vec<AttentionKind> = core.read_store(|s, _| {
        s.attention_of(session_id)
            .into_iter()
            .filter(|r| s.mark(session_id, r.kind).is_some() && pick(r))
            .map(|r| r.kind)
            .collect()
    });
    if settled.is_empty() {
        return;
    }
    if let Err(e) = db::remove(core.db(), session_id, &settled) {
        tracing::warn!("cannot settle the attention marks of {session_id}: {e}");
    }
    core.with_store(|s| {
        let changed = s.settle_marks(session_id, |m| settled.contains(&m.kind));
        ((), changed.then(|| s.session_change(session_id)).flatten())
    });
}

/// The person looks at these sessions now: what seeing settles goes, and is not raised again
/// for anything that began before now.
pub(crate) fn see(core: &Core, session_ids: &[String]) {
    let now = now_ms();
    for id in session_ids {
        if let Err(e) = db::set_seen(core.db(), id, now) {
            tracing::warn!("cannot keep when {id} was seen: {e}");
        }
        settle(core, id, |m| m.kind.cleared_by_seeing());
    }
}

/// Pushes the session again (its permissions or questions changed).
fn push(core: &Core, session_id: &str) {
    core.with_store(|s| ((), s.session_change(session_id)));
}

/// Reads the pending questions of every connected server, for each folder with sessions on
/// it (after a connect or reconnect). The questions of a server that is not connected, or
/// whose listing failed, are kept as they were.
async fn reload_questions(core: &Core) {
    // Questions asked or answered while the listings are on their way are applied again on
    // top of them (the sessions' listing does the same).
    let mut load = crate::sync::SessionsLoad::begin(core);
    let mut all = Vec::new();
    let mut seen = HashSet::new();
    let mut kept: HashSet<ServerId> = HashSet::new();
    for server in core.server_handles() {
        let Some(client) = server.client() else {
            kept.insert(server.id.clone());
            continue;
        };
        let directories: std::collections::BTreeSet<String> = core.read_store(|s, _| {
            s.sessions()
                .into_iter()
                .filter(|session| s.server_of(&session.id) == server.id)
                .map(|session| session.directory)
                .filter(|d| !d.is_empty())
                .collect()
        });
        let scopes = std::iter::once(None).chain(directories.iter().map(|d| Some(d.as_str())));
        for dir in scopes {
            match client.questions(dir).await {
                Ok(list) => all.extend(list.into_iter().filter(|q| seen.insert(q.id.clone()))),
                Err(e) => {
                    tracing::warn!("cannot list the questions of {dir:?} on {}: {e}", server.id);
                    kept.insert(server.id.clone());
                }
            }
        }
    }
    let Some(token) = load.take() else { return };
    let sessions: HashSet<String> = core.with_store(|s| {
        let before: Vec<String> = s.questions().into_iter().map(|q| q.session_id).collect();
        s.finish_questions_load(token, all, &kept);
        let after = s.questions().into_iter().map(|q| q.session_id);
        (before.into_iter().chain(after).collect(), None)
    });
    for id in sessions {
        push(core, &id);
    }
}
