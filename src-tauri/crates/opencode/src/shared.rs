//! A cheaply cloned, immutable string for ids that repeat across many events (the session,
//! message and part of a run of streamed deltas): a clone is a reference count, not a copy.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable shared string: compares, hashes, prints and serializes as the text it holds.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` share one allocation (not merely equal text).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        Self(Arc::from(text))
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self(Arc::from(text))
    }
}

impl From<SharedStr> for String {
    fn from(text: SharedStr) -> Self {
        text.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == *other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        std::borrow::Cow::<'de, str>::deserialize(d).map(|text| Self::from(text.as_ref()))
    }
}

/// Hands out one [`SharedStr`] for text that repeats: a few recent values are kept, and text
/// equal to one of them gets a clone of it instead of a new allocation.
#[derive(Debug, Default)]
pub struct Interner {
    recent: [Option<SharedStr>; RECENT],
    next: usize,
}

/// Values an [`Interner`] remembers: a few sessions or parts streaming at once.
const RECENT: usize = 4;

impl Interner {
    /// A shared copy of `text`: a remembered one when there is one, else a new one (which
    /// then replaces the oldest remembered value).
    pub fn get(&mut self, text: &str) -> SharedStr {
        if let Some(hit) = self.recent.iter().flatten().find(|s| **s == *text) {
            return hit.clone();
        }
        let fresh = SharedStr::from(text);
        self.recent[self.next] = Some(fresh.clone());
        self.next = (self.next + 1) % RECENT;
        fresh
    }
}

/// A fast hasher for maps keyed by the server's ids (sessions, messages, parts), which are
/// looked up for every streamed event: eight bytes a step instead of SipHash's rounds. Not for
/// keys an adversary picks (it has no random seed).
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

/// Builds [`IdHasher`]s, for `HashMap<String, V, IdHash>`.
pub type IdHash = BuildHasherDefault<IdHasher>;

impl IdHasher {
    fn add(&mut self, word: u64) {
        const SPREAD: u64 = 0x517c_c1b7_2722_0a95;
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SPREAD);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in words.by_ref() {
            if let Ok(array) = <[u8; 8]>::try_from(word) {
                self.add(u64::from_le_bytes(array));
            }
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
            // The padding is zeros: the length tells "a" from "a\0".
            self.add(rest.len() as u64);
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_prints_and_serializes_as_its_text() {
        let s = SharedStr::from("prt_1");
        assert_eq!(s, "prt_1");
        assert_eq!(s, "prt_1".to_owned());
        assert_eq!("prt_1".to_owned(), s);
        assert_eq!(format!("{s} {s:?}"), "prt_1 \"prt_1\"");
        assert_eq!(serde_json::to_string(&s).ok().as_deref(), Some("\"prt_1\""));
        let back: SharedStr = serde_json::from_str("\"a\\u0042\"").expect("reads");
        assert_eq!(back, "aB");
        let mut map = std::collections::HashMap::new();
        map.insert(s.clone(), 1);
        assert_eq!(map.get("prt_1"), Some(&1), "looked up by &str");
    }

    #[test]
    fn id_hashes_tell_similar_ids_apart() {
        use std::hash::BuildHasher;
        let hash = |s: &str| IdHash::default().hash_one(s);
        let ids: Vec<String> = (0..2000)
            .map(|i| format!("prt_22d0bb6ac{i:03x}BenchAbcdefghij"))
            .chain((0..2000).map(|i| format!("ses_{i}")))
            .chain(["", "a", "a\0", "ab", "abcdefgh", "abcdefgh\0"].map(String::from))
            .collect();
        let distinct: std::collections::HashSet<u64> = ids.iter().map(|s| hash(s)).collect();
        assert_eq!(distinct.len(), ids.len());
        let mut map: std::collections::HashMap<String, usize, IdHash> = Default::default();
        for (i, id) in ids.iter().enumerate() {
            map.insert(id.clone(), i);
        }
        assert!(
            ids.iter()
                .enumerate()
                .all(|(i, id)| map.get(id.as_str()) == Some(&i))
        );
    }

    #[test]
    fn the_interner_shares_repeats_and_forgets_the_oldest() {
        let mut interner = Interner::default();
        let a = interner.get("ses_a");
        assert!(a.ptr_eq(&interner.get("ses_a")));
        for other in ["b", "c", "d"] {
            interner.get(other);
        }
        assert!(a.ptr_eq(&interner.get("ses_a")), "four values are kept");
        interner.get("e");
        let again = interner.get("ses_a");
        assert_eq!(again, a);
        assert!(!again.ptr_eq(&a), "the oldest was forgotten");
    }
}
