//! The registry of named prompt templates with `{{name}}` placeholders. Users may override any
//! template (kept in SQLite) and reset it. A placeholder's value is inserted once and never
//! expanded again, so text from agents cannot inject further placeholders.

use std::collections::HashMap;

use crate::api_types::PromptTemplate;

/// Visible request that asks the implementer for a handoff.
pub const REVIEW_HANDOFF_VISIBLE: &str = "session.reviewHandoff.visible";
/// Hidden instructions sent with the handoff request as a synthetic part.
pub const REVIEW_HANDOFF_INSTRUCTIONS: &str = "session.reviewHandoff.instructions";
/// First prompt of the review session; takes `{{handoff}}`.
pub const REVIEW_SESSION_VISIBLE: &str = "session.reviewSession.visible";
/// Review feedback sent to the implementer; takes `{{review_feedback}}`.
pub const REVIEW_FEEDBACK_TO_IMPLEMENTER: &str = "session.reviewFeedbackToImplementer.visible";
/// Implementation response sent to the reviewer; takes `{{implementation_response}}`.
pub const IMPLEMENTATION_RESPONSE_TO_REVIEWER: &str =
    "session.implementationResponseToReviewer.visible";

/// Hidden instructions sent with every prompt to the reviewer (the first review and each
/// follow-up): end the reply with the findings block and the verdict line.
pub const REVIEW_FINDINGS_INSTRUCTIONS: &str = "session.reviewFindings.instructions";
/// Hidden instructions sent with review feedback to the implementer: answer each finding by id.
pub const REVIEW_ANSWER_INSTRUCTIONS: &str = "session.reviewAnswers.instructions";
/// Hidden note to the reviewer when the implementer claimed fixes the code does not show;
/// takes `{{findings}}` (one line per finding: its unchanged lines, or its unchanged file).
pub const REVIEW_UNCHANGED_NOTE: &str = "session.reviewUnchanged.instructions";
/// Hidden note to the reviewer when its CLEAN does not say it reviewed every changed file;
/// takes `{{files}}`.
pub const REVIEW_COVERAGE_NOTE: &str = "session.reviewCoverage.instructions";
/// Hidden note sending the implementer back once for disputes without evidence; takes
/// `{{finding_ids}}`.
pub const REVIEW_EVIDENCE_NOTE: &str = "session.reviewEvidence.instructions";
/// Hidden note to the reviewer when the implementer disputes findings; takes `{{finding_ids}}`.
pub const REVIEW_DISPUTE_NOTE: &str = "session.reviewDispute.instructions";
/// A person's line comments sent to the implementer; takes `{{line_comments}}`.
pub const LINE_COMMENTS_TO_IMPLEMENTER: &str = "session.lineComments.visible";

