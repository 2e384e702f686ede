//! A dataset's history and its log are read by every reader as deltaload
//! reads them, copy-on-write and merge-on-read (deletion vectors).

use super::{assert_every_reader_reads_as_deltaload, things};
use deltaload_lake::TableName;

/// A history and its log, of every column type, are read alike.
#[tokio::test(flavor = "multi_thread")]
async fn every_reader_reads_a_history_of_every_column_type_as_deltaload() {
    let w = things("history = true");
    for table in [
        TableName::History(w.dataset.clone()),
        TableName::HistoryLog(w.dataset.clone()),
    ] {
        let rows = assert_every_reader_reads_as_deltaload(&w, &table, false).await;
        assert!(rows["rows"].as_array().unwrap().len() >= 3, "{rows}");
    }
}

/// A merge-on-read dataset's history is written as its table is: the
/// versions a later file changes are marked deleted in deletion vectors.
#[tokio::test(flavor = "multi_thread")]
async fn sql_readers_read_a_merge_on_read_history_through_deletion_vectors() {
    let w = things("history = true\nmerge_on_read = true");
    let history = TableName::History(w.dataset.clone());
    let rows = assert_every_reader_reads_as_deltaload(&w, &history, true).await;
    assert!(rows["rows"].as_array().unwrap().len() >= 3, "{rows}");
    let log = TableName::HistoryLog(w.dataset.clone());
    assert_every_reader_reads_as_deltaload(&w, &log, false).await;
}
