#!/usr/bin/env python3
"""The same order changes as CSV, JSON Lines, Parquet and Avro: deltaload against the Python baseline.

Generates the "large" scenario of bench/bench.py at the given size with
../shared/bench/gen_changes.py (default 1,000,000 changes to a 2,000,000-order
book, seed 7), converts changes-0001.csv to changes-0001.jsonl and
changes-0001.parquet with polars and the Parquet file to changes-0001.avro
with fastavro (snappy) (in the baseline's Python; not measured),
loads initial-orders.csv once per tool (the setup, reported, not compared),
then loads the change file in each format --repeat times per tool (default 3,
alternating which tool goes first), each time into a fresh copy of the setup's
table. Prints per-run wall time and peak memory, then one table: per format
the records, each tool's median seconds and peak MiB and the ratio
baseline/deltaload, each tool's figures relative to its own CSV load, and the
`orders` table each run left behind (rows and a fingerprint of its contents),
which must be the same for every format and both tools.

  bench/formats.py [--bin PATH] [--python PATH] [--work DIR] [--repeat N] [--rows N --orders N] [--composite]

--composite: deltaload loads every format (the setup's CSV too) through a spec
keyed by (customer_id, order_id), a composite key; the baseline still merges
on order_id. The generator never moves an order to another customer, so both
keys pick the same rows and the tables must still be equal.

deltaload: `deltaload load --lake DIR FILE` for CSV (the built-in orders
dataset); `deltaload --spec SPEC load --lake DIR FILE` for JSON Lines and
Parquet, with the built-in orders dataset written as a spec plus `format`
(the two specs are written into --work).

Baseline: ../shared/bench/py_load_orders.py for CSV (polars parse, newest row
per order_id, delta-rs MERGE). For JSON Lines and Parquet, py_load_formats.py
(written into --work) imports py_load_orders and swaps its CSV parser for
pl.read_ndjson / pl.read_parquet; what follows (rejects write, dedup, MERGE,
the printed line) is py_load_orders' own code.

The files hold the same changes: the generator's CSV has about 0.5%
deliberately bad lines (rejected by both tools); the conversion drops them, so
JSON Lines and Parquet hold only the good records (the table prints how many
each file holds). JSON Lines: amount a JSON number with two decimals (25.50),
timestamps the CSV's ISO text, one object per line. Parquet: order_id int64,
strings, amount decimal(10,2), timestamps us UTC, snappy, polars' row groups.

Figures are whole-process wall-clock seconds and peak resident memory
(maxrss, read with os.wait4) of each load's process, as in bench.py. Needs a
release build (`cargo build --release -p deltaload`), the baseline's Python
(scripts/python-env) and ../shared/bench beside the clone.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ROOT, SHARED, timed  # noqa: E402

FORMATS = ["csv", "jsonl", "parquet", "avro"]
TOOLS = ["deltaload", "baseline"]
LINE = re.compile(r": (\d+) rejected, (\d+) updated, (\d+) added, table version (\d+)")

# The built-in orders dataset (crates/core/src/spec/orders.toml) with a format
# of its own instead of the [dataset.csv] section.
SPEC = """\
# bench/formats.py: the built-in orders dataset, its files as {format}
[[dataset]]
name = "orders"
keys = [{keys}]
sequence_by = ["updated_at"]
tie_break = [{tie_break}]
format = "{format}"

[[dataset.columns]]
name = "order_id"
type = "bigint"

[[dataset.columns]]
name = "customer_id"
type = "string"

[[dataset.columns]]
name = "status"
type = "string"

[[dataset.columns]]
name = "amount"
type = "decimal(10,2)"

[[dataset.columns]]
name = "currency"
type = "string"

[[dataset.columns]]
name = "ordered_at"
type = "timestamp"

