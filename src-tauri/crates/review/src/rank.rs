//! Reviewer choice: normalise model ids, rank them with an editable table, apply the floor.
//!
//! The rule: the author's model reviews itself when it ranks at or above the floor model;
//! otherwise the floor model reviews. Unknown ids rank below the floor.

use serde::{Deserialize, Serialize};

use crate::config::Config;

/// One row of the rank table: a `*` glob on the normalised id and its rank (higher is
/// stronger). The first matching row wins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RankRule {
    /// Glob on the normalised id (`*` matches any run of characters).
    pub pattern: String,
    /// Rank; the floor model's rank is the bar.
    pub rank: u32,
}

fn rule(pattern: &str, rank: u32) -> RankRule {
    RankRule {
        pattern: pattern.to_owned(),
        rank,
    }
}

/// The built-in rank table (first match wins). Edit it with `ranks` in `review.json`.
pub fn default_ranks() -> Vec<RankRule> {
    vec![
        rule("claude-opus-*", 90),
        rule("claude-3-opus", 60),
        rule("claude-sonnet-4", 65),
        rule("claude-sonnet-4-0", 65),
        rule("claude-sonnet-*", 70),
        rule("claude-3-7-sonnet", 62),
        rule("claude-3-5-sonnet", 55),
        rule("claude-haiku-*", 45),
        rule("claude-3-5-haiku", 35),
        rule("claude-3-haiku", 30),
        rule("gpt-5*-pro", 85),
        rule("gpt-5*-mini", 45),
        rule("gpt-5*-nano", 30),
        rule("gpt-5*", 75),
        rule("o3-pro", 80),
        rule("o3", 70),
        rule("o4-mini", 50),
        rule("gpt-4-1", 50),
        rule("gpt-4o", 45),
        rule("gemini-*-pro*", 75),
        rule("gemini-*-flash*", 45),
    ]
}

/// Vendor models Crosscheck knows by name (normalised ids, see [`normalize_model_id`]): the
/// models a repository may name as its floor without the user naming them (see
/// [`crate::config::Config::can_serve`]). A rank glob such as `claude-opus-*` is no list of
/// models: `claude-opus-99-bogus` matches it, and no provider serves it.
pub const KNOWN_MODELS: &[&str] = &[
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-opus-4",
    "claude-opus-4-0",
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-sonnet-4-0",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-opus",
    "claude-3-haiku",
    "gpt-5",
    "gpt-5-1",
    "gpt-5-pro",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5-codex",
    "gpt-5-1-codex",
    "o3",
    "o3-pro",
    "o4-mini",
    "gpt-4-1",
    "gpt-4o",
    "gemini-2-5-pro",
    "gemini-2-5-flash",
];

/// `*`-glob match (no other metacharacters).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Strips route prefixes and suffixes shared by both normalisations: case, `[1m]`-style
/// tags, `vendor/` paths, Bedrock `us.anthropic.` prefixes, `:thinking` / `:0` tags, Vertex
/// `@date`, Bedrock `-v1`, and dots in version numbers.
fn strip_route(raw: &str) -> (String, Option<String>) {
    let mut s = raw.trim().to_ascii_lowercase();
    if let Some(i) = s.find('[') {
        s.truncate(i);
    }
    if let Some(i) = s.rfind('/') {
        s = s[i + 1..].to_owned();
    }
    if let Some(i) = s.find("anthropic.") {
        s = s[i + "anthropic.".len()..].to_owned();
    }
    if let Some(i) = s.find(':') {
        s.truncate(i);
    }
    let mut vertex_date = None;
    if let Some(i) = s.find('@') {
        vertex_date = Some(s[i + 1..].to_owned());
        s.truncate(i);
    }
    // Bedrock's `-v1` follows a date (`...-20250929-v1`); `deepseek-v3` keeps its `v3`.
    if let Some(i) = s.rfind("-v")
        && s.len() > i + 2
        && s[i + 2..].bytes().all(|b| b.is_ascii_digit())
        && s[..i].rsplit('-').next().is_some_and(|d| all_digits(d, 8))
    {
        s.truncate(i);
    }
    for suffix in ["-thinking"] {
        if let Some(stripped) = s.strip_suffix(suffix) {
            s = stripped.to_owned();
        }
    }
    (s.replace('.', "-"), vertex_date)
}

fn all_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

