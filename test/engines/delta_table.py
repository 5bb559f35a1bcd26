"""A Delta table written and read by delta-rs (`deltalake`), for the writers-racing-maintenance tests.

  python delta_table.py write <table-uri> --state <file> --commits N [--round R]
      makes N commits (the first call creates the table), cycling through append, delete, merge,
      overwrite of one partition value (replaceWhere), optimize compact, z-order and a full
      overwrite, with a checkpoint every few commits; prints one JSON document: each commit's
      version, operation and the rows expected at it (count and checksum, engine_rows.py).
  python delta_table.py read <table-uri> [--version V ...]
      reads each version given, then the latest, by delta-rs time travel; prints one
      JSON document with each version's row count and checksum, or the error reading it.

The table is made with short log and deleted-file retentions, so log cleanup and VACUUM have
work within seconds, deletion vectors enabled (delta-rs 1.6 accepts the feature; its deletes
still rewrite files), and a checkpoint interval too long to reach, so only this writer's
explicit checkpoints exist and no post-commit hook cleans the log before lakewarden does.
S3: AWS_ENDPOINT_URL (and the usual AWS_* credentials) name the endpoint.
"""
import os

import pyarrow as pa
from deltalake import DeltaTable, PostCommitHookProperties, QueryBuilder, write_deltalake

from engine_rows import PARTS, Model, arrow_rows, cli, emit, numbered_commits, read_versions, s3_endpoint, value_of

RETENTION = os.environ.get("LAKEWARDEN_DELTA_RETENTION", "interval 2 seconds")
CONFIGURATION = {
    "delta.logRetentionDuration": RETENTION,
    "delta.deletedFileRetentionDuration": RETENTION,
    "delta.enableDeletionVectors": "true",
    "delta.checkpointInterval": "100000",
}
# delta-rs would clean the expired log after every commit itself; lakewarden is the one cleaning here.
HOOKS = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
# LAKEWARDEN_DELTA_AGE_LOG_SECONDS: at the end of each round, the log files are dated this much
# further back (their modification time, which Delta's log cleanup goes by). Delta's log
# cleanup cuts off at the start of the day the retention ends in, so a test's commits, all of
# today, would never be old enough: this ages the history as days passing would.
AGE_LOG_SECONDS = int(os.environ.get("LAKEWARDEN_DELTA_AGE_LOG_SECONDS", "0"))
CYCLE = ["append", "delete", "merge", "append", "append", "optimize", "overwrite_part", "append", "zorder", "delete", "append", "overwrite_all"]
CHECKPOINT_EVERY = 4


def storage_options() -> dict | None:
    endpoint = s3_endpoint()
    if not endpoint:
        return None
    # moto enforces If-None-Match on PutObject, which delta-rs uses for its commits.
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "conditional_put": "etag"}


def open_table(uri: str, version: int | None = None) -> DeltaTable:
    return DeltaTable(uri, version=version, storage_options=storage_options())


def landed(uri: str, operation) -> None:
    """
    Runs one delta-rs operation that commits. delta-rs 1.6 cleans the expired log after its own
    commit whatever HOOKS say, and the log here is dated a day back, so lakewarden's log cleanup
    may remove a file that post-commit cleanup listed: the operation then raises though its commit
    landed. This writer is the table's only one, so a version that moved is its commit, and the
    model follows it; an error before the commit goes to write(), which loads again.
    """
    before = open_table(uri).version()
    try:
        operation()
    except Exception as error:
        if not vanished_log_file(error) or open_table(uri).version() == before:
            raise


