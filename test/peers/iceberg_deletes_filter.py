"""The scan oracle's answers on rows Iceberg Java read (IcebergDeletesRead.java, `files` mode:
every live row of the current snapshot by data file, deletes applied by Iceberg): for each random
filter, the ids of the rows it matches and the data files holding them, by test/scan/scan_tables.py's
`evaluate` (SQL semantics, NaN greatest and equal to itself), the rule the other scan oracles use.

  python iceberg_deletes_filter.py <read.json> <predicates.json>

prints {"results": [{"ids": [...], "files": [...]}, ...]}, one per predicate.
"""
import datetime as dt
import decimal
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scan"))
from scan_tables import evaluate  # noqa: E402

EPOCH = dt.datetime(1970, 1, 1)


def typed(name: str, value):
    """A canonical value (IcebergDeletesRead.canonical) as the Python value scan_tables compares."""
    if value is None:
        return None
    if name in ("id", "qty"):
        return int(value)
    if name == "price":
        return float("nan") if value == "NaN" else float(value)
    if name == "day":
        return dt.date.fromisoformat(value)
    if name == "ts":
        return EPOCH + dt.timedelta(microseconds=int(value))
    if name == "amount":
        return decimal.Decimal(value)
    return value


def main(read_file: str, predicates_file: str) -> None:
    with open(read_file) as f:
        files = json.load(f)[0]["files"]
    with open(predicates_file) as f:
        predicates = json.load(f)
    rows = [(file["key"], {k: typed(k, v) for k, v in row.items()}) for file in files for row in file["rows"]]
    results = []
    for predicate in predicates:
        matched = [(key, row) for key, row in rows if evaluate(predicate, row) is True]
        results.append({"ids": [str(row["id"]) for _, row in matched], "files": sorted({key for key, _ in matched})})
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
