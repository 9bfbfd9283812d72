//! Files a prompt carries: what the UI sends (pasted, dropped or picked content as `data:`
//! URLs, or a path in the session's folder for an `@` mention), the size limits, and the
//! OpenCode `file` parts they become. A mention is sent as its real path, and only when that is
//! a regular file inside the session's folder (no link leads out of it).

use crosscheck_opencode::{FilePartInput, PartInput};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{Error, Result};

/// The largest one attached file may be, decoded (10 MiB). The UI checks it before reading a
/// file; the backend checks again.
pub const MAX_ATTACHMENT_BYTES: u64 = 10 * 1024 * 1024;
/// The most all files of one prompt may weigh together, decoded (25 MiB).
pub const MAX_PROMPT_ATTACHMENT_BYTES: u64 = 25 * 1024 * 1024;
/// The most files one prompt may carry.
pub const MAX_ATTACHMENTS: usize = 20;
/// The largest request body web mode takes: a prompt at the attachment limit, base64-encoded
/// (a third larger), and room for its text.
pub const MAX_REQUEST_BYTES: usize = 40 * 1024 * 1024;

/// One file attached to a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, TS)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
#[ts(export)]
pub enum Attachment {
    /// Content the user pasted, dropped or picked, as a `data:` URL.
    Data {
        /// The name shown for it (and to the model).
        filename: String,
        /// Its MIME type (`text/plain`, `image/png`, ...).
        mime: String,
        /// `data:<mime>;base64,<content>`.
        url: String,
    },
    /// A file of the session's folder (an `@` mention), by its path relative to the folder;
    /// the server reads it when the prompt runs.
    File {
        /// Relative path, e.g. `src/main.rs`.
        path: String,
    },
}

/// The `file` parts for `attachments` of a session working in `directory`, after checking
/// every one of them and the limits; nothing is sent when one is wrong.
pub fn file_parts(directory: &str, attachments: &[Attachment]) -> Result<Vec<PartInput>> {
    if attachments.len() > MAX_ATTACHMENTS {
        return Err(Error::InvalidRequest(format!(
            "a message can carry at most {MAX_ATTACHMENTS} files, not {}",
            attachments.len()
        )));
    }
    let mut total = 0u64;
    let mut parts = Vec::with_capacity(attachments.len());
    for attachment in attachments {
        match attachment {
            Attachment::Data {
                filename,
                mime,
                url,
            } => {
                let name = filename.trim();
                if name.is_empty() {
                    return Err(Error::InvalidRequest("an attached file has no name".into()));
                }
                let size = data_url_size(name, url)?;
                if size > MAX_ATTACHMENT_BYTES {
                    return Err(Error::FileTooLarge {
                        name: name.to_owned(),
                        size,
                        limit: MAX_ATTACHMENT_BYTES,
                    });
                }
                total += size;
                let mime = mime.trim();
                let mime = if mime.is_empty() { "text/plain" } else { mime };
                parts.push(FilePartInput::part(
                    mime,
                    Some(name.to_owned()),
                    url.clone(),
                ));
            }
            Attachment::File { path } => {
                let path = relative_path(path)?;
                let real = resolve_mention(directory, path)?;
                let url = format!("file://{}", encode_path(&real));
                parts.push(FilePartInput::part(
                    mime_of(path),
                    Some(path.to_owned()),
                    url,
                ));
            }
        }
    }
    if total > MAX_PROMPT_ATTACHMENT_BYTES {
        return Err(Error::FileTooLarge {
            name: format!("the {} files together", attachments.len()),
            size: total,
            limit: MAX_PROMPT_ATTACHMENT_BYTES,
        });
    }
    Ok(parts)
}

/// The decoded size of a base64 `data:` URL, or why it is not one.
fn data_url_size(name: &str, url: &str) -> Result<u64> {
    let bad = |why: &str| Error::InvalidRequest(format!("{name}: {why}"));
    let rest = url
        .strip_prefix("data:")
        .ok_or_else(|| bad("the content is not a data: URL"))?;
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| bad("the data: URL has no content"))?;
    if !header.ends_with(";base64") {
        return Err(bad("the data: URL is not base64"));
    }
    let bytes = payload.as_bytes();
    let valid = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if !valid || bytes.len() % 4 != 0 {
        return Err(bad("the content is not valid base64"));
    }
    let padding = bytes.iter().rev().take_while(|b| **b == b'=').count();
    if padding > 2 {
        return Err(bad("the content is not valid base64"));
    }
    Ok((bytes.len() / 4 * 3 - padding) as u64)
}

/// A path inside the session's folder: relative, without `..`, not empty.
fn relative_path(path: &str) -> Result<&str> {
    let path = path.trim();
    let outside = path.starts_with('/')
        || path.starts_with('\\')
        || path.split(['/', '\\']).any(|c| c == "..")
        || path.contains('\0')
        || (path.len() > 1 && path.as_bytes()[1] == b':');
    if path.is_empty() || outside {
        return Err(Error::InvalidRequest(format!(
            "{path:?} is not a path inside the session's folder"
        )));
    }
    Ok(path)
}

