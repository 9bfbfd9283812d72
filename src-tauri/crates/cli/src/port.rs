//! The web mode port, kept in the data folder (`web-port`) so the address `crosscheck serve`
//! prints (and a bookmark of it) stays the same across restarts.

use std::path::Path;

/// File name of the kept port inside the data folder.
pub const PORT_FILE: &str = "web-port";

/// The port of the last start, if one was kept and is a usable port.
pub fn kept(data_dir: &Path) -> Option<u16> {
    std::fs::read_to_string(data_dir.join(PORT_FILE))
        .ok()?
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
}

/// Keeps `port` for the next start; a failure is only logged (the address may change then).
pub fn keep(data_dir: &Path, port: u16) {
    let path = data_dir.join(PORT_FILE);
    if let Err(e) = crate::token::write_private(&path, &port.to_string()) {
        tracing::warn!("cannot keep the web port in {}: {e}", path.display());
    }
}
