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

fn strip_decoration(line: &str) -> String {
    line.chars()
        .filter(|c| !matches!(c, '*' | '_' | '`'))
        .collect::<String>()
        .trim()
        .to_owned()
}

fn parse_verdict(line: &str) -> Option<Verdict> {
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

/// The check number (1-8) a line marks as FAIL, if it does.
fn failed_check(line: &str, prefix: char) -> Option<u8> {
    let line = strip_decoration(line);
    let mut s = line.trim_start_matches(['-', '#', '>', '|', ' ', '\t']);
    // "1. P1 FAIL" / "1) P1 FAIL"
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && s[digits..].starts_with(['.', ')']) {
        s = s[digits + 1..].trim_start();
    }
    let mut chars = s.chars();
    if !chars.next()?.eq_ignore_ascii_case(&prefix) {
        return None;
    }
    let n = chars.next()?.to_digit(10)?;
    if !(1..=8).contains(&n) {
        return None;
    }
    let rest = chars.as_str();
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '—' | '–' | '-' | '|' | '.' | '(' | ')' | '[' | ']')
    });
    let word = rest.get(..4)?;
    word.eq_ignore_ascii_case("fail").then_some(n as u8)
}

/// The lines of a reply that mark a check of `kind`'s checklist as FAIL, as the engine counts
/// them, without markdown decoration: what the app lists as findings.
pub fn failed_check_lines(text: &str, kind: ReviewKind) -> Vec<String> {
    let prefix = check_prefix(kind);
    text.lines()
        .filter(|line| failed_check(line, prefix).is_some())
        .map(|line| {
            strip_decoration(line)
                .trim_start_matches(['-', '#', '>', '|', ' ', '\t'])
                .trim()
                .to_owned()
        })
        .collect()
}

fn check_prefix(kind: ReviewKind) -> char {
    match kind {
        ReviewKind::Plan => 'P',
        ReviewKind::Commit => 'J',
    }
}

/// Parses a reply for a kind (FAIL lines are `P<n> FAIL` for plans, `J<n> FAIL` for commits).
pub fn parse_reply(text: &str, kind: ReviewKind) -> ParsedReply {
    let prefix = check_prefix(kind);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut failed = [false; 9];
    for line in lines.iter().take(lines.len().saturating_sub(1)) {
        if let Some(n) = failed_check(line, prefix) {
            failed[n as usize] = true;
        }
    }
    let fails = failed.iter().filter(|f| **f).count() as u32;
    let verdict = lines.last().and_then(|l| parse_verdict(l));
    match verdict {
        None => ParsedReply::Broken {
            reason: "the reply does not end with a VERDICT line".into(),
            verdict: None,
            fails,
        },
        Some(Verdict::Clean) if fails == 0 => ParsedReply::Valid {
            verdict: Verdict::Clean,
            fails,
        },
        Some(Verdict::Flags(n)) if n > 0 && n == fails => ParsedReply::Valid {
            verdict: Verdict::Flags(n),
            fails,
        },
        Some(v) => ParsedReply::Broken {
            reason: format!(
                "the verdict says {} but the reply has {fails} FAIL line(s)",
                v.label()
            ),
            verdict: Some(v),
            fails,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_replies() {
        let clean = "P1 PASS — files named\nP2 PASS — x\n\nVERDICT: CLEAN\n";
        assert_eq!(
            parse_reply(clean, ReviewKind::Plan),
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
        let text = "- **P1 FAIL** — no files\nP2 PASS — fine\n| P4 | FAIL | x |\nJ3 FAIL — other list\nVERDICT: FLAGS (2)";
        assert_eq!(
            failed_check_lines(text, ReviewKind::Plan),
            vec![
                "P1 FAIL — no files".to_owned(),
                "P4 | FAIL | x |".to_owned()
            ]
        );
        assert_eq!(
            failed_check_lines(text, ReviewKind::Commit),
            vec!["J3 FAIL — other list".to_owned()]
        );
    }

    #[test]
    fn p10_and_pass_lines_are_not_fails() {
        let text = "P10 FAIL — x\nP1 PASS — not a FAIL\nVERDICT: CLEAN";
        assert!(matches!(
            parse_reply(text, ReviewKind::Plan),
            ParsedReply::Valid { .. }
        ));
    }
}
