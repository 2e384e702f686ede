//! deltaload's JSON Lines reader (`read_changes`, both cores) against
//! arrow-json's tape decoder (one core, and the file cut in two on two
//! threads) on one orders file:
//!   json-tape FILE [RUNS]
//! Prints each reader's records and median seconds over RUNS (default 5).
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use std::sync::Arc;
use std::time::Instant;

fn schema() -> Arc<Schema> {
    let time = DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()));
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("customer_id", DataType::Utf8, true),
        Field::new("status", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(10, 2), true),
        Field::new("currency", DataType::Utf8, true),
        Field::new("ordered_at", time.clone(), true),
        Field::new("updated_at", time, true),
    ]))
}

/// The records of `bytes` decoded by arrow-json's tape decoder.
fn tape(bytes: &[u8]) -> usize {
    let reader = ReaderBuilder::new(schema())
        .with_batch_size(1 << 16)
        .build(bytes)
        .expect("reader");
    reader.map(|b| b.expect("batch").num_rows()).sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("file");
    let runs: usize = args.get(2).map_or(5, |r| r.parse().expect("runs"));
    // The built-in orders dataset, its files JSON Lines.
    let dataset = deltaload_core::Dataset {
        format: deltaload_core::spec::Format::Jsonl,
        ..(*deltaload_core::Dataset::orders()).clone()
    };
    let half = bytes[bytes.len() / 2..]
        .iter()
        .position(|&b| b == b'\n')
        .unwrap()
        + bytes.len() / 2
        + 1;
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut counts = [0usize; 3];
    for _ in 0..runs {
        let at = Instant::now();
        let read = deltaload_ingest::read_changes(&dataset, &bytes).expect("read");
        times[0].push(at.elapsed().as_secs_f64());
        counts[0] = read.changes() as usize;
        drop(read);
        let at = Instant::now();
        counts[1] = tape(&bytes);
        times[1].push(at.elapsed().as_secs_f64());
        let at = Instant::now();
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| tape(&bytes[..half]));
            let b = s.spawn(|| tape(&bytes[half..]));
            (a.join().unwrap(), b.join().unwrap())
        });
        counts[2] = a + b;
        times[2].push(at.elapsed().as_secs_f64());
    }
    let at = Instant::now();
    let id = deltaload_core::ContentId::of(&bytes);
    println!(
        "content id (SHA-256 of {} bytes): {:.3} s",
        id.size,
        at.elapsed().as_secs_f64()
    );
    let names = [
        "deltaload JSON Lines reader (read_changes)",
        "arrow-json tape decoder, 1 thread",
        "arrow-json tape decoder, 2 threads (file cut in two)",
    ];
    for i in 0..3 {
        println!(
            "{:<55} {:>9} records {:>8.3} s (median of {runs})",
            names[i],
            counts[i],
            median(times[i].clone())
        );
    }
}
