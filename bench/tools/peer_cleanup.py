"""One peer's own cleanup, timed, for the side-by-side benchmark (bench/side-by-side.ts).

  python peer_cleanup.py <tool> <uri> '<job JSON>'

tool: deltars (delta-rs `vacuum` then `cleanup_metadata`) or lance (pylance `cleanup_old_versions`).
The job says what expires: `cutoff_ms`, the instant every tool is told (versions committed before
it expire), and for delta-rs `keep_from`, the version the table was at that instant. The library
is imported before the clock starts, as the lakewarden child loads its code first. Prints one JSON
line: the span's wall and CPU time (this process, every thread) and what the tool said it did.
"""
import json
import os
import resource
import sys
import time
from datetime import timedelta


def cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL") or None


def deltars(uri: str, job: dict) -> dict:
    from deltalake import DeltaTable, PostCommitHookProperties

    url = endpoint()
    options = {"AWS_ENDPOINT_URL": url, "AWS_ALLOW_HTTP": "true", "conditional_put": "etag"} if url else None
    cpu, start = cpu_ms(), time.perf_counter()
    table = DeltaTable(uri, storage_options=options)
    # Every tombstone counts as expired; the versions from the one current at the cutoff on keep
    # their files: Delta's time travel "as of the cutoff" (lakewarden's VACUUM retention = now - cutoff).
    keep = list(range(job["keep_from"], table.version() + 1))
    # full: Spark's default VACUUM, as lakewarden's: the files no tombstone names any more (a checkpoint drops
    # expired tombstones) are listed and deleted too (docs/peers.md, "untracked").
    deleted = table.vacuum(retention_hours=0, dry_run=False, enforce_retention_duration=False, full=True, keep_versions=keep, post_commithook_properties=PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False))
    DeltaTable(uri, storage_options=options).cleanup_metadata()
    return {"ms": (time.perf_counter() - start) * 1000, "cpu_ms": cpu_ms() - cpu, "said": {"vacuum_deleted": len(deleted)}}


def lance_cleanup(uri: str, job: dict) -> dict:
    import lance

    url = endpoint()
    options = {"aws_endpoint": url, "allow_http": "true"} if url else None
    cpu, start = cpu_ms(), time.perf_counter()
    older_than = timedelta(milliseconds=time.time() * 1000 - job["cutoff_ms"])
    stats = lance.dataset(uri, storage_options=options).cleanup_old_versions(older_than=older_than, delete_unverified=False, error_if_tagged_old_versions=False)
    return {"ms": (time.perf_counter() - start) * 1000, "cpu_ms": cpu_ms() - cpu, "said": {"old_versions": stats.old_versions, "bytes_removed": stats.bytes_removed}}


if __name__ == "__main__":
    tool, uri, raw = sys.argv[1:4]
    if tool == "deltars":
        import deltalake  # noqa: F401 - loaded before the clock
        out = deltars(uri, json.loads(raw))
    elif tool == "lance":
        import lance  # noqa: F401 - loaded before the clock
        out = lance_cleanup(uri, json.loads(raw))
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    print(json.dumps(out))
