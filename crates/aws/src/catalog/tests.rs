//! The sync against a fake Glue that, unlike moto, checks `VersionId`.

use super::plan::{GlueColumn, GlueTable, Plan};
use super::*;
use deltaload_lake::CatalogColumn;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Glue in memory: tables by name, with versions checked on update.
#[derive(Default)]
struct FakeGlue {
    tables: Mutex<HashMap<String, GlueTable>>,
    /// Calls made, by name.
    calls: Mutex<Vec<&'static str>>,
    /// Updates another writer makes between this process's read and write.
    meddle: AtomicUsize,
    /// Glue out of reach while set.
    down: std::sync::atomic::AtomicBool,
}

impl FakeGlue {
    fn call(&self, name: &'static str) -> Result<(), ApiError> {
        self.calls.lock().unwrap().push(name);
        match self.down.load(Ordering::SeqCst) {
            true => Err(ApiError::Failed {
                code: None,
                message: "dispatch failure: connection refused".into(),
                reached: false,
            }),
            false => Ok(()),
        }
    }

    fn calls(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn table(&self, name: &str) -> GlueTable {
        self.tables.lock().unwrap()[name].clone()
    }
}

fn bump(version: &Option<String>) -> Option<String> {
    let n: u64 = version.as_deref().unwrap_or("0").parse().unwrap();
    Some((n + 1).to_string())
}

impl GlueApi for FakeGlue {
    async fn ensure_database(&self, _: &str) -> Result<(), ApiError> {
        self.call("ensure_database")
    }

    async fn get_table(&self, _: &str, name: &str) -> Result<Option<GlueTable>, ApiError> {
        self.call("get_table")?;
        let mut tables = self.tables.lock().unwrap();
        let read = tables.get(name).cloned();
        // Another writer changes the table right after this read.
        if let Some(t) = tables.get_mut(name) {
            if self.meddle.load(Ordering::SeqCst) > 0 {
                self.meddle.fetch_sub(1, Ordering::SeqCst);
                t.parameters.insert("owner_note".into(), "kept".into());
                t.version_id = bump(&t.version_id);
            }
        }
        Ok(read)
    }

    async fn create_table(&self, _: &str, table: &GlueTable) -> Result<(), ApiError> {
        self.call("create_table")?;
        let mut tables = self.tables.lock().unwrap();
        if tables.contains_key(&table.name) {
            return Err(ApiError::Conflict("AlreadyExistsException".into()));
        }
        let created = GlueTable {
            version_id: Some("1".into()),
            ..table.clone()
        };
        tables.insert(table.name.clone(), created);
        Ok(())
    }

    async fn update_table(&self, _: &str, table: &GlueTable) -> Result<(), ApiError> {
        self.call("update_table")?;
        let mut tables = self.tables.lock().unwrap();
        let current = tables.get_mut(&table.name).expect("updated tables exist");
        if current.version_id != table.version_id {
            return Err(ApiError::Conflict("ConcurrentModificationException".into()));
        }
        let version_id = bump(&current.version_id);
        *current = GlueTable {
            version_id,
            ..table.clone()
        };
        Ok(())
    }
}

fn column(name: &str, type_name: &str) -> CatalogColumn {
    CatalogColumn {
        name: name.into(),
        type_name: type_name.into(),
    }
}

fn orders(columns: &[(&str, &str)]) -> CatalogTable {
    CatalogTable {
        name: "orders".into(),
        location: "s3://lake/orders/".into(),
        columns: columns.iter().map(|(n, t)| column(n, t)).collect(),
        partition_keys: vec![column("day", "date")],
    }
}

fn tables(t: &CatalogTable) -> Vec<(String, Result<Described, LakeError>)> {
    vec![("orders".into(), Ok(Ok(t.clone())))]
}

#[tokio::test]
async fn a_table_is_created_once_then_remembered_and_a_new_column_is_one_update() {
    let catalog = Catalog::with_api(FakeGlue::default(), "Lake");
    let first = orders(&[("id", "bigint"), ("status", "string")]);
    let synced = catalog.sync(tables(&first)).await;
    assert_eq!((synced.created, synced.failed), (1, 0));
    assert_eq!(
        catalog.api().calls(),
        ["ensure_database", "get_table", "create_table"]
    );
    let glue = catalog.api().table("orders");
    assert_eq!(glue.parameters["table_type"], "DELTA");
    assert_eq!(glue.serde_parameters["path"], "s3://lake/orders/");
    assert_eq!(
        glue.partition_keys,
        [GlueColumn {
            name: "day".into(),
            type_name: "date".into(),
            comment: None
        }]
    );
    assert_eq!(catalog.database(), "lake");

    // The same schema again: no call at all.
    let synced = catalog.sync(tables(&first)).await;
    assert_eq!(synced.remembered, 1);
    assert!(catalog.api().calls().is_empty());

    // A column added: one read and one update, the column at the end.
    let added = orders(&[("id", "bigint"), ("status", "string"), ("note", "string")]);
    let synced = catalog.sync(tables(&added)).await;
    assert_eq!(synced.updated, 1);
    assert_eq!(catalog.api().calls(), ["get_table", "update_table"]);
    let glue = catalog.api().table("orders");
    let names: Vec<_> = glue.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "status", "note"]);
    assert_eq!(glue.version_id.as_deref(), Some("2"));
}

