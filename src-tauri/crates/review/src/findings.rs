//! Parsing the review loop's findings block: the reviewer's numbered findings, its status lines
//! for earlier ones, the verdict (the same `VERDICT:` line the cold review reads, see
//! [`crate::verdict`]), and the implementer's answers by id.
//!
//! ```text
//! FINDINGS
//! - [F1] major src/lib.rs:3 — greet() panics on an empty name
//! - [F2] nit — prefer a doc comment
//! - [F3] FIXED
//! VERDICT: FLAGS (2)
//! ```
//!
//! Markdown bullets and numbers, bold and code marks, any case and extra spaces are tolerated;
//! the separator before the title is an em dash, an en dash, ` - `, `--` or `:`. A reply that
//! does not parse is [`FindingsReply::Unparsed`], never clean: no verdict, two verdicts, a
//! verdict that says CLEAN while a finding is open, a FLAGS verdict with nothing open, or an id
//! used twice. Only the reviewer's own lines are read: never a quoted one, and a fenced block
//! only when the whole of it is in one fence (see [`crate::reply`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::reply::{Origin, Reply, ReplyLine};
use crate::text::{fold_for_marks, plain};
use crate::verdict::{Verdict, parse_verdict};

/// How much a finding matters, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum Severity {
    /// Must be fixed before anything else.
    Blocker,
    /// A real defect.
    Major,
    /// A small defect.
    Minor,
    /// Style or taste; never forwarded by default.
    Nit,
}

impl Severity {
    /// The word the findings block uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Blocker => "blocker",
            Self::Major => "major",
            Self::Minor => "minor",
            Self::Nit => "nit",
        }
    }

    /// The severity a word names: the four of the format and the usual synonyms.
    pub fn from_word(word: &str) -> Option<Self> {
        Some(match word.to_ascii_lowercase().as_str() {
            "blocker" | "blocking" | "critical" => Self::Blocker,
            "major" | "high" | "serious" => Self::Major,
            "minor" | "medium" | "moderate" => Self::Minor,
            "nit" | "nitpick" | "low" | "trivial" | "style" => Self::Nit,
            _ => return None,
        })
    }

    /// Whether this severity is at or above `threshold` (a blocker is above a minor).
    pub fn at_least(self, threshold: Severity) -> bool {
        self <= threshold
    }
}

/// Where a finding stands after a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum FindingStatus {
    /// Still to be addressed.
    Open,
    /// Addressed: the reviewer said so by id.
    Fixed,
    /// The implementer says it is fixed; the reviewer has not confirmed it yet.
    ClaimedFixed,
    /// Taken back by the reviewer.
    Withdrawn,
    /// The implementer disagrees (with a reason).
    Disputed,
}

impl FindingStatus {
    /// The word a status line uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Fixed => "fixed",
            Self::ClaimedFixed => "claimedFixed",
            Self::Withdrawn => "withdrawn",
            Self::Disputed => "disputed",
        }
    }

    /// The status a word names (any case).
    pub fn from_word(word: &str) -> Option<Self> {
        Some(match word.to_ascii_lowercase().as_str() {
            "open" | "reopened" | "unfixed" => Self::Open,
            "fixed" | "resolved" | "done" => Self::Fixed,
            "claimedfixed" => Self::ClaimedFixed,
            "withdrawn" | "withdraw" | "retracted" => Self::Withdrawn,
            "disputed" | "dispute" | "wontfix" => Self::Disputed,
            _ => return None,
        })
    }

    /// Whether the finding still needs work (a claimed fix is not counted: it waits for the
    /// reviewer, see [`Self::is_settled`]).
    pub fn is_open(self) -> bool {
        matches!(self, Self::Open | Self::Disputed)
    }

    /// Whether the reviewer has closed the finding (fixed or withdrawn).
    pub fn is_settled(self) -> bool {
        matches!(self, Self::Fixed | Self::Withdrawn)
    }
}

