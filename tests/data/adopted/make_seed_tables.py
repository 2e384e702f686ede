"""Writes the tables the seed's Spark job (load_orders.py) leaves after day 1,
with Python deltalake, as another writer would: `orders` with the job's
`CREATE TABLE ... (order_id BIGINT, ...) USING DELTA` schema (every column
nullable, no source_file or loaded_at) holding day 1's 4 orders, and
`rejected_orders` with the job's own layout (the orders' columns, `_bad`,
`source_file`) holding day 1's broken line.

    python tests/data/adopted/make_seed_tables.py OUT_DIR

The tests copy the result from tests/data/adopted/seed-day1 (made once with
this script; rerun it to remake them).
"""
import os
import sys
from datetime import datetime, timezone
from decimal import Decimal

import pyarrow as pa
from deltalake import write_deltalake

TS = pa.timestamp("us", tz="UTC")
ORDERS = pa.schema([
    ("order_id", pa.int64()), ("customer_id", pa.string()), ("status", pa.string()),
    ("amount", pa.decimal128(10, 2)), ("currency", pa.string()),
    ("ordered_at", TS), ("updated_at", TS),
])


def ts(text):
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def main(out):
    # Day 1 after the job: 1001 shipped, 1002 cancelled, 1004 and 1005 placed.
    rows = [
        (1001, "C01", "shipped", "25.50", "2026-10-01T09:15:00", "2026-10-02T08:00:00"),
        (1002, "C02", "cancelled", "12.00", "2026-10-01T10:02:00", "2026-10-03T09:00:00"),
        (1004, "C01", "placed", "40.00", "2026-10-02T12:45:00", "2026-10-02T12:45:00"),
        (1005, "C09", "placed", "8.75", "2026-10-03T14:10:00", "2026-10-03T14:10:00"),
    ]
    orders = pa.table({
        "order_id": [r[0] for r in rows], "customer_id": [r[1] for r in rows],
        "status": [r[2] for r in rows], "amount": [Decimal(r[3]) for r in rows],
        "currency": ["EUR"] * len(rows), "ordered_at": [ts(r[4]) for r in rows],
        "updated_at": [ts(r[5]) for r in rows],
    }, schema=ORDERS)
    write_deltalake(os.path.join(out, "orders"), orders)
    bad = "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00"
    rejected_schema = ORDERS.append(pa.field("_bad", pa.string())).append(pa.field("source_file", pa.string()))
    rejected = pa.table({
        "order_id": [1003], "customer_id": ["C03"], "status": ["placed"], "amount": pa.array([None], pa.decimal128(10, 2)),
        "currency": ["EUR"], "ordered_at": [ts("2026-10-02T11:30:00")], "updated_at": [ts("2026-10-02T11:30:00")],
        "_bad": [bad], "source_file": ["raw/changes/2026-10-03.csv"],
    }, schema=rejected_schema)
    write_deltalake(os.path.join(out, "rejected_orders"), rejected)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.stdout.flush()
    os._exit(0)
