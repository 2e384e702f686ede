//! The versions of keys, folded from every change of theirs in sequence
//! order: the one rule that makes a history, whatever order its files
//! loaded in.
//!
//! For each key, its changes are sorted by rank (sequence, then a delete
//! above an upsert, then the tie-break columns), the first of equal ranks
//! kept. Then, in that order:
//!
//! - an upsert with no open version opens one;
//! - an upsert whose tracked columns equal the open version's updates it
//!   (the version takes its values; its start stays);
//! - any other upsert closes the open version at its sequence and opens one;
//! - a delete closes the open version at its sequence.

use crate::order::Order;
use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, RecordBatch, UInt32Array};
use arrow_ord::ord::{make_comparator, DynComparator};
use arrow_row::Rows;
use arrow_schema::ArrowError;
use arrow_schema::SortOptions;
use deltaload_core::Dataset;

/// One version of a key: indexes of changes into the folded batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// The change that opened it (its sequence is the start).
    pub start: u32,
    /// The change whose values it holds: the newest it absorbed.
    pub values: u32,
    /// The change that closed it; `None` while it is the key's current one.
    pub end: Option<u32>,
}

/// The versions of a batch's keys, and how they differ from those the same
/// keys had without the changes of one file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// Every version of every key, key by key.
    pub versions: Vec<Version>,
    /// Changes of the file kept (not equal in rank to an earlier change of
    /// its key): those the log does not hold yet.
    pub kept: Vec<u32>,
    /// Versions whose start the history did not hold without the file.
    pub opened: u64,
    /// Versions whose end (set) the history did not hold without the file.
    pub closed: u64,
}

/// Folds `changes` (the dataset's columns in order, then a non-null delete
/// flag) into versions. Rows `from..` are the file's changes; `mine` marks
/// every row of the file's version (a re-read log may hold them too), left
/// out of the history the figures compare with. With `arrival` (each
/// change's load time: a snapshot dataset's), of two changes of a key at
/// an equal sequence the later loaded ranks higher
/// ([`super::arrival::by_arrival`]).
pub fn fold(
    dataset: &Dataset,
    tracked: &[usize],
    changes: &RecordBatch,
    (from, mine): (usize, &[bool]),
    arrival: Option<&[i64]>,
) -> Result<Folded, ArrowError> {
    let width = dataset.columns.len();
    let position: Vec<usize> = (0..width).collect();
    let ranked = match arrival {
        Some(arrival) => super::arrival::by_arrival(dataset, changes, arrival)?,
        None => changes.clone(),
    };
    let order = Order::new(dataset, &ranked.schema(), &position, Some(width))?;
    let ints = super::bigint_key(dataset, changes).filter(|ints| ints.null_count() == 0);
    let keys = match ints {
        Some(ints) => Keys::Ints(ints.values().as_ref()),
        None => Keys::Rows(order.keys(changes)?),
    };
    // No column tracked: every upsert updates the open version.
    let tracked = match tracked.is_empty() {
        true => None,
        false => Some(Tracked::of(changes, tracked)?),
    };
    let deletes = changes.column(width).as_boolean();
    let sorted = ordered(&keys, &order, dataset, &ranked)?;
    let at = |i: &u32| *i as usize;
    let mut out = Folded {
        kept: sorted.iter().copied().filter(|&i| at(&i) >= from).collect(),
        ..Folded::default()
    };
    let rules = Rules {
        deletes,
        tracked: tracked.as_ref(),
    };
    let starts = Starts::of(dataset, changes)?;
    // Reused for every key: most keys have a version or two.
    let (mut now, mut before) = (Vec::new(), Vec::new());
    let mut run = 0;
    while run < sorted.len() {
        let end = keys.run_end(&sorted, run);
        let of_key = &sorted[run..end];
        rules.versions(of_key.iter().copied(), &mut now);
        rules.versions(
            of_key.iter().copied().filter(|&i| !mine[at(&i)]),
            &mut before,
        );
        let (opened, closed) = starts.changed(&before, &now);
        (out.opened, out.closed) = (out.opened + opened, out.closed + closed);
        out.versions.extend_from_slice(&now);
        run = end;
    }
    Ok(out)
}

/// The start and end of versions as the history shows them: the value of
/// the first sequence column of the change that opened or closed each
/// (`__start_at`, `__end_at`), a null equal to a null.
struct Starts(DynComparator);

impl Starts {
    fn of(dataset: &Dataset, changes: &RecordBatch) -> Result<Self, ArrowError> {
        let first = changes.column(dataset.sequence_by.first().copied().unwrap_or(0));
        Ok(Self(make_comparator(first, first, SortOptions::default())?))
    }

    /// Whether changes `a` and `b` show the same start or end.
    fn same(&self, a: u32, b: u32) -> bool {
        a == b || (self.0)(a as usize, b as usize).is_eq()
    }

