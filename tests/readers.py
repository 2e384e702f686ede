"""Reads one Delta table with every Python reader the suite checks, and prints
what each returned as canonical rows, so that readers compare exactly.

    python tests/readers.py TABLE_DIR KEY [KEY...]

TABLE_DIR is a local table directory; the KEYs are its key columns, by which
the rows are sorted. The readers (pinned in scripts/requirements.txt):

- ``duckdb.delta_scan``: DuckDB's ``delta`` extension, the file the PyPI
  wheel ``duckdb-ext-delta`` ships (built for exactly the installed duckdb),
  loaded by path, nothing downloaded. The file is DuckDB's signed build: it
  loads with the signature check on, so ``allow_unsigned_extensions`` (which
  would turn the check off) is not set;
- ``polars.read_delta``: polars' own reader (the log through ``deltalake``);
- ``polars_deltalake.read_delta``: the polars plugin on delta-kernel-rs;
- ``deltalake.QueryBuilder``: Python ``deltalake``'s SQL, ``SELECT * FROM t``;
- ``deltalake.to_pyarrow_table``: Python ``deltalake``'s pyarrow dataset path.

Prints one JSON object, ``{reader: {"columns": [...], "rows": [[...]],
"version": "..."}}``, or ``{reader: {"error": "...", "version": "..."}}`` when
the reader fails. ``columns`` are the table's columns in its schema's order
(a reader returning other columns is an error); each row holds one canonical
text per column, null for null, rows sorted by the keys' values.

A value's canonical text depends on the column's Delta type, and only a value
of the Python type that Delta type reads as has one: any other (a float in a
decimal column, a naive datetime in a `timestamp` column, a bool in an int
column) is rendered as ``<wrong type ...>`` so that it differs from every
correct reader's text rather than being coerced into agreeing. The texts are
those deltaload's own view (Arrow's display) gives:

- integers in decimal; booleans ``true``/``false``; strings as they are;
- ``decimal(P,S)``: exactly S decimals (``25.50``, ``-0.05``); a value with
  more, or more than P digits, is a wrong value, never rounded;
- ``double``: the shortest text that reads back as the same double, in plain
  notation, no trailing zeros (``0.1``, ``70000``, ``100000000000000000000``,
  ``0.00000015``: what Rust's ``f64`` Display prints, so exact);
- ``date``: ``2026-10-01``;
- ``timestamp`` (an instant): in UTC, ``2026-10-01T08:00:00Z``, with
  ``.fff`` or ``.ffffff`` when it has milliseconds or microseconds (chrono's
  ``SecondsFormat::AutoSi``); ``timestamp_ntz``: the same without ``Z``.

Exits with ``os._exit(0)`` after flushing: ``deltalake`` and ``pyarrow`` can
abort in interpreter teardown after all the work succeeded.
"""

import datetime
import decimal
import importlib.metadata
import json
import os
import sys

UTC = datetime.timezone.utc


def wrong(value, kind):
    return f"<wrong type {type(value).__name__} for {kind}: {value!r}>"


def fraction(micro):
    """chrono's AutoSi: no fraction, milliseconds or microseconds."""
    if micro == 0:
        return ""
    if micro % 1000 == 0:
        return f".{micro // 1000:03d}"
    return f".{micro:06d}"


def render_timestamp(value, kind):
    if type(value) is not datetime.datetime:
        return wrong(value, kind)
    aware = value.tzinfo is not None and value.utcoffset() is not None
    if kind == "timestamp":
        if not aware:
            return f"<naive datetime for {kind}: {value.isoformat()}>"
        value, zone = value.astimezone(UTC), "Z"
    elif aware:
        return f"<datetime with a time zone for {kind}: {value.isoformat()}>"
    else:
        zone = ""
    return value.strftime("%Y-%m-%dT%H:%M:%S") + fraction(value.microsecond) + zone


def render_decimal(value, kind):
    if type(value) is not decimal.Decimal or not value.is_finite():
        return wrong(value, kind)
    precision, scale = (int(n) for n in kind[len("decimal(") : -1].split(","))
    exact = value.quantize(decimal.Decimal(1).scaleb(-scale))
    if exact != value or len(exact.as_tuple().digits) > precision:
        return f"<{value} is not a {kind}>"
    return format(exact, "f")


def render_double(value, kind):
    if type(value) is not float:
        return wrong(value, kind)
    # repr is the shortest text that reads back as this double.
    return format(decimal.Decimal(repr(value)).normalize(), "f")


PLAIN = {
    "byte": int, "short": int, "integer": int, "long": int,
    "boolean": bool, "string": str, "date": datetime.date,
}


