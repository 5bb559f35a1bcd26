"""Tables of many small data files for the cold filtered-query benchmark (bench/benchmarks/cold-query.ts).

  python query-tables.py data <dir> <files> <rows> <delta|iceberg>
      writes <files> Parquet files of <rows> rows each with pyarrow under <dir>/data/part=pNNNNN/:
      id (long, increasing), part (string, the partition: 10 files each, at least 2 partitions),
      v (long: file k holds k*rows .. k*rows+rows-1, so a range on v hits a few files), x (double),
      s (string payload); Delta's files leave part out (its value is in the log, as Delta writers do).
      One writer call per file, nothing else: the formats commit them below.
  python query-tables.py delta <dir>
      one Delta commit by deltalake (create_table_with_add_actions) adding every file under
      <dir>/data, with each file's partition value and its min/max/null-count stats.
  python query-tables.py iceberg <dir> <location> [<s3 endpoint>]
      one Iceberg commit by pyiceberg (SQL catalog on SQLite in <dir>-catalog, identity partition on
      part) adding every file of <dir>/data as <location>/data/... (add_files reads their footers
      there: <location> is file://<dir> or an s3:// URI reached at the endpoint). Prints the
      metadata location.
"""
import json
import os
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

FILES_PER_PARTITION = 10


def partitions(files: int) -> int:
    return max(2, files // FILES_PER_PARTITION)


def schema() -> pa.Schema:
    return pa.schema([pa.field("id", pa.int64()), pa.field("part", pa.string()), pa.field("v", pa.int64()), pa.field("x", pa.float64()), pa.field("s", pa.string())])


def data(root: str, files: int, rows: int, fmt: str) -> None:
    count = partitions(files)
    for k in range(files):
        part = f"p{k % count:05d}"
        first = k * rows
        table = pa.table(
            {
                "id": pa.array(range(first, first + rows), pa.int64()),
                "part": pa.array([part] * rows),
                "v": pa.array(range(first, first + rows), pa.int64()),
                "x": pa.array([((first + i) * 7919 % 10007) / 7.0 for i in range(rows)], pa.float64()),
                "s": pa.array([f"row-{first + i:08d}" for i in range(rows)]),
            },
            schema=schema(),
        )
        if fmt == "delta":
            table = table.drop_columns(["part"])
        folder = os.path.join(root, "data", f"part={part}")
        os.makedirs(folder, exist_ok=True)
        pq.write_table(table, os.path.join(folder, f"f{k:05d}.parquet"))
    print(json.dumps({"files": files, "rows": rows, "partitions": count}))


def data_files(root: str) -> list[str]:
    out = []
    for folder, _, names in os.walk(os.path.join(root, "data")):
        out += [os.path.relpath(os.path.join(folder, n), root) for n in names if n.endswith(".parquet")]
    return sorted(out)


def delta(root: str) -> None:
    from deltalake import Schema
    from deltalake.transaction import AddAction, create_table_with_add_actions

    actions = []
    now = int(time.time() * 1000)
    for key in data_files(root):
        meta = pq.read_metadata(os.path.join(root, key))
        stats = {"numRecords": meta.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
        for c in range(meta.num_columns):
            column = meta.schema.column(c).name
            s = meta.row_group(0).column(c).statistics
            stats["minValues"][column], stats["maxValues"][column], stats["nullCount"][column] = s.min, s.max, s.null_count
        part = key.split("/")[1].split("=", 1)[1]
        actions.append(AddAction(key, os.path.getsize(os.path.join(root, key)), {"part": part}, now, True, json.dumps(stats)))
    create_table_with_add_actions(root, Schema.from_arrow(schema()), actions, mode="error", partition_by=["part"])
    print(json.dumps({"uri": root, "files": len(actions)}))


def iceberg(root: str, location: str, endpoint: str | None) -> None:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    catalog_dir = os.path.join(f"{root.rstrip('/')}-catalog", "s3" if endpoint else "local")
    os.makedirs(catalog_dir, exist_ok=True)
    properties = {"uri": f"sqlite:///{catalog_dir}/catalog.db", "warehouse": location}
    if endpoint:
        properties.update({"s3.endpoint": endpoint, "s3.access-key-id": "bench", "s3.secret-access-key": "bench", "s3.region": "us-east-1"})
    catalog = SqlCatalog("bench", **properties)
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.t", schema=schema(), location=location, properties={"format-version": "2"})
    with table.update_spec() as spec:
        spec.add_identity("part")
    table.add_files([f"{location.rstrip('/')}/{key}" for key in data_files(root)])
    print(json.dumps({"metadata": table.metadata_location}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "data":
        data(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif command == "delta":
        delta(sys.argv[2])
    else:
        iceberg(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
