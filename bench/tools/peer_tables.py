"""The side-by-side benchmark's tables, made by each format's own writer (bench/side-by-side.ts).

  python peer_tables.py write <format> <uri> --files F --first K --last M [--checkpoint]
      commits K..M (K = 0 creates the table), each a full overwrite of F rows written as F data
      files, so every commit leaves the previous version's files to its tombstones: a version
      that expires takes F files with it. `--checkpoint` (Delta) writes a checkpoint at the last
      commit made. Prints one JSON document: the table's latest version and the seconds taken.
  python peer_tables.py read <format> <uri> --from K
      reads every version with the format's own reader, its data files included: Delta and Lance
      from version K to the latest, Iceberg every snapshot the current metadata keeps (K unused).
      Prints one JSON document: {"versions": [{"version", "rows", "operation" (Iceberg)}]}.

  format: delta (delta-rs `write_deltalake`, partitioned by `p`, one file per partition value),
  lance (pylance `write_dataset`, one row per fragment file) or iceberg (pyiceberg through the
  catalog-less FolderCatalog of test/engines/iceberg_table.py, partitioned by `p`; on S3 it writes
  straight to the endpoint, so every file is named by its s3:// location).

Every tool gets the same settings: the Delta table is made with both retentions at 1 second and
a checkpoint interval too long to reach (so only the writer's explicit checkpoint exists and no
post-commit hook cleans the log), the Iceberg table with a snapshot age of 1 second and 1 snapshot
kept (an explicit age never shortens the table's in lakewarden, docs/peers.md); the benchmark then tells every tool to expire what was
committed before one instant. S3: AWS_ENDPOINT_URL and the AWS_* credentials name the endpoint.
"""
import argparse
import json
import os
import sys
import time

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(files: int, commit: int) -> pa.Table:
    return pa.table({"p": pa.array(range(files), pa.int32()), "id": pa.array(range(files), pa.int64()), "value": pa.array([commit] * files, pa.int64())})


def endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL") or None


def delta_options() -> dict | None:
    url = endpoint()
    # fauxqs, like S3, enforces If-None-Match on PutObject, which delta-rs's commits use.
    return {"AWS_ENDPOINT_URL": url, "AWS_ALLOW_HTTP": "true", "conditional_put": "etag"} if url else None


def lance_options() -> dict | None:
    url = endpoint()
    return {"aws_endpoint": url, "allow_http": "true"} if url else None


def write_delta(uri: str, files: int, first: int, last: int, checkpoint: bool) -> int:
    from deltalake import DeltaTable, PostCommitHookProperties, write_deltalake

    configuration = {
        "delta.logRetentionDuration": "interval 1 seconds",
        "delta.deletedFileRetentionDuration": "interval 1 seconds",
        "delta.checkpointInterval": "100000",
    }
    hooks = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
    for commit in range(first, last + 1):
        write_deltalake(
            uri,
            rows(files, commit),
            mode="error" if commit == 0 else "overwrite",
            partition_by=["p"],
            configuration=configuration if commit == 0 else None,
            storage_options=delta_options(),
            post_commithook_properties=hooks,
        )
    table = DeltaTable(uri, storage_options=delta_options())
    if checkpoint:
        table.create_checkpoint()
    return table.version()


def write_lance(uri: str, files: int, first: int, last: int) -> int:
    import lance

    for commit in range(first, last + 1):
        lance.write_dataset(
            rows(files, commit),
            uri,
            mode="create" if commit == 0 else "overwrite",
            max_rows_per_file=1,
            max_rows_per_group=1,
            storage_options=lance_options(),
        )
    return lance.dataset(uri, storage_options=lance_options()).version


def write_iceberg(uri: str, files: int, first: int, last: int) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "engines"))
    from iceberg_table import FolderCatalog  # noqa: E402
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import IntegerType, LongType, NestedField

    catalog = FolderCatalog(uri)
    if first == 0:
        schema = Schema(NestedField(1, "p", IntegerType(), required=False), NestedField(2, "id", LongType(), required=False), NestedField(3, "value", LongType(), required=False))
        spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="p"))
        table = catalog.create_table(None, schema, partition_spec=spec, properties={"format-version": "2", "history.expire.max-snapshot-age-ms": "1000", "history.expire.min-snapshots-to-keep": "1"})
        # FolderCatalog stages without the spec: the partition comes in as a schema-free update.
        with table.update_spec() as update:
            update.add_identity("p")
    table = catalog.load_table()
    for commit in range(first, last + 1):
        table.overwrite(rows(files, commit))
        table = catalog.load_table()
    return table.current_snapshot().snapshot_id


def read_delta(uri: str, first: int) -> list[dict]:
    from deltalake import DeltaTable

    latest = DeltaTable(uri, storage_options=delta_options()).version()
    return [{"version": str(v), "rows": DeltaTable(uri, version=v, storage_options=delta_options()).to_pyarrow_table().num_rows} for v in range(first, latest + 1)]


def read_lance(uri: str, first: int) -> list[dict]:
    import lance

    latest = lance.dataset(uri, storage_options=lance_options()).version
    return [{"version": str(v), "rows": lance.dataset(uri, version=v, storage_options=lance_options()).to_table().num_rows} for v in range(first, latest + 1)]


def read_iceberg(uri: str) -> list[dict]:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "engines"))
    from iceberg_table import FolderCatalog  # noqa: E402

    table = FolderCatalog(uri).load_table()
    return [
        {"version": str(s.snapshot_id), "rows": table.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows, "operation": s.summary.operation.value if s.summary else "unknown"}
        for s in table.snapshots()
    ]


def read(args) -> None:
    if args.format == "delta":
        versions = read_delta(args.uri, args.first_version)
    elif args.format == "lance":
        versions = read_lance(args.uri, args.first_version)
    else:
        versions = read_iceberg(args.uri)
    print(json.dumps({"versions": versions}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["write", "read"])
    parser.add_argument("format", choices=["delta", "lance", "iceberg"])
    parser.add_argument("uri")
    parser.add_argument("--files", type=int)
    parser.add_argument("--first", type=int)
    parser.add_argument("--last", type=int)
    parser.add_argument("--checkpoint", action="store_true")
    parser.add_argument("--from", dest="first_version", type=int, default=0)
    args = parser.parse_args()
    if args.command == "read":
        read(args)
        return
    started = time.perf_counter()
    if args.format == "delta":
        version = write_delta(args.uri, args.files, args.first, args.last, args.checkpoint)
    elif args.format == "lance":
        version = write_lance(args.uri, args.files, args.first, args.last)
    else:
        version = write_iceberg(args.uri, args.files, args.first, args.last)
    print(json.dumps({"version": version, "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
    # deltalake 1.6 can abort in its native teardown at interpreter exit ("terminate called without
    # an active exception") after a read, failing a run whose answer is already printed (an
    # exception in main() still exits non-zero above: only a clean finish gets here).
    sys.stdout.flush()
    os._exit(0)
