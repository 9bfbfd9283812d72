//! The review config: `<config_dir>/review.json` (the user's), and per project
//! `<cwd>/.crosscheck/review.json` (the repository's).
//!
//! The user file may set every field; missing fields keep their defaults and unknown keys are
//! an error that names the file and the key. The project file comes with the repository, which
//! is untrusted (the agent under review writes to it, and a cloned repository is anyone's): it
//! may only make the review stricter, so it can raise the floor and nothing else. Providers,
//! base URLs, keys, headers, routes, ranks, time-outs and sizes come from the user's file and
//! the environment alone. Anything else in a project file, and a project file that cannot be
//! read or parsed, is ignored with a warning ([`Config::warnings`]); the review still runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::paths::CONFIG_FILE;
use crate::rank::{RankRule, default_ranks, glob_match, normalize_model_id};

/// Default base timeout for one reviewer call.
pub const DEFAULT_REVIEW_TIMEOUT_MS: u64 = 90_000;
/// Default extra timeout per 1000 characters sent (timeouts grow with input size).
pub const DEFAULT_TIMEOUT_MS_PER_1000_CHARS: u64 = 500;
/// Default `max_tokens` of a reviewer call.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// Default size limit of the text sent to the reviewer, in characters.
pub const DEFAULT_MAX_INPUT_CHARS: usize = 60_000;
/// Default floor model: a Sonnet.
pub const DEFAULT_FLOOR_MODEL: &str = "claude-sonnet-4-5";
/// Default ledger bound: the oldest rows beyond this are pruned.
pub const DEFAULT_LEDGER_MAX_ROWS: u64 = 5000;
/// Default `anthropic-version` header.
pub const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where the environment comes from (the process, or a fixed map in tests and embedders).
#[derive(Debug, Clone, Default)]
pub enum Env {
    /// `std::env::var`.
    #[default]
    Process,
    /// A fixed map; variables absent from it are unset.
    Map(BTreeMap<String, String>),
}

impl Env {
    /// A variable's value, treating empty as unset.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match self {
            Self::Process => std::env::var(name).ok(),
            Self::Map(map) => map.get(name).cloned(),
        };
        value.filter(|v| !v.trim().is_empty())
    }
}

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProviderKind {
    /// Anthropic Messages: `POST {baseUrl}/v1/messages`, `x-api-key`, `anthropic-version`.
    Anthropic,
    /// OpenAI-compatible chat completions: `POST {baseUrl}/chat/completions`, bearer auth.
    /// The base URL includes the version segment (`https://api.openai.com/v1`), as
    /// `OPENAI_BASE_URL` conventionally does.
    Openai,
}

/// One provider entry of the config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL; wins over `baseUrlEnv`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable holding the base URL.
    #[serde(default)]
    pub base_url_env: Option<String>,
    /// API key; wins over `apiKeyEnv`.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `anthropic-version` header (Anthropic only).
    #[serde(default)]
    pub anthropic_version: Option<String>,
    /// Name of the max-tokens field (OpenAI-compatible only): `max_tokens` (default) or
    /// `max_completion_tokens`.
    #[serde(default)]
    pub max_tokens_field: Option<String>,
    /// Extra request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl ProviderConfig {
    fn default_url(&self) -> &'static str {
        match self.kind {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai => "https://api.openai.com/v1",
        }
    }
}

/// Sends reviewer ids matching `pattern` (a `*` glob on the normalised id) to `provider`,
/// optionally under another model id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Route {
    /// Glob on the normalised model id.
    pub pattern: String,
    /// Name of a provider in `providers`.
    pub provider: String,
    /// Model id to send instead of the reviewer id.
    #[serde(default)]
    pub model: Option<String>,
}

/// Which way reviewer calls go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ReviewerRoute {
    /// Direct provider keys when the reviewer has a usable one, else OpenCode's providers.
    #[default]
    Auto,
    /// Only the direct providers (`providers`, API keys from the environment or this file).
    Direct,
    /// Only OpenCode's providers, in a fresh tool-less session per review.
    Opencode,
}

