//! The UI's files: embedded in the binary at build time (the default), or read from a folder
//! (`--ui-dir`, for UI development). Each answer carries its content type, an ETag, and a
//! cache policy: Vite's hashed files under `assets/` are immutable, everything else (above
//! all `index.html`) is revalidated on every load. Text files go out gzip-compressed to
//! clients that accept it, compressed once and kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use axum::body::Bytes;
use rust_embed::RustEmbed;

/// The built UI, embedded at compile time (the build script picks the folder).
#[derive(RustEmbed)]
#[folder = "$CROSSCHECK_UI_EMBED"]
struct Embedded;

/// Whether this binary was built without the UI (it then serves a page that says so).
pub const UI_MISSING: bool = cfg!(crosscheck_ui_missing);

/// Where the UI's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiSource {
    /// The files built into the binary.
    Embedded,
    /// A folder holding `index.html` and `assets/` (UI development).
    Dir(PathBuf),
}

/// One file, ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Asset {
    /// The bytes as stored.
    pub body: Bytes,
    /// `Content-Type`.
    pub mime: String,
    /// Strong ETag (quoted), from the content's hash.
    pub etag: String,
    /// `Cache-Control`.
    pub cache_control: &'static str,
    /// The gzip form, for text files worth compressing.
    pub gzip: Option<Bytes>,
}

/// Cache policy of hashed build output: the name changes whenever the content does.
pub(crate) const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Cache policy of everything else: keep it, but ask every time.
pub(crate) const REVALIDATE: &str = "no-cache";

/// Files smaller than this are sent as they are.
const GZIP_MIN: usize = 1024;

/// Looks files up and keeps their compressed forms.
#[derive(Debug)]
pub(crate) struct Assets {
    source: UiSource,
    gzipped: Mutex<HashMap<String, Bytes>>,
}

impl Assets {
    pub(crate) fn new(source: UiSource) -> Self {
        Self {
            source,
            gzipped: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `index.html` can be served.
    pub(crate) fn has_index(&self) -> bool {
        match &self.source {
            UiSource::Embedded => Embedded::get("index.html").is_some(),
            UiSource::Dir(dir) => dir.join("index.html").is_file(),
        }
    }

    /// The file at `path` (relative, `/`-separated), or `None` when there is none or the path
    /// leaves the UI's folder.
    pub(crate) fn get(&self, path: &str) -> Option<Asset> {
        if !is_plain_relative(path) {
            return None;
        }
        let (body, hash): (Cow<'static, [u8]>, [u8; 32]) = match &self.source {
            UiSource::Embedded => {
                let file = Embedded::get(path)?;
                let hash = file.metadata.sha256_hash();
                (file.data, hash)
            }
            UiSource::Dir(dir) => {
                let full = dir.join(path);
                if !full.is_file() {
                    return None;
                }
                let bytes = std::fs::read(&full).ok()?;
                let hash = simple_hash(&bytes);
                (Cow::Owned(bytes), hash)
            }
        };
        let mime = mime_guess::from_path(path)
            .first_or_octet_stream()
            .essence_str()
            .to_owned();
        let mime = if mime.starts_with("text/") || mime == "application/javascript" {
            format!("{mime}; charset=utf-8")
        } else {
            mime
        };
        let etag = format!("\"{}\"", hex(&hash[..16]));
        let cache_control = if path.starts_with("assets/") {
            IMMUTABLE
        } else {
            REVALIDATE
        };
        let gzip = (is_text(&mime) && body.len() >= GZIP_MIN).then(|| self.gzip(&etag, &body));
        let body = match body {
            Cow::Borrowed(b) => Bytes::from_static(b),
            Cow::Owned(v) => Bytes::from(v),
        };
        Some(Asset {
            body,
            mime,
            etag,
            cache_control,
            gzip: gzip.flatten(),
        })
    }

    fn gzip(&self, etag: &str, body: &[u8]) -> Option<Bytes> {
        let mut cache = self
            .gzipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(done) = cache.get(etag) {
            return Some(done.clone());
        }
        let mut encoder =
            flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 3), Default::default());
        encoder.write_all(body).ok()?;
        let packed = Bytes::from(encoder.finish().ok()?);
        cache.insert(etag.to_owned(), packed.clone());
        Some(packed)
    }
}

fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.starts_with("application/javascript")
        || mime.starts_with("application/json")
        || mime.starts_with("image/svg+xml")
}

/// A relative path of normal components only (no `..`, no root, no drive).
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// A content hash for files read from a folder (development only: not cryptographic).
fn simple_hash(bytes: &[u8]) -> [u8; 32] {
    use std::hash::{Hash, Hasher};
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        i.hash(&mut h);
        bytes.hash(&mut h);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_folder_are_refused() {
        for bad in ["", "../x", "a/../../x", "/etc/passwd", "a\\..\\b"] {
            assert!(!is_plain_relative(bad), "{bad}");
        }
        for good in ["index.html", "assets/index-abc.js"] {
            assert!(is_plain_relative(good), "{good}");
        }
    }

    #[test]
    fn the_embedded_ui_has_an_index() {
        let assets = Assets::new(UiSource::Embedded);
        assert!(assets.has_index());
        let index = assets.get("index.html").expect("index.html");
        assert_eq!(index.mime, "text/html; charset=utf-8");
        assert_eq!(index.cache_control, REVALIDATE);
    }
}