/// The real path of the mentioned file `path` of the folder `directory`, every link in every
/// component resolved, when it is a regular file inside the folder. The server reads what the
/// URL names and follows links, so a link inside the folder to a file outside it (or a link in
/// a parent component) would send that file; a pipe or a device would hang or stream without
/// end. A folder that is not on this machine cannot be checked, so nothing is sent.
fn resolve_mention(directory: &str, path: &str) -> Result<String> {
    let root = std::fs::canonicalize(directory)
        .map_err(|_| Error::AttachmentUnchecked(path.to_owned()))?;
    let real = std::fs::canonicalize(std::path::Path::new(directory).join(path))
        .map_err(|_| Error::AttachmentMissing(path.to_owned()))?;
    if !real.starts_with(&root) {
        return Err(Error::AttachmentOutside(path.to_owned()));
    }
    let meta = std::fs::metadata(&real).map_err(|_| Error::AttachmentMissing(path.to_owned()))?;
    if !meta.file_type().is_file() {
        return Err(Error::AttachmentNotAFile(path.to_owned()));
    }
    real.into_os_string()
        .into_string()
        .map_err(|_| Error::InvalidRequest(format!("{path:?}: the file's real path is not UTF-8")))
}

/// Percent-encodes what a `file://` URL path cannot hold as it is.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The MIME type OpenCode reads a mentioned file as: images and PDFs as what they are,
/// everything else as text.
fn mime_of(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str, url: &str) -> Attachment {
        Attachment::Data {
            filename: name.into(),
            mime: "text/plain".into(),
            url: url.into(),
        }
    }

    fn json(parts: &[PartInput]) -> serde_json::Value {
        serde_json::to_value(parts).unwrap_or_default()
    }

    #[test]
    fn data_urls_become_file_parts_with_their_name_and_mime() {
        let parts = file_parts("/p", &[data("a.txt", "data:text/plain;base64,aGk=")]);
        assert_eq!(
            json(&parts.unwrap_or_default()),
            serde_json::json!([{"type": "file", "mime": "text/plain", "filename": "a.txt",
                "url": "data:text/plain;base64,aGk="}])
        );
    }

    #[test]
    fn mentioned_files_become_file_urls_in_the_session_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("work dir");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("docs/a b#.png"), "png").unwrap();
        let real = std::fs::canonicalize(&dir).unwrap();
        let base = encode_path(real.to_str().unwrap());
        let parts = file_parts(
            &format!("{}/", dir.to_str().unwrap()),
            &[
                Attachment::File {
                    path: "src/main.rs".into(),
                },
                Attachment::File {
                    path: "docs/a b#.png".into(),
                },
            ],
        );
        let value = json(&parts.unwrap());
        assert_eq!(value[0]["url"], format!("file://{base}/src/main.rs"));
        assert!(base.contains("work%20dir"), "{base}");
        assert_eq!(value[0]["mime"], "text/plain");
        assert_eq!(value[0]["filename"], "src/main.rs");
        assert_eq!(value[1]["url"], format!("file://{base}/docs/a%20b%23.png"));
        assert_eq!(value[1]["mime"], "image/png");
    }

    /// A project folder and a folder beside it with a secret, in a fresh temp dir.
    #[cfg(unix)]
    fn project_and_outside() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("src/lib.rs"), "pub fn a() {}").unwrap();
        std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
        (tmp, project, outside)
    }

    #[cfg(unix)]
    fn mention(project: &std::path::Path, path: &str) -> Result<Vec<PartInput>> {
        file_parts(
            project.to_str().unwrap(),
            &[Attachment::File { path: path.into() }],
        )
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_file_outside_the_folder_is_refused() {
        use std::os::unix::fs::symlink;
        let (_tmp, project, outside) = project_and_outside();
        symlink(outside.join("secret.txt"), project.join("notes.md")).unwrap();
        symlink("../../outside/secret.txt", project.join("src/relative.md")).unwrap();
        symlink("/etc/passwd", project.join("passwd.txt")).unwrap();
        for path in ["notes.md", "src/relative.md", "passwd.txt"] {
            let err = mention(&project, path);
            assert!(
                matches!(err, Err(Error::AttachmentOutside(ref p)) if p == path),
                "{path}: {err:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_a_parent_component_is_refused() {
        use std::os::unix::fs::symlink;
        let (_tmp, project, outside) = project_and_outside();
        symlink(&outside, project.join("vendor")).unwrap();
        symlink("/etc", project.join("src/etc")).unwrap();
        for path in ["vendor/secret.txt", "src/etc/passwd"] {
            let err = mention(&project, path);
            assert!(
                matches!(err, Err(Error::AttachmentOutside(_))),
                "{path}: {err:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn special_files_and_folders_are_refused() {
        let (_tmp, project, _outside) = project_and_outside();
        let fifo = project.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        std::os::unix::fs::symlink("/dev/zero", project.join("zero")).unwrap();
        for path in ["pipe", "src"] {
            let err = mention(&project, path);
            assert!(
                matches!(err, Err(Error::AttachmentNotAFile(_))),
                "{path}: {err:?}"
            );
        }
        // A link to a device outside is refused for where it leads first.
        assert!(matches!(
            mention(&project, "zero"),
            Err(Error::AttachmentOutside(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_inside_the_folder_is_sent_as_the_file_it_names() {
        let (_tmp, project, _outside) = project_and_outside();
        std::os::unix::fs::symlink("src/lib.rs", project.join("lib-link.rs")).unwrap();
        let parts = mention(&project, "lib-link.rs").unwrap();
        let real = std::fs::canonicalize(project.join("src/lib.rs")).unwrap();
        let value = json(&parts);
        assert_eq!(
            value[0]["url"],
            format!("file://{}", encode_path(real.to_str().unwrap()))
        );
        assert_eq!(value[0]["filename"], "lib-link.rs");
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_file_and_a_folder_not_on_this_machine_say_so() {
        let (tmp, project, _outside) = project_and_outside();
        std::os::unix::fs::symlink("nowhere.txt", project.join("dangling")).unwrap();
        for path in ["absent.rs", "dangling"] {
            let err = mention(&project, path);
            assert!(
                matches!(err, Err(Error::AttachmentMissing(_))),
                "{path}: {err:?}"
            );
        }
        let elsewhere = tmp.path().join("not-here");
        let err = mention(&elsewhere, "src/lib.rs");
        assert!(matches!(err, Err(Error::AttachmentUnchecked(_))), "{err:?}");
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        for path in ["", "/etc/passwd", "../x", "a/../../x", "C:\\x", "a\\..\\b"] {
            let err = file_parts("/p", &[Attachment::File { path: path.into() }]);
            assert!(
                matches!(err, Err(Error::InvalidRequest(_))),
                "{path}: {err:?}"
            );
        }
    }

    #[test]
    fn sizes_are_counted_decoded_and_limited() {
        assert_eq!(data_url_size("a", "data:x;base64,aGk=").ok(), Some(2));
        assert_eq!(data_url_size("a", "data:x;base64,aGVsbG8=").ok(), Some(5));
        assert_eq!(data_url_size("a", "data:x;base64,").ok(), Some(0));
        let big = format!("data:text/plain;base64,{}", "A".repeat(14 * 1024 * 1024));
        let err = file_parts("/p", &[data("big.txt", &big)]);
        assert!(
            matches!(&err, Err(Error::FileTooLarge { name, size, limit })
                if name == "big.txt" && *size == 14 * 1024 * 1024 / 4 * 3 && *limit == MAX_ATTACHMENT_BYTES),
            "{err:?}"
        );
        let nine = format!("data:text/plain;base64,{}", "A".repeat(12 * 1024 * 1024));
        let three: Vec<Attachment> = (0..3).map(|i| data(&format!("{i}.txt"), &nine)).collect();
        let err = file_parts("/p", &three);
        assert!(
            matches!(&err, Err(Error::FileTooLarge { limit, .. }) if *limit == MAX_PROMPT_ATTACHMENT_BYTES),
            "{err:?}"
        );
    }

    #[test]
    fn broken_data_urls_are_refused_with_the_file_name() {
        for url in [
            "file:///x",
            "data:text/plain;base64",
            "data:text/plain,hi",
            "data:text/plain;base64,@@@@",
            "data:text/plain;base64,abc",
        ] {
            let err = file_parts("/p", &[data("n.txt", url)]);
            assert!(
                matches!(&err, Err(Error::InvalidRequest(m)) if m.starts_with("n.txt: ")),
                "{url}: {err:?}"
            );
        }
        let err = file_parts("/p", &[data("  ", "data:x;base64,")]);
        assert!(matches!(err, Err(Error::InvalidRequest(_))));
    }

    #[test]
    fn too_many_files_are_refused() {
        let many: Vec<Attachment> = (0..=MAX_ATTACHMENTS)
            .map(|i| data(&format!("{i}"), "data:x;base64,"))
            .collect();
        assert!(matches!(
            file_parts("/p", &many),
            Err(Error::InvalidRequest(_))
        ));
    }

    #[test]
    fn the_ui_uses_the_same_limits() {
        let ui = include_str!("../../../../ui/src/lib/attachments.ts");
        let mb = |bytes: u64| bytes / 1024 / 1024;
        for line in [
            format!("MAX_ATTACHMENT_BYTES = {} * MB;", mb(MAX_ATTACHMENT_BYTES)),
            format!(
                "MAX_PROMPT_ATTACHMENT_BYTES = {} * MB;",
                mb(MAX_PROMPT_ATTACHMENT_BYTES)
            ),
            format!("MAX_ATTACHMENTS = {MAX_ATTACHMENTS};"),
        ] {
            assert!(
                ui.contains(&line),
                "ui/src/lib/attachments.ts must say {line}"
            );
        }
    }
}
