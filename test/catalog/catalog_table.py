"""An Iceberg table in a catalog, written and read by pyiceberg, for the catalog commit tests: the
AWS Glue Data Catalog (pyiceberg's GlueCatalog, which commits with UpdateTable guarded by the
entry's VersionId), or an Iceberg REST catalog (pyiceberg's RestCatalog) when ICEBERG_REST_URI is set.

  python catalog_table.py write <database.table> <location> --commits N [--retain-ms MS]
      creates the table when missing (format version 2, history.expire.max-snapshot-age-ms MS,
      min-snapshots-to-keep 1), then makes N appends of a few rows each, retrying a commit the
      catalog refuses (the entry moved) on the reloaded table; prints {"snapshots": [...],
      "retries": R, "metadata_location": ...}, each snapshot with the rows it reads as.
  python catalog_table.py tag <database.table> <name> [--snapshot ID] [--max-ref-age-ms MS]
      tags the given (default: current) snapshot, kept MS at most when given.
  python catalog_table.py set-property <database.table> <key> <value>
      sets one table property by a commit through the catalog.
  python catalog_table.py files <database.table>
      prints {snapshot id: [every file it reaches: manifest list, manifests, data files]} for every
      snapshot of the current metadata, as pyiceberg reads them.
  python catalog_table.py read <database.table> [--version SNAPSHOT_ID ...]
      loads the table through Glue, reads each snapshot given by time travel, then the current one;
      prints {"versions": [{"version", "rows", "checksum"}], "current": ID, "snapshots": [ID, ...],
      "refs": {name: ID}, "metadata_location": ...}.
  python catalog_table.py serve
      runs the commands above one after another, each a JSON array of its arguments on a line of
      stdin, each answered by one line of stdout: {"out": <what the command printed>} or
      {"error": "<Type>: <message>"}. One process pays pyiceberg's, pyarrow's and boto3's imports
      (about 1.6 CPU seconds) and the catalog client's setup once, not once per command
      (test/support/catalog-python.ts).

Glue: AWS_ENDPOINT_URL_GLUE (Glue) and AWS_ENDPOINT_URL_S3 (S3), with the usual AWS_* credentials
and region. REST: ICEBERG_REST_URI, and ICEBERG_REST_CREDENTIAL (client_id:client_secret) for
OAuth2 client credentials when set.
"""
import argparse
import contextlib
import functools
import hashlib
import io
import json
import os
import sys
import time

import pyarrow as pa
from pyiceberg.catalog.glue import GlueCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError


@functools.cache
def catalog():
    if os.environ.get("ICEBERG_REST_URI"):
        from pyiceberg.catalog.rest import RestCatalog

        credential = os.environ.get("ICEBERG_REST_CREDENTIAL")
        return RestCatalog("rest", uri=os.environ["ICEBERG_REST_URI"], **({"credential": credential} if credential else {}))
    region = os.environ.get("AWS_REGION", "us-east-1")
    return GlueCatalog(
        "glue",
        **{
            "glue.endpoint": os.environ["AWS_ENDPOINT_URL_GLUE"],
            "glue.region": region,
            "s3.endpoint": os.environ["AWS_ENDPOINT_URL_S3"],
            "s3.region": region,
        },
    )


def checksum(table: pa.Table) -> dict:
    ids = table.column("id").to_pylist()
    values = table.column("value").to_pylist()
    digest = hashlib.sha256()
    for row_id, value in sorted(zip(ids, values)):
        digest.update(f"{row_id}:{value}\n".encode())
    return {"rows": len(ids), "checksum": digest.hexdigest()[:16]}


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"id": pa.array(ids, pa.int64()), "value": pa.array([i * 7 for i in ids], pa.int64())})


