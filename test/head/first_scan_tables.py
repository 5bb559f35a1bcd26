"""Small tables for the first-scan tests (test/head/first-scan.test.ts), made by the formats' writers.

  python first_scan_tables.py delta <dir> create
      three appends by deltalake (ids 0..29, v = id * 10); prints {"rows": [...]}.
  python first_scan_tables.py delta <dir> overwrite | replace
      a full overwrite with other rows and a column more (extra); replace then VACUUMs, keeping
      no file of the old version; prints the new rows.
  python first_scan_tables.py iceberg <dir> create | append
      a pyiceberg table (SQL catalog under <dir>) with the same three appends, or one append more;
      prints {"rows": [...], "metadata": <metadata location>}.
Rows as deltalake's to_pyarrow_table or pyiceberg's scan().to_arrow() read them, sorted by id.
"""
import json
import os
import sys

import pyarrow as pa


def rows_of(first: int, count: int, extra: bool = False) -> pa.Table:
    data = {"id": pa.array(range(first, first + count), pa.int64()), "v": pa.array([i * 10 for i in range(first, first + count)], pa.int64())}
    if extra:
        data["extra"] = pa.array([f"x{i}" for i in range(first, first + count)], pa.string())
    return pa.table(data)


def emit(table: pa.Table, **more) -> None:
    print(json.dumps({"rows": sorted(table.to_pylist(), key=lambda r: r["id"]), **more}))


def delta(root: str, step: str) -> None:
    from deltalake import DeltaTable, write_deltalake

    if step == "create":
        for c in range(3):
            write_deltalake(root, rows_of(c * 10, 10), mode="append")
    else:
        write_deltalake(root, rows_of(100, 15, extra=True), mode="overwrite", schema_mode="overwrite")
        if step == "replace":
            DeltaTable(root).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    emit(DeltaTable(root).to_pyarrow_table())


def iceberg(root: str, step: str) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    os.makedirs(root, exist_ok=True)
    catalog = SqlCatalog("first", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    if step == "create":
        catalog.create_namespace("lw")
        table = catalog.create_table("lw.t", schema=rows_of(0, 1).schema, properties={"format-version": "2"})
        for c in range(3):
            table.append(rows_of(c * 10, 10))
    else:
        table = catalog.load_table("lw.t")
        table.append(rows_of(100, 15))
    table = catalog.load_table("lw.t")
    emit(table.scan().to_arrow(), metadata=table.metadata_location)


if __name__ == "__main__":
    fmt, root, step = sys.argv[1], sys.argv[2], sys.argv[3]
    (delta if fmt == "delta" else iceberg)(root, step)
    # deltalake 1.6's reader threads may abort the interpreter's shutdown ("terminate called without
    # an active exception", about one run in four here); the work is done and printed by now.
    sys.stdout.flush()
    os._exit(0)
