//! The code fingerprint a round is pinned to (see [`crate::fingerprint`]): the digest of the
//! checked-out commit plus every uncommitted change.

/// The directory's whole fingerprint (the files too), or `None` when it cannot be computed
/// (not a git repository, git failed); a loop then cannot tell whether a claimed fix changed
/// the code and takes it at its word.
pub(crate) async fn full(directory: &str) -> Option<crate::fingerprint::Fingerprint> {
    crate::review_pin::current(directory).await
}