/// A finding as the reviewer wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `F1`, `F2`, ... (upper case).
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// `path:line` or a path, when given.
    pub location: Option<String>,
    /// The one-line title.
    pub title: String,
    /// Lines below the finding (indented or not) up to the next one, joined.
    pub detail: Option<String>,
}

/// A line that reports an earlier finding by id: `- [F1] FIXED`, `- [F2] DISPUTED — reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLine {
    /// The finding's id (upper case).
    pub id: String,
    /// Its status now.
    pub status: FindingStatus,
    /// The words after the separator, when any.
    pub reason: Option<String>,
}

/// A file the reviewer says it reviewed (a `REVIEWED` line of its own): the path as written,
/// with the line range when one was given (`src/lib.rs:10-40`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(export)]
pub struct Reviewed {
    /// The path as the reviewer wrote it, without a leading `./`.
    pub path: String,
    /// `10-40` or `12`, when given.
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<String>,
}

impl Reviewed {
    /// `path` or `path:lines`, as the findings list shows it.
    pub fn label(&self) -> String {
        match &self.lines {
            Some(l) => format!("{}:{l}", self.path),
            None => self.path.clone(),
        }
    }
}

/// What a reviewer's reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingsReply {
    /// A findings block (maybe empty) and a verdict that agrees with it.
    Parsed {
        /// The verdict.
        verdict: Verdict,
        /// New findings, in order.
        findings: Vec<Finding>,
        /// Status lines for earlier findings, in order.
        statuses: Vec<StatusLine>,
        /// The files the reviewer's own `REVIEWED` lines name, in order, each once.
        reviewed: Vec<Reviewed>,
        /// Things tolerated but worth showing (an unknown severity read as major, a count that
        /// disagrees).
        warnings: Vec<String>,
    },
    /// Nothing the loop can act on; never clean.
    Unparsed {
        /// What is wrong, in English.
        reason: String,
    },
}

impl FindingsReply {
    /// Whether the reply is a consistent `VERDICT: CLEAN`.
    pub fn is_clean(&self) -> bool {
        matches!(
            self,
            Self::Parsed {
                verdict: Verdict::Clean,
                ..
            }
        )
    }
}

/// One line of a findings block, read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    New(Finding, Option<String>),
    Status(StatusLine),
    Reviewed(Vec<Reviewed>),
}

/// Reads a `REVIEWED` line (`REVIEWED src/lib.rs`, `REVIEWED: a.rs:1-40, b.rs`, after a list
/// marker and emphasis): the files it names. The word must be spelled in plain letters after
/// normalisation: a look-alike (`RЕVIEWED` with a Cyrillic Е) claims nothing, so a coverage
/// claim can never be smuggled past a person reading it. `Err` carries the warning for such a
/// look-alike; `Ok(None)` for any other line.
fn read_reviewed(raw: &str) -> Result<Option<Vec<Reviewed>>, String> {
    let line = undecorate(raw);
    let body = strip_bullet(&line);
    let word = "REVIEWED";
    let head: String = body.chars().take(word.len()).collect();
    if !head.eq_ignore_ascii_case(word) {
        let folded = fold_for_marks(body);
        let fhead: String = folded.chars().take(word.len()).collect();
        if fhead.eq_ignore_ascii_case(word) {
            return Err(format!(
                "a REVIEWED line spelled with look-alike letters is not read: {}",
                line.trim()
            ));
        }
        return Ok(None);
    }
    let rest = &body[head.len()..];
    // `REVIEWED:` or `REVIEWED ` (not `REVIEWEDX`).
    let rest = match rest.strip_prefix(':') {
        Some(r) => r,
        None if rest.starts_with(char::is_whitespace) => rest,
        None => return Ok(None),
    };
    let mut out: Vec<Reviewed> = Vec::new();
    for token in rest
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        let token = token.trim_start_matches("./");
        let (path, lines) = match token.rsplit_once(':') {
            Some((p, l))
                if !l.is_empty()
                    && l.split('-').count() <= 2
                    && l.split('-')
                        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
            {
                (p, Some(l.to_owned()))
            }
            _ => (token, None),
        };
        if path.is_empty() || !path.chars().any(char::is_alphanumeric) {
            continue;
        }
        let entry = Reviewed {
            path: path.to_owned(),
            lines,
        };
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    Ok(Some(out))
}

