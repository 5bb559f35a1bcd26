/**
 * Benchmark: the cold filtered query. Delta and Iceberg tables of 10 to 10,000 data files made by
 * the writers (cold-query-tables.ts), two queries (a partition point lookup, a range on a
 * non-partition column), each run from nothing cached: lakewarden (head plan + rows) against
 * deltalake, pyiceberg and icebird on the emulated S3, and DuckDB on local disk (cold-query-tools.ts).
 * Per cell: median time, requests and dependent round trips before the first data byte of one run.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { Benchmark, BenchEnv } from "../harness/benchmark.ts";
import { formatCount, formatMs, formatRatio, median } from "../harness/measure.ts";
import type { BenchReport, MarkdownTable } from "../harness/report.ts";
import type { S3Env } from "../harness/s3-env.ts";
import { prepareQueryTables, querySpecs, readerFormat, type QuerySpec, type QueryTable } from "./cold-query-tables.ts";
import { icebirdStateTool, lakewardenTool, pythonTool, roundTripsToData, type QueryTool } from "./cold-query-tools.ts";

const FULL_FILES = [10, 100, 1_000, 10_000];
const QUICK_FILES = [10, 1_000];

interface Method {
  id: string;
  label: string;
  storage: "s3" | "local";
  /** Times only the table state, not a whole query (icebird). */
  stateOnly?: boolean;
  tool(table: QueryTable, query: QuerySpec, s3: S3Env | null, queryFile: string): QueryTool;
}

const METHODS: Method[] = [
  { id: "lw-s3", label: "lakewarden", storage: "s3", tool: (t, q) => lakewardenTool(t.s3Uri, readerFormat(t, "s3"), q) },
  {
    id: "writer-s3",
    label: "writer's reader",
    storage: "s3",
    tool: (t, q, s3, file) => (t.format === "delta" ? pythonTool("deltalake", t.s3Open, q, file, s3!.endpoint) : pythonTool("pyiceberg", t.s3Open, q, file, s3!.endpoint)),
  },
  { id: "icebird-s3", label: "icebird (table state only)", storage: "s3", stateOnly: true, tool: (t, _q, s3) => icebirdStateTool(t, s3!) },
  { id: "lw-local", label: "lakewarden", storage: "local", tool: (t, q) => lakewardenTool(t.localDir, readerFormat(t, "local"), q) },
  {
    id: "duckdb-local",
    label: "DuckDB",
    storage: "local",
    tool: (t, q, _s3, file) => pythonTool(t.format === "delta" ? "duckdb-delta" : "duckdb-iceberg", t.localOpen, q, file, null),
  },
];

interface Result {
  medianMs: number;
  requests: number | null;
  roundTrips: number | null;
  rows: number;
}

interface Cell {
  format: QueryTable["format"];
  files: number;
  query: QuerySpec;
  results: Map<string, Result>;
}

/** icebird reads manifests one after another: 7 s a run at 1,000 files, so not run on 10,000 (the run must fit in minutes). */
const ICEBIRD_MAX_FILES = 1_000;

function applies(method: Method, table: QueryTable): boolean {
  return method.id !== "icebird-s3" || (table.format === "iceberg" && table.files <= ICEBIRD_MAX_FILES);
}

async function measure(method: Method, table: QueryTable, query: QuerySpec, s3: S3Env | null, runs: number, queryFile: string): Promise<Result> {
  const samples: number[] = [];
  let requests: number | null = null;
  let roundTrips: number | null = null;
  let rows = 0;
  const onS3 = method.storage === "s3" && s3 !== null;
  let run = 0;
  // One untimed warm-up run first (lazy imports, JIT), as every benchmark here does.
  await method.tool(
    table,
    query,
    s3,
    queryFile,
  )(
    runs + 1,
    async () => void (onS3 ? await s3.resetCounts() : undefined),
    async (result) => {
      if (!method.stateOnly && result.rows !== query.rows)
        throw new Error(`${method.id} on ${table.format} ${table.files}: ${query.label} gave ${result.rows} rows, expected ${query.rows}`);
      if (run++ === 0) return;
      samples.push(result.ms);
      rows = result.rows;
      if (onS3) {
        const log = await s3.requestLog();
        requests = log.length;
        roundTrips = method.stateOnly ? null : roundTripsToData(log);
      }
    },
  );
  return { medianMs: median(samples), requests, roundTrips, rows };
}

export const coldQueryBenchmark: Benchmark = {
  name: "cold-query",
  title: "Cold filtered query: head plan + rows vs the formats' readers",
  async run(env: BenchEnv): Promise<BenchReport> {
    const { options } = env;
    const sizes = options.quick ? QUICK_FILES : FULL_FILES;
    const s3 = options.localOnly ? null : await env.s3();
    const scratch = await env.scratchDir("cold-query");
    const cells: Cell[] = [];
    for (const files of sizes) {
      const tables = await prepareQueryTables(options.cacheDir, s3, files, env.log);
      for (const table of tables) {
        for (const query of querySpecs(files)) {
          const results = new Map<string, Result>();
          for (const method of METHODS) {
            if (!applies(method, table) || (method.storage === "s3" && !s3)) continue;
            results.set(method.id, await measure(method, table, query, s3, options.runs, join(scratch, "query.json")));
          }
          cells.push({ format: table.format, files, query, results });
          env.log(`cold-query ${table.format} ${formatCount(files)} ${query.id}: ${[...results].map(([id, r]) => `${id} ${formatMs(r.medianMs)}`).join(", ")}`);
        }
      }
    }
    return buildReport(env, cells);
  },
};