impl ReviewerRoute {
    /// The config value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Direct => "direct",
            Self::Opencode => "opencode",
        }
    }
}

/// The OpenCode server the gate reviews through (the app uses the one it is connected to).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpencodeServer {
    /// Base URL; wins over `CROSSCHECK_OPENCODE_URL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Server password; wins over `passwordEnv` and `OPENCODE_SERVER_PASSWORD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// Environment variable holding the password (default `OPENCODE_SERVER_PASSWORD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

/// The variable that names the OpenCode server when the config does not.
pub const OPENCODE_URL_ENV: &str = "CROSSCHECK_OPENCODE_URL";
/// The variable holding the OpenCode server's password by default.
pub const OPENCODE_PASSWORD_ENV: &str = "OPENCODE_SERVER_PASSWORD";

/// The effective config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// Base timeout of one reviewer call (`reviewTimeoutMs`).
    pub review_timeout_ms: u64,
    /// Extra timeout per 1000 characters sent (`reviewTimeoutMsPer1000Chars`).
    #[serde(rename = "reviewTimeoutMsPer1000Chars")]
    pub review_timeout_ms_per_1000_chars: u64,
    /// `max_tokens` of a reviewer call.
    pub max_tokens: u32,
    /// Size limit of the text sent, in characters; longer text is cut with a visible marker.
    pub max_input_chars: usize,
    /// The floor model.
    pub floor_model: String,
    /// Rank table: first matching pattern wins; unknown ids rank below the floor.
    pub ranks: Vec<RankRule>,
    /// Providers by name; `anthropic` and `openai` are built in.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Routes from reviewer ids to providers, tried in order before the built-in rule
    /// (`claude-*` → `anthropic`, everything else → `openai`).
    pub routes: Vec<Route>,
    /// Ledger bound.
    pub ledger_max_rows: u64,
    /// Which way reviewer calls go (`route`).
    pub route: ReviewerRoute,
    /// The OpenCode server of the gate (`opencode`).
    pub opencode: OpencodeServer,
    /// The user's floor (before a project file raised it): the last resort when the chosen
    /// reviewer has no usable provider.
    #[serde(skip)]
    pub user_floor_model: String,
    /// What was ignored in the project file, and why (shown with the decision).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        let mut providers = BTreeMap::new();
        providers.insert(
            "anthropic".to_owned(),
            ProviderConfig {
                kind: ProviderKind::Anthropic,
                base_url: None,
                base_url_env: Some("ANTHROPIC_BASE_URL".into()),
                api_key: None,
                api_key_env: Some("ANTHROPIC_API_KEY".into()),
                anthropic_version: None,
                max_tokens_field: None,
                headers: BTreeMap::new(),
            },
        );
        providers.insert(
            "openai".to_owned(),
            ProviderConfig {
                kind: ProviderKind::Openai,
                base_url: None,
                base_url_env: Some("OPENAI_BASE_URL".into()),
                api_key: None,
                api_key_env: Some("OPENAI_API_KEY".into()),
                anthropic_version: None,
                max_tokens_field: None,
                headers: BTreeMap::new(),
            },
        );
        Self {
            review_timeout_ms: DEFAULT_REVIEW_TIMEOUT_MS,
            review_timeout_ms_per_1000_chars: DEFAULT_TIMEOUT_MS_PER_1000_CHARS,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_input_chars: DEFAULT_MAX_INPUT_CHARS,
            floor_model: DEFAULT_FLOOR_MODEL.to_owned(),
            ranks: default_ranks(),
            providers,
            routes: Vec::new(),
            ledger_max_rows: DEFAULT_LEDGER_MAX_ROWS,
            route: ReviewerRoute::Auto,
            opencode: OpencodeServer::default(),
            user_floor_model: DEFAULT_FLOOR_MODEL.to_owned(),
            warnings: Vec::new(),
        }
    }
}

