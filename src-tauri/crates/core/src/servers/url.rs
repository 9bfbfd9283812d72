//! One spelling per server address, so the same server added twice is recognised.

use crate::error::{Error, Result};

/// The address in one spelling: scheme and host in lower case, `localhost` as `127.0.0.1`, the
/// default port dropped, no trailing slash, no user part. Refuses what is not `http(s)://host`.
pub fn normalize(raw: &str) -> Result<String> {
    let trimmed = raw.trim();
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(|| invalid(trimmed))?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return Err(invalid(trimmed)),
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    if authority.is_empty() {
        return Err(invalid(trimmed));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(trimmed));
            }
            (h, Some(p))
        }
        _ => (authority, None),
    };
    let mut host = host.to_ascii_lowercase();
    if host == "localhost" {
        host = "127.0.0.1".to_owned();
    }
    if host.is_empty() {
        return Err(invalid(trimmed));
    }
    let port = match port {
        Some(p) if p.trim_start_matches('0') != default_port => format!(":{p}"),
        _ => String::new(),
    };
    Ok(format!("{scheme}://{host}{port}{path}"))
}

/// Splits a password given in the address (`http://:secret@host:4096`) from it, for
/// `--opencode` (the address kept has no user part).
pub fn split_password(raw: &str) -> (String, Option<String>) {
    let trimmed = raw.trim();
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        return (trimmed.to_owned(), None);
    };
    let end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return (trimmed.to_owned(), None);
    };
    let userinfo = &rest[..at];
    let password = userinfo
        .split_once(':')
        .map(|(_, p)| p.to_owned())
        .filter(|p| !p.is_empty());
    (format!("{scheme}://{}", &rest[at + 1..]), password)
}

fn invalid(url: &str) -> Error {
    Error::Opencode(crosscheck_opencode::Error::InvalidUrl(format!(
        "{url} is not an http:// or https:// address"
    )))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn spellings_of_one_address_are_one() {
        let one = normalize("http://127.0.0.1:4096").unwrap();
        for other in [
            "http://127.0.0.1:4096/",
            "HTTP://LOCALHOST:4096",
            " http://localhost:4096// ",
            "http://user@127.0.0.1:4096",
        ] {
            assert_eq!(normalize(other).unwrap(), one, "{other}");
        }
        assert_eq!(
            normalize("https://box.example:443/").unwrap(),
            "https://box.example"
        );
        assert_ne!(normalize("http://127.0.0.1:4097").unwrap(), one);
    }

    #[test]
    fn a_password_in_the_address_is_split_off() {
        assert_eq!(
            super::split_password("http://opencode:pw@127.0.0.1:4096/"),
            ("http://127.0.0.1:4096/".to_owned(), Some("pw".to_owned()))
        );
        assert_eq!(
            super::split_password("http://127.0.0.1:4096"),
            ("http://127.0.0.1:4096".to_owned(), None)
        );
    }

    #[test]
    fn what_is_not_an_address_is_refused() {
        for bad in ["", "127.0.0.1:4096", "ftp://x", "http://", "http://h:x"] {
            assert!(normalize(bad).is_err(), "{bad}");
        }
    }
}
