"""A Lance dataset written and read by Lance from Python (`pylance`), for the writers-racing-maintenance tests.

  python lance_table.py write <dataset-uri> --state <file> --commits N [--round R]
      makes N commits (the first creates the dataset), cycling through append, delete,
      merge_insert (upsert), compaction, a scalar (BTREE) index and a vector (IVF_FLAT) index,
      and tags a version every few commits (dropping the tag before last, so tagged versions come
      and go); prints one JSON document: each commit's version, operation and the rows expected
      at it (count and checksum, engine_rows.py), and the tag events.
  python lance_table.py read <dataset-uri> [--version V ...]
      reads each version given, then the latest, by Lance's time travel; prints one JSON
      document with each version's row count and checksum, or the error reading it.

The dataset is written with this pylance's default (newest stable, 2.2) data storage version and
V2 manifest names, or the one LAKEWARDEN_LANCE_DATA_STORAGE_VERSION names: newer than what the
npm LanceDB in the project's own tests writes.
S3: AWS_ENDPOINT_URL (and the usual AWS_* credentials) name the endpoint.
"""
import os

import lance
import pyarrow as pa

from engine_rows import Model, arrow_rows, cli, emit, numbered_commits, read_versions, s3_endpoint, value_of

DIM = 8
# LAKEWARDEN_LANCE_DATA_STORAGE_VERSION (e.g. 2.3, this pylance's newest, unstable) and
# LAKEWARDEN_LANCE_STABLE_ROW_IDS=1 make the dataset in the newest format this writer has.
DATA_STORAGE_VERSION = os.environ.get("LAKEWARDEN_LANCE_DATA_STORAGE_VERSION") or None
STABLE_ROW_IDS = os.environ.get("LAKEWARDEN_LANCE_STABLE_ROW_IDS") == "1"
CYCLE = ["append", "delete", "merge_insert", "append", "compact", "scalar_index", "append", "delete", "vector_index", "append", "merge_insert", "compact"]
TAG_EVERY = 5
ROWS_UNCHANGED = {"compact", "scalar_index", "vector_index"}


def storage_options() -> dict | None:
    endpoint = s3_endpoint()
    return {"endpoint": endpoint, "allow_http": "true"} if endpoint else None


def vectors(ids) -> pa.Array:
    flat = [float((i * (k + 3)) % 17) for i in ids for k in range(DIM)]
    return pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), DIM)


def rows_table(rows: dict[int, int]) -> pa.Table:
    return arrow_rows(rows, {"vec": vectors})


def open_dataset(uri: str, version: int | None = None) -> lance.LanceDataset:
    return lance.dataset(uri, version=version, storage_options=storage_options())


def commit_one(uri: str, model: Model, op: str) -> None:
    n = model.commits
    if op == "create":
        rows = model.new_rows(64)
        lance.write_dataset(
            rows_table(rows), uri, mode="create", storage_options=storage_options(), data_storage_version=DATA_STORAGE_VERSION, enable_stable_row_ids=STABLE_ROW_IDS
        )
        model.rows.update(rows)
    elif op == "append":
        rows = model.new_rows(16)
        lance.write_dataset(rows_table(rows), uri, mode="append", storage_options=storage_options())
        model.rows.update(rows)
    elif op == "delete":
        remainder = n % 5
        open_dataset(uri).delete(f"id % 5 = {remainder}")
        model.rows = {i: v for i, v in model.rows.items() if i % 5 != remainder}
    elif op == "merge_insert":
        source = {i: value_of(i, n) for i in sorted(model.rows)[::4]}
        source.update(model.new_rows(6))
        open_dataset(uri).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(rows_table(source))
        model.rows.update(source)
    elif op == "compact":
        open_dataset(uri).optimize.compact_files()
    elif op == "scalar_index":
        open_dataset(uri).create_scalar_index("id", "BTREE", replace=True)
    elif op == "vector_index":
        open_dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2, replace=True)
    else:
        raise ValueError(op)


def write(args) -> None:
    model = Model.load(args.state)
    commits, events = [], []
    for _ in range(args.commits):
        try:
            before = open_dataset(args.uri).version
        except (ValueError, OSError, FileNotFoundError):
            before = None
        op = "create" if before is None else CYCLE[model.commits % len(CYCLE)]
        commit_one(args.uri, model, op)
        model.commits += 1
        dataset = open_dataset(args.uri)
        # compact_files commits twice (ReserveFragments, then Rewrite); an index or compaction leaves the rows alone.
        commits += numbered_commits(before if before is not None else 0, dataset.version, op, model.expected(), op in ROWS_UNCHANGED)
        if model.commits % TAG_EVERY == 0:
            events += retag(dataset, model.commits // TAG_EVERY)
        model.save(args.state)
    emit({"engine": "pylance", "round": args.round, "commits": commits, "events": events})


def retag(dataset: lance.LanceDataset, number: int) -> list[dict]:
    """Tags the current version `t<number>` and drops `t<number-2>`: two tags live at a time."""
    events = [{"op": "tag", "tag": f"t{number}", "version": str(dataset.version)}]
    dataset.tags.create(f"t{number}", dataset.version)
    old = f"t{number - 2}"
    if old in dataset.tags.list():
        dataset.tags.delete(old)
        events.append({"op": "untag", "tag": old})
    return events


def read(args) -> None:
    def read_one(version):
        dataset = open_dataset(args.uri, version)
        return dataset.version, dataset.to_table(columns=["id", "value"])

    emit({"engine": "pylance", "versions": read_versions(args.version, read_one)})


if __name__ == "__main__":
    cli(__doc__.splitlines()[0], write, read)
