//! Lenient reading of one field of a server type: a value of the wrong shape becomes the
//! field's default instead of failing the whole object.
//!
//! The field's JSON text is taken as it stands in the input (borrowed when the input is a
//! string or byte slice, as for every event frame and HTTP body) and parsed into the field's
//! type; only when that fails is the default used. No intermediate `serde_json::Value` tree is
//! built, which for nested objects (`time`, `tokens`, `model`, ...) was most of the cost of an
//! event that is not a delta.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, de::value::MapAccessDeserializer};
use serde_json::Value;

/// The name under which serde_json hands out a value's raw text (what its `RawValue` asks
/// for). A deserializer that does not know it (not serde_json's) gets the [`Value`] fallback,
/// so a change of this name in serde_json would cost speed, not correctness.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Deserializes a field, falling back to its default when the server sent another shape.
pub fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    deserializer.deserialize_newtype_struct(RAW_TOKEN, RawVisitor(PhantomData))
}

/// Reads the field's type from its raw text, or its default when the text is another shape.
fn from_raw<T: DeserializeOwned + Default>(raw: &str) -> T {
    serde_json::from_str(raw).unwrap_or_default()
}

/// Reads the field's type from an already built value (the path for other deserializers).
fn from_value<T: DeserializeOwned + Default>(value: Value) -> T {
    T::deserialize(value).unwrap_or_default()
}

struct RawVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned + Default> Visitor<'de> for RawVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    /// serde_json answers the raw-text request with a one-entry map: the token, then the text.
    /// A map from any other deserializer is an ordinary object, read whole.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(key) = map.next_key::<KeyText<'de>>()? else {
            return Ok(from_value(Value::Object(serde_json::Map::new())));
        };
        if key.0 == RAW_TOKEN {
            let raw = map.next_value::<KeyText<'de>>()?;
            return Ok(from_raw(&raw.0));
        }
        let mut object = serde_json::Map::new();
        object.insert(key.0.into_owned(), map.next_value()?);
        let rest = Value::deserialize(MapAccessDeserializer::new(map))?;
        if let Value::Object(rest) = rest {
            object.extend(rest);
        }
        Ok(from_value(Value::Object(object)))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        Ok(from_value(Value::deserialize(d)?))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
        Ok(from_value(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(from_value(Value::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(from_value(Value::from(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(from_value(Value::from(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok(from_value(Value::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(from_value(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(from_value(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        Ok(from_value(Value::deserialize(d)?))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        let value = Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(from_value(value))
    }
}

/// A string, borrowed from the input when it can be.
struct KeyText<'a>(std::borrow::Cow<'a, str>);

impl<'de> Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(KeyText(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::lenient;
    use crate::types::{MessageInfo, ModelRef};

    #[derive(Debug, Default, PartialEq, Deserialize)]
    struct Inner {
        #[serde(default, deserialize_with = "lenient")]
        n: i64,
        #[serde(default, deserialize_with = "lenient")]
        s: String,
    }

    #[derive(Debug, Default, PartialEq, Deserialize)]
    struct Outer {
        #[serde(default, deserialize_with = "lenient")]
        text: String,
        #[serde(default, deserialize_with = "lenient")]
        maybe: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        inner: Inner,
        #[serde(default, deserialize_with = "lenient")]
        list: Vec<String>,
        #[serde(default, deserialize_with = "lenient")]
        flag: bool,
    }

    /// The same text read every way a server type is read: from a string (event frames),
    /// a byte slice (HTTP bodies), a reader, an owned value and a borrowed one.
    fn every_way(text: &str) -> Vec<Outer> {
        let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        vec![
            serde_json::from_str(text).expect("from str"),
            serde_json::from_slice(text.as_bytes()).expect("from slice"),
            serde_json::from_reader(text.as_bytes()).expect("from reader"),
            Outer::deserialize(&value).expect("from &Value"),
            serde_json::from_value(value).expect("from Value"),
        ]
    }

    #[test]
    fn right_shapes_are_read_the_same_from_every_input() {
        let text = r#"{"text":"a \"quoted\" é","maybe":"m","inner":{"n":-3,"s":"x","odd":[1]},"list":["a","b"],"flag":true}"#;
        let want = Outer {
            text: "a \"quoted\" é".into(),
            maybe: Some("m".into()),
            inner: Inner {
                n: -3,
                s: "x".into(),
            },
            list: vec!["a".into(), "b".into()],
            flag: true,
        };
        for got in every_way(text) {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_wrong_shape_defaults_only_its_own_field_from_every_input() {
        let text = r#"{"text":{"deep":[1,{"x":2}]},"maybe":7,"inner":{"n":"many","s":"kept"},"list":["a",3],"flag":"yes","after":1}"#;
        let want = Outer {
            inner: Inner {
                n: 0,
                s: "kept".into(),
            },
            ..Outer::default()
        };
        for got in every_way(text) {
            assert_eq!(got, want);
        }
        let text = r#"{"text":"kept","inner":[{"n":1}],"maybe":null,"flag":true}"#;
        for got in every_way(text) {
            assert_eq!(got.text, "kept");
            assert_eq!(
                (got.inner, got.maybe, got.flag),
                (Inner::default(), None, true)
            );
        }
    }

    #[test]
    fn a_message_with_odd_nested_fields_keeps_the_rest() {
        let text = r#"{"id":"msg_1","sessionID":"ses_1","role":"assistant","time":{"created":"noon","completed":5},"model":{"providerID":1,"modelID":"m"},"tokens":{"input":"x","output":2,"cache":{"read":[],"write":1}},"cost":"free","finish":"stop"}"#;
        let info: MessageInfo = serde_json::from_str(text).expect("message");
        assert_eq!((info.time.created, info.time.completed), (0, Some(5)));
        // A wrong-typed field inside a nested object the server sends loses that object only.
        assert_eq!(info.model, None::<ModelRef>);
        let tokens = info.tokens.expect("tokens");
        assert_eq!((tokens.input, tokens.output), (0.0, 2.0));
        assert_eq!((tokens.cache.read, tokens.cache.write), (0.0, 1.0));
        assert_eq!(info.cost, None);
        assert_eq!(info.finish.as_deref(), Some("stop"));
        assert_eq!(info.role, "assistant");
    }
}
