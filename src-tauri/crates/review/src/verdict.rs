//! Parsing the reviewer's reply: the verdict line and the FAIL lines.

use crate::reply::{Origin, Reply, ReplyLine};
use crate::text::{fold_for_marks, plain};
use crate::types::ReviewKind;

/// The verdict a well-formed reply ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `VERDICT: CLEAN`.
    Clean,
    /// `VERDICT: FLAGS (n)`.
    Flags(u32),
}

impl Verdict {
    /// `CLEAN` or `FLAGS (n)`.
    pub fn label(self) -> String {
        match self {
            Self::Clean => "CLEAN".to_owned(),
            Self::Flags(n) => format!("FLAGS ({n})"),
        }
    }
}

/// What a reply says, or why it cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedReply {
    /// Verdict present and consistent with the FAIL lines.
    Valid {
        /// The verdict.
        verdict: Verdict,
        /// Distinct checks marked FAIL.
        fails: u32,
    },
    /// Verdict missing, malformed, or disagreeing with the FAIL lines.
    Broken {
        /// What is wrong.
        reason: String,
        /// The verdict, if one parsed.
        verdict: Option<Verdict>,
        /// Distinct checks marked FAIL.
        fails: u32,
    },
}

/// A line without markdown emphasis and code marks (`*`, `_`, `` ` ``), trimmed: for finding
/// verdict and status words only, never for showing (it turns `__init__` into `init`).
pub(crate) fn strip_decoration(line: &str) -> String {
    line.chars()
        .filter(|c| !matches!(c, '*' | '_' | '`'))
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The verdict a line states (`VERDICT: CLEAN`, `VERDICT: FLAGS (n)`, any case and decoration).
/// A quoted line (`> VERDICT: CLEAN`) states none.
pub(crate) fn parse_verdict(line: &str) -> Option<Verdict> {
    let line = strip_decoration(&fold_for_marks(line));
    let line = line.trim_start_matches(['#', '-', ' ']).trim();
    let rest = line
        .get(..8)
        .filter(|p| p.eq_ignore_ascii_case("verdict:"))
        .map(|_| line[8..].trim())?;
    if rest.eq_ignore_ascii_case("clean") || rest.eq_ignore_ascii_case("clean.") {
        return Some(Verdict::Clean);
    }
    let rest = rest.trim_end_matches('.');
    let flags = rest
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("flags"))
        .map(|_| rest[5..].trim())?;
    let n = flags.strip_prefix('(')?.strip_suffix(')')?.trim();
    n.parse().ok().map(Verdict::Flags)
}

/// What a line says about a check: the first status word or mark wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Pass,
    Fail,
}

/// Marks that say a check failed (or was not met).
const FAIL_SYMBOLS: &[char] = &[
    '❌', '✗', '✘', '✖', '✕', '☒', '⨯', '🗙', '🗴', '🗶', '⛔', '🔴', '🚫', '❎', '👎',
];
/// Marks that say a check passed.
const PASS_SYMBOLS: &[char] = &['✅', '✓', '✔', '🟢', '☑', '👍'];
/// Words that say a check failed, in any case (and as reversed text reads them).
const FAIL_WORDS: &[&str] = &[
    "fail",
    "fails",
    "failed",
    "failing",
    "failure",
    "failures",
    "unmet",
    "unsatisfied",
    "violated",
    "liaf",
    "sliaf",
    "deliaf",
    "eruliaf",
];
/// Words that say a check passed.
const PASS_WORDS: &[&str] = &["pass", "passed", "passes"];
/// Words that are no mark by themselves, but a failure when negated ("NOT MET").
const NEGATABLE_WORDS: &[&str] = &["met", "satisfied", "ok", "okay", "fulfilled"];

