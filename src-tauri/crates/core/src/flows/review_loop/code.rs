//! The code fingerprint a round is pinned to (see [`crate::fingerprint`]): the digest of the
//! checked-out commit plus every uncommitted change.

/// The directory's fingerprint digest, or `None` when it cannot be computed (not a git
/// repository, git failed); a loop then cannot tell whether a claimed fix changed the code and
/// takes it at its word.
pub(crate) async fn fingerprint(directory: &str) -> Option<String> {
    match crate::fingerprint::fingerprint(std::path::Path::new(directory)).await {
        Ok(f) => Some(f.digest),
        Err(e) => {
            tracing::debug!(directory, "no code fingerprint: {e}");
            None
        }
    }
}
