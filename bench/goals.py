#!/usr/bin/env python3
"""Every performance goal of the project, measured in one run, with its ratio and verdict.

Runs the scenario benchmarks one after another (their own output is shown as
they go) and ends with one table: goal, measured, met or not.

  bench/goals.py [--bin PATH] [--bootstrap PATH] [--python PATH] [--work DIR]
                 [--growth-sizes 500000,20000000] [--scale-out]

  small files   bench.py --scenario seed and --scenario b: baseline / deltaload, median per file
  growing table bench.py --scenario b: deltaload's last file / first file
  large file    bench.py --scenario large: time ratio and peak-memory ratio
  growth        growth.py: the same skewed change files into the small and the large table
  batches       bench.py --scenario batch: one process for 10 files / 10 processes
  cold start    cold_start.py with the lake on local disk; the zip's size when infra/build made one
  scale-out     scale_out.py, only with --scale-out (needs LocalStack running: localstack/up)

The engine follows the environment, as for deltaload itself:
DELTALOAD_ENGINE=merge forces delta-rs's MERGE, and DELTALOAD_SPEC pointing at
the orders spec (`deltaload spec example`) with `merge_on_read = true` measures
merge-on-read.

Needs a release build (`cargo build --release -p deltaload -p deltaload-lambda`),
the baseline's Python (scripts/python-env) and ../shared/bench beside the clone.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", HERE.parent / "target"))


def run(cmd):
    """Runs a benchmark, echoing its output; returns the output."""
    print(f"\n$ {' '.join(map(str, cmd))}", flush=True)
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    if proc.wait() != 0:
        raise SystemExit(f"{cmd[1]} failed (exit {proc.returncode})")
    return "".join(lines)


def grab(pattern, text, what):
    m = re.search(pattern, text)
    if not m:
        raise SystemExit(f"could not read {what} from the output above")
    return [float(g) for g in m.groups()]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(TARGET / "release" / "deltaload"))
    ap.add_argument("--bootstrap", default=str(TARGET / "release" / "bootstrap"))
    ap.add_argument("--python", default=str(HERE.parent / ".venv" / "bin" / "python"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--growth-sizes", default="500000,20000000")
    ap.add_argument("--scale-out", action="store_true", help="also run scale_out.py (LocalStack must be running)")
    args = ap.parse_args(argv)
    py = sys.executable
    common = ["--bin", args.bin, "--python", args.python, "--work", args.work]
    rows = []

    def goal(name, measured, met):
        rows.append((name, measured, "yes" if met else "no"))

    median = r"median per file: deltaload ([\d.]+) s, baseline ([\d.]+) s"
    out = run([py, HERE / "bench.py", "--scenario", "seed", *common])
    d, b = grab(median, out, "the seed medians")
    goal("small files: seed >= 5x faster", f"{d:.3f} s vs {b:.3f} s = {b / d:.1f}x", b / d >= 5)

    out = run([py, HERE / "bench.py", "--scenario", "b", *common])
    d, b = grab(median, out, "scenario b's medians")
    goal("small files: scenario b (50,000 rows) >= 5x faster", f"{d:.3f} s vs {b:.3f} s = {b / d:.1f}x", b / d >= 5)
    first, last, ratio = grab(r"deltaload: first file ([\d.]+) s, last file ([\d.]+) s, last/first ([\d.]+)", out,
                              "scenario b's first and last file")
    bf, bl, br = grab(r"baseline: first file ([\d.]+) s, last file ([\d.]+) s, last/first ([\d.]+)", out,
                      "the baseline's first and last file")
    goal("scenario b: last file <= 1.5x the first", f"{first:.3f} -> {last:.3f} s = {ratio:.2f}x "
         f"(baseline {br:.2f}x)", ratio <= 1.5)

    out = run([py, HERE / "bench.py", "--scenario", "large", *common])
    d, b = grab(median, out, "the large file's medians")
    dm, bm = grab(r"peak memory: deltaload ([\d.]+) MiB, baseline ([\d.]+) MiB", out, "the large file's memory")
    goal("large file >= 3x faster", f"{d:.2f} s vs {b:.2f} s = {b / d:.2f}x", b / d >= 3)
    goal("large file <= 1/3 of the baseline's memory", f"{dm:.0f} MiB vs {bm:.0f} MiB = {dm / bm:.2f}",
         dm <= bm / 3)

    out = run([py, HERE / "growth.py", "--bin", args.bin, "--work", args.work, "--sizes", args.growth_sizes])
    (g,) = grab(r"orders = ([\d.]+)x per file", out, "the growth ratio")
    sizes = args.growth_sizes.split(",")
    goal(f"growth: {int(sizes[-1]):,} vs {int(sizes[0]):,} orders <= 2x per file", f"{g:.2f}x", g <= 2)

    out = run([py, HERE / "bench.py", "--scenario", "batch", *common])
    (r,) = grab(r"deltaload: one process for \d+ files costs ([\d.]+) of", out, "the batch ratio")
    goal("batches: 10 files in one process well under 10 processes (<= 0.5)", f"{r:.2f} of the 10", r <= 0.5)

    with tempfile.TemporaryDirectory() as lake:
        out = run([py, HERE / "cold_start.py", "--bootstrap", args.bootstrap, "--runs", "11",
                   "--env", "DELTALOAD_SOURCES=s3://landing/", "--env", f"DELTALOAD_LAKE={lake}"])
    (ms,) = grab(r"ready for the first event: median ([\d.]+) ms", out, "the cold start")
    zips = sorted(TARGET.glob("lambda/*/bootstrap/bootstrap.zip"))
    size = ", ".join(f"{z.parent.parent.parent.name} zip {z.stat().st_size / 2**20:.1f} MiB" for z in zips)
    goal("cold start < 100 ms (lake on local disk)", f"{ms:.0f} ms" + (f"; {size}" if size else ""), ms < 100)

    if args.scale_out:
        # boto3 comes from LocalStack's own environment.
        venv = HERE.parent / "localstack" / ".venv" / "bin" / "python"
        run([venv if venv.exists() else py, HERE / "scale_out.py", "--bin", args.bin])
        rows.append(("scale-out 1/2/4/8 consumers (reported)", "see the table above", "-"))
    else:
        rows.append(("scale-out 1/2/4/8 consumers", "not run: pass --scale-out with LocalStack up", "-"))

    width = max(len(r[0]) for r in rows)
    print(f"\n{'goal':<{width}}  met  measured")
    for name, measured, met in rows:
        print(f"{name:<{width}}  {met:<3}  {measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
