//! Parsing the reviewer's reply: the verdict line and the FAIL lines.

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

/// A line without markdown emphasis and code marks (`*`, `_`, `` ` ``), trimmed.
pub(crate) fn strip_decoration(line: &str) -> String {
    line.chars()
        .filter(|c| !matches!(c, '*' | '_' | '`'))
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The verdict a line states (`VERDICT: CLEAN`, `VERDICT: FLAGS (n)`, any case and decoration).
pub(crate) fn parse_verdict(line: &str) -> Option<Verdict> {
    let line = strip_decoration(line);
    let line = line.trim_start_matches(['#', '>', '-', ' ']).trim();
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

/// Status marks: words (any case, whole words) and symbols.
fn mark_at(text: &str) -> Option<(usize, Mark)> {
    const FAIL_SYMBOLS: &[char] = &['❌', '✗', '✘', '✖', '⛔', '🔴', '🚫', '❎'];
    const PASS_SYMBOLS: &[char] = &['✅', '✓', '✔', '🟢', '☑'];
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
    let lower = text.to_ascii_lowercase();
    for (word, mark) in [
        ("fail", Mark::Fail),
        ("failed", Mark::Fail),
        ("fails", Mark::Fail),
        ("failing", Mark::Fail),
        ("pass", Mark::Pass),
        ("passed", Mark::Pass),
        ("passes", Mark::Pass),
    ] {
        if let Some(i) = find_word(&lower, word) {
            // "NOT PASS", "does not pass", "doesn't pass" are failures.
            let before = lower[..i].trim_end();
            let negated = ["not", "n't", "no", "never"]
                .iter()
                .any(|n| before.ends_with(n));
            consider(i, if negated { Mark::Fail } else { mark });
        }
    }
    best
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

/// What the check lines of a reply say.
#[derive(Debug, Default)]
struct Checks {
    failed: [bool; 9],
    passed: [bool; 9],
    /// A FAIL on the other checklist's id, or a FAIL mark on a line naming no check.
    stray_fails: u32,
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

fn read_checks(lines: &[&str], prefix: char) -> Checks {
    let mut checks = Checks::default();
    for line in lines {
        let line = strip_decoration(line);
        let marks = line_marks(&line);
        if check_ids(&line).is_empty() {
            // A line that names no check but carries a FAIL mark in capitals or a symbol
            // ("FAIL — Increment 2 …", "| Scope | ❌ |") is a failure too; prose ("may fail")
            // is not.
            if let Some((i, Mark::Fail)) = mark_at(&line)
                && (line[i..].starts_with("FAIL") || !line[i..].starts_with(['f', 'F']))
            {
                checks.stray_fails += 1;
            }
            continue;
        }
        for (letter, number, mark) in marks {
            match (letter == prefix, mark) {
                (true, Mark::Fail) => checks.failed[number as usize] = true,
                (true, Mark::Pass) => checks.passed[number as usize] = true,
                (false, Mark::Fail) => checks.stray_fails += 1,
                (false, Mark::Pass) => {}
            }
        }
    }
    checks
}

fn check_prefix(kind: ReviewKind) -> char {
    match kind {
        ReviewKind::Plan => 'P',
        ReviewKind::Commit => 'J',
    }
}

/// The lines of a reply that mark a check of `kind`'s checklist as FAIL, as the engine counts
/// them, without markdown decoration: what the app lists as findings.
pub fn failed_check_lines(text: &str, kind: ReviewKind) -> Vec<String> {
    let prefix = check_prefix(kind);
    text.lines()
        .map(strip_decoration)
        .filter(|line| {
            line_marks(line)
                .iter()
                .any(|(letter, _, mark)| *letter == prefix && *mark == Mark::Fail)
        })
        .map(|line| {
            line.trim_start_matches(['-', '#', '>', '|', ' ', '\t'])
                .trim()
                .to_owned()
        })
        .collect()
}

/// Parses a reply for a kind (checks `P1`-`P8` for plans, `J1`-`J8` for commits).
///
/// `CLEAN` is valid only when the verdict line says so, every check of the checklist has a
/// PASS line and nothing fails in any spelling (`P1 ❌`, `P1 = FAIL`, `| P1 | FAIL |`,
/// `Check P1: FAIL`, the other checklist's ids, a FAIL naming no check). `FLAGS (n)` is valid
/// when n is the number of distinct failed checks.
pub fn parse_reply(text: &str, kind: ReviewKind) -> ParsedReply {
    let prefix = check_prefix(kind);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let body = &lines[..lines.len().saturating_sub(1)];
    let checks = read_checks(body, prefix);
    let fails = checks.failed.iter().filter(|f| **f).count() as u32;
    let verdict = lines.last().and_then(|l| parse_verdict(l));
    let earlier_verdicts = body.iter().filter(|l| parse_verdict(l).is_some()).count();
    let broken = |reason: String| ParsedReply::Broken {
        reason,
        verdict,
        fails,
    };
    let Some(v) = verdict else {
        return broken("the reply does not end with a VERDICT line".into());
    };
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