/// Removes markdown emphasis and code marks, keeping every word as written (`__init__`,
/// `src/my_file.rs`, `a * b`): see [`crate::text::plain`].
fn undecorate(line: &str) -> String {
    plain(line)
}

/// Strips a list marker (`-`, `+`, `*`, `•`, `1.`, `1)`) and leading underscores of emphasis
/// (`__[F1] major__`). Quote marks are not stripped: a quoted line is never read as an entry
/// (see [`crate::reply`]).
fn strip_bullet(line: &str) -> &str {
    let mut rest = line.trim_start_matches([' ', '\t']);
    if let Some(r) = rest.strip_prefix(['-', '+', '*', '•', '·']) {
        return r.trim_start().trim_start_matches('_');
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(r) = rest[digits..].strip_prefix(['.', ')'])
    {
        rest = r.trim_start();
    }
    rest.trim_start_matches('_')
}

/// The id at the start of `text`: `[F1]`, `(F1)`, `F1:` or `F1` followed by a space; answers
/// the upper-case id, whether it was bracketed, and the rest.
fn take_id(text: &str) -> Option<(String, bool, &str)> {
    let (inner, bracketed, rest) = if let Some(r) = text.strip_prefix('[') {
        let end = r.find(']')?;
        (r[..end].trim(), true, &r[end + 1..])
    } else if let Some(r) = text.strip_prefix('(') {
        let end = r.find(')')?;
        (r[..end].trim(), true, &r[end + 1..])
    } else {
        let end = text
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(text.len());
        (&text[..end], false, &text[end..])
    };
    let digits = inner.strip_prefix(['F', 'f'])?;
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u32 = digits.parse().ok()?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    Some((format!("F{number}"), bracketed, rest))
}

/// Splits `text` at the first title separator (` — `, ` – `, ` - `, ` -- `, `: `, or a dash
/// right after a word): the head and the tail, trimmed.
fn split_separator(text: &str) -> (&str, Option<&str>) {
    let mut best: Option<(usize, usize)> = None;
    for sep in ["—", "–", " -- ", " - ", ": "] {
        if let Some(i) = text.find(sep)
            && best.is_none_or(|(j, _)| i < j)
        {
            best = Some((i, sep.len()));
        }
    }
    match best {
        Some((i, len)) => (text[..i].trim(), Some(text[i + len..].trim())),
        None => (text.trim(), None),
    }
}

/// The first word of `text` (letters and spaces for `still open`) and the rest.
fn first_word(text: &str) -> (&str, &str) {
    let trimmed = text.trim_start_matches(['[', '(', '_']);
    let end = trimmed
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(trimmed.len());
    let word = &trimmed[..end];
    let rest = trimmed[end..].trim_start_matches([']', ')', ':', ',', '_']);
    (word, rest.trim_start())
}

/// Reads one line as a finding or a status line; `None` when it is neither.
fn read_line(raw: &str) -> Option<Line> {
    let line = undecorate(raw);
    let (id, bracketed, rest) = take_id(strip_bullet(&line))?;
    let (word, after) = first_word(rest);
    if word.is_empty() {
        return None;
    }
    if let Some(status) = FindingStatus::from_word(word) {
        let (_, reason) = split_separator(after);
        let reason = reason
            .map(str::to_owned)
            .or_else(|| (!after.trim().is_empty()).then(|| after.trim().to_owned()))
            .filter(|r| r.chars().any(char::is_alphanumeric));
        return Some(Line::Status(StatusLine { id, status, reason }));
    }
    let (severity, warning) = match Severity::from_word(word) {
        Some(s) => (s, None),
        // Prose that starts with an id ("F1 is fine now") is no finding.
        None if !bracketed => return None,
        None => (
            Severity::Major,
            Some(format!(
                "{id}: unknown severity \"{word}\", read as major so that it is not dropped"
            )),
        ),
    };
    let (head, title) = split_separator(after);
    let (location, title) = match title {
        Some(t) => ((!head.is_empty()).then(|| head.to_owned()), t.to_owned()),
        // No separator: a first token that looks like a path is the location.
        None => match head.split_once(char::is_whitespace) {
            Some((loc, t)) if looks_like_location(loc) => (Some(loc.to_owned()), t.to_owned()),
            _ => (None, head.to_owned()),
        },
    };
    Some(Line::New(
        Finding {
            id,
            severity,
            location,
            title: title.trim().to_owned(),
            detail: None,
        },
        warning,
    ))
}

fn looks_like_location(token: &str) -> bool {
    token.contains('/') || token.contains(':') || token.contains('.')
}

fn is_findings_header(line: &str) -> bool {
    let line = undecorate(line);
    let line = line
        .trim_start_matches(['#', ' '])
        .trim_matches('_')
        .trim_end_matches(':')
        .trim();
    line.eq_ignore_ascii_case("findings")
}

/// Parses a reviewer's reply.
///
/// Only the reviewer's own lines count ([`crate::reply`]): a quoted line is never read, and a
/// fenced verdict only when the whole findings block (header to verdict) is in that fence
/// with nothing of the reviewer's own after it and no finding or status line outside it.
pub fn parse_findings(text: &str) -> FindingsReply {
    let unparsed = |reason: &str| FindingsReply::Unparsed {
        reason: reason.to_owned(),
    };
    let reply = Reply::parse(text);
    let is_verdict = |l: &str| parse_verdict(l).is_some();
    let own_verdicts: Vec<(usize, Verdict)> = reply
        .own()
        .filter_map(|(i, l)| parse_verdict(&l.text).map(|v| (i, v)))
        .collect();
    // The lines the block is read from: the reviewer's own, or the one fence holding it all.
    let (lines, verdict_at, verdict, in_fence): (Vec<(usize, &ReplyLine)>, usize, Verdict, _) =
        match own_verdicts.as_slice() {
            [] => {
                let fence = reply.fenced_block(
                    is_verdict,
                    |l| read_line(l).is_some(),
                    Some(&is_findings_header),
                );
                let Some(fence) = fence else {
                    let elsewhere = reply.lines.iter().any(|l| is_verdict(&l.text));
                    return unparsed(if elsewhere {
                        "the reply has no VERDICT line of the reviewer's own (a quoted verdict, or a fenced one beside text of its own, is not the reviewer's)"
                    } else {
                        "the reply has no VERDICT line"
                    });
                };
                let lines: Vec<(usize, &ReplyLine)> = reply.in_fence(fence).collect();
                let Some(&(at, last)) = lines.iter().rev().find(|(_, l)| is_verdict(&l.text))
                else {
                    return unparsed("the reply has no VERDICT line");
                };
                let Some(v) = parse_verdict(&last.text) else {
                    return unparsed("the reply has no VERDICT line");
                };
                (lines, at, v, Some(fence))
            }
            [(at, v)] => (reply.lines.iter().enumerate().collect(), *at, *v, None),
            _ => return unparsed("the reply has more than one VERDICT line"),
        };
    // The block starts after the last FINDINGS header before the verdict, else anywhere.
    let before: Vec<(usize, &ReplyLine)> =
        lines.into_iter().filter(|(i, _)| *i < verdict_at).collect();
    let is_body = |l: &ReplyLine| match in_fence {
        Some(f) => l.origin == Origin::Fenced(f),
        None => l.origin == Origin::Own,
    };
    let start = before
        .iter()
        .rposition(|(_, l)| is_body(l) && is_findings_header(&l.text))
        .map_or(0, |i| i + 1);
    let (entries, warnings) = read_block(&before[start..], is_body);
    let mut findings = Vec::new();
    let mut statuses = Vec::new();
    let mut reviewed: Vec<Reviewed> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        let id = match &entry {
            Line::New(f, _) => f.id.clone(),
            Line::Status(s) => s.id.clone(),
            Line::Reviewed(files) => {
                for f in files {
                    if !reviewed.contains(f) {
                        reviewed.push(f.clone());
                    }
                }
                continue;
            }
        };
        if !seen.insert(id.clone()) {
            return FindingsReply::Unparsed {
                reason: format!("finding {id} is listed more than once"),
            };
        }
        match entry {
            Line::New(f, _) => findings.push(f),
            Line::Status(s) => statuses.push(s),
            Line::Reviewed(_) => {}
        }
    }
    let open = findings.len()
        + statuses
            .iter()
            .filter(|s| s.status == FindingStatus::Open)
            .count();
    let mut warnings = warnings;
    match verdict {
        Verdict::Clean if open > 0 => {
            return FindingsReply::Unparsed {
                reason: format!("the verdict says CLEAN but {open} finding(s) are open"),
            };
        }
        Verdict::Flags(_) if open == 0 => {
            return FindingsReply::Unparsed {
                reason: format!(
                    "the verdict says {} but no finding is open",
                    verdict.label()
                ),
            };
        }
        Verdict::Flags(n) if n as usize != open => warnings.push(format!(
            "the verdict says {} but {open} finding(s) are open",
            verdict.label()
        )),
        _ => {}
    }
    FindingsReply::Parsed {
        verdict,
        findings,
        statuses,
        reviewed,
        warnings,
    }
}

