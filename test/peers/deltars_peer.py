"""delta-rs (`deltalake`) as a peer of lakewarden's Delta cleanup, for test/peers/.

  python deltars_peer.py maintain <table-dir>
      what delta-rs does with the table, each step on its own so one refusal does not hide the
      next: open it, list its history, read every listed version by time travel (rows and
      checksum), VACUUM as a dry run with the table's own retention, then cleanup_metadata (the
      log cleanup, for real: run it on a copy). Prints one JSON document: each step's result or
      its error's first line, and the files under _delta_log/ that cleanup_metadata deleted.
  python deltars_peer.py clean <table-dir>
      delta-rs's own maintenance with the table's settings, for real: VACUUM (the table's
      deletedFileRetentionDuration, enforced) then cleanup_metadata (its logRetentionDuration).
      Prints each step's result or error and every file under the table it deleted.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engines"))
from engine_rows import table_checksum  # noqa: E402

from deltalake import DeltaTable  # noqa: E402


def first_line(error: Exception) -> str:
    return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:400]}"


def files_under(path: str, under: str = "_delta_log") -> set[str]:
    out = set()
    for folder, _, names in os.walk(os.path.join(path, under)):
        for name in names:
            if not name.startswith("."):
                out.add(os.path.relpath(os.path.join(folder, name), path))
    return out


def step(doc: dict, name: str, run):
    try:
        doc[name] = {"ok": run()}
    except Exception as error:  # noqa: BLE001 - the peer's answer is what the test reports
        doc[name] = {"error": first_line(error)}


def maintain(path: str) -> dict:
    doc: dict = {}
    step(doc, "open", lambda: DeltaTable(path).version())
    step(doc, "history", lambda: sorted(int(h["version"]) for h in DeltaTable(path).history()))

    def read_versions():
        out = {}
        for version in doc["history"].get("ok", []):
            try:
                out[str(version)] = table_checksum(DeltaTable(path, version=version).to_pyarrow_table(columns=["id", "value"]))
            except Exception as error:  # noqa: BLE001
                out[str(version)] = {"error": first_line(error)}
        return out

    step(doc, "read", read_versions)
    step(doc, "vacuum_dry_run", lambda: sorted(DeltaTable(path).vacuum(dry_run=True)))
    before = files_under(path)
    step(doc, "cleanup_metadata", lambda: DeltaTable(path).cleanup_metadata())
    doc["log_deleted"] = sorted(before - files_under(path))
    return doc


def clean(path: str) -> dict:
    doc: dict = {}
    before = files_under(path, "")
    step(doc, "vacuum", lambda: sorted(DeltaTable(path).vacuum(dry_run=False)))
    step(doc, "cleanup_metadata", lambda: DeltaTable(path).cleanup_metadata())
    doc["deleted"] = sorted(before - files_under(path, ""))
    return doc


if __name__ == "__main__":
    command, path = sys.argv[1:3]
    commands = {"maintain": maintain, "clean": clean}
    if command not in commands:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(commands[command](path)))
