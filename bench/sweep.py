#!/usr/bin/env python3
"""Wall time and peak memory of `backfill`, `serve` and `reconcile` over many objects.

Against a running LocalStack (localstack/up): makes a fresh landing bucket (no
notifications), a fresh lake bucket and a fresh queue, uploads N one-order change
files under three prefixes (or, given --landing, reuses those an earlier run
uploaded), then runs, each as one process measured by GNU time (/usr/bin/time):

  1. backfill            (empty ledger: enqueues all N)
  2. serve --once        (loads all N, --batch-size messages per batch; files/s printed)
  3. reconcile           (all N consistent, exit 0)
  4. backfill again      (all N already loaded, enqueues nothing)

  localstack/.venv/bin/python bench/sweep.py --bin target/release/deltaload [--objects 10000]

With --steps, serve runs with its step timings logged at DEBUG, and for each
--chunk files served (10,000 by default) a line shows files/s, the process's
peak and current memory, and the mean milliseconds per batch of each step: the
objects' fetch, the ledger's look-up and write, the read, the rejects, the
upsert, the reconciliation, the tables' refresh, and the queue's receive and
delete. A step whose time grows from chunk to chunk is what grows with the lake.
With --maintain, `deltaload maintain` runs beside serve after each chunk, as the
deployment's schedule would. The compact column is the loads' own auto-compaction
(--auto-compact-files 0 turns it off, to compare). With --glue-database, serve
registers the lake's tables in that Glue database (AWS_ENDPOINT_URL_GLUE, by
default moto's server of localstack/glue on 4567), and the catalog column is
the Glue sync after each batch.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid

import boto3

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
ENV = dict(os.environ, AWS_ENDPOINT_URL=ENDPOINT,
           AWS_ENDPOINT_URL_GLUE=os.environ.get("AWS_ENDPOINT_URL_GLUE", "http://127.0.0.1:4567"),
           AWS_REGION="us-east-1",
           AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="test",
           AWS_SECRET_ACCESS_KEY="test")
HEADER = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n"


def timed_args(args, peak_file):
    """`args` run by GNU time, which writes the command's peak resident KiB to
    `peak_file`: a child's own ru_maxrss counts this script's memory too
    (Linux keeps the parent's high-water mark across fork and exec), which
    after 100,000 uploads is larger than deltaload's."""
    return ["/usr/bin/time", "-f", "%M", "-o", peak_file] + args


def peak_of(peak_file):
    """The peak MiB GNU time wrote (its last line: a failed command's first says so)."""
    with open(peak_file) as f:
        return int(f.read().split()[-1]) / 1024


def measured(args):
    """Runs a command; returns (seconds, peak MiB, exit code, stdout)."""
    start = time.monotonic()
    with tempfile.NamedTemporaryFile() as peak:
        proc = subprocess.Popen(timed_args(args, peak.name), env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        out = proc.stdout.read().decode()
        code = proc.wait()
        return time.monotonic() - start, peak_of(peak.name), code, out


STEPS = ["files_scanned", "fetch_ms", "ledger_lookup_ms", "read_ms", "rejects_ms", "upsert_ms",
         "reconciliation_ms", "ledger_write_ms", "refresh_ms", "compact_ms", "catalog_ms",
         "receive_ms", "delete_ms"]
FIELD = re.compile(r"\b(\w+_ms|files_scanned)=(\d+)")


def memory_mib(pid):
    """The process's peak and current resident memory, MiB."""
    got = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                got[key] = int(value.split()[0]) / 1024
    return got.get("VmHWM", 0), got.get("VmRSS", 0)


def stepped(args, chunk, maintain=None):
    """Runs serve with its steps logged; prints a line per `chunk` files served,
    and, given `maintain` (a command), runs it beside serve at each line.
    Returns (seconds, peak MiB, exit code, stdout)."""
    env = dict(ENV, DELTALOAD_LOG="warn,deltaload_lake::load=debug,"
               "deltaload_aws::consumer=debug,deltaload_aws::handler=debug,"
               "deltaload_lake::write::upsert=debug,deltaload_lake::ops::maintain::auto=info")
    start = time.monotonic()
    peak_file = tempfile.NamedTemporaryFile()
    proc = subprocess.Popen(timed_args(args, peak_file.name), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    print(f"{'served':>8} {'files/s':>8} {'peak':>6} {'rss':>6}  ms per batch: "
          + " ".join(s.removesuffix("_ms") for s in STEPS), flush=True)
    served, batches, sums, since, mark = 0, 0, dict.fromkeys(STEPS, 0), start, chunk
    for line in proc.stderr:
        for name, value in FIELD.findall(line):
            if name in sums:
                sums[name] += int(value)
        if "batch received and deleted" in line:
            batches += 1
            served += int(re.search(r"messages=(\d+)", line).group(1))
            if served >= mark:
                now = time.monotonic()
                peak, rss = memory_mib(serve_pid(proc.pid))
                means = " ".join(f"{sums[s] / batches:.0f}" for s in STEPS)
                print(f"{served:>8} {(served - (mark - chunk)) / (now - since):8.1f} "
                      f"{peak:6.0f} {rss:6.0f}  {means}", flush=True)
                batches, sums, since, mark = 0, dict.fromkeys(STEPS, 0), now, mark + chunk
                if maintain:
                    subprocess.Popen(maintain, env=ENV, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    code = proc.wait()
    return time.monotonic() - start, peak_of(peak_file.name), code, out


def serve_pid(time_pid):
    """The pid of the command GNU time (`time_pid`) runs."""
    with open(f"/proc/{time_pid}/task/{time_pid}/children") as children:
        return int(children.read().split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the deltaload binary")
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--batch-size", default="100", help="serve's --batch-size (its default: 100)")
    parser.add_argument("--steps", action="store_true",
                        help="print files/s, memory and each step's time per --chunk files served")
    parser.add_argument("--chunk", type=int, default=10000)
    parser.add_argument("--maintain", action="store_true",
                        help="with --steps, run `maintain` beside serve after each chunk")
    parser.add_argument("--landing",
                        help="an existing landing bucket holding --objects files an earlier run "
                             "uploaded, to skip the upload")
    parser.add_argument("--auto-compact-files", type=int,
                        help="serve's --auto-compact-files (its default: 50; 0: off)")
    parser.add_argument("--glue-database",
                        help="serve's --glue-database: register the tables in this Glue database")
    opts = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    landing, lake_bucket = f"sweep-landing-{run}", f"sweep-lake-{run}"
    session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test",
                                    region_name="us-east-1")
    s3 = session.client("s3", endpoint_url=ENDPOINT)
    sqs = session.client("sqs", endpoint_url=ENDPOINT)
    landing = opts.landing or landing
    for bucket in (landing, lake_bucket)[1 if opts.landing else 0:]:
        s3.create_bucket(Bucket=bucket)
    queue = sqs.create_queue(QueueName=f"sweep-{run}",
                             Attributes={"VisibilityTimeout": "300"})["QueueUrl"]

    started = time.monotonic()
    def put(i):
        key = f"in/{'abc'[i % 3]}/f{i:06d}.csv"
        body = f"{HEADER}{i},C{i % 97},placed,{i % 500}.00,EUR,,2026-10-01T08:00:00\n"
        s3.put_object(Bucket=landing, Key=key, Body=body.encode())
    if not opts.landing:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            list(pool.map(put, range(opts.objects)))
    print(f"uploaded {opts.objects} objects to {landing} in {time.monotonic() - started:.1f} s",
          flush=True)

    at, lake = f"s3://{landing}/in", f"s3://{lake_bucket}/tables"
    steps = [
        ("backfill", [opts.bin, "backfill", at, "--queue", queue, "--lake", lake, "--rate", "0"]),
        ("serve --once", [opts.bin, "serve", "--queue", queue, "--lake", lake,
                          "--source", f"s3://{landing}", "--wait", "2", "--once",
                          "--batch-size", opts.batch_size]
                          + ([] if opts.auto_compact_files is None
                             else ["--auto-compact-files", str(opts.auto_compact_files)])
                          + ([] if opts.glue_database is None
                             else ["--glue-database", opts.glue_database])),
        ("reconcile", [opts.bin, "reconcile", at, "--lake", lake]),
        ("backfill again", [opts.bin, "backfill", at, "--queue", queue, "--lake", lake, "--rate", "0"]),
    ]
    print(f"{'step':<16} {'wall s':>8} {'peak MiB':>9}  exit  output")
    for name, args in steps:
        if opts.steps and name == "serve --once":
            maintain = [opts.bin, "maintain", "--lake", lake] if opts.maintain else None
            seconds, mib, code, out = stepped(args, opts.chunk, maintain)
        else:
            seconds, mib, code, out = measured(args)
        last = out.strip().splitlines()[-1] if out.strip() else ""
        print(f"{name:<16} {seconds:8.1f} {mib:9.0f}  {code:>4}  {last}", flush=True)
        if name == "serve --once":
            print(f"{'':<16} {opts.objects / seconds:8.1f} files/s", flush=True)
        if code not in (0,):
            sys.exit(f"{name} exited {code}")


if __name__ == "__main__":
    main()