/// Whether the words before byte `i` of `lower` negate what follows ("not", "no", "never",
/// "n't").
fn negated(lower: &str, i: usize) -> bool {
    let before = lower[..i].trim_end();
    before.ends_with("n't")
        || ["not", "no", "never"].iter().any(|n| {
            before.ends_with(n)
                && before[..before.len() - n.len()]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
}

/// Status marks: words (any case, whole words) and symbols; the first one in `text` wins.
fn mark_at(text: &str) -> Option<(usize, Mark)> {
    let mut best: Option<(usize, Mark)> = None;
    let mut consider = |i: usize, m: Mark| {
        if best.is_none_or(|(j, _)| i < j) {
            best = Some((i, m));
        }
    };
    for (i, c) in text.char_indices() {
        if FAIL_SYMBOLS.contains(&c) {
            consider(i, Mark::Fail);
            break;
        }
        if PASS_SYMBOLS.contains(&c) {
            consider(i, Mark::Pass);
            break;
        }
    }
    // The words are ASCII: ASCII lower-casing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    for (words, mark) in [
        (FAIL_WORDS, Some(Mark::Fail)),
        (PASS_WORDS, Some(Mark::Pass)),
        (NEGATABLE_WORDS, None),
    ] {
        for word in words {
            if let Some(i) = find_word(&lower, word) {
                // "NOT PASS", "does not pass", "not met" are failures.
                match (negated(&lower, i), mark) {
                    (true, _) => consider(i, Mark::Fail),
                    (false, Some(m)) => consider(i, m),
                    (false, None) => {}
                }
            }
        }
    }
    best
}

/// Whether a line says "failed" anywhere, not only as its first mark: a FAIL mark symbol, or
/// a failure word in capitals ("P3 PASS — rollback: FAIL", "P3 NOT MET"); capitals, so that
/// prose ("names fail-open or fail-closed") is not read as one. `FAIL-OPEN`, `FAIL-CLOSED`,
/// `FAIL-SAFE` name a behaviour, not a result.
fn negative_anywhere(text: &str) -> bool {
    if text.chars().any(|c| FAIL_SYMBOLS.contains(&c)) {
        return true;
    }
    let behaviour = [
        "-OPEN", "-CLOSED", "-SAFE", "-SECURE", "-FAST", "-SOFT", "-HARD",
    ];
    let word = |w: &str| {
        let mut from = 0;
        while let Some(i) = find_word(&text[from..], w) {
            let end = from + i + w.len();
            if !behaviour.iter().any(|b| text[end..].starts_with(b)) {
                return true;
            }
            from = end;
        }
        false
    };
    let upper = |w: &&str| word(&w.to_ascii_uppercase());
    FAIL_WORDS.iter().any(upper)
        || ["PASS", "PASSED", "MET", "SATISFIED", "OK", "FULFILLED"]
            .iter()
            .any(|w| {
                let mut from = 0;
                while let Some(i) = find_word(&text[from..], w) {
                    let at = from + i;
                    let before = text[..at].trim_end();
                    if before.ends_with("NOT") || before.ends_with("N'T") {
                        return true;
                    }
                    from = at + w.len();
                }
                false
            })
}

/// Byte index of `word` as a whole word (not inside a longer run of letters or digits).
fn find_word(haystack: &str, word: &str) -> Option<usize> {
    let bytes = haystack.as_bytes();
    let mut from = 0;
    while let Some(found) = haystack[from..].find(word) {
        let i = from + found;
        let end = i + word.len();
        let before = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let after = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if before && after {
            return Some(i);
        }
        from = end;
    }
    None
}

/// The check ids (`P1`-`P8`, `J1`-`J8`, either letter) a line names, with their byte offsets:
/// a letter not preceded by a letter or digit, one digit 1-8, not followed by another digit.
fn check_ids(line: &str) -> Vec<(usize, char, u8)> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    for i in 0..bytes.len().saturating_sub(1) {
        let letter = bytes[i].to_ascii_uppercase();
        if !matches!(letter, b'P' | b'J') {
            continue;
        }
        if i > 0 && bytes[i - 1].is_ascii_alphanumeric() {
            continue;
        }
        let digit = bytes[i + 1];
        if !(b'1'..=b'8').contains(&digit) {
            continue;
        }
        if bytes.get(i + 2).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        out.push((i, char::from(letter), digit - b'0'));
    }
    out
}

