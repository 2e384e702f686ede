//! A line read by serde_json, in one pass, as one JSON object: each field's
//! name (unescaped) and its value's text as written (so a number is read
//! from its digits, never through a float). serde_json checks the whole
//! line and bounds the values' nesting; nothing scans the line again.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A field's value as written on the line (a valid JSON value, no
/// whitespace around it): numbers keep their exact text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    pub(super) fn get(&self) -> &'a str {
        self.0
    }
}

/// One line's object: every field as written, in order, duplicates included.
pub(super) struct Object<'a>(pub Vec<(Cow<'a, str>, Raw<'a>)>);

impl<'de> Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Object<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            fields.push((name, Raw(value.get())));
        }
        Ok(Object(fields))
    }
}

/// A field's name: borrowed from the line unless it holds an escape.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Owned(v.to_string())))
    }
}

/// What a JSON value is, told by its first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Boolean,
    Number,
    String,
    Object,
    Array,
}

impl Kind {
    /// The kind of a valid JSON value's text (as a [`Raw`] holds it: no
    /// whitespace around it).
    pub(super) fn of(text: &str) -> Self {
        match text.as_bytes().first() {
            Some(b'n') => Self::Null,
            Some(b't' | b'f') => Self::Boolean,
            Some(b'"') => Self::String,
            Some(b'{') => Self::Object,
            Some(b'[') => Self::Array,
            _ => Self::Number,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Number => "number",
            Self::String => "string",
            Self::Object => "object",
            Self::Array => "array",
        })
    }
}