/// The on-disk shape: every field optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfigFile {
    #[serde(rename = "$schema")]
    _schema: Option<String>,
    review_timeout_ms: Option<u64>,
    #[serde(rename = "reviewTimeoutMsPer1000Chars")]
    review_timeout_ms_per_1000_chars: Option<u64>,
    max_tokens: Option<u32>,
    max_input_chars: Option<usize>,
    floor_model: Option<String>,
    ranks: Option<Vec<RankRule>>,
    providers: Option<BTreeMap<String, ProviderConfig>>,
    routes: Option<Vec<Route>>,
    ledger_max_rows: Option<u64>,
    route: Option<ReviewerRoute>,
    opencode: Option<OpencodeServer>,
}

/// Which vendor's built-in provider a model id belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vendor {
    Anthropic,
    Openai,
    Other,
}

fn vendor_of(normalized: &str) -> Vendor {
    let o_series = |p: &str| {
        normalized
            .strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    };
    if normalized.starts_with("claude") {
        Vendor::Anthropic
    } else if normalized.starts_with("gpt-")
        || normalized.starts_with("chatgpt-")
        || normalized.starts_with("codex-")
        || ["o1", "o3", "o4", "o4-mini"].into_iter().any(o_series)
    {
        Vendor::Openai
    } else {
        Vendor::Other
    }
}

/// A provider ready to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedProvider {
    /// The provider's name in the config.
    pub name: String,
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Base URL without a trailing slash.
    pub base_url: String,
    /// Whether the base URL is the vendor's default (a missing key is then an auth failure).
    pub default_url: bool,
    /// API key, if any.
    pub api_key: Option<String>,
    /// `anthropic-version` header value.
    pub anthropic_version: String,
    /// Name of the max-tokens field.
    pub max_tokens_field: String,
    /// Extra headers.
    pub headers: BTreeMap<String, String>,
    /// The model id to send.
    pub model: String,
    /// The variable the key is read from, for the message when it is missing.
    pub key_var: Option<String>,
}