/// Whether a line is a check line: it starts (after list marks, table bars, a heading's `#`
/// and a word "Check") with a check id.
fn starts_with_check(line: &str) -> bool {
    let rest = line.trim_start_matches(['-', '+', '•', '·', '#', '|', '>', ' ', '\t']);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = match rest[digits..].strip_prefix(['.', ')']) {
        Some(r) if digits > 0 => r.trim_start(),
        _ => rest,
    };
    let rest = match rest.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("check") => rest[5..].trim_start_matches(['s', ' ', ':']),
        _ => rest,
    };
    check_ids(rest).first().is_some_and(|(at, _, _)| *at == 0)
}

/// What the check lines of a reply say.
#[derive(Debug, Default)]
struct Checks {
    failed: [bool; 9],
    passed: [bool; 9],
    /// A FAIL on the other checklist's id, or a FAIL mark on a line naming no check.
    stray_fails: u32,
    /// Check lines that are no clear PASS or FAIL ("P3 — see above").
    unclear: u32,
}

/// The checks a line marks, with their letter: the first status word or mark after each id
/// (or, failing that, before the first id) decides.
fn line_marks(line: &str) -> Vec<(char, u8, Mark)> {
    let ids = check_ids(line);
    let Some(first) = ids.first() else {
        return Vec::new();
    };
    let lead = mark_at(&line[..first.0]).map(|(_, m)| m);
    let mut out = Vec::new();
    for (n, &(at, letter, number)) in ids.iter().enumerate() {
        let end = ids.get(n + 1).map_or(line.len(), |next| next.0);
        if let Some(mark) = mark_at(&line[at + 2..end]).map(|(_, m)| m).or(lead) {
            out.push((letter, number, mark));
        }
    }
    out
}

/// The readings of a reply line for marks: its folded, undecorated text and, when the raw line
/// held a right-to-left control (it may display reversed), that text reversed as well.
fn readings(line: &ReplyLine) -> Vec<String> {
    let text = strip_decoration(&fold_for_marks(&line.text));
    if line.right_to_left {
        let reversed = text.chars().rev().collect();
        vec![text, reversed]
    } else {
        vec![text]
    }
}

/// What one reading of a line says about `prefix`'s checks.
#[derive(Debug, Default)]
struct LineRead {
    fail: Vec<u8>,
    pass: Vec<u8>,
    stray: bool,
    unclear: bool,
}

fn read_line(text: &str, prefix: char) -> LineRead {
    let mut out = LineRead::default();
    let ids = check_ids(text);
    let negative = negative_anywhere(text);
    if ids.is_empty() {
        // A line that names no check but carries a FAIL mark in capitals or a symbol
        // ("FAIL — Increment 2 …", "| Scope | ❌ |") is a failure too; prose ("may fail")
        // is not.
        let first_fail = matches!(mark_at(text), Some((i, Mark::Fail))
            if text[i..].starts_with("FAIL") || !text[i..].starts_with(|c: char| c.is_ascii_alphabetic()));
        out.stray = negative || first_fail;
        return out;
    }
    let marks = line_marks(text);
    for &(letter, number, mark) in &marks {
        match (letter == prefix, mark) {
            (true, Mark::Fail) => out.fail.push(number),
            (true, Mark::Pass) => out.pass.push(number),
            (false, Mark::Fail) => out.stray = true,
            (false, Mark::Pass) => {}
        }
    }
    if negative {
        for &(_, letter, number) in &ids {
            if letter == prefix {
                out.fail.push(number);
            } else {
                out.stray = true;
            }
        }
    }
    // A check line whose check has no mark of its own is no clear PASS.
    if let Some(&(_, letter, number)) = ids.first()
        && letter == prefix
        && starts_with_check(text)
        && !marks.iter().any(|(l, n, _)| *l == letter && *n == number)
    {
        out.unclear = true;
    }
    out
}

