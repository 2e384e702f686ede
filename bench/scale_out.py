#!/usr/bin/env python3
"""Scale-out on LocalStack: 1, 2, 4 and 8 concurrent `deltaload serve` consumers
over the same files, each count on a fresh queue and a fresh lake.

Uploads N change files (default 200) to a fresh landing bucket; every file
changes 50 orders drawn from a shared range, so the consumers' MERGEs touch the
same rows and their commits race. For each consumer count: `backfill` enqueues
all N, then the consumers (`serve --once --batch-size B`, EMF metrics on) run
until the queue is empty. Prints wall time, files per second, commits per
second (all four tables), conflict retries (the CommitRetries metric), the
messages whose load failed (a round that lost 6 times in a row) and so came back
after the visibility timeout (10 s) to a final single consumer, and checks the
lake with `reconcile` (exit 0) each time.

  localstack/.venv/bin/python bench/scale_out.py --bin target/release/deltaload [--files 200] [--batch-size 10]
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import time
import uuid

import boto3

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
ENV = dict(os.environ, AWS_ENDPOINT_URL=ENDPOINT, AWS_REGION="us-east-1",
           AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="test",
           AWS_SECRET_ACCESS_KEY="test")
HEADER = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n"
FAILED = re.compile(r"^\d+ messages, .*, (\d+) failed")
VERSION = re.compile(r"^\s*(orders|rejected_orders|ledger|reconciliation)\b.*version (\d+)", re.M)


def change_file(i, rng):
    rows = [HEADER]
    for order in rng.sample(range(1, 2001), 50):
        rows.append(f"{order},C{i % 97},placed,{i % 500}.{i % 100:02d},EUR,,"
                    f"2026-10-01T{i % 24:02d}:{i % 60:02d}:00\n")
    return "".join(rows).encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the deltaload binary")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--consumers", default="1,2,4,8")
    opts = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test",
                                    region_name="us-east-1")
    s3 = session.client("s3", endpoint_url=ENDPOINT)
    sqs = session.client("sqs", endpoint_url=ENDPOINT)
    landing, lake_bucket = f"scale-landing-{run}", f"scale-lake-{run}"
    for bucket in (landing, lake_bucket):
        s3.create_bucket(Bucket=bucket)
    rng = random.Random(7)
    bodies = [change_file(i, rng) for i in range(opts.files)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda i: s3.put_object(Bucket=landing, Key=f"in/f{i:04d}.csv", Body=bodies[i]),
                      range(opts.files)))
    at = f"s3://{landing}/in"
    print(f"{opts.files} files of 50 changes over 2,000 shared orders; batch size {opts.batch_size}")
    print(f"{'consumers':>9} {'wall s':>7} {'files/s':>8} {'commits':>8} {'commits/s':>9} {'retries':>8} {'failed':>7}  reconcile")
    for n in [int(c) for c in opts.consumers.split(",")]:
        queue = sqs.create_queue(QueueName=f"scale-{run}-{n}",
                                 Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
        lake = f"s3://{lake_bucket}/lake-{n}"
        subprocess.run([opts.bin, "backfill", at, "--queue", queue, "--lake", lake, "--rate", "0"],
                       env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        serve = [opts.bin, "serve", "--queue", queue, "--lake", lake, "--source", f"s3://{landing}",
                 "--wait", "2", "--once", "--batch-size", str(opts.batch_size),
                 "--metrics-namespace", "bench"]
        start = time.monotonic()
        procs = [subprocess.Popen(serve, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                 for _ in range(n)]
        outs = [p.communicate()[0].decode() for p in procs]
        wall = time.monotonic() - start - 2  # the final empty 2 s receive
        retries = failed = 0
        for out in outs:
            for line in out.splitlines():
                if line.startswith("{") and '"_aws"' in line:
                    retries += json.loads(line).get("CommitRetries", 0)
                summary = FAILED.search(line)
                if summary:
                    failed += int(summary.group(1))
        if failed:
            # The failed messages come back after the visibility timeout.
            time.sleep(11)
            subprocess.run(serve, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        status = subprocess.run([opts.bin, "status", "--lake", lake], env=ENV, capture_output=True, text=True)
        commits = sum(int(v) for _, v in VERSION.findall(status.stdout))
        check = subprocess.run([opts.bin, "reconcile", at, "--lake", lake], env=ENV,
                               capture_output=True, text=True)
        verdict = "consistent" if check.returncode == 0 else f"exit {check.returncode}: {check.stdout[-300:]}"
        print(f"{n:>9} {wall:7.1f} {opts.files / wall:8.1f} {commits:8d} {commits / wall:9.1f} {retries:8d} {failed:7d}  {verdict}",
              flush=True)
        if check.returncode != 0:
            sys.exit(1)


if __name__ == "__main__":
    main()