def render_plain(value, kind):
    if kind not in PLAIN:
        raise ValueError(f"no canonical text for Delta type {kind}")
    expected = PLAIN[kind]
    if type(value) is not expected:
        return wrong(value, kind)
    if expected is bool:
        return "true" if value else "false"
    if expected is datetime.date:
        return value.isoformat()
    return str(value)


def canonical(value, kind):
    """The canonical text of `value` read from a column of Delta type `kind`."""
    if value is None:
        return None
    if kind.startswith("timestamp"):
        return render_timestamp(value, kind)
    if kind.startswith("decimal("):
        return render_decimal(value, kind)
    if kind == "double":
        return render_double(value, kind)
    return render_plain(value, kind)


def normalize(columns, rows, schema, keys):
    """Rows as (column names, tuples) from a reader: canonical rows in the
    schema's column order, sorted by the keys' values."""
    names = [name for name, _ in schema]
    if sorted(columns) != sorted(names):
        raise ValueError(f"the reader returned columns {columns}, the table has {names}")
    at = [columns.index(name) for name in names]
    ordered = [[row[i] for i in at] for row in rows]
    key_at = [names.index(k) for k in keys]
    ordered.sort(key=lambda row: [row[i] for i in key_at])
    return [[canonical(v, kind) for v, (_, kind) in zip(row, schema)] for row in ordered]


def duckdb_reader(path):
    import duckdb

    extension = next(
        f for f in importlib.metadata.files("duckdb-ext-delta")
        if f.name == "delta.duckdb_extension"
    )
    con = duckdb.connect(config={
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    })
    # No progress bar: DuckDB draws one on standard output, where this
    # script's JSON goes, once a query runs past two seconds (a busy machine).
    con.execute("SET enable_progress_bar_print = false")
    con.execute(f"LOAD '{extension.locate()}'")
    (built,) = con.execute(
        "SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'delta'"
    ).fetchone()
    version = (
        f"duckdb {duckdb.__version__}, delta extension {built} "
        f"(duckdb-ext-delta {importlib.metadata.version('duckdb-ext-delta')})"
    )
    result = con.execute("SELECT * FROM delta_scan(?)", [path])
    return version, lambda: ([d[0] for d in result.description], result.fetchall())


def polars_reader(path):
    import deltalake
    import polars

    def read():
        df = polars.read_delta(path)
        return df.columns, df.rows()

    return f"polars {polars.__version__} (deltalake {deltalake.__version__})", read


def polars_deltalake_reader(path):
    import polars
    import polars_deltalake

    def read():
        df = polars_deltalake.read_delta(path)
        return df.columns, df.rows()

    version = importlib.metadata.version("polars-deltalake")
    return f"polars-deltalake {version} (polars {polars.__version__})", read


def query_builder_reader(path):
    import deltalake
    import pyarrow

    def read():
        table = deltalake.DeltaTable(path)
        result = deltalake.QueryBuilder().register("t", table).execute("SELECT * FROM t")
        rows = pyarrow.table(result.read_all())
        return rows.column_names, [tuple(r.values()) for r in rows.to_pylist()]

    return f"deltalake {deltalake.__version__}", read


def pyarrow_reader(path):
    import deltalake
    import pyarrow

    def read():
        rows = deltalake.DeltaTable(path).to_pyarrow_table()
        return rows.column_names, [tuple(r.values()) for r in rows.to_pylist()]

    return f"deltalake {deltalake.__version__} (pyarrow {pyarrow.__version__})", read


READERS = {
    "duckdb.delta_scan": duckdb_reader,
    "polars.read_delta": polars_reader,
    "polars_deltalake.read_delta": polars_deltalake_reader,
    "deltalake.QueryBuilder": query_builder_reader,
    "deltalake.to_pyarrow_table": pyarrow_reader,
}


def main():
    path, keys = sys.argv[1], sys.argv[2:]
    from deltalake import DeltaTable

    schema = [(f.name, getattr(f.type, "type", str(f.type))) for f in DeltaTable(path).schema().fields]
    out = {}
    for name, reader in READERS.items():
        version = None
        try:
            version, read = reader(path)
            columns, rows = read()
            out[name] = {
                "columns": [n for n, _ in schema],
                "rows": normalize(list(columns), rows, schema, keys),
                "version": version,
            }
        except Exception as e:  # every failure is a finding to print
            out[name] = {"error": f"{type(e).__name__}: {e}", "version": version}
    print(json.dumps(out, ensure_ascii=False))


main()
sys.stdout.flush()
os._exit(0)
