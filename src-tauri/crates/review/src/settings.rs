//! The Reviewer settings the app edits: the route and the floor model in the user's own
//! `review.json`, changed in place (every other key kept), checked with the same strict parser
//! the gate uses before anything is written, and written privately (0600, atomically).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::config::{Config, DEFAULT_FLOOR_MODEL, ReviewerRoute};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::paths::CONFIG_FILE;
use crate::prompt::user_message;
use crate::route::Channel;
use crate::types::{ReviewRequest, ReviewSource, ReviewStatus};

/// One direct provider and whether its key is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct DirectKey {
    /// The provider's name (`anthropic`, `openai`, or one of the config's).
    pub provider: String,
    /// The variable its key is read from, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub variable: Option<String>,
    /// Whether a key (or a server of the user's own) makes it usable.
    pub usable: bool,
}

/// What the Reviewer section shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewerSettings {
    /// Which way reviews go.
    pub route: ReviewerRoute,
    /// The floor model as the user's file sets it (the default when it does not).
    pub floor_model: String,
    /// The built-in default floor.
    pub default_floor_model: String,
    /// The user's `review.json`.
    pub config_path: String,
    /// The direct providers and whether each has a key.
    pub direct_keys: Vec<DirectKey>,
}

/// What "Test reviewer" found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ReviewerTest {
    /// `direct`, `opencode`, or `none` when the reviewer could not be reached.
    pub route: String,
    /// The reviewer model that answered (for OpenCode: `provider/model`).
    pub reviewer: String,
    /// `clean` or `flagged` when it answered, `unreviewed` when it could not.
    pub status: ReviewStatus,
    /// Its verdict line, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub verdict: Option<String>,
    /// Why it could not, in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// How long it took.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// The tiny plan "Test reviewer" sends.
pub const TEST_PLAN: &str = "# Plan: say hello\n\nCloses #1.\n\n## Increments\n\n1. Print `hello` from `src/main.rs`.\n   - Tests: a test that reads the output.\n   - Status: Not started\n\n## Risks\n\n- None: fail-closed.\n";

fn config_file(config_dir: &Path) -> PathBuf {
    config_dir.join(CONFIG_FILE)
}

/// The user's file as a JSON object (`{}` when absent); an error names a broken file.
fn read_object(path: &Path) -> Result<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::Config {
            path: path.to_owned(),
            message: "not a JSON object".into(),
        }),
        Err(e) => Err(Error::Config {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// The Reviewer section's values, from the user's own file only.
pub fn load(config_dir: &Path, env: &crate::config::Env) -> Result<ReviewerSettings> {
    let path = config_file(config_dir);
    let config = Config::load(config_dir, None)?;
    let direct_keys = config
        .providers
        .keys()
        .filter_map(|name| {
            // Resolve with a model of the provider's own kind, so only the provider decides.
            let provider = config.providers.get(name)?;
            let probe = match provider.kind {
                crate::config::ProviderKind::Anthropic => "claude-sonnet-4-5",
                crate::config::ProviderKind::Openai => "gpt-5",
            };
            let mut single = config.clone();
            single.routes = vec![crate::config::Route {
                pattern: "*".into(),
                provider: name.clone(),
                model: None,
            }];
            let resolved = single.resolve_provider(probe, env).ok()?;
            Some(DirectKey {
                provider: name.clone(),
                variable: provider.api_key_env.clone(),
                usable: resolved.usable(),
            })
        })
        .collect();
    Ok(ReviewerSettings {
        route: config.route,
        floor_model: config.floor_model,
        default_floor_model: DEFAULT_FLOOR_MODEL.to_owned(),
        config_path: path.display().to_string(),
        direct_keys,
    })
}

/// Sets `route` and `floorModel` in the user's file, keeping every other key. The result is
/// parsed as the gate parses it before it replaces the file; a broken file is not touched.
pub fn save(
    config_dir: &Path,
    route: ReviewerRoute,
    floor_model: &str,
    env: &crate::config::Env,
) -> Result<ReviewerSettings> {
    let path = config_file(config_dir);
    let mut object = read_object(&path)?;
    object.insert("route".into(), Value::String(route.as_str().into()));
    let floor = floor_model.trim();
    if floor.is_empty() || floor == DEFAULT_FLOOR_MODEL {
        object.remove("floorModel");
    } else {
        object.insert("floorModel".into(), Value::String(floor.into()));
    }
    let text = serde_json::to_string_pretty(&Value::Object(object)).map_err(|e| Error::Config {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Config::default().apply_json(&path, &text)?;
    crate::private::create_dir_all(config_dir).map_err(|source| Error::Io {
        path: config_dir.to_owned(),
        source,
    })?;
    let temp = config_dir.join(format!(".{CONFIG_FILE}.{}.tmp", std::process::id()));
    let io = |source| Error::Io {
        path: temp.clone(),
        source,
    };
    crate::private::touch_private(&temp).map_err(io)?;
    std::fs::write(&temp, format!("{text}\n")).map_err(io)?;
    std::fs::rename(&temp, &path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    load(config_dir, env)
}

impl Engine {
    /// Runs a tiny review through the configured route, without touching the ledger: the
    /// "Test reviewer" button. `opencode` is the server the app is connected to.
    pub async fn test_reviewer(
        &self,
        opencode: Option<crate::opencode_route::Connected>,
    ) -> Result<ReviewerTest> {
        let config = self.config(None)?;
        let request = ReviewRequest::plan("", TEST_PLAN, ReviewSource::Parameter);
        let key = request.key();
        let message = user_message(&request, &key, config.max_input_chars);
        let started = Instant::now();
        let plan = self.plan(None, &config, opencode).await;
        let route = plan.route().to_owned();
        let reviewer = plan.choice.model.clone();
        let failure = match &plan.channel {
            Channel::Unavailable(f) => Some(f.detail()),
            _ => None,
        };
        let outcome = self
            .reviewed_for_test(request.kind, &config, plan.channel, &message)
            .await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(ReviewerTest {
            route,
            reviewer,
            status: outcome.0,
            verdict: outcome.1,
            error: failure.or(outcome.2),
            duration_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Env;

    #[test]
    fn saving_keeps_every_other_key_and_never_touches_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::Map(Default::default());
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(&file, r#"{"reviewTimeoutMs": 1234, "maxTokens": 99}"#).unwrap();
        let saved = save(dir.path(), ReviewerRoute::Opencode, "fake/fake-model", &env).unwrap();
        assert_eq!(saved.route, ReviewerRoute::Opencode);
        assert_eq!(saved.floor_model, "fake/fake-model");
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(value["reviewTimeoutMs"], 1234);
        assert_eq!(value["maxTokens"], 99);
        assert_eq!(value["route"], "opencode");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "private: {mode:o}");
        }
        // The default floor is not written out.
        save(dir.path(), ReviewerRoute::Auto, DEFAULT_FLOOR_MODEL, &env).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(value.get("floorModel").is_none());
        // A file the user broke by hand is left as it is, and the error names it.
        std::fs::write(&file, "{broken").unwrap();
        let err = save(dir.path(), ReviewerRoute::Direct, "", &env)
            .unwrap_err()
            .to_string();
        assert!(err.contains(CONFIG_FILE), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{broken");
        // The keys the section lists.
        std::fs::write(&file, "{}").unwrap();
        let loaded = load(dir.path(), &env).unwrap();
        assert_eq!(loaded.route, ReviewerRoute::Auto);
        assert!(loaded.direct_keys.iter().all(|k| !k.usable));
        assert_eq!(loaded.direct_keys.len(), 2);
    }
}
