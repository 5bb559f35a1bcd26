"""DuckDB as an oracle of the scan planner and the row reader, independent of the tables' writers.

  python duckdb_oracle.py <delta|iceberg> <dir or metadata uri> <predicates.json>
      reads the table with DuckDB's own readers (the delta extension's delta_scan, the iceberg
      extension's iceberg_scan: deletes applied by the extension), copies the rows into a DuckDB
      table, and evaluates each predicate (the planner's JSON tree) as DuckDB SQL on that copy.
      Prints {"rows": [canonical row, ...], "results": [[id, ...], ...], "files": [[data file, ...], ...]}:
      the live rows, each predicate's matching ids and (Delta only: iceberg_scan's filename
      column fails on an evolved schema in 1.4.4) the data files holding those rows.

Why a copy: DuckDB 1.4.4 pushes comparisons into the Parquet reader, which prunes row groups by
min/max statistics that leave NaN out, so `f = 'NaN'` or `f > 1000` over a file holding NaN finds
nothing there although DuckDB orders NaN above every number. Evaluated on the copy, DuckDB's SQL
has the planner's semantics: three-valued logic, NaN greatest and equal to itself.

The extensions come from the duckdb-ext-* wheels (test/tools/requirements.txt), loaded from the
folder they install, never downloaded.
"""
import json
import os
import sys

import duckdb
import duckdb_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scan_tables import canonical  # noqa: E402

OPS = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def connect() -> duckdb.DuckDBPyConnection:
    extensions = os.path.join(duckdb_ext.__path__[0], "extensions")
    con = duckdb.connect(config={"extension_directory": extensions, "autoinstall_known_extensions": "false", "autoload_known_extensions": "true"})
    con.execute("LOAD delta; LOAD iceberg; SET TimeZone = 'UTC'")
    return con


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def literal_sql(lit: dict, column_type: str) -> str:
    """A literal of the planner's tree as DuckDB SQL, typed like the column it is compared with."""
    t = lit["type"]
    if t == "null":
        return "NULL"
    if t == "boolean":
        return "TRUE" if lit["value"] else "FALSE"
    if t == "number":
        return "'NaN'::DOUBLE" if lit["text"] == "NaN" else f"({lit['text']})"
    text = lit["value"] if t == "string" else lit["text"]
    if column_type == "DATE" or column_type.startswith("TIMESTAMP"):
        return f"CAST({quote(text)} AS {column_type})"
    return quote(text)


def where_sql(node: dict, types: dict[str, str]) -> str:
    kind = node["kind"]
    if kind in ("and", "or"):
        return f"({where_sql(node['left'], types)} {kind.upper()} {where_sql(node['right'], types)})"
    if kind == "not":
        return f"(NOT {where_sql(node['expr'], types)})"
    column = '"' + node["column"].replace('"', '""') + '"'
    column_type = types[node["column"]]
    if kind == "null-check":
        return f"({column} IS {'NOT ' if node['negated'] else ''}NULL)"
    if kind == "in":
        values = ", ".join(literal_sql(v, column_type) for v in node["values"])
        return f"({column} {'NOT ' if node['negated'] else ''}IN ({values}))"
    return f"({column} {OPS[node['op']]} {literal_sql(node['value'], column_type)})"


def main(fmt: str, uri: str, predicates_file: str) -> None:
    with open(predicates_file) as f:
        predicates = json.load(f)
    con = connect()
    source = f"delta_scan({quote(uri)}, filename = true)" if fmt == "delta" else f"iceberg_scan({quote(uri)})"
    con.execute(f"CREATE TABLE live AS SELECT * FROM {source}")
    types = {name: kind for name, kind, *_ in con.execute("DESCRIBE live").fetchall()}
    columns = [name for name in types if name != "filename"]
    # Timestamps as microseconds since the epoch (what canonical makes of them), read by DuckDB.
    names = ", ".join(f'epoch_us("{c}")' if types[c].startswith("TIMESTAMP") else f'"{c}"' for c in columns)
    rows = [{c: canonical(v) for c, v in zip(columns, row)} for row in con.execute(f"SELECT {names} FROM live").fetchall()]
    results, files = [], []
    for predicate in predicates:
        where = where_sql(predicate, types)
        results.append([row[0] for row in con.execute(f"SELECT id FROM live WHERE {where}").fetchall()])
        if fmt == "delta":
            prefix = uri.rstrip("/") + "/"
            found = con.execute(f"SELECT DISTINCT filename FROM live WHERE {where}").fetchall()
            files.append(sorted(name[len(prefix):] if name.startswith(prefix) else name for (name,) in found))
    print(json.dumps({"rows": rows, "results": results, "files": files}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
