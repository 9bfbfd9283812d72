//! The hidden synthetic parts that go with review prompts: the findings format for the
//! reviewer (with a note when claimed fixes left the code unchanged) and the answer-by-id
//! instruction for the implementer. The visible parts keep the seed's words.

use crate::error::Result;
use crate::prompts::{
    REVIEW_ANSWER_INSTRUCTIONS, REVIEW_FINDINGS_INSTRUCTIONS, REVIEW_UNCHANGED_NOTE, Registry,
};

/// The hidden instructions for a prompt to the reviewer.
pub fn for_reviewer(registry: &Registry, claimed_unchanged: &[String]) -> Result<String> {
    let mut text = registry.render(REVIEW_FINDINGS_INSTRUCTIONS, &[])?;
    if !claimed_unchanged.is_empty() {
        let ids = claimed_unchanged.join(", ");
        text.push_str("\n\n");
        text.push_str(&registry.render(REVIEW_UNCHANGED_NOTE, &[("finding_ids", &ids)])?);
    }
    Ok(text)
}

/// The hidden instruction for review feedback sent to the implementer.
pub fn for_implementer(registry: &Registry) -> Result<String> {
    registry.render(REVIEW_ANSWER_INSTRUCTIONS, &[])
}
