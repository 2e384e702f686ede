//! How a batch of files is cut into load rounds: each round holds at most one
//! version of a location, in the order given, so that a file's rejects and
//! figures are those of loading the files one by one; the files of a round
//! read whole fit in memory together, and a file too large to read whole is
//! a round of its own. A version given twice is loaded once, its copies
//! reported from the first.

use crate::ledger::FileKey;
use std::collections::{HashMap, HashSet};

/// The rounds of a batch, and its copies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The rounds, in order: indexes into the batch, in the batch's order.
    pub rounds: Vec<Vec<usize>>,
    /// `(copy, first)`: file `copy` is the same version as file `first`.
    pub copies: Vec<(usize, usize)>,
}

/// Cuts files (each its key and size in bytes) into rounds; `fits_whole`
/// says whether files of so many bytes are read whole together.
pub fn plan(files: &[(&FileKey, u64)], fits_whole: impl Fn(u64) -> bool) -> Plan {
    let mut out = Plan::default();
    let mut first_of: HashMap<&FileKey, usize> = HashMap::new();
    let mut round: Vec<usize> = Vec::new();
    let mut in_round: HashSet<&str> = HashSet::new();
    let mut round_bytes = 0u64;
    let close = |round: &mut Vec<usize>, rounds: &mut Vec<Vec<usize>>| {
        if !round.is_empty() {
            rounds.push(std::mem::take(round));
        }
    };
    for (i, &(key, size)) in files.iter().enumerate() {
        if let Some(&first) = first_of.get(key) {
            out.copies.push((i, first));
            continue;
        }
        first_of.insert(key, i);
        if !fits_whole(size) {
            // Read in pieces: loaded alone.
            close(&mut round, &mut out.rounds);
            out.rounds.push(vec![i]);
            in_round.clear();
            round_bytes = 0;
            continue;
        }
        let full = !fits_whole(round_bytes + size);
        if !in_round.insert(key.location.as_str()) || full {
            close(&mut round, &mut out.rounds);
            in_round = HashSet::from([key.location.as_str()]);
            round_bytes = 0;
        }
        round.push(i);
        round_bytes += size;
    }
    close(&mut round, &mut out.rounds);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(location: u8, content: u8) -> FileKey {
        FileKey {
            location: format!("/in/{location}"),
            content_id: format!("sha256:{content}"),
        }
    }

    proptest! {
        /// For any batch and any budget: every file is in exactly one round
        /// or is a copy of an earlier file; rounds keep the batch's order;
        /// no round holds two versions of a location; the files of a round
        /// fit together, or the round is one file.
        #[test]
        fn rounds_cover_the_batch_in_order_with_one_version_per_location(
            files in prop::collection::vec((0u8..4, 0u8..3, 0u64..50), 0..24),
            budget in 1u64..120,
        ) {
            let keys: Vec<(FileKey, u64)> =
                files.iter().map(|&(l, c, s)| (key(l, c), s)).collect();
            let refs: Vec<(&FileKey, u64)> = keys.iter().map(|(k, s)| (k, *s)).collect();
            let plan = plan(&refs, |bytes| bytes <= budget);
            let mut seen = vec![0; keys.len()];
            let flat: Vec<usize> = plan.rounds.iter().flatten().copied().collect();
            prop_assert!(flat.windows(2).all(|w| w[0] < w[1]), "order kept: {:?}", plan.rounds);
            for &i in &flat {
                seen[i] += 1;
            }
            for &(copy, first) in &plan.copies {
                seen[copy] += 1;
                prop_assert!(first < copy);
                prop_assert_eq!(&keys[copy].0, &keys[first].0);
                prop_assert!(flat.contains(&first));
            }
            prop_assert!(seen.iter().all(|&n| n == 1), "{:?}", seen);
            for round in &plan.rounds {
                prop_assert!(!round.is_empty());
                let locations: HashSet<&str> =
                    round.iter().map(|&i| keys[i].0.location.as_str()).collect();
                prop_assert_eq!(locations.len(), round.len());
                let bytes: u64 = round.iter().map(|&i| keys[i].1).sum();
                prop_assert!(round.len() == 1 || bytes <= budget, "{round:?}: {bytes}");
            }
            // Distinct versions never repeat across rounds.
            let versions: HashSet<&FileKey> = flat.iter().map(|&i| &keys[i].0).collect();
            prop_assert_eq!(versions.len(), flat.len());
        }
    }

    #[test]
    fn a_file_too_large_to_read_whole_is_a_round_of_its_own() {
        let (a, b, c) = (key(1, 1), key(2, 1), key(3, 1));
        let plan = plan(&[(&a, 10), (&b, 500), (&c, 10)], |bytes| bytes <= 100);
        assert_eq!(plan.rounds, vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn a_second_version_of_a_location_starts_a_new_round() {
        let (a1, b, a2) = (key(1, 1), key(2, 1), key(1, 2));
        let plan = plan(&[(&a1, 1), (&b, 1), (&a2, 1), (&a1, 1)], |_| true);
        assert_eq!(plan.rounds, vec![vec![0, 1], vec![2]]);
        assert_eq!(plan.copies, vec![(3, 0)]);
    }
}