/// Whether a file's mode lets the group or others read it (Unix; never elsewhere).
fn readable_by_others(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o044 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Largest project file read; a bigger one is ignored with a warning.
pub const MAX_PROJECT_FILE_BYTES: u64 = 64 * 1024;

/// The fields only the user's own file may set (a project file setting one is warned about).
const USER_ONLY_FIELDS: &[&str] = &[
    "reviewTimeoutMs",
    "reviewTimeoutMsPer1000Chars",
    "maxTokens",
    "maxInputChars",
    "ranks",
    "providers",
    "routes",
    "ledgerMaxRows",
    "route",
    "opencode",
];

impl ResolvedProvider {
    /// Whether a call can succeed at all: a key, or a server of the user's own (local
    /// servers may need none). The vendor's URL without a key is not usable.
    pub fn usable(&self) -> bool {
        self.api_key.is_some() || !self.default_url
    }

    /// Why [`Self::usable`] is false, in one sentence that says what to do.
    pub fn unusable_reason(&self) -> String {
        let var = self.key_var.clone().unwrap_or_else(|| {
            match self.kind {
                ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
                ProviderKind::Openai => "OPENAI_API_KEY",
            }
            .to_owned()
        });
        format!(
            "no API key for {}: set {var} or choose OpenCode's providers in Settings",
            self.name
        )
    }
}

impl Config {
    /// Loads `<config_dir>/review.json` over the defaults, then applies what a project file
    /// `<cwd>/.crosscheck/review.json` may set (see the module doc). An absent user file is
    /// fine; an unreadable or invalid one is an [`Error::Config`]. The project file never
    /// makes this fail: what it cannot set, or cannot say, lands in [`Config::warnings`].
    pub fn load(config_dir: &Path, cwd: Option<&Path>) -> Result<Self> {
        let mut config = Self::default();
        let user_file = config_dir.join(CONFIG_FILE);
        config.apply_file(&user_file)?;
        config.user_floor_model = config.floor_model.clone();
        if (config.providers.values().any(|p| p.api_key.is_some())
            || config.opencode.password.is_some())
            && readable_by_others(&user_file)
        {
            config.warnings.push(format!(
                "{} holds an API key or password and other users can read it; make it private (chmod 600)",
                user_file.display()
            ));
        }
        if let Some(cwd) = cwd {
            config.apply_project_file(&cwd.join(".crosscheck").join(CONFIG_FILE));
        }
        Ok(config)
    }

    /// Applies a project file's text: only a floor that ranks above the current one is taken;
    /// everything else is a warning (exposed for tests).
    pub fn apply_project_json(&mut self, path: &Path, text: &str) {
        let shown = path.display();
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                self.warnings.push(format!(
                    "{shown} is not valid JSON ({e}); the project file is ignored"
                ));
                return;
            }
        };
        let Some(object) = value.as_object() else {
            self.warnings.push(format!(
                "{shown} is not a JSON object; the project file is ignored"
            ));
            return;
        };
        for (key, value) in object {
            match key.as_str() {
                "$schema" => {}
                "floorModel" => self.raise_floor(&shown.to_string(), value),
                k if USER_ONLY_FIELDS.contains(&k) => self.warnings.push(format!(
                    "{shown} sets `{k}`, which only your own review.json may set \
                     (providers, base URLs, keys, headers, routes, ranks, time-outs and sizes \
                     never come from a repository); ignored"
                )),
                k => self.warnings.push(format!(
                    "{shown}: unknown field `{k}` (a project file may set only `floorModel`); ignored"
                )),
            }
        }
    }

    fn raise_floor(&mut self, shown: &str, value: &serde_json::Value) {
        let Some(model) = value.as_str().map(str::trim).filter(|m| !m.is_empty()) else {
            self.warnings
                .push(format!("{shown}: `floorModel` must be a model id; ignored"));
            return;
        };
        let current = crate::rank::rank_of(&self.ranks, &self.floor_model);
        let raises = match (crate::rank::rank_of(&self.ranks, model), current) {
            (Some(new), Some(old)) => new >= old,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !raises {
            self.warnings.push(format!(
                "{shown}: `floorModel` `{model}` does not rank above your floor `{}`; a project \
                 file may only raise the floor; ignored",
                self.floor_model
            ));
        } else if !self.can_serve(model) {
            self.warnings.push(format!(
                "{shown}: `floorModel` `{model}` is not a model your route is known to serve \
                 (not one Crosscheck knows by name, nor one your own review.json names); \
                 ignored, and your floor `{}` reviews",
                self.floor_model
            ));
        } else {
            self.floor_model = model.to_owned();
        }
    }

    /// Whether a repository may name `model` as its floor: the user's route can serve it.
    /// That is a model Crosscheck knows by name ([`crate::rank::KNOWN_MODELS`]), or one the
    /// user's own file names exactly: its `floorModel`, a `ranks` pattern without `*`, or a
    /// route's `pattern` without `*` or its `model`. A rank glob alone is not enough. (The
    /// OpenCode route checks the server's own model list as well; see [`crate::route`].)
    pub fn can_serve(&self, model: &str) -> bool {
        let id = normalize_model_id(model);
        let exact = |pattern: &str| !pattern.contains('*') && normalize_model_id(pattern) == id;
        crate::rank::KNOWN_MODELS.contains(&id.as_str())
            || exact(&self.user_floor_model)
            || self.ranks.iter().any(|r| exact(&r.pattern))
            || self
                .routes
                .iter()
                .any(|r| exact(&r.pattern) || r.model.as_deref().is_some_and(&exact))
    }

    fn apply_project_file(&mut self, path: &Path) {
        use std::io::Read;
        let shown = path.display();
        // Only a regular file is read (a FIFO or device would block or never end), and only
        // up to a bound.
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.warnings.push(format!(
                    "{shown} cannot be read ({e}); the project file is ignored"
                ));
                return;
            }
            Ok(m) if !m.is_file() => {
                self.warnings.push(format!(
                    "{shown} is not a regular file; the project file is ignored"
                ));
                return;
            }
            Ok(m) if m.len() > MAX_PROJECT_FILE_BYTES => {
                self.warnings.push(format!(
                    "{shown} is larger than {MAX_PROJECT_FILE_BYTES} bytes; the project file is ignored"
                ));
                return;
            }
            Ok(_) => {}
        }
        let mut text = String::new();
        let read = std::fs::File::open(path).and_then(|f| {
            f.take(MAX_PROJECT_FILE_BYTES)
                .read_to_string(&mut text)
                .map(|_| ())
        });
        match read {
            Ok(()) => self.apply_project_json(path, &text),
            Err(e) => self.warnings.push(format!(
                "{shown} cannot be read ({e}); the project file is ignored"
            )),
        }
    }

    /// Parses one config file's text over `self` (exposed for tests and the app's editor).
    pub fn apply_json(&mut self, path: &Path, text: &str) -> Result<()> {
        let file: ConfigFile = serde_json::from_str(text).map_err(|e| Error::Config {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let bad = |message: String| Error::Config {
            path: path.to_owned(),
            message,
        };
        if let Some(v) = file.review_timeout_ms {
            if v == 0 {
                return Err(bad("reviewTimeoutMs must be greater than 0".into()));
            }
            self.review_timeout_ms = v;
        }
        if let Some(v) = file.review_timeout_ms_per_1000_chars {
            self.review_timeout_ms_per_1000_chars = v;
        }
        if let Some(v) = file.max_tokens {
            if v == 0 {
                return Err(bad("maxTokens must be greater than 0".into()));
            }
            self.max_tokens = v;
        }
        if let Some(v) = file.max_input_chars {
            if v == 0 {
                return Err(bad("maxInputChars must be greater than 0".into()));
            }
            self.max_input_chars = v;
        }
        if let Some(v) = file.floor_model {
            if v.trim().is_empty() {
                return Err(bad("floorModel must not be empty".into()));
            }
            self.floor_model = v;
        }
        if let Some(v) = file.ranks {
            self.ranks = v;
        }
        if let Some(v) = file.providers {
            self.providers.extend(v);
        }
        if let Some(v) = file.routes {
            self.routes = v;
        }
        if let Some(v) = file.route {
            self.route = v;
        }
        if let Some(v) = file.opencode {
            if let Some(url) = &v.url
                && let Err(e) = validate_opencode_url(url)
            {
                return Err(bad(format!("opencode.url: {e}")));
            }
            self.opencode = v;
        }
        if let Some(v) = file.ledger_max_rows {
            if v == 0 {
                return Err(bad("ledgerMaxRows must be greater than 0".into()));
            }
            self.ledger_max_rows = v;
        }
        for route in &self.routes {
            if !self.providers.contains_key(&route.provider) {
                return Err(bad(format!(
                    "route `{}` names provider `{}`, which is not in `providers`",
                    route.pattern, route.provider
                )));
            }
        }
        Ok(())
    }

    fn apply_file(&mut self, path: &Path) -> Result<()> {
        match std::fs::read_to_string(path) {
            Ok(text) => self.apply_json(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Config {
                path: PathBuf::from(path),
                message: e.to_string(),
            }),
        }
    }

    /// The OpenCode server the gate reviews through: `opencode.url`, else
    /// `CROSSCHECK_OPENCODE_URL`; the password from `opencode.password`, else the variable
    /// `opencode.passwordEnv` names, else `OPENCODE_SERVER_PASSWORD`. `None` when neither names
    /// a server.
    pub fn opencode_server(&self, env: &Env) -> Option<crosscheck_opencode::ServerConfig> {
        let url = self
            .opencode
            .url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| env.get(OPENCODE_URL_ENV))?;
        let password = self
            .opencode
            .password
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| {
                env.get(
                    self.opencode
                        .password_env
                        .as_deref()
                        .unwrap_or(OPENCODE_PASSWORD_ENV),
                )
            });
        Some(crosscheck_opencode::ServerConfig {
            base_url: url.trim().trim_end_matches('/').to_owned(),
            password,
        })
    }

    /// Timeout for one call that sends `chars` characters: the base plus the per-size part.
    pub fn timeout_for(&self, chars: usize) -> std::time::Duration {
        let extra = (chars as u64 / 1000).saturating_mul(self.review_timeout_ms_per_1000_chars);
        std::time::Duration::from_millis(self.review_timeout_ms.saturating_add(extra))
    }

    /// The longest a single call may take under this config.
    pub fn max_timeout(&self) -> std::time::Duration {
        self.timeout_for(self.max_input_chars + 4000)
    }

    /// Picks the provider and wire model id for a reviewer id: the first matching route,
    /// else `claude-*` → `anthropic`, else `openai`.
    pub fn resolve_provider(
        &self,
        reviewer: &str,
        env: &Env,
    ) -> std::result::Result<ResolvedProvider, String> {
        let normalized = normalize_model_id(reviewer);
        let route = self
            .routes
            .iter()
            .find(|r| glob_match(&r.pattern.to_ascii_lowercase(), &normalized));
        let name = match route {
            Some(r) => r.provider.clone(),
            None => match vendor_of(&normalized) {
                Vendor::Anthropic => "anthropic".to_owned(),
                Vendor::Openai | Vendor::Other => "openai".to_owned(),
            },
        };
        let provider = self
            .providers
            .get(&name)
            .ok_or_else(|| format!("no provider `{name}` in the review config"))?;
        let env_url = provider.base_url_env.as_deref().and_then(|n| env.get(n));
        let (base_url, default_url) = match (&provider.base_url, env_url) {
            (Some(url), _) => (url.clone(), false),
            (None, Some(url)) => (url, false),
            (None, None) => (provider.default_url().to_owned(), true),
        };
        // A model of another vendor (Gemini, Llama, …) is never sent to OpenAI's own
        // endpoint: only to an OpenAI-compatible server the user configured.
        if route.is_none() && vendor_of(&normalized) == Vendor::Other && default_url {
            return Err(format!(
                "no provider for `{reviewer}`: it is not an Anthropic or OpenAI model; add a \
                 route for it in your review.json"
            ));
        }
        let api_key = provider
            .api_key
            .clone()
            .filter(|k| !k.trim().is_empty())
            .or_else(|| provider.api_key_env.as_deref().and_then(|n| env.get(n)));
        let model = match route.and_then(|r| r.model.clone()) {
            Some(m) => m,
            None => match provider.kind {
                ProviderKind::Anthropic => crate::rank::anthropic_wire_id(reviewer),
                ProviderKind::Openai => reviewer.trim().to_owned(),
            },
        };
        Ok(ResolvedProvider {
            name,
            kind: provider.kind,
            base_url: base_url.trim().trim_end_matches('/').to_owned(),
            default_url,
            api_key,
            anthropic_version: provider
                .anthropic_version
                .clone()
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_VERSION.to_owned()),
            max_tokens_field: provider
                .max_tokens_field
                .clone()
                .unwrap_or_else(|| "max_tokens".to_owned()),
            headers: provider.headers.clone(),
            model,
            key_var: provider.api_key_env.clone(),
        })
    }
}

