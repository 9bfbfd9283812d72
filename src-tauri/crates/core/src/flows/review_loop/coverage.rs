//! Whether a reviewer's CLEAN covered the work: its `REVIEWED` lines against the files the
//! work changed (the round's fingerprint). A CLEAN that names no file, or leaves changed
//! files out, does not end the loop clean: the loop asks once (hidden) for what it left out,
//! and a CLEAN that still does not cover them stops the loop as `uncovered`, naming them.

use crosscheck_review::findings::{Reviewed, uncovered};

/// What the loop does with a CLEAN, as far as coverage goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// Every changed file is named (or, with the changed files unknown, some file is).
    Covered,
    /// Ask the reviewer once for these files (empty: it named none at all).
    Ask(Vec<String>),
    /// Asked before and still not covered: stop, with the English detail and the files.
    Uncovered(String, Vec<String>),
}

/// Judges a CLEAN's coverage. `reviewed`: what it names (with the reply before it, when that
/// one was asked for missing files); `changed`: the files the work changed, when known;
/// `asked`: whether the loop asked already.
pub fn after_clean(reviewed: &[Reviewed], changed: Option<&[String]>, asked: bool) -> Coverage {
    let missing = changed.map(|c| uncovered(c, reviewed)).unwrap_or_default();
    if !reviewed.is_empty() && missing.is_empty() {
        return Coverage::Covered;
    }
    if !asked {
        return Coverage::Ask(missing);
    }
    let detail = if reviewed.is_empty() {
        let mut d =
            "the reviewer said CLEAN but named no file it reviewed, even when asked".to_owned();
        if !missing.is_empty() {
            d.push_str(&format!("; not reviewed: {}", missing.join(", ")));
        }
        d
    } else {
        format!(
            "the reviewer said CLEAN but did not say it reviewed {} of {} changed files, even when asked: {}",
            missing.len(),
            changed.map_or(0, <[String]>::len),
            missing.join(", ")
        )
    };
    Coverage::Uncovered(detail, missing)
}

/// `a` and then the entries of `b` it lacks.
pub fn union(a: &[Reviewed], b: &[Reviewed]) -> Vec<Reviewed> {
    let mut out = a.to_vec();
    for r in b {
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<Reviewed> {
        paths
            .iter()
            .map(|p| Reviewed {
                path: (*p).to_owned(),
                lines: None,
            })
            .collect()
    }

    #[test]
    fn a_clean_naming_nothing_is_asked_about_once_then_uncovered() {
        let changed = vec!["src/lib.rs".to_owned(), "README.md".to_owned()];
        assert_eq!(
            after_clean(&[], Some(&changed), false),
            Coverage::Ask(changed.clone())
        );
        let Coverage::Uncovered(detail, missing) = after_clean(&[], Some(&changed), true) else {
            panic!("uncovered");
        };
        assert_eq!(missing, changed);
        assert!(detail.contains("named no file"), "{detail}");
        assert!(
            detail.contains("not reviewed: src/lib.rs, README.md"),
            "{detail}"
        );
        // With the changed files unknown, naming nothing is still no coverage.
        assert_eq!(after_clean(&[], None, false), Coverage::Ask(Vec::new()));
    }

    #[test]
    fn a_clean_that_leaves_a_file_out_names_it() {
        let changed = vec!["src/lib.rs".to_owned(), "src/main.rs".to_owned()];
        let got = after_clean(&files(&["src/lib.rs"]), Some(&changed), true);
        let Coverage::Uncovered(detail, missing) = got else {
            panic!("uncovered");
        };
        assert_eq!(missing, ["src/main.rs"]);
        assert!(detail.contains("1 of 2"), "{detail}");
        assert_eq!(
            after_clean(
                &files(&["src/lib.rs", "src/main.rs"]),
                Some(&changed),
                false
            ),
            Coverage::Covered
        );
    }
}