fn read_checks(lines: &[&ReplyLine], prefix: char) -> Checks {
    let mut checks = Checks::default();
    for line in lines {
        let (mut stray, mut unclear) = (false, true);
        let mut any = false;
        for reading in readings(line) {
            let read = read_line(&reading, prefix);
            for n in read.fail {
                checks.failed[n as usize] = true;
            }
            for n in read.pass {
                checks.passed[n as usize] = true;
            }
            stray |= read.stray;
            unclear &= read.unclear;
            any = true;
        }
        checks.stray_fails += u32::from(stray);
        checks.unclear += u32::from(any && unclear);
    }
    checks
}

fn check_prefix(kind: ReviewKind) -> char {
    match kind {
        ReviewKind::Plan => 'P',
        ReviewKind::Commit => 'J',
    }
}

/// The lines of a reply that fail a check of `kind`'s checklist, as the engine counts them,
/// without markdown decoration (words as written: `__init__`, `**/*.rs`): what the app lists
/// as findings. Quoted lines are not the reviewer's and are not listed.
pub fn failed_check_lines(text: &str, kind: ReviewKind) -> Vec<String> {
    let prefix = check_prefix(kind);
    Reply::parse(text)
        .lines
        .iter()
        .filter(|l| matches!(l.origin, Origin::Own | Origin::Fenced(_)))
        .filter_map(|line| {
            let fails = |reading: &str| !read_line(reading, prefix).fail.is_empty();
            let shown = if fails(&strip_decoration(&fold_for_marks(&line.text))) {
                line.text.clone()
            } else if line.right_to_left && readings(line).iter().skip(1).any(|r| fails(r)) {
                line.text.chars().rev().collect()
            } else {
                return None;
            };
            Some(
                plain(&shown)
                    .trim_start_matches(['-', '#', '|', ' ', '\t'])
                    .trim()
                    .to_owned(),
            )
        })
        .collect()
}

/// Parses a reply for a kind (checks `P1`-`P8` for plans, `J1`-`J8` for commits).
///
/// Only the reviewer's own lines count (see [`crate::reply`]): a quoted line is never read,
/// and a fenced reply only when the whole of it (checks and verdict) is in one fence. Every
/// line is read after Unicode normalisation ([`crate::text`]).
///
/// `CLEAN` is valid only when the verdict line says so, every check of the checklist has a
/// PASS line, no check line is unclear, and nothing fails in any spelling (`P1 ❌`, `P1 = FAIL`,
/// `| P1 | FAIL |`, `Check P1: FAIL`, `P1 FAILURE`, `P1 NOT MET`, `ＦＡＩＬ`, reversed text, the
/// other checklist's ids, a FAIL naming no check). `FLAGS (n)` is valid when n is the number of
/// distinct failed checks.
pub fn parse_reply(text: &str, kind: ReviewKind) -> ParsedReply {
    let prefix = check_prefix(kind);
    let reply = Reply::parse(text);
    let lines = counted_lines(&reply);
    let body = &lines[..lines.len().saturating_sub(1)];
    let checks = read_checks(body, prefix);
    let fails = checks.failed.iter().filter(|f| **f).count() as u32;
    let verdict = lines.last().and_then(|l| parse_verdict(&l.text));
    let earlier_verdicts = body.iter().filter(|l| is_verdict(&l.text)).count();
    let broken = |reason: String| ParsedReply::Broken {
        reason,
        verdict,
        fails,
    };
    let Some(v) = verdict else {
        if reply.lines.iter().any(|l| is_verdict(&l.text)) {
            return broken(
                "the reply does not end with a VERDICT line of the reviewer's own (a quoted verdict, or a fenced one beside text of its own, is not the reviewer's)"
                    .into(),
            );
        }
        return broken("the reply does not end with a VERDICT line".into());
    };
    parse_counted(v, &checks, fails, earlier_verdicts, prefix, broken)
}

