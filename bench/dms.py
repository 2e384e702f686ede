#!/usr/bin/env python3
"""An AWS DMS feed against the same rows as a plain CSV dataset.

Takes the "large" scenario's files of bench/bench.py (generated into --work
with ../shared/bench/gen_changes.py when missing: 2,000,000 orders, then
1,000,000 changes, seed 7) and writes them as AWS DMS writes them: the
orders as a full-load file (LOAD00000001.csv, no header, no Op) and the
changes as a change file (20261201-101500123.csv, no header, U first).

Plain: the orders columns with a header and no sequence (the later record
wins, as in a DMS file) load initial-orders.csv, then changes-0001.csv.
DMS: the same columns with
preset = "aws_dms" (order by file and line, deletes by Op) loads the two
DMS files. The setup (the first file) is loaded once per dataset and not
measured; each measured load goes into a fresh copy of its setup's lake,
--repeat times per dataset (default 5), alternating which goes first.
Prints each run, then per dataset the median wall seconds and peak MiB, the
ratio plain/DMS (speed of DMS relative to plain: the goal is >= 0.8), and
the rows of each table afterwards, which must be equal.

  bench/dms.py [--bin PATH] [--work DIR] [--repeat N]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "bench")

COLUMNS = """columns = [
    { name = "order_id", type = "bigint" },
    { name = "customer_id", type = "string" },
    { name = "status", type = "string" },
    { name = "amount", type = "decimal(10,2)" },
    { name = "currency", type = "string" },
    { name = "ordered_at", type = "timestamp" },
    { name = "updated_at", type = "timestamp" },
]
"""
DMS_SPEC = '[[dataset]]\nname = "orders"\npreset = "aws_dms"\nkeys = ["order_id"]\n' + COLUMNS
PLAIN_SPEC = '[[dataset]]\nname = "orders"\nkeys = ["order_id"]\n' + COLUMNS


def run(cmd):
    """Runs `cmd`; its wall seconds and peak resident MiB."""
    # Output goes to files: a pipe left unread until the end fills and
    # stops the command (a `show` of 2,000,000 rows did).
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_file, stderr=err_file)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        out = out_file.read().decode()
        err = err_file.read().decode()
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out}{err}")
    return wall, usage.ru_maxrss / 1024, out


def data(work):
    """The large scenario's two files, generated when missing."""
    folder = os.path.join(work, "data-large")
    if not os.path.exists(os.path.join(folder, "changes-0001.csv")):
        subprocess.run(
            [sys.executable, os.path.join(SHARED, "gen_changes.py"), "--out", folder,
             "--files", "1", "--rows", "1000000", "--orders", "2000000", "--initial", "--seed", "7"],
            check=True, stdout=subprocess.DEVNULL,
        )
    return os.path.join(folder, "initial-orders.csv"), os.path.join(folder, "changes-0001.csv")


def table_rows(binary, flags, lake):
    """The orders table's row count and a hash of its rows (the orders
    columns), to compare two tables."""
    _, _, shown = run([binary, *flags, "show", "--lake", lake, "orders",
                       "--limit", "0", "--format", "csv"])
    # Sorted: the two tables' files need not hold rows in one order.
    rows = sorted(line.split(",")[:7] for line in shown.splitlines()[1:])
    return len(rows), hash(tuple(map(tuple, rows)))


