"""The peers of the cold filtered-query benchmark (bench/benchmarks/cold-query.ts), one cold query per run.

  python query-peers.py <tool> <table> <query.json> <runs> [<s3 endpoint>]
      tool: pyiceberg (StaticTable.from_metadata(<metadata location>).scan(row_filter=...).to_arrow()),
      deltalake (DeltaTable(<uri>).to_pyarrow_table(filters=...)), duckdb-delta / duckdb-iceberg
      (delta_scan / iceberg_scan in a new in-memory DuckDB, extensions from the duckdb-ext wheels).
      query.json: {"column": "part", "equals": "p00005"} or {"column": "v", "from": a, "below": b}.
      Each run opens the table anew (no cache kept between runs) and is timed from opening the
      table to the last row in Arrow; the imports are loaded once before. Prints one JSON line per
      run, {"ms": ..., "rows": ...}, after a line {"ready": true} (the caller resets the S3 proxy's
      counters between runs by answering each "next" line on stdin).
"""
import json
import os
import sys
import time


def storage(endpoint: str | None, style: str) -> dict:
    if not endpoint:
        return {}
    if style == "pyiceberg":
        return {"s3.endpoint": endpoint, "s3.access-key-id": "bench", "s3.secret-access-key": "bench", "s3.region": "us-east-1"}
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}


def runner(tool: str, table: str, query: dict, endpoint: str | None):
    column = query["column"]
    if tool == "pyiceberg":
        from pyiceberg.table import StaticTable

        where = f"{column} = '{query['equals']}'" if "equals" in query else f"{column} >= {query['from']} and {column} < {query['below']}"
        props = storage(endpoint, "pyiceberg")
        return lambda: StaticTable.from_metadata(table, properties=props).scan(row_filter=where).to_arrow()
    if tool == "deltalake":
        from deltalake import DeltaTable

        filters = [(column, "=", query["equals"])] if "equals" in query else [(column, ">=", query["from"]), (column, "<", query["below"])]
        options = storage(endpoint, "deltalake")
        return lambda: DeltaTable(table, storage_options=options).to_pyarrow_table(filters=filters)
    import duckdb
    import duckdb_ext

    extensions = os.path.join(duckdb_ext.__path__[0], "extensions")
    scan = "delta_scan" if tool == "duckdb-delta" else "iceberg_scan"
    where = f"{column} = '{query['equals']}'" if "equals" in query else f"{column} >= {query['from']} AND {column} < {query['below']}"
    sql = f"SELECT * FROM {scan}('{table}') WHERE {where}"

    def run():
        con = duckdb.connect(config={"extension_directory": extensions, "autoinstall_known_extensions": "false", "autoload_known_extensions": "true"})
        con.execute(f"LOAD {'delta' if tool == 'duckdb-delta' else 'iceberg'}")
        result = con.execute(sql).fetch_arrow_table()
        con.close()
        return result

    return run


def main() -> None:
    tool, table, query_file, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    endpoint = sys.argv[5] if len(sys.argv) > 5 else None
    with open(query_file) as f:
        query = json.load(f)
    run = runner(tool, table, query, endpoint)
    print(json.dumps({"ready": True}), flush=True)
    for _ in range(runs):
        if sys.stdin.readline().strip() != "next":
            return
        start = time.perf_counter()
        rows = run().num_rows
        print(json.dumps({"ms": (time.perf_counter() - start) * 1000, "rows": rows}), flush=True)


if __name__ == "__main__":
    main()
