#!/usr/bin/env python3
"""What three simple expectations cost on the large case (issue 60's goal:
at most 10% of the load's time).

Takes the "large" scenario's files of bench/bench.py (generated into --work
with ../shared/bench/gen_changes.py when missing: 2,000,000 orders, then
1,000,000 changes, seed 7). Two datasets of the orders columns, keyed by
order_id, newest by updated_at: "plain", and "rules" with three
expectations, one of each action, which every generated record holds:
`amount >= 0` (drop), `status IN (...)` of the generator's six statuses
(warn), `order_id > 0` (fail). Each loads initial-orders.csv once (the
setup, not measured); each measured load of changes-0001.csv goes into a
fresh copy of its setup's lake, --repeat times per dataset (default 5),
alternating which goes first. Prints each run, the median wall seconds and
peak MiB per dataset, the ratio rules/plain, and the rows each table holds
afterwards (which must be equal).

  bench/expect_cost.py [--bin PATH] [--work DIR] [--repeat N]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dms import COLUMNS, measure, prepare, print_medians, spec_cases, tables_of  # noqa: E402

SPEC = '[[dataset]]\nname = "orders"\nkeys = ["order_id"]\nsequence_by = ["updated_at"]\n'

RULES = """
[[dataset.expect]]
name = "amount_not_negative"
rule = "amount >= 0"
on_fail = "drop"

[[dataset.expect]]
name = "known_status"
rule = "status IN ('placed', 'paid', 'shipped', 'delivered', 'cancelled', 'returned')"

[[dataset.expect]]
name = "positive_id"
rule = "order_id > 0"
on_fail = "fail"
"""


def main():
    args, binary, work, (initial, changes) = prepare(__doc__, "expect")
    texts = {name: SPEC + COLUMNS + extra for name, extra in {"plain": "", "rules": RULES}.items()}
    cases = spec_cases(work, texts, initial, changes)
    figures = measure(binary, work, cases, args.repeat)
    tables = tables_of(binary, work, cases)
    medians = print_medians(figures)
    print(f"\nrules/plain time: {medians['rules'][0] / medians['plain'][0]:.3f} (goal <= 1.10)")
    equal = tables["rules"] == tables["plain"]
    print(f"tables: {tables} ({'equal' if equal else 'DIFFERENT'})")


if __name__ == "__main__":
    main()
