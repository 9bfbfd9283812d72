//! A reply's text as the parsers read it: Unicode normalised (so that `ＦＡＩＬ`, `FA<U+200B>IL` with a
//! zero-width space or a bidi-wrapped `FAIL` read as `FAIL`), and markdown emphasis removed
//! without touching the words (`__init__` and `a * b` stay as written).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Characters that show nothing or only steer the display: zero-width spaces and joiners, the
/// word joiner, the byte-order mark, the soft hyphen, and every bidi control.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
    )
}

/// Whether `c` makes what follows display right to left (an override, embedding, isolate or
/// mark): a line holding one may show its characters in reverse order.
pub(crate) fn is_right_to_left_control(c: char) -> bool {
    matches!(
        c,
        '\u{200F}' | '\u{061C}' | '\u{202B}' | '\u{202E}' | '\u{2067}'
    )
}

/// The text in compatibility form (NFKC: full-width and mathematical letters folded to plain
/// ones) without invisible characters. Every parser of a reply starts from this.
pub fn normalize(text: &str) -> String {
    if text.is_ascii() {
        // ASCII is its own NFKC form and has no invisible character.
        return text.to_owned();
    }
    text.chars()
        .filter(|c| !is_invisible(*c))
        .nfkc()
        .filter(|c| !is_invisible(*c))
        .collect()
}

/// Latin look-alikes from Cyrillic and Greek that could spell a status word.
fn latin_look_alike(c: char) -> char {
    match c {
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' | 'Ϲ' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' | 'Ӏ' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Ν' => 'N',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'а' => 'a',
        'е' => 'e',
        'і' => 'i',
        'ј' => 'j',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'с' => 'c',
        'ѕ' => 's',
        'х' => 'x',
        'ӏ' => 'l',
        _ => c,
    }
}

/// A normalised line folded further for finding status words and marks only (never shown):
/// accents and other combining marks dropped, Cyrillic and Greek look-alikes read as Latin.
pub(crate) fn fold_for_marks(line: &str) -> String {
    if line.is_ascii() {
        return line.to_owned();
    }
    line.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .map(latin_look_alike)
        .collect()
}

/// Whether a run of emphasis marks at byte `at` (of `len` bytes) can open: a character follows
/// it that is not white space, and none that is a letter or digit comes right before it.
fn can_open(text: &str, at: usize, len: usize) -> bool {
    let next = text[at + len..].chars().next();
    let prev = text[..at].chars().next_back();
    next.is_some_and(|c| !c.is_whitespace()) && prev.is_none_or(|c| !c.is_alphanumeric())
}

/// Whether a run of emphasis marks at byte `at` can close: a character that is not white space
/// comes right before it, and none that is a letter or digit follows it.
fn can_close(text: &str, at: usize, len: usize) -> bool {
    let next = text[at + len..].chars().next();
    let prev = text[..at].chars().next_back();
    prev.is_some_and(|c| !c.is_whitespace()) && next.is_none_or(|c| !c.is_alphanumeric())
}

/// Removes `*` emphasis from text outside code spans: a run of one to three `*` that opens,
/// paired with the next run of the same length that closes. Unpaired stars stay (`a * b`,
/// `**/*.rs`); underscores always stay (`__init__`, `my_file.rs`).
fn drop_star_emphasis(text: &str) -> String {
    let runs: Vec<(usize, usize)> = {
        let mut out = Vec::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'*' {
                let start = i;
                while i < bytes.len() && bytes[i] == b'*' {
                    i += 1;
                }
                out.push((start, i - start));
            } else {
                i += 1;
            }
        }
        out
    };
    let mut removed = vec![false; runs.len()];
    let mut n = 0;
    while n < runs.len() {
        let (at, len) = runs[n];
        if len <= 3 && can_open(text, at, len) {
            let closer = (n + 1..runs.len()).find(|&m| {
                let (c_at, c_len) = runs[m];
                !removed[m] && c_len == len && can_close(text, c_at, c_len)
            });
            if let Some(m) = closer {
                removed[n] = true;
                removed[m] = true;
                n = m + 1;
                continue;
            }
        }
        n += 1;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for ((at, len), gone) in runs.iter().zip(&removed) {
        if *gone {
            out.push_str(&text[last..*at]);
            last = at + len;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A line without markdown decoration, as a person reads it: code marks removed with their
/// content kept verbatim, `*` emphasis removed where it pairs; every other character kept.
pub fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].bytes().take_while(|b| *b == b'`').count();
        let fence = &rest[open..open + ticks];
        let after = &rest[open + ticks..];
        out.push_str(&drop_star_emphasis(&rest[..open]));
        match after.find(fence) {
            Some(close) => {
                out.push_str(&after[..close]);
                rest = &after[close + ticks..];
            }
            None => {
                // An unclosed code mark is dropped; what follows is plain text.
                rest = after;
            }
        }
    }
    out.push_str(&drop_star_emphasis(rest));
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_width_and_drops_invisibles() {
        assert_eq!(normalize("ＦＡＩＬ"), "FAIL");
        assert_eq!(normalize("FA\u{200B}IL"), "FAIL");
        assert_eq!(normalize("\u{2066}FAIL\u{2069}"), "FAIL");
        assert_eq!(normalize("𝐅𝐀𝐈𝐋"), "FAIL");
        assert_eq!(normalize("Grüße"), "Grüße");
        assert_eq!(fold_for_marks("FАIL"), "FAIL");
    }

    #[test]
    fn plain_keeps_words_and_drops_emphasis() {
        for (from, to) in [
            (
                "**[F1] blocker** `src/main.rs:10` — x",
                "[F1] blocker src/main.rs:10 — x",
            ),
            ("__init__ is empty", "__init__ is empty"),
            ("`__init__` and `**/*.rs`", "__init__ and **/*.rs"),
            ("a * b and 2*3", "a * b and 2*3"),
            ("*[F1]* major — *really* bad", "[F1] major — really bad"),
            ("the glob **/*.rs skips it", "the glob **/*.rs skips it"),
            ("**__init__ is empty**", "__init__ is empty"),
            ("`unclosed code", "unclosed code"),
        ] {
            assert_eq!(plain(from), to, "{from}");
        }
    }
}
