//! The HTTP client for one OpenCode server: the `/session` surface, catalogs, and the request
//! that opens the global event stream (read by [`crate::stream`]).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

mod changes;

pub use changes::DIFF_BODY_LIMIT;

use crate::error::{BODY_LIMIT, Error, describe_reqwest, truncate};

mod history;
mod worktree;

pub use worktree::WorktreeInfo;

use crate::types::{
    AgentInfo, CommandInfo, CommandRequest, CreateSession, Health, MessagePage, MessageWithParts,
    ModelInfo, PermissionReply, PermissionRequest, Project, PromptRequest, ProviderCatalog,
    ProviderInfo, QuestionReply, QuestionRequest, ServerPath, Session, SessionPatch, SessionStatus,
    lenient,
};
pub use history::FIND_LIMIT;

/// Characters a query value keeps as they are: RFC 3986 unreserved plus `/` (paths stay readable).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');
/// Characters a path segment (a session id) keeps as they are.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Sessions asked for in a listing's first request; a full answer asks again with twice as many.
pub const SESSION_PAGE: usize = 200;
/// The largest `limit` a listing asks with (a bound, so a listing always ends).
const MAX_SESSION_LIMIT: usize = 1 << 22;
/// The project OpenCode files every session of a folder outside git under.
pub const GLOBAL_PROJECT: &str = "global";

/// The user name OpenCode expects with its server password.
const USERNAME: &str = "opencode";

/// Where an OpenCode server listens and the password it wants, if any.
#[derive(Clone)]
pub struct ServerConfig {
    /// Base URL, e.g. `http://127.0.0.1:4096` (a path prefix is kept; a trailing `/` is not).
    pub base_url: String,
    /// Password for HTTP Basic auth as `opencode:<password>` (`OPENCODE_SERVER_PASSWORD`).
    pub password: Option<String>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("base_url", &self.base_url)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// What [`Client::list_all_sessions`] found: the sessions of every listing that answered, and
/// the listings that failed.
#[derive(Debug, Default)]
pub struct SessionListing {
    /// Every listed session, once each.
    pub sessions: Vec<Session>,
    /// The listings that failed; their projects' sessions are unknown, not gone.
    pub failures: Vec<ListingFailure>,
}

/// One session listing that failed.
#[derive(Debug)]
pub struct ListingFailure {
    /// The project it covers; `None` when unknown (the server's own project, or the project
    /// list itself), which makes every project's sessions unknown.
    pub project_id: Option<String>,
    /// The request, for messages.
    pub listing: String,
    /// Why it failed.
    pub error: Error,
}

/// Time limits of a [`Client`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Limit for opening a TCP connection.
    pub connect: Duration,
    /// Limit for a whole ordinary request (headers and body).
    pub request: Duration,
    /// Limit for the blocking `command` route, which runs a whole turn; `None` waits as long
    /// as the connection lives (TCP keep-alive notices a dead peer). The event stream never
    /// has one: it is watched by its heartbeat instead.
    pub long: Option<Duration>,
    /// Limit for a diff, which the server may take minutes to compute (thousands of files).
    pub large: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(30),
            long: None,
            large: Duration::from_secs(5 * 60),
        }
    }
}

/// A cheap-to-clone client for one OpenCode server.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServerConfig,
    /// Base URL without a trailing `/` and without credentials.
    base: String,
    http: reqwest::Client,
    auth: Option<HeaderValue>,
    timeouts: Timeouts,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base)
            .field("timeouts", &self.inner.timeouts)
            .finish()
    }
}

/// A route being called: method, path (for error messages) and full URL.
struct Call {
    method: Method,
    path: String,
    url: String,
}

impl Call {
    /// `GET /session/ses_1`, the name errors give the route.
    fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// `scheme://user:pass@host/...` as `scheme://…@host/...`, for messages.
fn redact_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let authority_end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| scheme_end + i);
    match url[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}…{}", &url[..scheme_end], &url[scheme_end + at..]),
        None => url.to_owned(),
    }
}

/// Percent-encodes one path segment.
fn segment(value: &str) -> percent_encoding::PercentEncode<'_> {
    utf8_percent_encode(value, PATH_SEGMENT)
}

impl Client {
    /// A client with the default time limits (5 s connect, 30 s per request).
    pub fn new(config: ServerConfig) -> Result<Client, Error> {
        Self::with_timeouts(config, Timeouts::default())
    }