fn is_verdict(line: &str) -> bool {
    parse_verdict(line).is_some()
}

/// The files a cold review's reply says it reviewed: its own `REVIEWED` lines before the
/// verdict (or those in the one fence holding the whole reply), read as the loop's findings
/// block reads them ([`crate::findings::reviewed_in`]): never a quoted line, never a fenced
/// example beside the reviewer's own verdict, never a look-alike spelling.
pub fn reviewed_files(text: &str) -> Vec<crate::findings::Reviewed> {
    let reply = Reply::parse(text);
    let lines = counted_lines(&reply);
    let body = &lines[..lines.len().saturating_sub(1)];
    crate::findings::reviewed_in(body.iter().map(|l| l.text.as_str())).0
}

/// The reply's lines that count, non-empty, in order: the reviewer's own, plus the lines of
/// the one fence that holds its whole reply when no own line states a verdict.
fn counted_lines(reply: &Reply) -> Vec<&ReplyLine> {
    let own: Vec<&ReplyLine> = reply
        .own()
        .map(|(_, l)| l)
        .filter(|l| !l.text.trim().is_empty())
        .collect();
    let is_verdict = |l: &str| parse_verdict(l).is_some();
    let own_has_verdict = own.iter().any(|l| is_verdict(&l.text));
    let fence = (!own_has_verdict)
        .then(|| {
            reply.fenced_block(
                is_verdict,
                |l| !check_ids(&strip_decoration(&fold_for_marks(l))).is_empty(),
                None,
            )
        })
        .flatten();
    let lines: Vec<&ReplyLine> = match fence {
        Some(f) => own
            .iter()
            .copied()
            .chain(
                reply
                    .in_fence(f)
                    .map(|(_, l)| l)
                    .filter(|l| !l.text.trim().is_empty()),
            )
            .collect(),
        None => own,
    };
    lines
}