def write(args) -> None:
    glue = catalog()
    database, name = args.table.split(".", 1)
    if (database,) not in glue.list_namespaces():
        glue.create_namespace(database)
    try:
        table = glue.load_table((database, name))
    except NoSuchTableError:
        table = glue.create_table(
            (database, name),
            schema=rows(0, 1).schema,
            location=args.location,
            properties={
                "format-version": "2",
                "history.expire.max-snapshot-age-ms": str(args.retain_ms),
                "history.expire.min-snapshots-to-keep": "1",
            },
        )
    snapshots, retries = [], 0
    for _ in range(args.commits):
        for attempt in range(30):
            table = glue.load_table((database, name))
            start = sum(int(s.summary.get("added-records", 0)) for s in table.snapshots()) if table.snapshots() else 0
            try:
                table.append(rows(1000 * len(table.snapshots()) + start, 3))
                break
            except CommitFailedException:
                retries += 1
                time.sleep(0.02 * (attempt + 1))
        else:
            raise CommitFailedException("lost the commit race 30 times")
        table = glue.load_table((database, name))
        current = table.current_snapshot()
        snapshots.append({"version": str(current.snapshot_id), **checksum(table.scan(snapshot_id=current.snapshot_id).to_arrow())})
    print(json.dumps({"snapshots": snapshots, "retries": retries, "metadata_location": table.metadata_location}))


def tag(args) -> None:
    database, name = args.table.split(".", 1)
    table = catalog().load_table((database, name))
    snapshot = int(args.snapshot) if args.snapshot else table.current_snapshot().snapshot_id
    table.manage_snapshots().create_tag(snapshot, args.name, max_ref_age_ms=args.max_ref_age_ms).commit()
    print(json.dumps({"tag": args.name, "version": str(snapshot)}))


def set_property(args) -> None:
    database, name = args.table.split(".", 1)
    table = catalog().load_table((database, name))
    with table.transaction() as transaction:
        transaction.set_properties({args.key: args.value})
    print(json.dumps({"metadata_location": catalog().load_table((database, name)).metadata_location}))


def files(args) -> None:
    database, name = args.table.split(".", 1)
    table = catalog().load_table((database, name))
    out = {}
    for snapshot in table.snapshots():
        reached = [snapshot.manifest_list]
        for manifest in snapshot.manifests(table.io):
            reached.append(manifest.manifest_path)
            reached.extend(entry.data_file.file_path for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True))
        out[str(snapshot.snapshot_id)] = sorted(set(reached))
    print(json.dumps(out))


def read(args) -> None:
    database, name = args.table.split(".", 1)
    table = catalog().load_table((database, name))
    current = table.current_snapshot().snapshot_id
    out = []
    for version in [*(int(v) for v in args.version), current]:
        if table.snapshot_by_id(version) is None:
            raise LookupError(f"snapshot {version} is not in {table.metadata_location}")
        out.append({"version": str(version), **checksum(table.scan(snapshot_id=version).to_arrow())})
    snapshots = [str(s.snapshot_id) for s in table.snapshots()]
    refs = {name: str(ref.snapshot_id) for name, ref in table.metadata.refs.items()}
    print(json.dumps({"versions": out, "current": str(current), "snapshots": snapshots, "refs": refs, "metadata_location": table.metadata_location}))


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    w = commands.add_parser("write")
    w.add_argument("table")
    w.add_argument("location")
    w.add_argument("--commits", type=int, default=1)
    w.add_argument("--retain-ms", type=int, default=1000)
    t = commands.add_parser("tag")
    t.add_argument("table")
    t.add_argument("name")
    t.add_argument("--snapshot")
    t.add_argument("--max-ref-age-ms", type=int)
    p = commands.add_parser("set-property")
    p.add_argument("table")
    p.add_argument("key")
    p.add_argument("value")
    f = commands.add_parser("files")
    f.add_argument("table")
    r = commands.add_parser("read")
    r.add_argument("table")
    r.add_argument("--version", action="append", default=[])
    commands.add_parser("serve")
    return parser


COMMANDS = {"write": write, "tag": tag, "set-property": set_property, "files": files, "read": read}


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        out = io.StringIO()
        try:
            args = parser().parse_args(json.loads(line))
            if args.command == "serve":
                raise ValueError("serve is not a command to serve")
            with contextlib.redirect_stdout(out):
                COMMANDS[args.command](args)
            answer = {"out": out.getvalue()}
        except BaseException as error:  # SystemExit from argparse too: one answer per line, whatever happened
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main() -> None:
    args = parser().parse_args()
    if args.command == "serve":
        serve()
    else:
        COMMANDS[args.command](args)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # one line on stderr, as the tests show it
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