/// Normalises a model id for ranking: `anthropic/claude-sonnet-4.5`,
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0` and `claude-sonnet-4-5-20250929` all become
/// `claude-sonnet-4-5`. Dates (`-20250929`, `-2024-08-06`) and `-latest` are dropped.
pub fn normalize_model_id(raw: &str) -> String {
    let (mut s, _) = strip_route(raw);
    if let Some(stripped) = s.strip_suffix("-latest") {
        s = stripped.to_owned();
    }
    let parts: Vec<&str> = s.split('-').collect();
    let n = parts.len();
    if n >= 2 && all_digits(parts[n - 1], 8) {
        s = parts[..n - 1].join("-");
    } else if n >= 4
        && all_digits(parts[n - 3], 4)
        && all_digits(parts[n - 2], 2)
        && all_digits(parts[n - 1], 2)
    {
        s = parts[..n - 3].join("-");
    }
    s
}

/// The id to send to the Anthropic API: route prefixes and suffixes stripped, dots as dashes,
/// the date kept (`us.anthropic.claude-sonnet-4-5-20250929-v1:0` → `claude-sonnet-4-5-20250929`).
pub fn anthropic_wire_id(raw: &str) -> String {
    match strip_route(raw) {
        (s, Some(date)) if !date.is_empty() => format!("{s}-{date}"),
        (s, _) => s,
    }
}

/// The rank of a model id under `table`, or `None` when no pattern matches.
pub fn rank_of(table: &[RankRule], model: &str) -> Option<u32> {
    let id = normalize_model_id(model);
    table
        .iter()
        .find(|r| glob_match(&r.pattern.to_ascii_lowercase(), &id))
        .map(|r| r.rank)
}

/// How the reviewer was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceMode {
    /// The author's model reviews itself (it ranks at or above the floor).
    SelfReview,
    /// The floor model reviews.
    Floor,
}

impl ChoiceMode {
    /// `self` or `floor`, as logged in the `mode` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SelfReview => "self",
            Self::Floor => "floor",
        }
    }
}

/// The chosen reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerChoice {
    /// Model id, as given (the author's own spelling, or the configured floor).
    pub model: String,
    /// Why it was chosen.
    pub mode: ChoiceMode,
}

/// Chooses the reviewer for an author: the author itself when it ranks at or above the
/// floor, else the floor model. Unknown or missing authors get the floor.
pub fn choose_reviewer(author: Option<&str>, config: &Config) -> ReviewerChoice {
    let floor = ReviewerChoice {
        model: config.floor_model.clone(),
        mode: ChoiceMode::Floor,
    };
    let Some(author) = author.map(str::trim).filter(|a| !a.is_empty()) else {
        return floor;
    };
    let same_as_floor = normalize_model_id(author) == normalize_model_id(&config.floor_model);
    let at_or_above = match (
        rank_of(&config.ranks, author),
        rank_of(&config.ranks, &config.floor_model),
    ) {
        (Some(a), Some(f)) => a >= f,
        _ => false,
    };
    if same_as_floor || at_or_above {
        ReviewerChoice {
            model: author.to_owned(),
            mode: ChoiceMode::SelfReview,
        }
    } else {
        floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_normalise_across_vendors_and_routes() {
        for raw in [
            "claude-sonnet-4-5",
            "claude-sonnet-4.5",
            "anthropic/claude-sonnet-4.5",
            "openrouter/anthropic/claude-sonnet-4.5",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "claude-sonnet-4-5-20250929",
            "claude-sonnet-4-5@20250929",
            "Claude-Sonnet-4-5:thinking",
            "claude-sonnet-4-5[1m]",
        ] {
            assert_eq!(normalize_model_id(raw), "claude-sonnet-4-5", "{raw}");
        }
        assert_eq!(normalize_model_id("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(normalize_model_id("gpt-5-mini"), "gpt-5-mini");
        assert_eq!(normalize_model_id("deepseek-v3"), "deepseek-v3");
        assert_eq!(
            anthropic_wire_id("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(
            anthropic_wire_id("claude-opus-4-1@20250805"),
            "claude-opus-4-1-20250805"
        );
    }

    #[test]
    fn glob() {
        assert!(glob_match("claude-*", "claude-x"));
        assert!(glob_match("gpt-5*-mini", "gpt-5-1-mini"));
        assert!(!glob_match("gpt-5*-mini", "gpt-5"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("o3", "o3-pro"));
    }

    #[test]
    fn sonnet_author_gets_itself_at_the_floor() {
        let c = Config::default();
        let choice = choose_reviewer(Some("anthropic/claude-sonnet-4.5"), &c);
        assert_eq!(choice.model, "anthropic/claude-sonnet-4.5");
        assert_eq!(choice.mode, ChoiceMode::SelfReview);
    }

    #[test]
    fn haiku_unknown_and_missing_authors_get_the_floor() {
        let c = Config::default();
        for author in [
            Some("claude-haiku-4-5"),
            Some("my-local-llama"),
            Some("gpt-5-mini"),
            Some(""),
            None,
        ] {
            let choice = choose_reviewer(author, &c);
            assert_eq!(choice.model, "claude-sonnet-4-5", "{author:?}");
            assert_eq!(choice.mode, ChoiceMode::Floor);
        }
    }

    #[test]
    fn higher_ranked_authors_get_themselves() {
        let mut c = Config::default();
        let choice = choose_reviewer(Some("claude-opus-4-1-20250805"), &c);
        assert_eq!(choice.model, "claude-opus-4-1-20250805");
        assert_eq!(choice.mode, ChoiceMode::SelfReview);
        // An editable table: a "Fable" model ranked above the floor reviews itself.
        c.ranks.insert(0, rule("claude-fable-*", 99));
        let choice = choose_reviewer(Some("anthropic/claude-fable-1.0"), &c);
        assert_eq!(choice.model, "anthropic/claude-fable-1.0");
        assert_eq!(choice.mode, ChoiceMode::SelfReview);
    }
}
