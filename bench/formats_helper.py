"""bench/formats.py's helper: the baseline for JSON Lines, Parquet and Avro, the conversions, the table check."""
# Not run from here: bench/formats.py copies it beside the lakes, with SHARED
# (the baseline's directory) set after the next line.
import sys

sys.path.insert(0, SHARED)
import py_load_orders as plo  # noqa: E402
import polars as pl  # noqa: E402

COLUMNS = plo.COLUMNS
KEEP = ["order_id", "amount", "ordered_at", "updated_at"]   # null in any of these: a reject, as in the CSV


def finish(df, path):
    """Typed rows with line_number -> (good newest per order_id, rejected), as plo.parse_file ends."""
    ok = pl.all_horizontal(pl.col(c).is_not_null() for c in KEEP)
    rejected = df.filter(~ok).select(
        pl.lit(path).alias("source_file"),
        pl.struct(COLUMNS).struct.json_encode().alias("raw_line"))
    good = (df.filter(ok)
            .sort(["order_id", "updated_at", "line_number"], descending=[False, True, False])
            .unique(subset="order_id", keep="first", maintain_order=True)
            .select(COLUMNS))
    return good, rejected


def parse_jsonl(path):
    # pl.read_ndjson cannot read a JSON number into a Decimal (SchemaError):
    # amount is read as a string (polars writes the number it parsed as a
    # float: 25.50 -> "25.5") and cast to decimal(10,2); timestamps are strings.
    schema = {c: pl.String for c in COLUMNS}
    schema["order_id"] = pl.Int64
    df = pl.read_ndjson(path, schema=schema).with_row_index("line_number", offset=1)
    df = df.with_columns(
        amount=pl.col("amount").cast(pl.Decimal(10, 2), strict=False),
        **{c: pl.col(c).str.replace(" ", "T", literal=True)
           .str.to_datetime(plo.TS_FORMAT, time_unit="us", time_zone="UTC", strict=False)
           for c in ("ordered_at", "updated_at")},
    )
    return finish(df, path)


def parse_parquet(path):
    df = pl.read_parquet(path, columns=COLUMNS).with_row_index("line_number", offset=1)
    ts = [pl.col(c).dt.replace_time_zone("UTC") if df.schema[c].time_zone is None
          else pl.col(c).dt.convert_time_zone("UTC") for c in ("ordered_at", "updated_at")]
    df = df.with_columns(*[t.dt.cast_time_unit("us") for t in ts],
                         amount=pl.col("amount").cast(pl.Decimal(10, 2), strict=False))
    return finish(df, path)


def parse_avro(path):
    # What a Python job reading Avro does: fastavro's records into polars.
    import fastavro

    with open(path, "rb") as f:
        df = pl.from_dicts(list(fastavro.reader(f)), infer_schema_length=None)
    df = df.with_row_index("line_number", offset=1).with_columns(
        amount=pl.col("amount").cast(pl.Decimal(10, 2), strict=False),
        **{c: pl.col(c).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
           for c in ("ordered_at", "updated_at")})
    return finish(df, path)


