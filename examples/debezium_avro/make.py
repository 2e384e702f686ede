"""Writes this example's files from ../debezium/customers/*.json: the same
events as the Kafka Connect S3 sink writes them with Confluent's
AvroConverter instead of the JsonConverter. The Connect schema of each line
becomes its Avro schema by AvroData's rules (struct -> record named after
the Connect name, optional -> a union with null first, Connect's Decimal ->
bytes with Avro's decimal, other Connect and Debezium names kept as
`connect.name` on the type), and the payload its record:

  AvroFormat (avro.codec snappy)  customers/<topic>+0+<offset>.avro
  ParquetFormat (parquet-avro)    customers_parquet/<topic>+0+<offset>.parquet

Run it with the suite's Python (fastavro, pyarrow):
  .venv/bin/python examples/debezium_avro/make.py
"""
import base64
import copy
import decimal
import glob
import json
import os

import fastavro

HERE = os.path.dirname(os.path.abspath(__file__))
PRIMITIVE = {"int8": "int", "int16": "int", "int32": "int", "int64": "long",
             "float32": "float", "float64": "double", "boolean": "boolean",
             "string": "string", "bytes": "bytes"}


def avro_type(connect, seen):
    """The Avro type of Connect schema `connect` (a named record once)."""
    name = connect.get("name")
    if connect["type"] == "struct":
        if name in seen:
            ty = name
        else:
            seen.add(name)
            namespace, short = name.rsplit(".", 1)
            ty = {"type": "record", "name": short, "namespace": namespace,
                  "fields": [field(f, seen) for f in connect["fields"]],
                  "connect.name": name}
    else:
        ty = {"type": PRIMITIVE[connect["type"]]}
        if name:
            ty["connect.version"] = connect.get("version", 1)
            ty["connect.name"] = name
        params = connect.get("parameters")
        if params:
            ty["connect.parameters"] = params
        if name == "org.apache.kafka.connect.data.Decimal":
            ty.update({"logicalType": "decimal", "scale": int(params["scale"]),
                       "precision": int(params.get("connect.decimal.precision", 64))})
        if len(ty) == 1:
            ty = ty["type"]
    if connect.get("optional"):
        return ["null", ty]
    return ty


def field(connect, seen):
    out = {"name": connect["field"], "type": avro_type(connect, seen)}
    if connect.get("optional"):
        out["default"] = None
    return out


def value(connect, v):
    """Payload value `v` of Connect schema `connect` as fastavro takes it."""
    if v is None:
        if connect.get("optional"):
            return None
        # A delete's `before` holds the key alone: other fields take their default.
        return {"string": "", "bytes": b""}.get(connect["type"], 0)
    if connect["type"] == "struct":
        return {f["field"]: value(f, v.get(f["field"])) for f in connect["fields"]}
    if connect.get("name") == "org.apache.kafka.connect.data.Decimal":
        unscaled = int.from_bytes(base64.b64decode(v), "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-int(connect["parameters"]["scale"]))
    return v


def parquet_type(connect):
    import pyarrow as pa
    if connect["type"] == "struct":
        return pa.struct([(f["field"], parquet_type(f)) for f in connect["fields"]])
    if connect.get("name") == "org.apache.kafka.connect.data.Decimal":
        p = connect["parameters"]
        return pa.decimal128(int(p.get("connect.decimal.precision", 38)), int(p["scale"]))
    return {"int": pa.int32(), "long": pa.int64(), "string": pa.string(),
            "boolean": pa.bool_(), "double": pa.float64(), "float": pa.float32(),
            "bytes": pa.binary()}[PRIMITIVE[connect["type"]]]


def main():
    import pyarrow as pa
    import pyarrow.parquet as pq
    for path in sorted(glob.glob(os.path.join(HERE, "../debezium/customers/*.json"))):
        events = [json.loads(line) for line in open(path) if line.strip()]
        # A tombstone (null) takes its offset; AvroFormat writes no record for it.
        events = [e for e in events if e is not None]
        connect = events[0]["schema"]
        schema = avro_type(copy.deepcopy(connect), set())
        records = [value(connect, e["payload"]) for e in events]
        stem = os.path.basename(path)[: -len(".json")]
        with open(os.path.join(HERE, "customers", stem + ".avro"), "wb") as f:
            fastavro.writer(f, fastavro.parse_schema(copy.deepcopy(schema)), records,
                            codec="snappy")
        table = pa.Table.from_pylist(records, schema=pa.schema(
            [(f["field"], parquet_type(f)) for f in connect["fields"]]))
        table = table.replace_schema_metadata({"parquet.avro.schema": json.dumps(schema)})
        os.makedirs(os.path.join(HERE, "customers_parquet"), exist_ok=True)
        pq.write_table(table, os.path.join(HERE, "customers_parquet", stem + ".parquet"))
    os._exit(0)


main()
