"""What every engine writer and reader in test/engines/ shares: the row model a writer keeps of
what it committed, the checksum a reader computes of what it reads (the same function, so a
version read back whole gives the checksum its writer printed), the state file that carries the
model from one round to the next, and the S3 endpoint taken from the environment.

Rows are (id int64, value int64, part int32 = id % 4); a commit's value for a row is a function
of its id and the commit's number, so an update is visible in the checksum. Columns a writer
adds later (schema evolution) are not in the checksum: old versions do not have them.
"""
import hashlib
import json
import os
import sys

import pyarrow as pa

PARTS = 4


def value_of(row_id: int, commit: int) -> int:
    return (row_id * 31 + commit * 1_000_003) % 2_147_483_647


def checksum(ids, values) -> str:
    digest = hashlib.sha256()
    for row_id, value in sorted(zip(ids, values)):
        digest.update(f"{row_id}:{value}\n".encode())
    return digest.hexdigest()[:16]


def table_checksum(table: pa.Table) -> dict:
    ids = table.column("id").to_pylist()
    values = table.column("value").to_pylist()
    return {"rows": len(ids), "checksum": checksum(ids, values)}


class Model:
    """The rows a writer believes the table holds, and the count of its commits so far."""

    def __init__(self, rows=None, next_id=0, commits=0):
        self.rows: dict[int, int] = dict(rows or {})
        self.next_id = next_id
        self.commits = commits

    @classmethod
    def load(cls, path: str) -> "Model":
        if not os.path.exists(path):
            return cls()
        with open(path) as f:
            doc = json.load(f)
        return cls({int(k): v for k, v in doc["rows"].items()}, doc["next_id"], doc["commits"])

    def save(self, path: str) -> None:
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:
            json.dump({"rows": {str(k): v for k, v in self.rows.items()}, "next_id": self.next_id, "commits": self.commits}, f)
        os.replace(tmp, path)

    def new_rows(self, count: int, part: int | None = None) -> dict[int, int]:
        """Fresh ids (all in `part` when given), valued for the commit about to be made."""
        out = {}
        while len(out) < count:
            row_id = self.next_id
            self.next_id += 1
            if part is None or row_id % PARTS == part:
                out[row_id] = value_of(row_id, self.commits)
        return out

    def expected(self) -> dict:
        return {"rows": len(self.rows), "checksum": checksum(self.rows.keys(), self.rows.values())}


def arrow_rows(rows: dict[int, int], extra=None) -> pa.Table:
    ids = sorted(rows)
    columns = {
        "id": pa.array(ids, pa.int64()),
        "value": pa.array([rows[i] for i in ids], pa.int64()),
        "part": pa.array([i % PARTS for i in ids], pa.int32()),
    }
    for name, make in (extra or {}).items():
        columns[name] = make(ids)
    return pa.table(columns)


def s3_endpoint() -> str | None:
    """AWS_ENDPOINT_URL (moto's server in the tests); None on local disk or real S3."""
    return os.environ.get("AWS_ENDPOINT_URL") or None


def emit(doc) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def fail(message: str) -> None:
    sys.stderr.write(f"{os.path.basename(sys.argv[0])}: {message}\n")
    sys.exit(1)


def numbered_commits(before: int | None, after: int, op: str, expected: dict, rows_unchanged: bool) -> list[dict]:
    """The versions one operation made (before+1 .. after, numbered engines). Only the last holds
    the operation's result, except where the operation leaves the rows as they were (a compaction
    that first reserves fragment ids, an index): then every one holds them. Others get no row
    count (readable is the promise)."""
    first = 0 if before is None else before + 1
    unknown = {"rows": None, "checksum": None}
    return [{"version": str(v), "op": op, **(expected if v == after or rows_unchanged else unknown)} for v in range(first, after + 1)]


def read_versions(versions, read_one) -> list[dict]:
    """Each asked version, then the latest (None): `read_one(version)` gives (the version's id,
    its rows as Arrow). An error is that version's answer: the test says which one failed and why."""
    out = []
    for version in [*(versions or []), None]:
        try:
            version_id, rows = read_one(None if version is None else int(version))  # a bad number is an answer too
            out.append({"version": str(version_id), **table_checksum(rows)})
        except Exception as error:
            out.append({"version": version, "error": f"{type(error).__name__}: {error}".splitlines()[0]})
    return out


def cli(description: str, write, read, extra_options=(), create=None) -> None:
    """Every engine script's command line: `write <uri> --state F [--commits N] [--round N]` and
    `read <uri> [--version V]...`, plus options both take (`--catalog`); and `create <uri>`
    (the table alone, no commit of data) for a script that gives `create`."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("uri")
    w.add_argument("--state", required=True)
    w.add_argument("--commits", type=int, default=6)
    w.add_argument("--round", type=int, default=0)
    r = sub.add_parser("read")
    r.add_argument("uri")
    r.add_argument("--version", action="append")
    c = sub.add_parser("create") if create else None
    if c:
        c.add_argument("uri")
    for option in extra_options:
        for command in (w, r, c):
            if command:
                command.add_argument(option)
    args = parser.parse_args()
    {"write": write, "read": read, "create": create}[args.command](args)
    # deltalake 1.6 can abort in its native teardown at interpreter exit ("terminate called without
    # an active exception"), failing a run whose answer is printed and whose state is saved (an
    # exception above still exits non-zero: only a clean finish gets here).
    import os
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