/// Built-in templates, in the order Settings lists them.
pub const DEFAULTS: &[(&str, &str)] = &[
    (REVIEW_HANDOFF_VISIBLE, "Prepare a handoff for another agent to review this work."),
    (
        REVIEW_HANDOFF_INSTRUCTIONS,
        "Produce a review handoff for another agent. Do not compact or mutate session history. Your output is an assistant message that will be sent to a separate reviewer agent.

Include:
- The user's original intent and any later clarifications that changed the intent
- What was implemented and why
- Files changed, with brief purpose per file
- Important design decisions and tradeoffs
- Validation/tests run, if known
- Known gaps, uncertainty, or areas the reviewer should inspect closely

Formatting:
- Concise markdown with clear sections
- No preamble like \"Here is a handoff\"
- Write only about the work itself: no internal identifiers, tool plumbing, or how this message is delivered
- Respond in the same language the user used most in the conversation",
    ),
    (
        REVIEW_SESSION_VISIBLE,
        "Please review the changes described in this handoff.

Focus on correctness, regressions, missing implementation, missing tests, and whether the implementation satisfies the stated intent. Provide concise, actionable feedback for the agent implementing the changes.

{{handoff}}",
    ),
    (
        REVIEW_FEEDBACK_TO_IMPLEMENTER,
        "Another agent reviewed your changes and left the feedback below.

Please review the feedback, resolve the relevant issues, and explain what you changed.

{{review_feedback}}",
    ),
    (
        IMPLEMENTATION_RESPONSE_TO_REVIEWER,
        "The agent implementing the changes has responded to the previous review feedback.

Please review the latest state again and report any remaining issues.

{{implementation_response}}",
    ),
    (
        REVIEW_FINDINGS_INSTRUCTIONS,
        "End your reply with a findings block in exactly this shape, after any prose:

FINDINGS
- [F1] major src/lib.rs:3 — what is wrong, in one line
- [F2] nit — a finding without a location
REVIEWED src/lib.rs
REVIEWED src/main.rs:10-60
VERDICT: FLAGS (2)

Rules:
- One line per finding: an id in brackets, a severity (blocker, major, minor or nit), an optional location (path or path:line), an em dash, a one-line title. Put any detail on indented lines below it.
- Number new findings after the highest id used so far in this conversation; never reuse an id.
- On later rounds, report every earlier finding that was still open by its id: `- [F1] FIXED`, `- [F1] OPEN — why it is still open`, or `- [F1] WITHDRAWN — why it was wrong`.
- A finding is closed only by its id: a CLEAN that does not name an earlier open finding FIXED or WITHDRAWN leaves it open.
- The block is yours: lines you quote with `>`, and a block in a code fence beside text of your own, are not read as your findings or verdict.
- List what you reviewed in the block, before the verdict: one `REVIEWED` line per file you read (a path, optionally with the lines read as path:from-to). A CLEAN counts only when these lines name every changed file.
- The last line is `VERDICT: CLEAN` when nothing is open, else `VERDICT: FLAGS (n)` with n the number of open findings.",
    ),
    (
        REVIEW_ANSWER_INSTRUCTIONS,
        "The feedback above lists findings with ids in brackets. After you have worked on them, end your reply with one line per finding, by id:
- [F1] FIXED
- [F2] DISPUTED — why you think it is not a problem, with the evidence: the line of code in backticks, or a command and its output below it

Answer every finding listed; do not invent new ids.",
    ),
    (
        LINE_COMMENTS_TO_IMPLEMENTER,
        "I went through your changes and left comments on some lines below.

Please address each comment, change the code where it applies, and explain what you changed.

{{line_comments}}",
    ),
    (
        REVIEW_UNCHANGED_NOTE,
        "Note for this round: the implementer reported findings as fixed whose code has not changed since your last review:
{{findings}}
Check those findings against the code itself, not against the claim.",
    ),
    (
        REVIEW_COVERAGE_NOTE,
        "Your verdict was CLEAN, but your findings block does not say you reviewed {{files}}. Review what it left out now, then end your reply with the findings block again: a REVIEWED line for every file you reviewed, any finding you have, and the verdict.",
    ),
    (
        REVIEW_EVIDENCE_NOTE,
        "You disputed {{finding_ids}} without evidence. A dispute counts only with its evidence: quote the line of code that shows the finding is not a problem (in backticks or a code block), or the command you ran and what it printed. Answer every finding again by id, with that evidence under each DISPUTED line.",
    ),
    (
        REVIEW_DISPUTE_NOTE,
        "The implementer disputes {{finding_ids}}; its evidence is in the reply above. For each, either accept it with `- [F1] WITHDRAWN — why`, or keep it with `- [F1] OPEN — ` and your own evidence: the line of code (in backticks) or a command's output that shows the problem is real.",
    ),
];

/// The default text of a template.
pub fn default_template(name: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Why `template` cannot stand in for the template `name`: it lacks a placeholder the default
/// has (the flow would send its payload nowhere), or has one the flow never fills.
pub fn check_template(name: &str, template: &str) -> Result<(), String> {
    let Some(default) = default_template(name) else {
        return Err(format!("unknown prompt {name}"));
    };
    let known = placeholders(default);
    let used = placeholders(template);
    if let Some(missing) = known.iter().find(|p| !used.contains(p)) {
        return Err(format!(
            "the template must contain {{{{{missing}}}}}: without it the text it stands for is not sent"
        ));
    }
    if let Some(unknown) = used.iter().find(|p| !known.contains(p)) {
        let allowed = if known.is_empty() {
            "this template takes no placeholders".to_owned()
        } else {
            let list: Vec<String> = known.iter().map(|p| format!("{{{{{p}}}}}")).collect();
            format!("this template takes only {}", list.join(", "))
        };
        return Err(format!("unknown placeholder {{{{{unknown}}}}}: {allowed}"));
    }
    Ok(())
}

/// Placeholder names in a template, in order of first use.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if is_placeholder_name(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
        rest = &after[end + 2..];
    }
    out
}

fn is_placeholder_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Fills `{{name}}` placeholders in one pass. Values are inserted verbatim and never scanned
/// again; placeholders without a value are left as written.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim();
        match values.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Templates in effect: defaults with the user's overrides on top.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    overrides: HashMap<String, String>,
}

impl Registry {
    /// A registry with these overrides; unknown names, and overrides saved before templates
    /// were checked that lack a placeholder (or have an unknown one), are ignored.
    pub fn new(overrides: HashMap<String, String>) -> Self {
        Self {
            overrides: overrides
                .into_iter()
                .filter(|(n, t)| match check_template(n, t) {
                    Ok(()) => true,
                    Err(why) => {
                        tracing::warn!(prompt = %n, "ignoring the saved template: {why}");
                        false
                    }
                })
                .collect(),
        }
    }

    /// The template in effect for `name`.
    pub fn template(&self, name: &str) -> Option<&str> {
        self.overrides
            .get(name)
            .map(String::as_str)
            .or_else(|| default_template(name))
    }

    /// Renders `name` with `values`; unknown names are an error naming the template.
    pub fn render(&self, name: &str, values: &[(&str, &str)]) -> crate::error::Result<String> {
        let template = self
            .template(name)
            .ok_or_else(|| crate::error::Error::InvalidRequest(format!("unknown prompt {name}")))?;
        Ok(render(template, values))
    }

