"""Lance's own cleanup (`pylance`) as a peer of lakewarden's, for test/peers/.

  python lance_peer.py clean <dataset-dir>
      cleanup_old_versions with every version older than now expired (older_than = 0), tagged
      versions and the latest kept, unverified files left to Lance's own 7-day rule
      (delete_unverified false); prints its statistics, every file under the dataset it
      deleted, and the versions left (with their tags).
"""
import json
import os
import sys
from datetime import timedelta

import lance


def files_under(path: str) -> set[str]:
    out = set()
    for folder, _, names in os.walk(path):
        for name in names:
            out.add(os.path.relpath(os.path.join(folder, name), path))
    return out


def clean(path: str) -> dict:
    before = files_under(path)
    dataset = lance.dataset(path)
    stats = dataset.cleanup_old_versions(older_than=timedelta(seconds=0), delete_unverified=False, error_if_tagged_old_versions=False)
    left = lance.dataset(path)
    return {
        "stats": {"bytes_removed": stats.bytes_removed, "old_versions": stats.old_versions},
        "deleted": sorted(before - files_under(path)),
        "versions_left": sorted(v["version"] for v in left.versions()),
        "tags": {name: tag["version"] for name, tag in left.tags.list().items()},
    }


if __name__ == "__main__":
    command, path = sys.argv[1:3]
    if command != "clean":
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(clean(path)))
