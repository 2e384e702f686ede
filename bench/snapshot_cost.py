#!/usr/bin/env python3
"""What a snapshot feed costs on the large case, against the same day's
changes delivered as a file of changes.

Takes the "large" scenario's files of bench/bench.py (generated into --work
when missing: 2,000,000 orders, then 1,000,000 changes, seed 7). Two
merge-on-read datasets of the orders columns keyed by order_id:
"changes" (newest by updated_at) loads initial-orders.csv as its setup and
changes-0001.csv measured; "snapshot" (mode = "snapshot", ordered by the
key's date) loads initial-orders.csv as dt=2026-12-01 and, measured, the
next day's full export: the orders with the changes applied (the newest per
order) and every 100th order gone. Each measured load goes into a fresh
copy of its setup's lake, --repeat times per dataset (default 5),
alternating which goes first. Prints each run, the median wall seconds and
peak MiB per dataset and the ratio snapshot/changes.

  bench/snapshot_cost.py [--bin PATH] [--work DIR] [--repeat N]
"""
import csv
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dms import COLUMNS, measure, print_medians, prepare  # noqa: E402

CHANGES = '[[dataset]]\nname = "orders"\nkeys = ["order_id"]\nsequence_by = ["updated_at"]\n'
SNAPSHOT = ('[[dataset]]\nname = "orders"\nkeys = ["order_id"]\nmode = "snapshot"\n'
            'snapshot_key_date = "dt=%Y-%m-%d"\n')


def exports(work, initial, changes):
    """Day 1 (the initial orders) and day 2 (changes applied, every 100th
    order gone) as full exports under dt= folders; written once."""
    day1 = os.path.join(work, "dt=2026-12-01", "orders.csv")
    day2 = os.path.join(work, "dt=2026-12-02", "orders.csv")
    if os.path.exists(day2):
        return day1, day2
    os.makedirs(os.path.dirname(day1), exist_ok=True)
    os.makedirs(os.path.dirname(day2), exist_ok=True)
    shutil.copyfile(initial, day1)
    with open(initial, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, orders = rows[0], {r[0]: r for r in rows[1:]}
    with open(changes, newline="", encoding="utf-8") as f:
        for r in list(csv.reader(f))[1:]:
            if len(r) != len(header) or not r[0].isdigit():
                continue  # a malformed record, rejected by both
            held = orders.get(r[0])
            if held is None or held[6] <= r[6]:
                orders[r[0]] = r
    with open(day2, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for key in sorted(orders, key=int):
            if int(key) % 100 != 0:
                w.writerow(orders[key])
    return day1, day2


def main():
    args, binary, work, (initial, changes) = prepare(__doc__, "snapshot")
    day1, day2 = exports(work, initial, changes)
    cases = {}
    for name, (spec_text, setup, measured) in (("changes", (CHANGES, initial, changes)),
                                               ("snapshot", (SNAPSHOT, day1, day2))):
        spec = os.path.join(work, f"{name}.toml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write(spec_text + "merge_on_read = true\n" + COLUMNS)
        cases[name] = (["--spec", spec], setup, measured)
    figures = measure(binary, work, cases, args.repeat)
    medians = print_medians(figures)
    print(f"\nsnapshot/changes time: {medians['snapshot'][0] / medians['changes'][0]:.2f}")


if __name__ == "__main__":
    main()
