//! Evidence per finding: the lines around a finding's line, kept when a reviewer round is
//! recorded, and looked for again after an implementer's turn that claims the finding fixed.
//! "Claimed fixed, code unchanged" is so told per finding: an edit far away in the same file
//! does not count as a change to the finding's code.
//!
//! A finding's location is the reviewer's text, so it is untrusted: its path is read only
//! inside the session's folder (no `..`, an absolute path only when it lies inside the folder,
//! no symbolic link out of it), and only the files of the findings in question are read (one
//! read per file, no walk of the tree).

use std::collections::HashMap;

use rusqlite::params;

use crate::db::Db;
use crate::error::Result;
use crate::findings::{ClaimCheck, FindingsView, UnchangedLines};

/// Lines kept on either side of a finding's line (or range). Three: enough that the window's
/// text rarely repeats elsewhere in the file by chance (a lone `}` or a blank line would), few
/// enough that an edit to a neighbouring function does not count as a change to this finding.
pub const WINDOW_MARGIN: u32 = 3;

/// The longest line range of a finding judged by its lines; a longer one is judged by its
/// whole file (a window that large says little more than the file does).
pub const MAX_RANGE_LINES: u32 = 200;

/// The largest file judged by its lines: the check reads the whole file on the loop's step
/// from the implementer's reply to the reviewer's prompt, to find the window wherever it moved.
/// A larger file is judged by the per-file rule (its fingerprint hash).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The most text one window keeps (a minified file's long lines): beyond it, per file.
pub const MAX_WINDOW_BYTES: usize = 64 * 1024;

/// The windows of the newest recorded round of each link: one per open finding with a line.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS loop_finding_windows (
    review_session TEXT NOT NULL, id TEXT NOT NULL, round INTEGER NOT NULL, path TEXT NOT NULL,
    first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (review_session, id));";

/// Where a finding points: a path as the reviewer wrote it, and its lines when it names any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    /// The path, unchecked.
    pub path: String,
    /// First and last line (1-based, in order), when the location has a line or a range.
    pub lines: Option<(u32, u32)>,
}

/// Reads a finding's location: `path`, `path:12`, `path:12-18`, `path:L12`, `path:12:5` (a
/// column is ignored), in backticks or not. `None` without a path.
pub fn spot(location: &str) -> Option<Spot> {
    let location = location
        .trim()
        .trim_matches(|c| c == '`' || c == '"' || c == '\'');
    let (path, rest) = match location.split_once(':') {
        Some((p, r)) => (p, Some(r)),
        None => (location, None),
    };
    let path = path.trim();
    if path.is_empty() {
        return None;
    }
    let lines = rest.and_then(|rest| {
        let rest = rest.split(':').next().unwrap_or("");
        let (a, b) = match rest.split_once(['-', '–']) {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        let number = |s: &str| -> Option<u32> {
            s.trim()
                .trim_start_matches(['L', 'l'])
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
        };
        let first = number(a)?;
        let last = b.and_then(number).unwrap_or(first);
        Some((first.min(last), first.max(last)))
    });
    Some(Spot {
        path: path.to_owned(),
        lines,
    })
}

/// The lines around a finding as the last review saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The file, relative to the session's folder (checked: inside it).
    pub path: String,
    /// The window's first line (1-based).
    pub first_line: u32,
    /// Its last line.
    pub last_line: u32,
    /// Its lines, joined by `\n` (line ends dropped, so CRLF and LF read alike).
    pub text: String,
}

/// The file `path` inside `directory`, as (its path relative to the folder, its text); `None`
/// when the path leaves the folder (by `..`, as an absolute path elsewhere, or by a link), or
/// the file is gone, not a regular file, or larger than [`MAX_FILE_BYTES`].
pub(crate) fn read_inside(directory: &str, path: &str) -> Option<(String, String)> {
    let relative = crate::comments::relative_path(directory, path).ok()?;
    let root = std::fs::canonicalize(directory).ok()?;
    let file = std::fs::canonicalize(root.join(&relative)).ok()?;
    if !file.starts_with(&root) {
        return None;
    }
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    Some((relative, String::from_utf8_lossy(&bytes).into_owned()))
}