[[dataset.columns]]
name = "updated_at"
type = "timestamp"
"""

# The helper (bench/formats_helper.py), run with the baseline's Python
# (polars, pyarrow, deltalake), with SHARED set where it is copied:
#   load jsonl|parquet WAREHOUSE FILE   the baseline for JSON Lines and Parquet (measured)
#   convert CSV JSONL PARQUET           the change file in the other two formats; prints a JSON summary
#   count TABLE                         rows and a fingerprint of an orders table; prints JSON
HELPER = (Path(__file__).resolve().parent / "formats_helper.py").read_text()


def helper_json(args, helper, *cmd):
    """Runs a helper command with the baseline's Python; returns its printed JSON."""
    proc = subprocess.run([args.python, str(helper), *map(str, cmd)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{helper.name} {cmd[0]} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mib(path):
    return Path(path).stat().st_size / 2**20


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "deltaload"))
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--repeat", type=int, default=3,
                    help="loads per format and tool, each into a fresh copy of the setup's table (the median is reported)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="changes in the change file")
    ap.add_argument("--orders", type=int, default=2_000_000, help="orders in the table before the changes")
    ap.add_argument("--composite", action="store_true",
                    help="deltaload keys the dataset by (customer_id, order_id), in every format")
    args = ap.parse_args(argv)

    if not Path(args.bin).is_file():
        raise SystemExit(f"{args.bin} not found: build it with `cargo build --release -p deltaload` "
                         "(with the same CARGO_TARGET_DIR) or pass --bin")
    if not Path(args.python).is_file():
        raise SystemExit(f"{args.python} not found: run scripts/python-env or pass --python")
    gen = SHARED / "gen_changes.py"
    baseline = SHARED / "py_load_orders.py"
    if not gen.exists() or not baseline.exists():
        raise SystemExit(f"{SHARED} lacks gen_changes.py or py_load_orders.py: the benchmark needs ../shared/bench beside the clone")
    repeat = max(1, args.repeat)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    helper = work / "py_load_formats.py"
    helper.write_text(HELPER.replace("import sys\n", f"import sys\n\nSHARED = {str(SHARED)!r}\n", 1))

    # the data: generated once, converted once (neither is measured)
    data = work / f"data-formats-{args.rows}-{args.orders}"
    if not (data / "manifest.txt").exists():
        print(f"generating {args.rows:,} changes to {args.orders:,} orders into {data}", flush=True)
        subprocess.run([sys.executable, str(gen), "--files", "1", "--rows", str(args.rows), "--orders", str(args.orders),
                        "--initial", "--seed", "7", "--out", str(data)], check=True, stdout=subprocess.DEVNULL)
    initial = data / "initial-orders.csv"
    files = {f: data / f"changes-0001.{f}" for f in FORMATS}
    summary_path = data / "conversion.json"
    if not summary_path.exists() or not all(p.exists() for p in files.values()):
        print(f"converting {files['csv'].name} to JSON Lines and Parquet", flush=True)
        summary = helper_json(args, helper, "convert", files["csv"], files["jsonl"], files["parquet"])
        summary_path.write_text(json.dumps(summary) + "\n")
    summary = json.loads(summary_path.read_text())
    avro_path = data / "avro.json"
    if not avro_path.exists() or not files["avro"].exists():
        print(f"converting {files['parquet'].name} to Avro (fastavro, snappy)", flush=True)
        avro_path.write_text(json.dumps(helper_json(args, helper, "avro", files["parquet"], files["avro"])) + "\n")
    avro = json.loads(avro_path.read_text())
    records = {"csv": summary["lines"], "jsonl": summary["records"], "parquet": summary["records"],
               "avro": avro["records"]}
    print(f"data: {data}")
    print(f"  csv      {records['csv']:>10,} lines ({summary['dropped']:,} do not parse: rejects), {mib(files['csv']):.1f} MiB")
    print(f"  jsonl    {records['jsonl']:>10,} records (the lines that parse), {mib(files['jsonl']):.1f} MiB")
    print(f"  parquet  {records['parquet']:>10,} records (the lines that parse), {mib(files['parquet']):.1f} MiB, "
          f"snappy, {summary['row_groups']} row group(s)")
    print(f"  avro     {records['avro']:>10,} records (the same), {mib(files['avro']):.1f} MiB, "
          f"snappy, {avro['blocks']:,} blocks (fastavro's default sync interval)")

    specs = {}
    keys = '"customer_id", "order_id"' if args.composite else '"order_id"'
    ties = ["status", "customer_id", "currency", "amount", "ordered_at"]
    tie_break = ", ".join(f'"{c}"' for c in ties if not (args.composite and c == "customer_id"))
    for f in FORMATS if args.composite else ("jsonl", "parquet", "avro"):
        specs[f] = work / f"spec-orders-{f}{'-composite' if args.composite else ''}.toml"
        csv = '\n[dataset.csv]\nheader = "exact"\nnull_if = [""]\n' if f == "csv" else ""
        specs[f].write_text(SPEC.format(format=f, keys=keys, tie_break=tie_break) + csv)
        proc = subprocess.run([args.bin, "spec", "check", str(specs[f])], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"deltaload spec check {specs[f]} failed (exit {proc.returncode}): "
                             f"{(proc.stderr or proc.stdout).strip()}")

    lakes = {"deltaload": work / "lake-formats", "baseline": work / "warehouse-formats"}
    setups = {n: Path(f"{p}-setup") for n, p in lakes.items()}

    def command(tool, fmt, lake, path):
        if tool == "deltaload":
            spec = ["--spec", str(specs[fmt])] if fmt in specs else []
            return [args.bin, *spec, "load", "--lake", str(lake), str(path)]
        if fmt == "csv":
            return [args.python, str(baseline), "--warehouse", str(lake), str(path)]
        return [args.python, str(helper), "load", fmt, str(lake), str(path)]

    def load(tool, fmt, lake, path):
        wall, rss, out, err, code = timed(command(tool, fmt, lake, path))
        m = LINE.search(out)
        if code != 0 or not m:
            raise SystemExit(f"{tool} failed on {path} (exit {code}): {out.strip()[-1000:]} {err.strip()[-2000:]}")
        return wall, rss, tuple(int(g) for g in m.groups())

    def table(tool, lake):
        return helper_json(args, helper, "count", Path(lake) / "orders")

    print(f"setup: {initial.name} ({args.orders:,} orders) into both (not compared)")
    for tool in TOOLS:
        shutil.rmtree(setups[tool], ignore_errors=True)
        wall, rss, counts = load(tool, "csv", setups[tool], initial)
        t = table(tool, setups[tool])
        print(f"  {tool:<9} {wall:8.2f} s {rss:6.0f} MiB  {counts[0]} rejected, {counts[2]} added; "
              f"orders rows {t['rows']:,}", flush=True)

    print(f"\nthe change file is loaded {repeat} time(s) per format and tool, each into a fresh copy of the setup's table")
    print(f"{'format':<8} {'run':>3}  {'tool':<9} {'s':>8} {'MiB':>6}  rejected/updated/added  orders rows  contents")
    results = {(f, t): [] for f in FORMATS for t in TOOLS}
    outcome = {}   # (format, tool) -> set of (rejected, updated, added)
    tables = {}    # (format, tool) -> set of (rows, fingerprint)
    k = 0
    for fmt in FORMATS:
        for i in range(repeat):
            order = TOOLS if k % 2 == 0 else TOOLS[::-1]
            k += 1
            for tool in order:
                shutil.rmtree(lakes[tool], ignore_errors=True)
                shutil.copytree(setups[tool], lakes[tool])
                wall, rss, counts = load(tool, fmt, lakes[tool], files[fmt])
                t = table(tool, lakes[tool])
                results[(fmt, tool)].append((wall, rss))
                outcome.setdefault((fmt, tool), set()).add(counts[:3])
                tables.setdefault((fmt, tool), set()).add((t["rows"], t["fingerprint"]))
                print(f"{fmt:<8} {i + 1:>3}  {tool:<9} {wall:8.3f} {rss:6.0f}  "
                      f"{'/'.join(map(str, counts[:3])):<22} {t['rows']:>11,}  {t['fingerprint']}", flush=True)
    shutil.rmtree(lakes["deltaload"], ignore_errors=True)
    shutil.rmtree(lakes["baseline"], ignore_errors=True)

    med = {key: statistics.median(w for w, _ in r) for key, r in results.items()}
    peak = {key: max(m for _, m in r) for key, r in results.items()}
    print()
    print(f"{args.rows:,} changes into a {args.orders:,}-order table; median of {repeat} run(s), peak = highest maxrss"
          + ("; deltaload keyed by (customer_id, order_id)" if args.composite else ""))
    print(f"{'format':<8} {'records':>10} | {'deltaload s':>11} {'peak MiB':>8} | {'baseline s':>10} {'peak MiB':>8} | {'baseline/deltaload':>18}")
    for fmt in FORMATS:
        d, b = (fmt, "deltaload"), (fmt, "baseline")
        print(f"{fmt:<8} {records[fmt]:>10,} | {med[d]:>11.3f} {peak[d]:>8.0f} | {med[b]:>10.3f} {peak[b]:>8.0f} | "
              f"{med[b] / med[d]:>17.2f}x")
    print()
    print("each tool against its own CSV load (time, peak memory):")
    print(f"{'format':<8} | {'deltaload time':>14} {'MiB':>6} | {'baseline time':>13} {'MiB':>6}")
    for fmt in FORMATS:
        d, b = (fmt, "deltaload"), (fmt, "baseline")
        print(f"{fmt:<8} | {med[d] / med[('csv', 'deltaload')]:>13.2f}x {peak[d] / peak[('csv', 'deltaload')]:>5.2f}x | "
              f"{med[b] / med[('csv', 'baseline')]:>12.2f}x {peak[b] / peak[('csv', 'baseline')]:>5.2f}x")

    print()
    print(f"deltaload's Avro load against its Parquet load: "
          f"{med[('avro', 'deltaload')] / med[('parquet', 'deltaload')]:.2f}x the time (goal: at most 1.30x)")

    problems = []
    print()
    print("the orders table after each load (rows, contents fingerprint), and the loaders' counts:")
    all_tables = set()
    for fmt in FORMATS:
        parts = []
        for tool in TOOLS:
            ts, cs = tables[(fmt, tool)], outcome[(fmt, tool)]
            all_tables |= ts
            if len(ts) > 1 or len(cs) > 1:
                problems.append(f"{fmt}: {tool}'s runs differ: {sorted(ts)} {sorted(cs)}")
            (rows, fp), = sorted(ts)[:1]
            r, u, a = sorted(cs)[0]
            parts.append(f"{tool} {rows:,} rows ({fp}), {r} rejected/{u} updated/{a} added")
        print(f"  {fmt:<8} " + "; ".join(parts))
        if tables[(fmt, "deltaload")] != tables[(fmt, "baseline")]:
            problems.append(f"{fmt}: the two tools' tables differ")
        if {c[1:] for c in outcome[(fmt, "deltaload")]} != {c[1:] for c in outcome[(fmt, "baseline")]}:
            problems.append(f"{fmt}: the tools' updated/added counts differ")
    if len(all_tables) > 1:
        problems.append(f"the formats do not all end in the same table: {sorted(all_tables)}")
    expected_rejects = {"csv": summary["dropped"], "jsonl": 0, "parquet": 0, "avro": 0}
    for (fmt, tool), cs in outcome.items():
        if {c[0] for c in cs} != {expected_rejects[fmt]}:
            problems.append(f"{fmt}: {tool} rejected {sorted(c[0] for c in cs)}, expected {expected_rejects[fmt]}")
    print("  same table for every format and both tools: " + ("yes" if not problems else "NO"))
    for p in problems:
        print(f"  MISMATCH {p}")

    print()
    print("notes:")
    print(f"  - records: the CSV has {records['csv']:,} lines of which {summary['dropped']:,} do not parse (each tool rejects "
          "them); the conversion dropped those, so JSON Lines and Parquet hold the "
          f"{records['jsonl']:,} good records and nothing is rejected there: the same changes in every format.")
    print("  - JSON Lines: amount is written as a JSON number with two decimals (25.50). deltaload reads it from its text, "
          "exactly. polars' read_ndjson cannot read a JSON number into a Decimal (SchemaError), so the baseline reads "
          "amount as a string, which polars gives as the text of the float it parsed (25.50 -> \"25.5\"), and casts it "
          "to decimal(10,2): exact for these values (a float keeps 15 significant digits; decimal(10,2) has at most 10), "
          "not in general.")
    print("  - the baseline for JSON Lines and Parquet checks only that key, amount and timestamps are present and "
          "parse (the data holds no bad records); its CSV parser also checks every field's text.")
    print("  - Parquet written by polars: snappy; order_id int64, amount decimal(10,2), timestamps us UTC.")
    print("  - Avro written by fastavro from the Parquet file: snappy, amount bytes with the decimal(10,2) logical type, "
          "timestamps long timestamp-micros, strings nullable unions. The baseline for Avro reads it with fastavro "
          "into polars (what a Python job does), then py_load_orders' own steps.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
