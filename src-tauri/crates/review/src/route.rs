//! Which way a review goes: a direct provider with an API key, or OpenCode's providers.
//!
//! `route` in the user's `review.json` decides (a repository's file can never set it):
//! `direct` uses only the direct providers; `opencode` only OpenCode; `auto` (the default)
//! uses a direct provider when the reviewer has a usable one (a key, or a server of the user's
//! own) and OpenCode otherwise. The app passes the server it is connected to; the gate uses
//! `opencode.url` or `CROSSCHECK_OPENCODE_URL`, else the app's own managed server while it runs
//! ([`crate::app_server`]). The floor rule holds on both routes.

use crate::config::{Config, ResolvedProvider, ReviewerRoute};
use crate::opencode_route::{OpencodeTarget, catalog, find_model, model_label};
use crate::provider::CallFailure;
use crate::rank::{ChoiceMode, ReviewerChoice, choose_reviewer};

/// How the chosen reviewer is reached.
#[derive(Debug)]
pub enum Channel {
    /// A direct provider.
    Direct(ResolvedProvider),
    /// A model of an OpenCode server, in a scratch session.
    Opencode {
        /// The server.
        target: OpencodeTarget,
        /// The model as OpenCode names it.
        model: crosscheck_opencode::ModelRef,
    },
    /// No way: what is missing, in one sentence.
    Unavailable(CallFailure),
}

/// The reviewer, how it is reached, and why the rule's first choice was passed over.
#[derive(Debug)]
pub struct Plan {
    /// The reviewer (for OpenCode: `provider/model`).
    pub choice: ReviewerChoice,
    /// How it is reached.
    pub channel: Channel,
    /// Why the rule's reviewer was passed over for the floor, when it was.
    pub fallback: Option<String>,
}

impl Plan {
    /// `direct`, `opencode`, or `none` when the reviewer cannot be reached.
    pub fn route(&self) -> &'static str {
        match self.channel {
            Channel::Direct(_) => "direct",
            Channel::Opencode { .. } => "opencode",
            Channel::Unavailable(_) => "none",
        }
    }
}

/// The sentence when the OpenCode route is chosen and no server is known.
pub const NO_OPENCODE_SERVER: &str = "no OpenCode server for the cold review: start Crosscheck (the gates use its own server while it runs), or set CROSSCHECK_OPENCODE_URL for the gate";

/// The rule's reviewer and the floors after it, once each.
pub fn candidates(author: Option<&str>, config: &Config) -> Vec<ReviewerChoice> {
    let mut list = vec![choose_reviewer(author, config)];
    for floor in [&config.floor_model, &config.user_floor_model] {
        if !floor.trim().is_empty() && list.iter().all(|c| &c.model != floor) {
            list.push(ReviewerChoice {
                model: floor.clone(),
                mode: ChoiceMode::Floor,
            });
        }
    }
    list
}

/// The plan for the direct route, from [`crate::Engine`]'s provider pick.
pub fn direct(
    choice: ReviewerChoice,
    provider: Result<ResolvedProvider, String>,
    fallback: Option<String>,
) -> Plan {
    let channel = match provider {
        Ok(p) if p.usable() => Channel::Direct(p),
        Ok(p) => Channel::Unavailable(CallFailure::Said {
            code: "auth",
            message: p.unusable_reason(),
        }),
        Err(m) => Channel::Unavailable(CallFailure::Config(m)),
    };
    Plan {
        choice,
        channel,
        fallback,
    }
}

/// Whether the route setting sends this review to OpenCode, given whether the direct
/// route has a usable provider.
pub fn wants_opencode(route: ReviewerRoute, direct_usable: bool) -> bool {
    match route {
        ReviewerRoute::Direct => false,
        ReviewerRoute::Opencode => true,
        ReviewerRoute::Auto => !direct_usable,
    }
}

/// The plan for the OpenCode route: the first candidate OpenCode has a model for.
pub async fn opencode(author: Option<&str>, config: &Config, target: OpencodeTarget) -> Plan {
    let list = candidates(author, config);
    let first = list[0].clone();
    let catalog = match catalog(&target.client).await {
        Ok(c) => c,
        Err(failure) => {
            return Plan {
                choice: first,
                channel: Channel::Unavailable(failure),
                fallback: None,
            };
        }
    };
    let mut skipped = Vec::new();
    for choice in &list {
        let pinned = choice.model == config.user_floor_model;
        if let Some(model) = find_model(&catalog, &choice.model, pinned) {
            let fallback = (!skipped.is_empty()).then(|| {
                format!(
                    "OpenCode has no model for {}; the floor reviews",
                    skipped.join(", ")
                )
            });
            return Plan {
                choice: ReviewerChoice {
                    model: model_label(&model),
                    mode: choice.mode,
                },
                channel: Channel::Opencode { target, model },
                fallback,
            };
        }
        skipped.push(choice.model.clone());
    }
    let providers: Vec<&str> = catalog.providers.iter().map(|p| p.id.as_str()).collect();
    Plan {
        choice: first,
        channel: Channel::Unavailable(CallFailure::Said {
            code: "config",
            message: format!(
                "OpenCode has no model for {} (its providers: {}): connect the provider in OpenCode or choose a floor model it has in Settings",
                skipped.join(" or "),
                if providers.is_empty() {
                    "none".to_owned()
                } else {
                    providers.join(", ")
                }
            ),
        }),
        fallback: None,
    }
}