/// Reads the finding and status lines of a block from the lines `is_body` accepts; other
/// non-empty lines after a new finding are its detail (a fenced line only as detail, a quoted
/// one never).
fn read_block(
    lines: &[(usize, &ReplyLine)],
    is_body: impl Fn(&ReplyLine) -> bool,
) -> (Vec<Line>, Vec<String>) {
    let mut entries: Vec<Line> = Vec::new();
    let mut warnings = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    let flush = |entries: &mut Vec<Line>, detail: &mut Vec<String>| {
        if let Some(Line::New(f, _)) = entries.last_mut()
            && !detail.is_empty()
        {
            f.detail = Some(detail.join("\n"));
        }
        detail.clear();
    };
    for (_, line) in lines {
        if line.origin == Origin::Quoted {
            continue;
        }
        let body = is_body(line);
        if body {
            match read_reviewed(&line.text) {
                Ok(Some(files)) => {
                    flush(&mut entries, &mut detail);
                    entries.push(Line::Reviewed(files));
                    continue;
                }
                Err(warning) => warnings.push(warning),
                Ok(None) => {}
            }
        }
        match body.then(|| read_line(&line.text)).flatten() {
            Some(entry) => {
                flush(&mut entries, &mut detail);
                if let Line::New(_, Some(w)) = &entry {
                    warnings.push(w.clone());
                }
                entries.push(entry);
            }
            None => {
                let text = if body {
                    undecorate(&line.text)
                } else {
                    line.text.trim().to_owned()
                };
                let text = text.trim();
                let mark = matches!(line.origin, Origin::FenceMark(_));
                if !text.is_empty() && !mark && matches!(entries.last(), Some(Line::New(..))) {
                    detail.push(strip_bullet(text).to_owned());
                }
            }
        }
    }
    flush(&mut entries, &mut detail);
    (entries, warnings)
}