    /// A client with explicit time limits (tests use short ones).
    pub fn with_timeouts(config: ServerConfig, timeouts: Timeouts) -> Result<Client, Error> {
        let raw = config.base_url.trim();
        // Messages never show a password written into the URL.
        let shown = redact_userinfo(raw);
        let mut url =
            reqwest::Url::parse(raw).map_err(|e| Error::InvalidUrl(format!("{shown}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::InvalidUrl(format!(
                "{shown}: only http and https are supported"
            )));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(Error::InvalidUrl(format!(
                "{shown}: a query or fragment is not allowed"
            )));
        }
        // `http://opencode:secret@host` works too; an explicit password wins.
        let url_password = url.password().map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        });
        let password = config.password.clone().or(url_password);
        // Userinfo never goes on the wire in the URL nor into error messages.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        let base = url.as_str().trim_end_matches('/').to_owned();
        let loopback = url.host_str().is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });

        let auth = match &password {
            Some(password) => {
                let token = base64::engine::general_purpose::STANDARD
                    .encode(format!("{USERNAME}:{password}"));
                let mut value = HeaderValue::from_str(&format!("Basic {token}"))
                    .map_err(|e| Error::InvalidUrl(format!("password cannot be sent: {e}")))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };

        let mut builder = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .tcp_keepalive(Some(Duration::from_secs(30)))
            .pool_idle_timeout(Some(Duration::from_secs(60)));
        if loopback {
            // A proxy from the environment must never see loopback traffic (or its password).
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| Error::InvalidUrl(format!("{base}: {}", describe_reqwest(e))))?;
        Ok(Client {
            inner: Arc::new(Inner {
                config: ServerConfig {
                    base_url: base.clone(),
                    password,
                },
                base,
                http,
                auth,
                timeouts,
            }),
        })
    }

    /// The server's base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// The configuration the client uses (base URL normalised).
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The time limits in use.
    pub fn timeouts(&self) -> Timeouts {
        self.inner.timeouts
    }

    fn call(&self, method: Method, path: String, query: &[(&str, &str)]) -> Call {
        let mut url = String::with_capacity(self.inner.base.len() + path.len() + 16);
        url.push_str(&self.inner.base);
        url.push_str(&path);
        let mut first = true;
        for (key, value) in query {
            url.push(if first { '?' } else { '&' });
            first = false;
            url.extend(utf8_percent_encode(key, QUERY_VALUE));
            url.push('=');
            url.extend(utf8_percent_encode(value, QUERY_VALUE));
        }
        Call { method, path, url }
    }

    fn builder(&self, call: &Call, timeout: Option<Duration>) -> RequestBuilder {
        let mut request = self.inner.http.request(call.method.clone(), &call.url);
        if let Some(auth) = &self.inner.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        request
    }

    fn transport(&self, call: &Call, error: reqwest::Error) -> Error {
        transport(call, error)
    }

    /// Sends the request and turns non-2xx answers into errors.
    async fn send(&self, call: &Call, request: RequestBuilder) -> Result<Response, Error> {
        let response = request.send().await.map_err(|e| self.transport(call, e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        Err(match status {
            StatusCode::UNAUTHORIZED => Error::Unauthorized,
            StatusCode::NOT_FOUND => Error::NotFound {
                what: not_found_what(&body).unwrap_or_else(|| call.label()),
            },
            _ => Error::Status {
                status: status.as_u16(),
                body: truncate(body.trim(), BODY_LIMIT),
            },
        })
    }

    /// Reads a JSON body, naming the route when it is not what was promised.
    async fn read_json<T: DeserializeOwned>(
        &self,
        call: &Call,
        response: Response,
    ) -> Result<T, Error> {
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport(call, e))?;
        decode(call, &bytes)
    }

    async fn get_json<T: DeserializeOwned>(
        &self,
        path: String,
        query: &[(&str, &str)],
    ) -> Result<T, Error> {
        let call = self.call(Method::GET, path, query);
        let response = self
            .send(
                &call,
                self.builder(&call, Some(self.inner.timeouts.request)),
            )
            .await?;
        self.read_json(&call, response).await
    }

    async fn send_json<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: String,
        query: &[(&str, &str)],
        body: Option<&B>,
        timeout: Option<Duration>,
    ) -> Result<(Call, Response), Error> {
        let call = self.call(method, path, query);
        let mut request = self.builder(&call, timeout);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = self.send(&call, request).await?;
        Ok((call, response))
    }

    /// `GET /global/health`.
    pub async fn health(&self) -> Result<Health, Error> {
        self.get_json("/global/health".into(), &[]).await
    }

    /// `GET /config/providers`: connected providers with their models sorted by name, each
    /// model's variants (the keys of its `variants` object, in the server's order), and the
    /// default model per provider.
    pub async fn providers(&self, directory: Option<&str>) -> Result<ProviderCatalog, Error> {
        let raw: RawCatalog = self
            .get_json("/config/providers".into(), &dir_query(directory))
            .await?;
        Ok(raw.into_catalog())
    }

    /// `GET /agent`.
    pub async fn agents(&self, directory: Option<&str>) -> Result<Vec<AgentInfo>, Error> {
        self.get_json("/agent".into(), &dir_query(directory)).await
    }

    /// `GET /command`: the server's slash commands.
    pub async fn commands(&self, directory: Option<&str>) -> Result<Vec<CommandInfo>, Error> {
        self.get_json("/command".into(), &dir_query(directory))
            .await
    }

    /// `GET /path`: the folder the server runs in.
    pub async fn server_path(&self) -> Result<ServerPath, Error> {
        self.get_json("/path".into(), &[]).await
    }

    /// `GET /project`: the projects (worktrees) the server knows.
    pub async fn projects(&self) -> Result<Vec<Project>, Error> {
        self.get_json("/project".into(), &[]).await
    }

    /// `GET /session[?directory=]`: without a directory, the sessions of the server's own
    /// project; with one, only that directory's. Every one of them: see [`Client::page_through`].
    pub async fn list_sessions(&self, directory: Option<&str>) -> Result<Vec<Session>, Error> {
        let query = dir_query(directory);
        self.page_through("/session", &query).await
    }

    /// `GET /experimental/session?archived=true`: every session of every project, the
    /// catch-all `global` project of non-git folders included (each listed with its project).
    pub async fn list_sessions_everywhere(&self) -> Result<Vec<Session>, Error> {
        self.page_through("/experimental/session", &[("archived", "true")])
            .await
    }

    /// Asks a session listing with `limit` and asks again with twice the limit while the
    /// answer is full. OpenCode answers only its newest 100 sessions without a `limit`, and its
    /// `start`/`cursor` parameters are lower/upper bounds on `time.updated` (sessions updated in
    /// the same millisecond would be skipped), so a growing limit is the way to get them all.
    async fn page_through(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<Session>, Error> {
        let mut limit = SESSION_PAGE;
        loop {
            let limit_text = limit.to_string();
            let mut asked = query.to_vec();
            asked.push(("limit", &limit_text));
            let page: Vec<Session> = self.get_json(path.to_owned(), &asked).await?;
            if page.len() < limit || limit >= MAX_SESSION_LIMIT {
                return Ok(page);
            }
            limit = limit.saturating_mul(2).min(MAX_SESSION_LIMIT);
        }
    }

    /// Every session the server knows, across projects, each once, with the listings that
    /// failed.
    ///
    /// `GET /session` alone only lists the project the server was started in; the sessions of
    /// other projects are reachable only by naming a directory, and those of non-git folders
    /// (the `global` project, worktree `/`) only folder by folder or through the cross-project
    /// listing. So this lists the server's own project, each project's worktree from
    /// [`Client::projects`] and the cross-project listing (concurrently), and merges them by id,
    /// keeping the copy with the newest `time.updated`. A listing that fails is reported in
    /// [`SessionListing::failures`] with the project it covers, and the others are kept: the
    /// caller must not take the sessions of a failed project as gone.
    pub async fn list_all_sessions(&self) -> SessionListing {
        let mut failures = Vec::new();
        let (root, projects, everywhere) = futures_util::future::join3(
            self.list_sessions(None),
            self.projects(),
            self.list_sessions_everywhere(),
        )
        .await;
        let projects = projects.unwrap_or_else(|error| {
            failures.push(ListingFailure {
                project_id: None,
                listing: "GET /project".into(),
                error,
            });
            Vec::new()
        });
        let mut worktrees: Vec<(&str, &str)> = projects
            .iter()
            .filter(|p| !p.worktree.is_empty() && p.worktree != "/")
            .map(|p| (p.id.as_str(), p.worktree.as_str()))
            .collect();
        worktrees.sort_unstable();
        worktrees.dedup();
        let listings = futures_util::future::join_all(
            worktrees.iter().map(|(_, w)| self.list_sessions(Some(w))),
        )
        .await;
        let mut lists = Vec::new();
        match root {
            Ok(list) => lists.push(list),
            Err(error) => failures.push(ListingFailure {
                project_id: None,
                listing: "GET /session".into(),
                error,
            }),
        }
        for ((project_id, worktree), listing) in worktrees.iter().zip(listings) {
            match listing {
                Ok(list) => lists.push(list),
                Err(error) => failures.push(ListingFailure {
                    project_id: Some((*project_id).to_owned()),
                    listing: format!("GET /session?directory={worktree}"),
                    error,
                }),
            }
        }
        match everywhere {
            Ok(list) => lists.push(list),
            Err(error) => failures.push(ListingFailure {
                project_id: Some(GLOBAL_PROJECT.to_owned()),
                listing: "GET /experimental/session".into(),
                error,
            }),
        }
        let mut by_id: HashMap<String, Session> = HashMap::new();
        let mut order = Vec::new();
        for session in lists.into_iter().flatten() {
            match by_id.get_mut(&session.id) {
                Some(known) => {
                    if session.time.updated > known.time.updated {
                        *known = session;
                    }
                }
                None => {
                    order.push(session.id.clone());
                    by_id.insert(session.id.clone(), session);
                }
            }
        }
        let sessions = order
            .into_iter()
            .filter_map(|id| by_id.remove(&id))
            .collect();
        SessionListing { sessions, failures }
    }

    /// `GET /session/:id`; an unknown id is [`Error::NotFound`].
    pub async fn get_session(&self, id: &str) -> Result<Session, Error> {
        self.get_json(format!("/session/{}", segment(id)), &[])
            .await
    }

    /// `POST /session?directory=`: a new session in `directory`. `metadata` is only sent when set.
    pub async fn create_session(
        &self,
        directory: &str,
        req: &CreateSession,
    ) -> Result<Session, Error> {
        let timeout = Some(self.inner.timeouts.request);
        let (call, response) = self
            .send_json(
                Method::POST,
                "/session".into(),
                &[("directory", directory)],
                Some(req),
                timeout,
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `PATCH /session/:id`. The server REPLACES `metadata` whole with what is sent (`{}` clears
    /// it); read-modify-write belongs to the caller, which must serialise writes per session.
    pub async fn update_session(&self, id: &str, patch: &SessionPatch) -> Result<Session, Error> {
        let timeout = Some(self.inner.timeouts.request);
        let path = format!("/session/{}", segment(id));
        let (call, response) = self
            .send_json(Method::PATCH, path, &[], Some(patch), timeout)
            .await?;
        self.read_json(&call, response).await
    }

    /// `DELETE /session/:id`; an unknown id is [`Error::NotFound`].
    pub async fn delete_session(&self, id: &str) -> Result<(), Error> {
        let timeout = Some(self.inner.timeouts.request);
        let path = format!("/session/{}", segment(id));
        let (call, response) = self
            .send_json::<()>(Method::DELETE, path, &[], None, timeout)
            .await?;
        drain(&call, response).await
    }

    /// `GET /session/:id/message[?limit=&before=]`: messages oldest first. With `limit`, the
    /// newest `limit` messages before `before`, and the cursor of the older page (from the
    /// `X-Next-Cursor` header) when there is one; a cursor equal to `before` is none.
    pub async fn messages(
        &self,
        id: &str,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<MessagePage, Error> {
        let limit_text = limit.map(|l| l.to_string());
        let mut query: Vec<(&str, &str)> = Vec::with_capacity(2);
        if let Some(limit) = &limit_text {
            query.push(("limit", limit));
        }
        if let Some(before) = before {
            query.push(("before", before));
        }
        let call = self.call(
            Method::GET,
            format!("/session/{}/message", segment(id)),
            &query,
        );
        let response = self
            .send(
                &call,
                self.builder(&call, Some(self.inner.timeouts.request)),
            )
            .await?;
        let next_cursor = response
            .headers()
            .get("x-next-cursor")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            // A server that hands back the cursor it was given would make callers page forever.
            .filter(|v| Some(*v) != before)
            .map(str::to_owned);
        let messages: Vec<MessageWithParts> = self.read_json(&call, response).await?;
        Ok(MessagePage {
            messages,
            next_cursor,
        })
    }

    /// `POST /session/:id/prompt_async`: queues the prompt and returns at once (204); follow the
    /// turn on the event stream. A [`Error::Transport`] here means "maybe delivered".
    pub async fn prompt_async(&self, id: &str, req: &PromptRequest) -> Result<(), Error> {
        let timeout = Some(self.inner.timeouts.request);
        let path = format!("/session/{}/prompt_async", segment(id));
        let (call, response) = self
            .send_json(Method::POST, path, &[], Some(req), timeout)
            .await?;
        drain(&call, response).await
    }

    /// `POST /session/:id/command`: runs a slash command and blocks until its turn ends
    /// (uses [`Timeouts::long`]). Returns the server's answer (the assistant message) as sent.
    pub async fn command(
        &self,
        id: &str,
        req: &CommandRequest,
    ) -> Result<serde_json::Value, Error> {
        let path = format!("/session/{}/command", segment(id));
        let (call, response) = self
            .send_json(Method::POST, path, &[], Some(req), self.inner.timeouts.long)
            .await?;
        self.read_json(&call, response).await
    }

    /// `POST /session/:id/abort`: stops the session's running turn.
    pub async fn abort(&self, id: &str) -> Result<(), Error> {
        let timeout = Some(self.inner.timeouts.request);
        let path = format!("/session/{}/abort", segment(id));
        let (call, response) = self
            .send_json::<()>(Method::POST, path, &[], None, timeout)
            .await?;
        drain(&call, response).await
    }

    /// `GET /session/status`: run states by session id. Only non-idle sessions are listed, so
    /// a session missing here is idle.
    pub async fn statuses(
        &self,
        directory: Option<&str>,
    ) -> Result<HashMap<String, SessionStatus>, Error> {
        self.get_json("/session/status".into(), &dir_query(directory))
            .await
    }

    /// `GET /permission[?directory=]`: the permission requests still waiting for an answer.
    pub async fn permissions(
        &self,
        directory: Option<&str>,
    ) -> Result<Vec<PermissionRequest>, Error> {
        self.get_json("/permission".into(), &dir_query(directory))
            .await
    }

    /// `POST /permission/:id/reply[?directory=]`: answers a permission request with `once`,
    /// `always` or `reject` (and an optional message). Pending requests live in the server's
    /// instance of a directory, so pass the session's directory; an unknown or already answered
    /// id is [`Error::NotFound`].
    pub async fn reply_permission(
        &self,
        request_id: &str,
        reply: &str,
        message: Option<&str>,
        directory: Option<&str>,
    ) -> Result<(), Error> {
        let timeout = Some(self.inner.timeouts.request);
        let path = format!("/permission/{}/reply", segment(request_id));
        let body = PermissionReply { reply, message };
        let (call, response) = self
            .send_json(
                Method::POST,
                path,
                &dir_query(directory),
                Some(&body),
                timeout,
            )
            .await?;
        drain(&call, response).await
    }

    /// `GET /question[?directory=]`: the questions still waiting for an answer.
    pub async fn questions(&self, directory: Option<&str>) -> Result<Vec<QuestionRequest>, Error> {
        self.get_json("/question".into(), &dir_query(directory))
            .await
    }

    /// `POST /question/:id/reply[?directory=]` with the labels picked per question, or
    /// `POST /question/:id/reject` when `answers` is `None`. An unknown or already answered id
    /// is [`Error::NotFound`].
    pub async fn answer_question(
        &self,
        request_id: &str,
        answers: Option<&[Vec<String>]>,
        directory: Option<&str>,
    ) -> Result<(), Error> {
        let timeout = Some(self.inner.timeouts.request);
        let (call, response) = match answers {
            Some(answers) => {
                let path = format!("/question/{}/reply", segment(request_id));
                let body = QuestionReply { answers };
                self.send_json(
                    Method::POST,
                    path,
                    &dir_query(directory),
                    Some(&body),
                    timeout,
                )
                .await?
            }
            None => {
                let path = format!("/question/{}/reject", segment(request_id));
                self.send_json::<()>(Method::POST, path, &dir_query(directory), None, timeout)
                    .await?
            }
        };
        drain(&call, response).await
    }

    /// `POST /session[?directory=]` with a body built by the caller (a `permission` ruleset, a
    /// model): the cold review's scratch sessions. Without a directory the server's own.
    pub async fn create_session_value(
        &self,
        directory: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<Session, Error> {
        let timeout = Some(self.inner.timeouts.request);
        let (call, response) = self
            .send_json(
                Method::POST,
                "/session".into(),
                &dir_query(directory),
                Some(body),
                timeout,
            )
            .await?;
        self.read_json(&call, response).await
    }

    /// `POST /session/:id/message`: sends a prompt (`parts`, `system`, `model`, `tools`, ...)
    /// and blocks until the turn ends, within `timeout`; returns the assistant message as sent.
    pub async fn prompt_blocking(
        &self,
        id: &str,
        body: &serde_json::Value,
        timeout: Duration,
    ) -> Result<MessageWithParts, Error> {
        let path = format!("/session/{}/message", segment(id));
        let (call, response) = self
            .send_json(Method::POST, path, &[], Some(body), Some(timeout))
            .await?;
        self.read_json(&call, response).await
    }

    /// The request that opens `GET /global/event` (auth set, no overall timeout: the stream
    /// lives for as long as the server does and is watched by its heartbeat).
    pub fn event_stream_request(&self) -> RequestBuilder {
        let call = self.event_call();
        self.builder(&call, None)
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
    }

    /// The URL of the global event stream, for messages.
    pub fn event_stream_url(&self) -> String {
        self.event_call().url
    }

    fn event_call(&self) -> Call {
        self.call(Method::GET, "/global/event".into(), &[])
    }
}

fn dir_query(directory: Option<&str>) -> Vec<(&str, &str)> {
    directory
        .map(|d| vec![("directory", d)])
        .unwrap_or_default()
}

/// Parses a JSON body or says which route sent something else.
fn decode<T: DeserializeOwned>(call: &Call, bytes: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(bytes).map_err(|e| {
        let text = String::from_utf8_lossy(bytes);
        let preview = truncate(text.trim(), 120);
        Error::Decode {
            what: call.label(),
            message: if preview.is_empty() {
                format!("{e} (empty body)")
            } else {
                format!("{e} (body: {preview})")
            },
        }
    })
}

/// Reads and discards a body whose content does not matter (`true`, empty, ...).
async fn drain(call: &Call, response: Response) -> Result<(), Error> {
    response
        .bytes()
        .await
        .map(|_| ())
        .map_err(|e| transport(call, e))
}

/// A failed exchange as [`Error::Transport`]; a time-out after the connection was made says
/// the server is slow.
fn transport(call: &Call, error: reqwest::Error) -> Error {
    let timed_out = error.is_timeout() && !error.is_connect();
    Error::Transport {
        url: call.url.clone(),
        message: describe_reqwest(error),
        timed_out,
    }
}

/// The message of a `{"name":"NotFoundError","data":{"message":...}}` body.
fn not_found_what(body: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Data {
        message: String,
    }
    #[derive(Deserialize)]
    struct NotFoundBody {
        data: Data,
    }
    serde_json::from_str::<NotFoundBody>(body)
        .ok()
        .map(|b| b.data.message)
        .filter(|m| !m.trim().is_empty())
        .map(|m| truncate(m.trim(), BODY_LIMIT))
}

/// `GET /config/providers` as the server sends it (only what the picker needs).
#[derive(Deserialize)]
struct RawCatalog {
    providers: Vec<RawProvider>,
    #[serde(default, deserialize_with = "lenient")]
    default: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct RawProvider {
    id: String,
    #[serde(default, deserialize_with = "lenient")]
    name: String,
    #[serde(default)]
    models: Entries<RawModel>,
}

#[derive(Deserialize)]
struct RawModel {
    #[serde(default, deserialize_with = "lenient")]
    id: String,
    #[serde(default, deserialize_with = "lenient")]
    name: String,
    #[serde(default)]
    variants: Entries<IgnoredAny>,
}

impl RawCatalog {
    fn into_catalog(self) -> ProviderCatalog {
        let providers = self
            .providers
            .into_iter()
            .map(|p| {
                let mut models: Vec<ModelInfo> = p
                    .models
                    .0
                    .into_iter()
                    .map(|(key, m)| {
                        let id = if m.id.is_empty() { key } else { m.id };
                        let name = if m.name.is_empty() {
                            id.clone()
                        } else {
                            m.name
                        };
                        ModelInfo {
                            id,
                            name,
                            variants: m.variants.0.into_iter().map(|(key, _)| key).collect(),
                        }
                    })
                    .collect();
                models.sort_by(|a, b| {
                    a.name
                        .to_lowercase()
                        .cmp(&b.name.to_lowercase())
                        .then_with(|| a.name.cmp(&b.name))
                        .then_with(|| a.id.cmp(&b.id))
                });
                let name = if p.name.is_empty() {
                    p.id.clone()
                } else {
                    p.name
                };
                ProviderInfo {
                    id: p.id,
                    name,
                    models,
                }
            })
            .collect();
        ProviderCatalog {
            providers,
            default: self.default,
        }
    }
}

/// The entries of a JSON object in the order they were sent. An entry of the wrong shape is
/// skipped; anything but an object gives no entries.
struct Entries<T>(Vec<(String, T)>);

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntriesVisitor(std::marker::PhantomData))
    }
}

struct EntriesVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for EntriesVisitor<T> {
    type Value = Entries<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let raw: Box<RawValue> = map.next_value()?;
            if let Ok(value) = serde_json::from_str::<T>(raw.get()) {
                entries.push((key, value));
            }
        }
        Ok(Entries(entries))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Entries::default())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Entries::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(base: &str) -> Client {
        Client::new(ServerConfig {
            base_url: base.into(),
            password: None,
        })
        .expect("client")
    }

    #[test]
    fn urls_are_built_and_encoded() {
        let c = client("http://127.0.0.1:4096/");
        assert_eq!(c.base_url(), "http://127.0.0.1:4096");
        let call = c.call(
            Method::GET,
            format!("/session/{}", segment("ses_1/../x")),
            &[("directory", "/a b/é?&=#")],
        );
        assert_eq!(
            call.url,
            "http://127.0.0.1:4096/session/ses_1%2F..%2Fx?directory=/a%20b/%C3%A9%3F%26%3D%23"
        );
        let prefixed = client("https://example.com/opencode/");
        assert_eq!(
            prefixed.call(Method::GET, "/agent".into(), &[]).url,
            "https://example.com/opencode/agent"
        );
    }

    #[test]
    fn passwords_in_bad_urls_stay_out_of_messages() {
        let err = Client::new(ServerConfig {
            base_url: "http://opencode:hunter2@h:1/?q".into(),
            password: None,
        });
        let message = err.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("http://…@h:1/?q") && !message.contains("hunter2"),
            "{message}"
        );
        assert_eq!(redact_userinfo("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn bad_urls_are_refused() {
        for bad in [
            "",
            "127.0.0.1:4096",
            "ftp://host",
            "http://h/?x=1",
            "not a url",
        ] {
            let err = Client::new(ServerConfig {
                base_url: bad.into(),
                password: None,
            })
            .err();
            assert!(matches!(err, Some(Error::InvalidUrl(_))), "{bad}: {err:?}");
        }
    }

    #[test]
    fn credentials_in_the_url_become_basic_auth_and_leave_the_url() {
        let c = client("http://opencode:s%40cret@127.0.0.1:1");
        assert_eq!(c.base_url(), "http://127.0.0.1:1");
        assert_eq!(c.config().password.as_deref(), Some("s@cret"));
        assert!(!format!("{:?}", c.config()).contains("s@cret"));
    }

    #[test]
    fn provider_catalog_is_mapped() {
        let body = r#"{"providers":[{"id":"p","name":"P","source":"config","env":[],"options":{},"models":{
            "zeta":{"id":"zeta","name":"Zeta","variants":{"low":{},"medium":{},"high":{}}},
            "alpha":{"id":"alpha","name":"alpha"},
            "noname":{"variants":null},
            "broken":5}}],"default":{"p":"zeta"}}"#;
        let call = client("http://127.0.0.1:1").call(Method::GET, "/config/providers".into(), &[]);
        let catalog = decode::<RawCatalog>(&call, body.as_bytes())
            .expect("decodes")
            .into_catalog();
        let models = &catalog.providers[0].models;
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["alpha", "noname", "Zeta"]);
        assert_eq!(models[2].variants, ["low", "medium", "high"]);
        assert!(models[1].variants.is_empty());
        assert_eq!(catalog.default.get("p").map(String::as_str), Some("zeta"));
    }
}