#[tokio::test]
async fn a_concurrent_change_is_read_again_and_kept_not_overwritten() {
    let catalog = Catalog::with_api(FakeGlue::default(), "lake");
    catalog.sync(tables(&orders(&[("id", "bigint")]))).await;
    catalog.api().calls();
    catalog.api().meddle.store(1, Ordering::SeqCst);
    let added = orders(&[("id", "bigint"), ("note", "string")]);
    assert_eq!(catalog.register(&added).await.unwrap(), Change::Updated);
    // Read, update refused (stale version), read again, update.
    assert_eq!(
        catalog.api().calls(),
        ["get_table", "update_table", "get_table", "update_table"]
    );
    let glue = catalog.api().table("orders");
    assert_eq!(
        glue.parameters["owner_note"], "kept",
        "the other writer's change survives"
    );
    assert_eq!(glue.columns.len(), 2);

    catalog.api().meddle.store(usize::MAX / 2, Ordering::SeqCst);
    let more = orders(&[("id", "bigint"), ("note", "string"), ("more", "int")]);
    let e = catalog.register(&more).await.unwrap_err();
    assert!(matches!(e, CatalogError::Contended { .. }), "{e}");
    assert_eq!(catalog.api().calls().len(), 2 * ATTEMPTS);
}

#[tokio::test]
async fn glue_out_of_reach_is_counted_and_the_next_sync_registers() {
    let catalog = Catalog::with_api(FakeGlue::default(), "lake");
    catalog.api().down.store(true, Ordering::SeqCst);
    let t = orders(&[("id", "bigint")]);
    let synced = catalog.sync(tables(&t)).await;
    assert_eq!((synced.failed, synced.created), (1, 0));
    let e = catalog.register(&t).await.unwrap_err().to_string();
    assert!(
        e.contains("Glue table lake.orders") && e.contains("AWS_ENDPOINT_URL_GLUE"),
        "{e}"
    );
    catalog.api().down.store(false, Ordering::SeqCst);
    let synced = catalog.sync(tables(&t)).await;
    assert_eq!((synced.failed, synced.created), (0, 1));
}

#[tokio::test]
async fn a_table_glue_holds_elsewhere_or_cannot_hold_is_left_alone() {
    let catalog = Catalog::with_api(FakeGlue::default(), "lake");
    let other = GlueTable {
        location: Some("s3://other/orders/".into()),
        ..plan::new_table(&orders(&[]))
    };
    catalog
        .api()
        .tables
        .lock()
        .unwrap()
        .insert("orders".into(), other.clone());
    let synced = catalog.sync(tables(&orders(&[("id", "bigint")]))).await;
    assert_eq!(synced.failed, 1);
    assert_eq!(catalog.api().table("orders"), other);
    let e = catalog
        .register(&orders(&[]))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("is at s3://other/orders/, not at this lake's s3://lake/orders/"),
        "{e}"
    );

    let refusal = CatalogRefusal::SameName {
        table: "t".into(),
        first: "A".into(),
        second: "a".into(),
    };
    let synced = catalog.sync(vec![("t".into(), Ok(Err(refusal)))]).await;
    assert_eq!(synced.failed, 1);
}

#[test]
fn an_update_never_drops_or_retypes_a_column_and_keeps_comments() {
    let mut glue = plan::new_table(&orders(&[("id", "bigint"), ("gone", "string")]));
    glue.columns[0].comment = Some("the order".into());
    glue.description = Some("orders of the shop".into());
    glue.version_id = Some("3".into());
    let wanted = orders(&[("id", "string"), ("added", "int")]);
    let Plan::Update(next) = plan::plan(&wanted, Some(&glue)) else {
        panic!("an update")
    };
    let columns: Vec<_> = next
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.type_name.as_str()))
        .collect();
    assert_eq!(
        columns,
        [("id", "bigint"), ("gone", "string"), ("added", "int")]
    );
    assert_eq!(next.columns[0].comment.as_deref(), Some("the order"));
    assert_eq!(next.description.as_deref(), Some("orders of the shop"));
    assert_eq!(
        next.version_id.as_deref(),
        Some("3"),
        "the version read is passed"
    );
    // Already as it should be: nothing.
    let same = plan::plan(
        &orders(&[("id", "bigint")]),
        Some(&plan::new_table(&orders(&[("id", "bigint")]))),
    );
    assert_eq!(same, Plan::Nothing);
}

#[test]
fn a_view_of_that_name_is_left_alone() {
    let view = GlueTable {
        name: "orders".into(),
        table_type: Some("VIRTUAL_VIEW".into()),
        ..GlueTable::default()
    };
    let plan = plan::plan(&orders(&[("id", "bigint")]), Some(&view));
    assert_eq!(
        plan,
        Plan::Elsewhere {
            location: "no location (a VIRTUAL_VIEW)".into()
        }
    );
    let placeholder = GlueTable {
        name: "orders".into(),
        ..GlueTable::default()
    };
    let plan = plan::plan(&orders(&[("id", "bigint")]), Some(&placeholder));
    assert!(matches!(plan, Plan::Update(_)), "{plan:?}");
}
