"""Writes Avro object container files with fastavro, the reference writer
of the suite. Reads a job as JSON on standard input:
  {"path", "schema", "records", "codec", "sync_interval"}
Values of a `decimal` logical type come as strings, and are written as
decimals; every other value as JSON has it (dates as days, timestamps as
microseconds or milliseconds since the epoch).
"""
import decimal
import json
import os
import sys

import fastavro


def decimals(schema):
    """The fields of record `schema` whose (nullable) type is a decimal."""
    out = []
    for field in schema["fields"]:
        ty = field["type"]
        branches = ty if isinstance(ty, list) else [ty]
        if any(isinstance(b, dict) and b.get("logicalType") == "decimal" for b in branches):
            out.append(field["name"])
    return out


def main():
    job = json.load(sys.stdin)
    schema = job["schema"]
    names = decimals(schema)
    records = job["records"]
    for r in records:
        for n in names:
            if r.get(n) is not None:
                r[n] = decimal.Decimal(r[n])
    with open(job["path"], "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records,
                        codec=job.get("codec", "null"),
                        sync_interval=job.get("sync_interval", 16000))
    sys.stdout.flush()
    os._exit(0)


main()
