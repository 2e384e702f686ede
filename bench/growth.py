#!/usr/bin/env python3
"""Does a file's cost grow with the table? The same change files into a small and a large table.

For each book size (default 500,000 and 20,000,000 orders) this builds an
`orders` table by loading the book in chunks of 250,000 orders, one process
per chunk (ids ascend, so each chunk is one file of its own id range), runs
`deltaload maintain` as a daily schedule would, then loads the same change files (bench/gen_skewed.py: 50,000 rows, updates on
recent orders) one process per file, as one Lambda invocation each. It prints
per-file wall time, peak memory and the `orders` files each MERGE scanned,
skipped, rewrote and added, then the median per size and the ratio
large/small (goal: at most 1.5).

  bench/growth.py [--sizes 500000,20000000] [--files 5] [--bin PATH] [--work DIR] [--keep]

The baseline is not run here: its MERGE reads and rewrites the whole table on
every file, which for 20,000,000 orders would take minutes per file (see
bench/bench.py for side-by-side figures). The data (about 75 bytes per order)
and lakes go under --work and are removed afterwards unless --keep.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import MERGE, ROOT, timed  # noqa: E402


def load(bin_, lake, f):
    cmd = [bin_, "--log", "deltaload_lake=debug", "load", "--lake", str(lake), str(f)]
    wall, rss, _, err, code = timed(cmd)
    if code not in (0, 2):
        raise SystemExit(f"deltaload failed on {f} (exit {code}): {err.strip()[-2000:]}")
    m = MERGE.search(err)
    files = "/".join((m[1], m[2], m[4], m[3])) if m else "-"
    return wall, rss, files


def run_size(args, orders):
    data = Path(args.work) / f"growth-{orders}"
    lake = Path(args.work) / f"growth-{orders}-lake"
    shutil.rmtree(lake, ignore_errors=True)
    if not data.exists():
        start = time.perf_counter()
        subprocess.run([sys.executable, str(Path(__file__).with_name("gen_skewed.py")),
                        "--orders", str(orders), "--files", str(args.files), "--rows", "50000",
                        "--out", str(data)], check=True)
        print(f"{orders:,} orders: data generated in {time.perf_counter() - start:.0f} s", flush=True)
    chunks = sorted(data.glob("initial-*.csv"))
    start = time.perf_counter()
    for n, f in enumerate(chunks, 1):
        load(args.bin, lake, f)
        if n % 10 == 0 or n == len(chunks):
            print(f"  table build: {n}/{len(chunks)} chunks, {time.perf_counter() - start:.0f} s", flush=True)
    # As a scheduled maintenance would after a day of loads: a checkpoint per
    # table, and the ledger's and reconciliation's one-file-per-load compacted
    # (otherwise every load reads them all: the cost of the number of loads
    # since the last maintenance, not of the table's size).
    start = time.perf_counter()
    wall, _, out, err, code = timed([args.bin, "maintain", "--lake", str(lake)])
    if code != 0:
        raise SystemExit(f"deltaload maintain failed (exit {code}): {err.strip()[-2000:]}")
    print(f"  deltaload maintain: {wall:.1f} s", flush=True)
    rows = []
    for f in sorted(data.glob("changes-*.csv")):
        wall, rss, files = load(args.bin, lake, f)
        rows.append((f.name, wall, rss, files))
        print(f"  {f.name:<18} {wall:7.3f} s {rss:6.0f} MiB  orders files scanned/skipped/rewritten/added {files}",
              flush=True)
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(lake, ignore_errors=True)
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="500000,20000000")
    ap.add_argument("--files", type=int, default=5)
    ap.add_argument("--bin", default=str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "deltaload"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--keep", action="store_true", help="keep the generated data and lakes")
    args = ap.parse_args(argv)
    if not Path(args.bin).is_file():
        raise SystemExit(f"{args.bin} not found: build it with `cargo build --release -p deltaload` or pass --bin")
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    for orders in sizes:
        print(f"{orders:,}-order table:", flush=True)
        results[orders] = run_size(args, orders)
    print()
    med = {o: statistics.median(w for _, w, _, _ in r) for o, r in results.items()}
    for o, r in results.items():
        print(f"{o:>12,} orders: median {med[o]:.3f} s per file, peak {max(m for _, _, m, _ in r):.0f} MiB")
    small, large = sizes[0], sizes[-1]
    print(f"growth: {large:,} / {small:,} orders = {med[large] / med[small]:.2f}x per file (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
