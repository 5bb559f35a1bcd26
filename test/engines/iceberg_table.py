"""An Iceberg table written and read by pyiceberg, for the writers-racing-maintenance tests.

  python iceberg_table.py write <table-uri> --state <file> --commits N [--round R] [--catalog <sqlite-file>]
      makes N commits (the first creates the table, format version 2), cycling through append,
      delete, overwrite of one partition value, schema evolution (a column added), partition
      evolution (identity on `part`), tags (one short-lived, by max-ref-age-ms) and branches,
      and, in the SQL catalog, pyiceberg's own snapshot expiry; prints one JSON document: each
      snapshot made (its id as `version`), the operation, and the rows expected at it (count and
      checksum, engine_rows.py); metadata-only commits are events.
  python iceberg_table.py read <table-uri> [--version SNAPSHOT_ID ...] [--catalog <sqlite-file>]
      reads each snapshot given, then the current one, by pyiceberg's time travel.
  python iceberg_table.py create <table-uri> [--catalog <sqlite-file>]
      creates the table and appends nothing: a table with no snapshot yet; prints its metadata location.

Two kinds of table:
  - catalog-less (no --catalog): a file-system table, `metadata/v<N>.metadata.json` plus
    `metadata/version-hint.text`, the layout lakewarden opens from the folder and commits its own
    snapshot expiry to. pyiceberg writes only through a catalog, so FolderCatalog below is that
    catalog: pyiceberg builds every metadata file, and a commit is a create-only write of
    v<N+1> (a hard link on local disk, If-None-Match on S3), so it and lakewarden's expiry
    commit never both win; the loser reloads and retries;
  - SQL catalog (--catalog): pyiceberg's SqlCatalog on SQLite, metadata named NNNNN-uuid; the
    catalog row names the current file, which lakewarden is given as --metadata-location.
The table's snapshot retention is short (history.expire.max-snapshot-age-ms, 2 s by default), so
lakewarden's expiry (catalog-less) and pyiceberg's (SQL) have work within seconds.
S3: AWS_ENDPOINT_URL (and the usual AWS_* credentials) name the endpoint.
"""
import os
import time
import uuid
from urllib.parse import urlparse

import pyarrow as pa
from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.types import StringType

from engine_rows import PARTS, Model, arrow_rows, cli, emit, read_versions, s3_endpoint

SNAPSHOT_AGE_MS = os.environ.get("LAKEWARDEN_ICEBERG_SNAPSHOT_AGE_MS", "2000")
PROPERTIES = {
    "format-version": "2",
    "history.expire.max-snapshot-age-ms": SNAPSHOT_AGE_MS,
    "history.expire.min-snapshots-to-keep": "1",
}
CYCLE = ["append", "delete", "append", "add_column", "overwrite", "expire", "partition", "append", "tag", "delete", "append", "branch", "overwrite", "append", "expire"]
IDENTIFIER = ("lw", "t")


def io_properties() -> dict:
    endpoint = s3_endpoint()
    if not endpoint:
        return {}
    # Without a region, pyarrow asks the endpoint where the bucket is and waits ~8 s for no answer.
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    return {"s3.endpoint": endpoint, "s3.region": region}


class FolderCatalog(MetastoreCatalog):
    """One file-system table at `location`: v<N>.metadata.json files and version-hint.text."""

    def __init__(self, location: str):
        super().__init__("folder", **io_properties())
        self.location = location.rstrip("/")
        self.io = load_file_io(io_properties(), self.location)

    def _metadata(self, n: int) -> str:
        return f"{self.location}/metadata/v{n}.metadata.json"

    def _current(self) -> int | None:
        hint = self.io.new_input(f"{self.location}/metadata/version-hint.text")
        if not hint.exists():
            return None
        with hint.open() as f:
            n = int(f.read().decode().strip())
        # The hint is written after the metadata file: a newer file may exist.
        while self.io.new_input(self._metadata(n + 1)).exists():
            n += 1
        return n

    def load_table(self, identifier=IDENTIFIER) -> Table:
        n = self._current()
        if n is None:
            raise NoSuchTableError(self.location)
        location = self._metadata(n)
        metadata = FromInputFile.table_metadata(self.io.new_input(location))
        return Table(IDENTIFIER, metadata, location, load_file_io({**io_properties(), **metadata.properties}, location), self)

    def create_table(self, identifier, schema, location=None, partition_spec=None, sort_order=None, properties=None) -> Table:
        staged = self._create_staged_table(IDENTIFIER, schema, self.location, properties=properties or {})
        self._commit(staged.metadata, 1)
        return self.load_table()

    def commit_table(self, table, requirements, updates) -> CommitTableResponse:
        current = self.load_table()
        staged = self._update_and_stage_table(current, IDENTIFIER, requirements, updates)
        n = self._current()
        location = self._commit(staged.metadata, n + 1)
        return CommitTableResponse(metadata=staged.metadata, metadata_location=location)

    def _commit(self, metadata, n: int) -> str:
        location = self._metadata(n)
        create_only(location, metadata.model_dump_json().encode())
        replace(f"{self.location}/metadata/version-hint.text", str(n).encode())
        return location

    def _load_file_io(self, properties=None, location=None):
        return load_file_io({**io_properties(), **(properties or {})}, location)

    # The rest of the catalog interface has no use for one folder.
    def create_namespace(self, *a, **k): raise NotImplementedError
    def drop_namespace(self, *a, **k): raise NotImplementedError
    def list_namespaces(self, *a, **k): raise NotImplementedError
    def list_tables(self, *a, **k): raise NotImplementedError
    def list_views(self, *a, **k): raise NotImplementedError
    def load_namespace_properties(self, *a, **k): raise NotImplementedError
    def update_namespace_properties(self, *a, **k): raise NotImplementedError
    def drop_table(self, *a, **k): raise NotImplementedError
    def rename_table(self, *a, **k): raise NotImplementedError
    def register_table(self, *a, **k): raise NotImplementedError
    def drop_view(self, *a, **k): raise NotImplementedError
    def view_exists(self, *a, **k): raise NotImplementedError
    def load_view(self, *a, **k): raise NotImplementedError
    def register_view(self, *a, **k): raise NotImplementedError


