#!/usr/bin/env python3
"""What a change data feed and a history cost on the large case (issue
32's goal: with both, at most 1.5 times the time without).

Takes the "large" scenario's files of bench/bench.py (generated into --work
with ../shared/bench/gen_changes.py when missing: 2,000,000 orders, then
1,000,000 changes, seed 7). Two datasets of the orders columns, keyed by
order_id, newest by updated_at, merge-on-read: "plain", and "feed" with
change_data_feed = true. Each loads initial-orders.csv once (the setup, not
measured); each measured load of changes-0001.csv goes into a fresh copy
of its setup's lake, --repeat times per dataset (default 5), alternating
which goes first. Prints each run, the median wall seconds and peak MiB per
dataset, the ratio feed/plain, the rows each table holds afterwards (which
must be equal) and the rows of the measured commit's feed by change type.
With --history, a third dataset "history" has both the feed and
history = true (every column but the key and updated_at tracked).

  bench/feed_cost.py [--bin PATH] [--work DIR] [--repeat N] [--copy-on-write] [--history]
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dms import COLUMNS, measure, prepare, print_medians, spec_cases, tables_of  # noqa: E402

SPEC = '[[dataset]]\nname = "orders"\nkeys = ["order_id"]\nsequence_by = ["updated_at"]\n'


def feed_counts(lake):
    """Rows of each change type in the feed files of the table's last
    commit (read with pyarrow)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return "pyarrow missing: not counted (run with .venv/bin/python)"
    table = os.path.join(lake, "orders")
    commits = sorted(glob.glob(os.path.join(table, "_delta_log", "*.json")))
    if not commits:
        return "no commits"
    with open(commits[-1], encoding="utf-8") as f:
        paths = [json.loads(line)["cdc"]["path"] for line in f if '"cdc"' in line]
    counts = {}
    for path in paths:
        for t in pq.read_table(os.path.join(table, path), columns=["_change_type"]).column(0).to_pylist():
            counts[t] = counts.get(t, 0) + 1
    return counts or "no feed files in the last commit"


def main():
    args, binary, work, (initial, changes) = prepare(__doc__, "feed", [
        ("--copy-on-write", {"action": "store_true", "help": "without merge_on_read"}),
        ("--history", {"action": "store_true", "help": "also a dataset with history = true"}),
    ])
    mor = "" if args.copy_on_write else "merge_on_read = true\n"
    extras = {"plain": mor, "feed": mor + "change_data_feed = true\n"}
    if args.history:
        extras["history"] = extras["feed"] + "history = true\n"
    texts = {name: SPEC + extra + COLUMNS for name, extra in extras.items()}
    cases = spec_cases(work, texts, initial, changes)
    figures = measure(binary, work, cases, args.repeat)
    tables = tables_of(binary, work, cases)
    medians = print_medians(figures)
    for name in medians:
        if name != "plain":
            print(f"\n{name}/plain time: {medians[name][0] / medians['plain'][0]:.2f} (goal <= 1.5)")
    equal = all(t == tables["plain"] for t in tables.values())
    print(f"tables: {tables} ({'equal' if equal else 'DIFFERENT'})")
    print(f"the measured commit's feed: {feed_counts(os.path.join(work, 'lake-feed'))}")


if __name__ == "__main__":
    main()