/// The verdict `v` of a reply with these checks, judged (see [`parse_reply`]).
fn parse_counted(
    v: Verdict,
    checks: &Checks,
    fails: u32,
    earlier_verdicts: usize,
    prefix: char,
    broken: impl Fn(String) -> ParsedReply,
) -> ParsedReply {
    if earlier_verdicts > 0 {
        return broken("the reply has more than one VERDICT line".into());
    }
    match v {
        Verdict::Clean => {
            let missing: Vec<String> = (1..=8)
                .filter(|n| !checks.passed[*n] && !checks.failed[*n])
                .map(|n| format!("{prefix}{n}"))
                .collect();
            if fails > 0 || checks.stray_fails > 0 {
                broken(format!(
                    "the verdict says CLEAN but the reply has {} FAIL line(s)",
                    fails + checks.stray_fails
                ))
            } else if checks.unclear > 0 {
                broken(format!(
                    "the verdict says CLEAN but {} check line(s) are no clear PASS",
                    checks.unclear
                ))
            } else if !missing.is_empty() {
                broken(format!(
                    "the verdict says CLEAN but the reply has no PASS line for {}",
                    missing.join(", ")
                ))
            } else {
                ParsedReply::Valid {
                    verdict: Verdict::Clean,
                    fails,
                }
            }
        }
        Verdict::Flags(n) if n > 0 && n == fails && checks.stray_fails == 0 => ParsedReply::Valid {
            verdict: Verdict::Flags(n),
            fails,
        },
        Verdict::Flags(_) => broken(format!(
            "the verdict says {} but the reply has {} FAIL line(s)",
            v.label(),
            fails + checks.stray_fails
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_pass_but(prefix: char, replaced: &[(u8, &str)]) -> String {
        (1..=8u8)
            .map(|n| {
                replaced
                    .iter()
                    .find(|(m, _)| *m == n)
                    .map(|(_, l)| format!("{l}\n"))
                    .unwrap_or_else(|| format!("{prefix}{n} PASS — looked for it; present.\n"))
            })
            .collect()
    }

    #[test]
    fn valid_replies() {
        let clean = all_pass_but(
            'P',
            &[(6, "P6 PASS — each risk names fail-open or fail-closed")],
        ) + "\nVERDICT: CLEAN\n";
        assert_eq!(
            parse_reply(&clean, ReviewKind::Plan),
            ParsedReply::Valid {
                verdict: Verdict::Clean,
                fails: 0
            }
        );
        let flags = "- **P1 FAIL** — \"Increments\": no files\n2. P3: FAIL — scope\n| P4 | FAIL | x |\nP5 PASS — looked for aliases, none\n**VERDICT: FLAGS (3)**";
        assert_eq!(
            parse_reply(flags, ReviewKind::Plan),
            ParsedReply::Valid {
                verdict: Verdict::Flags(3),
                fails: 3
            }
        );
        assert_eq!(
            parse_reply("J2 FAIL — no test\nVERDICT: FLAGS (1)", ReviewKind::Commit),
            ParsedReply::Valid {
                verdict: Verdict::Flags(1),
                fails: 1
            }
        );
        let commit = all_pass_but('J', &[]) + "VERDICT: CLEAN";
        assert!(matches!(
            parse_reply(&commit, ReviewKind::Commit),
            ParsedReply::Valid {
                verdict: Verdict::Clean,
                ..
            }
        ));
    }

    #[test]
    fn broken_replies() {
        for (text, why) in [
            ("P1 PASS", "no verdict"),
            ("VERDICT: CLEAN\nP1 FAIL — x", "verdict not last"),
            ("P1 FAIL — x\nVERDICT: CLEAN", "clean with a FAIL"),
            ("P1 FAIL — x\nVERDICT: FLAGS (2)", "count disagrees"),
            ("VERDICT: FLAGS (0)", "zero flags"),
            ("VERDICT: MAYBE", "unknown verdict"),
            ("", "empty"),
            ("J1 FAIL — x\nVERDICT: FLAGS (1)", "wrong prefix for plans"),
            ("P1 PASS\nVERDICT: CLEAN", "checks missing"),
            (
                "P1 FAIL\nVERDICT: FLAGS (1)\nP2 PASS\nVERDICT: CLEAN",
                "two verdicts",
            ),
        ] {
            assert!(
                matches!(
                    parse_reply(text, ReviewKind::Plan),
                    ParsedReply::Broken { .. }
                ),
                "{why}"
            );
        }
    }

    #[test]
    fn failed_check_lines_are_listed_without_decoration() {
        let text = "- **P1 FAIL** — no files\nP2 PASS — fine\n| P4 | FAIL | x |\nJ3 FAIL — other list\nP5 ❌ no tests\nVERDICT: FLAGS (3)";
        assert_eq!(
            failed_check_lines(text, ReviewKind::Plan),
            vec![
                "P1 FAIL — no files".to_owned(),
                "P4 | FAIL | x |".to_owned(),
                "P5 ❌ no tests".to_owned()
            ]
        );
        assert_eq!(
            failed_check_lines(text, ReviewKind::Commit),
            vec!["J3 FAIL — other list".to_owned()]
        );
    }

    #[test]
    fn p10_is_no_check_and_its_fail_is_not_ignored() {
        let text = all_pass_but('P', &[]) + "P10 FAIL — x\nVERDICT: CLEAN";
        assert!(matches!(
            parse_reply(&text, ReviewKind::Plan),
            ParsedReply::Broken { .. }
        ));
        let prose = all_pass_but('P', &[])
            + "The retry may fail under load, which the plan covers.\nVERDICT: CLEAN";
        assert!(matches!(
            parse_reply(&prose, ReviewKind::Plan),
            ParsedReply::Valid { .. }
        ));
    }
}
