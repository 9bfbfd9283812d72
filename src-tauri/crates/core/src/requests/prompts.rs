//! Prompt template requests: listing, overriding and resetting the registry's templates.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::PromptTemplate;
use crate::core::Core;
use crate::error::{Error, Result};

/// Fields of [`Request::SetPrompt`](super::Request::SetPrompt).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct SetPrompt {
    /// Registry name, e.g. `session.reviewHandoff.visible`.
    pub name: String,
    /// The text to use from now on.
    pub template: String,
}

/// Fields of [`Request::ResetPrompt`](super::Request::ResetPrompt).
#[derive(Debug, Clone, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct ResetPrompt {
    /// Registry name of the template to reset to its default.
    pub name: String,
}

/// Every template with its default and override.
pub async fn list(core: &Core) -> Result<Vec<PromptTemplate>> {
    Ok(core.prompts().list())
}

/// Overrides a template; one that drops a placeholder of its default, or uses one the flow
/// never fills, is refused naming it.
pub async fn set(core: &Core, req: SetPrompt) -> Result<PromptTemplate> {
    let name = known(&req.name)?;
    crate::prompts::check_template(&name, &req.template).map_err(Error::InvalidRequest)?;
    core.set_prompt(&name, Some(req.template))
}

/// Goes back to a template's default.
pub async fn reset(core: &Core, req: ResetPrompt) -> Result<PromptTemplate> {
    core.set_prompt(&known(&req.name)?, None)
}

fn known(name: &str) -> Result<String> {
    if crate::prompts::default_template(name).is_none() {
        return Err(Error::InvalidRequest(format!("unknown prompt {name}")));
    }
    Ok(name.to_owned())
}
