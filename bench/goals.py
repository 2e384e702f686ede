#!/usr/bin/env python3
"""Every performance goal of the project, measured in one run, with its ratio and verdict.

Runs the scenario benchmarks one after another (their own output is shown as
they go) and ends with one table: goal, measured, met or not.

  bench/goals.py [--bin PATH] [--bootstrap PATH] [--python PATH] [--work DIR]
                 [--growth-sizes 500000,20000000] [--merge-on-read] [--localstack] [--scale-out]
                 [--budget]

  small files   bench.py --scenario seed and --scenario b: baseline / deltaload, median per file
  growing table bench.py --scenario b: deltaload's last file / first file
  large file    bench.py --scenario large: time ratio and peak memory
  growth        growth.py: the same skewed change files into the small and the large table
  batches       bench.py --scenario batch: one process for 10 files / 10 processes
  cold start    cold_start.py with the lake on local disk; the zip's size when infra/build made one
  composite key formats.py --composite: JSON Lines (and CSV, Parquet) keyed by (customer_id, order_id)
  LocalStack    only with --localstack (LocalStack running: localstack/up): cold start with the
                lake on LocalStack S3 after 27 loads, and sweep.py's 3,000 files through one serve
  scale-out     scale_out.py, only with --scale-out (LocalStack running)
  budget        budget.py, only with --budget: files larger than the memory budget

The targets are those of copy-on-write or merge-on-read, whichever runs:
--merge-on-read writes the orders spec (`deltaload spec example`) with
`merge_on_read = true` into --work and points DELTALOAD_SPEC at it for every
deltaload process; DELTALOAD_ENGINE=merge in the environment forces
delta-rs's MERGE, as for deltaload itself.

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


def merge_on_read_spec(bin_, work):
    """The orders spec with merge_on_read = true, written under work; its path."""
    text = subprocess.run([bin_, "spec", "example"], capture_output=True, text=True, check=True).stdout
    if "\nkeys = " not in text:
        raise SystemExit("`deltaload spec example` has no keys line to put merge_on_read before")
    path = Path(work) / "spec-orders-merge-on-read.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("\nkeys = ", "\nmerge_on_read = true\nkeys = ", 1))
    return path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(TARGET / "release" / "deltaload"))
    ap.add_argument("--bootstrap", default=str(TARGET / "release" / "bootstrap"))
    ap.add_argument("--python", default=str(HERE.parent / ".venv" / "bin" / "python"))
    ap.add_argument("--work", default="/tmp/deltaload-bench")
    ap.add_argument("--growth-sizes", default="500000,20000000")
    ap.add_argument("--merge-on-read", action="store_true", help="orders with merge_on_read = true")
    ap.add_argument("--localstack", action="store_true",
                    help="also the cold start on LocalStack S3 and sweep.py (LocalStack must be running)")
    ap.add_argument("--scale-out", action="store_true", help="also run scale_out.py (LocalStack must be running)")
    ap.add_argument("--budget", action="store_true",
                    help="also run budget.py: files larger than the memory budget (about 3 GB of data)")
    args = ap.parse_args(argv)
    py = sys.executable
    common = ["--bin", args.bin, "--python", args.python, "--work", args.work]
    mor = args.merge_on_read
    if mor:
        os.environ["DELTALOAD_SPEC"] = str(merge_on_read_spec(args.bin, args.work))
    engine = "delta-rs MERGE forced" if os.environ.get("DELTALOAD_ENGINE") == "merge" else "keyed upsert"
    print(f"engine: {engine}; {'merge-on-read' if mor else 'copy-on-write'}", flush=True)
    rows = []

    def goal(name, measured, met):
        rows.append((name, measured, "yes" if met else "no"))

    small_files(args, py, common, mor, goal)
    large_file(py, common, mor, goal)

    out = run([py, HERE / "growth.py", "--bin", args.bin, "--work", args.work, "--sizes", args.growth_sizes])
    (g,) = grab(r"orders = ([\d.]+)x per file", out, "the growth ratio")
    sizes = args.growth_sizes.split(",")
    goal(f"growth: {int(sizes[-1]):,} vs {int(sizes[0]):,} orders <= 1.5x per file", f"{g:.2f}x", g <= 1.5)

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

    composite(py, common, rows)
    localstack(args, py, goal, rows)
    if args.budget:
        out = run([py, HERE / "budget.py", "--bin", args.bin, "--work", str(Path(args.work) / "budget")])
        for line in out.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and cells[3] in ("yes", "no"):
                goal(f"memory budget: {cells[0]} ({cells[1]})", cells[2], cells[3] == "yes")
    else:
        rows.append(("memory budget (issue 18's goals)", "not run: pass --budget", "-"))

    width = max(len(r[0]) for r in rows)
    print(f"\n{engine}, {'merge-on-read' if mor else 'copy-on-write'}")
    print(f"{'goal':<{width}}  met  measured")
    for name, measured, met in rows:
        print(f"{name:<{width}}  {met:<3}  {measured}")
    return 0


MEDIAN = r"median per file: deltaload ([\d.]+) s, baseline ([\d.]+) s"


def small_files(args, py, common, mor, goal):
    """The seed files and scenario b: per-file speed-up, and the last file against the first."""
    out = run([py, HERE / "bench.py", "--scenario", "seed", *common])
    d, b = grab(MEDIAN, out, "the seed medians")
    goal("seed file, whole process >= 5x faster", f"{d:.3f} s vs {b:.3f} s = {b / d:.1f}x", b / d >= 5)

    out = run([py, HERE / "bench.py", "--scenario", "b", *common])
    d, b = grab(MEDIAN, out, "scenario b's medians")
    want = 5 if mor else 3
    goal(f"scenario b (50,000-row files) >= {want}x faster per file", f"{d:.3f} s vs {b:.3f} s = {b / d:.2f}x",
         b / d >= want)
    first, last, ratio = grab(r"deltaload: first file ([\d.]+) s, last file ([\d.]+) s, last/first ([\d.]+)", out,
                              "scenario b's first and last file")
    bf, bl, br = grab(r"baseline: first file ([\d.]+) s, last file ([\d.]+) s, last/first ([\d.]+)", out,
                      "the baseline's first and last file")
    goal("scenario b: last file <= 1.5x the first", f"{first:.3f} -> {last:.3f} s = {ratio:.2f}x "
         f"(baseline {br:.2f}x)", ratio <= 1.5)


def large_file(py, common, mor, goal):
    """1,000,000 changes into 2,000,000 orders: speed-up, and peak memory."""
    out = run([py, HERE / "bench.py", "--scenario", "large", *common])
    d, b = grab(MEDIAN, out, "the large file's medians")
    dm, bm = grab(r"peak memory: deltaload ([\d.]+) MiB, baseline ([\d.]+) MiB", out, "the large file's memory")
    want = 3 if mor else 2
    goal(f"large file >= {want}x faster", f"{d:.2f} s vs {b:.2f} s = {b / d:.2f}x", b / d >= want)
    if mor:
        goal("large file: peak memory <= 400 MiB", f"{dm:.0f} MiB (baseline {bm:.0f} MiB)", dm <= 400)
    else:
        goal("large file: peak memory (reported)", f"{dm:.0f} MiB vs {bm:.0f} MiB = {dm / bm:.2f}", True)


def composite(py, common, rows):
    """The large scenario as a composite-key dataset, in every format: figures printed."""
    out = run([py, HERE / "formats.py", "--composite", "--repeat", "1", *common])
    for fmt in ("csv", "jsonl", "parquet"):
        d, dm, b, bm, r = grab(rf"\n{fmt} +[\d,]+ \| +([\d.]+) +(\d+) \| +([\d.]+) +(\d+) \| +([\d.]+)x", out,
                               f"the composite-key {fmt} figures")
        rows.append((f"composite key (customer_id, order_id), large file as {fmt} (reported)",
                     f"{d:.2f} s, {dm:.0f} MiB vs {b:.2f} s, {bm:.0f} MiB = {r:.2f}x", "-"))


def localstack(args, py, goal, rows):
    """Cold start with the lake on LocalStack S3, and 3,000 files through one serve."""
    if not args.localstack:
        rows.append(("cold start, lake on LocalStack S3; 3,000 files through serve",
                     "not run: pass --localstack with LocalStack up", "-"))
    else:
        # boto3 comes from LocalStack's own environment.
        venv = HERE.parent / "localstack" / ".venv" / "bin" / "python"
        venv = venv if venv.exists() else py
        bucket = subprocess.run([venv, "-c", S3_BUCKET], capture_output=True, text=True, check=True).stdout.strip()
        env = [f"--env={e}" for e in ("AWS_ENDPOINT_URL=http://127.0.0.1:4566", "AWS_REGION=us-east-1",
                                       "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
                                       f"DELTALOAD_SOURCES=s3://{bucket}/in/", f"DELTALOAD_LAKE=s3://{bucket}/lake")]
        out = run([py, HERE / "cold_start.py", "--bootstrap", args.bootstrap, "--runs", "11",
                   "--history", "27", "--bin", args.bin, "--bucket", bucket, "--key", "in/one.csv", *env])
        (ms,) = grab(r"ready for the first event: median ([\d.]+) ms", out, "the cold start on S3")
        (first,) = grab(r"first response \(.*\): median ([\d.]+) ms", out, "the first response on S3")
        goal("Lambda init, lake on LocalStack S3 (27 loads in) < 100 ms",
             f"{ms:.0f} ms; first response, one file announced: {first:.0f} ms", ms < 100)
        out = run([venv, HERE / "sweep.py", "--bin", args.bin, "--objects", "3000"])
        (fs,) = grab(r"([\d.]+) files/s", out, "serve's files per second")
        goal("3,000 one-order files through one serve >= 100 files/s", f"{fs:.1f} files/s", fs >= 100)
    if args.scale_out:
        venv = HERE.parent / "localstack" / ".venv" / "bin" / "python"
        run([venv if venv.exists() else py, HERE / "scale_out.py", "--bin", args.bin])
        rows.append(("scale-out 1/2/4/8 consumers (reported)", "see the table above", "-"))
    else:
        rows.append(("scale-out 1/2/4/8 consumers", "not run: pass --scale-out with LocalStack up", "-"))


# Makes a new bucket on LocalStack for a lake (under lake/) and one change file
# (in/one.csv); prints its name (run with boto3's Python).
S3_BUCKET = """
import boto3, uuid
bucket = "goals-lake-" + uuid.uuid4().hex[:8]
s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:4566", region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
s3.create_bucket(Bucket=bucket)
s3.put_object(Bucket=bucket, Key="in/one.csv", Body=b"order_id,customer_id,status,amount,currency,"
              b"ordered_at,updated_at\\n900001,C1,placed,1.00,EUR,,2026-10-01T08:00:00\\n")
print(bucket)
"""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
