use super::{refusal, Facts};

fn facts(version: i64, features: &[&str], properties: &[(&str, &str)]) -> Facts {
    Facts {
        writer_version: version,
        writer_features: features.iter().map(|f| f.to_string()).collect(),
        properties: properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        column_metadata: Vec::new(),
    }
}

fn refused(f: &Facts) -> Option<String> {
    refusal(f).map(|r| r.feature)
}

#[test]
fn features_in_use_that_a_write_would_break_are_refused_by_name() {
    // deltaload's own tables, Spark's plain ones, deletion vectors.
    assert_eq!(refused(&facts(2, &[], &[])), None);
    let honoured = facts(7, &["deletionVectors", "timestampNtz", "v2Checkpoint"], &[]);
    assert_eq!(refused(&honoured), None);
    // Listed but unused: nothing to honour.
    let unused = facts(7, &["appendOnly", "invariants", "checkConstraints"], &[]);
    assert_eq!(refused(&unused), None);
    // Liquid clustering's features, and any feature deltaload does not know.
    for f in [
        "rowTracking",
        "domainMetadata",
        "clustering",
        "someNewFeature",
    ] {
        assert_eq!(
            refused(&facts(7, &["deletionVectors", f], &[])).as_deref(),
            Some(f)
        );
    }
    // A writer version beyond the protocol's.
    assert_eq!(
        refused(&facts(8, &[], &[])).as_deref(),
        Some("writer version 8")
    );
    let append = facts(7, &["appendOnly"], &[("delta.appendOnly", "true")]);
    assert_eq!(refused(&append).as_deref(), Some("appendOnly"));
    // Protocol 2 implies appendOnly: the property alone turns it on.
    let legacy = facts(2, &[], &[("delta.appendOnly", "true")]);
    assert_eq!(refused(&legacy).as_deref(), Some("appendOnly"));
    // CHECK constraints are kept on every record (table::rules), not refused.
    let check = facts(3, &[], &[("delta.constraints.positive", "amount > 0")]);
    assert_eq!(refused(&check), None);
    let mapped = facts(5, &[], &[("delta.columnMapping.mode", "name")]);
    assert_eq!(refused(&mapped).as_deref(), Some("columnMapping"));
    // The feed on: kept by the writers, whatever the spec says.
    let feed = facts(4, &[], &[("delta.enableChangeDataFeed", "true")]);
    assert_eq!(refused(&feed), None);
    // Spark keeps a property's value as typed.
    let upper = facts(2, &[], &[("delta.appendOnly", "TRUE")]);
    assert_eq!(refused(&upper).as_deref(), Some("appendOnly"));
}

#[test]
fn columns_with_generation_or_identity_are_refused_by_name() {
    // Invariants are kept on every record (table::rules), not refused.
    let mut invariant = facts(2, &[], &[]);
    invariant.column_metadata = vec![("id".into(), vec!["delta.invariants".to_string()])];
    assert_eq!(refused(&invariant), None);
    for (key, feature) in [
        ("delta.generationExpression", "generatedColumns"),
        ("delta.identity.allowExplicitInsert", "identityColumns"),
    ] {
        let mut f = facts(6, &[], &[]);
        f.column_metadata = vec![
            ("name".into(), vec![]),
            ("id".into(), vec![key.to_string()]),
        ];
        let r = refusal(&f).unwrap();
        assert_eq!(r.feature, feature);
        assert!(r.does.contains("\"id\""), "{}", r.does);
    }
}
