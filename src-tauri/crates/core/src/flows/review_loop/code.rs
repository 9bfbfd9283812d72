//! The code fingerprint a round is pinned to. A narrow seam: the shared fingerprint module
//! (HEAD plus a hash of the working-tree diff, untracked files included) plugs in here.

/// The directory's code fingerprint, or `None` when it cannot be computed (not a repository).
pub(crate) async fn fingerprint(directory: &str) -> Option<String> {
    let _ = directory;
    None
}