def spec_cases(work, texts, setup, measured):
    """A case per spec text of `texts` (name -> TOML), written to
    `work`/NAME.toml, each loading `setup` then measuring `measured`."""
    cases = {}
    for name, text in texts.items():
        spec = os.path.join(work, f"{name}.toml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write(text)
        cases[name] = (["--spec", spec], setup, measured)
    return cases


def tables_of(binary, work, cases):
    """[`table_rows`] of each case's last measured lake."""
    return {name: table_rows(binary, cases[name][0], os.path.join(work, f"lake-{name}"))
            for name in cases}


def print_medians(figures):
    """Prints a table of the median wall seconds and peak MiB of each
    dataset's runs ((seconds, MiB) pairs); returns them."""
    medians = {n: (statistics.median(w for w, _ in f), statistics.median(m for _, m in f))
               for n, f in figures.items()}
    print("\n| dataset | median s | peak MiB |")
    print("|---|---|---|")
    for n, (w, m) in medians.items():
        print(f"| {n} | {w:.3f} | {m:.0f} |")
    return medians


def measure(binary, work, cases, repeat):
    """Loads each case's setup file once into `work`/lake-NAME-setup (not
    measured), then, `repeat` times, its measured file into a fresh copy
    of that lake, alternating which case goes first; `cases` maps a name to
    (command-line flags, setup file, measured file). Prints each run and
    returns each case's (wall seconds, peak MiB) pairs; the lakes of the
    last runs stay at `work`/lake-NAME."""
    for name, (flags, setup, _) in cases.items():
        lake = os.path.join(work, f"lake-{name}-setup")
        shutil.rmtree(lake, ignore_errors=True)
        wall, _, _ = run([binary, *flags, "load", "--lake", lake, setup])
        print(f"setup {name}: {wall:.2f} s (not measured)")
    figures = {name: [] for name in cases}
    for i in range(repeat):
        order = list(cases) if i % 2 == 0 else list(reversed(cases))
        for name in order:
            flags, _, measured = cases[name]
            lake = os.path.join(work, f"lake-{name}")
            shutil.rmtree(lake, ignore_errors=True)
            shutil.copytree(os.path.join(work, f"lake-{name}-setup"), lake)
            wall, mib, out = run([binary, *flags, "load", "--lake", lake, measured])
            figures[name].append((wall, mib))
            print(f"run {i + 1} {name}: {wall:.3f} s, {mib:.0f} MiB: {out.strip()}")
    return figures


def prepare(doc, name, extra=()):
    """Parses the options every bench takes (--bin, --work, --repeat) and
    `extra` ((flag, keyword arguments) pairs) for the script whose
    docstring is `doc`; returns the options, the binary's path, the
    script's folder `--work`/`name` (created) and the large scenario's two
    files."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "deltaload"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--repeat", type=int, default=5)
    for flag, kwargs in extra:
        ap.add_argument(flag, **kwargs)
    args = ap.parse_args()
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    return args, os.path.abspath(args.bin), work, data(args.work)


def as_dms(src, dst, op):
    """`src` without its header, each line with `op` first (none: as it is)."""
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        next(f)
        for line in f:
            out.write(line if op is None else f"{op},{line}")


def main():
    args, binary, work, (initial, changes) = prepare(__doc__, "dms")
    feed = os.path.join(work, "feed")
    os.makedirs(feed, exist_ok=True)
    load_file = os.path.join(feed, "LOAD00000001.csv")
    cdc_file = os.path.join(feed, "20261201-101500123.csv")
    as_dms(initial, load_file, None)
    as_dms(changes, cdc_file, "U")
    specs = {}
    for name, text in (("plain", PLAIN_SPEC), ("dms", DMS_SPEC)):
        specs[name] = os.path.join(work, f"{name}.toml")
        with open(specs[name], "w", encoding="utf-8") as f:
            f.write(text)
    cases = {
        "plain": (["--spec", specs["plain"]], initial, changes),
        "dms": (["--spec", specs["dms"]], load_file, cdc_file),
    }
    figures = measure(binary, work, cases, args.repeat)
    tables = {}
    # After the measured runs: a child forked from this process while it
    # holds the shown rows would start from its peak memory.
    for name, (flags, _, _) in cases.items():
        tables[name] = table_rows(binary, flags, os.path.join(work, f"lake-{name}"))
    medians = print_medians(figures)
    print(f"\nDMS speed relative to plain: {medians['plain'][0] / medians['dms'][0]:.2f} (goal >= 0.8)")
    print(f"tables: {tables} ({'equal' if tables['plain'] == tables['dms'] else 'DIFFERENT'})")


if __name__ == "__main__":
    main()
