//! The web mode token, kept in the data folder (`web-token`, mode 0600) so the address that
//! `crosscheck serve` prints stays valid across restarts; `--new-token` replaces it.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// File name of the token inside the data folder.
pub const TOKEN_FILE: &str = "web-token";

/// The kept token, or a new one (written first) when there is none, it is malformed, or
/// `rotate` asks for a new one.
pub fn load_or_create(data_dir: &Path, rotate: bool) -> io::Result<String> {
    let path = data_dir.join(TOKEN_FILE);
    if !rotate {
        match std::fs::read_to_string(&path) {
            Ok(text) if is_token(text.trim()) => {
                crosscheck_review::private::restrict(&path)?;
                return Ok(text.trim().to_owned());
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let token = crosscheck_web::random_token();
    write_private(&path, &token)?;
    Ok(token)
}

/// A token as [`crosscheck_web::random_token`] makes them.
fn is_token(text: &str) -> bool {
    text.len() >= 32
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Writes `text` to a new 0600 file beside `path` and renames it into place, so a reader
/// never sees half of it and the file is never readable by others, not even briefly.
pub fn write_private(path: &Path, text: &str) -> io::Result<()> {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    crosscheck_review::private::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(".{name}.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    crosscheck_review::private::restrict(&tmp)?;
    std::fs::rename(&tmp, path)
}