/// The files the `REVIEWED` lines among `lines` name (each once, in order), and a warning per
/// line that spells the word with look-alike letters. The caller chooses which lines count (the
/// reviewer's own, or the one fence holding its whole block).
pub(crate) fn reviewed_in<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> (Vec<Reviewed>, Vec<String>) {
    let mut out: Vec<Reviewed> = Vec::new();
    let mut warnings = Vec::new();
    for line in lines {
        match read_reviewed(line) {
            Ok(Some(files)) => {
                for f in files {
                    if !out.contains(&f) {
                        out.push(f);
                    }
                }
            }
            Err(w) => warnings.push(w),
            Ok(None) => {}
        }
    }
    (out, warnings)
}

/// The files of `changed` (paths relative to the repository's root) that no entry of
/// `reviewed` names, in `changed`'s order. An entry names a file when its path is the file's
/// path, or the end of it after a `/` (a reviewer in a subfolder of the repository writes
/// paths from there); a directory or a pattern names nothing.
pub fn uncovered(changed: &[String], reviewed: &[Reviewed]) -> Vec<String> {
    changed
        .iter()
        .filter(|file| !reviewed.iter().any(|r| names(&r.path, file)))
        .cloned()
        .collect()
}

/// Whether a REVIEWED path names `file`.
fn names(path: &str, file: &str) -> bool {
    let path = path.trim_start_matches("./").trim_end_matches('/');
    !path.is_empty()
        && !path.contains('*')
        && (file == path
            || file
                .strip_suffix(path)
                .is_some_and(|head| head.ends_with('/')))
}