/// Checks an OpenCode server URL: `http` or `https` with a host, no query or fragment.
pub fn validate_opencode_url(url: &str) -> std::result::Result<(), String> {
    let parsed =
        reqwest::Url::parse(url.trim()).map_err(|e| format!("`{url}` is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("`{url}` must be an http or https URL with a host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(format!("`{url}` must not have a query or fragment"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_keep_defaults_and_unknown_keys_name_file_and_key() {
        let mut config = Config::default();
        config
            .apply_json(Path::new("/x/review.json"), r#"{"reviewTimeoutMs": 5}"#)
            .unwrap();
        assert_eq!(config.review_timeout_ms, 5);
        assert_eq!(config.max_tokens, DEFAULT_MAX_TOKENS);
        let err = config
            .apply_json(Path::new("/x/review.json"), r#"{"reviewTimeoutMS": 5}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/x/review.json"), "{err}");
        assert!(err.contains("reviewTimeoutMS"), "{err}");
        let err = config
            .apply_json(
                Path::new("/y/review.json"),
                r#"{"providers": {"p": {"kind": "openai", "apiKey": "k", "bogus": 1}}}"#,
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/y/review.json") && err.contains("bogus"),
            "{err}"
        );
    }

    #[test]
    fn a_project_file_may_only_raise_the_floor_and_never_fails_the_load() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(project.join(".crosscheck")).unwrap();
        std::fs::write(user.join(CONFIG_FILE), r#"{"maxTokens": 100}"#).unwrap();
        let write = |text: &str| {
            std::fs::write(project.join(".crosscheck").join(CONFIG_FILE), text).unwrap()
        };
        write(r#"{"maxTokens": 200, "floorModel": "claude-opus-4-1", "providers": {}}"#);
        let config = Config::load(&user, Some(&project)).unwrap();
        assert_eq!(config.max_tokens, 100, "user-only field ignored");
        assert_eq!(config.floor_model, "claude-opus-4-1", "the floor raised");
        assert_eq!(config.user_floor_model, DEFAULT_FLOOR_MODEL);
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        assert!(config.warnings.iter().any(|w| w.contains("`maxTokens`")));
        assert!(config.warnings.iter().any(|w| w.contains("`providers`")));
        write(r#"{"floorModel": "claude-3-haiku"}"#);
        let config = Config::load(&user, Some(&project)).unwrap();
        assert_eq!(config.floor_model, DEFAULT_FLOOR_MODEL, "never lowered");
        assert_eq!(config.warnings.len(), 1);
        for bad in ["{not json", "[]", "\"x\""] {
            write(bad);
            let config = Config::load(&user, Some(&project)).unwrap();
            assert_eq!(config.max_tokens, 100);
            assert!(
                config.warnings[0].contains(".crosscheck")
                    && config.warnings[0].contains("ignored"),
                "{:?}",
                config.warnings
            );
        }
        // The user's own file stays strict.
        std::fs::write(user.join(CONFIG_FILE), "{not json").unwrap();
        assert!(Config::load(&user, Some(&project)).is_err());
    }

    #[test]
    fn a_project_file_cannot_choose_the_route_or_the_opencode_server() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(project.join(".crosscheck")).unwrap();
        std::fs::write(
            project.join(".crosscheck").join(CONFIG_FILE),
            r#"{"route": "opencode", "opencode": {"url": "http://thief.example:4096", "password": "x"}}"#,
        )
        .unwrap();
        let config = Config::load(&user, Some(&project)).unwrap();
        assert_eq!(config.route, ReviewerRoute::Auto);
        assert_eq!(config.opencode, OpencodeServer::default());
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        assert!(
            config
                .warnings
                .iter()
                .all(|w| w.contains("only your own review.json"))
        );
        // Neither does its environment-free default: without a URL the gate has no server.
        assert!(config.opencode_server(&Env::Map(BTreeMap::new())).is_none());
        // The user's own file may, and its URL wins over CROSSCHECK_OPENCODE_URL.
        std::fs::write(
            user.join(CONFIG_FILE),
            r#"{"route": "opencode", "opencode": {"url": "http://127.0.0.1:4096/", "passwordEnv": "MY_PW"}}"#,
        )
        .unwrap();
        let config = Config::load(&user, Some(&project)).unwrap();
        assert_eq!(config.route, ReviewerRoute::Opencode);
        let env = Env::Map(BTreeMap::from([
            (OPENCODE_URL_ENV.to_owned(), "http://127.0.0.1:1".to_owned()),
            ("MY_PW".to_owned(), "secret".to_owned()),
        ]));
        let server = config.opencode_server(&env).unwrap();
        assert_eq!(server.base_url, "http://127.0.0.1:4096");
        assert_eq!(server.password.as_deref(), Some("secret"));
        std::fs::write(
            user.join(CONFIG_FILE),
            r#"{"opencode": {"url": "ftp://x"}}"#,
        )
        .unwrap();
        let err = Config::load(&user, None).unwrap_err().to_string();
        assert!(err.contains("opencode.url"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_key_in_a_config_others_can_read_is_warned_about() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(
            &file,
            r#"{"providers": {"anthropic": {"kind": "anthropic", "apiKey": "sk-x"}}}"#,
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let config = Config::load(dir.path(), None).unwrap();
        assert!(
            config.warnings[0].contains("chmod 600"),
            "{:?}",
            config.warnings
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Config::load(dir.path(), None).unwrap().warnings.is_empty());
    }

    #[test]
    fn vendors_are_mapped_by_id() {
        let config = Config::default();
        let none = Env::Map(BTreeMap::new());
        for (id, provider) in [
            ("claude-opus-4-1", Some("anthropic")),
            ("gpt-5", Some("openai")),
            ("o3", Some("openai")),
            ("o4-mini", Some("openai")),
            ("openai/gpt-5-mini", Some("openai")),
            ("gemini-2.5-pro", None),
            ("google/gemini-2.5-flash", None),
            ("llama-3-70b", None),
            ("o3x", None),
        ] {
            let got = config.resolve_provider(id, &none).ok().map(|p| p.name);
            assert_eq!(got.as_deref(), provider, "{id}");
        }
        // An OpenAI-compatible server of the user's own takes any model.
        let local = Env::Map(BTreeMap::from([(
            "OPENAI_BASE_URL".to_owned(),
            "http://127.0.0.1:1/v1".to_owned(),
        )]));
        let p = config.resolve_provider("gemini-2.5-pro", &local).unwrap();
        assert!(p.usable() && p.name == "openai");
        assert!(!config.resolve_provider("gpt-5", &none).unwrap().usable());
    }

    #[test]
    fn provider_comes_from_the_reviewer_id_and_env() {
        let config = Config::default();
        let env = Env::Map(BTreeMap::from([
            ("ANTHROPIC_API_KEY".to_owned(), "ak".to_owned()),
            ("ANTHROPIC_BASE_URL".to_owned(), "http://a.test/".to_owned()),
            ("OPENAI_BASE_URL".to_owned(), "http://o.test/v1".to_owned()),
        ]));
        let a = config
            .resolve_provider("anthropic/claude-sonnet-4.5", &env)
            .unwrap();
        assert_eq!(a.kind, ProviderKind::Anthropic);
        assert_eq!(a.base_url, "http://a.test");
        assert_eq!(a.api_key.as_deref(), Some("ak"));
        assert_eq!(a.model, "claude-sonnet-4-5");
        let o = config.resolve_provider("gpt-5-mini", &env).unwrap();
        assert_eq!(o.kind, ProviderKind::Openai);
        assert_eq!(o.base_url, "http://o.test/v1");
        assert_eq!(o.api_key, None);
        assert_eq!(o.model, "gpt-5-mini");
        let d = config
            .resolve_provider("gpt-5", &Env::Map(BTreeMap::new()))
            .unwrap();
        assert!(d.default_url);
    }

    #[test]
    fn routes_must_name_known_providers_and_win_over_the_builtin_rule() {
        let mut config = Config::default();
        let err = config
            .apply_json(
                Path::new("r.json"),
                r#"{"routes": [{"pattern": "*", "provider": "nope"}]}"#,
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
        let mut config = Config::default();
        config
            .apply_json(
                Path::new("r.json"),
                r#"{"routes": [{"pattern": "claude-*", "provider": "openai", "model": "router/claude"}]}"#,
            )
            .unwrap();
        let p = config
            .resolve_provider("claude-sonnet-4-5", &Env::Map(BTreeMap::new()))
            .unwrap();
        assert_eq!(p.kind, ProviderKind::Openai);
        assert_eq!(p.model, "router/claude");
    }

    #[test]
    fn timeouts_grow_with_input_size() {
        let config = Config::default();
        assert!(config.timeout_for(50_000) > config.timeout_for(1_000));
    }
}
