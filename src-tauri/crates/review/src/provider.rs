//! Reviewer calls over HTTP: Anthropic Messages and OpenAI-compatible chat completions.
//!
//! Every failure, including every malformed reply shape, becomes a [`CallFailure`]; nothing
//! here panics on what a server sends.

use std::time::Duration;

use serde_json::{Value, json};

use crate::config::{ProviderKind, ResolvedProvider};

/// Largest reply body accepted, in bytes.
pub const MAX_REPLY_BYTES: usize = 2 * 1024 * 1024;

/// Why a reviewer call produced no usable text. Each one makes the review `unreviewed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// No complete reply within the timeout.
    Timeout(Duration),
    /// Connection refused, reset, DNS failure, body cut short.
    Transport(String),
    /// Missing key, HTTP 401 or 403.
    Auth(String),
    /// HTTP 429.
    RateLimited(String),
    /// Any other non-success HTTP status.
    Http(u16, String),
    /// A success status whose body holds no usable reply (not JSON, wrong shape, empty, too big).
    BadReply(String),
    /// The provider config cannot produce a request (bad header).
    Config(String),
    /// A failure already said in one sentence that names what is missing or what to do
    /// (no API key, no OpenCode server, an OpenCode error), with its outcome code.
    Said {
        /// The outcome code (one of the codes above).
        code: &'static str,
        /// The sentence.
        message: String,
    },
}

impl CallFailure {
    /// The outcome code logged and stored in the ledger.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Timeout(_) => "timeout",
            Self::Transport(_) => "transport",
            Self::Auth(_) => "auth",
            Self::RateLimited(_) => "rate_limited",
            Self::Http(..) => "http_error",
            Self::BadReply(_) => "bad_reply",
            Self::Config(_) => "config",
            Self::Said { code, .. } => code,
        }
    }

    /// A one-line explanation for people.
    pub fn detail(&self) -> String {
        match self {
            Self::Timeout(d) => format!("the reviewer did not answer within {} ms", d.as_millis()),
            Self::Transport(m) => format!("the reviewer could not be reached ({m})"),
            Self::Auth(m) => format!("the reviewer refused the credentials ({m})"),
            Self::RateLimited(m) => format!("the reviewer is rate limited ({m})"),
            Self::Http(s, m) => format!("the reviewer answered HTTP {s} ({m})"),
            Self::BadReply(m) => format!("the reviewer's reply was unusable ({m})"),
            Self::Config(m) => format!("the reviewer config is unusable ({m})"),
            Self::Said { message, .. } => message.clone(),
        }
    }
}

/// A chat role in the conversation sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The gate.
    User,
    /// The reviewer's earlier reply (repair round).
    Assistant,
}

/// One call's inputs.
#[derive(Debug, Clone)]
pub struct CallSpec<'a> {
    /// The provider and model.
    pub provider: &'a ResolvedProvider,
    /// The system prompt.
    pub system: &'a str,
    /// The conversation.
    pub messages: &'a [(Role, &'a str)],
    /// `max_tokens`.
    pub max_tokens: u32,
    /// The whole call, body included, must finish within this.
    pub timeout: Duration,
}

/// Most redirects followed within the provider's own origin.
const MAX_REDIRECTS: usize = 5;

/// Whether two URLs share an origin: scheme, host and port.
fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Builds the HTTP client used for reviewer calls. A redirect is followed only within the
/// origin of the request (a few hops at most): a call carries the user's key and the text
/// under review, and another origin gets neither. A redirect elsewhere ends the call with
/// the redirect's status, which [`call`] reports in words.
pub fn build_client() -> Result<reqwest::Client, CallFailure> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let stays = attempt
            .previous()
            .first()
            .is_some_and(|first| same_origin(first, attempt.url()));
        if !stays || attempt.previous().len() > MAX_REDIRECTS {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .redirect(policy)
        .build()
        .map_err(|e| CallFailure::Transport(format!("HTTP client: {e}")))
}

fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = collapsed.chars().take(200).collect();
    if collapsed.chars().count() > 200 {
        out.push('…');
    }
    if out.is_empty() {
        out.push_str("empty body");
    }
    out
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The JSON body and URL of a call (exposed for tests).
pub fn request_parts(spec: &CallSpec<'_>) -> (String, Value) {
    let p = spec.provider;
    match p.kind {
        ProviderKind::Anthropic => {
            let messages: Vec<Value> = spec
                .messages
                .iter()
                .map(|(r, c)| json!({"role": role_name(*r), "content": c}))
                .collect();
            (
                format!("{}/v1/messages", p.base_url),
                json!({
                    "model": p.model,
                    "max_tokens": spec.max_tokens,
                    "system": spec.system,
                    "messages": messages,
                }),
            )
        }
        ProviderKind::Openai => {
            let mut messages = vec![json!({"role": "system", "content": spec.system})];
            messages.extend(
                spec.messages
                    .iter()
                    .map(|(r, c)| json!({"role": role_name(*r), "content": c})),
            );
            let mut body = json!({ "model": p.model, "messages": messages });
            if let Value::Object(map) = &mut body {
                map.insert(p.max_tokens_field.clone(), json!(spec.max_tokens));
            }
            (format!("{}/chat/completions", p.base_url), body)
        }
    }
}

