//! Transcript search requests: the transcripts the core holds are searched at once; the others
//! are read from the server in the background (a few at a time, one capped page each), and each
//! read pushes a `Search` change with what was found and which sessions could not be read.

use std::collections::HashSet;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::Change;
use crate::core::Core;
use crate::error::Result;
use crate::search::{
    HITS_PER_SESSION, MAX_HITS, MAX_READS, Needle, READ_LIMIT, READ_PARALLEL, SearchHit,
    SearchProgress, UnreadSession, find_lines,
};

/// Fields of [`Request::SearchTranscripts`](super::Request::SearchTranscripts).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SearchTranscripts {
    /// What to look for (case-insensitive); shorter than two characters finds nothing.
    pub query: String,
}

/// Starts a search (stopping the one before): answers the held transcripts' lines and how many
/// sessions are left to read; the rest arrives as `Search` changes.
pub async fn search_transcripts(core: &Core, req: SearchTranscripts) -> Result<SearchProgress> {
    let search_id = core.searches().begin();
    let query = req.query.trim().to_owned();
    let mut progress = SearchProgress {
        search_id,
        query: query.clone(),
        hits: Vec::new(),
        read: 0,
        total: 0,
        unread: Vec::new(),
        skipped: 0,
        done: true,
    };
    let Some(needle) = Needle::new(&query) else {
        return Ok(progress);
    };
    let (hits, held, mut to_read) = core.read_store(|store, _| {
        let mut hits = Vec::new();
        let mut held = HashSet::new();
        for id in store.followed() {
            if let Some(t) = store.transcript(&id) {
                hits.extend(find_lines(&id, t.messages(), &needle, HITS_PER_SESSION));
                held.insert(id);
            }
        }
        // Newest first, subagent sessions too (they are read like any other).
        let rest: Vec<String> = store
            .sessions()
            .into_iter()
            .filter(|s| !held.contains(&s.id) && !crate::store::is_scratch(s))
            .map(|s| s.id)
            .collect();
        (hits, held.len(), rest)
    });
    progress.hits = hits;
    progress.hits.truncate(MAX_HITS);
    progress.skipped = to_read.len().saturating_sub(MAX_READS) as u32;
    to_read.truncate(MAX_READS);
    progress.read = held as u32;
    progress.total = (held + to_read.len()) as u32;
    progress.done = to_read.is_empty();
    if !to_read.is_empty() {
        let task = tokio::spawn(read_rest(core.clone(), needle, to_read, progress.clone()));
        core.push_task(task);
    }
    Ok(progress)
}

/// Reads the sessions not held, a few at a time, pushing progress after each; stops when a
/// newer search starts. Each is read from the server it lives on. Only the matching lines are
/// kept.
async fn read_rest(core: Core, needle: Needle, ids: Vec<String>, mut progress: SearchProgress) {
    let search_id = progress.search_id;
    let reads = futures_util::stream::iter(ids)
        .map(|id| {
            // Each session is read from its own server.
            let client = core.client_for(&id).map_err(|e| e.to_string());
            let needle = needle.clone();
            async move {
                let found: std::result::Result<Vec<SearchHit>, String> = match client {
                    Ok(client) => match client.messages(&id, Some(READ_LIMIT), None).await {
                        Ok(page) => Ok(find_lines(&id, &page.messages, &needle, HITS_PER_SESSION)),
                        Err(e) => Err(e.to_string()),
                    },
                    Err(e) => Err(e.to_string()),
                };
                (id, found)
            }
        })
        .buffer_unordered(READ_PARALLEL);
    futures_util::pin_mut!(reads);
    while let Some((session_id, found)) = reads.next().await {
        if !core.searches().is_current(search_id) {
            return;
        }
        progress.read += 1;
        match found {
            Ok(hits) => {
                let room = MAX_HITS.saturating_sub(progress.hits.len());
                progress.hits.extend(hits.into_iter().take(room));
            }
            Err(reason) => {
                tracing::info!("search could not read {session_id}: {reason}");
                progress.unread.push(UnreadSession { session_id, reason });
            }
        }
        progress.done = progress.read >= progress.total;
        core.emit(Change::Search {
            progress: progress.clone(),
        });
    }
}
