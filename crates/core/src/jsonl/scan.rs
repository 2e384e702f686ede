//! A line checked by serde_json to be one JSON object, then split into its
//! fields by a scanner that keeps each value's text as written (so a number
//! is read from its digits, never through a float).

use super::{unescape, Fields};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
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

/// A line checked to be one JSON object, its values skipped (serde_json
/// bounds their nesting): the check before [`split_object`].
pub(super) struct Shape;

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<IgnoredAny>()?;
        }
        Ok(Shape)
    }
}

/// The fields of `text`, a valid JSON object, in order, duplicates included:
/// each name unescaped, each value's text as written.
pub(super) fn split_object(text: &str) -> Fields<'_> {
    let b = text.as_bytes();
    let slice = |from: usize, to: usize| text.get(from..to).unwrap_or("");
    let mut fields = Vec::new();
    // Past the opening brace.
    let mut i = skip_blank(b, 0) + 1;
    loop {
        i = skip_blank(b, i);
        match b.get(i) {
            None | Some(b'}') => break,
            Some(b',') => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let name_end = string_end(b, i);
        let name = unescape("field name", slice(i, name_end)).unwrap_or_default();
        // Past the colon.
        let start = skip_blank(b, skip_blank(b, name_end) + 1);
        let end = value_end(b, start);
        fields.push((name, Raw(slice(start, end))));
        i = end;
    }
    fields
}

fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Where the string opening at `start` ends (past its closing quote).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Where the value starting at `start` ends.
fn value_end(b: &[u8], start: usize) -> usize {
    match b.get(start) {
        Some(b'"') => string_end(b, start),
        Some(b'{' | b'[') => {
            let (mut depth, mut i) = (0usize, start);
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => {
                        i = string_end(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            let mut i = start;
            while !matches!(
                b.get(i),
                None | Some(b',' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                i += 1;
            }
            i
        }
    }
}
