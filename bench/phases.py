#!/usr/bin/env python3
"""Where a large load spends its time, phase by phase, for one or more builds.

Loads the large scenario's change file (1,000,000 changes into a
2,000,000-order table, ../shared/bench/gen_changes.py --seed 7) with each
binary given, --repeat times each into a fresh copy of the same table, with
the lake's debug log on, and prints the median of each phase per binary:

  before upsert  process start, lake opened, the file read (and, where the
                 build logs them, parsed and cut to the newest change per key:
                 "read" and "newest"), rejects written
  align          the changes laid out as the table's rows
  match          the candidate files' keys read, each change met
  read files     the files to rewrite read whole (merge-on-read, older builds)
  assemble       the rewritten and inserted rows put together (the same)
  write          copy-on-write: the files read, their rows and the inserts
                 assembled and written as Parquet, a group of files at a time
  commit         the commit (older builds: Parquet written, then the commit)
  after upsert   figures and ledger written, process exit
  total          wall time; peak resident memory

  bench/phases.py --bin A [--bin B ...] [--work DIR] [--repeat N]

Phases come from the log's timestamps and the keyed upsert's
"keyed upsert step" events (elapsed since the upsert began).
"""
import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "bench"
LARGE = ["--files", "1", "--rows", "1000000", "--orders", "2000000", "--initial", "--seed", "7"]
STEP = re.compile(r'^(\S+Z) DEBUG .*keyed upsert step phase="(\w+)" elapsed_ms=(\d+)(?: peak_mib=(\d+))?')
READ = re.compile(r'^(\S+Z) DEBUG .*read_ms=(\d+) newest_ms=(\d+).*?(?:peak_mib=(\d+))?$')
# The keyed upsert's steps in their order, and their names here. Builds
# before the rewrite by groups log "read" and "assembled", then "committed"
# (write + commit); later ones log "written" (copy-on-write: the files read,
# assembled and written a group at a time; merge-on-read: after "read" and
# "assembled"), then "committed" (the commit alone).
STEPS = {"aligned": "align", "met": "match", "read": "read files", "assembled": "assemble",
         "written": "write (by groups)", "committed": "commit (older: write+commit)"}
NEEDED = {"aligned", "met", "committed"}


def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def run(cmd):
    """Runs cmd; returns (start epoch, end epoch, peak RSS MiB, stderr)."""
    with tempfile.TemporaryFile() as err:
        start = time.time()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                os.dup2(err.fileno(), 2)
                os.execvp(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        end = time.time()
        if os.waitstatus_to_exitcode(status) not in (0, 2):
            err.seek(0)
            raise SystemExit(f"{cmd} failed: {err.read().decode(errors='replace')[-2000:]}")
        err.seek(0)
        return start, end, usage.ru_maxrss / 1024, err.read().decode(errors="replace")


def phases(start, end, log):
    """Seconds per phase of one load, from its debug log."""
    steps, read, peaks = {}, None, {}
    for line in log.splitlines():
        m = STEP.match(line)
        if m:
            steps[m.group(2)] = (stamp(m.group(1)), int(m.group(3)) / 1000)
            if m.group(4):
                peaks[m.group(2)] = int(m.group(4))
        m = READ.match(line)
        if m and read is None:
            read = (int(m.group(2)) / 1000, int(m.group(3)) / 1000)
            if m.group(4):
                peaks["newest"] = int(m.group(4))
    if NEEDED - set(steps):
        raise SystemExit(f"missing upsert steps in the log: {sorted(NEEDED - set(steps))}")
    began = steps["aligned"][0] - steps["aligned"][1]
    out = {"before upsert": began - start}
    if read:
        out["  of which read"], out["  of which newest"] = read
    last = 0.0
    for step, name in STEPS.items():
        if step not in steps:
            continue
        out[name] = steps[step][1] - last
        last = steps[step][1]
    out["after upsert"] = end - steps["committed"][0]
    out["total"] = end - start
    # Where the build logs it: the process's peak resident memory so far
    # at the end of each phase (MiB).
    for step, peak in peaks.items():
        out[f"peak MiB by {STEPS.get(step, step)}"] = peak
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append", required=True, help="a deltaload binary (repeat to compare)")
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    work = Path(args.work)
    data = work / "data-large"
    if not data.exists():
        subprocess.run([sys.executable, str(SHARED / "gen_changes.py"), *LARGE, "--out", str(data)],
                       check=True, stdout=subprocess.DEVNULL)
    setup = work / "phases-setup"
    if not setup.exists():
        print(f"setup: {data / 'initial-orders.csv'} into {setup} with {args.bin[0]}", flush=True)
        run([args.bin[0], "load", "--lake", str(setup), str(data / "initial-orders.csv")])
    change = data / "changes-0001.csv"
    results = {b: [] for b in args.bin}
    for i in range(args.repeat):
        for b in args.bin if i % 2 == 0 else reversed(args.bin):
            lake = work / "phases-lake"
            shutil.rmtree(lake, ignore_errors=True)
            shutil.copytree(setup, lake)
            start, end, rss, log = run([b, "--log", "deltaload_lake=debug", "load", "--lake", str(lake), str(change)])
            p = phases(start, end, log)
            p["peak MiB"] = rss
            results[b].append(p)
            print(f"{Path(b).name} run {i + 1}: {p['total']:.2f} s, {rss:.0f} MiB", flush=True)
    names = list(dict.fromkeys(k for r in results.values() for p in r for k in p))
    print()
    print(f"{'phase (median)':<20}" + "".join(f"{Path(b).name:>22}" for b in args.bin))
    for name in names:
        cells = []
        for b in args.bin:
            values = [p[name] for p in results[b] if name in p]
            unit = "" if name.startswith("peak MiB") else " s"
            cells.append(f"{statistics.median(values):>20.{0 if unit == '' else 3}f}{unit}" if values else f"{'-':>22}")
        print(f"{name:<20}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