/// Reads the implementer's answers by id (`- [F1] FIXED`, `- [F2] DISPUTED — reason`) from
/// anywhere in its reply but its quotes (a quoted review line is the reviewer's, not an
/// answer); a later line for the same id wins.
pub fn parse_answers(text: &str) -> Vec<StatusLine> {
    let mut out: Vec<StatusLine> = Vec::new();
    for line in Reply::parse(text).lines {
        if line.origin == Origin::Quoted {
            continue;
        }
        if let Some(Line::Status(s)) = read_line(&line.text) {
            out.retain(|o| o.id != s.id);
            out.push(s);
        }
    }
    out
}

/// Whether a line of an implementer's reply carries evidence: inline code (a quoted line of
/// code in backticks), or, after its answer line, a code fence, a `>` quote, an indented code
/// line or a shell prompt line (`$ cargo test`) with what it printed.
fn is_evidence(line: &ReplyLine, own_answer_line: bool) -> bool {
    let text = line.text.trim();
    let inline_code = text.matches('`').count() >= 2
        && text
            .split('`')
            .skip(1)
            .step_by(2)
            .any(|code| code.chars().any(char::is_alphanumeric));
    if own_answer_line {
        return inline_code;
    }
    match line.origin {
        Origin::Fenced(_) | Origin::Quoted => !text.is_empty() && text != ">",
        Origin::FenceMark(_) => false,
        Origin::Own => {
            inline_code
                || (line.text.starts_with("    ") || line.text.starts_with('\t'))
                    && !text.is_empty()
                || text.starts_with("$ ")
        }
    }
}

