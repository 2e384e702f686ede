#!/usr/bin/env python3
"""Side-by-side benchmark of `deltaload load` against the Python delta-rs baseline.

Generates a change stream with ../shared/bench/gen_changes.py (deterministic),
then loads it file by file, one process per file (as one Lambda invocation per
file), alternating deltaload and the baseline on the same files in the same run,
each into its own fresh lake. Prints per-file wall time and peak memory, the
medians, the ratio baseline/deltaload, and checks that both printed the same
counts for every file.

  bench/bench.py [--scenario b|seed|large|batch] [--bin PATH] [--python PATH] [--work DIR] [--repeat N]

Scenarios (gen_changes.py arguments in SCENARIOS):
  seed   the two seed files
  b      20 files x 50,000 rows into a growing table (500,000-order book)
  large  1,000,000 changes into a 2,000,000-order table: the initial orders are
         loaded first by both (reported, not compared), then the change file,
         --repeat times (default 3) per tool into a copy of that table
  batch  10 files x 1,000 rows: 10 single-file processes against one process
         loading all 10 (deltaload `--batch-size 10`, the baseline all 10 files
         in one process)

For deltaload, each load's MERGE reports the `orders` files it scanned, skipped
and rewrote (debug log); the table prints them per file. Figures are
whole-process wall-clock seconds and peak resident memory (maxrss) of each
child process, read with os.wait4.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "bench"

SCENARIOS = {
    # name: gen_changes.py arguments
    "b": ["--files", "20", "--rows", "50000", "--orders", "500000", "--seed", "42"],
    "seed": ["--seed-dataset"],
    "large": ["--files", "1", "--rows", "1000000", "--orders", "2000000", "--initial", "--seed", "7"],
    "batch": ["--files", "10", "--rows", "1000", "--orders", "20000", "--seed", "3"],
}

MERGE = re.compile(r"files_scanned=(\d+) files_skipped=(\d+) files_added=(\d+) files_removed=(\d+)")


def timed(cmd):
    """Runs cmd as a child; returns (wall s, peak RSS MiB, stdout, stderr, exit code)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.execvp(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return (wall, usage.ru_maxrss / 1024, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), os.waitstatus_to_exitcode(status))