def create_only(location: str, body: bytes) -> None:
    """Writes a new file, failing with CommitFailedException when one is there already."""
    parsed = urlparse(location)
    if parsed.scheme == "s3":
        import boto3
        from botocore.exceptions import ClientError

        try:
            boto3.client("s3").put_object(Bucket=parsed.netloc, Key=parsed.path.lstrip("/"), Body=body, IfNoneMatch="*")
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                raise CommitFailedException(f"{location} exists: a concurrent commit won") from error
            raise
        return
    path = parsed.path if parsed.scheme == "file" else location
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{os.path.dirname(path)}/.{uuid.uuid4()}.tmp"
    with open(tmp, "wb") as f:
        f.write(body)
    try:
        os.link(tmp, path)  # atomic: exactly one of two racing commits creates the name
    except FileExistsError as error:
        raise CommitFailedException(f"{location} exists: a concurrent commit won") from error
    finally:
        os.unlink(tmp)


def replace(location: str, body: bytes) -> None:
    parsed = urlparse(location)
    if parsed.scheme == "s3":
        import boto3

        boto3.client("s3").put_object(Bucket=parsed.netloc, Key=parsed.path.lstrip("/"), Body=body)
        return
    path = parsed.path if parsed.scheme == "file" else location
    tmp = f"{path}.{uuid.uuid4()}.tmp"
    with open(tmp, "wb") as f:
        f.write(body)
    os.replace(tmp, path)


def catalog_of(uri: str, sqlite: str | None):
    if sqlite is None:
        return FolderCatalog(uri)
    from pyiceberg.catalog.sql import SqlCatalog  # SQLAlchemy takes a second to import: only when asked for

    catalog = SqlCatalog("lw", uri=f"sqlite:///{sqlite}", warehouse=os.path.dirname(uri.rstrip("/")), **io_properties())
    if ("lw",) not in catalog.list_namespaces():
        catalog.create_namespace("lw")
    return catalog


def load(catalog) -> Table | None:
    try:
        return catalog.load_table(IDENTIFIER)
    except NoSuchTableError:
        return None


def arrow_for(table: Table | None, rows: dict[int, int]) -> pa.Table:
    extra = {}
    if table is not None and "note" in table.schema().column_names:
        extra["note"] = lambda ids: pa.array([f"row {i}" for i in ids], pa.string())
    data = arrow_rows(rows, extra)
    return data if table is None else data.cast(table.schema().as_arrow())


