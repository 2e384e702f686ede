//! Any bytes through the Avro container framing: no panic, no allocation
//! larger than the input; every block read lies within the file and
//! together they never claim more bytes than it has.
#![no_main]

use deltaload_core::avro_container::{blocks, header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(h) = header(data) else {
        return;
    };
    assert!(h.end <= data.len(), "the header ends within the file");
    let mut claimed = h.end;
    for block in blocks(data, &h) {
        let Ok(block) = block else {
            break;
        };
        claimed += block.data.len() + 16;
        assert!(claimed <= data.len(), "blocks claim more than the file holds");
    }
});
