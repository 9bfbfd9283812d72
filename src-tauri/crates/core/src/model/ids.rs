//! Ids that cannot be swapped: a session id, a message id and a server id are each their own
//! type where two of them travel together (the loop's pair, links, transfers, the server map).
//!
//! On the wire and in TypeScript they are plain strings (`serde(transparent)`). They deref to
//! `str`, so code that reads an id as `&str` keeps working.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
        #[serde(transparent)]
        #[ts(export)]
        pub struct $name(String);

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as an owned string.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<&String> for $name {
            fn from(id: &String) -> Self {
                Self(id.clone())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                String::column_result(value).map(Self)
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }
    };
}

string_id!(
    /// An OpenCode session's id (`ses_...`).
    SessionId
);
string_id!(
    /// An OpenCode message's id (`msg_...`).
    MessageId
);
string_id!(
    /// Which OpenCode server (a key of the core's server map; [`ServerId::MAIN`] for the one the
    /// app starts with).
    ServerId
);

impl ServerId {
    /// The id of the server the app starts with (the managed one, or the first `--opencode`).
    pub const MAIN: &'static str = "main";

    /// The server the app starts with.
    pub fn main() -> Self {
        Self(Self::MAIN.to_owned())
    }

    /// Whether this is the server the app starts with.
    pub fn is_main(&self) -> bool {
        self.0 == Self::MAIN
    }
}

impl Default for ServerId {
    fn default() -> Self {
        Self::main()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain_strings_on_the_wire() {
        let id = SessionId::from("ses_1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"ses_1\"");
        let back: SessionId = serde_json::from_str("\"ses_2\"").unwrap();
        assert_eq!(back, "ses_2");
        assert_eq!(&*back, "ses_2");
    }

    #[test]
    fn ids_compare_with_strings_both_ways() {
        let id = MessageId::from(String::from("msg_1"));
        assert!(id == "msg_1");
        assert!("msg_1" == id);
        let owned = id.to_string();
        assert!(owned == id);
        assert_ne!(id, "msg_2");
        assert_eq!(id.to_string(), "msg_1");
    }
}
