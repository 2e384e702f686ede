//! Tests of the settings: each program's defaults, sizes, sources, endpoints.

use super::*;

fn settings(pairs: &[(&str, &str)]) -> Result<Settings, AwsError> {
    settings_of(pairs, Runner::Lambda)
}

fn settings_of(pairs: &[(&str, &str)], runner: Runner) -> Result<Settings, AwsError> {
    let vars: std::collections::HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::from_vars(|name| vars.get(name).cloned(), Some(8 << 30), runner)
}

#[test]
fn serve_differs_from_the_lambda_only_in_the_lake_the_sources_and_the_metrics() {
    let serve = settings_of(&[], Runner::Serve).unwrap();
    assert_eq!(serve.lake, "./lake");
    assert!(serve.sources.is_empty());
    assert_eq!(serve.metrics_namespace, None);
    let pairs = [
        ("DELTALOAD_LAKE", "s3://lake/l"),
        ("DELTALOAD_SOURCES", "s3://landing/in/"),
        ("DELTALOAD_MAX_OBJECT_BYTES", "1000"),
        ("DELTALOAD_DEADLINE_MARGIN_SECONDS", "5"),
        ("DELTALOAD_ENGINE", "merge"),
        ("DELTALOAD_MEMORY_BUDGET", "64MiB"),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024"),
    ];
    let lambda = settings_of(&pairs, Runner::Lambda).unwrap();
    let serve = settings_of(&pairs, Runner::Serve).unwrap();
    let expected = Settings {
        metrics_namespace: None,
        ..lambda.clone()
    };
    assert_eq!(serve, expected, "the same values read the same");
    assert_eq!(lambda.metrics_namespace.as_deref(), Some("deltaload"));
    let named = [("DELTALOAD_METRICS_NAMESPACE", "ns")];
    let serve = settings_of(&named, Runner::Serve).unwrap();
    assert_eq!(serve.metrics_namespace.as_deref(), Some("ns"));
}

#[test]
fn sources_are_s3_prefixes_parsed_as_backfill_parses_them() {
    let sources = Sources::parse(&["s3://landing/in/", " ", "s3://other"]).unwrap();
    assert!(sources.allows("landing", "in/a.csv"));
    assert!(!sources.allows("landing", "out/a.csv"));
    assert!(sources.allows("other", "any/key"));
    let e = Sources::parse(&["landing/in"]).unwrap_err().to_string();
    assert!(
        e.contains("source \"landing/in\" is not s3://BUCKET[/PREFIX]"),
        "{e}"
    );
    let e = Sources::parse(&["s3:///in"]).unwrap_err().to_string();
    assert!(e.contains("names no bucket"), "{e}");
    assert!(Sources::parse::<&str>(&[]).unwrap().allows("any", "key"));
}

