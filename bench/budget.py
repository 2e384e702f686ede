#!/usr/bin/env python3
"""Files of any size within a memory budget: issue 18's goals, measured.

  bench/budget.py [--bin PATH] [--work DIR] [--runs 3] [--skip-huge] [--keep]

  large file    a 3,000,000-row change file (222 MB) into an empty lake, with
                no budget and with --memory-budget 256MiB: time, peak RSS and
                the ratio of the times (goals: peak <= 320 MiB, time <= 1.5x)
  huge file     a 10,000,000-row change file (about 750 MB) into a table of
                20,000,000 orders (itself loaded from one 1.5 GB file within
                the budget), --memory-budget 512MiB: time, peak RSS and the
                file's figures (goals: it loads, peak <= 600 MiB)
  default       1,000,000 changes into 2,000,000 orders with the default
                budget (half this machine's memory) and with none: median
                time of --runs runs each, on a fresh copy of the table
                (goal: no slower)

Data come from ../shared/bench/gen_changes.py (seeds 11, 7 and 5) under
--work, kept between runs (the generator is slow); the lakes are removed
unless --keep. Spills go to --work/spill, which must be empty afterwards.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ROOT, timed  # noqa: E402

GEN = ROOT.parent / "shared" / "bench" / "gen_changes.py"


def data(work, name, rows, orders, seed, initial=False):
    """The change file (and the book, with `initial`) of a case, generated once."""
    out = work / name
    if not (out / "changes-0001.csv").exists() or (initial and not (out / "initial-orders.csv").exists()):
        cmd = [sys.executable, GEN, "--files", 1, "--rows", rows, "--orders", orders, "--seed", seed, "--out", out]
        subprocess.run(list(map(str, cmd + (["--initial"] if initial else []))), check=True)
    return out


def load(bin_, lake, f, budget, work):
    cmd = [bin_, "load", "--lake", str(lake), "--spill-dir", str(work / "spill")]
    if budget is not None:
        cmd += ["--memory-budget", budget]
    wall, rss, out, err, code = timed(cmd + [str(f)])
    if code not in (0, 2):
        raise SystemExit(f"deltaload failed on {f} (exit {code}): {err.strip()[-2000:]}")
    leftover = list((work / "spill").iterdir())
    if leftover:
        raise SystemExit(f"spill directory not empty after a load: {leftover[:3]}")
    return wall, rss, out.strip().splitlines()[-1] if out.strip() else ""


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "deltaload"))
    ap.add_argument("--work", default="/tmp/deltaload-bench/budget")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-huge", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    work = Path(args.work)
    (work / "spill").mkdir(parents=True, exist_ok=True)
    rows = []

    large = data(work, "large", 3_000_000, 3_000_000, 11) / "changes-0001.csv"
    print(f"large file: {large.stat().st_size:,} bytes", flush=True)
    measured = {}
    for budget in ("none", "256MiB"):
        lake = work / f"lake-large-{budget}"
        shutil.rmtree(lake, ignore_errors=True)
        measured[budget] = load(args.bin, lake, large, budget, work)
        print(f"  budget {budget}: {measured[budget][0]:.2f} s, {measured[budget][1]:.0f} MiB; {measured[budget][2]}", flush=True)
        if not args.keep:
            shutil.rmtree(lake, ignore_errors=True)
    ratio = measured["256MiB"][0] / measured["none"][0]
    rows.append(("3M rows (222 MB) into an empty lake, 256 MiB", "peak <= 320 MiB, time <= 1.5x",
                 f"{measured['256MiB'][1]:.0f} MiB, {measured['256MiB'][0]:.2f} s = {ratio:.2f}x of {measured['none'][0]:.2f} s "
                 f"({measured['none'][1]:.0f} MiB unbounded)",
                 measured["256MiB"][1] <= 320 and ratio <= 1.5))

    if not args.skip_huge:
        huge = data(work, "huge", 10_000_000, 20_000_000, 7, initial=True)
        lake = work / "lake-huge"
        shutil.rmtree(lake, ignore_errors=True)
        book = load(args.bin, lake, huge / "initial-orders.csv", "512MiB", work)
        print(f"  book of 20,000,000 orders within 512 MiB: {book[0]:.1f} s, {book[1]:.0f} MiB; {book[2]}", flush=True)
        done = load(args.bin, lake, huge / "changes-0001.csv", "512MiB", work)
        print(f"  10,000,000 changes within 512 MiB: {done[0]:.1f} s, {done[1]:.0f} MiB; {done[2]}", flush=True)
        rows.append(("20M-order book (1.5 GB file) into an empty lake, 512 MiB", "loads",
                     f"{book[0]:.1f} s, {book[1]:.0f} MiB", book[1] <= 600))
        rows.append(("10M rows (750 MB) into 20M orders, 512 MiB", "loads, peak <= 600 MiB",
                     f"{done[0]:.1f} s, {done[1]:.0f} MiB: {done[2].split(': ', 1)[-1]}", done[1] <= 600))
        if not args.keep:
            shutil.rmtree(lake, ignore_errors=True)

    default = data(work, "default", 1_000_000, 2_000_000, 5, initial=True)
    setup = work / "lake-default-setup"
    if not (setup / "orders").exists():
        shutil.rmtree(setup, ignore_errors=True)
        load(args.bin, setup, default / "initial-orders.csv", "none", work)
    times = {"default": [], "none": []}
    peaks = {"default": [], "none": []}
    for _ in range(args.runs):
        for budget in ("default", "none"):
            lake = work / "lake-default"
            shutil.rmtree(lake, ignore_errors=True)
            shutil.copytree(setup, lake)
            wall, rss, _ = load(args.bin, lake, default / "changes-0001.csv", None if budget == "default" else "none", work)
            times[budget].append(wall)
            peaks[budget].append(rss)
            print(f"  1M into 2M, budget {budget}: {wall:.2f} s, {rss:.0f} MiB", flush=True)
    shutil.rmtree(work / "lake-default", ignore_errors=True)
    med = {b: statistics.median(t) for b, t in times.items()}
    rows.append(("1M changes into 2M orders, default budget", "no slower than none",
                 f"{med['default']:.2f} s vs {med['none']:.2f} s = {med['default'] / med['none']:.2f}x "
                 f"(peaks {max(peaks['default']):.0f} / {max(peaks['none']):.0f} MiB)",
                 med["default"] <= med["none"] * 1.05))

    print("\n| case | goal | measured | met |\n|---|---|---|---|")
    for case, goal, got, met in rows:
        print(f"| {case} | {goal} | {got} | {'yes' if met else 'no'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
