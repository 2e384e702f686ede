"""`deltaload show` on a large `orders`: time and peak memory of each way of
looking at it, one process per command, timed with /usr/bin/time.

Writes ROWS orders (default 1,500,000) straight into <lake>/orders with Python
deltalake (the table deltaload keeps: same columns and types), then runs
  show orders                          the first 20 by order_id and the total
  show orders --limit 0 --format csv   every row, streamed, to /dev/null
  show orders --key N                  one order
and, with --old BIN, the same first command with another build (one that
printed the whole table) for comparison.

usage: python3 bench/show.py --bin target/release/deltaload [--rows 1500000]
         [--old OTHER_BIN] [--python .venv/bin/python]
"""
import argparse
import os
import subprocess
import sys
import tempfile

MAKE = r'''
import sys, datetime, decimal, os
import pyarrow as pa
from deltalake import write_deltalake
lake, n = sys.argv[1], int(sys.argv[2])
ts = pa.timestamp("us", tz="UTC")
at = datetime.datetime(2026, 10, 1, tzinfo=datetime.timezone.utc)
t = pa.table({
    "order_id": pa.array(range(1, n + 1), pa.int64()),
    "customer_id": pa.array([f"C{i % 9973}" for i in range(n)]),
    "status": pa.array(["placed"] * n),
    "amount": pa.array([decimal.Decimal(i % 100000) / 100 for i in range(n)], pa.decimal128(10, 2)),
    "currency": pa.array(["EUR"] * n),
    "ordered_at": pa.array([at] * n, ts),
    "updated_at": pa.array([at] * n, ts),
    "source_file": pa.array(["/bench/initial.csv"] * n),
    "loaded_at": pa.array([at] * n, ts),
})
write_deltalake(f"{lake}/orders", t, mode="overwrite")
sys.stdout.flush()
os._exit(0)
'''


def timed(cmd):
    """Runs cmd with stdout to /dev/null; returns (seconds, peak RSS in MiB)."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", out.name, *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        seconds, kib = out.read().split()[-2:]
    return float(seconds), int(kib) / 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--old")
    p.add_argument("--rows", type=int, default=1_500_000)
    p.add_argument("--python", default=os.path.join(os.path.dirname(__file__), "..", ".venv", "bin", "python"))
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as lake:
        subprocess.run([a.python, "-c", MAKE, lake, str(a.rows)], check=True)
        runs = [("show orders", [a.bin, "show", "orders", "--lake", lake]),
                ("show orders --limit 0 --format csv", [a.bin, "show", "orders", "--lake", lake, "--limit", "0", "--format", "csv"]),
                (f"show orders --key {a.rows // 2}", [a.bin, "show", "orders", "--lake", lake, "--key", str(a.rows // 2)])]
        if a.old:
            runs.insert(0, ("show orders (--old build)", [a.old, "show", "orders", "--lake", lake]))
        print(f"{a.rows:,} orders")
        print(f"{'command':<40} {'seconds':>8} {'peak MiB':>9}")
        for name, cmd in runs:
            seconds, mib = timed(cmd)
            print(f"{name:<40} {seconds:>8.2f} {mib:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
