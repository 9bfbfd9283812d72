//! Folders a new session may work in: checking a folder the user typed or picked (it must be an
//! absolute path to an existing directory on this machine), and the suggestions the folder
//! picker offers (the server's project folders, the folders of known sessions, and the folders
//! the user created sessions in recently).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// How many recent folders are kept.
pub const RECENT_MAX: usize = 12;

/// Checks a folder for a new session: [`absolute_folder`], and it must be an existing
/// directory on this machine. Answers the folder as it will be sent to the server.
pub fn check_folder(raw: &str, home: Option<&Path>) -> Result<String> {
    let folder = absolute_folder(raw, home)?;
    match std::fs::metadata(&folder) {
        Ok(meta) if meta.is_dir() => Ok(folder),
        Ok(_) => Err(Error::NotAFolder(folder)),
        Err(_) => Err(Error::FolderMissing(folder)),
    }
}

/// Checks a folder a request names (it may be on another machine's server): trims it, expands
/// a leading `~`, drops trailing separators, and requires an absolute path. A relative one is
/// refused: the server would read it against its own working folder, not the one meant.
pub fn absolute_folder(raw: &str, home: Option<&Path>) -> Result<String> {
    let typed = raw.trim();
    if typed.is_empty() {
        return Err(Error::FolderNotAbsolute(String::new()));
    }
    let expanded = expand_home(typed, home);
    let path = strip_trailing_separators(&expanded);
    if !path.is_absolute() {
        return Err(Error::FolderNotAbsolute(typed.to_owned()));
    }
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::FolderNotAbsolute(typed.to_owned()))
}

fn expand_home(typed: &str, home: Option<&Path>) -> PathBuf {
    match (typed.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(typed),
    }
}

fn strip_trailing_separators(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    let trimmed = text.trim_end_matches('/');
    if trimmed.is_empty() {
        PathBuf::from("/")
    } else {
        PathBuf::from(trimmed)
    }
}

/// The newest-first list of recent folders with `folder` put in front (once), at most
/// [`RECENT_MAX`] long.
pub fn push_recent(recent: &[String], folder: &str) -> Vec<String> {
    std::iter::once(folder.to_owned())
        .chain(recent.iter().filter(|f| *f != folder).cloned())
        .take(RECENT_MAX)
        .collect()
}

/// Known folders in order, each once: the server's project folders first, then the folders of
/// its sessions (newest first). The filesystem root (OpenCode's `global` project, every folder
/// outside git) is never offered.
pub fn known_folders(
    projects: impl IntoIterator<Item = String>,
    sessions: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for folder in projects.into_iter().chain(sessions) {
        let folder = folder.trim().to_owned();
        if folder.is_empty() || folder == "/" || out.contains(&folder) {
            continue;
        }
        out.push(folder);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_folder_must_be_an_absolute_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        assert_eq!(check_folder(&format!("  {root}/ "), None).unwrap(), root);
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        assert!(matches!(
            check_folder(file.to_str().unwrap(), None),
            Err(Error::NotAFolder(_))
        ));
        assert!(matches!(
            check_folder(&format!("{root}/missing"), None),
            Err(Error::FolderMissing(p)) if p.ends_with("/missing")
        ));
        assert!(matches!(
            check_folder("relative/path", None),
            Err(Error::FolderNotAbsolute(_))
        ));
        assert!(matches!(
            check_folder("   ", None),
            Err(Error::FolderNotAbsolute(_))
        ));
    }

    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let home = dir.path();
        let root = home.to_str().unwrap();
        assert_eq!(check_folder("~", Some(home)).unwrap(), root);
        assert_eq!(
            check_folder("~/proj", Some(home)).unwrap(),
            format!("{root}/proj")
        );
        assert!(matches!(
            check_folder("~/proj", None),
            Err(Error::FolderNotAbsolute(_))
        ));
    }

    #[test]
    fn recent_folders_are_newest_first_once_and_bounded() {
        let mut recent = Vec::new();
        for i in 0..20 {
            recent = push_recent(&recent, &format!("/p/{i}"));
        }
        recent = push_recent(&recent, "/p/15");
        assert_eq!(recent.len(), RECENT_MAX);
        assert_eq!(recent[0], "/p/15");
        assert_eq!(recent[1], "/p/19");
        assert_eq!(recent.iter().filter(|f| *f == "/p/15").count(), 1);
    }

    #[test]
    fn known_folders_skip_the_root_and_repeats() {
        let known = known_folders(
            ["/".to_owned(), "/a".to_owned(), "/b".to_owned()],
            ["/b".to_owned(), "/c".to_owned(), String::new()],
        );
        assert_eq!(known, ["/a", "/b", "/c"]);
    }
}