/// The window of lines `first..=last` (1-based) plus [`WINDOW_MARGIN`] on either side in
/// `text`; `None` when the lines are not in the file or the window is too large.
pub fn window_in(text: &str, path: &str, first: u32, last: u32) -> Option<Window> {
    if first == 0 || last < first || last - first >= MAX_RANGE_LINES {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let count = u32::try_from(lines.len()).ok()?;
    if first > count {
        return None;
    }
    let from = first.saturating_sub(WINDOW_MARGIN).max(1);
    let to = last.saturating_add(WINDOW_MARGIN).min(count);
    let text = lines[(from - 1) as usize..to as usize].join("\n");
    (text.len() <= MAX_WINDOW_BYTES).then(|| Window {
        path: path.to_owned(),
        first_line: from,
        last_line: to,
        text,
    })
}

/// Where the window's lines are in `text` now: the first line of the exact match nearest to
/// the window's old place, searched through the whole file; `None` when they are nowhere.
///
/// Lines added or removed above a finding move its lines without changing them, so the old
/// place alone would call an untouched finding changed. Its window (the finding's lines and
/// [`WINDOW_MARGIN`] around them) rarely repeats by chance, so its text found anywhere means
/// the claimed fix did not touch it; a false "unchanged" only asks the reviewer to look at the
/// code again, while a false "changed" would let an empty claim pass unremarked.
pub fn find(window: &Window, text: &str) -> Option<u32> {
    let want: Vec<&str> = window.text.split('\n').collect();
    let lines: Vec<&str> = text.lines().collect();
    if want.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - want.len();
    let old = ((window.first_line as usize).saturating_sub(1)).min(last_start);
    let matches = |start: usize| lines[start..start + want.len()] == want[..];
    for distance in 0..=last_start.max(old) {
        if let Some(start) = old.checked_add(distance).filter(|s| *s <= last_start)
            && matches(start)
        {
            return u32::try_from(start + 1).ok();
        }
        if let Some(start) = old.checked_sub(distance).filter(|_| distance > 0)
            && matches(start)
        {
            return u32::try_from(start + 1).ok();
        }
    }
    None
}

/// How a claimed fix left a window, given the file's text now (`None`: the file is gone or
/// cannot be read inside the folder, which counts as a change).
pub fn judge(window: &Window, now: Option<&str>) -> ClaimCheck {
    match now.and_then(|text| find(window, text)) {
        Some(at) => ClaimCheck::Unchanged(Some(UnchangedLines {
            path: window.path.clone(),
            first_line: window.first_line,
            last_line: window.last_line,
            now_first_line: (at != window.first_line).then_some(at),
        })),
        None => ClaimCheck::Changed,
    }
}

/// The windows of the open findings of `view` that have a line, read from `directory` (each
/// file once); a finding whose file or lines cannot be read is left out (judged per file).
pub fn windows_of_open(directory: &str, view: &FindingsView) -> Vec<(String, Window)> {
    let mut files: HashMap<String, Option<(String, String)>> = HashMap::new();
    let mut out = Vec::new();
    for f in view.open() {
        let Some(Spot {
            path,
            lines: Some((first, last)),
        }) = f.location.as_deref().and_then(spot)
        else {
            continue;
        };
        let read = files
            .entry(path.clone())
            .or_insert_with(|| read_inside(directory, &path));
        if let Some((relative, text)) = read
            && let Some(window) = window_in(text, relative, first, last)
        {
            out.push((f.id.clone(), window));
        }
    }
    out
}

/// Keeps `windows` as the link's windows of round `round`, replacing the round before's (a
/// finding no longer open, or whose lines could not be read this round, has none).
pub fn save(db: &Db, review_session: &str, round: u32, windows: &[(String, Window)]) -> Result<()> {
    db.with(|c| {
        let tx = crate::db::Tx::begin(c)?;
        tx.execute(
            "DELETE FROM loop_finding_windows WHERE review_session = ?1",
            [review_session],
        )?;
        for (id, w) in windows {
            tx.execute(
                "INSERT INTO loop_finding_windows (review_session, id, round, path, first_line, last_line, text)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![review_session, id, round, w.path, w.first_line, w.last_line, w.text],
            )?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// The kept windows of these findings of the link.
pub fn load(db: &Db, review_session: &str, ids: &[String]) -> Result<Vec<(String, Window)>> {
    db.with(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT path, first_line, last_line, text FROM loop_finding_windows
             WHERE review_session = ?1 AND id = ?2",
        )?;
        let mut out = Vec::new();
        for id in ids {
            let row = rusqlite::OptionalExtension::optional(stmt.query_row(
                params![review_session, id],
                |r| {
                    Ok(Window {
                        path: r.get(0)?,
                        first_line: r.get(1)?,
                        last_line: r.get(2)?,
                        text: r.get(3)?,
                    })
                },
            ))?;
            if let Some(window) = row {
                out.push((id.clone(), window));
            }
        }
        Ok(out)
    })
}

/// Judges the FIXED claims of `claimed` that have a kept window against the files in
/// `directory` now (each file read once, only those files); a claim without a window is not
/// in the answer and is judged per file.
pub fn judge_claims(
    db: &Db,
    review_session: &str,
    directory: &str,
    claimed: &[String],
) -> Result<HashMap<String, ClaimCheck>> {
    if claimed.is_empty() {
        return Ok(HashMap::new());
    }
    let windows = load(db, review_session, claimed)?;
    let mut files: HashMap<String, Option<String>> = HashMap::new();
    let mut out = HashMap::new();
    for (id, window) in windows {
        let now = files
            .entry(window.path.clone())
            .or_insert_with(|| read_inside(directory, &window.path).map(|(_, text)| text));
        out.insert(id, judge(&window, now.as_deref()));
    }
    Ok(out)
}

/// A claimed-unchanged finding in the reviewer's words: "F2: claimed fixed, but lines 8-14 of
/// src/greet.rs are unchanged". The location is the reviewer's own text, shortened.
pub fn note_line(claim: &crate::findings::UnchangedClaim) -> String {
    let id = &claim.id;
    match (&claim.lines, claim.location.as_deref().and_then(spot)) {
        (Some(l), _) => {
            let lines = if l.first_line == l.last_line {
                format!("line {} of {} is", l.first_line, l.path)
            } else {
                format!("lines {}-{} of {} are", l.first_line, l.last_line, l.path)
            };
            match l.now_first_line {
                Some(now) => format!(
                    "{id}: claimed fixed, but {lines} unchanged (now lines {now}-{})",
                    now + (l.last_line - l.first_line)
                ),
                None => format!("{id}: claimed fixed, but {lines} unchanged"),
            }
        }
        (None, Some(spot)) => {
            let path: String = spot
                .path
                .chars()
                .filter(|c| !c.is_control())
                .take(200)
                .collect();
            format!("{id}: claimed fixed, but {path} did not change")
        }
        (None, None) => format!("{id}: claimed fixed, but no file changed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{FindingView, UnchangedClaim};
    use crosscheck_review::findings::{FindingStatus, Severity};

    /// 40 lines, `line 1` to `line 40`, each ending in `end`.
    fn source(end: &str) -> String {
        (1..=40).map(|i| format!("line {i}{end}")).collect()
    }

    fn replace_line(text: &str, n: usize, with: &str) -> String {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == n {
                    format!("{with}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    }

    fn finding(id: &str, location: Option<&str>, status: FindingStatus) -> FindingView {
        FindingView {
            id: id.into(),
            severity: Severity::Major,
            location: location.map(str::to_owned),
            title: "t".into(),
            detail: None,
            status,
            first_round: 1,
            message_id: "msg_1".into(),
            claimed_unchanged: false,
            unchanged_lines: None,
            history: Vec::new(),
        }
    }

    fn view(findings: Vec<FindingView>) -> FindingsView {
        FindingsView {
            review_session_id: "ses_r".into(),
            original_session_id: None,
            findings,
            rounds: Vec::new(),
        }
    }

    /// The folder with `src/lib.rs` holding `text`, and the window of a finding at line 10.
    fn kept(text: &str) -> (tempfile::TempDir, String, Window) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/lib.rs"), text).expect("write");
        let root = dir.path().to_str().expect("utf-8").to_owned();
        let v = view(vec![finding(
            "F1",
            Some("src/lib.rs:10"),
            FindingStatus::Open,
        )]);
        let mut windows = windows_of_open(&root, &v);
        assert_eq!(windows.len(), 1, "the finding's window is kept");
        let (_, window) = windows.remove(0);
        (dir, root, window)
    }

    fn now(root: &str, window: &Window) -> ClaimCheck {
        judge(
            window,
            read_inside(root, &window.path).map(|(_, t)| t).as_deref(),
        )
    }

    fn unchanged(first: u32, last: u32, now_first: Option<u32>) -> ClaimCheck {
        ClaimCheck::Unchanged(Some(UnchangedLines {
            path: "src/lib.rs".into(),
            first_line: first,
            last_line: last,
            now_first_line: now_first,
        }))
    }

    #[test]
    fn a_location_is_read_with_its_lines() {
        let at = |p: &str, l: Option<(u32, u32)>| {
            Some(Spot {
                path: p.into(),
                lines: l,
            })
        };
        assert_eq!(spot("src/a.rs:12"), at("src/a.rs", Some((12, 12))));
        assert_eq!(spot("src/a.rs:12-18"), at("src/a.rs", Some((12, 18))));
        assert_eq!(spot("src/a.rs:18-12"), at("src/a.rs", Some((12, 18))));
        assert_eq!(spot("`src/a.rs:L12`"), at("src/a.rs", Some((12, 12))));
        assert_eq!(spot("src/a.rs:12:5"), at("src/a.rs", Some((12, 12))));
        assert_eq!(spot("src/a.rs"), at("src/a.rs", None));
        assert_eq!(spot("src/a.rs:0"), at("src/a.rs", None));
        assert_eq!(spot("src/a.rs:abc"), at("src/a.rs", None));
        assert_eq!(spot(":12"), None);
    }

    #[test]
    fn the_window_is_the_line_and_three_either_side_clamped_to_the_file() {
        let text = source("\n");
        let w = window_in(&text, "a", 10, 10).expect("a window");
        assert_eq!((w.first_line, w.last_line), (7, 13));
        assert_eq!(
            w.text,
            "line 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13"
        );
        let w = window_in(&text, "a", 2, 5).expect("a range");
        assert_eq!((w.first_line, w.last_line), (1, 8));
        let w = window_in(&text, "a", 39, 40).expect("at the end");
        assert_eq!((w.first_line, w.last_line), (36, 40));
        assert!(
            window_in(&text, "a", 41, 41).is_none(),
            "a line past the end"
        );
        assert!(window_in(&text, "a", 0, 3).is_none());
        assert!(
            window_in(&text, "a", 1, 1 + MAX_RANGE_LINES).is_none(),
            "a range too long"
        );
    }

    #[test]
    fn an_edit_far_away_in_the_same_file_leaves_the_finding_unchanged() {
        let (dir, root, window) = kept(&source("\n"));
        std::fs::write(
            dir.path().join("src/lib.rs"),
            replace_line(&source("\n"), 30, "changed"),
        )
        .expect("edit");
        assert_eq!(now(&root, &window), unchanged(7, 13, None));
    }

    #[test]
    fn an_edit_inside_the_window_is_a_change() {
        for n in [7, 10, 13] {
            let (dir, root, window) = kept(&source("\n"));
            std::fs::write(
                dir.path().join("src/lib.rs"),
                replace_line(&source("\n"), n, "x"),
            )
            .expect("edit");
            assert_eq!(now(&root, &window), ClaimCheck::Changed, "line {n} edited");
        }
    }

    #[test]
    fn lines_inserted_or_removed_above_move_the_finding_without_changing_it() {
        let (dir, root, window) = kept(&source("\n"));
        let file = dir.path().join("src/lib.rs");
        std::fs::write(&file, format!("a\nb\n{}", source("\n"))).expect("insert");
        assert_eq!(now(&root, &window), unchanged(7, 13, Some(9)));
        let removed: String = source("\n")
            .lines()
            .skip(3)
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&file, removed).expect("remove");
        assert_eq!(now(&root, &window), unchanged(7, 13, Some(4)));
    }

    #[test]
    fn the_nearest_copy_of_the_window_is_the_one_found() {
        let w = Window {
            path: "a".into(),
            first_line: 5,
            last_line: 5,
            text: "x".into(),
        };
        assert_eq!(find(&w, "x\n\n\n\n\n\nx\n"), Some(7));
        assert_eq!(find(&w, "x\n\n\n\n\n\n\n\n\n\n\nx\n"), Some(1));
        assert_eq!(find(&w, "y\n"), None);
    }

    #[test]
    fn a_deleted_file_or_a_window_gone_is_a_change() {
        let (dir, root, window) = kept(&source("\n"));
        std::fs::remove_file(dir.path().join("src/lib.rs")).expect("delete");
        assert_eq!(now(&root, &window), ClaimCheck::Changed);
        std::fs::write(dir.path().join("src/lib.rs"), "fn other() {}\n").expect("rewrite");
        assert_eq!(now(&root, &window), ClaimCheck::Changed);
    }

    #[test]
    fn crlf_and_a_missing_final_newline_read_as_the_same_lines() {
        let crlf = source("\r\n");
        let (dir, root, window) = kept(&crlf);
        assert!(!window.text.contains('\r'), "line ends are not kept");
        let edited = crlf.replace("line 30\r\n", "changed\r\n");
        std::fs::write(dir.path().join("src/lib.rs"), edited).expect("edit");
        assert_eq!(now(&root, &window), unchanged(7, 13, None));

        // The finding on the last lines of a file without a final newline.
        let bare = source("\n").trim_end().to_owned();
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.rs"), &bare).expect("write");
        let root = dir.path().to_str().expect("utf-8");
        let v = view(vec![finding("F1", Some("a.rs:40"), FindingStatus::Open)]);
        let (_, w) = windows_of_open(root, &v).remove(0);
        assert_eq!((w.first_line, w.last_line), (37, 40));
        std::fs::write(dir.path().join("a.rs"), format!("{bare}\nfn more() {{}}")).expect("append");
        let read = read_inside(root, "a.rs").map(|(_, t)| t);
        assert!(matches!(
            judge(&w, read.as_deref()),
            ClaimCheck::Unchanged(Some(_))
        ));
        std::fs::write(dir.path().join("a.rs"), bare.replace("line 40", "line 40;")).expect("edit");
        let read = read_inside(root, "a.rs").map(|(_, t)| t);
        assert_eq!(judge(&w, read.as_deref()), ClaimCheck::Changed);
    }

    #[test]
    fn a_large_file_is_judged_by_its_lines_and_a_huge_one_by_the_whole_file() {
        // 100 000 lines (under the limit): the window is found after an edit far away.
        let big: String = (1..=100_000)
            .map(|i| format!("let v{i} = {i};\n"))
            .collect();
        assert!((big.len() as u64) < MAX_FILE_BYTES);
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_str().expect("utf-8");
        std::fs::write(dir.path().join("big.rs"), &big).expect("write");
        let v = view(vec![finding(
            "F1",
            Some("big.rs:99000"),
            FindingStatus::Open,
        )]);
        let (_, w) = windows_of_open(root, &v).remove(0);
        std::fs::write(
            dir.path().join("big.rs"),
            big.replace("let v5 = 5;", "let v5 = 6;"),
        )
        .expect("edit");
        let read = read_inside(root, "big.rs").map(|(_, t)| t);
        assert!(matches!(
            judge(&w, read.as_deref()),
            ClaimCheck::Unchanged(Some(_))
        ));

        // Over the limit: no window is kept (the per-file rule judges it), nothing is read.
        let huge = "x\n".repeat((MAX_FILE_BYTES / 2 + 1) as usize);
        std::fs::write(dir.path().join("huge.txt"), huge).expect("write");
        assert!(read_inside(root, "huge.txt").is_none());
        let v = view(vec![finding("F1", Some("huge.txt:3"), FindingStatus::Open)]);
        assert!(windows_of_open(root, &v).is_empty());
    }

    #[test]
    fn a_hostile_path_never_reads_outside_the_folder() {
        let outer = tempfile::tempdir().expect("tempdir");
        let root_dir = outer.path().join("repo");
        std::fs::create_dir_all(root_dir.join("src")).expect("mkdir");
        std::fs::write(outer.path().join("secret.txt"), source("\n")).expect("secret");
        std::fs::write(root_dir.join("src/lib.rs"), source("\n")).expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(outer.path().join("secret.txt"), root_dir.join("link.txt"))
            .expect("symlink");
        let root = root_dir.to_str().expect("utf-8");
        let secret = outer.path().join("secret.txt");
        let absolute_outside = format!("{}:3", secret.display());
        let absolute_inside = format!("{}:10", root_dir.join("src/lib.rs").display());
        for location in [
            "../secret.txt:3",
            "../../etc/passwd:1",
            "/etc/passwd:1",
            absolute_outside.as_str(),
            "src/../../secret.txt:3",
            "link.txt:3",
        ] {
            let v = view(vec![finding("F1", Some(location), FindingStatus::Open)]);
            assert!(windows_of_open(root, &v).is_empty(), "{location} was read");
            let path = spot(location).expect("a path").path;
            assert!(read_inside(root, &path).is_none(), "{location} was read");
        }
        // An absolute path inside the folder is the file it names, kept by its relative path.
        let v = view(vec![finding(
            "F1",
            Some(&absolute_inside),
            FindingStatus::Open,
        )]);
        let (_, w) = windows_of_open(root, &v).remove(0);
        assert_eq!(w.path, "src/lib.rs");
        // A window stored with a hostile path (a database edited by hand) reads nothing either.
        let hostile = Window {
            path: "../secret.txt".into(),
            first_line: 1,
            last_line: 4,
            text: "line 1\nline 2\nline 3\nline 4".into(),
        };
        let read = read_inside(root, &hostile.path).map(|(_, t)| t);
        assert_eq!(judge(&hostile, read.as_deref()), ClaimCheck::Changed);
    }

    #[test]
    fn only_open_findings_with_a_line_keep_a_window() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.rs"), source("\n")).expect("write");
        let root = dir.path().to_str().expect("utf-8");
        let v = view(vec![
            finding("F1", Some("a.rs:5"), FindingStatus::Open),
            finding("F2", Some("a.rs"), FindingStatus::Open),
            finding("F3", None, FindingStatus::Open),
            finding("F4", Some("a.rs:9"), FindingStatus::Fixed),
            finding("F5", Some("a.rs:20-22"), FindingStatus::Disputed),
        ]);
        let ids: Vec<String> = windows_of_open(root, &v)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, ["F1", "F5"]);
    }

    #[test]
    fn windows_are_kept_per_link_and_replaced_by_the_next_round() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(&dir.path().join("c.db")).expect("db");
        let w = |first: u32| Window {
            path: "src/a.rs".into(),
            first_line: first,
            last_line: first + 6,
            text: "x".into(),
        };
        save(&db, "ses_r", 1, &[("F1".into(), w(1)), ("F2".into(), w(5))]).expect("save");
        save(&db, "ses_other", 1, &[("F1".into(), w(9))]).expect("save other");
        let ids = ["F1".to_owned(), "F2".to_owned(), "F3".to_owned()];
        assert_eq!(
            load(&db, "ses_r", &ids).expect("load"),
            [("F1".into(), w(1)), ("F2".into(), w(5))]
        );
        save(&db, "ses_r", 2, &[("F2".into(), w(6))]).expect("round 2");
        assert_eq!(
            load(&db, "ses_r", &ids).expect("load"),
            [("F2".into(), w(6))]
        );
        assert_eq!(
            load(&db, "ses_other", &ids).expect("load"),
            [("F1".into(), w(9))]
        );
    }

    #[test]
    fn the_note_names_each_finding_with_its_lines_or_its_file() {
        let claim =
            |id: &str, location: Option<&str>, lines: Option<UnchangedLines>| UnchangedClaim {
                id: id.into(),
                location: location.map(str::to_owned),
                lines,
            };
        let lines = |now: Option<u32>| UnchangedLines {
            path: "src/greet.rs".into(),
            first_line: 8,
            last_line: 14,
            now_first_line: now,
        };
        assert_eq!(
            note_line(&claim("F2", Some("src/greet.rs:11"), Some(lines(None)))),
            "F2: claimed fixed, but lines 8-14 of src/greet.rs are unchanged"
        );
        assert_eq!(
            note_line(&claim("F2", Some("src/greet.rs:11"), Some(lines(Some(10))))),
            "F2: claimed fixed, but lines 8-14 of src/greet.rs are unchanged (now lines 10-16)"
        );
        assert_eq!(
            note_line(&claim("F3", Some("src/x.rs"), None)),
            "F3: claimed fixed, but src/x.rs did not change"
        );
        assert_eq!(
            note_line(&claim("F4", None, None)),
            "F4: claimed fixed, but no file changed"
        );
    }
}
