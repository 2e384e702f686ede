//! Any SQS message body through the event parser: no panic; an accepted body
//! accounts for each of its records; every announced object survives being written
//! as S3 writes it (`backfill`) and parsed again.
#![no_main]

use deltaload_event::{created_body, decode_key, encode_key, parse_body, Body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(body) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(Body::Objects {
        objects, ignored, ..
    }) = parse_body(body)
    else {
        return;
    };
    let outer: serde_json::Value = serde_json::from_str(body).expect("accepted bodies are JSON");
    let inner = match outer.get("Type").and_then(serde_json::Value::as_str) {
        Some("Notification") => outer["Message"]
            .as_str()
            .and_then(|m| serde_json::from_str(m).ok())
            .unwrap_or(serde_json::Value::Null),
        _ => outer,
    };
    let records = inner["Records"].as_array().map_or(0, Vec::len);
    assert_eq!(objects.len() + ignored, records);
    for object in objects {
        assert_eq!(
            decode_key(&encode_key(&object.key)).as_deref(),
            Ok(object.key.as_str())
        );
        let again = parse_body(&created_body(&object, "us-east-1", false, "fuzz"));
        match again {
            Ok(Body::Objects { objects, .. }) => assert_eq!(objects, vec![object]),
            other => panic!("{object:?} written as S3 does parsed as {other:?}"),
        }
    }
});