def to_avro(parquet_path, avro_path):
    """The Parquet file's records as an Avro object container file: fastavro, snappy."""
    import json
    import os
    import fastavro
    import pyarrow.parquet as pq

    time = {"type": "long", "logicalType": "timestamp-micros"}
    schema = {"type": "record", "name": "order", "namespace": "shop", "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer_id", "type": ["null", "string"]},
        {"name": "status", "type": ["null", "string"]},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "currency", "type": ["null", "string"]},
        {"name": "ordered_at", "type": time},
        {"name": "updated_at", "type": time},
    ]}
    table = pq.read_table(parquet_path)
    with open(avro_path + ".tmp", "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), table.to_pylist(), codec="snappy")
    os.replace(avro_path + ".tmp", avro_path)
    with open(avro_path, "rb") as f:
        blocks = sum(1 for _ in fastavro.block_reader(f))
    print(json.dumps({"records": table.num_rows, "blocks": blocks}))


def convert(csv_path, jsonl_path, parquet_path):
    """The CSV's lines that parse (plo.parse_file's rules), in file order, as JSON Lines and Parquet."""
    import json
    import os
    import pyarrow.parquet as pq

    with open(csv_path, "rb") as f:
        lines = f.read().decode("utf-8-sig").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines[0].removesuffix("\r").split(",") != COLUMNS:
        raise SystemExit(f"{csv_path}: unexpected header {lines[0]!r}")
    df = (pl.DataFrame({"raw_line": pl.Series(lines[1:], dtype=pl.String)})
          .with_columns(pl.col("raw_line").str.strip_suffix("\r"))
          .filter(pl.col("raw_line") != ""))
    if df["raw_line"].str.contains('["\r]').any():
        raise SystemExit(f"{csv_path}: quoted fields are not expected from gen_changes.py")
    f = pl.col("raw_line").str.split(",")
    df = df.with_columns(n_fields=f.list.len(), **{c: f.list.get(i, null_on_oob=True) for i, c in enumerate(COLUMNS)})
    df = df.with_columns(
        ok=(pl.col("n_fields") == 7)
        & pl.col("order_id").str.contains(plo.RE_ORDER_ID)
        & pl.col("amount").str.contains(plo.RE_AMOUNT)
        & pl.col("ordered_at").str.contains(plo.RE_TS)
        & pl.col("updated_at").str.contains(plo.RE_TS),
    )
    good = df.filter(pl.col("ok")).with_columns(
        order_id_t=pl.col("order_id").cast(pl.Int64, strict=False),
        amount_t=pl.col("amount").cast(pl.Decimal(10, 2), strict=False),
        **{c + "_t": pl.col(c).str.replace(" ", "T", literal=True)
           .str.to_datetime(plo.TS_FORMAT, time_unit="us", time_zone="UTC", strict=False)
           for c in ("ordered_at", "updated_at")},
    )
    good = good.filter(pl.all_horizontal(pl.col(c + "_t").is_not_null() for c in KEEP))
    # strings as JSON strings (the generator writes none needing more than these escapes)
    for c in ("customer_id", "status", "currency", "ordered_at", "updated_at"):
        if good[c].str.contains(r"[\x00-\x1f]").any():
            raise SystemExit(f"{csv_path}: control characters in {c}")

    def q(c):
        return pl.lit('"') + pl.col(c).str.replace_all("\\", "\\\\", literal=True).str.replace_all('"', '\\"', literal=True) + pl.lit('"')

    text = pl.concat_str([
        pl.lit('{"order_id":'), pl.col("order_id_t").cast(pl.String),
        pl.lit(',"customer_id":'), q("customer_id"),
        pl.lit(',"status":'), q("status"),
        pl.lit(',"amount":'), pl.col("amount_t").cast(pl.String),   # a JSON number, two decimals: 25.50
        pl.lit(',"currency":'), q("currency"),
        pl.lit(',"ordered_at":'), q("ordered_at"),
        pl.lit(',"updated_at":'), q("updated_at"),
        pl.lit("}"),
    ])
    out = good.select(text.alias("line"))["line"]
    with open(jsonl_path + ".tmp", "w", newline="") as fo:
        fo.write("\n".join(out.to_list()))
        fo.write("\n")
    typed = good.select(pl.col(c + "_t").alias(c) if c in KEEP else pl.col(c) for c in COLUMNS)
    typed.write_parquet(parquet_path + ".tmp", compression="snappy")
    os.replace(jsonl_path + ".tmp", jsonl_path)
    os.replace(parquet_path + ".tmp", parquet_path)
    meta = pq.ParquetFile(parquet_path).metadata
    print(json.dumps({"lines": df.height, "records": good.height, "dropped": df.height - good.height,
                      "row_groups": meta.num_row_groups,
                      "schema": {k: str(v) for k, v in typed.schema.items()}}))


def count(table):
    """Rows, and a fingerprint of the contents that does not depend on file order or physical types."""
    import hashlib
    import json
    from array import array
    from deltalake import DeltaTable

    df = pl.from_arrow(DeltaTable(table).to_pyarrow_table(columns=COLUMNS))
    canon = df.select(
        pl.col("order_id").cast(pl.Int64).cast(pl.String),
        pl.col("customer_id").cast(pl.String), pl.col("status").cast(pl.String),
        pl.col("amount").cast(pl.Decimal(10, 2)).cast(pl.String), pl.col("currency").cast(pl.String),
        *[pl.col(c).dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S%.6f")
          if df.schema[c].time_zone else pl.col(c).dt.strftime("%Y-%m-%dT%H:%M:%S%.6f")
          for c in ("ordered_at", "updated_at")],
    )
    hashes = sorted(canon.hash_rows(seed=7).to_list())
    digest = hashlib.sha256(array("Q", hashes).tobytes()).hexdigest()[:16]
    print(json.dumps({"rows": df.height, "fingerprint": digest}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "load":
        fmt, warehouse, path = sys.argv[2:5]
        plo.parse_file = {"jsonl": parse_jsonl, "parquet": parse_parquet, "avro": parse_avro}[fmt]
        sys.exit(plo.main(["--warehouse", warehouse, path]))
    elif cmd == "convert":
        convert(*sys.argv[2:5])
    elif cmd == "avro":
        to_avro(*sys.argv[2:4])
    elif cmd == "count":
        count(sys.argv[2])
    else:
        raise SystemExit(f"unknown command {cmd}")
