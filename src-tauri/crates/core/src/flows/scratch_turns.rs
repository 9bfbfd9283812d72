//! A cold review's scratch prompts, from the app, through the turn room: the review crate's
//! OpenCode route ([`crosscheck_review::opencode_route`]) opens the scratch session and deletes
//! it afterwards; each question in it is sent by [`turn::send_ruled`] (the message id chosen
//! first, looked for after a transport error before it is sent again) and awaited by
//! [`turn::await_turn`] (completed, failed with the server's words, aborted, the session
//! deleted, the server restarted, the time limit; and, as the blocking call did, a server that
//! can no longer be reached). The scratch session is held by the store for the turn, never
//! listed.

use std::collections::BTreeMap;
use std::sync::Arc;

use crosscheck_opencode::{Client, TextPartInput, ids};
use crosscheck_review::opencode_route::{
    Connected, ScratchAsk, ScratchReply, ScratchTurns, model_failed, no_text, opencode_failure,
};
use crosscheck_review::provider::CallFailure;
use tokio::time::Instant;

use crate::api_types::{Change, Connection, ModelChoice};
use crate::core::Core;
use crate::error::Error;
use crate::model::ids::ServerId;
use crate::turn::{self, Delivery, Follow, Prompt, TurnEnd, TurnRules, TurnWait, Waiter, Woke};

/// The turn room for the scratch sessions of one server.
pub(crate) struct RoomTurns {
    core: Core,
    server: ServerId,
}

impl std::fmt::Debug for RoomTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomTurns")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// The app's connection to `server` for a review: its client, and the turn room for the
/// scratch sessions the review opens there.
pub(crate) fn connected(core: &Core, server: ServerId, client: Client) -> Connected {
    Connected {
        client,
        turns: Some(Arc::new(RoomTurns {
            core: core.clone(),
            server,
        })),
    }
}

impl ScratchTurns for RoomTurns {
    fn ask<'a>(&'a self, ask: ScratchAsk<'a>) -> ScratchReply<'a> {
        Box::pin(self.run(ask))
    }
}

impl RoomTurns {
    async fn run(&self, ask: ScratchAsk<'_>) -> Result<String, CallFailure> {
        let core = &self.core;
        let session_id = ask.session_id;
        let deadline = Instant::now() + ask.timeout;
        let failed = |e: Error| self.failure(e);
        core.with_store(|s| {
            s.hold_scratch(session_id, &self.server);
            ((), None)
        });
        let _follow = Follow::new(core, session_id).await.map_err(failed)?;
        let errors_before = core.read_store(|s, _| s.session_error_serial(session_id));
        let prompt = Prompt {
            session_id: session_id.to_owned(),
            message_id: ids::message_id(),
            parts: vec![TextPartInput::visible(ask.text.to_owned())],
            choice: ModelChoice {
                model: Some(ask.model.clone()),
                agent: None,
                variant: None,
            },
        };
        let rules = TurnRules {
            system: Some(ask.system.to_owned()),
            // Belt and braces: the session's ruleset already removes every tool.
            tools: Some(BTreeMap::from([("*".to_owned(), false)])),
        };
        turn::send_ruled(core, &prompt, &rules, Delivery::Fresh)
            .await
            .map_err(failed)?;
        let wait = TurnWait {
            session_id,
            prompt_id: &prompt.message_id,
            errors_before,
            deadline: Some(deadline),
            cancel: None,
        };
        // The server gone mid-review ends it at once, as the blocking call did.
        let end = tokio::select! {
            end = turn::await_turn(core, wait, |_| {}) => end.map_err(failed)?,
            lost = self.lost(session_id) => return Err(failed(Error::Opencode(lost))),
        };
        match end {
            TurnEnd::Completed { text, .. } if text.trim().is_empty() => Err(no_text(ask.model)),
            TurnEnd::Completed { text, .. } => Ok(text.trim().to_owned()),
            TurnEnd::Failed(words) => Err(model_failed(ask.model, &words)),
            TurnEnd::Aborted | TurnEnd::Cancelled => Err(CallFailure::Said {
                code: "http_error",
                message: "OpenCode stopped the review's turn before it answered".to_owned(),
            }),
            TurnEnd::SessionDeleted => Err(CallFailure::Said {
                code: "http_error",
                message: "OpenCode lost the review's session (it was deleted during the review)"
                    .to_owned(),
            }),
            TurnEnd::Interrupted => Err(CallFailure::Said {
                code: "transport",
                message: "OpenCode restarted during the review".to_owned(),
            }),
            TurnEnd::TimedOut => Err(CallFailure::Timeout(ask.timeout)),
        }
    }

    /// Answers once the server cannot be reached: after its connection left `Ready`, the
    /// scratch session is read, and only a transport error counts (a blip of the event stream
    /// on a server that still answers does not).
    async fn lost(&self, session_id: &str) -> crosscheck_opencode::Error {
        let probe = self.core.server_client(self.server.as_str()).ok();
        let mut waiter = Waiter::new(&self.core, None, None);
        loop {
            let woke = waiter
                .next(|change| matches!(change, Change::Server { .. } | Change::Connection { .. }))
                .await;
            if !matches!(woke, Ok(Woke::Check(_))) {
                return std::future::pending().await;
            }
            let ready = self
                .core
                .server(self.server.as_str())
                .is_some_and(|s| matches!(s.connection(), Connection::Ready { .. }));
            if ready {
                continue;
            }
            if let Some(client) = &probe
                && let Err(e) = client.get_session(session_id).await
                && e.is_transport()
            {
                return e;
            }
        }
    }

    /// A core error as one sentence for the review's row.
    fn failure(&self, error: Error) -> CallFailure {
        let url = self
            .core
            .server_client(self.server.as_str())
            .map(|c| c.base_url().to_owned())
            .unwrap_or_default();
        match error {
            Error::Opencode(e) => opencode_failure(e, &url),
            Error::SessionNotFound(_) => CallFailure::Said {
                code: "http_error",
                message: "OpenCode lost the review's session (it was deleted during the review)"
                    .to_owned(),
            },
            other => CallFailure::Said {
                code: "transport",
                message: format!("OpenCode could not run the review: {other}"),
            },
        }
    }
}
