//! Requests of the "Needs you" list: the person looks at sessions (what seeing settles goes),
//! and answers a question from the list.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::Change;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::findings::FindingsView;

/// Fields of [`Request::SeeSessions`](super::Request::SeeSessions).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SeeSessions {
    /// The sessions the person looks at now (the main view and the side panel of a focused
    /// window).
    pub session_ids: Vec<String>,
}

/// Fields of [`Request::AnswerQuestion`](super::Request::AnswerQuestion).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct AnswerQuestion {
    /// The session whose turn waits for the answer.
    pub session_id: String,
    /// The `que_...` request being answered.
    pub request_id: String,
    /// Per question, the labels picked; `null` rejects (dismisses) the question.
    #[ts(optional)]
    pub answers: Option<Vec<Vec<String>>>,
}

/// Fields of [`Request::WithdrawFindings`](super::Request::WithdrawFindings).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct WithdrawFindings {
    /// Either session of the pair.
    pub session_id: String,
    /// The disputed findings the person accepts the dispute of.
    pub finding_ids: Vec<String>,
}

/// Settles what seeing settles in the sessions the person looks at.
pub async fn see_sessions(core: &Core, req: SeeSessions) -> Result<()> {
    crate::attention::see(core, &req.session_ids);
    Ok(())
}

/// Answers (or rejects) a pending question on its session's server, in the session's
/// directory. A session that is gone says so; a question the server no longer has (answered
/// elsewhere) is no longer pending.
pub async fn answer_question(core: &Core, req: AnswerQuestion) -> Result<()> {
    let client = core.client_for(&req.session_id)?;
    // A session that is gone says so (`SessionNotFound`: its question went with it).
    let directory = core.known_session(&req.session_id).await?.directory;
    let directory = Some(directory).filter(|d| !d.is_empty());
    let answered = client
        .answer_question(
            &req.request_id,
            req.answers.as_deref(),
            directory.as_deref(),
        )
        .await;
    if answered.is_ok() || answered.as_ref().is_err_and(|e| e.is_not_found()) {
        core.with_store(|s| ((), s.resolve_question(&req.session_id, &req.request_id)));
    }
    answered.map_err(Into::into)
}

/// Deciding a stopped loop: the person accepts the implementer's dispute, and the findings are
/// withdrawn; answers the link's findings as they are now.
pub async fn withdraw_findings(core: &Core, req: WithdrawFindings) -> Result<FindingsView> {
    let review = core
        .read_store(|s, _| {
            let session = s.session(&req.session_id)?;
            if crate::metadata::is_review_session(session) {
                Some(req.session_id.clone())
            } else {
                crate::metadata::get_review_session_id(session).map(str::to_owned)
            }
        })
        .ok_or_else(|| Error::InvalidRequest(format!("{} has no review link", req.session_id)))?;
    crate::findings::withdraw_by_person(
        core.db(),
        &review,
        &req.finding_ids,
        "withdrawn by the person: the dispute is accepted",
    )?;
    let view = crate::findings::view(core.db(), &review)?;
    core.emit(Change::Findings {
        findings: view.clone(),
    });
    Ok(view)
}
