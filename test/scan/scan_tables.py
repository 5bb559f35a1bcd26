"""Tables written by the formats' own writers for the scan planner's oracle, and the oracle itself.

  python scan_tables.py write <delta|iceberg> <dir> --layout <plain|parts> --seed N
      writes a table in several commits with every column type (long, int, double with NaN and
      nulls, strings with unicode and 40-character values, date, timestamp, boolean, decimal, a
      low-cardinality partition string), a delete and a schema change (a column added); `parts`
      partitions it (Delta: part and b; Iceberg: identity, bucket, truncate, then an evolved spec
      with day and year). Prints {"uri": ..., "samples": {column: [literal, ...]}}.
  python scan_tables.py rows <delta|iceberg> <dir or metadata uri> <predicates.json>
      a full scan by the writer's reader (deltalake to_pyarrow_table, pyiceberg scan().to_arrow()),
      each row's values in canonical text, and the ids of each predicate's matching rows.
  python scan_tables.py full <delta|iceberg> <dir or metadata file>...
      each table's live rows, canonical: Delta by deltalake (deletion vectors applied: delta_rows),
      Iceberg by pyiceberg's scan().to_arrow().
  python scan_tables.py match <delta|iceberg> <dir> <predicates.json>
      reads every live data file with the writer's own reader (pyiceberg's ArrowScan per file
      task, deletes applied; deltalake's add actions and pyarrow, partition values added), and
      for each predicate (the planner's JSON tree) prints the data files holding at least one
      matching row and the number of such rows. SQL semantics, NaN greatest and equal to itself.
"""
import datetime as dt
import decimal
import json
import math
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

WORDS = ["apple", "apricot", "banana", "blueberry", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon", "mango", "ÿlang", "zebra", "Ωmega", "😀smile"]
PARTS = ["a", "b", "c", None]
BASE_DAY = dt.date(2024, 1, 1)
BASE_TS = dt.datetime(2024, 1, 1, 0, 0, 0)


def rows_of(commit: int, count: int, rng: random.Random, first_id: int, extra: bool) -> list[dict]:
    rows = []
    for n in range(count):
        f = rng.uniform(commit * 10, commit * 10 + 15)
        r = rng.random()
        if r < 0.06:
            f = math.nan
        elif r < 0.12:
            f = None
        elif r < 0.14:
            f = -0.0
        word = rng.choice(WORDS)
        s = None if rng.random() < 0.08 else (word * 5)[:40] if rng.random() < 0.1 else f"{word}{commit}{rng.randint(0, 9)}"
        row = {
            "id": first_id + n,
            "i": None if rng.random() < 0.1 else rng.randint(commit * 100, commit * 100 + 150),
            "f": f,
            "s": s,
            "d": BASE_DAY + dt.timedelta(days=commit * 40 + rng.randint(0, 60)),
            "ts": BASE_TS + dt.timedelta(hours=commit * 30 + rng.randint(0, 40), microseconds=rng.randint(0, 3_599_999_999)),
            "b": None if rng.random() < 0.1 else rng.random() < 0.5,
            "dec": None if rng.random() < 0.1 else decimal.Decimal(rng.randint(-50_000, 50_000 + commit * 10_000)).scaleb(-2),
            "part": rng.choice(PARTS),
        }
        if extra:
            row["extra"] = None if rng.random() < 0.2 else rng.randint(-5, 5)
        rows.append(row)
    return rows


def arrow_schema(tz: str | None, extra: bool) -> pa.Schema:
    fields = [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("i", pa.int32()),
        pa.field("f", pa.float64()),
        pa.field("s", pa.string()),
        pa.field("d", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz=tz)),
        pa.field("b", pa.bool_()),
        pa.field("dec", pa.decimal128(9, 2)),
        pa.field("part", pa.string()),
    ]
    if extra:
        fields.append(pa.field("extra", pa.int64()))
    return pa.schema(fields)


def to_arrow(rows: list[dict], schema: pa.Schema) -> pa.Table:
    tz = schema.field("ts").type.tz
    data = {name: [r.get(name) for r in rows] for name in schema.names}
    if tz:
        data["ts"] = [None if v is None else v.replace(tzinfo=dt.timezone.utc) for v in data["ts"]]
    return pa.Table.from_pydict(data, schema=schema)


