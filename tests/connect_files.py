"""Files as the Kafka Connect S3 sink writes Debezium's events with Confluent's
AvroConverter: AvroFormat (Avro object container files, the Envelope or the
flat row of ExtractNewRecordState) or ParquetFormat (the Envelope as nested
columns, written by parquet-avro, which keeps the Avro schema in the file's
metadata under parquet.avro.schema). Schemas follow Connect's AvroData:
optional fields are unions with null first, Connect's and Debezium's logical
types are `connect.name` annotations on the type (Decimal also Avro's
`decimal`), records are named after the topic.

Reads a job as JSON on standard input:
  {"dir", "shape": "avro" | "avro_flat" | "parquet", "codec", "millis",
   "files": [{"name", "events": [{"op", "before", "after"}]}]}
a row being {"id", "name", "balance" (cents), "born" (days), "seen_ms"}.
"""
import copy
import decimal
import json
import os
import sys

import fastavro

TOPIC = "dbserver1.public.people"


def value_schema(millis):
    seen = {"type": "long", "connect.version": 1,
            "connect.name": "io.debezium.time.Timestamp" if millis
            else "io.debezium.time.MicroTimestamp"}
    return {
        "type": "record", "name": "Value", "namespace": TOPIC,
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": ["null", "string"], "default": None},
            {"name": "balance", "type": ["null", {
                "type": "bytes", "scale": 2, "precision": 12, "connect.version": 1,
                "connect.parameters": {"scale": "2", "connect.decimal.precision": "12"},
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "logicalType": "decimal"}], "default": None},
            {"name": "born", "type": ["null", {
                "type": "int", "connect.version": 1,
                "connect.name": "io.debezium.time.Date"}], "default": None},
            {"name": "seen", "type": ["null", seen], "default": None},
        ],
        "connect.name": TOPIC + ".Value",
    }


SOURCE = {
    "type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
    "fields": [
        {"name": "version", "type": "string"},
        {"name": "connector", "type": "string"},
        {"name": "name", "type": "string"},
        {"name": "ts_ms", "type": "long"},
        {"name": "db", "type": "string"},
        {"name": "table", "type": "string"},
        {"name": "lsn", "type": ["null", "long"], "default": None},
    ],
    "connect.name": "io.debezium.connector.postgresql.Source",
}


def envelope_schema(millis):
    value = value_schema(millis)
    return {
        "type": "record", "name": "Envelope", "namespace": TOPIC,
        "fields": [
            {"name": "before", "type": ["null", value], "default": None},
            {"name": "after", "type": ["null", TOPIC + ".Value"], "default": None},
            {"name": "source", "type": SOURCE},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": ["null", "long"], "default": None},
        ],
        "connect.name": TOPIC + ".Envelope",
    }


def flat_schema(millis):
    schema = value_schema(millis)
    schema["fields"] += [
        {"name": "__op", "type": ["null", "string"], "default": None},
        {"name": "__lsn", "type": ["null", "long"], "default": None},
        {"name": "__deleted", "type": ["null", "string"], "default": None},
    ]
    return schema


def value(row, millis):
    if row is None:
        return None
    balance = row.get("balance")
    seen = row.get("seen_ms")
    return {
        "id": row["id"],
        "name": row.get("name"),
        "balance": None if balance is None else decimal.Decimal(balance).scaleb(-2),
        "born": row.get("born"),
        "seen": None if seen is None else (seen if millis else seen * 1000),
    }


def source(lsn):
    return {"version": "2.7.0.Final", "connector": "postgresql", "name": "dbserver1",
            "ts_ms": 1796119200000, "db": "shop", "table": "people", "lsn": lsn}


def envelope(event, lsn, millis):
    return {"before": value(event.get("before"), millis),
            "after": value(event.get("after"), millis),
            "source": source(lsn), "op": event["op"], "ts_ms": 1796119200000 + lsn}


def flat(event, lsn, millis):
    delete = event["op"] == "d"
    row = value(event["before"] if delete else event["after"], millis)
    if row is None:
        # The transform passes no row on for an event without one (a truncate).
        return None
    row.update({"__op": event["op"], "__lsn": lsn,
                "__deleted": "true" if delete else "false"})
    return row


def write_avro(path, schema, records, codec):
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(copy.deepcopy(schema)), records,
                        codec=codec, sync_interval=256)


def write_parquet(path, millis, records):
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = pa.struct([("id", pa.int64()), ("name", pa.string()),
                     ("balance", pa.decimal128(12, 2)), ("born", pa.int32()),
                     ("seen", pa.int64())])
    src = pa.struct([(f["name"], pa.string() if f["type"] == "string" else pa.int64())
                     for f in SOURCE["fields"]])
    schema = pa.schema([("before", row), ("after", row), ("source", src),
                        ("op", pa.string()), ("ts_ms", pa.int64())])
    table = pa.Table.from_pylist(records, schema=schema)
    avro = json.dumps(envelope_schema(millis))
    table = table.replace_schema_metadata({"parquet.avro.schema": avro})
    pq.write_table(table, path)


def main():
    job = json.load(sys.stdin)
    millis = job.get("millis", False)
    for f in job["files"]:
        path = os.path.join(job["dir"], f["name"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lsn = f.get("first", 0)
        if job["shape"] == "avro_flat":
            records = [flat(e, lsn + i, millis) for i, e in enumerate(f["events"])]
            records = [r for r in records if r is not None]
            write_avro(path, flat_schema(millis), records, job.get("codec", "null"))
            continue
        records = [envelope(e, lsn + i, millis) for i, e in enumerate(f["events"])]
        if job["shape"] == "parquet":
            write_parquet(path, millis, records)
        else:
            write_avro(path, envelope_schema(millis), records, job.get("codec", "null"))
    sys.stdout.flush()
    os._exit(0)


main()