function fastestPeer(cell: Cell): Result | null {
  const peers = [cell.results.get("writer-s3")].filter((r): r is Result => r !== undefined);
  return peers.length ? peers.reduce((a, b) => (a.medianMs <= b.medianMs ? a : b)) : null;
}

const show = (r: Result | undefined, what: "time" | "requests" | "roundTrips"): string => (r === undefined ? "–" : what === "time" ? formatMs(r.medianMs) : String(r[what] ?? "–"));

function buildReport(env: BenchEnv, cells: Cell[]): BenchReport {
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  const latency = env.options.s3LatencyMs;
  const s3Table: MarkdownTable = {
    title: `Emulated S3 (+${latency} ms per request)`,
    note:
      "Median time of a cold query (a new table handle / client per run, nothing cached), its requests and its dependent " +
      "round trips up to the first data byte (requests in sequence, from the proxy's log: a request is one round trip " +
      "deeper than the deepest one answered before it was sent), one run's counts. *lakewarden* = `openTable(uri, { format, speculativeScan: true })` (Iceberg: the format at the metadata file the catalog names, as pyiceberg is given it) then " +
      "`table.scan({ filter })` to the last Arrow batch; *writer's reader* = deltalake `DeltaTable(uri).to_pyarrow_table(filters=...)` " +
      "(Delta) or pyiceberg `StaticTable.from_metadata(location).scan(row_filter=...).to_arrow()` (Iceberg: given the metadata " +
      "location, so no catalog round trip); *icebird* 0.3.1 has no filters (its `icebergRead` reads every file in turn), so it is " +
      `timed on the table state a query of it starts from (metadata, manifest list, manifests), a lower bound, up to ${formatCount(ICEBIRD_MAX_FILES)} files. Ratio: writer's reader / lakewarden.`,
    columns: [
      "format",
      "files",
      "query",
      "lakewarden",
      "writer's reader",
      "icebird state",
      "ratio",
      "lakewarden requests",
      "writer's requests",
      "icebird requests",
      "round trips to data: lakewarden",
      "writer's",
    ],
    rows: cells
      .filter((c) => c.results.has("lw-s3"))
      .map((c) => {
        const lw = c.results.get("lw-s3")!;
        const writer = c.results.get("writer-s3");
        const icebird = c.results.get("icebird-s3");
        return [
          c.format,
          formatCount(c.files),
          `${c.query.id}: \`${c.query.label}\``,
          show(lw, "time"),
          show(writer, "time"),
          show(icebird, "time"),
          formatRatio(fastestPeer(c)?.medianMs ?? Number.NaN, lw.medianMs),
          show(lw, "requests"),
          show(writer, "requests"),
          show(icebird, "requests"),
          show(lw, "roundTrips"),
          show(writer, "roundTrips"),
        ];
      }),
  };
  const localTable: MarkdownTable = {
    title: "Local disk",
    note: "Median time of a cold query on local disk: lakewarden as above on the table folder; DuckDB 1.4.4 `delta_scan` / `iceberg_scan` (its extensions from the duckdb-ext wheels) in a new in-memory database per run, `SELECT * ... WHERE` to an Arrow table. Ratio: DuckDB / lakewarden.",
    columns: ["format", "files", "query", "lakewarden", "DuckDB", "ratio"],
    rows: cells.map((c) => [
      c.format,
      formatCount(c.files),
      `${c.query.id}: \`${c.query.label}\``,
      show(c.results.get("lw-local"), "time"),
      show(c.results.get("duckdb-local"), "time"),
      formatRatio(c.results.get("duckdb-local")?.medianMs ?? Number.NaN, c.results.get("lw-local")?.medianMs ?? Number.NaN),
    ]),
  };
  const big = cells.filter((c) => c.files >= 1_000 && c.results.has("lw-s3"));
  return {
    name: "cold-query",
    title: "Cold filtered query: head plan + rows vs the formats' readers",
    intro: [
      `Commit ${commit}. Tables of N data files of 100 rows (columns id, part, v, x, s), written by pyarrow and committed in one ` +
        "commit by the format's writer (deltalake `create_table_with_add_actions` with per-file stats; pyiceberg `add_files`, " +
        "identity partition on part): 10 files per partition (2 partitions at 10 files), file k holding v = 100k .. 100k+99. " +
        "Queries: a partition point lookup (the middle partition: 10 files, 1,000 rows) and a range on v (300 rows in 4 files). " +
        "Every run checks the row count. The tables and heads are made once per size and kept in the bench cache.",
    ],
    tables: [s3Table, localTable],
    charts: [],
    headlines: big.map(
      (c) =>
        `${c.format} ${formatCount(c.files)} files, ${c.query.id}, S3: lakewarden ${show(c.results.get("lw-s3"), "time")} ` +
        `(${show(c.results.get("lw-s3"), "roundTrips")} round trips to data), writer's reader ${show(c.results.get("writer-s3"), "time")} ` +
        `(${show(c.results.get("writer-s3"), "roundTrips")}): ${formatRatio(fastestPeer(c)?.medianMs ?? Number.NaN, c.results.get("lw-s3")!.medianMs)}`,
    ),
    timing: `median of ${env.options.runs} timed runs per cell after one untimed warm-up; Python peers timed inside their process (imports loaded before)`,
  };
}