def commit_one(catalog, uri: str, model: Model, op: str) -> dict | None:
    """Applies one operation to the table (retrying on a lost commit race) and then to the model; returns an event for a metadata-only commit."""
    n = model.commits
    for attempt in range(20):
        table = load(catalog)
        try:
            if op == "create":
                rows = model.new_rows(40)
                created = catalog.create_table(IDENTIFIER, schema=arrow_rows(rows).schema, location=uri, properties=PROPERTIES)
                created.append(arrow_for(created, rows))
                model.rows.update(rows)
            elif op == "append":
                rows = model.new_rows(12)
                table.append(arrow_for(table, rows))
                model.rows.update(rows)
            elif op == "delete":
                part = n % PARTS
                table.delete(f"part = {part}")
                model.rows = {i: v for i, v in model.rows.items() if i % PARTS != part}
            elif op == "overwrite":
                part = (n + 1) % PARTS
                rows = model.new_rows(8, part=part)
                table.overwrite(arrow_for(table, rows), overwrite_filter=f"part = {part}")
                model.rows = {i: v for i, v in model.rows.items() if i % PARTS != part}
                model.intermediate = model.expected()  # pyiceberg's overwrite: a delete snapshot, then an append
                model.rows.update(rows)
            elif op == "add_column":
                if "note" in table.schema().column_names:
                    return None
                with table.update_schema() as update:
                    update.add_column("note", StringType())
                return {"op": op}
            elif op == "partition":
                if table.spec().fields:
                    return None
                with table.update_spec() as update:
                    update.add_identity("part")
                return {"op": op}
            elif op == "tag":
                current = table.current_snapshot().snapshot_id
                # A short-lived tag lakewarden's expiry drops for age, and a lasting one it keeps; the writer drops the lasting tag before last.
                manage = table.manage_snapshots().create_tag(current, f"short{n}", max_ref_age_ms=1000).create_tag(current, f"keep{n}")
                old = [name for name in table.metadata.refs if name.startswith("keep") and name != f"keep{n}"]
                for name in sorted(old, key=lambda s: int(s[4:]))[:-1]:
                    manage = manage.remove_tag(name)
                manage.commit()
                return {"op": op, "version": str(current), "tags": [f"short{n}", f"keep{n}"]}
            elif op == "branch":
                current = table.current_snapshot().snapshot_id
                manage = table.manage_snapshots().create_branch(current, f"b{n}", max_ref_age_ms=1000)
                manage.commit()
                return {"op": op, "version": str(current), "branch": f"b{n}"}
            elif op == "expire":
                if isinstance(catalog, FolderCatalog):
                    return None  # lakewarden's cleanup expires this table's snapshots
                from datetime import datetime, timedelta, timezone

                cutoff = datetime.now(timezone.utc) - timedelta(milliseconds=int(SNAPSHOT_AGE_MS))
                protected = {ref.snapshot_id for ref in table.metadata.refs.values()}
                old = [s.snapshot_id for s in table.metadata.snapshots if s.timestamp_ms < cutoff.timestamp() * 1000 and s.snapshot_id not in protected]
                if not old:
                    return None
                table.maintenance.expire_snapshots().by_ids(old).commit()
                return {"op": op, "expired": [str(s) for s in old]}
            else:
                raise ValueError(op)
            return None
        except CommitFailedException:
            time.sleep(0.05 * (attempt + 1))
    raise CommitFailedException(f"{op}: lost the commit race 20 times")


def main_ancestry(table: Table) -> list[int]:
    out, snapshot = [], table.current_snapshot()
    while snapshot is not None:
        out.append(snapshot.snapshot_id)
        snapshot = table.snapshot_by_id(snapshot.parent_snapshot_id) if snapshot.parent_snapshot_id is not None else None
    return out


def write(args) -> None:
    model = Model.load(args.state)
    catalog = catalog_of(args.uri, args.catalog)
    commits, events = [], []
    for _ in range(args.commits):
        table = load(catalog)
        op = "create" if table is None else CYCLE[model.commits % len(CYCLE)]
        before = set(main_ancestry(table)) if table is not None else set()
        model.intermediate = None
        event = commit_one(catalog, args.uri, model, op)
        model.commits += 1
        table = load(catalog)
        made = [s for s in reversed(main_ancestry(table)) if s not in before]
        expected = model.expected()
        for i, snapshot_id in enumerate(made):
            # Only the last snapshot of an operation holds its result (create = an empty snapshot-less table, then the append).
            last = i == len(made) - 1
            known = expected if last else model.intermediate if len(made) == 2 and model.intermediate else {"rows": None, "checksum": None}
            commits.append({"version": str(snapshot_id), "op": op, **known})
        if event:
            events.append(event)
        model.save(args.state)
    table = load(catalog)
    emit({"engine": "pyiceberg", "round": args.round, "commits": commits, "events": events, "metadata_location": table.metadata_location})


def read(args) -> None:
    table = load(catalog_of(args.uri, args.catalog))

    def read_one(version):
        snapshot_id = table.current_snapshot().snapshot_id if version is None else version
        if table.snapshot_by_id(snapshot_id) is None:
            raise LookupError(f"snapshot {snapshot_id} is not in {table.metadata_location}")
        return snapshot_id, table.scan(snapshot_id=snapshot_id, selected_fields=("id", "value")).to_arrow()

    emit({"engine": "pyiceberg", "versions": read_versions(args.version, read_one), "metadata_location": table.metadata_location})


def create(args) -> None:
    catalog = catalog_of(args.uri, args.catalog)
    created = catalog.create_table(IDENTIFIER, schema=arrow_rows({}).schema, location=args.uri, properties=PROPERTIES)
    emit({"engine": "pyiceberg", "metadata_location": created.metadata_location, "snapshots": len(created.metadata.snapshots)})


if __name__ == "__main__":
    cli(__doc__.splitlines()[0], write, read, extra_options=["--catalog"], create=create)
