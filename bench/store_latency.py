#!/usr/bin/env python3
"""The S3 requests a load makes, timed against the store alone.

A batch's commit is a handful of small requests: a GET of a log entry, a
conditional PUT of the next one, a LIST of `_delta_log` after a version. This
times each of them (median ms of --repeat) in a table folder of an existing
lake bucket (say, one bench/sweep.py left holding 100,000 loads) and in a
fresh bucket, so that a step which grows with the lake can be told from a
store whose requests grow with its bucket:

  localstack/.venv/bin/python bench/store_latency.py --bucket sweep-lake-XXXX [--prefix tables/orders]
"""
import argparse
import os
import statistics
import time
import uuid

import boto3
from botocore.exceptions import ClientError

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")


def timed(fn, repeat):
    """Median milliseconds of `repeat` calls of fn(i)."""
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(s3, bucket, prefix, repeat):
    """The median ms of each request kind in bucket/prefix, and the bucket's object count."""
    log = f"{prefix}/_delta_log/"
    run = uuid.uuid4().hex[:8]
    body = b'{"commitInfo":{}}\n'
    s3.put_object(Bucket=bucket, Key=f"{log}probe-{run}.json", Body=body)

    def conditional_put(i):
        s3.put_object(Bucket=bucket, Key=f"{log}probe-{run}-{i}.json", Body=body, IfNoneMatch="*")

    def refused_put(i):
        try:
            s3.put_object(Bucket=bucket, Key=f"{log}probe-{run}.json", Body=body, IfNoneMatch="*")
        except ClientError:
            pass

    figures = {
        "get log entry": timed(lambda i: s3.get_object(Bucket=bucket, Key=f"{log}probe-{run}.json")["Body"].read(), repeat),
        "conditional put": timed(conditional_put, repeat),
        "put lost race": timed(refused_put, repeat),
        "list log after": timed(lambda i: s3.list_objects_v2(Bucket=bucket, Prefix=log, StartAfter=f"{log}probe-{run}"), repeat),
    }
    count = sum(page.get("KeyCount", 0) for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket))
    keys = [f"{log}probe-{run}.json"] + [f"{log}probe-{run}-{i}.json" for i in range(repeat)]
    for start in range(0, len(keys), 1000):
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[start:start + 1000]]})
    return figures, count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bucket", required=True, help="a lake's bucket, e.g. one sweep.py made")
    parser.add_argument("--prefix", default="tables/orders", help="a table's folder in it")
    parser.add_argument("--repeat", type=int, default=200)
    opts = parser.parse_args()
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    fresh = f"latency-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=fresh)
    rows = [(opts.bucket, *measure(s3, opts.bucket, opts.prefix, opts.repeat)),
            (fresh, *measure(s3, fresh, opts.prefix, opts.repeat))]
    kinds = list(rows[0][1])
    print(f"{'bucket':<24} {'objects':>8}  " + "  ".join(f"{k:>15}" for k in kinds) + "   (median ms)")
    for bucket, figures, count in rows:
        print(f"{bucket:<24} {count:>8}  " + "  ".join(f"{figures[k]:15.1f}" for k in kinds))


if __name__ == "__main__":
    main()
