//! The crate's error type. Every variant has a stable snake-case [`Error::code`] that the UI
//! localises; the `Display` text is English detail for logs and tooltips.

/// How many characters of a response body an error keeps.
pub(crate) const BODY_LIMIT: usize = 500;

/// Everything that can go wrong talking to, or running, an OpenCode server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server could not be reached or the exchange broke off (refused, timeout, reset).
    /// A request that fails this way after it was sent may still have been delivered.
    #[error("cannot reach OpenCode at {url}: {message}")]
    Transport {
        /// The URL asked for (without credentials).
        url: String,
        /// What went wrong.
        message: String,
        /// The server was reached but did not answer within the time limit: it is slow, not
        /// gone (its code is `opencode_slow`).
        timed_out: bool,
    },
    /// The server wants a different password (HTTP 401).
    #[error("OpenCode refused the password (HTTP 401)")]
    Unauthorized,
    /// The server says the thing does not exist (HTTP 404).
    #[error("not found: {what}")]
    NotFound {
        /// What was not found: the server's message, or the route.
        what: String,
    },
    /// Any other non-2xx answer.
    #[error("OpenCode answered HTTP {status}: {body}")]
    Status {
        /// HTTP status code.
        status: u16,
        /// The start of the response body (at most about 500 characters).
        body: String,
    },
    /// The answer was not the JSON the route promises.
    #[error("unexpected answer from OpenCode to {what}: {message}")]
    Decode {
        /// The route, e.g. `GET /session/ses_1`.
        what: String,
        /// What was wrong with the body.
        message: String,
    },
    /// The answer was larger than Crosscheck reads from that route (a huge diff, say).
    #[error("OpenCode's answer to {what} is larger than {} MiB", limit / (1024 * 1024))]
    TooLarge {
        /// The route, e.g. `GET /vcs/diff`.
        what: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The server URL cannot be used.
    #[error("invalid OpenCode server URL: {0}")]
    InvalidUrl(String),
    /// `opencode serve` could not be found or started.
    #[error("could not start opencode: {0}")]
    Spawn(String),
    /// No `opencode` binary was found (and none was named): where it was looked for.
    #[error("opencode is not installed: looked for {}", looked.join("; "))]
    NotInstalled {
        /// Each place looked in, as a user reads it (`opencode on PATH (...)`, a folder).
        looked: Vec<String>,
    },
    /// `opencode serve` started but did not become ready.
    #[error("opencode did not become ready: {0}")]
    NotReady(String),
}

impl Error {
    /// The stable code the UI localises.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Transport {
                timed_out: true, ..
            } => "opencode_slow",
            Error::Transport { .. } => "opencode_unreachable",
            Error::Unauthorized => "opencode_unauthorized",
            Error::NotFound { .. } => "not_found",
            Error::Status { .. } => "opencode_status",
            Error::Decode { .. } => "opencode_malformed",
            Error::TooLarge { .. } => "opencode_too_large",
            Error::InvalidUrl(_) => "invalid_url",
            Error::Spawn(_) => "opencode_spawn",
            Error::NotInstalled { .. } => "opencode_not_installed",
            Error::NotReady(_) => "opencode_not_ready",
        }
    }

    /// Whether the request may or may not have reached the server (check before resending).
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Transport { .. })
    }

    /// Whether the server said the thing does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}

/// Cuts `text` to at most `max` characters (on a character boundary), marking the cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// A `reqwest` error with its whole source chain, without the URL (callers add it once).
pub(crate) fn describe_reqwest(error: reqwest::Error) -> String {
    let timeout = error.is_timeout();
    let connect = error.is_connect();
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if timeout && !text.contains("timed out") {
        text.push_str(" (timed out)");
    } else if connect && !text.contains("connect") {
        text.push_str(" (connect failed)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        let cases = [
            (
                Error::Transport {
                    url: "u".into(),
                    message: "m".into(),
                    timed_out: false,
                },
                "opencode_unreachable",
            ),
            (
                Error::Transport {
                    url: "u".into(),
                    message: "m".into(),
                    timed_out: true,
                },
                "opencode_slow",
            ),
            (Error::Unauthorized, "opencode_unauthorized"),
            (Error::NotFound { what: "w".into() }, "not_found"),
            (
                Error::Status {
                    status: 500,
                    body: "b".into(),
                },
                "opencode_status",
            ),
            (
                Error::Decode {
                    what: "w".into(),
                    message: "m".into(),
                },
                "opencode_malformed",
            ),
            (Error::InvalidUrl("u".into()), "invalid_url"),
            (Error::Spawn("s".into()), "opencode_spawn"),
            (Error::NotReady("n".into()), "opencode_not_ready"),
        ];
        for (error, code) in cases {
            assert_eq!(error.code(), code, "{error}");
        }
    }

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("ééééé", 5), "ééééé");
        assert_eq!(truncate("éééééé", 5), "ééééé…");
    }
}
