//! Private files and folders: the ledger and the config are the user's alone (0600 files in
//! 0700 folders on Unix).

use std::io;
use std::path::Path;

/// Creates a folder and its missing parents, each new one readable by the user only.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// Creates `path` empty with mode 0600 if it does not exist; narrows an existing one to 0600.
///
/// An existing file is never opened: a SQLite database may already be open in this process,
/// and closing any other handle on its file drops the locks SQLite holds on it (POSIX locks
/// belong to the process), which lets another process checkpoint the log away under it.
pub fn touch_private(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => restrict(path),
        Err(e) => Err(e),
    }
}

/// Narrows an existing file to mode 0600 (no-op when it is absent or already private).
pub fn restrict(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            }
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}
