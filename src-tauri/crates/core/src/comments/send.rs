//! Sending a session's batch of draft comments to it: one prompt in natural words through the
//! turn room. The prompt's id is saved on the comments before it goes out, so a send that fails
//! (the server down) keeps every comment as a draft, and the next try looks for that id first:
//! a batch is never delivered twice. While the pair's review loop runs, the batch is handed to
//! the loop instead (sending beside it would read as the person taking over).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{CommentStatus, LineComment};
use crate::api_types::Change;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::prompts;
use crate::turn::{self, Delivery, Follow, Prompt, TurnWait, current_choice};

/// What became of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SendOutcome {
    /// Every comment of the session now.
    pub comments: Vec<LineComment>,
    /// The batch went to the running review loop, which forwards it with its next findings.
    pub queued: bool,
}

fn ids(comments: &[LineComment]) -> Vec<String> {
    comments.iter().map(|c| c.id.clone()).collect()
}

fn push(core: &Core, session_id: &str) -> Result<Vec<LineComment>> {
    let comments = super::list(core.db(), session_id)?;
    core.emit(Change::Comments {
        session_id: session_id.to_owned(),
        comments: comments.clone(),
    });
    Ok(comments)
}

/// Sends the drafts of the implementing session `session_id` as one prompt (or hands them to
/// its running loop). Drafts whose lines changed since are outdated first and not sent.
pub async fn send_batch(core: &Core, session_id: &str) -> Result<SendOutcome> {
    let comments = super::refresh(core, session_id).await?;
    let drafts: Vec<LineComment> = comments
        .into_iter()
        .filter(|c| c.status == CommentStatus::Draft)
        .collect();
    if drafts.is_empty() {
        return Err(Error::InvalidRequest(
            "no comments to send: the batch is empty (or its lines changed)".into(),
        ));
    }
    if core.loops().runs_for(session_id) {
        super::mark_sent(core.db(), &ids(&drafts), None)?;
        return Ok(SendOutcome {
            comments: push(core, session_id)?,
            queued: true,
        });
    }
    let session = core.known_session(session_id).await?;
    // A try that failed may have reached the server all the same: its comments are sent.
    let mut earlier: Vec<&str> = drafts
        .iter()
        .filter_map(|c| c.message_id.as_deref())
        .collect();
    earlier.sort_unstable();
    earlier.dedup();
    let mut reached = Vec::new();
    for id in earlier {
        if turn::delivered(core, session_id, id).await? {
            reached.push(id.to_owned());
        }
    }
    let (done, rest): (Vec<LineComment>, Vec<LineComment>) = drafts
        .into_iter()
        .partition(|c| c.message_id.as_ref().is_some_and(|id| reached.contains(id)));
    for id in &reached {
        let of_id: Vec<String> = done
            .iter()
            .filter(|c| c.message_id.as_deref() == Some(id))
            .map(|c| c.id.clone())
            .collect();
        super::mark_sent(core.db(), &of_id, Some(id))?;
    }
    if rest.is_empty() {
        return Ok(SendOutcome {
            comments: push(core, session_id)?,
            queued: false,
        });
    }
    let message_id = crosscheck_opencode::ids::message_id();
    super::set_message(core.db(), &ids(&rest), &message_id)?;
    let visible = core.prompts().render(
        prompts::LINE_COMMENTS_TO_IMPLEMENTER,
        &[("line_comments", &super::comments_text(&rest))],
    )?;
    let prompt = Prompt {
        session_id: session_id.to_owned(),
        message_id: message_id.clone(),
        parts: vec![crosscheck_opencode::TextPartInput::visible(visible)],
        choice: current_choice(core, &session),
    };
    let follow = Follow::new(core, session_id).await?;
    let errors_before = core.read_store(|s, _| s.session_error_serial(session_id));
    turn::send(core, &prompt, Delivery::Fresh).await?;
    super::mark_sent(core.db(), &ids(&rest), Some(&message_id))?;
    let comments = push(core, session_id)?;
    // The turn that answers the batch: once it ends, the lines it changed address comments.
    let core2 = core.clone();
    let session = session_id.to_owned();
    core.push_task(tokio::spawn(async move {
        let _follow = follow;
        let wait = TurnWait {
            session_id: &session,
            prompt_id: &message_id,
            errors_before,
            deadline: None,
            cancel: None,
        };
        if let Err(e) = turn::await_turn(&core2, wait, |_| {}).await {
            tracing::debug!(session = %session, "the comments' turn was not seen to end: {e}");
        }
        if let Err(e) = super::refresh(&core2, &session).await {
            tracing::warn!(session = %session, "the comments could not be checked: {e}");
        }
    }));
    Ok(SendOutcome {
        comments,
        queued: false,
    })
}
