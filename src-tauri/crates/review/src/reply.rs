//! The pre-pass every reply parser of this crate runs first (the loop's findings and answers,
//! the cold review's checks and verdict, for the app and the gates alike): the reply's text
//! normalised ([`crate::text::normalize`]) and each line classified as the writer's own, quoted,
//! or inside a code fence.
//!
//! A quoted line (a `>` blockquote at any nesting or indentation) is never the writer's own: a
//! reviewer quoting the implementer's `VERDICT: CLEAN` has not said it. A fenced line is read
//! only when the writer's whole block sits in that one fence (see [`Reply::fenced_block`]).

use crate::text::{is_right_to_left_control, normalize};

/// Where a line of a reply stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Written by the reply's author, outside any quote or fence.
    Own,
    /// Inside a `>` blockquote: someone else's words.
    Quoted,
    /// Inside the code fence with this index (0 for the reply's first fence).
    Fenced(usize),
    /// The opening or closing line of the fence with this index.
    FenceMark(usize),
}

/// One line of a reply, normalised, with its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyLine {
    /// The normalised text.
    pub text: String,
    /// Own, quoted or fenced.
    pub origin: Origin,
    /// The raw line held a right-to-left control, so it may display reversed.
    pub right_to_left: bool,
}

/// A reply split into classified lines.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Every line, in order.
    pub lines: Vec<ReplyLine>,
}

/// The fence a line opens: its mark character and length (three or more backticks or tildes).
fn fence_open(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = t.chars().take_while(|x| *x == c).count();
    // A backtick fence's info string has no backtick (else it is inline code).
    (len >= 3 && !(c == '`' && t[len..].contains('`'))).then_some((c, len))
}

/// Whether a line closes a fence opened with `(c, len)`.
fn fence_closes(line: &str, (c, len): (char, usize)) -> bool {
    let t = line.trim();
    let run = t.chars().take_while(|x| *x == c).count();
    run >= len && t.chars().all(|x| x == c)
}

impl Reply {
    /// Classifies the lines of `text`.
    pub fn parse(text: &str) -> Self {
        let mut lines = Vec::new();
        let mut open: Option<(char, usize)> = None;
        let mut fences = 0usize;
        for raw in text.lines() {
            let right_to_left = raw.chars().any(is_right_to_left_control);
            let line = normalize(raw);
            let origin = match open {
                Some(mark) => {
                    if fence_closes(&line, mark) {
                        open = None;
                        Origin::FenceMark(fences - 1)
                    } else {
                        Origin::Fenced(fences - 1)
                    }
                }
                None if line.trim_start().starts_with('>') => Origin::Quoted,
                None => match fence_open(&line) {
                    Some(mark) => {
                        open = Some(mark);
                        fences += 1;
                        Origin::FenceMark(fences - 1)
                    }
                    None => Origin::Own,
                },
            };
            lines.push(ReplyLine {
                text: line,
                origin,
                right_to_left,
            });
        }
        Self { lines }
    }

    /// The writer's own lines with their indexes.
    pub fn own(&self) -> impl Iterator<Item = (usize, &ReplyLine)> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.origin == Origin::Own)
    }

    /// The lines inside fence `fence`, with their indexes.
    pub fn in_fence(&self, fence: usize) -> impl Iterator<Item = (usize, &ReplyLine)> {
        self.lines
            .iter()
            .enumerate()
            .filter(move |(_, l)| l.origin == Origin::Fenced(fence))
    }

    /// The fence that holds the writer's whole block, when no own line states a verdict: the
    /// one fence with a verdict line, which is its last non-empty line, with no own non-empty
    /// line after the fence and no own line that `is_entry` (a finding, a status or a check
    /// line outside the fence means the block is not all in it). `None` otherwise, and always
    /// when `has_header` is given and no fenced line before the verdict is a header.
    pub fn fenced_block(
        &self,
        is_verdict: impl Fn(&str) -> bool,
        is_entry: impl Fn(&str) -> bool,
        has_header: Option<&dyn Fn(&str) -> bool>,
    ) -> Option<usize> {
        let mut with_verdict = self.lines.iter().filter_map(|l| match l.origin {
            Origin::Fenced(f) if is_verdict(&l.text) => Some(f),
            _ => None,
        });
        let fence = with_verdict.next()?;
        if with_verdict.any(|f| f != fence) {
            return None;
        }
        let content: Vec<&ReplyLine> = self
            .in_fence(fence)
            .map(|(_, l)| l)
            .filter(|l| !l.text.trim().is_empty())
            .collect();
        let (last, before) = content.split_last()?;
        if !is_verdict(&last.text) || before.iter().any(|l| is_verdict(&l.text)) {
            return None;
        }
        if let Some(header) = has_header
            && !before.iter().any(|l| header(&l.text))
        {
            return None;
        }
        let fence_end = self.lines.iter().rposition(
            |l| matches!(l.origin, Origin::Fenced(f) | Origin::FenceMark(f) if f == fence),
        )?;
        let own_after = self.lines[fence_end + 1..]
            .iter()
            .any(|l| l.origin == Origin::Own && !l.text.trim().is_empty());
        let own_entry = self.own().any(|(_, l)| is_entry(&l.text));
        (!own_after && !own_entry).then_some(fence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(text: &str) -> Vec<Origin> {
        Reply::parse(text).lines.iter().map(|l| l.origin).collect()
    }

    #[test]
    fn quotes_at_any_nesting_and_fences_are_told_apart() {
        use Origin::*;
        assert_eq!(
            origins("own\n> q\n  >> q2\n> > q3\n```\n> in code\nVERDICT: CLEAN\n```\nown"),
            vec![
                Own,
                Quoted,
                Quoted,
                Quoted,
                FenceMark(0),
                Fenced(0),
                Fenced(0),
                FenceMark(0),
                Own
            ]
        );
        // A fence inside a quote is quoted; a longer closing run closes; tildes work.
        assert_eq!(
            origins("> ```\n> x\n~~~~\na\n~~~~~\n```rust\nb"),
            vec![
                Quoted,
                Quoted,
                FenceMark(0),
                Fenced(0),
                FenceMark(0),
                FenceMark(1),
                Fenced(1)
            ]
        );
        // Inline code is no fence.
        assert_eq!(origins("```a``` b\nc"), vec![Own, Own]);
    }
}
