mod common;
use arrow_array::*;
use common::*;
use std::sync::Arc;
use std::collections::BTreeMap;

#[test]
fn explore() {
    let n = 6;
    let file = parquet(
        vec![
            ("warehouse", Arc::new(StringArray::from(vec![Some("W1"), None, Some("W2"), Some("W3"), Some("W1"), Some("W")])) as ArrayRef),
            ("sku", Arc::new(StringArray::from(vec!["A"; n]))),
            ("event_time", Arc::new(TimestampNanosecondArray::from(vec![0, 1, 1_000, -5_000, i64::MAX, i64::MIN]))),
            ("seq", Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6]))),
            ("qty", Arc::new(StringArray::from(vec!["1", "x", "", "-2147483648", "2147483648", "7"]))),
            ("price", Arc::new(Decimal128Array::from(vec![1, 2, 3, 4, 5, 999_999_999_999]).with_precision_and_scale(10, 2).unwrap())),
            ("active", Arc::new(BooleanArray::from(vec![Some(true), None, Some(false), None, Some(true), Some(false)]))),
            ("op", Arc::new(StringArray::from(vec![Some("d"), Some("u"), None, Some("delete"), Some("d"), Some("x")]))),
        ],
        2,
    );
    let sites = Arc::new(std::sync::Mutex::new(BTreeMap::<String, usize>::new()));
    let s2 = sites.clone();
    std::panic::set_hook(Box::new(move |info| {
        let loc = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        let msg = info.payload().downcast_ref::<String>().cloned().or(info.payload().downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        let key = format!("{loc} {}", &msg[..msg.len().min(100)]);
        let mut m = s2.lock().unwrap();
        if !m.contains_key(&key) {
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            let frames: Vec<&str> = bt.lines().filter(|l| l.contains("at /root/.cargo") || l.contains("crates/parquet")).take(14).collect();
            println!("=== {key}\n{}", frames.join("\n"));
        }
        *m.entry(key).or_default() += 1;
    }));
    let mut inputs: Vec<(std::sync::Arc<deltaload_core::Dataset>, Vec<u8>)> = vec![(inventory(), file.clone())];
    for e in std::fs::read_dir("../../fuzz/corpus/parquet").unwrap() {
        let b = std::fs::read(e.unwrap().path()).unwrap();
        let d = match b[0] % 3 { 0 => inventory(), 1 => inventory_ignoring_extras(), _ => readings() };
        inputs.push((d, b[1..].to_vec()));
    }
    for (d, file) in inputs {
    println!("input {} bytes", file.len());
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut rnd = move || { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; seed };
    for i in 0..file.len() {
        for bit in 0..12 {
            let mut f = file.clone();
            match bit { 8 => f[i] = 0, 9 => f[i] = 0xff, 10 => f[i] = 0x7f, 11 => { for _ in 0..4 { let j = (rnd() as usize) % f.len(); f[j] = rnd() as u8; } } _ => f[i] ^= 1 << bit }
            let _ = std::panic::catch_unwind(|| deltaload_parquet::read_parquet(&d, &f));
        }
    }
    }
    let _ = std::panic::take_hook();
    for (k, v) in sites.lock().unwrap().iter() { println!("{v:6} {k}"); }
}