    /// Of a key's versions `now`, those whose start its versions `before`
    /// do not show, and those with an end whose start and end no version
    /// before shows: what a file changed in the history table.
    fn changed(&self, before: &[Version], now: &[Version]) -> (u64, u64) {
        let (mut opened, mut closed) = (0, 0);
        for v in now {
            // Most versions are known by the change that opened them.
            let same = |b: &&Version| self.same(b.start, v.start);
            let was = before.iter().find(|b| b.start == v.start);
            let shown = was.is_some() || before.iter().any(|b| same(&b));
            opened += u64::from(!shown);
            let ended = |e: u32| {
                let held = |b: &Version| b.end.is_some_and(|x| self.same(x, e));
                was.is_some_and(held) || before.iter().filter(same).any(held)
            };
            closed += u64::from(v.end.is_some_and(|e| !ended(e)));
        }
        (opened, closed)
    }
}

/// The changes' keys: one bigint column without nulls (most keys) compared
/// as numbers, any other in the row format; the same order.
enum Keys<'a> {
    Ints(&'a [i64]),
    Rows(Rows),
}

impl Keys<'_> {
    fn cmp(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (a, b) = (a as usize, b as usize);
        match self {
            Self::Ints(k) => k[a].cmp(&k[b]),
            Self::Rows(r) => r.row(a).cmp(&r.row(b)),
        }
    }

    fn eq(&self, a: u32, b: u32) -> bool {
        self.cmp(a, b).is_eq()
    }

    /// Where the run of `sorted[start]`'s key ends in `sorted` (key order).
    fn run_end(&self, sorted: &[u32], start: usize) -> usize {
        let mut end = start + 1;
        while end < sorted.len() && self.eq(sorted[start], sorted[end]) {
            end += 1;
        }
        end
    }
}

/// The positions of `n` changes in key order, then rank order, then
/// position; of equal key and rank, the first only: by numbers when the
/// key is a bigint and the sequence one integer or time column without
/// nulls (most datasets), else in the row format.
fn ordered(
    keys: &Keys,
    order: &Order,
    dataset: &Dataset,
    changes: &RecordBatch,
) -> Result<Vec<u32>, ArrowError> {
    if let (Keys::Ints(k), Some(seq)) = (keys, int_sequence(dataset, changes)?) {
        let flags = order.deletes(changes)?;
        return by_numbers(k, (seq.values(), &flags), order, changes);
    }
    let ranks = order
        .ranks(changes)?
        .ok_or_else(|| ArrowError::InvalidArgumentError("history needs a sequence".into()))?;
    Ok(by_rows(keys, &ranks, changes.num_rows()))
}

/// The only sequence column of `changes` as numbers, when it is an
/// integer, a date or a time without nulls (they compare as their numbers).
fn int_sequence(
    dataset: &Dataset,
    changes: &RecordBatch,
) -> Result<Option<arrow_array::Int64Array>, ArrowError> {
    use arrow_array::types::Int64Type;
    use arrow_schema::DataType;
    let [only] = dataset.sequence_by.as_slice() else {
        return Ok(None);
    };
    let column = changes.column(*only);
    let numeric = matches!(
        column.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Date32
            | DataType::Date64
            | DataType::Timestamp(_, _)
    );
    if !numeric || column.null_count() > 0 {
        return Ok(None);
    }
    let ints = arrow_cast::cast(column, &DataType::Int64)?;
    Ok(Some(ints.as_primitive::<Int64Type>().clone()))
}

/// [`ordered`] by numbers: key, sequence and delete flag sorted together;
/// only the changes of a key equal in both (rare) are ranked in the row
/// format, for their tie-break columns.
fn by_numbers(
    keys: &[i64],
    (seq, flags): (&[i64], &BooleanArray),
    order: &Order,
    changes: &RecordBatch,
) -> Result<Vec<u32>, ArrowError> {
    let mut all: Vec<(i64, i64, bool, u32)> = (0..keys.len())
        .map(|i| (keys[i], seq[i], flags.value(i), i as u32))
        .collect();
    all.sort_unstable();
    let short = |i: usize| (all[i].0, all[i].1, all[i].2);
    let mut sorted = Vec::with_capacity(all.len());
    let mut tied = Vec::new();
    let mut run = 0;
    while run < all.len() {
        let mut end = run + 1;
        while end < all.len() && short(end) == short(run) {
            end += 1;
        }
        sorted.push(all[run].3);
        // Two deletes of an equal sequence are equal; upserts go by their tie-break.
        if end - run > 1 && !all[run].2 {
            tied.push((
                sorted.len() - 1,
                all[run + 1..end].iter().map(|a| a.3).collect(),
            ));
        }
        run = end;
    }
    if tied.is_empty() {
        return Ok(sorted);
    }
    with_ties(&sorted, &tied, order, changes)
}

