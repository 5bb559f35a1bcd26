/**
 * Child-process entry for the Delta benchmark: runs ONE read of a local Delta table and reports
 * it as one JSON line on stdout. A fresh process per timed run, because lib/formats/delta keeps
 * parsed log files in memory (log-cache.ts, by URI and ETag) and a second read in the same
 * process would not read the log at all; every library is imported before the clock starts.
 *
 *   node bench/tools/delta-child.ts '<DeltaJob JSON>'
 */
import { performance } from "node:perf_hooks";
import { DuckDBInstance } from "@duckdb/node-api";
import { deltaFormat } from "../../lib/formats/delta/delta-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { readHistory } from "../../lib/head/timeline-source.ts";
import { openStore } from "../../lib/store/open-store.ts";
import type { RequestCounts } from "../../lib/store/object-store.ts";
import { oracleCommits, oracleLiveFiles } from "../../test/formats/delta/duckdb-oracle.ts";

export type DeltaMethod =
  /** `loadTableState` with a current head (what `openTable` runs). */
  | "head"
  /** lakewarden's replay: newest checkpoint + the commits after it (`latestVersionFile` + `readSnapshot`). */
  | "replay"
  /** DuckDB `read_parquet` (checkpoint) + `read_ndjson_objects` (commits after it): test/formats/delta/duckdb-oracle.ts. */
  | "duckdb-replay"
  /** `readHistory` as `lakewarden versions` runs it (version checkpoint + head + commits neither covers). */
  | "versions"
  /** DuckDB over every commit file: version, operation, in-commit timestamp, file time. */
  | "duckdb-log"
  /** Creating and closing an in-memory DuckDB instance and connection: the fixed cost inside the DuckDB figures. */
  | "duckdb-startup";

export interface DeltaJob {
  method: DeltaMethod;
  dir: string;
}

export interface DeltaOutcome {
  method: DeltaMethod;
  ms: number;
  /** Live files (replays, head) or versions (history). */
  count: number;
  /** lakewarden: its store's counters; DuckDB: null (it reads local files itself). */
  requests: RequestCounts | null;
  /** head: where the state came from ("head" or "manifest"). */
  source?: string;
}

async function run(job: DeltaJob): Promise<DeltaOutcome> {
  const store = openStore(job.dir);
  const start = performance.now();
  let count: number;
  let source: string | undefined;
  let requests: RequestCounts | null = null;
  switch (job.method) {
    case "head": {
      const state = await loadTableState(store, { format: deltaFormat });
      count = state.snapshot.liveFiles.length;
      source = state.source;
      break;
    }
    case "replay": {
      const latest = await deltaFormat.latestVersionFile(store);
      if (!latest) throw new Error(`${job.dir}: no commits`);
      count = (await deltaFormat.readSnapshot(store, latest)).liveFiles.length;
      break;
    }
    case "versions":
      count = (await readHistory(store, { format: deltaFormat })).records.length;
      break;
    case "duckdb-replay":
      count = (await oracleLiveFiles(job.dir)).files.length;
      break;
    case "duckdb-log":
      count = (await oracleCommits(job.dir)).length;
      break;
    case "duckdb-startup": {
      const instance = await DuckDBInstance.create(":memory:");
      const connection = await instance.connect();
      connection.closeSync();
      instance.closeSync();
      count = 0;
      break;
    }
  }
  const ms = performance.now() - start;
  if (!job.method.startsWith("duckdb")) requests = store.stats.snapshot();
  return { method: job.method, ms, count, requests, ...(source ? { source } : {}) };
}

const job = JSON.parse(process.argv[2]!) as DeltaJob;
process.stdout.write(`${JSON.stringify(await run(job))}\n`);