/// Calls the reviewer and returns its reply text.
pub async fn call(client: &reqwest::Client, spec: &CallSpec<'_>) -> Result<String, CallFailure> {
    let p = spec.provider;
    if !p.usable() {
        return Err(CallFailure::Said {
            code: "auth",
            message: p.unusable_reason(),
        });
    }
    match tokio::time::timeout(spec.timeout, send(client, spec)).await {
        Ok(result) => result,
        Err(_) => Err(CallFailure::Timeout(spec.timeout)),
    }
}

async fn send(client: &reqwest::Client, spec: &CallSpec<'_>) -> Result<String, CallFailure> {
    let p = spec.provider;
    let (url, body) = request_parts(spec);
    let mut request = client.post(&url).json(&body);
    match p.kind {
        ProviderKind::Anthropic => {
            if let Some(key) = &p.api_key {
                request = request.header("x-api-key", key);
            }
            request = request.header("anthropic-version", &p.anthropic_version);
        }
        ProviderKind::Openai => {
            if let Some(key) = &p.api_key {
                request = request.bearer_auth(key);
            }
        }
    }
    for (name, value) in &p.headers {
        request = request.header(name, value);
    }
    let request = request
        .build()
        .map_err(|e| CallFailure::Config(e.to_string()))?;
    let mut response = client
        .execute(request)
        .await
        .map_err(|e| CallFailure::Transport(error_chain(&e)))?;
    let status = response.status();
    let headers = response.headers().clone();
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                    return Err(CallFailure::BadReply(format!(
                        "reply larger than {MAX_REPLY_BYTES} bytes"
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => return Err(CallFailure::Transport(error_chain(&e))),
        }
    }
    match status.as_u16() {
        200..=299 => {}
        300..=399 => {
            let to = response_location(&headers).unwrap_or_else(|| "no Location".to_owned());
            return Err(CallFailure::Said {
                code: "http_error",
                message: format!(
                    "the reviewer's provider answered HTTP {status} with a redirect to {to}, \
                     which was not followed: a reviewer call follows redirects only within the \
                     provider's own origin, never to another origin (it would carry your key and \
                     the text under review there), so nothing was sent there; if you trust that \
                     address, make it the provider's base URL"
                ),
            });
        }
        401 | 403 => {
            return Err(CallFailure::Auth(format!(
                "HTTP {status}: {}",
                snippet(&bytes)
            )));
        }
        429 => {
            return Err(CallFailure::RateLimited(format!(
                "HTTP 429: {}",
                snippet(&bytes)
            )));
        }
        s => return Err(CallFailure::Http(s, snippet(&bytes))),
    }
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| CallFailure::BadReply(format!("not JSON: {e}; body: {}", snippet(&bytes))))?;
    let text = match p.kind {
        ProviderKind::Anthropic => anthropic_text(&value),
        ProviderKind::Openai => openai_text(&value),
    }?;
    if text.trim().is_empty() {
        return Err(CallFailure::BadReply("empty reply text".into()));
    }
    Ok(text)
}

/// Where a redirect points: its `Location` without a query (a query could carry a token),
/// cut to a readable length.
fn response_location(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let raw = headers.get(reqwest::header::LOCATION)?.to_str().ok()?;
    let shown = raw.split(['?', '#']).next().unwrap_or_default();
    Some(shown.chars().take(200).collect())
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn api_error(value: &Value) -> Option<CallFailure> {
    let error = value.get("error")?;
    if error.is_null() {
        return None;
    }
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    Some(CallFailure::BadReply(format!("error object: {message}")))
}

fn anthropic_text(value: &Value) -> Result<String, CallFailure> {
    if let Some(e) = api_error(value) {
        return Err(e);
    }
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| CallFailure::BadReply("no `content` array".into()))?;
    Ok(content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(""))
}

fn openai_text(value: &Value) -> Result<String, CallFailure> {
    if let Some(e) = api_error(value) {
        return Err(e);
    }
    let message = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .ok_or_else(|| CallFailure::BadReply("no `choices[0].message`".into()))?;
    match message.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("")),
        Some(Value::Null) | None => Err(CallFailure::BadReply(
            match message.get("refusal").and_then(Value::as_str) {
                Some(r) => format!("refusal: {r}"),
                None => "no message content".into(),
            },
        )),
        Some(other) => Err(CallFailure::BadReply(format!(
            "message content is {}",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                _ => "an object",
            }
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_without_text_are_bad_replies() {
        for v in [
            json!({}),
            json!({"content": "text"}),
            json!({"type": "error", "error": {"message": "overloaded"}}),
        ] {
            assert!(anthropic_text(&v).is_err(), "{v}");
        }
        assert_eq!(anthropic_text(&json!({"content": [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "x"}, {"type": "text", "text": "b"}]})).unwrap(), "ab");
        for v in [
            json!({"choices": []}),
            json!({"choices": [{"message": {"content": null}}]}),
            json!({"choices": [{"message": {"content": 3}}]}),
            json!({"choices": [{"message": {"content": null, "refusal": "no"}}]}),
            json!({"error": {"message": "bad"}}),
        ] {
            assert!(openai_text(&v).is_err(), "{v}");
        }
        assert_eq!(
            openai_text(
                &json!({"choices": [{"message": {"content": [{"type": "text", "text": "x"}]}}]})
            )
            .unwrap(),
            "x"
        );
    }
}
