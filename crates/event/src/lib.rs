//! SQS message bodies: S3 event notifications (one or more `Records`), `s3:TestEvent`
//! messages, and either wrapped in an SNS envelope.

#![warn(missing_docs)]

use serde::Deserialize;
use serde_json::Value;

/// An object an event announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    /// The bucket.
    pub bucket: String,
    /// The key, decoded (`+` is a space, `%2B` a plus).
    pub key: String,
    /// Its size in bytes, as the event says.
    pub size: Option<u64>,
    /// Its ETag, as the event says (without quotes).
    pub etag: Option<String>,
    /// The version the event announces, in a versioned bucket.
    pub version_id: Option<String>,
}

/// What a message body holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Objects created; other event names are left out (and counted in `ignored`).
    Objects {
        /// The objects announced.
        objects: Vec<ObjectRef>,
        /// Records of other events, left out.
        ignored: usize,
        /// Reprocess even when the ledger holds the files (set by `backfill --force`).
        force: bool,
    },
    /// `s3:TestEvent`, sent when a notification is configured: nothing to do.
    Test,
}

/// A body that is not an S3 notification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message body is not an S3 event notification: {0}")]
pub struct NotAnEvent(pub String);

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "eventName", default)]
    event_name: String,
    s3: Option<S3Entity>,
}

#[derive(Deserialize)]
struct S3Entity {
    bucket: Bucket,
    object: Object,
}

#[derive(Deserialize)]
struct Bucket {
    name: String,
}

#[derive(Deserialize)]
struct Object {
    key: String,
    size: Option<u64>,
    #[serde(rename = "eTag")]
    etag: Option<String>,
    #[serde(rename = "versionId")]
    version_id: Option<String>,
}

/// Parses one SQS message body.
pub fn parse_body(body: &str) -> Result<Body, NotAnEvent> {
    let value: Value =
        serde_json::from_str(body).map_err(|e| NotAnEvent(format!("invalid JSON: {e}")))?;
    parse_value(value, true)
}