COUNTS = re.compile(r": (\d+) rejected, (\d+) updated, (\d+) added")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), default="b")
    ap.add_argument("--bin", default=str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "deltaload"))
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--repeat", type=int, default=3,
                    help="large: load the change file this many times per tool, each time into a copy "
                         "of the table as the setup left it (the median is reported)")
    args = ap.parse_args(argv)

    if not Path(args.bin).is_file():
        raise SystemExit(f"{args.bin} not found: build it with `cargo build --release -p deltaload` "
                         "(with the same CARGO_TARGET_DIR) or pass --bin")
    if not Path(args.python).is_file():
        raise SystemExit(f"{args.python} not found: run scripts/python-env or pass --python")
    gen = SHARED / "gen_changes.py"
    baseline = SHARED / "py_load_orders.py"
    if not gen.exists():
        raise SystemExit(f"{gen} not found: the benchmark needs ../shared/bench beside the clone")
    work = Path(args.work)
    data = work / f"data-{args.scenario}"
    if not data.exists():
        subprocess.run([sys.executable, str(gen), *SCENARIOS[args.scenario], "--out", str(data)], check=True,
                       stdout=subprocess.DEVNULL)
    files = sorted(p for p in data.iterdir() if p.suffix == ".csv" and p.name != "initial-orders.csv")
    lakes = {"deltaload": work / "lake-deltaload", "baseline": work / "lake-baseline"}
    for lake in lakes.values():
        shutil.rmtree(lake, ignore_errors=True)
    commands = {
        "deltaload": lambda *f: [args.bin, "--log", "deltaload_lake=debug", "load", "--batch-size", "10",
                                 "--lake", str(lakes["deltaload"]), *map(str, f)],
        "baseline": lambda *f: [args.python, str(baseline), "--warehouse", str(lakes["baseline"]), *map(str, f)],
    }
    if args.scenario == "batch":
        return batch(files, commands, lakes)
    initial = data / "initial-orders.csv"
    if initial.exists():
        print(f"setup: {initial.name} into both lakes (not compared)")
        for name in commands:
            wall, rss, _, err, code = timed(commands[name](initial))
            if code not in (0, 2):
                raise SystemExit(f"{name} failed on {initial} (exit {code}): {err.strip()}")
            print(f"  {name}: {wall:.2f} s, {rss:.0f} MiB")
    repeat = max(1, args.repeat) if initial.exists() and len(files) == 1 else 1
    if repeat > 1:
        for lake in lakes.values():
            shutil.rmtree(f"{lake}-setup", ignore_errors=True)
            shutil.copytree(lake, f"{lake}-setup")
        files = files * repeat
        print(f"the change file is loaded {repeat} times per tool, each into a fresh copy of the setup's table")
    results = {name: [] for name in commands}
    print(f"scenario {args.scenario}: {len(files)} loads from {data}")
    print(f"{'file':<22} {'deltaload s':>11} {'MiB':>6} {'baseline s':>10} {'MiB':>6} {'ratio':>6}  orders files scanned/skipped/rewritten/added")
    mismatches = 0
    for i, f in enumerate(files):
        order = ["deltaload", "baseline"] if i % 2 == 0 else ["baseline", "deltaload"]
        row = {}
        for name in order:
            if repeat > 1:
                shutil.rmtree(lakes[name], ignore_errors=True)
                shutil.copytree(f"{lakes[name]}-setup", lakes[name])
            wall, rss, out, err, code = timed(commands[name](f))
            if code not in (0, 2):
                raise SystemExit(f"{name} failed on {f} (exit {code}): {err.strip()}")
            m = COUNTS.search(out)
            merge = MERGE.search(err) if name == "deltaload" else None
            row[name] = (wall, rss, m.groups() if m else None, merge.groups() if merge else None)
            results[name].append((wall, rss))
        if row["deltaload"][2] != row["baseline"][2]:
            mismatches += 1
            print(f"  counts differ on {f.name}: deltaload {row['deltaload'][2]}, baseline {row['baseline'][2]}")
        d, b = row["deltaload"], row["baseline"]
        files_line = "/".join((d[3][0], d[3][1], d[3][3], d[3][2])) if d[3] else "-"
        print(f"{f.name:<22} {d[0]:>11.3f} {d[1]:>6.0f} {b[0]:>10.3f} {b[1]:>6.0f} {b[0] / d[0]:>6.2f}  {files_line}")
    med = {n: statistics.median(w for w, _ in r) for n, r in results.items()}
    peak = {n: max(m for _, m in r) for n, r in results.items()}
    total = {n: sum(w for w, _ in r) for n, r in results.items()}
    print()
    print(f"median per file: deltaload {med['deltaload']:.3f} s, baseline {med['baseline']:.3f} s, "
          f"baseline/deltaload {med['baseline'] / med['deltaload']:.2f}x")
    print(f"total: deltaload {total['deltaload']:.2f} s, baseline {total['baseline']:.2f} s")
    print(f"peak memory: deltaload {peak['deltaload']:.0f} MiB, baseline {peak['baseline']:.0f} MiB")
    for n, r in results.items():
        print(f"{n}: first file {r[0][0]:.3f} s, last file {r[-1][0]:.3f} s, last/first {r[-1][0] / r[0][0]:.2f}")
    print(f"files with different counts: {mismatches}")
    return 1 if mismatches else 0


def batch(files, commands, lakes):
    """10 single-file processes against one process for all files, per tool."""
    print(f"batch: {len(files)} files; each way on a fresh lake")
    figures = {}
    for name in commands:
        for way in ("single", "together"):
            shutil.rmtree(lakes[name], ignore_errors=True)
            runs = [commands[name](f) for f in files] if way == "single" else [commands[name](*files)]
            walls, peak = [], 0
            for cmd in runs:
                wall, rss, _, err, code = timed(cmd)
                if code not in (0, 2):
                    raise SystemExit(f"{name} failed (exit {code}): {err.strip()}")
                walls.append(wall)
                peak = max(peak, rss)
            figures[(name, way)] = (sum(walls), peak)
            print(f"  {name:<9} {way:<8} {sum(walls):7.3f} s in {len(runs)} process(es), peak {peak:.0f} MiB")
    for name in commands:
        single, together = figures[(name, "single")][0], figures[(name, "together")][0]
        print(f"{name}: one process for {len(files)} files costs {together / single:.2f} of {len(files)} single-file processes")
    print(f"deltaload together vs baseline together: {figures[('baseline', 'together')][0] / figures[('deltaload', 'together')][0]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