#[test]
fn the_lambda_settings_need_the_lake_and_the_sources_and_default_the_rest() {
    let lake = ("DELTALOAD_LAKE", "s3://lake/l");
    let sources = ("DELTALOAD_SOURCES", "s3://landing/in/");
    let needs = |pairs: &[(&str, &str)], name: &str| match settings(pairs) {
        Err(e) => assert!(e.to_string().contains(name), "{e}"),
        Ok(s) => panic!("settings without {name}: {s:?}"),
    };
    needs(&[sources], "DELTALOAD_LAKE");
    needs(&[lake], "DELTALOAD_SOURCES");
    needs(&[lake, ("DELTALOAD_SOURCES", "")], "DELTALOAD_SOURCES");
    let s = settings(&[lake, sources, ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")]).unwrap();
    assert_eq!(s.max_object_bytes, DEFAULT_MAX_OBJECT_BYTES);
    assert_eq!(
        s.metrics_namespace.as_deref(),
        Some(DEFAULT_METRICS_NAMESPACE)
    );
    assert_eq!(s.deadline_margin, crate::deadline::DEFAULT_DEADLINE_MARGIN);
    assert_eq!(s.engine, deltaload_lake::Engine::Keyed);
    assert_eq!(s.auto_compact, deltaload_lake::AutoCompact::default());
    assert_eq!(s.memory_budget.bytes, Some(768 << 20));
    assert_eq!(s.endpoint_url, None);
    let s = settings(&[lake, sources, ("AWS_ENDPOINT_URL", "http://localhost:4566")]).unwrap();
    assert_eq!(s.endpoint_url.as_deref(), Some("http://localhost:4566"));
    assert_eq!(s.memory_budget.bytes, Some(4 << 30), "half the machine");
    needs(
        &[lake, sources, ("DELTALOAD_MAX_OBJECT_BYTES", "1 GB")],
        "DELTALOAD_MAX_OBJECT_BYTES",
    );
    needs(
        &[lake, sources, ("DELTALOAD_ENGINE", "spark")],
        "DELTALOAD_ENGINE",
    );
    needs(
        &[lake, sources, ("DELTALOAD_MEMORY_BUDGET", "lots")],
        "DELTALOAD_MEMORY_BUDGET",
    );
    needs(
        &[lake, sources, ("DELTALOAD_AUTO_COMPACT_FILES", "some")],
        "DELTALOAD_AUTO_COMPACT_FILES",
    );
    let off = settings(&[lake, sources, ("DELTALOAD_AUTO_COMPACT_FILES", "0")]).unwrap();
    assert_eq!(off.auto_compact.min_files, 0);
}

#[test]
fn the_budget_is_the_given_one_else_a_share_of_the_function_or_the_machine() {
    let budget = |e, l, m| memory_budget(e, (None, None), l, m).map(|b| b.bytes);
    assert_eq!(
        budget(Some("256MiB"), Some("1024"), None).unwrap(),
        Some(256 << 20)
    );
    assert_eq!(budget(Some("none"), Some("1024"), None).unwrap(), None);
    assert_eq!(
        budget(None, Some("1024"), Some(1 << 34)).unwrap(),
        Some(768 << 20)
    );
    assert_eq!(budget(None, None, Some(8 << 30)).unwrap(), Some(4 << 30));
    assert_eq!(budget(None, None, None).unwrap(), None);
    assert!(budget(Some("lots"), None, None).is_err());
    assert!(budget(None, Some("1 GB"), None).is_err());
    let space = memory_budget(None, (None, Some("4096MiB")), Some("1024"), None).unwrap();
    assert_eq!(space.spill_space, Some(4 << 30));
}

#[test]
fn sources_limit_buckets_and_prefixes() {
    let s = Sources::parse(&["s3://landing/orders/", " s3://other "]).unwrap();
    assert!(s.allows("landing", "orders/a.csv"));
    assert!(!s.allows("landing", "secret/a.csv"));
    assert!(s.allows("other", "anything"));
    assert!(!s.allows("third", "orders/a.csv"));
    assert!(Sources::default().allows("any", "thing"));
    assert!(Sources::parse(&["landing"]).is_err());
    assert!(Sources::parse(&["s3:///x"]).is_err());
}

#[test]
fn no_region_is_one_line_naming_the_variable() {
    let message = required_region(None).unwrap_err().to_string();
    assert!(message.contains("set AWS_REGION"), "{message}");
    assert!(!message.contains('\n') && message.len() < 160, "{message}");
    let region = aws_config::Region::new("eu-west-1");
    assert_eq!(required_region(Some(region.clone())).unwrap(), region);
}

#[test]
fn http_endpoints_allow_http_for_s3_lakes_only() {
    let root = lake_root("s3://lake/prefix", Some("http://127.0.0.1:4566")).unwrap();
    assert_eq!(
        root.storage_options
            .get("AWS_ALLOW_HTTP")
            .map(String::as_str),
        Some("true")
    );
    assert!(lake_root("s3://lake", Some("https://s3.example"))
        .unwrap()
        .storage_options
        .is_empty());
    assert!(lake_root("s3://lake", None)
        .unwrap()
        .storage_options
        .is_empty());
}

#[test]
fn a_glue_database_is_off_by_default_and_refused_with_a_local_lake() {
    let sources = ("DELTALOAD_SOURCES", "s3://landing/in/");
    let s = settings(&[("DELTALOAD_LAKE", "s3://lake/l"), sources]).unwrap();
    assert_eq!(s.glue_database, None);
    let glue = ("DELTALOAD_GLUE_DATABASE", "shop_lake");
    let s = settings(&[("DELTALOAD_LAKE", "s3://lake/l"), sources, glue]).unwrap();
    assert_eq!(s.glue_database.as_deref(), Some("shop_lake"));
    let local = settings_of(&[glue], Runner::Serve).unwrap_err().to_string();
    assert!(
        local.contains("the lake \"./lake\" is not on S3"),
        "{local}"
    );
    let bad = ("DELTALOAD_GLUE_DATABASE", "two\nlines");
    let bad = settings(&[("DELTALOAD_LAKE", "s3://lake/l"), sources, bad]).unwrap_err();
    assert!(bad.to_string().contains("single-line"), "{bad}");
}