fn parse_value(value: Value, unwrap_sns: bool) -> Result<Body, NotAnEvent> {
    if unwrap_sns && value.get("Type").and_then(Value::as_str) == Some("Notification") {
        let message = value
            .get("Message")
            .and_then(Value::as_str)
            .ok_or_else(|| NotAnEvent("SNS envelope without a Message".into()))?;
        let inner: Value = serde_json::from_str(message)
            .map_err(|e| NotAnEvent(format!("SNS Message is not JSON: {e}")))?;
        return parse_value(inner, false);
    }
    if value.get("Event").and_then(Value::as_str) == Some("s3:TestEvent") {
        return Ok(Body::Test);
    }
    let Some(records) = value.get("Records") else {
        return Err(NotAnEvent("no Records and not a test event".into()));
    };
    let records: Vec<Record> = serde_json::from_value(records.clone())
        .map_err(|e| NotAnEvent(format!("malformed Records: {e}")))?;
    let mut objects = Vec::new();
    let mut ignored = 0;
    for record in records {
        let Some(s3) = record
            .s3
            .filter(|_| record.event_name.starts_with("ObjectCreated:"))
        else {
            ignored += 1;
            continue;
        };
        objects.push(ObjectRef {
            bucket: s3.bucket.name,
            key: decode_key(&s3.object.key)?,
            size: s3.object.size,
            etag: s3.object.etag,
            version_id: s3.object.version_id,
        });
    }
    let force = value
        .get(MARKER)
        .and_then(|m| m.get("force"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Body::Objects {
        objects,
        ignored,
        force,
    })
}

/// The top-level key deltaload adds to the notifications it sends itself.
const MARKER: &str = "deltaload";

/// Keeps what S3 leaves unencoded in notification keys; a space becomes `+`.
const KEY_SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/')
    .remove(b' ');

/// Encodes a key as S3 writes it in notifications (the inverse of [`decode_key`]).
pub fn encode_key(key: &str) -> String {
    percent_encoding::utf8_percent_encode(key, KEY_SET)
        .to_string()
        .replace(' ', "+")
}

/// The body of an S3 object-created notification for `object`, as S3 sends it;
/// `force` adds deltaload's marker asking to reprocess files the ledger holds.
pub fn created_body(object: &ObjectRef, region: &str, force: bool, origin: &str) -> String {
    let mut entity = serde_json::json!({
        "key": encode_key(&object.key),
        "size": object.size,
        "eTag": object.etag,
    });
    if let Some(version) = &object.version_id {
        entity["versionId"] = Value::from(version.as_str());
    }
    let mut body = serde_json::json!({"Records": [{
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": region,
        "eventTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "eventName": "ObjectCreated:Put",
        "s3": {
            "s3SchemaVersion": "1.0",
            "bucket": {"name": object.bucket, "arn": format!("arn:aws:s3:::{}", object.bucket)},
            "object": entity,
        },
    }]});
    body[MARKER] = serde_json::json!({ "origin": origin, "force": force });
    body.to_string()
}

/// Decodes a key as S3 writes it in notifications: form-encoded, `+` for a space.
pub fn decode_key(key: &str) -> Result<String, NotAnEvent> {
    let spaced = key.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8()
        .map(|k| k.into_owned())
        .map_err(|e| NotAnEvent(format!("key {key:?} is not valid UTF-8 once decoded: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(event: &str, key: &str) -> String {
        format!(
            r#"{{"Records":[{{"eventVersion":"2.1","eventSource":"aws:s3","eventName":"{event}",
            "s3":{{"bucket":{{"name":"landing"}},"object":{{"key":"{key}","size":595,"eTag":"abc","versionId":"v1"}}}}}}]}}"#
        )
    }

    #[test]
    fn object_created_with_encoded_keys() {
        let body = parse_body(&notification(
            "ObjectCreated:Put",
            "raw/day+one%2B%C3%A9.csv",
        ))
        .unwrap();
        let Body::Objects {
            objects, ignored, ..
        } = body
        else {
            panic!("not objects")
        };
        assert_eq!(ignored, 0);
        assert_eq!(objects[0].key, "raw/day one+é.csv");
        assert_eq!(objects[0].bucket, "landing");
        assert_eq!(objects[0].etag.as_deref(), Some("abc"));
        assert_eq!(objects[0].version_id.as_deref(), Some("v1"));
    }

    #[test]
    fn other_events_are_ignored_not_failed() {
        let body = parse_body(&notification("ObjectRemoved:Delete", "a.csv")).unwrap();
        assert_eq!(
            body,
            Body::Objects {
                objects: vec![],
                ignored: 1,
                force: false
            }
        );
    }

    #[test]
    fn test_events_and_sns_envelopes() {
        let test = r#"{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-10-01T00:00:00Z","Bucket":"landing"}"#;
        assert_eq!(parse_body(test).unwrap(), Body::Test);
        let inner = notification("ObjectCreated:CompleteMultipartUpload", "a.csv");
        let sns = serde_json::json!({"Type": "Notification", "Message": inner}).to_string();
        assert!(
            matches!(parse_body(&sns).unwrap(), Body::Objects { objects, .. } if objects.len() == 1)
        );
    }

    #[test]
    fn our_own_notifications_round_trip_with_their_keys_and_marker() {
        for key in ["raw/day one+é.csv", "a/b-c_d.e~f.csv", "x%y&z=1?.csv"] {
            let object = ObjectRef {
                bucket: "landing".into(),
                key: key.into(),
                size: Some(9),
                etag: Some("e".into()),
                version_id: None,
            };
            for force in [false, true] {
                let body = created_body(&object, "us-east-1", force, "backfill");
                assert_eq!(
                    parse_body(&body).unwrap(),
                    Body::Objects {
                        objects: vec![object.clone()],
                        ignored: 0,
                        force
                    }
                );
            }
        }
        assert_eq!(encode_key("raw/day one+é.csv"), "raw/day+one%2B%C3%A9.csv");
    }

    #[test]
    fn malformed_bodies_are_errors() {
        for body in [
            "",
            "not json",
            "{}",
            r#"{"Records":"x"}"#,
            r#"{"Records":[{"eventName":"ObjectCreated:Put","s3":{}}]}"#,
        ] {
            assert!(parse_body(body).is_err(), "{body:?} accepted");
        }
    }

    /// JSON values shaped like notifications often enough to reach every branch.
    fn hostile_body() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let text = prop_oneof![
            Just("ObjectCreated:Put".to_string()),
            Just("ObjectRemoved:Delete".to_string()),
            Just("s3:TestEvent".to_string()),
            Just("Notification".to_string()),
            Just("a%2Bb+c%ZZ%C3".to_string()),
            Just("../../etc/passwd".to_string()),
            ".{0,12}",
        ];
        let leaf = prop_oneof![
            text.prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
        ];
        let keys = prop::sample::select(vec![
            "Records",
            "eventName",
            "s3",
            "bucket",
            "name",
            "object",
            "key",
            "size",
            "eTag",
            "versionId",
            "Event",
            "Type",
            "Message",
            "deltaload",
            "force",
        ]);
        let value = leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|pairs| {
                    serde_json::Value::Object(
                        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    )
                }),
            ]
        });
        prop_oneof![value.prop_map(|v| v.to_string()), ".{0,64}",]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, ..Default::default() })]
        /// Any body: a result, never a panic; an accepted body accounts for
        /// every one of its records (an object, or an ignored event).
        #[test]
        fn hostile_bodies_never_panic(body in hostile_body()) {
            if let Ok(Body::Objects { objects, ignored, .. }) = parse_body(&body) {
                let outer: Value = serde_json::from_str(&body).expect("accepted bodies are JSON");
                let inner = match outer.get("Type").and_then(Value::as_str) {
                    Some("Notification") => outer["Message"]
                        .as_str()
                        .and_then(|m| serde_json::from_str::<Value>(m).ok())
                        .unwrap_or(Value::Null),
                    _ => outer,
                };
                let records = inner["Records"].as_array().map_or(0, Vec::len);
                proptest::prop_assert_eq!(objects.len() + ignored, records);
            }
        }
    }
}
