//! The person's open line comments in the loop: forwarded to the implementer like blocker
//! findings (with the findings, or on their own when the reviewer has nothing open), so a
//! clean verdict does not end the loop while one of them waits.

use super::hidden;
use super::record::StopReason;
use super::rules::{Decision, feedback_text};
use crate::comments::{CommentStatus, LineComment};
use crate::error::Result;
use crate::findings::FindingView;
use crate::prompts::{self, Registry};

/// The comments the loop forwards: sent (or handed to the loop) and not yet addressed.
pub(crate) fn open(all: Vec<LineComment>) -> Vec<LineComment> {
    all.into_iter()
        .filter(|c| c.status == CommentStatus::Open)
        .collect()
}

/// The decision with the open comments weighed in: a stop that says nothing is left for the
/// implementer (clean, below the threshold) goes on while comments are open, unless the round
/// cap is reached.
pub(crate) fn decide(
    decision: Decision,
    comments: &[LineComment],
    round: u32,
    max_rounds: u32,
) -> Decision {
    match decision {
        Decision::Stop(StopReason::Clean | StopReason::BelowThreshold, ..)
            if !comments.is_empty() && round >= max_rounds =>
        {
            Decision::Stop(
                StopReason::RoundCap,
                format!(
                    "the round cap was reached with {} of your comments open",
                    comments.len()
                ),
                Vec::new(),
            )
        }
        Decision::Stop(StopReason::Clean | StopReason::BelowThreshold, ..)
            if !comments.is_empty() =>
        {
            Decision::Forward(Vec::new())
        }
        other => other,
    }
}

/// The implementer's prompt: the findings in the seed's feedback words (with the hidden
/// answer-by-id instruction), then the comments in the person's words.
pub(crate) fn prompt(
    registry: &Registry,
    forward: &[FindingView],
    comments: &[LineComment],
) -> Result<(String, String)> {
    let mut visible = String::new();
    let mut hidden = String::new();
    if !forward.is_empty() {
        visible = registry.render(
            prompts::REVIEW_FEEDBACK_TO_IMPLEMENTER,
            &[("review_feedback", &feedback_text(forward))],
        )?;
        hidden = hidden::for_implementer(registry)?;
    }
    if !comments.is_empty() {
        if !visible.is_empty() {
            visible.push_str("\n\n");
        }
        visible.push_str(&registry.render(
            prompts::LINE_COMMENTS_TO_IMPLEMENTER,
            &[("line_comments", &crate::comments::comments_text(comments))],
        )?);
    }
    Ok((visible, hidden))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment() -> LineComment {
        LineComment {
            id: "cmt_1".into(),
            session_id: "ses_1".into(),
            path: "src/a.rs".into(),
            start_line: 3,
            end_line: 3,
            quote: "let x = 1;".into(),
            body: "Name it.".into(),
            status: CommentStatus::Open,
            created_at: 1,
            sent_at: None,
            message_id: None,
            updated_at: 1,
        }
    }

    #[test]
    fn a_clean_verdict_goes_on_while_a_comment_is_open_until_the_cap() {
        let clean = || Decision::Stop(StopReason::Clean, "clean".into(), Vec::new());
        assert!(matches!(
            decide(clean(), &[], 1, 5),
            Decision::Stop(StopReason::Clean, ..)
        ));
        assert!(
            matches!(decide(clean(), &[comment()], 1, 5), Decision::Forward(f) if f.is_empty())
        );
        assert!(matches!(
            decide(clean(), &[comment()], 5, 5),
            Decision::Stop(StopReason::RoundCap, ..)
        ));
        let stalled = Decision::Stop(StopReason::Stalled, "s".into(), vec!["F1".into()]);
        assert!(matches!(
            decide(stalled, &[comment()], 1, 5),
            Decision::Stop(StopReason::Stalled, ..)
        ));
    }

    #[test]
    fn comments_alone_go_in_the_persons_words_without_the_answer_instruction() {
        let registry = Registry::default();
        let (visible, hidden) = prompt(&registry, &[], &[comment()]).unwrap();
        assert!(
            visible.starts_with("I went through your changes"),
            "{visible}"
        );
        assert!(
            visible.ends_with("src/a.rs, line 3:\n> let x = 1;\nName it."),
            "{visible}"
        );
        assert!(hidden.is_empty());
    }
}