    /// Sets or clears an override.
    pub fn set_override(&mut self, name: &str, template: Option<String>) {
        match template {
            Some(t) => self.overrides.insert(name.to_owned(), t),
            None => self.overrides.remove(name),
        };
    }

    /// Every template for Settings.
    pub fn list(&self) -> Vec<PromptTemplate> {
        DEFAULTS
            .iter()
            .map(|(name, default)| self.describe(name, default))
            .collect()
    }

    /// One template for Settings.
    pub fn get(&self, name: &str) -> Option<PromptTemplate> {
        default_template(name).map(|d| self.describe(name, d))
    }

    fn describe(&self, name: &str, default: &str) -> PromptTemplate {
        let template = self.template(name).unwrap_or(default).to_owned();
        PromptTemplate {
            name: name.to_owned(),
            placeholders: placeholders(default),
            default_template: default.to_owned(),
            overridden: self.overrides.contains_key(name),
            template,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_inserted_once_and_never_expanded() {
        let out = render(
            "A {{handoff}} B {{other}}",
            &[("handoff", "x {{handoff}} {{other}} y"), ("other", "Z")],
        );
        assert_eq!(out, "A x {{handoff}} {{other}} y B Z");
    }

    #[test]
    fn unknown_and_unclosed_placeholders_stay_as_written() {
        assert_eq!(
            render("{{nope}} and {{ open", &[("x", "1")]),
            "{{nope}} and {{ open"
        );
    }

    #[test]
    fn seed_wording_of_the_transfer_prompts() {
        let r = Registry::default();
        let fb = r
            .render(
                REVIEW_FEEDBACK_TO_IMPLEMENTER,
                &[("review_feedback", "FIX IT")],
            )
            .expect("render");
        assert_eq!(
            fb,
            "Another agent reviewed your changes and left the feedback below.\n\nPlease review the feedback, resolve the relevant issues, and explain what you changed.\n\nFIX IT"
        );
        let resp = r
            .render(
                IMPLEMENTATION_RESPONSE_TO_REVIEWER,
                &[("implementation_response", "DONE")],
            )
            .expect("render");
        assert_eq!(
            resp,
            "The agent implementing the changes has responded to the previous review feedback.\n\nPlease review the latest state again and report any remaining issues.\n\nDONE"
        );
    }

    #[test]
    fn no_default_prompt_mentions_ids_or_routing() {
        // The seed's "do not mention ... linked sessions ... routing" line is itself such words,
        // so the hidden instructions say the same thing without naming them.
        for (name, text) in DEFAULTS {
            let rendered = render(
                text,
                &[
                    ("handoff", "H"),
                    ("review_feedback", "F"),
                    ("implementation_response", "R"),
                    ("finding_ids", "F1"),
                    (
                        "findings",
                        "- F1: claimed fixed, but src/a.rs did not change",
                    ),
                ],
            );
            let lower = rendered.to_lowercase();
            for banned in [
                "ses_",
                "msg_",
                "openchamber",
                "metadata",
                "reviewsessionid",
                "originalsessionid",
                "linked",
                "session id",
                "routing",
            ] {
                assert!(!lower.contains(banned), "{name} contains {banned}");
            }
        }
    }

    #[test]
    fn templates_are_checked_against_their_defaults_placeholders() {
        assert!(check_template(REVIEW_SESSION_VISIBLE, "Look: {{handoff}}").is_ok());
        let missing =
            check_template(REVIEW_FEEDBACK_TO_IMPLEMENTER, "Fix it.").expect_err("missing");
        assert!(missing.contains("{{review_feedback}}"), "{missing}");
        let unknown =
            check_template(REVIEW_HANDOFF_VISIBLE, "Hand off {{bogus}}").expect_err("unknown");
        assert!(
            unknown.contains("{{bogus}}") && unknown.contains("no placeholders"),
            "{unknown}"
        );
        // A saved override that drops the payload is not used.
        let r = Registry::new(
            [(
                REVIEW_FEEDBACK_TO_IMPLEMENTER.to_owned(),
                "Fix it.".to_owned(),
            )]
            .into(),
        );
        assert!(
            r.render(REVIEW_FEEDBACK_TO_IMPLEMENTER, &[("review_feedback", "F")])
                .expect("render")
                .ends_with("\n\nF")
        );
    }

    #[test]
    fn overrides_apply_and_reset() {
        let mut r = Registry::new(
            [
                (
                    REVIEW_SESSION_VISIBLE.to_owned(),
                    "Look: {{handoff}}".to_owned(),
                ),
                ("bogus".to_owned(), "x".to_owned()),
            ]
            .into(),
        );
        assert_eq!(
            r.render(REVIEW_SESSION_VISIBLE, &[("handoff", "H")])
                .expect("render"),
            "Look: H"
        );
        assert!(r.get("bogus").is_none());
        r.set_override(REVIEW_SESSION_VISIBLE, None);
        assert!(
            r.render(REVIEW_SESSION_VISIBLE, &[("handoff", "H")])
                .expect("render")
                .starts_with("Please review")
        );
        assert_eq!(
            r.get(REVIEW_SESSION_VISIBLE).expect("known").placeholders,
            vec!["handoff"]
        );
    }
}
