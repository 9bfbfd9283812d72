//! The hidden synthetic parts that go with review prompts: the findings format for the
//! reviewer (with a note when claimed fixes left the code unchanged) and the answer-by-id
//! instruction for the implementer. The visible parts keep the seed's words.

use crate::error::Result;
use crate::findings::UnchangedClaim;
use crate::prompts::{
    REVIEW_ANSWER_INSTRUCTIONS, REVIEW_COVERAGE_NOTE, REVIEW_DISPUTE_NOTE, REVIEW_EVIDENCE_NOTE,
    REVIEW_FINDINGS_INSTRUCTIONS, REVIEW_UNCHANGED_NOTE, Registry,
};

/// The hidden instructions for a prompt to the reviewer, with the notes for findings claimed
/// fixed while their code did not change (one line per finding, naming its lines or its file)
/// and for findings the implementer disputes.
pub fn for_reviewer(
    registry: &Registry,
    claimed_unchanged: &[UnchangedClaim],
    disputed: &[String],
) -> Result<String> {
    let mut text = registry.render(REVIEW_FINDINGS_INSTRUCTIONS, &[])?;
    if !claimed_unchanged.is_empty() {
        let findings: Vec<String> = claimed_unchanged
            .iter()
            .map(|c| format!("- {}", super::evidence::note_line(c)))
            .collect();
        text.push_str("\n\n");
        text.push_str(
            &registry.render(REVIEW_UNCHANGED_NOTE, &[("findings", &findings.join("\n"))])?,
        );
    }
    if !disputed.is_empty() {
        let ids = disputed.join(", ");
        text.push_str("\n\n");
        text.push_str(&registry.render(REVIEW_DISPUTE_NOTE, &[("finding_ids", &ids)])?);
    }
    Ok(text)
}

/// The hidden prompt that sends the implementer back, once, for disputes without evidence.
pub fn evidence_ask(registry: &Registry, disputed: &[String]) -> Result<String> {
    let ids = disputed.join(", ");
    let mut text = registry.render(REVIEW_EVIDENCE_NOTE, &[("finding_ids", &ids)])?;
    text.push_str("\n\n");
    text.push_str(&registry.render(REVIEW_ANSWER_INSTRUCTIONS, &[])?);
    Ok(text)
}

/// The hidden prompt that asks the reviewer, once, for the changed files its CLEAN did not say
/// it reviewed (`missing` empty: it named no file at all), with the findings format again.
pub fn coverage_ask(registry: &Registry, missing: &[String]) -> Result<String> {
    let files = if missing.is_empty() {
        "any file (it has no REVIEWED line)".to_owned()
    } else {
        format!("these changed files: {}", missing.join(", "))
    };
    let mut text = registry.render(REVIEW_COVERAGE_NOTE, &[("files", &files)])?;
    text.push_str("\n\n");
    text.push_str(&registry.render(REVIEW_FINDINGS_INSTRUCTIONS, &[])?);
    Ok(text)
}

/// The hidden instruction for review feedback sent to the implementer.
pub fn for_implementer(registry: &Registry) -> Result<String> {
    registry.render(REVIEW_ANSWER_INSTRUCTIONS, &[])
}