/// The ids the implementer disputes without evidence: a `DISPUTED` answer counts only with a
/// quoted line of code or a command's output, on its line or below it (up to the next answer
/// line). Quoted answer lines are the reviewer's and are not read, as in [`parse_answers`].
pub fn disputes_without_evidence(text: &str) -> Vec<String> {
    let reply = Reply::parse(text);
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<(String, bool)> = None;
    let close = |current: &mut Option<(String, bool)>, out: &mut Vec<String>| {
        if let Some((id, false)) = current.take() {
            out.retain(|o| *o != id);
            out.push(id);
        }
    };
    for line in &reply.lines {
        let answer = (line.origin == Origin::Own)
            .then(|| read_line(&line.text))
            .flatten();
        if let Some(Line::Status(s)) = answer {
            close(&mut current, &mut out);
            out.retain(|o| *o != s.id);
            if s.status == FindingStatus::Disputed {
                current = Some((s.id, is_evidence(line, true)));
            }
            continue;
        }
        if let Some((_, found)) = &mut current
            && !*found
            && is_evidence(line, false)
        {
            *found = true;
        }
    }
    close(&mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dispute_needs_a_quoted_line_of_code_or_a_commands_output() {
        let text = "- [F1] DISPUTED — it is guarded: `if name.is_empty() { return }`\n\
                    - [F2] DISPUTED — the tests pass\n\
                    - [F3] DISPUTED — see the run:\n\
                    ```\n$ cargo test\ntest result: ok. 3 passed\n```\n\
                    - [F4] DISPUTED — no reason\n\
                    - [F5] FIXED\n\
                    > - [F6] DISPUTED — quoted, not an answer\n\
                    - [F7] DISPUTED — empty marks `` do not count\n";
        assert_eq!(disputes_without_evidence(text), ["F2", "F4", "F7"]);
        // A later answer for the same id decides.
        assert!(disputes_without_evidence("- [F1] DISPUTED — no\n- [F1] FIXED").is_empty());
    }

    #[test]
    fn reviewed_lines_in_a_quote_a_fence_or_with_look_alike_letters_claim_nothing() {
        let reviewed = |text: &str| match parse_findings(text) {
            FindingsReply::Parsed { reviewed, .. } => {
                reviewed.iter().map(Reviewed::label).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reviewed("FINDINGS\n> REVIEWED src/a.rs\nVERDICT: CLEAN"),
            Vec::<String>::new()
        );
        assert_eq!(
            reviewed("```\nREVIEWED src/a.rs\n```\nFINDINGS\nVERDICT: CLEAN"),
            Vec::<String>::new()
        );
        assert_eq!(
            reviewed("FINDINGS\nRЕVIEWED src/a.rs\nVERDICT: CLEAN"),
            Vec::<String>::new()
        );
        assert_eq!(
            reviewed("FINDINGS\n- **REVIEWED** `src/a.rs:3-9`\nVERDICT: CLEAN"),
            ["src/a.rs:3-9"]
        );
        // A covering list needs the file itself, not a folder or a pattern.
        let changed = vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()];
        let named = |paths: &[&str]| -> Vec<Reviewed> {
            paths
                .iter()
                .map(|p| Reviewed {
                    path: (*p).to_owned(),
                    lines: None,
                })
                .collect()
        };
        assert_eq!(uncovered(&changed, &named(&["src/", "src/*"])), changed);
        assert_eq!(
            uncovered(&changed, &named(&["a.rs", "src/b.rs"])),
            Vec::<String>::new()
        );
        assert_eq!(uncovered(&changed, &named(&["rc/a.rs"])), changed);
    }

    #[test]
    fn the_issue_example_parses() {
        let text = "FINDINGS\n- [F1] major src/lib.rs:3 — greet() panics on an empty name\n- [F2] nit src/lib.rs:1 — prefer a doc comment\nVERDICT: FLAGS (2)";
        let FindingsReply::Parsed {
            verdict,
            findings,
            statuses,
            warnings,
            ..
        } = parse_findings(text)
        else {
            panic!("parses");
        };
        assert_eq!(verdict, Verdict::Flags(2));
        assert!(statuses.is_empty() && warnings.is_empty());
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[0].id, "F1");
        assert_eq!(findings[0].severity, Severity::Major);
        assert_eq!(findings[0].location.as_deref(), Some("src/lib.rs:3"));
        assert_eq!(findings[0].title, "greet() panics on an empty name");
        assert_eq!(findings[1].severity, Severity::Nit);
    }

    #[test]
    fn severity_order() {
        assert!(Severity::Blocker.at_least(Severity::Minor));
        assert!(Severity::Minor.at_least(Severity::Minor));
        assert!(!Severity::Nit.at_least(Severity::Minor));
    }

    #[test]
    fn answers_by_id() {
        let a = parse_answers(
            "Done.\n- [F1] FIXED\n- **[F2] DISPUTED** — the name is never empty here\n",
        );
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].status, FindingStatus::Disputed);
        assert_eq!(a[1].reason.as_deref(), Some("the name is never empty here"));
    }
}
