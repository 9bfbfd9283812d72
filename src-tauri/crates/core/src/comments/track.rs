//! Whether a comment's lines are still there as quoted: a sent comment whose lines changed is
//! addressed; one whose lines are gone (or a draft whose lines changed under it) is outdated.
//! The file is read from the session's folder, never outside it.

use std::path::{Component, Path, PathBuf};

use super::{CommentStatus, LineComment};
use crate::api_types::Change;
use crate::core::Core;
use crate::error::{Error, Result};

/// The largest file whose lines are compared; a larger one reads as gone.
const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// `path` as a path relative to `directory`: an absolute path must lie inside it, and no path
/// may climb out of it.
pub(crate) fn relative_path(directory: &str, path: &str) -> Result<String> {
    let refused =
        || Error::InvalidRequest(format!("{path} is not a file inside the session's folder"));
    let raw = Path::new(path);
    let rel: PathBuf = if raw.is_absolute() {
        raw.strip_prefix(directory).map_err(|_| refused())?.into()
    } else {
        raw.into()
    };
    let mut clean = Vec::new();
    for part in rel.components() {
        match part {
            Component::Normal(p) => clean.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return Err(refused()),
        }
    }
    if clean.is_empty() {
        return Err(refused());
    }
    Ok(clean.join("/"))
}

/// The lines `start..=end` (1-based) of `path` in `directory` now, joined by newlines; `None`
/// when the file, or those lines, are gone (or the file leaves the folder by a link).
pub(crate) fn lines_now(directory: &str, path: &str, start: u32, end: u32) -> Option<String> {
    let root = std::fs::canonicalize(directory).ok()?;
    let file = std::fs::canonicalize(root.join(path)).ok()?;
    if !file.starts_with(&root) {
        return None;
    }
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let (first, last) = (start as usize, end as usize);
    if first == 0 || last > lines.len() {
        return None;
    }
    Some(lines[first - 1..last].join("\n"))
}

fn same(a: &str, b: &str) -> bool {
    a.lines()
        .map(str::trim_end)
        .eq(b.lines().map(str::trim_end))
}

/// What a live comment is now, given its lines now.
pub(crate) fn judge(comment: &LineComment, now: Option<&str>) -> CommentStatus {
    match (comment.status, now) {
        (status, _) if !status.is_live() => status,
        (_, None) => CommentStatus::Outdated,
        (status, Some(lines)) if same(lines, &comment.quote) => status,
        (CommentStatus::Open, Some(_)) => CommentStatus::Addressed,
        (_, Some(_)) => CommentStatus::Outdated,
    }
}

/// Checks the session's live comments against its folder, records what changed (pushing a
/// `Comments` change when anything did) and answers every comment of the session.
pub(crate) async fn refresh(core: &Core, session_id: &str) -> Result<Vec<LineComment>> {
    let comments = super::list(core.db(), session_id)?;
    if !comments.iter().any(|c| c.status.is_live()) {
        return Ok(comments);
    }
    let directory = core.known_session(session_id).await?.directory;
    let live: Vec<LineComment> = comments
        .iter()
        .filter(|c| c.status.is_live())
        .cloned()
        .collect();
    let judged = tokio::task::spawn_blocking(move || {
        live.into_iter()
            .map(|c| {
                let now = lines_now(&directory, &c.path, c.start_line, c.end_line);
                let status = judge(&c, now.as_deref());
                (c.id, c.status, status)
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Error::Internal(e.to_string()))?;
    let (mut moved, mut changed) = (false, false);
    for (id, before, after) in judged {
        if before != after {
            moved = true;
            changed |= super::set_status_if(core.db(), &id, before, after)?;
        }
    }
    if !moved {
        return Ok(comments);
    }
    // Read again: another check (or a close) may have moved them first.
    let comments = super::list(core.db(), session_id)?;
    if !changed {
        return Ok(comments);
    }
    core.emit(Change::Comments {
        session_id: session_id.to_owned(),
        comments: comments.clone(),
    });
    Ok(comments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(status: CommentStatus, quote: &str) -> LineComment {
        LineComment {
            id: "cmt_1".into(),
            session_id: "ses_1".into(),
            path: "src/a.rs".into(),
            start_line: 2,
            end_line: 3,
            quote: quote.into(),
            body: "why".into(),
            status,
            created_at: 1,
            sent_at: None,
            message_id: None,
            updated_at: 1,
        }
    }

    #[test]
    fn paths_stay_inside_the_folder() {
        assert_eq!(relative_path("/p", "/p/src/a.rs").unwrap(), "src/a.rs");
        assert_eq!(relative_path("/p", "./src/a.rs").unwrap(), "src/a.rs");
        assert!(relative_path("/p", "/q/a.rs").is_err());
        assert!(relative_path("/p", "../a.rs").is_err());
        assert!(relative_path("/p", "src/../../a.rs").is_err());
        assert!(relative_path("/p", "").is_err());
    }

    #[test]
    fn changed_lines_address_a_sent_comment_and_gone_lines_outdate_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        std::fs::write(dir.path().join("a.rs"), "one\ntwo\nthree\n").unwrap();
        assert_eq!(lines_now(root, "a.rs", 2, 3).as_deref(), Some("two\nthree"));
        assert_eq!(lines_now(root, "a.rs", 3, 4), None);
        assert_eq!(lines_now(root, "gone.rs", 1, 1), None);
        assert_eq!(lines_now(root, "../a.rs", 1, 1), None);

        let open = comment(CommentStatus::Open, "two\nthree");
        assert_eq!(judge(&open, Some("two\nthree")), CommentStatus::Open);
        assert_eq!(judge(&open, Some("two  \nthree")), CommentStatus::Open);
        assert_eq!(judge(&open, Some("2\nthree")), CommentStatus::Addressed);
        assert_eq!(judge(&open, None), CommentStatus::Outdated);
        let draft = comment(CommentStatus::Draft, "two\nthree");
        assert_eq!(judge(&draft, Some("2\nthree")), CommentStatus::Outdated);
        let closed = comment(CommentStatus::Closed, "two\nthree");
        assert_eq!(judge(&closed, None), CommentStatus::Closed);
    }
}