/// `sorted` with each of the `tied` groups (its first change's place in
/// `sorted`, then the others of equal key, sequence and flag, by
/// position) ranked in the row format: in rank order, then position, the
/// first of equal ranks only.
fn with_ties(
    sorted: &[u32],
    tied: &[(usize, Vec<u32>)],
    order: &Order,
    changes: &RecordBatch,
) -> Result<Vec<u32>, ArrowError> {
    let members: Vec<u32> = (tied.iter())
        .flat_map(|(at, others)| std::iter::once(sorted[*at]).chain(others.iter().copied()))
        .collect();
    let ranks = (order.ranks_at(changes, &UInt32Array::from(members.clone()))?)
        .ok_or_else(|| ArrowError::InvalidArgumentError("history needs a sequence".into()))?;
    let mut out = Vec::with_capacity(sorted.len() + members.len());
    let mut groups = tied.iter().peekable();
    let mut next = 0;
    for (i, &change) in sorted.iter().enumerate() {
        let Some((_, others)) = groups.next_if(|(at, _)| *at == i) else {
            out.push(change);
            continue;
        };
        let mut group: Vec<usize> = (next..next + others.len() + 1).collect();
        next = group[group.len() - 1] + 1;
        // Stable: of equal ranks, the earlier position first.
        group.sort_by(|&a, &b| ranks.row(a).cmp(&ranks.row(b)));
        group.dedup_by(|b, a| ranks.row(*a) == ranks.row(*b));
        out.extend(group.into_iter().map(|g| members[g]));
    }
    Ok(out)
}

/// [`ordered`] in the row format: keys sorted first, then each key's few
/// changes by rank.
fn by_rows(keys: &Keys, ranks: &Rows, n: usize) -> Vec<u32> {
    let mut sorted: Vec<u32> = match keys {
        Keys::Ints(k) => {
            // Pairs sort in sequential memory: a change's key is looked up once.
            let mut pairs: Vec<(i64, u32)> = (0..n as u32).map(|i| (k[i as usize], i)).collect();
            pairs.sort_unstable();
            pairs.into_iter().map(|(_, i)| i).collect()
        }
        Keys::Rows(_) => {
            let mut sorted: Vec<u32> = (0..n as u32).collect();
            sorted.sort_unstable_by(|a, b| keys.cmp(*a, *b).then(a.cmp(b)));
            sorted
        }
    };
    let rank = |i: u32| ranks.row(i as usize);
    let mut run = 0;
    while run < sorted.len() {
        let end = keys.run_end(&sorted, run);
        if end - run > 1 {
            sorted[run..end].sort_unstable_by(|a, b| rank(*a).cmp(&rank(*b)).then(a.cmp(b)));
        }
        run = end;
    }
    sorted.dedup_by(|b, a| keys.eq(*a, *b) && rank(*a) == rank(*b));
    sorted
}

/// The tracked columns of the changes, compared value by value (a null
/// equal to a null only) where a change meets the version it may update:
/// most changes are compared once or twice, so their values are not
/// encoded into rows first.
struct Tracked(Vec<DynComparator>);

impl Tracked {
    fn of(changes: &RecordBatch, tracked: &[usize]) -> Result<Self, ArrowError> {
        let options = SortOptions::default();
        let comparators = tracked.iter().map(|&c| {
            let column = changes.column(c).as_ref();
            make_comparator(column, column, options)
        });
        Ok(Self(comparators.collect::<Result<_, _>>()?))
    }

    fn same(&self, a: usize, b: usize) -> bool {
        self.0.iter().all(|equal| equal(a, b).is_eq())
    }
}

/// What a change does to the versions of its key.
struct Rules<'a> {
    deletes: &'a arrow_array::BooleanArray,
    tracked: Option<&'a Tracked>,
}

impl Rules<'_> {
    /// Whether changes `a` and `b` hold equal tracked columns.
    fn same(&self, a: usize, b: usize) -> bool {
        self.tracked.is_none_or(|t| t.same(a, b))
    }

    /// The versions of one key's changes, given in rank order, into `out`.
    fn versions(&self, changes: impl Iterator<Item = u32>, out: &mut Vec<Version>) {
        out.clear();
        let mut open: Option<usize> = None;
        for c in changes {
            let i = c as usize;
            let delete = self.deletes.is_valid(i) && self.deletes.value(i);
            match open {
                Some(o) if delete => {
                    out[o].end = Some(c);
                    open = None;
                }
                None if delete => {}
                Some(o) if self.same(out[o].values as usize, i) => {
                    out[o].values = c;
                }
                _ => {
                    if let Some(o) = open {
                        out[o].end = Some(c);
                    }
                    out.push(Version {
                        start: c,
                        values: c,
                        end: None,
                    });
                    open = Some(out.len() - 1);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
