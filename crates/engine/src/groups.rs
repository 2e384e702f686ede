//! The rewrite of a copy-on-write upsert cut into groups of files, each read,
//! assembled and written before the next is read, so that what is held at
//! once is a group's files and rows, never the whole rewrite.

use crate::meet::Met;

/// Rewritten files read and written together, and the inserted changes
/// written among their rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Group {
    /// Candidate files (indexes into the met files).
    pub files: Vec<usize>,
    /// Inserted changes (rows of the changes).
    pub inserts: Vec<u32>,
}

/// Cuts `rewritten` (candidate files, `sizes[f]` bytes each) into groups of
/// at most `most` bytes (a larger file alone), in the order of the first
/// change that meets each, and gives each of `inserted` to the group whose
/// first change is the last at or before it (the first group when none is).
/// The changes are sorted by key, and so, when the table's files hold
/// disjoint key ranges, is this order. An insert whose key falls inside a
/// later group's first file, below that file's first changed key, goes to
/// the group before it here (no row is lost or doubled either way); the
/// lake then places inserts by the files' smallest keys where their
/// statistics allow, so that the groups' new files do not overlap.
/// Every rewritten file and every insert is in exactly one group; with no
/// rewritten file, the inserts are one group.
pub fn groups(
    met: &Met,
    rewritten: &[usize],
    sizes: &[u64],
    inserted: &[u32],
    most: u64,
) -> Vec<Group> {
    let first_change = |f: usize| met.hits[f].iter().map(|h| h.1).min().unwrap_or(u32::MAX);
    let mut files: Vec<(u32, usize)> = rewritten.iter().map(|&f| (first_change(f), f)).collect();
    files.sort_unstable();
    let mut groups: Vec<(u32, Group)> = Vec::new();
    let mut bytes = 0u64;
    for (first, f) in files {
        let size = sizes.get(f).copied().unwrap_or(0);
        match groups.last_mut() {
            Some((_, group)) if bytes.saturating_add(size) <= most => group.files.push(f),
            _ => {
                groups.push((
                    first,
                    Group {
                        files: vec![f],
                        inserts: Vec::new(),
                    },
                ));
                bytes = 0;
            }
        }
        bytes = bytes.saturating_add(size);
    }
    if groups.is_empty() {
        groups.push((0, Group::default()));
    }
    for &c in inserted {
        let at = groups
            .partition_point(|(first, _)| *first <= c)
            .saturating_sub(1);
        groups[at].1.inserts.push(c);
    }
    groups
        .into_iter()
        .map(|(_, g)| g)
        .filter(|g| !g.files.is_empty() || !g.inserts.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Action;
    use proptest::prelude::*;

    fn met(hits: Vec<Vec<u32>>) -> Met {
        let hits: Vec<Vec<(u32, u32, Action)>> = hits
            .into_iter()
            .map(|cs| {
                cs.into_iter()
                    .enumerate()
                    .map(|(r, c)| (r as u32, c, Action::Update))
                    .collect()
            })
            .collect();
        Met {
            changed: vec![(0, Vec::new()); hits.len()],
            hits,
            found: Vec::new(),
            reread: 0,
        }
    }

    // Files met by changes 0-1, 2-3, 6-7 (of 8 MiB each; 16 MiB a group):
    // the first two are a group, inserts 4 and 5 go with it, 8 with the
    // last, and an insert before every file's changes with the first.
    #[test]
    fn inserts_go_to_the_group_whose_changes_precede_them() {
        let m = met(vec![vec![6, 7], vec![0, 1], vec![2, 3]]);
        let sizes = [8 << 20; 3];
        let got = groups(&m, &[0, 1, 2], &sizes, &[4, 5, 8], 16 << 20);
        assert_eq!(
            got,
            vec![
                Group {
                    files: vec![1, 2],
                    inserts: vec![4, 5]
                },
                Group {
                    files: vec![0],
                    inserts: vec![8]
                },
            ]
        );
        let m = met(vec![vec![3]]);
        let got = groups(&m, &[0], &[1], &[0, 9], 16 << 20);
        assert_eq!(
            got,
            vec![Group {
                files: vec![0],
                inserts: vec![0, 9]
            }]
        );
        assert_eq!(
            groups(&m, &[], &[1], &[2], 16),
            vec![Group {
                files: vec![],
                inserts: vec![2]
            }]
        );
        assert!(groups(&m, &[], &[1], &[], 16).is_empty());
    }

    proptest! {
        // Any files and inserts: each is in exactly one group, no group is
        // over the bound unless it is one file, and groups follow the order
        // of the files' first changes.
        #[test]
        fn every_file_and_insert_is_in_one_group(
            firsts in prop::collection::vec(0u32..1000, 0..20),
            sizes in prop::collection::vec(0u64..100, 20),
            mut inserted in prop::collection::vec(0u32..1000, 0..50),
            most in 1u64..300,
        ) {
            inserted.sort_unstable();
            inserted.dedup();
            let m = met(firsts.iter().map(|&c| vec![c, c + 1]).collect());
            let rewritten: Vec<usize> = (0..firsts.len()).collect();
            let got = groups(&m, &rewritten, &sizes, &inserted, most);
            let mut files: Vec<usize> = got.iter().flat_map(|g| g.files.clone()).collect();
            let starts: Vec<u32> = files.iter().map(|&f| firsts[f]).collect();
            prop_assert!(starts.windows(2).all(|w| w[0] <= w[1]));
            files.sort_unstable();
            prop_assert_eq!(files, rewritten);
            let inserts: Vec<u32> = got.iter().flat_map(|g| g.inserts.clone()).collect();
            prop_assert_eq!(inserts, inserted);
            for g in &got {
                let bytes: u64 = g.files.iter().map(|&f| sizes[f]).sum();
                prop_assert!(bytes <= most || g.files.len() == 1);
            }
        }
    }
}