def literal_of(value) -> dict:
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, (int, decimal.Decimal)):
        return {"type": "number", "text": str(value)}
    if isinstance(value, float):
        return {"type": "number", "text": "NaN" if math.isnan(value) else repr(value)}
    if isinstance(value, dt.datetime):
        return {"type": "timestamp", "text": value.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")}
    if isinstance(value, dt.date):
        return {"type": "date", "text": value.isoformat()}
    return {"type": "string", "value": value}


def write(fmt: str, root: str, layout: str, seed: int) -> None:
    rng = random.Random(seed)
    written: list[dict] = []
    commits = 6
    next_id = 0
    if fmt == "delta":
        from deltalake import DeltaTable, write_deltalake

        for c in range(commits):
            extra = c >= 4
            rows = rows_of(c, 40, rng, next_id, extra)
            next_id += len(rows)
            written += rows
            write_deltalake(root, to_arrow(rows, arrow_schema("UTC", extra)), mode="append", partition_by=["part", "b"] if layout == "parts" else None, schema_mode="merge" if extra else None)
            if c == 2:
                DeltaTable(root).delete("i % 7 = 0")
        uri = root
    else:
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform, YearTransform
        from pyiceberg.types import LongType

        os.makedirs(root, exist_ok=True)
        catalog = SqlCatalog("scan", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
        catalog.create_namespace("lw")
        schema = arrow_schema(None, False)
        table = catalog.create_table("lw.t", schema=schema, properties={"format-version": "2"})
        if layout == "parts":
            with table.update_spec() as spec:
                spec.add_field("part", IdentityTransform(), "part")
                spec.add_field("id", BucketTransform(4), "id_bucket")
                spec.add_field("s", TruncateTransform(1), "s_trunc")
                spec.add_field("i", TruncateTransform(50), "i_trunc")
        for c in range(commits):
            extra = c >= 4
            if c == 4:
                with table.update_schema() as update:
                    update.add_column("extra", LongType())
                if layout == "parts":
                    with table.update_spec() as spec:
                        spec.add_field("ts", DayTransform(), "ts_day")
                        spec.add_field("d", YearTransform(), "d_year")
            rows = rows_of(c, 40, rng, next_id, extra)
            next_id += len(rows)
            written += rows
            table.append(to_arrow(rows, arrow_schema(None, extra)))
            if c == 2:
                from pyiceberg.expressions import LessThan

                table.delete(LessThan("id", 10))
        uri = table.metadata_location
    samples: dict[str, list] = {}
    for name in written[-1].keys():
        values = [r.get(name) for r in written]
        picked = rng.sample(values, min(len(values), 12))
        samples[name] = [literal_of(v) for v in picked]
    print(json.dumps({"uri": uri, "samples": samples}))


# --- the oracle ---


def as_literal(lit: dict, like):
    t = lit["type"]
    if t == "null":
        return None
    if t == "boolean":
        return lit["value"]
    if t == "number":
        text = lit["text"]
        if text == "NaN":
            return math.nan
        if isinstance(like, decimal.Decimal):
            return decimal.Decimal(text)
        try:
            return int(text)
        except ValueError:
            return float(text) if isinstance(like, float) or "e" in text.lower() else decimal.Decimal(text)
    if t == "string":
        if isinstance(like, dt.datetime):
            t, lit = "timestamp", {"text": lit["value"]}
        elif isinstance(like, dt.date):
            return dt.date.fromisoformat(lit["value"])
        else:
            return lit["value"]
    if t == "date":
        if isinstance(like, dt.datetime):
            t = "timestamp"
        else:
            return dt.date.fromisoformat(lit["text"])
    text = lit["text"].replace("T", " ").rstrip("Z")
    value = dt.datetime.fromisoformat(text) if " " in text else dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
    return value.replace(tzinfo=dt.timezone.utc) if isinstance(like, dt.datetime) and like.tzinfo else value


def order(a, b) -> int:
    """NaN above every number and equal to itself."""
    a_nan = isinstance(a, float) and math.isnan(a)
    b_nan = isinstance(b, float) and math.isnan(b)
    if a_nan or b_nan:
        return 0 if a_nan and b_nan else (1 if a_nan else -1)
    if isinstance(a, decimal.Decimal) and isinstance(b, float):
        b = decimal.Decimal(b)
    return (a > b) - (a < b)


def evaluate(node: dict, row: dict):
    kind = node["kind"]
    if kind == "and":
        left, right = evaluate(node["left"], row), evaluate(node["right"], row)
        return False if left is False or right is False else (None if left is None or right is None else True)
    if kind == "or":
        left, right = evaluate(node["left"], row), evaluate(node["right"], row)
        return True if left is True or right is True else (None if left is None or right is None else False)
    if kind == "not":
        inner = evaluate(node["expr"], row)
        return None if inner is None else not inner
    value = row.get(node["column"])
    if kind == "null-check":
        return (value is not None) if node["negated"] else (value is None)
    if value is None:
        return None
    if kind == "in":
        literals = [as_literal(lit, value) for lit in node["values"]]
        found = any(lit is not None and order(value, lit) == 0 for lit in literals)
        result = True if found else (None if any(lit is None for lit in literals) else False)
        return result if not node["negated"] or result is None else not result
    lit = as_literal(node["value"], value)
    if lit is None:
        return None
    c = order(value, lit)
    return {"=": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[node["op"]]


def live_files(fmt: str, uri: str):
    """(key, rows) of every live data file, rows as dicts, by the writer's own reader."""
    if fmt == "delta":
        from deltalake import DeltaTable

        table = DeltaTable(uri)
        schema = pa.schema(table.schema().to_arrow())
        for add in pa.table(table.get_add_actions(flatten=True)).to_pylist():
            data = pq.read_table(os.path.join(uri, add["path"]))
            rows = data.to_pylist()
            for row in rows:
                for name in schema.names:
                    if f"partition.{name}" in add:
                        row[name] = add[f"partition.{name}"]
                    row.setdefault(name, None)
            yield add["path"], rows
    else:
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.io.pyarrow import ArrowScan
        from pyiceberg.table import StaticTable

        table = StaticTable.from_metadata(uri)
        location = table.metadata.location.rstrip("/")
        scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue(), case_sensitive=True)
        for task in table.scan().plan_files():
            path = task.file.file_path
            key = path[len(location) + 1:] if path.startswith(location + "/") else path
            yield key, scan.to_table([task]).to_pylist()


def match(fmt: str, uri: str, predicates_file: str) -> None:
    with open(predicates_file) as f:
        predicates = json.load(f)
    files = list(live_files(fmt, uri))
    out = []
    for predicate in predicates:
        keys, count = [], 0
        for key, rows in files:
            n = sum(1 for row in rows if evaluate(predicate, row) is True)
            if n:
                keys.append(key)
                count += n
        out.append({"files": keys, "rows": count})
    print(json.dumps({"live_files": [k for k, _ in files], "live_rows": sum(len(r) for _, r in files), "results": out}))


def canonical(value):
    """A value as the rows oracle compares it: ints, decimals and timestamps (microseconds) as text, NaN as "NaN"."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) if value.tzinfo else dt.datetime(1970, 1, 1)
        return str((value - epoch) // dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return value.isoformat()
    return repr(value)


def delta_rows(uri: str) -> list[dict]:
    """A Delta table's live rows by deltalake: its add actions, its kernel's deletion vectors
    (selection vectors; to_pyarrow_table refuses tables with deletion vectors), pyarrow for the
    Parquet files, physical column names mapped back to logical ones, partition values added."""
    from urllib.parse import unquote

    from deltalake import DeltaTable

    table = DeltaTable(uri)
    fields = table.schema().fields

    def physical_name(field) -> str:
        name = (field.metadata or {}).get("delta.columnMapping.physicalName", field.name)
        return json.loads(name) if isinstance(name, str) and name.startswith('"') else str(name)

    logical = {physical_name(f): f.name for f in fields}
    selections = {unquote(r["filepath"]): r["selection_vector"] for r in pa.table(table.deletion_vectors().read_all()).to_pylist()}
    out = []
    for add in pa.table(table.get_add_actions(flatten=True)).to_pylist():
        key = unquote(add["path"])
        selection = next((v for path, v in selections.items() if path.endswith("/" + key)), None)
        for i, row in enumerate(pq.read_table(os.path.join(uri, key)).to_pylist()):
            if selection is not None and i < len(selection) and not selection[i]:
                continue
            named = {logical.get(k, k): v for k, v in row.items()}
            out.append({f.name: add[f"partition.{f.name}"] if f"partition.{f.name}" in add else named.get(f.name) for f in fields})
    return out


def rows(fmt: str, uri: str, predicates_file: str) -> None:
    """A full scan by the writer's own reader (deltalake to_pyarrow_table, pyiceberg scan().to_arrow()), and the ids of each predicate's matching rows."""
    with open(predicates_file) as f:
        predicates = json.load(f)
    if fmt == "delta":
        from deltalake import DeltaTable

        table = DeltaTable(uri).to_pyarrow_table()
    else:
        from pyiceberg.table import StaticTable

        table = StaticTable.from_metadata(uri).scan().to_arrow()
    data = table.to_pylist()
    out = [[row["id"] for row in data if evaluate(p, row) is True] for p in predicates]
    print(json.dumps({"rows": [{k: canonical(v) for k, v in row.items()} for row in data], "results": out}))


if __name__ == "__main__":
    command, fmt, root = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
    if command == "write":
        args = dict(zip(sys.argv[4::2], sys.argv[5::2]))
        write(fmt, root, args.get("--layout", "plain"), int(args.get("--seed", "1")))
    elif command == "full":
        read = delta_rows if fmt == "delta" else lambda uri: __import__("pyiceberg.table", fromlist=["StaticTable"]).StaticTable.from_metadata(uri).scan().to_arrow().to_pylist()
        print(json.dumps({d: [{k: canonical(v) for k, v in row.items()} for row in read(d)] for d in sys.argv[3:]}))
    elif command == "rows":
        rows(fmt, root, sys.argv[4])
    else:
        match(fmt, root, sys.argv[4])
    # deltalake 1.6 can abort in its native teardown at interpreter exit ("terminate called without
    # an active exception") after to_pyarrow_table, failing a run whose answer is already printed.
    sys.stdout.flush()
    os._exit(0)