def commit_one(uri: str, model: Model, op: str) -> str:
    """Applies one operation to the table and to the model; returns what it did."""
    n = model.commits
    if op == "create":
        rows = model.new_rows(40)
        write_deltalake(uri, arrow_rows(rows), mode="error", partition_by=None, configuration=CONFIGURATION, storage_options=storage_options(), post_commithook_properties=HOOKS)
        model.rows.update(rows)
    elif op == "append":
        rows = model.new_rows(12)
        landed(uri, lambda: write_deltalake(open_table(uri), arrow_rows(rows), mode="append", post_commithook_properties=HOOKS))
        model.rows.update(rows)
    elif op == "delete":
        remainder = n % 5
        landed(uri, lambda: open_table(uri).delete(f"id % 5 = {remainder}", post_commithook_properties=HOOKS))
        model.rows = {i: v for i, v in model.rows.items() if i % 5 != remainder}
    elif op == "merge":
        existing = sorted(model.rows)[::3]
        source = {i: value_of(i, n) for i in existing}
        source.update(model.new_rows(5))
        landed(
            uri,
            lambda: open_table(uri)
            .merge(arrow_rows(source), predicate="t.id = s.id", source_alias="s", target_alias="t", post_commithook_properties=HOOKS)
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(),
        )
        model.rows.update(source)
    elif op == "overwrite_part":
        part = n % PARTS
        rows = model.new_rows(6, part=part)
        landed(uri, lambda: write_deltalake(open_table(uri), arrow_rows(rows), mode="overwrite", predicate=f"part = {part}", post_commithook_properties=HOOKS))
        model.rows = {i: v for i, v in model.rows.items() if i % PARTS != part}
        model.rows.update(rows)
    elif op == "optimize":
        landed(uri, lambda: open_table(uri).optimize.compact(post_commithook_properties=HOOKS))
    elif op == "zorder":
        landed(uri, lambda: open_table(uri).optimize.z_order(["id", "part"], post_commithook_properties=HOOKS))
    elif op == "overwrite_all":
        rows = model.new_rows(30)
        landed(uri, lambda: write_deltalake(open_table(uri), arrow_rows(rows), mode="overwrite", post_commithook_properties=HOOKS))
        model.rows = rows
    else:
        raise ValueError(op)
    return op


def age_log(uri: str, seconds: int) -> None:
    """Dates every file now in the log `seconds` further back (local disk only)."""
    if seconds <= 0 or "://" in uri:
        return
    log = os.path.join(uri, "_delta_log")
    for name in os.listdir(log):
        path = os.path.join(log, name)
        info = os.stat(path)
        os.utime(path, (info.st_atime - seconds, info.st_mtime - seconds))


def vanished_log_file(error: Exception) -> bool:
    text = str(error)
    return "_delta_log/" in text and ("not found" in text or "No such file" in text)


def write(args) -> None:
    model = Model.load(args.state)
    commits, events = [], []
    for _ in range(args.commits):
        exists = DeltaTable.is_deltatable(args.uri, storage_options=storage_options())
        op = "create" if not exists else CYCLE[model.commits % len(CYCLE)]
        before = open_table(args.uri).version() if exists else -1
        for attempt in range(3):
            try:
                commit_one(args.uri, model, op)
                break
            except Exception as error:
                # A log file this writer listed was removed before it read it (log cleanup with a
                # 2-second retention, as a short retention allows): as any reader, load again,
                # unless the operation committed already (then the model cannot say what it did).
                if attempt == 2 or not vanished_log_file(error) or open_table(args.uri).version() != before:
                    raise
                events.append({"op": "reload", "reason": str(error).splitlines()[0][:200]})
        model.commits += 1
        version = open_table(args.uri).version()
        # optimize and z-order with nothing to rewrite commit nothing.
        commits += numbered_commits(before, version, op, model.expected(), op in ("optimize", "zorder"))
        if model.commits % CHECKPOINT_EVERY == 0:
            open_table(args.uri).create_checkpoint()
            events.append({"op": "checkpoint", "version": str(version)})
        model.save(args.state)
    # Last, with this writer done: the log cleanup after the round (lakewarden's) finds it aged, not delta-rs's own.
    age_log(args.uri, AGE_LOG_SECONDS)
    emit({"engine": "deltalake", "round": args.round, "commits": commits, "events": events})


def read(args) -> None:
    def read_one(version):
        table = open_table(args.uri, version)
        # delta-rs's DataFusion reader applies deletion vectors; to_pyarrow_table refuses the feature.
        return table.version(), pa.table(QueryBuilder().register("t", table).execute("select id, value from t").read_all())

    emit({"engine": "deltalake", "versions": read_versions(args.version, read_one)})


if __name__ == "__main__":
    cli(__doc__.splitlines()[0], write, read)
